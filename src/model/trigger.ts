/**
 * Triggers: when a fault fires, identified by what survives a new run (a controller write, a cluster
 * change, a call of the controller to a stub application, or a combination), and how each is described in plans and run logs. Every fault kind
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

/**
 * A call of the controller to one of its stub applications (kperturb.yaml `applications:`), as the
 * stub sees it arrive: the application, the pod or Service whose address was called, and optionally
 * the operation (an HTTP method, a ZooKeeper operation) and the path (HTTP: without the query;
 * ZooKeeper: the znode). Fires when the n-th matching call arrives, before the stub answers it, so a
 * fault armed by it already shapes that call's answer.
 */
export interface CallTrigger {
  application: string;
  /** Pod/namespace/name or Service/namespace/name. */
  key: ObjectKey;
  operation?: string;
  path?: string;
  /** Fires on the n-th matching call (1-based), failed ones included. */
  occurrence: number;
}

/** A call as a stub sees it arrive (what a CallTrigger is matched against). */
export interface AppCallArrival {
  application: string;
  key: ObjectKey;
  operation: string;
  path?: string;
}

export function matchesCall(t: CallTrigger, c: AppCallArrival): boolean {
  return (
    t.application === c.application &&
    t.key === c.key &&
    (t.operation === undefined || t.operation === c.operation) &&
    (t.path === undefined || t.path === (c.path ?? '').split('?')[0])
  );
}

/** When a fault fires: a controller write completed, the cluster changed, the controller called its application, or a combination. */
export type Trigger =
  | { write: WriteTrigger }
  | { change: ChangeTrigger }
  | { call: CallTrigger }
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

export function describeCall(t: CallTrigger): string {
  const what = [t.operation, t.path].filter((x) => x !== undefined).join(' ');
  return `the controller calls ${t.application} on ${t.key}${what ? ` (${what})` : ''} (${ordinal(t.occurrence)} time)`;
}

export function describeTrigger(t: Trigger): string {
  if ('write' in t) return `the controller ${describeWrite(t.write)}`;
  if ('change' in t) return describeChange(t.change);
  if ('call' in t) return describeCall(t.call);
  if ('allOf' in t) return t.allOf.map(describeTrigger).join(' and ');
  if ('anyOf' in t) return t.anyOf.map(describeTrigger).join(' or ');
  return t.sequence.map(describeTrigger).join(', then ');
}
