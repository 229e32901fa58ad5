/**
 * Summarises a controller trace for the health and liveness oracles: which API errors the
 * controller got (grouped by status, verb and resource) and how often it successfully wrote each
 * object (Leases and Events aside) after the workload's last step and the last fault event (a fault
 * that ended watches lasts until the controller watches those resources again). Pure: trace events
 * in, a small summary out.
 */
import type { ApiErrorCount, ControllerActivity, FailedWriteCount, OwnWrite, WriteCount } from '../src/model/controller-activity.js';
import { formatKey, isObject } from '../src/model/object-key.js';
import { parseApiPath, WRITE_VERBS } from '../src/model/api-path.js';
import { isBookkeepingKey } from '../src/model/bookkeeping.js';
import { countedWriteKey, isDryRun, isSuccessStatus, isTriggerWriteVerb } from '../src/model/controller-write.js';
import type { RequestEvent, ResponseEvent, TraceEvent } from '../src/model/trace.js';

/** The pod subresources kube-apiserver serves by calling the pod's kubelet. */
const KUBELET_SUBRESOURCES: ReadonlySet<string> = new Set(['exec', 'attach', 'portforward', 'log', 'proxy']);

export function summarizeControllerTrace(events: readonly TraceEvent[]): ControllerActivity {
  const summarizer = new ControllerActivitySummarizer();
  for (const e of [...events].sort((a, b) => a.seq - b.seq)) summarizer.add(e);
  return summarizer.result();
}

/** The same summary, fed one event at a time in trace order (for traces streamed from disk). */
export class ControllerActivitySummarizer {
  private readonly requests = new Map<number, RequestEvent>();
  private readonly errors = new Map<string, ApiErrorCount>();
  private readonly writes: Array<{ seq: number; key: string; subresource?: string }> = [];
  /** The resourceVersion the last answered write of each object gave it (a no-op write answers with the same). */
  private readonly lastVersion = new Map<string, string>();
  private readonly failedWrites: Array<{ seq: number; key: string; subresource?: string; status: number }> = [];
  private readonly ownWrites: OwnWrite[] = [];
  private workloadEnd: number | undefined;
  private lastFault = 0;
  /** Requests an api-error fault answered: their errors are the fault's, not the controller's. */
  private readonly injected = new Set<number>();
  /**
   * Objects a managed-system fault holds (from its `applied` to its `healed` event in the cluster
   * trace: a claim kept Pending, a pod crash-looping): the API server's refusals of writes to them
   * meanwhile (a Pending claim cannot be resized) are the fault's doing, as a real cluster gives them.
   */
  private readonly faulted = new Set<string>();
  /** Pod -> the Node it runs on (from the cluster trace's Pod changes), for the faults of a node. */
  private readonly podNodes = new Map<string, string>();
  /** Watch request id -> its resource, for the streams a fault ends. */
  private readonly watchResource = new Map<number, string>();
  /** Resources whose watches a fault ended (watch-end, an expired hold) and that the controller has not watched again yet. */
  private readonly blind = new Set<string>();
  /** Watch requests a watch-end fault answered 410 Expired. */
  private readonly expiredWatches = new Set<number>();

