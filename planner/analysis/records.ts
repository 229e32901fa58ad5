/**
 * The records a run analysis is made of (one per cluster change, delivery, controller write and
 * workload step), which every planning rule reads, and small helpers over them. Written by the
 * parts in this folder (changes.ts, delivery.ts, writes.ts), assembled by ../trace-analysis.ts.
 */
import type { ChangeDiff } from '../../src/model/change-match.js';
import { isSuccessStatus, type WriteIdentity } from '../../src/model/controller-write.js';
import type { ObjectKey } from '../../src/model/object-key.js';
import type { WriteTrigger } from '../../src/model/plan.js';
import type { RequestVerb } from '../../src/model/api-path.js';
import type { ClusterChangeEvent, WorkloadStepAction } from '../../src/model/trace.js';
import type { PathKey } from '../paths.js';
import type { AppCallRecord } from './app-calls.js';

export interface AnalyzerOptions {
  /** Traces without episode markers: a gap this long with no controller request in flight ends a burst. */
  quietMs: number;
  /** Keep a hash of the whole normalised cluster state after every change (the run plans come from needs it). */
  stateHashes: boolean;
  /**
   * `plans` (default): everything the rules need. `triggers`: only what judging triggers needs (the
   * changes and the write counts), for reference runs that plans do not come from.
   */
  detail?: 'plans' | 'triggers';
}

/** How writes were attributed to deliveries. */
export type CausalityMode = 'serialized-episodes' | 'quiet-gap-bursts';

export type ChangeEventType = ClusterChangeEvent['eventType'];

/** One state change of the cluster (from kperturb's own watch). */
export interface ChangeRecord {
  index: number;
  seq: number;
  /** The key triggers use (generated names folded, see generated-names.ts). */
  key: ObjectKey;
  rawKey: ObjectKey;
  eventType: ChangeEventType;
  resourceVersion: string;
  /** The change as triggers see it; undefined when normalisation leaves nothing (only volatile fields moved). */
  diff: ChangeDiff | undefined;
  /** Path keys of `diff.fields`. */
  diffKeys: PathKey[];
  /** 1-based rank among this key's creations, deletions or (visible) updates, by type. */
  ordinal: number;
  /** Position among the key's visible updates (-1 for other changes). */
  updatePos: number;
  /**
   * Recorded before the controller trace began (setup, objects already there): the proxy arms
   * triggers when the controller starts, so such a change can neither be named nor counted.
   */
  beforeStart: boolean;
  /** The object still exists but carries a deletionTimestamp. */
  terminating: boolean;
  bookkeeping: boolean;
  /** The controller was shown this state (watch event or read). */
  delivered: boolean;
  /** A watch event showed it (the controller has a watch open on the object: holds can hide it). */
  watched: boolean;
  /** Unobserved state: the first later change of the object that cancels this one (-1: none). */
  cancelledBy: number;
  /** Bit 1: a delivery of it may have caused a controller write; bit 2: a successful, effective one. */
  causal: number;
  /** Creations: the raw keys of the new object's owners (ownerReferences), if it has any. */
  owners: readonly ObjectKey[] | undefined;
}

export interface DeliveryRecord {
  seq: number;
  rawKey: ObjectKey;
  /** The change whose state it showed (-1 when the cluster trace has no such change). */
  change: number;
  source: 'watch' | 'read';
}

export type EffectState = 'pending' | 'effective' | 'no-op';

/** A write request by the controller (create, update, patch, delete, deletecollection), whatever its answer. */
export interface WriteRecord {
  index: number;
  requestSeq: number;
  id: number;
  incarnation: number;
  verb: RequestVerb;
  rawKey?: ObjectKey;
  /** Folded key (see generated-names.ts). */
  key?: ObjectKey;
  subresource?: string;
  dryRun: boolean;
  /** The request named its object (a create with generateName, or with a body the proxy could not read, does not). */
  named: boolean;
  /** HTTP status of the answer (undefined: no answer in the trace). */
  status?: number;
  /** How a plan names this write; only for successful, non-dry-run writes whose object the request or (creates) the answer names. */
  trigger?: WriteTrigger;
  bookkeeping: boolean;
  /** Did it change the cluster? `pending` until decided; `finish()` turns the rest into `no-op`. */
  effect: EffectState;
  /** The change it caused (-1: unknown). */
  effectChange: number;
  /** Burst (or episode) it belongs to. */
  burst: number;
  /** Reconcile it belongs to: bursts joined while the controller was shown only echoes of its own writes. */
  reconcile: number;
  /** Deliveries it may react to: indices [causeFrom, causeTo) plus `causeExtra` (all below causeFrom). */
  causeFrom: number;
  causeTo: number;
  causeExtra: number[];
  /** Deliveries before it (the naive stale-state rule pairs it with each). */
  deliveriesBefore: number;
  /** update/patch/create: the fields it sets. */
  written?: PathKey[] | 'all';
  /**
   * update/patch: the resourceVersion its body carried (optimistic concurrency): the state of the
   * object the controller based it on. A write based on a state the controller was not shown fails.
   */
  basedOn?: string;
  /** Stale state: the first later change of the object that re-issuing this write would undo (-1: none). */
  conflict: number;
  /** The first later (visible) change of the object after this write's effect (-1: none). */
  firstLater: number;
  /** Internal: conflicts are searched among changes after this seq (-1: not searching). */
  conflictAfterSeq: number;
}

