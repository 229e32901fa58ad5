/**
 * One pass over the merged trace of one reference run, in `seq` order, that every planning rule
 * builds on. It keeps compact records, never the trace: per cluster change its normalised diff, per
 * delivery (a watch event, or an object state the controller read for the first time) the change it
 * showed, per controller write its trigger, effect, burst and causes; and per object only its latest
 * state. See docs/planner.md for the rules these records feed.
 *
 * Causality (which deliveries a write may react to) is decided here, as the trace streams by:
 * - serialized delivery (the trace has `episode` markers): the delivery that opened the write's
 *   episode, and every object the controller read during it; an episode that ended without the
 *   controller going quiet merges into the next one;
 * - otherwise, the earliest-reconcile rule seen from the proxy: controller activity comes in bursts
 *   separated by quiet gaps (no request in flight and none started for `quietMs`); a write may react
 *   to anything delivered since the end of the burst before the previous one (so the event that
 *   started the previous burst, its own burst and the gap after it all count);
 * - either way, plus the latest delivered state of every object related to the written one (same
 *   object, owners and owned objects transitively, objects with the same owner) that arrived after the
 *   controller last wrote that object: delayed, requeued or coalesced reconciles react to those.
 *
 * Writes are also grouped into reconciles (`WriteRecord.reconcile`), which the intermediate rule
 * needs: a quiet gap alone does not end one, because a controller may wait inside a reconcile
 * without a request (rabbitmq-operator polls its informer cache for 3 s after deleting a
 * StatefulSet, then updates the PVCs). A new burst continues the current reconcile unless, since the
 * reconcile's last request, the controller was shown a change that is not an echo of its own writes
 * (a change of an object it wrote in this reconcile, or of one such an object owns or owned), a
 * workload step wrote, or the controller restarted.
 */
import { createHash } from '../src/model/hash.js';
import { HousekeepingRequests, isBookkeepingKey, isBookkeepingResource, isLeaderElectionRecord } from '../src/model/bookkeeping.js';
import { diffForTrigger, normalizeForTrigger, type ChangeDiff } from '../src/model/change-match.js';
import { WriteOccurrenceCounter, isDryRun, isSuccessStatus, triggerFor, writeIdentity, type WriteIdentity } from '../src/model/controller-write.js';
import { GeneratedNameFolder } from '../src/model/generated-names.js';
import { formatKey, isObject, keyOf, parseKey, type KubeObject, type ObjectKey } from '../src/model/object-key.js';
import type { WriteTrigger } from '../src/model/plan.js';
import type { RequestVerb } from '../src/model/api-path.js';
import type { ClusterChangeEvent, EpisodeEvent, RequestEvent, ResponseEvent, TraceEvent, WatchDeliveryEvent, WorkloadStepAction, WorkloadStepEvent } from '../src/model/trace.js';
import { createdPaths, pathKey, pathsOverlap as overlaps, writtenPaths, type PathKey } from './paths.js';

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
  /** Did the object (raw key) exist right after `change` (index)? */
  existsAfter(rawKey: ObjectKey, change: number): boolean;
  /** Hash of the whole normalised cluster state right after a change (undefined without `stateHashes`). */
  stateAfter(change: number): string | undefined;
  /** The changes (indices, in order) of an object by its raw key. */
  changesOf(rawKey: ObjectKey): readonly number[];
  /** The workload's steps, in order (empty for traces without them). */
  workloadSteps: readonly WorkloadStepRecord[];
}

const WRITE_VERBS: ReadonlySet<string> = new Set(['create', 'update', 'patch', 'delete', 'deletecollection']);
const MAX_FAMILY = 256;

interface PendingRequest {
  verb: RequestVerb;
  burst: number;
  housekeeping?: boolean;
  write?: WriteRecord;
  readKind?: string;
  request?: RequestEvent;
}

export class RunAnalyzer {
  private events = 0;
  private lastSeq = -Infinity;
  private hasClusterTrace = false;
  private readonly changes: ChangeRecord[] = [];
  private readonly deliveries: DeliveryRecord[] = [];
  private readonly writes: WriteRecord[] = [];
  private readonly keys = new Map<ObjectKey, KeyHistory>();
  private readonly folder = new GeneratedNameFolder();
  private readonly writeCounter = new WriteOccurrenceCounter();

  // Latest known state of each object (normalised) and the changes of each raw key.
  private readonly lastState = new Map<ObjectKey, Record<string, unknown>>();
  private readonly rawKeyChanges = new Map<ObjectKey, number[]>();
  private readonly workloadSteps: WorkloadStepRecord[] = [];

  // Cluster state hash: four 32-bit lanes, each the sum over objects of that lane of the object's md5.
  private stateHashes: Uint32Array;
  private readonly objectHash = new Map<ObjectKey, [number, number, number, number]>();
  private readonly lanes: [number, number, number, number] = [0, 0, 0, 0];

