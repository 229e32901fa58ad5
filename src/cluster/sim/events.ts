/**
 * Events as the real components write them, so that `kubectl describe` / `kubectl events` and
 * operators that read Events see what a real cluster shows.
 *
 * Two recorders, after client-go:
 * - `CoreEventRecorder` (k8s.io/client-go/tools/record, used by kube-controller-manager's controllers,
 *   the kubelet and external provisioners): core/v1 Events named `<object>.<hex UnixNano>` with
 *   source {component, host}, reportingComponent/reportingInstance copied from the source,
 *   firstTimestamp/lastTimestamp/count. Its EventCorrelator (events_cache.go) is reproduced: a
 *   repeated identical event is a strategic merge PATCH of count, lastTimestamp and message on the
 *   first one; more than 10 events that differ only by message within 10 minutes are aggregated
 *   into one "(combined from similar events): ..." event; a source may write 25 events about one
 *   object, then one every 5 minutes (the spam filter).
 * - `EventsV1Recorder` (k8s.io/client-go/tools/events, used by kube-scheduler): events.k8s.io/v1
 *   Events with eventTime, action, reportingController/reportingInstance and no deprecated source
 *   or counts; a repeat of an isomorphic event (same type, action, reason, reporter, regarding) is
 *   a PATCH that sets `series` (count 2) once, later repeats are only counted in memory, as the real
 *   broadcaster only writes them on its 30-minute refresh.
 *
 * Every write goes through one serial queue owned by `SimEvents`, off the controllers' reconciles
 * (as the broadcaster's goroutine), and failures are dropped, as client-go drops events the server
 * rejects. In deterministic mode the work runner waits for the queue after each reconcile and the
 * `<hex>` of event names is derived from the event instead of the clock, so runs reproduce names.
 */
import { createHash } from 'node:crypto';
import { formatApiPath } from '../../model/api-path.js';
import { isObject, type KubeObject } from '../../model/object-key.js';
import type { KubeClient } from '../../kube/client.js';
import { now } from './objects.js';

export type EventType = 'Normal' | 'Warning';

/** v1.ObjectReference as ref.GetReference builds it from the object a component holds. */
export interface ObjectReference {
  kind: string;
  namespace?: string;
  name: string;
  uid?: string;
  apiVersion: string;
  resourceVersion?: string;
  fieldPath?: string;
}

export interface EventSource {
  component: string;
  /** The node, for kubelets; unset for controllers. */
  host?: string;
}

/** ref.GetReference (or GetPartialReference with a fieldPath such as `spec.containers{name}`). */
export function referenceTo(obj: KubeObject, fieldPath?: string): ObjectReference {
  const m = obj.metadata ?? {};
  const ref: ObjectReference = { kind: obj.kind ?? '', name: m.name ?? '', apiVersion: obj.apiVersion ?? '' };
  if (m.namespace) ref.namespace = m.namespace;
  if (m.uid) ref.uid = m.uid;
  if (m.resourceVersion) ref.resourceVersion = m.resourceVersion;
  if (fieldPath) ref.fieldPath = fieldPath;
  return ref;
}

// events_cache.go defaults
const LRU_ENTRIES = 4096;
const AGGREGATE_MAX_EVENTS = 10;
const AGGREGATE_INTERVAL_MS = 600_000;
const SPAM_BURST = 25;
const SPAM_QPS = 1 / 300;

/** A Map that forgets its least recently used entries beyond `max` (groupcache/lru). */
class Lru<V> {
  private readonly map = new Map<string, V>();
  constructor(private readonly max = LRU_ENTRIES) {}
  get(key: string): V | undefined {
    const v = this.map.get(key);
    if (v !== undefined) {
      this.map.delete(key);
      this.map.set(key, v);
    }
    return v;
  }
  set(key: string, value: V): void {
    this.map.delete(key);
    this.map.set(key, value);
    if (this.map.size > this.max) this.map.delete(this.map.keys().next().value!);
  }
}

/** The shared write queue, clock and naming of one simulation's recorders. */
export class SimEvents {
  private queue: Promise<void> = Promise.resolve();
  private pending = 0;
  private stopped = false;
  private lastNanos = 0n;
  private readonly occurrences = new Map<string, number>();
  /** Event writes sent (creates and patches), for measuring the write rate. */
  writes = 0;