  add(e: TraceEvent): void {
    if (e.type === 'workload-step') this.workloadEnd = Math.max(this.workloadEnd ?? 0, e.seq);
    // Writes while a fault still shapes the controller's view (a stale view before its release, a
    // hold) are the fault's doing: a controller retrying from a frozen cache until it catches up.
    else if (e.type === 'fault') {
      this.lastFault = Math.max(this.lastFault, e.seq);
      if (e.fault === 'api-error' && e.requestId !== undefined) this.injected.add(e.requestId);
      // Until it watches those resources again (client-go backs off, then relists), the controller
      // acts on a cache that misses their changes: its failed writes meanwhile (409s on its own
      // objects) are the fault's doing, as under a stale view.
      // A re-watch answered 410 (watch-end expire) is not watching again: the controller relists
      // first. Its fault event may come before or after the request's own event.
      const expired = e.fault === 'watch-end' && e.phase === 'expired' && e.requestId !== undefined ? [e.requestId] : [];
      for (const id of expired) this.expiredWatches.add(id);
      for (const id of [...(e.streams ?? []), ...expired]) {
        const resource = this.watchResource.get(id);
        if (resource !== undefined) this.blind.add(resource);
      }
    } else if (e.type === 'request') {
      this.requests.set(e.id, e);
      if (e.verb === 'watch' && e.resource) {
        const resource = `${e.resource.group}/${e.resource.resource}`;
        this.watchResource.set(e.id, resource);
        if (!this.expiredWatches.has(e.id) && this.blind.delete(resource)) this.lastFault = Math.max(this.lastFault, e.seq);
      }
    } else if (e.type === 'response') {
      const req = this.requests.get(e.id);
      this.requests.delete(e.id);
      if (!req) return;
      if (e.status >= 400) {
        if (this.injected.has(e.id) || (req.key !== undefined && (this.faulted.has(req.key) || this.kubeletDown(req, req.key)))) return;
        this.addError(req, e);
        if (WRITE_VERBS.has(req.verb) && req.key && !isBookkeepingKey(req.key) && !isDryRun(req.query)) {
          this.failedWrites.push({
            seq: req.seq,
            key: req.key,
            status: e.status,
            ...(req.resource?.subresource ? { subresource: req.resource.subresource } : {}),
          });
        }
      }
      // Writes that took effect count; failed ones retried with backoff (409 on a stale cache) and
      // leader-election renewals are how a healthy controller behaves.
      else if (isSuccessStatus(e.status) && WRITE_VERBS.has(req.verb) && !isDryRun(req.query)) {
        if (req.key && !isBookkeepingKey(req.key) && this.changedSomething(req, req.key, e)) {
          this.writes.push({ seq: req.seq, key: req.key, ...(req.resource?.subresource ? { subresource: req.resource.subresource } : {}) });
        }
        this.addOwnWrite(req, e);
      }
    }
  }

  /**
   * An event of the cluster trace the summary needs, fed in seq order among the controller trace's
   * events: a fault event, where the managed-system faults are recorded (while one holds an object,
   * refusals of writes to it are the fault's; it also ends the post-workload quiet as any fault
   * does), or a Pod's change (the node it runs on).
   */
  addClusterEvent(e: TraceEvent): void {
    if (e.type === 'cluster-change') {
      if (!e.key.startsWith('Pod/')) return;
      const node = e.eventType === 'DELETED' || !isObject(e.object.spec) ? undefined : e.object.spec.nodeName;
      if (typeof node === 'string' && node !== '') this.podNodes.set(e.key, formatKey('Node', undefined, node));
      else this.podNodes.delete(e.key);
      return;
    }
    if (e.type !== 'fault') return;
    this.lastFault = Math.max(this.lastFault, e.seq);
    if (e.key === undefined) return;
    if (e.phase === 'applied') this.faulted.add(e.key);
    else if (e.phase === 'healed') this.faulted.delete(e.key);
  }

  /**
   * A call the API server hands to the pod's kubelet (exec, attach, port-forward, logs) while a
   * fault holds the pod's node: its refusal is the node's outage (a kubelet that does not answer, a
   * container runtime that is down), as a real cluster gives it.
   */
  private kubeletDown(req: RequestEvent, key: string): boolean {
    if (!KUBELET_SUBRESOURCES.has(req.resource?.subresource ?? '')) return false;
    const node = this.podNodes.get(key);
    return node !== undefined && this.faulted.has(node);
  }