  // Requests, bursts and episodes.
  private readonly pending = new Map<number, PendingRequest>();
  private incarnation = 0;
  private incarnationFirstDelivery = 0;
  private inFlight = 0;
  private lastActivityTs: number | undefined;
  private burst = 0;
  private forceNewBurst = false;
  // Reconciles: the current one, the raw keys it wrote, and whether something not of its own making
  // happened since its last request (then the next burst starts a new reconcile).
  private reconcile = 0;
  private readonly reconcileWrote = new Set<ObjectKey>();
  private readonly housekeeping = new HousekeepingRequests();
  private reconcileInterrupted = false;
  private readonly pastOwners = new Map<ObjectKey, Set<ObjectKey>>();
  private readonly burstEndDeliveries: number[] = [0];
  private episodeMode = false;
  private episodeWindowStart = 0;
  private previousEpisodeQuiet = true;
  private lastWatchDelivery = -1;

  // What the current incarnation has been shown, the latest delivery and write per object, ownership.
  private readonly seenRv = new Map<ObjectKey, string>();
  private readonly lastDelivery = new Map<ObjectKey, number>();
  private readonly lastWriteSeq = new Map<ObjectKey, number>();
  private readonly owners = new Map<ObjectKey, ObjectKey[]>();
  private readonly owned = new Map<ObjectKey, Set<ObjectKey>>();
  private readonly seenKeys = new Set<ObjectKey>();

  // Things waiting for a later event.
  private readonly pendingDeliveries = new Map<string, number[]>();
  private readonly pendingWriteByRv = new Map<string, number[]>();
  private readonly pendingWriteAnyChange = new Map<ObjectKey, number[]>();
  private readonly pendingConflicts = new Map<ObjectKey, number[]>();
  private readonly pendingCreate = new Map<ObjectKey, number>();
  private readonly pendingDelete = new Map<ObjectKey, number>();
  private readonly pendingUpdates = new Map<ObjectKey, Map<PathKey, number[]>>();

  private readonly full: boolean;
  /** Has the controller trace begun (the proxy counts changes for triggers from then on)? */
  private started = false;

  constructor(private readonly options: AnalyzerOptions) {
    this.stateHashes = new Uint32Array(options.stateHashes ? 4096 : 0);
    this.full = (options.detail ?? 'plans') === 'plans';
  }

  push(e: TraceEvent): void {
    if (e.seq < this.lastSeq) {
      throw new Error(`trace events must come in seq order (seq ${e.seq} after ${this.lastSeq}); merge the run's traces with mergeTracesBySeq`);
    }
    this.lastSeq = e.seq;
    this.events++;
    if (e.type !== 'header' && e.type !== 'cluster-change') this.started = true;
    switch (e.type) {
      case 'header':
        if (e.source === 'cluster') this.hasClusterTrace = true;
        break;
      case 'controller':
        if (e.action === 'start') this.startIncarnation(e.incarnation);
        break;
      case 'workload-step':
        this.onWorkloadStep(e);
        break;
      case 'request':
        this.onRequest(e);
        break;
      case 'response':
        this.onResponse(e);
        break;
      case 'watch-event':
        this.onWatchEvent(e);
        break;
      case 'cluster-change':
        this.onChange(e);
        break;
      case 'episode':
        this.onEpisode(e);
        break;
      default:
        break;
    }
  }

  finish(): RunAnalysis {
    const noClusterTrace = !this.hasClusterTrace && this.changes.length === 0;
    for (const w of this.writes) {
      if (w.effect !== 'pending') continue;
      // Without the cluster trace nothing can prove a write was a no-op: keep it.
      w.effect = noClusterTrace && isSuccess(w) ? 'effective' : 'no-op';
    }
    this.markCausalChanges();
    const hashes = this.stateHashes;
    const stateStrings = new Map<number, string>();
    return {
      events: this.events,
      hasClusterTrace: this.hasClusterTrace || this.changes.length > 0,
      causality: this.episodeMode ? 'serialized-episodes' : 'quiet-gap-bursts',
      changes: this.changes,
      deliveries: this.deliveries,
      writes: this.writes,
      keys: this.keys,
      writeCount: (id) => this.writeCounter.count(id),
      existsAfter: (rawKey, change) => {
        // The object's latest change at or before `change` (binary search over its change indices).
        const list = this.rawKeyChanges.get(rawKey) ?? [];
        const lo = upperBound(list, change);
        return lo > 0 && this.changes[list[lo - 1]!]!.eventType !== 'DELETED';
      },
      changesOf: (rawKey) => this.rawKeyChanges.get(rawKey) ?? [],
      workloadSteps: this.workloadSteps,
      stateAfter: (i) => {
        if (!this.options.stateHashes || i < 0 || i >= this.changes.length) return undefined;
        let h = stateStrings.get(i);
        if (h === undefined) {
          const b = i * 4;
          h = `${hex(hashes[b]!)}${hex(hashes[b + 1]!)}${hex(hashes[b + 2]!)}${hex(hashes[b + 3]!)}`;
          stateStrings.set(i, h);
        }
        return h;
      },
    };
  }