  constructor(
    private readonly client: KubeClient,
    private readonly deterministic: boolean,
    private readonly log: (line: string) => void,
    /** events.k8s.io/v1 is served (else the scheduler falls back to core/v1, as the client-go adapter does). */
    readonly eventsV1Served: boolean,
    /** false: nothing is written (SimulationOptions.events). */
    private readonly enabled = true,
  ) {}

  recorder(source: EventSource): CoreEventRecorder {
    return new CoreEventRecorder(this, source);
  }

  /**
   * The new-API recorder; reportingInstance is `<controller>-<hostname>` as events.NewRecorder sets
   * it. Without events.k8s.io/v1, a core recorder with source `<controller>` (the adapter's fallback).
   */
  eventsRecorder(reportingController: string, hostname: string): ActionEventRecorder {
    if (this.eventsV1Served) return new EventsV1Recorder(this, reportingController, `${reportingController}-${hostname}`);
    const core = this.recorder({ component: reportingController });
    return { event: (regarding, type, reason, _action, note) => core.event(regarding, type, reason, note) };
  }

  /** Runs `write` after every write queued before it; errors are logged and dropped. */
  enqueue(write: () => Promise<void>): void {
    if (this.stopped || !this.enabled) return;
    this.pending++;
    this.queue = this.queue
      .then(() => (this.stopped ? undefined : write()))
      .catch((err: unknown) => this.log(`events: ${(err as Error).message}`))
      .finally(() => {
        this.pending--;
      });
  }

  /** Resolves once every queued write has been sent. */
  async flush(): Promise<void> {
    while (this.pending > 0) await this.queue;
  }

  stop(): void {
    this.stopped = true;
  }

  /**
   * The `%x` of `t.UnixNano()` in an event name: the clock (strictly increasing, so two events about
   * one object in the same nanosecond still get two names), or in deterministic mode a digest of
   * what the event says and how often it was said, shaped like a current UnixNano.
   */
  nameSuffix(seed: string): string {
    if (this.deterministic) {
      const n = (this.occurrences.get(seed) ?? 0) + 1;
      this.occurrences.set(seed, n);
      return '18' + createHash('sha256').update(`${seed}#${n}`).digest('hex').slice(0, 14);
    }
    let nanos = BigInt(Date.now()) * 1_000_000n + (process.hrtime.bigint() % 1_000_000n);
    if (nanos <= this.lastNanos) nanos = this.lastNanos + 1n;
    this.lastNanos = nanos;
    return nanos.toString(16);
  }

  /** metav1.MicroTime: RFC 3339 with six fractional digits. */
  microTime(): string {
    return new Date().toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');
  }

  async send(method: 'POST' | 'PATCH', group: string, namespace: string, name: string | undefined, body: unknown): Promise<{ status: number; body: unknown }> {
    this.writes++;
    const path = formatApiPath({ group, version: 'v1', resource: 'events', namespace, ...(name !== undefined ? { name } : {}) });
    const res = await this.client.request(method, path, { body, ...(method === 'PATCH' ? { contentType: 'application/strategic-merge-patch+json' } : {}) });
    if (res.status >= 300 && res.status !== 404) {
      const reason = isObject(res.body) && typeof res.body.message === 'string' ? res.body.message : '';
      this.log(`events: ${method} ${path}: HTTP ${res.status} ${reason} (dropped)`);
    }
    return res;
  }
}

interface EventLog {
  count: number;
  firstTimestamp: string;
  name: string;
  resourceVersion: string;
}

interface CoreEvent extends KubeObject {
  involvedObject: ObjectReference;
  reason: string;
  message: string;
  source: EventSource;
  firstTimestamp: string;
  lastTimestamp: string;
  count: number;
  type: EventType;
  reportingComponent: string;
  reportingInstance: string;
}

/** record.EventRecorder with its EventCorrelator (aggregation, dedup, spam filter). */
export class CoreEventRecorder {
  private readonly aggregates = new Lru<{ localKeys: Set<string>; last: number }>();
  private readonly observed = new Lru<EventLog>();
  private readonly spam = new Lru<{ tokens: number; last: number }>();

  constructor(
    private readonly events: SimEvents,
    private readonly source: EventSource,
  ) {}

  /** recorder.Event(object, type, reason, message); `fieldPath` names a container (`spec.containers{name}`). */
  event(obj: KubeObject, type: EventType, reason: string, message: string, fieldPath?: string): void {
    const ref = referenceTo(obj, fieldPath);
    this.events.enqueue(() => this.record(ref, type, reason, message));
  }

