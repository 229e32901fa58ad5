/**
 * What the end-state oracle does not compare: fields that differ between any two runs by nature
 * (built-in masks), fields that differed between the reference runs (learned masks), and what the
 * user says to ignore (mask rules).
 */
import { isObject, type ObjectKey } from '../src/model/object-key.js';
import { parseFieldPattern, patternCovers, type FieldPath, type FieldPattern } from './field-path.js';
import { semanticEqual } from './semantic.js';

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
];

/** Keys masked wherever they appear (e.g. UIDs copied into a status or a custom resource). */
export const MASKED_KEY_NAMES: ReadonlySet<string> = new Set(['uid', 'resourceVersion']);

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

function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

export class Masks {
  private readonly userRules: Array<{ glob: string; whole: boolean; patterns: FieldPattern[] }>;

  constructor(
    rules: readonly MaskRule[],
    private readonly learned: ReadonlyMap<ObjectKey, ObjectMask> = new Map(),
  ) {
    this.userRules = rules.map((r) => ({ glob: r.keyGlob, whole: r.paths.length === 0, patterns: r.paths.map(parseFieldPattern) }));
  }

  /** Masked as a whole by the user (applies to every oracle). */
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

function collectDifferences(values: readonly unknown[], path: FieldPath, out: FieldPattern[]): void {
  const first = values[0];
  if (values.every((v) => semanticEqual(v, first))) return;
  if (values.every(isObject)) {
    const keys = new Set<string>();
    for (const v of values as Record<string, unknown>[]) for (const k of Object.keys(v)) keys.add(k);
    for (const k of keys) {
      const children = (values as Record<string, unknown>[]).map((v) => (Object.prototype.hasOwnProperty.call(v, k) ? v[k] : MISSING));
      collectDifferences(children, [...path, k], out);
    }
    return;
  }
  if (values.every(Array.isArray)) {
    const arrays = values as unknown[][];
    const len = arrays[0]!.length;
    if (arrays.every((a) => a.length === len)) {
      for (let i = 0; i < len; i++) collectDifferences(arrays.map((a) => a[i]), [...path, i], out);
      return;
    }
  }
  out.push(path);
}