/** A folded key's history of visible changes. */
export interface KeyHistory {
  creates: number;
  deletes: number;
  /** Change indices of its visible updates, in order. */
  updates: number[];
}

/**
 * A workload step, from its `workload-step` events (traces written before steps said what they do
 * have none). The cluster recorder's events of what a step did may come after the step's own.
 */
export interface WorkloadStepRecord {
  index: number;
  action: WorkloadStepAction;
  /** The objects a write step writes, or the one a wait step waits for. */
  keys: ObjectKey[];
  startSeq: number;
  /** Sequence number of its `done` event; Infinity when it failed or had not ended when the trace ended. */
  endSeq: number;
  /** Write steps: the resourceVersion each answer carried, by object (none for a delete). */
  wrote: Array<{ key: ObjectKey; resourceVersion: string }>;
  /** Wait steps: how many reads it took (1: the condition held when it began), and the resourceVersion that met it. */
  polls?: number;
  metAt?: string;
}

export interface RunAnalysis {
  events: number;
  hasClusterTrace: boolean;
  causality: CausalityMode;
  changes: ChangeRecord[];
  deliveries: DeliveryRecord[];
  writes: WriteRecord[];
  keys: ReadonlyMap<ObjectKey, KeyHistory>;
  /** How many successful writes with this identity (folded key) the controller made. */
  writeCount(id: WriteIdentity): number;
  /**
   * The request ordinal of the `occurrence`-th successful write with this identity: the how-many-th
   * write request of its verb, key and subresource it was, failed requests included, as the
   * api-error fault counts (undefined when the run made fewer such writes).
   */
  requestOrdinal(id: WriteIdentity, occurrence: number): number | undefined;
  /** Did the object (raw key) exist right after `change` (index)? */
  existsAfter(rawKey: ObjectKey, change: number): boolean;
  /** Hash of the whole normalised cluster state right after a change, uids included (undefined without `stateHashes`). */
  stateAfter(change: number): string | undefined;
  /** A hash of the state of the objects whose changes `include` takes, right after each change (undefined without `stateHashes`). */
  stateReader(include: (c: ChangeRecord) => boolean): (change: number) => string | undefined;
  /** The changes (indices, in order) of an object by its raw key. */
  changesOf(rawKey: ObjectKey): readonly number[];
  /** The workload's steps, in order (empty for traces without them). */
  workloadSteps: readonly WorkloadStepRecord[];
  /**
   * The kinds a stale view can show the controller: those it listed or watched (its informers; a
   * watch event proves a watch). A stale view serves lists and watches only (GETs are live), so the
   * state of any other kind in a view is never shown. Undefined when the trace has no list or watch
   * request at all (a hand-built trace), or one of a resource without a kind: then it does not say,
   * and every kind counts.
   */
  listedKinds: ReadonlySet<string> | undefined;
  /** The controller's calls to its stub applications, in order (empty without `applications:`). */
  appCalls: readonly AppCallRecord[];
}

export function isSuccess(w: Pick<WriteRecord, 'status' | 'dryRun'>): boolean {
  return w.status !== undefined && isSuccessStatus(w.status) && !w.dryRun;
}

/** The position of the first element of `sorted` (ascending) above `x`. */
export function upperBound(sorted: readonly number[], x: number): number {
  let lo = 0;
  let hi = sorted.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (sorted[mid]! <= x) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** Appends `value` to the list of `key`. */
export function pushTo<K, V>(map: Map<K, V[]>, key: K, value: V): void {
  const list = map.get(key);
  if (list) list.push(value);
  else map.set(key, [value]);
}