  private makeEvent(ref: ObjectReference, type: EventType, reason: string, message: string): CoreEvent {
    const t = now();
    const source: EventSource = { component: this.source.component, ...(this.source.host ? { host: this.source.host } : {}) };
    return {
      apiVersion: 'v1',
      kind: 'Event',
      metadata: {
        name: `${ref.name}.${this.events.nameSuffix([ref.namespace, ref.name, ref.fieldPath, type, reason, message].join('/'))}`,
        namespace: ref.namespace || 'default',
      },
      involvedObject: ref,
      reason,
      message,
      source,
      firstTimestamp: t,
      lastTimestamp: t,
      count: 1,
      type,
      reportingComponent: this.source.component,
      reportingInstance: this.source.host ?? '',
    };
  }

  private async record(ref: ObjectReference, type: EventType, reason: string, message: string): Promise<void> {
    const fresh = this.makeEvent(ref, type, reason, message);
    // EventCorrelate: aggregate, then observe (dedup), then the spam filter.
    const [aggregated, cacheKey] = this.aggregate(fresh);
    const [event, patch] = this.observe(aggregated, cacheKey);
    if (this.filtered(event)) return;
    const ns = event.metadata!.namespace!;
    let res: { status: number; body: unknown } | undefined;
    if (patch) res = await this.events.send('PATCH', '', ns, event.metadata!.name!, patch);
    if (!patch || res?.status === 404) {
      const body = { ...event, metadata: { ...event.metadata } };
      delete body.metadata.resourceVersion;
      res = await this.events.send('POST', '', ns, undefined, body);
    }
    if (res && res.status < 300 && isObject(res.body)) this.updateState(res.body as CoreEvent);
  }

  private static eventKey(e: CoreEvent): string {
    const r = e.involvedObject;
    return [
      e.source.component,
      e.source.host ?? '',
      r.kind,
      r.namespace ?? '',
      r.name,
      r.fieldPath ?? '',
      r.uid ?? '',
      r.apiVersion,
      e.type,
      e.reason,
      e.message,
    ].join('');
  }

  /** EventAggregator with EventAggregatorByReasonFunc / EventAggregatorByReasonMessageFunc. */
  private aggregate(e: CoreEvent): [CoreEvent, string] {
    const r = e.involvedObject;
    const aggregateKey = [
      e.source.component,
      e.source.host ?? '',
      r.kind,
      r.namespace ?? '',
      r.name,
      r.uid ?? '',
      r.apiVersion,
      e.type,
      e.reason,
      e.reportingComponent,
      e.reportingInstance,
    ].join('');
    const t = Date.now();
    let record = this.aggregates.get(aggregateKey);
    if (!record || t - record.last > AGGREGATE_INTERVAL_MS) record = { localKeys: new Set(), last: t };
    record.localKeys.add(e.message);
    record.last = t;
    this.aggregates.set(aggregateKey, record);
    if (record.localKeys.size < AGGREGATE_MAX_EVENTS) return [e, CoreEventRecorder.eventKey(e)];
    record.localKeys.delete(record.localKeys.values().next().value!);
    const message = `(combined from similar events): ${e.message}`;
    const combined: CoreEvent = {
      ...e,
      metadata: {
        name: `${r.name}.${this.events.nameSuffix([r.namespace, r.name, e.type, e.reason, 'combined'].join('/'))}`,
        namespace: e.metadata!.namespace!,
      },
      message,
      count: 1,
      firstTimestamp: e.lastTimestamp,
    };
    // The aggregate event carries no reportingComponent/Instance (eventCopy in EventAggregate).
    combined.reportingComponent = '';
    combined.reportingInstance = '';
    return [combined, aggregateKey];
  }

  /** eventLogger.eventObserve: a cache hit turns the event into a patch of the first one. */
  private observe(e: CoreEvent, key: string): [CoreEvent, Record<string, unknown> | undefined] {
    const last = this.observed.get(key);
    let event = e;
    let patch: Record<string, unknown> | undefined;
    if (last && last.count > 0) {
      event = {
        ...e,
        metadata: { ...e.metadata, name: last.name, resourceVersion: last.resourceVersion },
        firstTimestamp: last.firstTimestamp,
        count: last.count + 1,
      };
      // CreateTwoWayMergePatch against a copy with count 0, lastTimestamp 0 and no message.
      patch = { count: event.count, lastTimestamp: event.lastTimestamp, message: event.message };
    }
    this.observed.set(key, {
      count: event.count,
      firstTimestamp: event.firstTimestamp,
      name: event.metadata!.name!,
      resourceVersion: event.metadata?.resourceVersion ?? '',
    });
    return [event, patch];
  }

