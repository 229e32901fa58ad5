/**
 * One pass over a merged trace that every planning rule builds on: the events in `seq` order, the
 * controller's successful writes (with their trigger identity and whether they changed anything),
 * and the cluster's changes per object key.
 */
import type { ObjectKey } from '../src/model/object-key.js';
import type { TriggerWriteVerb, WriteTrigger } from '../src/model/plan.js';
import type { ClusterChangeEvent, RequestEvent, ResponseEvent, TraceEvent } from '../src/model/trace.js';
import {
  WriteOccurrenceCounter,
  isDryRun,
  isSuccessStatus,
  isTriggerWriteVerb,
  triggerFor,
  writeIdentity,
} from '../src/model/controller-write.js';

/** A write by the controller that the API server accepted (2xx, not a dry run). */
export interface ControllerWrite {
  verb: TriggerWriteVerb;
  request: RequestEvent;
  response: ResponseEvent;
  /** How a plan names this write; undefined when it cannot be named (e.g. a generateName create). */
  trigger?: WriteTrigger;
  /** False when the cluster did not change because of it (a no-op update or patch). */
  effective: boolean;
}

export interface AnalyzedTrace {
  /** All events, ordered by `seq` (ties broken by content, so input order never matters). */
  events: readonly TraceEvent[];
  /** Successful controller writes in the order their answers arrived. */
  writes: readonly ControllerWrite[];
  clusterChanges: ReadonlyMap<ObjectKey, readonly ClusterChangeEvent[]>;
  /**
   * Whether the trace includes the cluster trace. Without it, effectiveness cannot be judged and
   * every write counts as effective.
   */
  hasClusterTrace: boolean;
}

export function analyzeTrace(trace: Iterable<TraceEvent>): AnalyzedTrace {
  const events = sortBySeq(trace);
  const requests = new Map<number, RequestEvent>();
  const clusterChanges = new Map<ObjectKey, ClusterChangeEvent[]>();
  let hasClusterTrace = false;
  for (const e of events) {
    if (e.type === 'request') requests.set(e.id, e);
    else if (e.type === 'cluster-change') {
      hasClusterTrace = true;
      const list = clusterChanges.get(e.key) ?? [];
      list.push(e);
      clusterChanges.set(e.key, list);
    } else if (e.type === 'header' && e.source === 'cluster') hasClusterTrace = true;
  }

  const counter = new WriteOccurrenceCounter();
  const writes: ControllerWrite[] = [];
  for (const e of events) {
    if (e.type !== 'response' || !isSuccessStatus(e.status)) continue;
    const request = requests.get(e.id);
    if (!request || !isTriggerWriteVerb(request.verb) || isDryRun(request.query)) continue;
    const id = writeIdentity(request);
    const write: ControllerWrite = {
      verb: request.verb,
      request,
      response: e,
      effective: !hasClusterTrace || isEffective(request, e, clusterChanges.get(request.key ?? '') ?? []),
    };
    if (id) write.trigger = triggerFor(id, counter.record(id));
    writes.push(write);
  }
  return { events, writes, clusterChanges, hasClusterTrace };
}

/**
 * Did this accepted write change the cluster? The API server neither bumps resourceVersion nor
 * emits a watch event for a write whose result equals the stored object, so an update/patch changed
 * something iff the cluster trace shows a change, after the request, with the resourceVersion the
 * answer carries. (A no-op's answer carries the previous resourceVersion, whose change, if
 * recorded, came before the request.)
 */
function isEffective(req: RequestEvent, res: ResponseEvent, changes: readonly ClusterChangeEvent[]): boolean {
  switch (req.verb) {
    case 'create':
      // A create on a subresource (pods/eviction, serviceaccounts/token) stores no new object;
      // it counts only if the addressed object changed.
      return !req.resource?.subresource || changes.some((c) => c.seq > req.seq);
    case 'delete':
      return changes.some((c) => c.seq > req.seq && (c.eventType === 'DELETED' || c.eventType === 'MODIFIED'));
    default: {
      const rv = res.object?.metadata?.resourceVersion;
      // An answer without a resourceVersion cannot prove a no-op: keep the write.
      if (typeof rv !== 'string' || rv === '') return true;
      return changes.some((c) => c.seq > req.seq && c.resourceVersion === rv);
    }
  }
}

function sortBySeq(trace: Iterable<TraceEvent>): TraceEvent[] {
  const keyed = Array.from(trace, (e) => ({ e, tie: '' }));
  const seqCount = new Map<number, number>();
  for (const { e } of keyed) seqCount.set(e.seq, (seqCount.get(e.seq) ?? 0) + 1);
  // seq is unique except for the two headers; serialize only events that share one.
  for (const k of keyed) if ((seqCount.get(k.e.seq) ?? 0) > 1) k.tie = JSON.stringify(k.e);
  keyed.sort((a, b) => a.e.seq - b.e.seq || (a.tie < b.tie ? -1 : a.tie > b.tie ? 1 : 0));
  return keyed.map((k) => k.e);
}