  // ---- controller side -------------------------------------------------------------------------

  private startIncarnation(n: number): void {
    if (n === this.incarnation) return;
    const first = this.incarnation === 0;
    this.incarnation = n;
    if (first) return; // the first process: everything so far was shown to it
    // A new process remembers nothing: only what it is shown from now on can cause its writes.
    this.incarnationFirstDelivery = this.deliveries.length;
    this.seenRv.clear();
    this.forceNewBurst = true;
    this.reconcileInterrupted = true;
    this.inFlight = 0;
  }

  private startBurst(): void {
    this.burst++;
    this.burstEndDeliveries[this.burst] = this.deliveries.length;
    this.forceNewBurst = false;
    if (this.reconcileInterrupted) {
      this.reconcile++;
      this.reconcileWrote.clear();
      this.reconcileInterrupted = false;
    }
  }

  /** Is a change of `rawKey` the cluster's answer to the current reconcile's own writes? */
  private isEchoOfReconcile(rawKey: ObjectKey): boolean {
    if (isBookkeepingKey(rawKey)) return true;
    const seen = new Set<ObjectKey>();
    const up: ObjectKey[] = [rawKey];
    while (up.length > 0 && seen.size < MAX_FAMILY) {
      const k = up.pop()!;
      if (seen.has(k)) continue;
      seen.add(k);
      if (this.reconcileWrote.has(k)) return true;
      up.push(...(this.owners.get(k) ?? []), ...(this.pastOwners.get(k) ?? []));
    }
    return false;
  }

  private onRequest(req: RequestEvent): void {
    if (req.incarnation !== undefined && req.incarnation !== this.incarnation) this.startIncarnation(req.incarnation);
    if (req.verb === 'watch') return; // long-running: neither activity nor quiet
    if (!this.full) {
      // Only the write counts are needed: every write that may be counted (a create by the key in its answer).
      if (WRITE_VERBS.has(req.verb) && (req.key || req.verb === 'create') && !isDryRun(req.query)) this.pending.set(req.id, { verb: req.verb, burst: 0, request: req });
      return;
    }
    // Leader-election renewals and Events are housekeeping: they neither start nor extend a burst
    // (a controller renews every 2 s, which would otherwise make one burst of a whole run).
    const housekeeping = this.housekeeping.isHousekeeping(req.resource, req.key, req.body);
    if (!housekeeping) {
      if (this.forceNewBurst || (!this.episodeMode && this.inFlight === 0 && this.lastActivityTs !== undefined && req.ts - this.lastActivityTs >= this.options.quietMs)) {
        this.startBurst();
      }
      // What was shown before this request is this burst's business, not a reason to split it later.
      this.reconcileInterrupted = false;
      this.inFlight++;
      this.lastActivityTs = Math.max(this.lastActivityTs ?? req.ts, req.ts);
      this.burstEndDeliveries[this.burst] = this.deliveries.length;
    }
    const p: PendingRequest = { verb: req.verb, burst: this.burst, housekeeping };
    if (WRITE_VERBS.has(req.verb)) {
      p.write = this.recordWrite(req);
      p.request = req;
    } else if (req.verb === 'get' || req.verb === 'list') {
      p.request = req;
      if (req.resource?.kind) p.readKind = req.resource.kind;
    }
    this.pending.set(req.id, p);
  }

  private recordWrite(req: RequestEvent): WriteRecord {
    const from = this.episodeMode ? this.episodeWindowStart : this.burst >= 2 ? (this.burstEndDeliveries[this.burst - 2] ?? 0) : 0;
    const causeFrom = Math.min(Math.max(from, this.incarnationFirstDelivery), this.deliveries.length);
    const w: WriteRecord = {
      index: this.writes.length,
      requestSeq: req.seq,
      id: req.id,
      incarnation: req.incarnation,
      verb: req.verb,
      dryRun: isDryRun(req.query),
      named: req.key !== undefined,
      bookkeeping: isBookkeepingResource(req.resource) || isLeaderElectionRecord(req.body) || (req.key !== undefined && isBookkeepingKey(req.key)),
      effect: 'pending',
      effectChange: -1,
      burst: this.burst,
      reconcile: this.reconcile,
      causeFrom,
      causeTo: this.deliveries.length,
      causeExtra: [],
      deliveriesBefore: this.deliveries.length,
      conflict: -1,
      firstLater: -1,
      conflictAfterSeq: -1,
    };
    if (req.resource?.subresource) w.subresource = req.resource.subresource;
    if (req.key) {
      this.reconcileWrote.add(req.key);
      w.rawKey = req.key;
      w.key = this.folder.fold(req.key);
      w.causeExtra = this.relatedDeliveries(req.key, req, causeFrom);
      this.lastWriteSeq.set(req.key, req.seq);
    }
    if (req.verb === 'update' || req.verb === 'patch') {
      w.written = writtenPaths(req.verb, req.body);
      const rv = isObject(req.body) ? (req.body as KubeObject).metadata?.resourceVersion : undefined;
      if (typeof rv === 'string' && rv !== '') w.basedOn = rv;
    }
    // A create sets the fields of its body (all of them when the proxy could not read it).
    else if (req.verb === 'create' && !req.resource?.subresource) w.written = createdPaths(req.body);
    this.writes.push(w);
    return w;
  }

