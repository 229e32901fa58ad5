/**
 * Change triggers: how a plan names one state change of one object so that it matches the same
 * moment in a new run. The planner builds triggers from a reference trace with `diffForTrigger`, and
 * the proxy matches them at test time with `matchesChange`; both use this file so they agree exactly.
 *
 * A change is a pair of states of one object: `prev` undefined is a creation, `next` undefined a
 * deletion. Both states are normalised before they are compared:
 * - fields that differ between any two runs by nature are dropped: every `uid` and `resourceVersion`
 *   key at any depth (ownerReferences carry uids), `metadata.managedFields`, `metadata.generation`,
 *   `metadata.selfLink`;
 * - timestamp strings (RFC 3339) become `"<timestamp>"`, so a timestamp appearing or vanishing (a
 *   deletionTimestamp) is still a change but its value is not;
 * - Secret `data`/`stringData` values become the trace's keyed hash (values already hashed by the
 *   trace writer stay as they are), so plan files never carry secrets and a redacted reference trace
 *   matches a live run.
 * An update that changes nothing after normalisation (only a resourceVersion or a timestamp moved) is
 * not a change at all: it has no diff and never counts towards an occurrence.
 */
import { isObject, keyOf, type KubeObject, type ObjectKey } from './object-key.js';
import { getField } from './fields.js';
import { jsonEqual } from './json-value.js';
import { hashSecretValue, isHashedSecretValue } from './secret-hash.js';
import { ordinal, type ChangeTrigger, type ChangeType, type FieldChange } from './plan.js';

export const TIMESTAMP_PLACEHOLDER = '<timestamp>';
/** Keys dropped wherever they appear. */
const VOLATILE_KEYS: ReadonlySet<string> = new Set(['uid', 'resourceVersion']);
/** metadata fields dropped. */
const VOLATILE_METADATA: ReadonlySet<string> = new Set(['managedFields', 'generation', 'selfLink']);
const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/;

/** What changed between two states of an object, after normalisation. */
export interface ChangeDiff {
  change: ChangeType;
  /**
   * Every leaf that differs, sorted by path. Paths use the `fields.ts` syntax (`status.phase`,
   * `spec.items[0].name`, `data.tls\.crt`); `before`/`after` are absent when the field is absent.
   * Creations list no fields (the created object is `next`); deletions neither.
   */
  fields: FieldChange[];
}

/** The normalised form of an object state that triggers compare (see the file comment). */
export function normalizeForTrigger(obj: KubeObject): Record<string, unknown> {
  const secret = obj.kind === 'Secret';
  const out = normalizeValue(obj, 0) as Record<string, unknown>;
  if (isObject(out.metadata)) for (const k of VOLATILE_METADATA) delete out.metadata[k];
  if (secret) {
    for (const field of ['data', 'stringData']) {
      const data = out[field];
      if (!isObject(data)) continue;
      for (const [k, v] of Object.entries(data)) if (typeof v === 'string' && !isHashedSecretValue(v)) data[k] = hashSecretValue(v);
    }
  }
  return out;
}

/**
 * The uids an object state carries, each with its path (its own `metadata.uid`, its owners' in
 * `ownerReferences`, an Endpoints address's `targetRef`), in document order: what the normalisation
 * drops that tells one life of an object from the next. Triggers must match across runs and so
 * ignore them; within one run, a state holding a re-created object (or a child owned by it) is
 * another state than one holding its previous life with the same fields, and the planner's state
 * hashes add these.
 */
export function uidsOf(obj: KubeObject): string {
  const out: string[] = [];
  const walk = (value: unknown, path: string) => {
    if (Array.isArray(value)) value.forEach((v, i) => walk(v, `${path}[${i}]`));
    else if (isObject(value))
      for (const [k, v] of Object.entries(value)) {
        if (k === 'uid' && typeof v === 'string') out.push(`${path}.uid=${v}`);
        else if (typeof v === 'object' && v !== null) walk(v, `${path}.${k}`);
      }
  };
  walk(obj, '');
  return out.join('\n');
}