  /**
   * Did a successful write change its object? The API server keeps the resourceVersion of an
   * update or patch that changes nothing, so one answered with the version its body named (an
   * update's optimistic lock), or else with the version the object's last answered write gave it,
   * changed nothing: an operator that updates every child on every reconcile without a change check
   * (zookeeper-operator's StatefulSet and ConfigMap) is not busy for it. A version someone else's
   * change gave the object in between makes a no-op look like a change: counted, as before. Creates
   * and deletes always change something.
   */
  private changedSomething(req: RequestEvent, key: string, e: ResponseEvent): boolean {
    const answered = isObject(e.object) && e.object.kind !== 'Status' ? e.object.metadata?.resourceVersion : undefined;
    const before = this.lastVersion.get(key);
    if (typeof answered !== 'string' || answered === '') return true;
    this.lastVersion.set(key, answered);
    if (req.verb !== 'update' && req.verb !== 'patch') return true;
    const meta = isObject(req.body) && isObject(req.body.metadata) ? req.body.metadata : undefined;
    const sent = typeof meta?.resourceVersion === 'string' && meta.resourceVersion !== '' ? meta.resourceVersion : before;
    return answered !== sent;
  }

  private addOwnWrite(req: RequestEvent, e: ResponseEvent): void {
    if (!isTriggerWriteVerb(req.verb)) return;
    const key = countedWriteKey(req, e.object);
    if (key && isBookkeepingKey(key)) return;
    const rv = isObject(e.object) && e.object.kind !== 'Status' ? e.object.metadata?.resourceVersion : undefined;
    const path = key ? undefined : parseApiPath(req.path);
    const kind = req.resource?.kind;
    this.ownWrites.push({
      verb: req.verb,
      ...(key ? { key } : {}),
      ...(!key && kind ? { within: `${kind}/${path?.namespace ?? ''}/` } : {}),
      ...(typeof rv === 'string' && rv !== '' ? { resourceVersion: rv } : {}),
      seq: req.seq,
    });
  }

  private addError(req: RequestEvent, e: ResponseEvent): void {
    const status = isObject(e.object) && e.object.kind === 'Status' ? e.object : undefined;
    const reason = typeof status?.reason === 'string' && status.reason !== '' ? status.reason : undefined;
    const resourceName = req.resource
      ? (req.resource.kind ?? req.resource.resource) + (req.resource.subresource ? `/${req.resource.subresource}` : '')
      : req.path;
    const sig = `${e.status} ${req.verb} ${resourceName}`;
    const existing = this.errors.get(sig);
    if (existing) {
      existing.count++;
      return;
    }
    const message = typeof status?.message === 'string' ? status.message : undefined;
    this.errors.set(sig, {
      status: e.status,
      ...(reason ? { reason } : {}),
      verb: req.verb,
      resource: resourceName,
      count: 1,
      example: { ...(req.key ? { key: req.key } : {}), ...(message ? { message } : {}), seq: e.seq },
    });
  }

  result(): ControllerActivity {
    const activity: ControllerActivity = { apiErrors: [...this.errors.values()], ownWrites: [...this.ownWrites].sort((a, b) => a.seq - b.seq) };
    if (this.workloadEnd === undefined) return activity;
    const end = Math.max(this.workloadEnd, this.lastFault);
    const counts = new Map<string, WriteCount>();
    for (const w of this.writes) {
      if (w.seq <= end) continue;
      const k = `${w.key} ${w.subresource ?? ''}`;
      const c = counts.get(k) ?? { key: w.key, ...(w.subresource ? { subresource: w.subresource } : {}), count: 0 };
      c.count++;
      counts.set(k, c);
    }
    activity.writesAfterWorkload = [...counts.values()].sort(byCount);
    const failed = new Map<string, FailedWriteCount>();
    for (const w of this.failedWrites) {
      if (w.seq <= end) continue;
      const k = `${w.key} ${w.subresource ?? ''} ${w.status}`;
      const c = failed.get(k) ?? { key: w.key, ...(w.subresource ? { subresource: w.subresource } : {}), status: w.status, count: 0 };
      c.count++;
      failed.set(k, c);
    }
    activity.failedWritesAfterWorkload = [...failed.values()].sort(byCount);
    return activity;
  }
}

function byCount(a: WriteCount, b: WriteCount): number {
  return b.count - a.count || (a.key < b.key ? -1 : a.key > b.key ? 1 : 0);
}