  /** The latest delivery of each object related to `key`, since the controller last wrote `key`, below `before`. */
  private relatedDeliveries(key: ObjectKey, req: RequestEvent, before: number): number[] {
    const since = this.lastWriteSeq.get(key) ?? -1;
    const out: number[] = [];
    for (const member of this.family(key, req)) {
      const d = this.lastDelivery.get(member);
      if (d === undefined || d >= before || d < this.incarnationFirstDelivery) continue;
      if (this.deliveries[d]!.seq > since) out.push(d);
    }
    return out.sort((a, b) => a - b);
  }

  /** The object, its owners and owned objects (transitively), and objects sharing an owner with it. */
  private family(key: ObjectKey, req: RequestEvent): Set<ObjectKey> {
    const members = new Set<ObjectKey>([key]);
    const parents = new Set(this.owners.get(key) ?? []);
    if (req.verb === 'create' && isObject(req.body)) for (const o of this.ownerKeys(req.body as KubeObject, parseKey(key)?.namespace)) parents.add(o);
    const add = (k: ObjectKey) => members.size < MAX_FAMILY && !members.has(k) && (members.add(k), true);
    // Owners, transitively.
    const up = [...parents];
    while (up.length > 0) {
      const k = up.pop()!;
      if (add(k)) up.push(...(this.owners.get(k) ?? []));
    }
    // Objects sharing a direct owner.
    for (const p of parents) for (const sibling of this.owned.get(p) ?? []) add(sibling);
    // Owned objects, transitively.
    const down = [key];
    const visited = new Set<ObjectKey>();
    while (down.length > 0) {
      const k = down.pop()!;
      if (visited.has(k)) continue;
      visited.add(k);
      for (const child of this.owned.get(k) ?? []) {
        if (members.size >= MAX_FAMILY) return members;
        add(child);
        down.push(child);
      }
    }
    return members;
  }

  private onResponse(res: ResponseEvent): void {
    const p = this.pending.get(res.id);
    if (!p) return;
    this.pending.delete(res.id);
    if (!this.full) {
      const id = isSuccessStatus(res.status) ? writeIdentity(p.request!, res.object) : undefined;
      if (id) this.writeCounter.record({ ...id, key: this.foldWriteKey(p.request!, id.key, res.object) });
      return;
    }
    if (!p.housekeeping) {
      this.housekeeping.noteAnswer(p.request?.key, res.object);
      if (this.inFlight > 0) this.inFlight--;
      this.lastActivityTs = Math.max(this.lastActivityTs ?? res.ts, res.ts);
      if (p.burst === this.burst) this.burstEndDeliveries[this.burst] = this.deliveries.length;
    }
    if (p.write) this.onWriteAnswer(p.write, p.request!, res);
    else if (p.request && isSuccessStatus(res.status) && res.object) this.onRead(res.object, p.readKind, res.seq);
  }

  private onWriteAnswer(w: WriteRecord, req: RequestEvent, res: ResponseEvent): void {
    w.status = res.status;
    if (!isSuccess(w)) {
      w.effect = 'no-op';
      return;
    }
    // Counted as controller-write.ts counts (per verb, key, subresource), as the proxy counts at test
    // time: a create under the key of the object the answer returns (the request may not name it:
    // generateName, a protobuf or YAML body), under the folded key.
    const counted = writeIdentity(req, res.object);
    if (counted) w.rawKey = counted.key;
    if (!w.rawKey || w.verb === 'deletecollection') {
      // Nothing a trigger can name, nothing to prove a no-op.
      w.effect = 'effective';
      return;
    }
    w.key = this.foldWriteKey(req, w.rawKey, res.object);
    if (counted) {
      const id: WriteIdentity = { ...counted, key: w.key };
      w.trigger = triggerFor(id, this.writeCounter.record(id));
    }
    const rawKey = w.rawKey;
    if (w.verb === 'delete' || (w.verb === 'create' && w.subresource)) {
      // Effective iff the object changed after the request (a delete: removed or marked for deletion).
      const found = this.findChangeAfter(rawKey, w.requestSeq, (c) => w.verb !== 'delete' || c.eventType !== 'ADDED');
      if (found >= 0) this.resolveEffect(w, found);
      else {
        pushTo(this.pendingWriteAnyChange, rawKey, w.index);
        // Even a no-op, re-issued later, can undo a newer state: look for conflicts from the answer on.
        this.searchConflicts(w, res.seq);
      }
      return;
    }
    const rv = res.object?.metadata?.resourceVersion;
    if (w.verb === 'create') w.effect = 'effective'; // a successful create always stores an object
    if (typeof rv !== 'string' || rv === '') {
      // An answer without a resourceVersion cannot prove a no-op: keep the write.
      w.effect = 'effective';
      this.searchConflicts(w, res.seq);
      return;
    }
    const c = this.findChangeByRv(rawKey, rv);
    if (c >= 0 && this.changes[c]!.seq > w.requestSeq) this.resolveEffect(w, c);
    else {
      pushTo(this.pendingWriteByRv, rv, w.index);
      this.searchConflicts(w, res.seq);
    }
  }

