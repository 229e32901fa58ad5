/**
 * `kperturb explore`'s operations: from a CRD version's schema (schema.ts), a seed custom resource and
 * a seed number, the sequences of CR changes to apply, each step a whole CR and the merge patch that
 * reaches it from the step before. A pure, deterministic function: the same input gives the same
 * campaign, byte for byte (test/planner/explore-generate.test.ts).
 *
 * - Primitive operations per type and constraint (Acto's, docs/explore.md): change (a unique marker
 *   `kpm-<n>` where the constraints allow one, so the oracles can trace where the controller wrote
 *   it), empty, delete; booleans toggled; each enum value; integers and numbers up and down within
 *   bounds; arrays push/pop/empty; map keys added and removed.
 * - Semantic ones for subtrees that match a core Kubernetes type (k8s-types.ts, by structure against
 *   the built-in OpenAPI) or a core field by name: replicas down-then-up and up-then-down, resource
 *   quantities up and down, labels and annotations added then removed, image changed, storage
 *   expanded. Primitive operations inside a matched type are left out (the semantic ones cover it).
 * - Misoperations, marked so: values the schema takes that the system cannot honour (replicas far
 *   beyond the nodes, storage shrunk). Judged by recovery, never counted as bugs.
 * - A step whose precondition does not hold on the current CR (scale down at the minimum) gets a setup
 *   step first. Operations are shuffled by the seed number and dealt into sequences of up to
 *   `maxSteps` steps; each sequence runs on a fresh cluster from the seed.
 */
import { isObject } from '../../src/model/object-key.js';
import { formatNodePath, walkNodes, type SchemaNode } from './schema.js';
import { matchCoreTypes, type CoreTypeMatches } from './k8s-types.js';
import { applyCoreRules } from './core-rules.js';
import { FILLER_IMAGE, fillRequired, isContainer, minimalValue } from './required.js';
import {
  SeededRandom,
  allowsNumber,
  allowsString,
  doubleQuantity,
  getAt,
  halveQuantity,
  isQuantity,
  mergePatch,
  samplePattern,
  setAt,
  type CrPath,
} from './values.js';

/** `rollback`: the CR before a step re-applied (the rollback oracle's runs, rollback.ts); never generated as an operation. */
export type OperationKind = 'primitive' | 'semantic' | 'misoperation' | 'rollback';

export interface ExploreStep {
  /** What it does, e.g. `string-change`, `replicas-down-then-up`. */
  operation: string;
  kind: OperationKind;
  /** The schema property it changes: `spec.template.image`, `*` for list items and map values. */
  property: string;
  /** Where in the CR: `spec.containers.0.image`. */
  path: CrPath;
  /** The value written (absent: the field was deleted). */
  value?: unknown;
  deleted?: true;
  /** The unique token in the value (`kpm-3`) the consistency oracle traces; absent: no marker fits. */
  marker?: string;
  /** A step that only makes the next one's precondition hold (scale up before a scale-down, a gate turned on). */
  setup?: true;
  /**
   * The boolean `enabled` of the nearest enclosing object, when it is true after the step: the field is
   * expected to take effect (a value that reaches no object is then an alarm, not a gated field).
   */
  gate?: CrPath;
  /** The JSON merge patch from the CR before the step to `cr`. */
  patch: Record<string, unknown>;
  /** The whole CR after the step, if the API server takes it. */
  cr: Record<string, unknown>;
}

export interface ExploreSequence {
  /** The workload's name: `explore-<kind>-<seed name>-<n>`. */
  name: string;
  /** The seed it starts from (applied as its first step). */
  seed: Record<string, unknown>;
  steps: ExploreStep[];
}

export interface PropertyCoverage {
  property: string;
  /** Operations that change it (or its subtree, for an object). */
  operations: number;
  /** Why none does. */
  uncovered?: string;
}

export interface ExploreTarget {
  /** The CRD version's schema, parsed (schema.ts parseSchema of openAPIV3Schema). */
  schema: SchemaNode;
  kind: string;
  /** The seeds of this kind and version. */
  seeds: Array<Record<string, unknown>>;
}

