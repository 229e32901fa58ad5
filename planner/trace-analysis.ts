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
 *
 * The work is split along its seams in planner/analysis/: changes.ts (the cluster's changes and each
 * object's history), delivery.ts (what the controller saw and when: deliveries, bursts, episodes,
 * reconciles), writes.ts (the controller's writes and their effects), ownership.ts (who owns whom);
 * app-calls.ts (the controller's calls to its stub applications); the record types are analysis/records.ts. This file feeds them the trace in order.
 */
import { isDryRun, isSuccessStatus, writeIdentityKey } from '../src/model/controller-write.js';
import type { RequestVerb } from '../src/model/api-path.js';
import type { ClusterChangeEvent, RequestEvent, ResponseEvent, TraceEvent, WorkloadStepEvent } from '../src/model/trace.js';
import { parseKey } from '../src/model/object-key.js';
import { ChangeLog } from './analysis/changes.js';
import { DeliveryLog } from './analysis/delivery.js';
import { Ownership } from './analysis/ownership.js';
import type { AnalyzerOptions, RunAnalysis, WorkloadStepRecord, WriteRecord } from './analysis/records.js';
import { WriteLog } from './analysis/writes.js';
import { AppCallLog } from './analysis/app-calls.js';

export { isSuccess, upperBound } from './analysis/records.js';
export type {
  AnalyzerOptions,
  CausalityMode,
  ChangeEventType,
  ChangeRecord,
  DeliveryRecord,
  EffectState,
  KeyHistory,
  RunAnalysis,
  WorkloadStepRecord,
  WriteRecord,
} from './analysis/records.js';

const WRITE_VERBS: ReadonlySet<string> = new Set(['create', 'update', 'patch', 'delete', 'deletecollection']);

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
  private readonly ownership = new Ownership();
  private readonly changes: ChangeLog;
  private readonly delivery: DeliveryLog;
  private readonly writes: WriteLog;
  private readonly workloadSteps: WorkloadStepRecord[] = [];
  private readonly appCalls = new AppCallLog();
  // Kinds of the controller's list and watch requests and watch events (see RunAnalysis.listedKinds).
  private readonly listedKinds = new Set<string>();
  private listsOrWatches = false;
  private unknownListedKind = false;
  /** Requests waiting for their answer. */
  private readonly pending = new Map<number, PendingRequest>();
  private readonly full: boolean;
  /** Has the controller trace begun (the proxy counts changes for triggers from then on)? */
  private started = false;

  constructor(options: AnalyzerOptions) {
    this.full = (options.detail ?? 'plans') === 'plans';
    this.changes = new ChangeLog(options, this.ownership);
    this.delivery = new DeliveryLog(options, this.changes, this.ownership);
    this.writes = new WriteLog(this.changes, this.delivery);
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
        if (e.action === 'start') this.delivery.startIncarnation(e.incarnation);
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
        if (this.full) this.delivery.onWatchEvent(e);
        if (e.key) this.listedKinds.add(parseKey(e.key)?.kind ?? '');
        break;
      case 'cluster-change':
        this.onChange(e);
        break;
      case 'episode':
        if (this.full) this.delivery.onEpisode(e);
        break;
      case 'app-call':
        // Every run: the other reference runs say whether a call recurs with the same rank.
        this.appCalls.record(e);
        break;
      default:
        break;
    }
  }

  finish(): RunAnalysis {
    const changes = this.changes;
    let ordinals: Map<string, number[]> | undefined;
    this.writes.settle(!this.hasClusterTrace && changes.changes.length === 0);
    this.delivery.markCausalChanges(this.writes.writes);
    return {
      events: this.events,
      hasClusterTrace: this.hasClusterTrace || changes.changes.length > 0,
      causality: this.delivery.causality,
      changes: changes.changes,
      deliveries: this.delivery.deliveries,
      writes: this.writes.writes,
      keys: changes.keys,
      writeCount: (id) => this.writes.counter.count(id),
      requestOrdinal: (id, occurrence) => {
        ordinals ??= this.writes.successOrdinals();
        return ordinals.get(writeIdentityKey(id))?.[occurrence - 1];
      },
      existsAfter: (rawKey, change) => changes.existsAfter(rawKey, change),
      changesOf: (rawKey) => changes.changesOf(rawKey),
      workloadSteps: this.workloadSteps,
      appCalls: this.appCalls.calls,
      listedKinds: this.listsOrWatches && !this.unknownListedKind ? this.listedKinds : undefined,
      stateAfter: changes.stateHashReader(),
      stateReader: (include) => changes.subsetStateReader(include),
    };
  }

  private onRequest(req: RequestEvent): void {
    if (req.incarnation !== undefined && req.incarnation !== this.delivery.currentIncarnation) this.delivery.startIncarnation(req.incarnation);
    if (req.verb === 'watch' || req.verb === 'list') {
      this.listsOrWatches = true;
      // A list or watch of a resource the proxy could not name a kind for: the kinds are not known.
      if (req.resource?.kind) this.listedKinds.add(req.resource.kind);
      else this.unknownListedKind = true;
    }
    if (req.verb === 'watch') return; // long-running: neither activity nor quiet
    if (!this.full) {
      // Only the write counts are needed: every write that may be counted (a create by the key in its answer).
      if (WRITE_VERBS.has(req.verb) && (req.key || req.verb === 'create') && !isDryRun(req.query))
        this.pending.set(req.id, { verb: req.verb, burst: 0, request: req });
      return;
    }
    const housekeeping = this.delivery.requestStarted(req);
    const p: PendingRequest = { verb: req.verb, burst: this.delivery.burst, housekeeping };
    if (WRITE_VERBS.has(req.verb)) {
      p.write = this.writes.record(req);
      p.request = req;
    } else if (req.verb === 'get' || req.verb === 'list') {
      p.request = req;
      if (req.resource?.kind) p.readKind = req.resource.kind;
    }
    this.pending.set(req.id, p);
  }

  private onResponse(res: ResponseEvent): void {
    const p = this.pending.get(res.id);
    if (!p) return;
    this.pending.delete(res.id);
    if (!this.full) {
      this.writes.count(p.request!, res);
      return;
    }
    if (!p.housekeeping) this.delivery.requestAnswered(p.request, p.burst, res);
    if (p.write) this.writes.answered(p.write, p.request!, res);
    else if (p.request && isSuccessStatus(res.status) && res.object) this.delivery.onRead(res.object, p.readKind, res.seq);
  }

  private onWorkloadStep(e: WorkloadStepEvent): void {
    // A step that writes (or one recorded before steps said what they do) is news to the controller.
    if (e.phase === 'start' && e.action !== 'wait' && e.action !== 'sleep') this.delivery.interruptReconcile();
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
    const c = this.changes.record(e, this.started, this.full);
    if (!this.full) return;
    this.delivery.changeRecorded(c);
    this.writes.changeRecorded(c);
    // After the writes this change resolves, so that a write's own change never counts as its conflict.
    if (c.diff) {
      this.writes.checkPendingConflicts(c);
      this.changes.trackCancellation(c);
    }
  }
}

/** Analyses a whole trace (any iterable, in seq order). */
export function analyzeRun(trace: Iterable<TraceEvent>, options: AnalyzerOptions): RunAnalysis {
  const analyzer = new RunAnalyzer(options);
  for (const e of trace) analyzer.push(e);
  return analyzer.finish();
}