  /**
   * The folded key of a write's object. A create's answer is a sighting of the creation as good as the
   * cluster change (which the trace may hold only later): the proxy folds at whichever comes first,
   * and so does the planner, so both count the create under `<prefix>*#<n>`.
   */
  private foldWriteKey(req: Pick<RequestEvent, 'verb' | 'resource'>, rawKey: ObjectKey, answer: KubeObject | undefined): ObjectKey {
    if (req.verb === 'create' && !req.resource?.subresource && isObject(answer)) return this.folder.observeCreate(rawKey, answer);
    return this.folder.fold(rawKey);
  }

  /** The recorded change of `rawKey` with this resourceVersion (-1: not recorded yet, or long ago). */
  private findChangeByRv(rawKey: ObjectKey, rv: string): number {
    const list = this.rawKeyChanges.get(rawKey);
    if (!list) return -1;
    // Deliveries and answers trail their change by a few events at most; a list shows the latest state.
    for (let i = list.length - 1; i >= 0 && i >= list.length - 64; i--) {
      if (this.changes[list[i]!]!.resourceVersion === rv) return list[i]!;
    }
    return -1;
  }

  private findChangeAfter(rawKey: ObjectKey, afterSeq: number, accept: (c: ChangeRecord) => boolean): number {
    const list = this.rawKeyChanges.get(rawKey);
    if (!list) return -1;
    let first = -1;
    for (let i = list.length - 1; i >= 0; i--) {
      const c = this.changes[list[i]!]!;
      if (c.seq <= afterSeq) break;
      if (accept(c)) first = c.index;
    }
    return first;
  }

  private resolveEffect(w: WriteRecord, change: number): void {
    w.effect = 'effective';
    w.effectChange = change;
    const seq = this.changes[change]!.seq;
    if (w.conflictAfterSeq >= 0 && w.conflictAfterSeq < seq) {
      // The search started at the answer, before the change the write caused was recorded: restart after it.
      if (w.conflict < 0 && w.rawKey) {
        const list = (this.pendingConflicts.get(w.rawKey) ?? []).filter((i) => i !== w.index);
        if (list.length > 0) this.pendingConflicts.set(w.rawKey, list);
        else this.pendingConflicts.delete(w.rawKey);
      }
      w.conflict = -1;
      w.firstLater = -1;
      w.conflictAfterSeq = -1;
    }
    this.searchConflicts(w, seq);
  }

  /** Starts looking for the first later change that re-issuing `w` would undo (and its first later change). */
  private searchConflicts(w: WriteRecord, afterSeq: number): void {
    if (!w.rawKey || w.conflictAfterSeq >= 0) return;
    w.conflictAfterSeq = afterSeq;
    // Changes already recorded after that point (the answer can arrive after the change it caused, or later ones).
    const list = this.rawKeyChanges.get(w.rawKey) ?? [];
    let from = list.length;
    while (from > 0 && this.changes[list[from - 1]!]!.seq > afterSeq) from--;
    for (let i = from; i < list.length; i++) if (this.checkConflict(w, this.changes[list[i]!]!)) return;
    pushTo(this.pendingConflicts, w.rawKey, w.index);
  }

  /** True when `c` is the conflict of `w` (it stops searching). */
  private checkConflict(w: WriteRecord, c: ChangeRecord): boolean {
    if (!c.diff || c.index === w.effectChange) return false;
    if (w.firstLater < 0) w.firstLater = c.index;
    let conflict: boolean;
    switch (w.verb) {
      case 'create': {
        // Re-creating would resurrect an object that was deleted since. And a controller that creates
        // what is missing re-asserts what it created when the object exists (create-or-update): from
        // a stale view it would revert a later change of a field its create set.
        const written = w.written ?? 'all';
        conflict = c.eventType === 'DELETED' || (c.eventType === 'MODIFIED' && !c.terminating && (written === 'all' || c.diffKeys.some((d) => written.some((p) => overlaps(p, d)))));
        break;
      }
      case 'delete':
        // Re-deleting would remove a newer object (re-created, or updated while not being deleted).
        conflict = c.eventType === 'ADDED' || (c.eventType === 'MODIFIED' && !c.terminating);
        break;
      case 'update':
      case 'patch': {
        const written = w.written ?? 'all';
        conflict = c.eventType === 'ADDED' || (c.eventType === 'MODIFIED' && (written === 'all' || c.diffKeys.some((d) => written.some((p) => overlaps(p, d)))));
        break;
      }
      default:
        conflict = false;
    }
    if (conflict) w.conflict = c.index;
    return conflict;
  }