export interface ExploreInput {
  targets: ExploreTarget[];
  /** The seed number: same number, same campaign. */
  seed: number;
  /** At most this many steps per sequence (each on a fresh cluster). */
  maxSteps: number;
  /** Built-in type definitions (OpenAPI v2 `definitions`), for semantic matching. */
  coreTypes?: Record<string, unknown>;
  /**
   * Built-in type definitions (OpenAPI v2) of the types whose kube-apiserver validation explore knows
   * (core-rules.ts CORE_RULES): subtrees that match them get only values it accepts.
   */
  coreRules?: Record<string, unknown>;
}

export interface ExploreCampaign {
  seed: number;
  maxSteps: number;
  sequences: ExploreSequence[];
  /** Per kind: every property under spec and whether an operation changes it. */
  coverage: Array<{ kind: string; properties: PropertyCoverage[] }>;
}

/** Replicas "far beyond the nodes": an accepted value no small cluster can run ready. */
export const MISOPERATION_REPLICAS = 24;

/** An operation before it is applied: it writes relative to the CR it finds. */
interface Case {
  name: string;
  kind: OperationKind;
  node: SchemaNode;
  path: CrPath;
  /** The values to write in turn, given the current one; undefined: the precondition cannot be made to hold. */
  writes: (current: unknown, ctx: Context) => Write[] | undefined;
  /** The `enabled` flag of the nearest enclosing object (not the node itself), turned on first. */
  gate?: Gate;
}

interface Gate {
  path: CrPath;
  node: SchemaNode;
}

interface Write {
  value?: unknown;
  deleted?: true;
  marker?: string;
  setup?: true;
  /** Written elsewhere than the case's path (a gate turned on): that field and its schema node. */
  at?: Gate;
}

class Context {
  private markers = 0;
  readonly used = new Set<string>();
  constructor(readonly random: SeededRandom) {}
  /** The next campaign-unique marker token. */
  marker(): string {
    return `kpm-${++this.markers}`;
  }
}

export function generateExploration(input: ExploreInput): ExploreCampaign {
  const random = new SeededRandom(input.seed);
  const ctx = new Context(random);
  const sequences: ExploreSequence[] = [];
  const coverage: ExploreCampaign['coverage'] = [];
  for (const given of input.targets) {
    const target = { ...given, schema: applyCoreRules(given.schema, input.coreRules ?? {}) };
    const matches = matchCoreTypes(target.schema, input.coreTypes ?? {});
    const counts = new Map<string, number>();
    for (const [seedIndex, seed] of target.seeds.entries()) {
      const cases = random.shuffle(casesFor(target.schema, seed, matches));
      const name = `explore-${dnsPart(target.kind)}-${dnsPart(String(isObject(seed.metadata) ? seed.metadata.name : seedIndex))}`;
      let current = seed;
      let steps: ExploreStep[] = [];
      const flush = () => {
        if (steps.length > 0) sequences.push({ name: `${name}-${sequences.filter((s) => s.name.startsWith(name + '-')).length + 1}`, seed, steps });
        steps = [];
        current = seed;
      };
      for (const c of cases) {
        let writes = gated(c, current, c.writes(getAt(current, c.path), ctx));
        // Too long for this sequence, or its precondition gone (the field deleted by an earlier step): from the seed again.
        if (steps.length > 0 && (!writes || steps.length + writes.length > input.maxSteps)) {
          flush();
          writes = gated(c, current, c.writes(getAt(current, c.path), ctx));
        }
        if (!writes || writes.length === 0) continue;
        for (const w of writes) {
          const at = w.at?.path ?? c.path;
          // A write under parents the CR lacks creates them: with the properties their schemas require.
          const next = w.deleted ? setAt(current, at, undefined) : fillRequired(target.schema, current, setAt(current, at, w.value), at, random);
          steps.push({
            operation: w.at ? 'gate-on' : c.name,
            kind: c.kind,
            property: formatNodePath((w.at?.node ?? c.node).path),
            path: at,
            ...(w.deleted ? { deleted: true as const } : { value: w.value }),
            ...(w.marker ? { marker: w.marker } : {}),
            ...(w.setup ? { setup: true as const } : {}),
            ...(c.gate && !w.at && getAt(next, c.gate.path) === true ? { gate: c.gate.path } : {}),
            patch: mergePatch(current, next) as Record<string, unknown>,
            cr: next,
          });
          current = next;
        }
        for (const p of propertiesChangedBy(c)) counts.set(p, (counts.get(p) ?? 0) + 1);
      }
      flush();
    }
    coverage.push({ kind: target.kind, properties: propertyCoverage(target.schema, counts, matches, target.seeds) });
  }
  return { seed: input.seed, maxSteps: input.maxSteps, sequences, coverage };
}