function normalizeValue(value: unknown, depth: number): unknown {
  if (typeof value === 'string') return RFC3339.test(value) ? TIMESTAMP_PLACEHOLDER : value;
  if (Array.isArray(value)) return value.map((v) => normalizeValue(v, depth + 1));
  if (isObject(value)) {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) {
      if (v === undefined || VOLATILE_KEYS.has(k)) continue;
      out[k] = normalizeValue(v, depth + 1);
    }
    return out;
  }
  return value;
}

/** Escapes a map key for a field path (`tls.crt` -> `tls\.crt`). */
function escapeSegment(k: string): string {
  return k.replace(/[\\.[\]]/g, (c) => '\\' + c);
}

/** The path of member `seg` (a map key or a list index) of the field at `path`. */
export function childPath(path: string, seg: string | number): string {
  if (typeof seg === 'number') return `${path}[${seg}]`;
  return path ? `${path}.${escapeSegment(seg)}` : escapeSegment(seg);
}

function diffInto(path: string, a: unknown, b: unknown, out: FieldChange[]): void {
  if (jsonEqual(a, b)) return;
  if (isObject(a) && isObject(b)) {
    const keys = new Set([...Object.keys(a), ...Object.keys(b)]);
    for (const k of keys) diffInto(childPath(path, k), a[k], b[k], out);
    return;
  }
  if (Array.isArray(a) && Array.isArray(b)) {
    for (let i = 0; i < Math.max(a.length, b.length); i++) diffInto(childPath(path, i), a[i], b[i], out);
    return;
  }
  const fc: FieldChange = { path };
  if (a !== undefined) fc.before = a;
  if (b !== undefined) fc.after = b;
  out.push(fc);
}

/**
 * The change from `prev` to `next` as a trigger sees it, or undefined when there is none (both
 * absent, or an update that only moved volatile fields). The planner turns a diff into a trigger by
 * picking some or all of `fields` and counting earlier matching changes with `matchesChange`.
 */
export function diffForTrigger(prev: KubeObject | undefined, next: KubeObject | undefined): ChangeDiff | undefined {
  if (!prev && !next) return undefined;
  if (!prev) return { change: 'create', fields: [] };
  if (!next) return { change: 'delete', fields: [] };
  const fields: FieldChange[] = [];
  diffInto('', normalizeForTrigger(prev), normalizeForTrigger(next), fields);
  if (fields.length === 0) return undefined;
  fields.sort((x, y) => (x.path < y.path ? -1 : x.path > y.path ? 1 : 0));
  return { change: 'update', fields };
}

/**
 * Counts the changes that matched one trigger; keep one counter per trigger (per fault). It also
 * keeps what came closest, so that a trigger that never fires can say why (`describeNearMiss`).
 */
export class ChangeOccurrenceCounter {
  count = 0;
  /** Changes of the trigger's object, by type. */
  readonly ofKey: Partial<Record<ChangeType, number>> = {};
  /** The change of the right type that held the most of the trigger's fields (updates with fields). */
  closest: { held: number; diff: FieldChange[] } | undefined;
}

/**
 * Does the change `prev` -> `next` of object `key` match the trigger, ignoring its occurrence?
 * Key and change type must be equal; each of the trigger's fields must hold `before` in the
 * normalised `prev` and `after` in the normalised `next` (absent `before`/`after` = field absent).
 * Field values may be whole subtrees, not only leaves.
 */