  /** EventSourceObjectSpamFilter: a token bucket per source and object. */
  private filtered(e: CoreEvent): boolean {
    const r = e.involvedObject;
    const key = [e.source.component, e.source.host ?? '', r.kind, r.namespace ?? '', r.name, r.uid ?? '', r.apiVersion].join('');
    const t = Date.now();
    const bucket = this.spam.get(key) ?? { tokens: SPAM_BURST, last: t };
    bucket.tokens = Math.min(SPAM_BURST, bucket.tokens + ((t - bucket.last) / 1000) * SPAM_QPS);
    bucket.last = t;
    const allowed = bucket.tokens >= 1;
    if (allowed) bucket.tokens -= 1;
    this.spam.set(key, bucket);
    return !allowed;
  }

  /** EventCorrelator.UpdateState: the server's name and resourceVersion for the next patch. */
  private updateState(written: CoreEvent): void {
    if (!isObject(written.involvedObject) || !isObject(written.source)) return;
    this.observed.set(CoreEventRecorder.eventKey(written), {
      count: typeof written.count === 'number' ? written.count : 1,
      firstTimestamp: written.firstTimestamp,
      name: written.metadata?.name ?? '',
      resourceVersion: written.metadata?.resourceVersion ?? '',
    });
  }
}

/** What events.EventRecorder offers: Eventf(regarding, nil, type, reason, action, note). */
export interface ActionEventRecorder {
  event(regarding: KubeObject, type: EventType, reason: string, action: string, note: string): void;
}

interface V1Event extends KubeObject {
  eventTime: string;
  series?: { count: number; lastObservedTime: string };
  reportingController: string;
  reportingInstance: string;
  action: string;
  reason: string;
  regarding: ObjectReference;
  note: string;
  type: EventType;
}

/** events.EventRecorder (events.k8s.io/v1) with the broadcaster's isomorphic-event cache. */
export class EventsV1Recorder implements ActionEventRecorder {
  private readonly cache = new Map<string, V1Event>();

  constructor(
    private readonly events: SimEvents,
    private readonly reportingController: string,
    private readonly reportingInstance: string,
  ) {}

  /** recorder.Eventf(regarding, nil, type, reason, action, note). */
  event(regarding: KubeObject, type: EventType, reason: string, action: string, note: string): void {
    const ref = referenceTo(regarding);
    const key = JSON.stringify([type, action, reason, this.reportingController, this.reportingInstance, ref]);
    const cached = this.cache.get(key);
    if (cached) {
      // recordToSink: the first repeat starts a series (a PATCH), later ones are only counted.
      const first = cached.series === undefined;
      cached.series = { count: (cached.series?.count ?? 1) + 1, lastObservedTime: this.events.microTime() };
      if (first) {
        const event = structuredClone(cached);
        this.events.enqueue(() => this.write(event));
      }
      return;
    }
    const event: V1Event = {
      apiVersion: 'events.k8s.io/v1',
      kind: 'Event',
      metadata: {
        name: `${ref.name}.${this.events.nameSuffix([ref.namespace, ref.name, type, reason, action, note].join('/'))}`,
        namespace: ref.namespace || 'default',
      },
      eventTime: this.events.microTime(),
      reportingController: this.reportingController,
      reportingInstance: this.reportingInstance,
      action,
      reason,
      regarding: ref,
      note,
      type,
    };
    this.cache.set(key, event);
    const copy = structuredClone(event);
    this.events.enqueue(() => this.write(copy));
  }

  /** recordEvent: a series is patched (created if gone), a singleton created. */
  private async write(event: V1Event): Promise<void> {
    const ns = event.metadata!.namespace!;
    if (event.series) {
      const res = await this.events.send('PATCH', 'events.k8s.io', ns, event.metadata!.name!, { series: event.series });
      if (res.status !== 404) return;
    }
    await this.events.send('POST', 'events.k8s.io', ns, undefined, event);
  }
}