/**
 * A write under an object with a boolean `enabled` (an exporter, a PodDisruptionBudget, TLS) is gated by
 * it: a value set while the flag is off takes no effect by design. So the flag is turned on first (a
 * setup step), unless it already is or the case only deletes.
 */
function gated(c: Case, current: unknown, writes: Write[] | undefined): Write[] | undefined {
  if (!writes || !c.gate || writes.every((w) => w.deleted) || getAt(current, c.gate.path) === true) return writes;
  return [{ value: true, setup: true, at: c.gate }, ...writes];
}

function dnsPart(s: string): string {
  return (
    s
      .toLowerCase()
      .replace(/[^a-z0-9-]+/g, '-')
      .replace(/^-+|-+$/g, '')
      .slice(0, 30) || 'x'
  );
}

/** The schema property a case changes and its ancestors up to spec (an object counts when a child changes). */
function propertiesChangedBy(c: Case): string[] {
  const out: string[] = [];
  for (let n = c.node.path.length; n >= 2; n--) out.push(formatNodePath(c.node.path.slice(0, n)));
  return out;
}

/** Every property under spec, with why the ones no operation changes stay unchanged. */
function propertyCoverage(root: SchemaNode, counts: Map<string, number>, matches: CoreTypeMatches, seeds: Array<Record<string, unknown>>): PropertyCoverage[] {
  const spec = root.properties?.get('spec');
  if (!spec) return [];
  const out: PropertyCoverage[] = [];
  for (const node of walkNodes(spec)) {
    if (node.path.length < 2) continue;
    const property = formatNodePath(node.path);
    const operations = counts.get(property) ?? 0;
    if (operations > 0) {
      out.push({ property, operations });
      continue;
    }
    out.push({ property, operations, uncovered: whyUncovered(node, matches, seeds) });
  }
  return out;
}

function whyUncovered(node: SchemaNode, matches: CoreTypeMatches, seeds: Array<Record<string, unknown>>): string {
  if (node.type === 'opaque') return 'opaque (x-kubernetes-preserve-unknown-fields or no schema): no values to write without a codec';
  for (let n = 2; n < node.path.length; n++) {
    const type = matches.get(formatNodePath(node.path.slice(0, n)));
    if (type) return `inside ${formatNodePath(node.path.slice(0, n))}, matched to ${shortType(type)}: its semantic operations change it as a whole`;
  }
  const star = node.path.indexOf('*');
  if (star >= 0 && star < node.path.length - 1) {
    return `inside ${formatNodePath(node.path.slice(0, star))}, a list or map the seeds give no item of (push and add write whole items)`;
  }
  if (seeds.length === 0) return 'no seed of this kind';
  return 'no value the constraints allow differs from the seed’s';
}

export function shortType(name: string): string {
  return name.slice(name.lastIndexOf('.') + 1);
}

// ---- cases per node -------------------------------------------------------------------------

const REPLICAS = /^(replicas|replicaCount|size)$/;
const IMAGE = /^image$/;
const LABELS = /^(labels|annotations|podLabels|podAnnotations|.*Labels|.*Annotations)$/;
const STORAGE = /^(storage|storageSize|size|volumeSize|capacity)$/;