  private onRead(obj: KubeObject, kind: string | undefined, seq: number): void {
    const items = (obj as { items?: unknown }).items;
    if (Array.isArray(items)) {
      const itemKind = typeof obj.kind === 'string' && obj.kind.endsWith('List') ? obj.kind.slice(0, -4) : kind;
      for (const item of items) if (isObject(item)) this.readObject(item as KubeObject, itemKind, seq);
    } else {
      this.readObject(obj, kind, seq);
    }
  }

  private readObject(obj: KubeObject, kind: string | undefined, seq: number): void {
    const key = keyOf(obj, obj.kind ?? kind);
    const rv = obj.metadata?.resourceVersion;
    if (!key || typeof rv !== 'string' || obj.kind === 'Status') return;
    if (this.seenRv.get(key) === rv) return; // already shown this state
    this.addDelivery(key, rv, seq, 'read');
  }

  private onWatchEvent(e: WatchDeliveryEvent): void {
    if (!this.full) return;
    if (e.eventType !== 'ADDED' && e.eventType !== 'MODIFIED' && e.eventType !== 'DELETED') return;
    const key = e.key ?? keyOf(e.object);
    if (!key) return;
    if (!this.reconcileInterrupted && !this.housekeeping.isHousekeepingObject(key, e.object) && !this.isEchoOfReconcile(key)) this.reconcileInterrupted = true;
    this.lastWatchDelivery = this.addDelivery(key, e.resourceVersion ?? e.object?.metadata?.resourceVersion, e.seq, 'watch');
  }

  private addDelivery(rawKey: ObjectKey, rv: string | undefined, seq: number, source: DeliveryRecord['source']): number {
    const index = this.deliveries.length;
    const d: DeliveryRecord = { seq, rawKey, change: -1, source };
    if (rv !== undefined) {
      this.seenRv.set(rawKey, rv);
      const c = this.findChangeByRv(rawKey, rv);
      if (c >= 0) {
        d.change = c;
        this.changes[c]!.delivered = true;
        if (source === 'watch') this.changes[c]!.watched = true;
      } else {
        pushTo(this.pendingDeliveries, rv, index);
      }
    }
    this.deliveries.push(d);
    this.lastDelivery.set(rawKey, index);
    this.seenKeys.add(rawKey);
    return index;
  }

  private onEpisode(e: EpisodeEvent): void {
    if (!this.full) return;
    if (e.phase === 'end') {
      this.previousEpisodeQuiet = e.quiet !== false;
      return;
    }
    this.episodeMode = true;
    let delivery = this.lastWatchDelivery;
    if (e.watchEventSeq !== undefined) {
      for (let i = this.deliveries.length - 1; i >= 0 && i >= this.deliveries.length - 64; i--) {
        if (this.deliveries[i]!.seq === e.watchEventSeq) {
          delivery = i;
          break;
        }
      }
    }
    if (this.previousEpisodeQuiet) {
      // The controller was quiet: whatever it does now reacts to this delivery.
      this.startBurst();
      this.episodeWindowStart = delivery >= 0 ? delivery : this.deliveries.length;
    }
    // Otherwise the previous episode's work is still going on: same burst, window still open from its delivery.
    this.previousEpisodeQuiet = true;
  }

  // ---- cluster side ----------------------------------------------------------------------------

  private onWorkloadStep(e: WorkloadStepEvent): void {
    // A step that writes (or one recorded before steps said what they do) is news to the controller.
    if (e.phase === 'start' && e.action !== 'wait' && e.action !== 'sleep') this.reconcileInterrupted = true;
    if (e.phase === 'start') {
      if (e.action) this.workloadSteps.push({ index: e.index, action: e.action, keys: e.keys ?? [], startSeq: e.seq, endSeq: Infinity, wrote: [] });
      return;
    }
    const step = this.workloadSteps.at(-1);
    if (!step || step.index !== e.index || step.endSeq !== Infinity || e.phase !== 'done') return;
    step.endSeq = e.seq;
    if (e.wrote) step.wrote = e.wrote;
    if (e.polls !== undefined) step.polls = e.polls;
    if (e.metAt !== undefined) step.metAt = e.metAt;
  }

