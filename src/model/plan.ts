/**
 * Test plans: self-contained, versioned YAML files, one perturbation of one workload each.
 *
 *   apiVersion: kperturb.dev/v1
 *   kind: TestPlan
 *   metadata: { name: intermediate-0003 }
 *   spec:
 *     controller: secret-marker-buggy
 *     workload: create-and-scale
 *     pattern: intermediate-state
 *     description: restart the controller right after it patches Database/default/db1 status (1st time)
 *     faults:
 *       - type: crash-after-write
 *         after: { verb: patch, key: Database/default/db1, subresource: status, occurrence: 1 }
 *
 * What a plan is (this file, pure) and reading one from its file (src/io/plan-file.ts: YAML, the
 * schema, validation) are apart so that the planner and the oracles need no file system.
 */
import { stringify } from 'yaml';
import type { ObjectKey } from './object-key.js';

export const PLAN_API_VERSION = 'kperturb.dev/v1';
export const PATTERNS = ['intermediate-state', 'stale-state', 'unobserved-state', 'error-path'] as const;
export type Pattern = (typeof PATTERNS)[number];
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

/** Intermediate state: restart the controller right after one of its writes. */
export interface CrashAfterWriteFault {
  type: 'crash-after-write';
  after: WriteTrigger;
}

/**
 * Stale state (time travel), within the API contract: when `at` fires, restart the controller and
 * serve its initial list/watch from a view frozen right after the change `viewAfter` (an earlier
 * moment), as a lagging API server would; replay history from there after `releaseAfterSeconds`.
 * Writes still go to the real server.
 */
export interface StaleRestartFault {
  type: 'stale-restart';
  at: Trigger;
  viewAfter: ChangeTrigger;
  releaseAfterSeconds: number;
  /**
   * The kinds whose lists and watches the view serves frozen; the others stay live. Absent: every
   * kind. kube-apiserver keeps one watch cache per resource, and each may lag on its own: a view
   * stale for the custom resource alone is what Sieve's plans (`pauseScope`) give.
   */
  kinds?: string[];
}

/**
 * Unobserved state, within the API contract: from the change `from` on, hold the controller's watch
 * events for `key`; when the cancelling change `until` has happened, end the stream with an in-stream
 * 410 Expired so the controller relists and never sees the intermediate states.
 */
export interface HoldUntilFault {
  type: 'hold-until';
  key: ObjectKey;
  from: ChangeTrigger;
  until: ChangeTrigger;
}

/**
 * How an api-error fault answers the write it matches. The error answers are made by the proxy, not
 * forwarded (the write is not applied), each with the Status kube-apiserver writes in that case
 * (proxy/api-errors.ts). `lost-response`: the write is forwarded and applied, then the controller's
 * stream is reset before the answer reaches it (the ambiguous outcome). `slow`: the write is
 * forwarded and applied, and its answer held `slowSeconds` (past the client's timeout) before delivery.
 */
export const API_ERROR_ANSWERS = ['conflict', 'too-many-requests', 'internal-error', 'service-unavailable', 'timeout', 'lost-response', 'slow'] as const;
export type ApiErrorAnswer = (typeof API_ERROR_ANSWERS)[number];

/** Bounds of a slow answer: long enough to outlast a client timeout, short enough for a test run. */
export const SLOW_SECONDS_MAX = 120;
export const SLOW_SECONDS_DEFAULT = 35;

/**
 * Error path: the n-th write REQUEST of the controller matching `on` (verb, key, subresource; counted
 * when the request arrives, failed ones included, unlike the other faults' triggers which count
 * successful writes) gets `answer` instead of its normal outcome. One-shot: later requests pass.
 */
export interface ApiErrorFault {
  type: 'api-error';
  on: WriteTrigger;
  answer: ApiErrorAnswer;
  /** `slow` only: how long the answer is held (default SLOW_SECONDS_DEFAULT, at most SLOW_SECONDS_MAX). */
  slowSeconds?: number;
}

export const WATCH_END_MODES = ['close', 'reset'] as const;
export type WatchEndMode = (typeof WATCH_END_MODES)[number];

/**
 * Error path on the watch side: when `at` fires, end the controller's open watch streams of `kind`
 * early, cleanly (`close`: the client re-watches from its last resourceVersion) or with a reset
 * (`reset`: RST_STREAM / TCP reset). With `expire`, the first re-watch of that kind is answered
 * 410 Expired (its resourceVersion is too old), so the client relists.
 */
export interface WatchEndFault {
  type: 'watch-end';
  kind: string;
  at: Trigger;
  mode: WatchEndMode;
  expire?: boolean;
}

export type Fault = CrashAfterWriteFault | StaleRestartFault | HoldUntilFault | ApiErrorFault | WatchEndFault;
export const FAULT_TYPES = ['crash-after-write', 'stale-restart', 'hold-until', 'api-error', 'watch-end'] as const;

export interface TestPlan {
  apiVersion: typeof PLAN_API_VERSION;
  kind: 'TestPlan';
  metadata: { name: string };
  spec: {
    controller: string;
    workload: string;
    pattern: Pattern;
    description: string;
    faults: Fault[];
  };
}

export function ordinal(n: number): string {
  const s = n % 100 >= 11 && n % 100 <= 13 ? 'th' : (({ 1: 'st', 2: 'nd', 3: 'rd' } as Record<number, string>)[n % 10] ?? 'th');
  return `${n}${s}`;
}

const VERB_PAST: Record<TriggerWriteVerb, string> = { create: 'creates', update: 'updates', patch: 'patches', delete: 'deletes' };

const ANSWER_TEXT: Record<ApiErrorAnswer, string> = {
  conflict: 'a 409 Conflict',
  'too-many-requests': 'a 429 Too Many Requests (Retry-After)',
  'internal-error': 'a 500 Internal Server Error',
  'service-unavailable': 'a 503 Service Unavailable',
  timeout: 'a 504 Timeout',
  'lost-response': 'a lost response (applied, then the connection reset)',
  slow: 'a slow answer (applied, answered late)',
};

export function describeApiError(f: ApiErrorFault): string {
  const slow = f.answer === 'slow' ? ` after ${f.slowSeconds ?? SLOW_SECONDS_DEFAULT} s` : '';
  return `answer ${ANSWER_TEXT[f.answer]}${slow} when the controller ${describeWrite(f.on).replace(/ time\)$/, ' request)')}`;
}

export function describeWatchEnd(f: WatchEndFault): string {
  return `${f.mode === 'close' ? 'close' : 'reset'} the controller's ${f.kind} watches${f.expire ? ' (then 410 Expired on the re-watch)' : ''} when ${describeTrigger(f.at)}`;
}

export function describeWrite(t: WriteTrigger): string {
  const sub = t.subresource ? ` ${t.subresource}` : '';
  return `${VERB_PAST[t.verb]} ${t.key}${sub} (${ordinal(t.occurrence)} time)`;
}

export function serializePlan(plan: TestPlan): string {
  return stringify(plan, { lineWidth: 0, sortMapEntries: false });
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
