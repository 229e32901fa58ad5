/**
 * What the end-state oracle does not compare: fields that differ between any two runs by nature
 * (built-in masks), fields that differed between the reference runs (learned masks), and what the
 * user says to ignore (mask rules). Values that merely look like timestamps or IP addresses are set
 * aside by the end-state oracle itself (see end-state.ts), and labels or annotations that copy an
 * object's resourceVersion are compared as such, not masked (version-copies.ts); Leases and leader-election records are
 * not compared at all (object-identity.ts), and neither are the controller's own objects (its pod,
 * when it runs in the cluster) given as `controllerObjects`.
 */
import type { ObjectKey } from '../src/model/object-key.js';
import { escapeRegExp } from '../src/model/regexp.js';
import { parseFieldPattern, patternCovers, type FieldPath, type FieldPattern } from '../src/model/field-path.js';
import { childSlots, semanticEqual } from './semantic.js';

/** A user mask: objects whose key matches `keyGlob` (`*` matches anything) ignore `paths` ([] = the whole object). */
export interface MaskRule {
  keyGlob: string;
  paths: string[];
}

export const BUILT_IN_MASK_PATHS: readonly string[] = [
  'metadata.uid',
  'metadata.resourceVersion',
  'metadata.creationTimestamp',
  'metadata.managedFields',
  'metadata.generation',
  'metadata.selfLink',
  'metadata.ownerReferences[*].uid',
  // Follows metadata.generation, which counts spec writes (retries after a crash add some).
  'status.observedGeneration',
  // Pods: where the scheduler put them.
  'spec.nodeName',
  // The endpoints controller stamps when a pod change last touched an Endpoints object, whenever it
  // happens to see one mid-change (seen on a real control plane: present in a test run, absent in
  // its references, with nothing else different).
  'metadata.annotations["endpoints.kubernetes.io/last-change-trigger-time"]',
  // Pods: the kubelet's record of container restarts. A pod-crash fault (docs/managed-faults.md)
  // leaves it by design, and a node's own hiccups do on a real cluster; no controller writes it.
  // What a controller does to its pods after a crash still shows (pods deleted, spec changed, not ready).
  'status.containerStatuses[*].restartCount',
  'status.containerStatuses[*].lastState',
  'status.initContainerStatuses[*].restartCount',
  'status.initContainerStatuses[*].lastState',
];

/** Keys masked wherever they appear (e.g. UIDs copied into a status or a custom resource). */
export const MASKED_KEY_NAMES: ReadonlySet<string> = new Set(['uid', 'resourceVersion', 'containerID', 'imageID']);

const BUILT_IN_PATTERNS: readonly FieldPattern[] = BUILT_IN_MASK_PATHS.map(parseFieldPattern);

/** The masks that apply to one object. */
export interface ObjectMask {
  whole: boolean;
  patterns: FieldPattern[];
}

export function globMatches(glob: string, key: ObjectKey): boolean {
  const re = new RegExp('^' + glob.split('*').map(escapeRegExp).join('.*') + '$');
  return re.test(key);
}

export class Masks {
  private readonly userRules: Array<{ glob: string; whole: boolean; patterns: FieldPattern[] }>;

  constructor(
    rules: readonly MaskRule[],
    private readonly learned: ReadonlyMap<ObjectKey, ObjectMask> = new Map(),
    controllerObjects: readonly string[] = [],
  ) {
    this.userRules = [...rules, ...controllerObjects.map((keyGlob) => ({ keyGlob, paths: [] }))].map((r) => ({
      glob: r.keyGlob,
      whole: r.paths.length === 0,
      patterns: r.paths.map(parseFieldPattern),
    }));
  }

  /** Masked as a whole by the user or as the controller's own object (applies to every oracle). */
  userMasksWhole(key: ObjectKey): boolean {
    return this.userRules.some((r) => r.whole && globMatches(r.glob, key));
  }

  forObject(key: ObjectKey): ObjectMask {
    const learned = this.learned.get(key);
    const mask: ObjectMask = { whole: learned?.whole ?? false, patterns: [...BUILT_IN_PATTERNS, ...(learned?.patterns ?? [])] };
    for (const r of this.userRules) {
      if (!globMatches(r.glob, key)) continue;
      if (r.whole) mask.whole = true;
      mask.patterns.push(...r.patterns);
    }
    return mask;
  }
}

export function isPathMasked(mask: ObjectMask, path: FieldPath): boolean {
  if (mask.whole) return true;
  if (path.some((seg) => typeof seg === 'string' && MASKED_KEY_NAMES.has(seg))) return true;
  return mask.patterns.some((p) => patternCovers(p, path));
}

/** Marker for "no value here" while learning; distinct from any JSON value. */
const MISSING = Symbol('missing');

/**
 * Fields whose values differ between reference runs, per object: the shallowest path at which the
 * runs stop agreeing in shape is masked, with everything under it. An object present in some
 * reference runs only is masked as a whole. Needs two or more references to learn anything.
 */
export function learnMasks(references: ReadonlyArray<ReadonlyMap<ObjectKey, unknown>>): Map<ObjectKey, ObjectMask> {
  const learned = new Map<ObjectKey, ObjectMask>();
  if (references.length < 2) return learned;
  const keys = new Set<ObjectKey>();
  for (const ref of references) for (const k of ref.keys()) keys.add(k);
  for (const key of keys) {
    const values = references.map((r) => (r.has(key) ? r.get(key) : MISSING));
    if (values.some((v) => v === MISSING)) {
      learned.set(key, { whole: true, patterns: [] });
      continue;
    }
    const patterns: FieldPattern[] = [];
    collectDifferences(values, [], patterns);
    if (patterns.length > 0) learned.set(key, { whole: false, patterns });
  }
  return learned;
}

/** Two sets of learned masks as one: an object masked whole in either is, and its field patterns add up. */
export function mergeLearnedMasks(a: ReadonlyMap<ObjectKey, ObjectMask>, b: ReadonlyMap<ObjectKey, ObjectMask>): Map<ObjectKey, ObjectMask> {
  const out = new Map(a);
  for (const [key, mask] of b) {
    const had = out.get(key);
    out.set(key, had ? { whole: had.whole || mask.whole, patterns: [...had.patterns, ...mask.patterns] } : mask);
  }
  return out;
}

function collectDifferences(values: readonly unknown[], path: FieldPath, out: FieldPattern[]): void {
  const field = path.length > 0 ? path[path.length - 1] : undefined;
  const fieldName = typeof field === 'string' ? field : undefined;
  const first = values[0];
  if (values.every((v) => semanticEqual(v, first, fieldName))) return;
  // Descend only while every run has a value of the same shape; below that the whole path is masked.
  const slots = values.some((v) => v === MISSING) ? undefined : childSlots(values, fieldName, MISSING);
  const shapesAgree = slots !== undefined && (values.every(Array.isArray) ? sameListShape(values as unknown[][], slots) : true);
  if (slots && shapesAgree) {
    for (const slot of slots) collectDifferences(values.map(slot.pick), [...path, slot.segment], out);
    return;
  }
  out.push(path);
}

/** Positional lists of different lengths are masked as a whole; keyed lists are descended item by item. */
function sameListShape(lists: unknown[][], slots: ReturnType<typeof childSlots> & object): boolean {
  if (slots.length > 0 && typeof slots[0]!.segment !== 'number') return true;
  return lists.every((l) => l.length === lists[0]!.length);
}