/** The cases of every node under spec, walking the schema beside the seed (list items and map values: the first one the seed has). */
function casesFor(root: SchemaNode, seed: Record<string, unknown>, matches: CoreTypeMatches): Case[] {
  const spec = root.properties?.get('spec');
  if (!spec) return [];
  const out: Case[] = [];
  const visit = (node: SchemaNode, path: CrPath, parentRequired: readonly string[], insideMatch: boolean, gate: Gate | undefined) => {
    const before = out.length;
    const value = getAt(seed, path);
    const name = String(path.at(-1));
    const required = parentRequired.includes(name);
    const matched = matches.get(formatNodePath(node.path));
    const semantic = semanticCases(node, path, value, matched);
    out.push(...semantic);
    if (matched !== undefined && !insideMatch) {
      // A matched core type's own primitives are its semantic operations, but it can still be deleted
      // as a whole (Acto's delete applies to every property): a controller that dereferences it unchecked panics.
      if (!required && value !== undefined) out.push({ name: `${node.type}-delete`, kind: 'primitive', node, path, writes: () => [{ deleted: true }] });
    } else if (!insideMatch) out.push(...primitiveCases(node, path, value, required));
    if (gate) for (const c of out.slice(before)) c.gate = gate;
    const inside = insideMatch || matched !== undefined;
    if (node.type === 'object') {
      const flag = node.properties?.get('enabled');
      const inner = flag?.type === 'boolean' ? { path: [...path, 'enabled'], node: flag } : gate;
      for (const [k, child] of node.properties ?? []) visit(child, [...path, k], node.required ?? [], inside, k === 'enabled' ? gate : inner);
    } else if (node.type === 'array' && node.items && Array.isArray(value) && value.length > 0) {
      visit(node.items, [...path, 0], [], inside, gate);
    } else if (node.type === 'map' && node.items && isObject(value) && Object.keys(value).length > 0) {
      visit(node.items, [...path, Object.keys(value).sort()[0]!], [], inside, gate);
    }
  };
  for (const [k, child] of spec.properties ?? []) visit(child, ['spec', k], spec.required ?? [], false, undefined);
  return out;
}

function primitiveCases(node: SchemaNode, path: CrPath, value: unknown, required: boolean): Case[] {
  const cases: Case[] = [];
  const add = (name: string, writes: Case['writes'], kind: OperationKind = 'primitive') => cases.push({ name, kind, node, path, writes });
  const deletable = !required && value !== undefined;
  if (node.enum && node.enum.length > 0) {
    for (const option of node.enum) if (JSON.stringify(option) !== JSON.stringify(value)) add(`enum-${String(option)}`, () => [{ value: option }]);
    if (deletable) add(`${node.type}-delete`, () => [{ deleted: true }]);
    return cases;
  }
  switch (node.type) {
    case 'string':
      add('string-change', (cur, ctx) => {
        const v = stringValue(node, cur, ctx);
        return v ? [v] : undefined;
      });
      if (allowsString(node, '') && value !== '' && value !== undefined) add('string-empty', () => [{ value: '' }]);
      break;
    case 'integer':
    case 'number':
      add(`${node.type}-up`, (cur) => {
        const v = step(node, cur, +1);
        return v === undefined ? undefined : [{ value: v }];
      });
      add(`${node.type}-down`, (cur) => {
        const base = typeof cur === 'number' ? cur : typeof node.default === 'number' ? node.default : undefined;
        const down = step(node, base, -1);
        if (down !== undefined && base !== undefined) return [{ value: down }];
        // At the minimum: raise it first (a setup step), then lower it.
        const up = step(node, base, +1);
        return up === undefined ? undefined : [{ value: up, setup: true }, { value: step(node, up, -1)! }];
      });
      break;
    case 'boolean':
      add('boolean-toggle', (cur) => [{ value: !(typeof cur === 'boolean' ? cur : node.default === true) }]);
      break;
    case 'int-or-string':
      if (isQuantity(value)) {
        add('quantity-up', (cur) => (isQuantity(cur) ? [{ value: doubleQuantity(cur) }] : undefined));
        add('quantity-down', (cur) => {
          const v = isQuantity(cur) ? halveQuantity(cur) : undefined;
          return v === undefined ? undefined : [{ value: v }];
        });
      } else {
        add('int-or-string-change', (cur, ctx) => [typeof cur === 'number' ? { value: cur + 1 } : markerString(ctx)]);
      }
      break;
    case 'array':
      add('array-push', (cur, ctx) => {
        const list = Array.isArray(cur) ? cur : [];
        if (node.maxItems !== undefined && list.length >= node.maxItems) return undefined;
        const item = sampleValue(node.items!, ctx, list);
        return item === undefined ? undefined : [{ value: [...list, item.value], ...(item.marker ? { marker: item.marker } : {}) }];
      });
      if (Array.isArray(value) && value.length > (node.minItems ?? 0))
        add('array-pop', (cur) => (Array.isArray(cur) && cur.length > 0 ? [{ value: cur.slice(0, -1) }] : undefined));
      if (Array.isArray(value) && value.length > 0 && (node.minItems ?? 0) === 0) add('array-empty', () => [{ value: [] }]);
      break;
    case 'map':
      add('map-add-key', (cur, ctx) => {
        const map = isObject(cur) ? cur : {};
        if (node.maxProperties !== undefined && Object.keys(map).length >= node.maxProperties) return undefined;
        const key = ctx.marker();
        const item = sampleValue(node.items!, ctx, []);
        return item === undefined ? undefined : [{ value: { ...map, [key]: item.value }, marker: key }];
      });
      if (isObject(value) && Object.keys(value).length > (node.minProperties ?? 0))
        add('map-remove-key', (cur) => {
          if (!isObject(cur) || Object.keys(cur).length === 0) return undefined;
          const copy = { ...cur };
          delete copy[Object.keys(copy).sort().at(-1)!];
          return [{ value: copy }];
        });
      break;
    case 'object':
      if (isObject(value) && Object.keys(value).length > 0 && (node.required ?? []).length === 0) add('object-empty', () => [{ value: {} }]);
      break;
    case 'any-of': {
      // The first branch of a simple type decides the value; the API server's answer decides the rest.
      const branch = node.branches?.find((b) => ['string', 'integer', 'number', 'boolean'].includes(b.type));
      if (branch) for (const c of primitiveCases({ ...branch, path: node.path }, path, value, true)) cases.push({ ...c, node });
      break;
    }
    case 'opaque':
      return cases;
  }
  if (deletable) add(`${node.type}-delete`, () => [{ deleted: true }]);
  return cases;
}