  private onChange(e: ClusterChangeEvent): void {
    this.hasClusterTrace = true;
    const index = this.changes.length;
    const rawKey = e.key;
    const prev = this.lastState.get(rawKey);
    const next = e.eventType === 'DELETED' ? undefined : normalizeForTrigger(e.object);
    let diff: ChangeDiff | undefined;
    if (e.eventType === 'ADDED') diff = diffForTrigger(undefined, next);
    else if (e.eventType === 'DELETED') diff = diffForTrigger(prev ?? normalizeForTrigger(e.object), undefined);
    else if (prev) diff = diffForTrigger(prev, next);
    // A MODIFIED of an object never seen created cannot be named reliably: it stays invisible to triggers.

    const key = e.eventType === 'ADDED' ? this.folder.observeCreate(rawKey, e.object) : this.folder.fold(rawKey);
    let history = this.keys.get(key);
    if (!history) {
      history = { creates: 0, deletes: 0, updates: [] };
      this.keys.set(key, history);
    }
    let ordinal = 0;
    let updatePos = -1;
    if (!this.started) {
      // Not counted: the proxy's trigger counters start with the controller.
    } else if (diff?.change === 'create') ordinal = ++history.creates;
    else if (diff?.change === 'delete') ordinal = ++history.deletes;
    else if (diff?.change === 'update') {
      updatePos = history.updates.length;
      history.updates.push(index);
      ordinal = history.updates.length;
    }
    const c: ChangeRecord = {
      index,
      seq: e.seq,
      key,
      rawKey,
      eventType: e.eventType,
      resourceVersion: e.resourceVersion,
      diff,
      diffKeys: diff ? diff.fields.map((f) => pathKey(f.path)) : [],
      ordinal,
      updatePos,
      beforeStart: !this.started,
      terminating: e.eventType !== 'DELETED' && typeof e.object?.metadata?.deletionTimestamp === 'string',
      bookkeeping: isBookkeepingKey(rawKey) || isLeaderElectionRecord(e.object),
      delivered: false,
      watched: false,
      cancelledBy: -1,
      causal: 0,
      owners: undefined,
    };
    this.changes.push(c);
    if (next) this.lastState.set(rawKey, next);
    else this.lastState.delete(rawKey);
    if (!this.full) return;
    if (this.options.stateHashes) this.updateStateHash(index, rawKey, next);
    pushTo(this.rawKeyChanges, rawKey, index);
    this.seenKeys.add(rawKey);
    this.updateOwnership(rawKey, e.eventType === 'DELETED' ? undefined : e.object);
    if (e.eventType === 'ADDED') c.owners = this.owners.get(rawKey);

    const waitingDeliveries = this.pendingDeliveries.get(e.resourceVersion);
    if (waitingDeliveries) {
      this.pendingDeliveries.delete(e.resourceVersion);
      for (const d of waitingDeliveries) {
        if (this.deliveries[d]!.rawKey !== rawKey) continue;
        this.deliveries[d]!.change = index;
        c.delivered = true;
        if (this.deliveries[d]!.source === 'watch') c.watched = true;
      }
    }
    const waitingWrites = this.pendingWriteByRv.get(e.resourceVersion);
    if (waitingWrites) {
      this.pendingWriteByRv.delete(e.resourceVersion);
      for (const wi of waitingWrites) {
        const w = this.writes[wi]!;
        if (w.rawKey === rawKey && c.seq > w.requestSeq) this.resolveEffect(w, index);
      }
    }
    const waitingAny = this.pendingWriteAnyChange.get(rawKey);
    if (waitingAny) {
      const still: number[] = [];
      for (const wi of waitingAny) {
        const w = this.writes[wi]!;
        if (c.seq > w.requestSeq && (w.verb !== 'delete' || c.eventType !== 'ADDED')) this.resolveEffect(w, index);
        else still.push(wi);
      }
      if (still.length > 0) this.pendingWriteAnyChange.set(rawKey, still);
      else this.pendingWriteAnyChange.delete(rawKey);
    }
    // After the writes this change resolves, so that a write's own change never counts as its conflict.
    if (c.diff) {
      this.checkPendingConflicts(c);
      this.trackCancellation(c);
    }
  }

  private checkPendingConflicts(c: ChangeRecord): void {
    const list = this.pendingConflicts.get(c.rawKey);
    if (!list) return;
    const still: number[] = [];
    for (const wi of list) {
      const w = this.writes[wi]!;
      if (c.seq <= w.conflictAfterSeq || !this.checkConflict(w, c)) still.push(wi);
    }
    if (still.length > 0) this.pendingConflicts.set(c.rawKey, still);
    else this.pendingConflicts.delete(c.rawKey);
  }

  /**
   * Unobserved state: a creation is cancelled by the deletion, a deletion by the re-creation, an update
   * by the deletion or by the first later update that changes one of its fields again.
   */
  private trackCancellation(c: ChangeRecord): void {
    const key = c.rawKey;
    const cancel = (n: number) => {
      const prev = this.changes[n]!;
      if (prev.cancelledBy < 0) prev.cancelledBy = c.index;
    };
    if (c.eventType === 'DELETED') {
      const created = this.pendingCreate.get(key);
      if (created !== undefined) cancel(created);
      this.pendingCreate.delete(key);
      for (const list of this.pendingUpdates.get(key)?.values() ?? []) list.forEach(cancel);
      this.pendingUpdates.delete(key);
      this.pendingDelete.set(key, c.index);
      return;
    }
    if (c.eventType === 'ADDED') {
      const deleted = this.pendingDelete.get(key);
      if (deleted !== undefined) cancel(deleted);
      this.pendingDelete.delete(key);
      this.pendingUpdates.delete(key);
      this.pendingCreate.set(key, c.index);
      return;
    }
    let buckets = this.pendingUpdates.get(key);
    if (buckets) {
      for (const [p, list] of buckets) {
        if (c.diffKeys.some((d) => overlaps(p, d))) {
          list.forEach(cancel);
          buckets.delete(p);
        }
      }
    } else {
      buckets = new Map();
      this.pendingUpdates.set(key, buckets);
    }
    for (const d of c.diffKeys) pushTo(buckets, d, c.index);
  }

