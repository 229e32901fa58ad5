/**
 * Triggers: when a fault fires, identified by what survives a new run (a controller write, a cluster
 * change, or a combination), and how each is described in plans and run logs. Every fault kind
 * (src/model/faults/) names its moments with these.
 */
import type { ObjectKey } from './object-key.js';

export const TRIGGER_WRITE_VERBS = ['create', 'update', 'patch', 'delete'] as const;
export type TriggerWriteVerb = (typeof TRIGGER_WRITE_VERBS)[number];

/** Identifies one successful controller write so that it matches the same moment in a new run. */
export interface WriteTrigger {
  verb: TriggerWriteVerb;
  key: ObjectKey;
  /** `status`, `scale`... when the write went to a subresource. */
  subresource?: string;
  /** Fires on the n-th successful write with this verb, key and subresource by the controller (1-based). */
  occurrence: number;
}

/** A field whose value a change altered; `before`/`after` absent means the field was absent. */
export interface FieldChange {
  path: string;
  before?: unknown;
  after?: unknown;
}

export const CHANGE_TYPES = ['create', 'update', 'delete'] as const;
export type ChangeType = (typeof CHANGE_TYPES)[number];

/**
 * A state change of one object, as kperturb's own watch of the cluster sees it. Identified by what
 * survives a new run: the key, the kind of change, the fields it changed (masked like the oracles
 * mask them, so no uids, resourceVersions or timestamps) and the occurrence count of that exact change.
 */
export interface ChangeTrigger {
  key: ObjectKey;
  change: ChangeType;
  /** For updates: the field changes that identify it (all must match). Absent: any update of the key. */
  fields?: FieldChange[];
  /** Fires on the n-th change of this key that matches (1-based). */
  occurrence: number;
}

/** When a fault fires: a controller write completed, the cluster changed, or a combination. */
export type Trigger =
  | { write: WriteTrigger }
  | { change: ChangeTrigger }
  | { allOf: Trigger[] }
  | { anyOf: Trigger[] }
  /** Each trigger in turn: the n-th is only considered after the (n-1)-th fired. */
  | { sequence: Trigger[] };

export function ordinal(n: number): string {
  const s = n % 100 >= 11 && n % 100 <= 13 ? 'th' : (({ 1: 'st', 2: 'nd', 3: 'rd' } as Record<number, string>)[n % 10] ?? 'th');
  return `${n}${s}`;
}

const VERB_PAST: Record<TriggerWriteVerb, string> = { create: 'creates', update: 'updates', patch: 'patches', delete: 'deletes' };

export function describeWrite(t: WriteTrigger): string {
  const sub = t.subresource ? ` ${t.subresource}` : '';
  return `${VERB_PAST[t.verb]} ${t.key}${sub} (${ordinal(t.occurrence)} time)`;
}

const CHANGE_PAST: Record<ChangeType, string> = { create: 'is created', update: 'is updated', delete: 'is deleted' };

export function describeChange(t: ChangeTrigger): string {
  const fields = t.fields?.length ? ` (${t.fields.map((f) => `${f.path}: ${JSON.stringify(f.before)} -> ${JSON.stringify(f.after)}`).join(', ')})` : '';
  return `${t.key} ${CHANGE_PAST[t.change]}${fields} (${ordinal(t.occurrence)} time)`;
}

export function describeTrigger(t: Trigger): string {
  if ('write' in t) return `the controller ${describeWrite(t.write)}`;
  if ('change' in t) return describeChange(t.change);
  if ('allOf' in t) return t.allOf.map(describeTrigger).join(' and ');
  if ('anyOf' in t) return t.anyOf.map(describeTrigger).join(' or ');
  return t.sequence.map(describeTrigger).join(', then ');
}