function semanticCases(node: SchemaNode, path: CrPath, value: unknown, matched: string | undefined): Case[] {
  const name = String(path.at(-1));
  const cases: Case[] = [];
  const add = (op: string, kind: OperationKind, writes: Case['writes']) => cases.push({ name: op, kind, node, path, writes });
  if (node.type === 'integer' && REPLICAS.test(name)) {
    add('replicas-down-then-up', 'semantic', (cur) => {
      const base = typeof cur === 'number' ? cur : ((node.default as number | undefined) ?? 1);
      const down = step(node, base, -1);
      if (down !== undefined) return [{ value: down }, { value: base }];
      const up = step(node, base, +1);
      return up === undefined ? undefined : [{ value: up, setup: true }, { value: base }, { value: up }];
    });
    add('replicas-up-then-down', 'semantic', (cur) => {
      const base = typeof cur === 'number' ? cur : ((node.default as number | undefined) ?? 1);
      const up = step(node, base, +1);
      return up === undefined ? undefined : [{ value: up }, { value: base }];
    });
    add('replicas-beyond-nodes', 'misoperation', (cur) =>
      allowsNumber(node, MISOPERATION_REPLICAS) && cur !== MISOPERATION_REPLICAS
        ? [{ value: MISOPERATION_REPLICAS }, { value: cur ?? node.default ?? 1 }]
        : undefined,
    );
  }
  if (node.type === 'string' && IMAGE.test(name) && !node.enum && !node.pattern) {
    add('image-change', 'semantic', (_cur, ctx) => {
      const marker = ctx.marker();
      return [{ value: `registry.example/${marker}:1.0`, marker }];
    });
  }
  if (node.type === 'map' && node.items?.type === 'string' && (LABELS.test(name) || matched?.endsWith('ObjectMeta'))) {
    add(`${/nnotations$/.test(name) ? 'annotation' : 'label'}-add-then-remove`, 'semantic', (cur, ctx) => {
      const map = isObject(cur) ? cur : {};
      const marker = ctx.marker();
      return [{ value: { ...map, [`kperturb.dev/${marker}`]: marker }, marker }, cur === undefined ? { deleted: true } : { value: map }];
    });
  }
  const quantityLike = (node.type === 'string' || node.type === 'int-or-string') && isQuantity(value);
  if (quantityLike && STORAGE.test(name)) {
    add('storage-expand', 'semantic', (cur) => {
      const v = isQuantity(cur) ? doubleQuantity(cur) : undefined;
      return v !== undefined && allowsQuantity(node, v) ? [{ value: v }] : undefined;
    });
    add('storage-shrink', 'misoperation', (cur) => {
      const v = isQuantity(cur) ? halveQuantity(cur) : undefined;
      return v !== undefined && allowsQuantity(node, v) ? [{ value: v }, { value: cur }] : undefined;
    });
  }
  if (matched?.endsWith('.ResourceRequirements')) {
    for (const section of ['requests', 'limits'] as const) {
      const quantities = isObject(value) && isObject(value[section]) ? Object.keys(value[section]).sort() : [];
      for (const resource of quantities) {
        const qpath = [...path, section, resource];
        cases.push({
          name: `resources-${section}-${resource}-up-then-down`,
          kind: 'semantic',
          node,
          path: qpath,
          writes: (cur) => {
            if (!isQuantity(cur)) return undefined;
            const down = halveQuantity(cur);
            return [{ value: doubleQuantity(cur) }, ...(down !== undefined ? [{ value: down }] : [])];
          },
        });
      }
    }
  }
  return cases;
}