export function changeMatchesIgnoringOccurrence(
  trigger: Pick<ChangeTrigger, 'key' | 'change' | 'fields'>,
  key: ObjectKey,
  prev: KubeObject | undefined,
  next: KubeObject | undefined,
): boolean {
  if (trigger.key !== key) return false;
  const diff = diffForTrigger(prev, next);
  if (!diff || diff.change !== trigger.change) return false;
  if (!trigger.fields?.length) return true;
  const before = prev ? normalizeForTrigger(prev) : undefined;
  const after = next ? normalizeForTrigger(next) : undefined;
  return trigger.fields.every((f) => {
    const b = before ? getField(before, f.path) : undefined;
    const a = after ? getField(after, f.path) : undefined;
    return jsonEqual(b, 'before' in f ? f.before : undefined) && jsonEqual(a, 'after' in f ? f.after : undefined);
  });
}

/**
 * Feed every change of the run, in order, to decide when the trigger fires: returns true exactly
 * once, on the trigger's `occurrence`-th matching change. The key is read from the objects (they
 * must carry kind and metadata, as cluster-change objects do) unless given.
 */
export function matchesChange(
  trigger: ChangeTrigger,
  prev: KubeObject | undefined,
  next: KubeObject | undefined,
  counter: ChangeOccurrenceCounter,
  key: ObjectKey | undefined = keyOfEither(prev, next),
): boolean {
  if (key === undefined || key !== trigger.key) return false;
  const diff = diffForTrigger(prev, next);
  if (!diff) return false;
  counter.ofKey[diff.change] = (counter.ofKey[diff.change] ?? 0) + 1;
  if (!changeMatchesIgnoringOccurrence(trigger, key, prev, next)) {
    if (diff.change === trigger.change && trigger.fields?.length) {
      const after = next ? normalizeForTrigger(next) : undefined;
      const held = trigger.fields.filter((f) => jsonEqual(after ? getField(after, f.path) : undefined, 'after' in f ? f.after : undefined)).length;
      if (!counter.closest || held >= counter.closest.held) counter.closest = { held, diff: diff.fields };
    }
    return false;
  }
  counter.count++;
  return counter.count === trigger.occurrence;
}

const CHANGE_NOUN: Record<ChangeType, string> = { create: 'created', update: 'updated', delete: 'deleted' };

/**
 * Why a change trigger that never fired did not: "ConfigMap/default/c was updated 3 times, none
 * with data.x: "1" -> "2" (closest: data.x: "1" -> "3")". Undefined when it fired.
 */
export function describeNearMiss(trigger: ChangeTrigger, counter: ChangeOccurrenceCounter): string | undefined {
  if (counter.count >= trigger.occurrence) return undefined;
  const times = (n: number) => `${n} time${n === 1 ? '' : 's'}`;
  const seen = (Object.entries(counter.ofKey) as Array<[ChangeType, number]>).map(([t, n]) => `${CHANGE_NOUN[t]} ${times(n)}`);
  if (seen.length === 0) return `never matched: ${trigger.key} did not change during the run`;
  const ofType = counter.ofKey[trigger.change] ?? 0;
  if (ofType === 0) return `never matched: ${trigger.key} was never ${CHANGE_NOUN[trigger.change]} (it was ${seen.join(', ')})`;
  if (counter.count > 0)
    return `matched ${times(counter.count)}, the plan waits for the ${ordinal(trigger.occurrence)} (${trigger.key} was ${seen.join(', ')})`;
  const fields = (fs: readonly FieldChange[]) => fs.map((f) => `${f.path}: ${JSON.stringify(f.before)} -> ${JSON.stringify(f.after)}`).join(', ');
  const closest = counter.closest ? `; closest: ${fields(counter.closest.diff.slice(0, 4))}${counter.closest.diff.length > 4 ? ', ...' : ''}` : '';
  return `never matched: ${trigger.key} was ${CHANGE_NOUN[trigger.change]} ${times(ofType)}, none with ${fields(trigger.fields ?? [])}${closest}`;
}

function keyOfEither(prev: KubeObject | undefined, next: KubeObject | undefined): ObjectKey | undefined {
  const obj = next ?? prev;
  return obj ? keyOf(obj) : undefined;
}