  private updateOwnership(key: ObjectKey, obj: KubeObject | undefined): void {
    if (!obj) return;
    const parents = this.ownerKeys(obj, parseKey(key)?.namespace);
    const old = this.owners.get(key);
    if (old && old.length === parents.length && old.every((o, i) => o === parents[i])) return;
    for (const o of old ?? []) {
      this.owned.get(o)?.delete(key);
      // Orphaning removes owner references: the change is still the owner's deletion echoing.
      if (!parents.includes(o)) {
        let past = this.pastOwners.get(key);
        if (!past) this.pastOwners.set(key, (past = new Set()));
        past.add(o);
      }
    }
    if (parents.length > 0) this.owners.set(key, parents);
    else this.owners.delete(key);
    for (const o of parents) {
      let set = this.owned.get(o);
      if (!set) {
        set = new Set();
        this.owned.set(o, set);
      }
      set.add(key);
    }
  }

  private ownerKeys(obj: KubeObject, namespace: string | undefined): ObjectKey[] {
    const refs = obj.metadata?.ownerReferences;
    if (!Array.isArray(refs)) return [];
    const out: ObjectKey[] = [];
    for (const ref of refs) {
      if (!isObject(ref) || typeof ref.kind !== 'string' || typeof ref.name !== 'string') continue;
      // Owners live in the owned object's namespace or are cluster-scoped; prefer whichever was seen.
      const namespaced = namespace ? formatKey(ref.kind, namespace, ref.name) : undefined;
      const clusterScoped = formatKey(ref.kind, undefined, ref.name);
      out.push(namespaced && (this.seenKeys.has(namespaced) || !this.seenKeys.has(clusterScoped)) ? namespaced : clusterScoped);
    }
    return out.sort();
  }

  private updateStateHash(index: number, key: ObjectKey, next: Record<string, unknown> | undefined): void {
    const old = this.objectHash.get(key);
    if (old) for (let i = 0; i < 4; i++) this.lanes[i] = (this.lanes[i]! - old[i]!) >>> 0;
    if (next) {
      const d = createHash('md5').update(key).update('\n').update(JSON.stringify(next)).digest();
      const h: [number, number, number, number] = [d.readUInt32LE(0), d.readUInt32LE(4), d.readUInt32LE(8), d.readUInt32LE(12)];
      for (let i = 0; i < 4; i++) this.lanes[i] = (this.lanes[i]! + h[i]!) >>> 0;
      this.objectHash.set(key, h);
    } else {
      this.objectHash.delete(key);
    }
    if ((index + 1) * 4 > this.stateHashes.length) {
      const bigger = new Uint32Array(this.stateHashes.length * 2);
      bigger.set(this.stateHashes);
      this.stateHashes = bigger;
    }
    this.stateHashes.set(this.lanes, index * 4);
  }

  /** Marks changes whose deliveries may have caused a write (bit 1) or a successful, effective one (bit 2). */
  private markCausalChanges(): void {
    const n = this.deliveries.length;
    const any = new Int32Array(n + 1);
    const effective = new Int32Array(n + 1);
    const extraAny = new Uint8Array(n);
    const extraEffective = new Uint8Array(n);
    for (const w of this.writes) {
      const eff = w.effect === 'effective' && isSuccess(w);
      if (w.causeTo > w.causeFrom) {
        any[w.causeFrom]!++;
        any[w.causeTo]!--;
        if (eff) {
          effective[w.causeFrom]!++;
          effective[w.causeTo]!--;
        }
      }
      for (const d of w.causeExtra) {
        extraAny[d] = 1;
        if (eff) extraEffective[d] = 1;
      }
    }
    let a = 0;
    let e = 0;
    for (let i = 0; i < n; i++) {
      a += any[i]!;
      e += effective[i]!;
      const d = this.deliveries[i]!;
      if (d.change < 0) continue;
      const c = this.changes[d.change]!;
      if (a > 0 || extraAny[i]) c.causal |= 1;
      if (e > 0 || extraEffective[i]) c.causal |= 2;
    }
  }
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

function pushTo<K, V>(map: Map<K, V[]>, key: K, value: V): void {
  const list = map.get(key);
  if (list) list.push(value);
  else map.set(key, [value]);
}

function hex(n: number): string {
  return n.toString(16).padStart(8, '0');
}

/** Analyses a whole trace (any iterable, in seq order). */
export function analyzeRun(trace: Iterable<TraceEvent>, options: AnalyzerOptions): RunAnalysis {
  const analyzer = new RunAnalyzer(options);
  for (const e of trace) analyzer.push(e);
  return analyzer.finish();
}