function allowsQuantity(node: SchemaNode, v: string | number): boolean {
  return typeof v === 'number' ? node.type === 'int-or-string' : allowsString(node, v);
}

// ---- values within constraints ----------------------------------------------------------------

function markerString(ctx: Context): Write {
  const marker = ctx.marker();
  return { value: marker, marker };
}

/** A string the node allows, different from `cur`: a marker where it fits, else a pattern sample or a format's value. */
function stringValue(node: SchemaNode, cur: unknown, ctx: Context): Write | undefined {
  if (node.format === 'date-time') return { value: `2001-02-03T04:05:${String(ctx.random.int(10, 59))}Z` };
  if (node.format === 'date') return { value: `2001-02-${String(ctx.random.int(10, 28))}` };
  if (node.pattern) {
    const avoid = new Set([...ctx.used, ...(typeof cur === 'string' ? [cur] : [])]);
    const v = samplePattern(node.pattern, ctx.random, avoid, node);
    if (v === undefined) return undefined;
    ctx.used.add(v);
    return { value: v };
  }
  const marker = ctx.marker();
  let v = marker;
  if (node.minLength !== undefined && v.length < node.minLength) v = v + '-'.padEnd(node.minLength - v.length, 'x');
  if (node.maxLength !== undefined && v.length > node.maxLength) {
    // No room for a marker: a short value that is not one (the oracle falls back to path and value).
    const short = `k${ctx.random.int(0, 35 ** 2).toString(36)}`.slice(0, node.maxLength);
    return short.length > 0 && short !== cur && allowsString(node, short) ? { value: short } : undefined;
  }
  return { value: v, marker };
}

/** One step up or down from `cur` (by multipleOf, or 1) that the bounds allow. */
function step(node: SchemaNode, cur: unknown, direction: 1 | -1): number | undefined {
  const base = typeof cur === 'number' ? cur : typeof node.default === 'number' ? node.default : (node.minimum ?? 0);
  const by = node.multipleOf ?? 1;
  for (let k = 1; k <= 3; k++) {
    const v = base + direction * by * k;
    if (allowsNumber(node, v)) return v;
  }
  return undefined;
}

/** A value for a new list item or map value: the node's own marker where a string fits. */
function sampleValue(node: SchemaNode, ctx: Context, existing: readonly unknown[]): { value: unknown; marker?: string } | undefined {
  switch (node.type) {
    case 'string': {
      if (node.enum) {
        const free = node.enum.find((e) => !existing.some((x) => JSON.stringify(x) === JSON.stringify(e)));
        return free === undefined ? undefined : { value: free };
      }
      const w = stringValue(node, undefined, ctx);
      return w ? { value: w.value, ...(w.marker ? { marker: w.marker } : {}) } : undefined;
    }
    case 'integer':
    case 'number': {
      const start = node.minimum ?? 0;
      for (let v = start; v < start + 50; v++) if (allowsNumber(node, v) && !existing.includes(v)) return { value: v };
      return undefined;
    }
    case 'boolean':
      return { value: true };
    case 'int-or-string':
      return { value: 1 };
    case 'object': {
      const out: Record<string, unknown> = {};
      let marker: string | undefined;
      for (const req of node.required ?? []) {
        const child = node.properties?.get(req);
        if (!child) return undefined;
        const v = sampleValue(child, ctx, []);
        if (v === undefined) return undefined;
        out[req] = v.value;
        marker ??= v.marker;
      }
      // A pushed container runs only with an image, which the schema leaves optional (FILLER_IMAGE).
      if (isContainer(node) && out.image === undefined) out.image = FILLER_IMAGE;
      // A list-map item needs a key no other item has: the marker gives one.
      return { value: out, ...(marker ? { marker } : {}) };
    }
    case 'array':
      // Empty, unless its items require something (a container list): then one such item.
      return { value: minimalValue(node, ctx.random) ?? [] };
    case 'map':
      return { value: {} };
    default:
      return undefined;
  }
}
