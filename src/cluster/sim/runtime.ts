/**
 * What every simulated controller shares: the API client and its informers, the work queues that run
 * reconciles (client-go's workqueue semantics: a key is queued once, never processed by two workers at
 * a time, re-queued if it changed while being processed), delayed re-queues, and write helpers.
 *
 * Two scheduling modes:
 * - normal: each controller has one worker; controllers run concurrently, keys in FIFO order;
 * - deterministic: one worker for the whole simulation; among the ready keys it always picks the first
 *   controller (in start order) and the smallest key, so that the same cluster history produces the
 *   same writes in the same order. Generated names are derived from the owner and a counter.
 */
import type { PodReadiness } from '../../model/pod-readiness.js';
import { formatApiPath } from '../../model/api-path.js';
import { isObject, type KubeObject } from '../../model/object-key.js';
import { KubeApiError, type KubeClient } from '../../kube/client.js';
import type { ResourceInfo } from '../../kube/discovery.js';
import type { InformerFactory } from '../../kube/informer.js';
import type { SimEvents } from './events.js';
import { shortHash } from './objects.js';
import type { ClusterNetwork } from '../network.js';
import type { NodeOutages } from './node-lifecycle.js';

export interface SimTiming {
  podScheduleDelayMs: number;
  podStartDelayMs: number;
  podStopDelayMs: number;
  podRunToCompletionMs: number;
  volumeBindDelayMs: number;
  nodeHeartbeatMs: number;
  /** The kubelet's first restart back-off of a crashed container (doubled per crash, at most 30 times this: 10 s and 300 s on a kubelet). */
  crashBackOffMs: number;
  /** When a started pod is ready (SimulationOptions.podReadiness). */
  podReadiness: PodReadiness;
}

export interface SimContext {
  readonly client: KubeClient;
  readonly informers: InformerFactory;
  readonly api: SimApi;
  /** Event recorders (see events.ts). */
  readonly events: SimEvents;
  readonly timing: SimTiming;
  readonly nodes: readonly string[];
  /** Pod IPs and pod CIDRs. */
  readonly network: ClusterNetwork;
  readonly deterministic: boolean;
  /** false: provision PVs only, binding and protection are kube-controller-manager's (a real cluster). */
  readonly bindVolumes: boolean;
  /** The simulated nodes out now (node-not-ready plans): their kubelets stop, the node lifecycle marks them. */
  readonly outages: NodeOutages;
  log(line: string): void;
  /** A pod or object name for `generateName`: left to the server, or derived from a counter in deterministic mode. */
  nameFor(prefix: string): { name?: string; generateName?: string };
}

export type Reconcile = (key: string) => Promise<void>;

/** Re-queues after errors back off from 5 ms to 1 s; a key failing this many times in a row is dropped. */
const MAX_RETRIES = 15;

interface Queue {
  name: string;
  order: number;
  reconcile: Reconcile;
  ready: string[];
  readySet: Set<string>;
  processing: Set<string>;
  dirty: Set<string>;
  failures: Map<string, number>;
  running: boolean;
}

export class WorkRunner {
  private readonly queues: Queue[] = [];
  private readonly timers = new Set<NodeJS.Timeout>();
  private stopped = false;
  private globalRunning = false;
  private pumpScheduled = false;
  private readonly idleWaiters = new Set<() => void>();
  /** Deterministic mode: awaited after each reconcile, so that its Event writes land before the next one's writes. */
  private afterReconcile: (() => Promise<void>) | undefined;

  /** `priority`: queue names in the order the deterministic worker serves them (unknown names last). */
  constructor(
    private readonly deterministic: boolean,
    private readonly log: (line: string) => void,
    private readonly priority: readonly string[] = [],
  ) {}

  setAfterReconcile(hook: () => Promise<void>): void {
    this.afterReconcile = hook;
  }

  register(name: string, reconcile: Reconcile): (key: string, delayMs?: number) => void {
    const rank = this.priority.indexOf(name);
    const queue: Queue = {
      name,
      order: rank < 0 ? this.priority.length : rank,
      reconcile,
      ready: [],
      readySet: new Set(),
      processing: new Set(),
      dirty: new Set(),
      failures: new Map(),
      running: false,
    };
    this.queues.push(queue);
    this.queues.sort((a, b) => a.order - b.order || (a.name < b.name ? -1 : 1));
    return (key, delayMs = 0) => this.add(queue, key, delayMs);
  }

  private add(queue: Queue, key: string, delayMs: number): void {
    if (this.stopped) return;
    if (delayMs > 0) {
      const timer = setTimeout(() => {
        this.timers.delete(timer);
        this.add(queue, key, 0);
      }, delayMs);
      this.timers.add(timer);
      return;
    }
    if (queue.processing.has(key)) {
      queue.dirty.add(key);
      return;
    }
    if (queue.readySet.has(key)) return;
    queue.readySet.add(key);
    queue.ready.push(key);
    this.schedulePump(queue);
  }

  /** Pumps start on a later macrotask so that events arriving together are ordered together. */
  private schedulePump(queue: Queue): void {
    if (this.deterministic) {
      if (this.pumpScheduled || this.globalRunning) return;
      this.pumpScheduled = true;
      setImmediate(() => {
        this.pumpScheduled = false;
        void this.pumpAll();
      });
      return;
    }
    if (queue.running) return;
    queue.running = true;
    setImmediate(() => void this.pump(queue));
  }

  private take(queue: Queue, index: number): string {
    const [key] = queue.ready.splice(index, 1);
    queue.readySet.delete(key!);
    queue.processing.add(key!);
    return key!;
  }

  private async pump(queue: Queue): Promise<void> {
    while (!this.stopped && queue.ready.length > 0) {
      await this.process(queue, this.take(queue, 0));
    }
    queue.running = false;
    this.notifyIdle();
  }

  private async pumpAll(): Promise<void> {
    if (this.globalRunning) return;
    this.globalRunning = true;
    while (!this.stopped) {
      const queue = this.queues.find((q) => q.ready.length > 0);
      if (!queue) break;
      let best = 0;
      for (let i = 1; i < queue.ready.length; i++) if (queue.ready[i]! < queue.ready[best]!) best = i;
      await this.process(queue, this.take(queue, best));
    }
    this.globalRunning = false;
    this.notifyIdle();
  }

  private async process(queue: Queue, key: string): Promise<void> {
    let retryIn = -1;
    try {
      await queue.reconcile(key);
      queue.failures.delete(key);
    } catch (err) {
      const failures = (queue.failures.get(key) ?? 0) + 1;
      if (failures > MAX_RETRIES) {
        queue.failures.delete(key);
        this.log(`${queue.name}: dropping ${key} after ${MAX_RETRIES} retries: ${(err as Error).message}`);
      } else {
        queue.failures.set(key, failures);
        retryIn = Math.min(5 * 2 ** (failures - 1), 1000);
        if (!(err instanceof KubeApiError && err.status === 409)) this.log(`${queue.name}: ${key}: ${(err as Error).message} (retry in ${retryIn} ms)`);
      }
    }
    if (this.deterministic && this.afterReconcile) await this.afterReconcile();
    queue.processing.delete(key);
    if (queue.dirty.delete(key)) this.add(queue, key, 0);
    if (retryIn >= 0) this.add(queue, key, retryIn);
  }

  /** True when no key is queued or being processed (timers may still be pending). */
  idle(): boolean {
    return this.queues.every((q) => q.ready.length === 0 && q.processing.size === 0);
  }

  private notifyIdle(): void {
    if (!this.idle()) return;
    for (const waiter of [...this.idleWaiters]) waiter();
  }

  stop(): void {
    this.stopped = true;
    for (const timer of this.timers) clearTimeout(timer);
    this.timers.clear();
    for (const waiter of [...this.idleWaiters]) waiter();
  }
}

export interface DeleteOptions {
  propagationPolicy?: 'Background' | 'Foreground' | 'Orphan';
  gracePeriodSeconds?: number;
  preconditions?: { uid?: string | undefined; resourceVersion?: string | undefined };
}

export type PatchKind = 'merge' | 'strategic' | 'json';
const PATCH_CONTENT_TYPES: Record<PatchKind, string> = {
  merge: 'application/merge-patch+json',
  strategic: 'application/strategic-merge-patch+json',
  json: 'application/json-patch+json',
};

export function apiVersionOf(info: ResourceInfo): string {
  return info.group ? `${info.group}/${info.version}` : info.version;
}

/** Writes through the API as any client would; failures throw `KubeApiError` (status 404, 409, ...). */
export class SimApi {
  constructor(private readonly client: KubeClient) {}

  path(info: ResourceInfo, namespace: string | undefined, name?: string, subresource?: string): string {
    return formatApiPath({
      group: info.group,
      version: info.version,
      resource: info.resource,
      ...(info.namespaced && namespace ? { namespace } : {}),
      ...(name !== undefined ? { name } : {}),
      ...(subresource ? { subresource } : {}),
    });
  }

  private typed(info: ResourceInfo, obj: KubeObject): KubeObject {
    return { ...obj, apiVersion: apiVersionOf(info), kind: info.kind };
  }

  private async send(
    method: string,
    path: string,
    what: string,
    opts: { body?: unknown; contentType?: string; query?: Record<string, string> },
  ): Promise<KubeObject> {
    const res = await this.client.request(method, path, opts);
    if (res.status < 200 || res.status > 299) throw new KubeApiError(res.status, res.body, what);
    return res.body as KubeObject;
  }

  async get(info: ResourceInfo, namespace: string | undefined, name: string): Promise<KubeObject | undefined> {
    const res = await this.client.request('GET', this.path(info, namespace, name));
    if (res.status === 404) return undefined;
    if (res.status !== 200) throw new KubeApiError(res.status, res.body, `get ${info.kind} ${name}`);
    return this.typed(info, res.body as KubeObject);
  }

  async list(info: ResourceInfo, namespace: string | undefined, query: Record<string, string> = {}): Promise<KubeObject[]> {
    const res = await this.client.request('GET', this.path(info, namespace), { query });
    if (res.status === 404) return [];
    if (res.status !== 200 || !isObject(res.body)) throw new KubeApiError(res.status, res.body, `list ${info.resource}`);
    const items = Array.isArray(res.body.items) ? (res.body.items as KubeObject[]) : [];
    return items.map((i) => this.typed(info, i));
  }

  create(info: ResourceInfo, namespace: string | undefined, obj: KubeObject): Promise<KubeObject> {
    return this.send('POST', this.path(info, namespace), `create ${info.kind} ${obj.metadata?.name ?? obj.metadata?.generateName ?? ''}`, {
      body: this.typed(info, obj),
    });
  }

  /** PUT of the whole object (optimistic concurrency on metadata.resourceVersion). */
  update(info: ResourceInfo, obj: KubeObject, subresource?: string): Promise<KubeObject> {
    const name = obj.metadata?.name ?? '';
    return this.send('PUT', this.path(info, obj.metadata?.namespace, name, subresource), `update ${info.kind} ${name}${subresource ? '/' + subresource : ''}`, {
      body: this.typed(info, obj),
    });
  }

  patch(info: ResourceInfo, namespace: string | undefined, name: string, kind: PatchKind, patch: unknown, subresource?: string): Promise<KubeObject> {
    return this.send('PATCH', this.path(info, namespace, name, subresource), `patch ${info.kind} ${name}${subresource ? '/' + subresource : ''}`, {
      body: patch,
      contentType: PATCH_CONTENT_TYPES[kind],
    });
  }

  /** POST to a subresource (pods/binding, pods/eviction). */
  post(info: ResourceInfo, namespace: string | undefined, name: string, subresource: string, body: unknown): Promise<KubeObject> {
    return this.send('POST', this.path(info, namespace, name, subresource), `create ${info.kind} ${name}/${subresource}`, { body });
  }

  /** Deletes; resolves to the response body (the object when it lingers), undefined if it was already gone. */
  async delete(info: ResourceInfo, namespace: string | undefined, name: string, options: DeleteOptions = {}): Promise<KubeObject | undefined> {
    const body: Record<string, unknown> = { kind: 'DeleteOptions', apiVersion: 'v1' };
    if (options.propagationPolicy) body.propagationPolicy = options.propagationPolicy;
    if (options.gracePeriodSeconds !== undefined) body.gracePeriodSeconds = options.gracePeriodSeconds;
    if (options.preconditions) body.preconditions = options.preconditions;
    const query: Record<string, string> = {};
    if (options.propagationPolicy) query.propagationPolicy = options.propagationPolicy;
    if (options.gracePeriodSeconds !== undefined) query.gracePeriodSeconds = String(options.gracePeriodSeconds);
    const res = await this.client.request('DELETE', this.path(info, namespace, name), { body, query });
    if (res.status === 404) return undefined;
    if (res.status !== 200 && res.status !== 202) throw new KubeApiError(res.status, res.body, `delete ${info.kind} ${name}`);
    return res.body as KubeObject;
  }

  /** DELETE on a collection (namespace content); false when the resource refuses it (405). */
  async deleteCollection(info: ResourceInfo, namespace: string | undefined): Promise<boolean> {
    const res = await this.client.request('DELETE', this.path(info, namespace), { body: { kind: 'DeleteOptions', apiVersion: 'v1' } });
    if (res.status === 405 || res.status === 404) return false;
    if (res.status !== 200 && res.status !== 202) throw new KubeApiError(res.status, res.body, `deletecollection ${info.resource}`);
    return true;
  }
}

export function isStatus(err: unknown, ...codes: number[]): boolean {
  return err instanceof KubeApiError && codes.includes(err.status);
}

/** What Go's StatusError.Error() says: the Status's message (`Pod "p" is invalid: spec...: Invalid value: ...`). */
export function statusMessage(err: KubeApiError): string {
  return isObject(err.body) && typeof err.body.message === 'string' ? err.body.message : err.message;
}

/**
 * Deterministic names: `<prefix><5 chars>` from a per-prefix counter, retried on AlreadyExists by the
 * caller. generateName is kept beside the name, as the API server stores it for generated names.
 */
export class NameGenerator {
  private readonly counters = new Map<string, number>();
  constructor(private readonly deterministic: boolean) {}
  nameFor(prefix: string): { name?: string; generateName?: string } {
    if (!this.deterministic) return { generateName: prefix };
    const n = (this.counters.get(prefix) ?? 0) + 1;
    this.counters.set(prefix, n);
    return { name: prefix.slice(0, 58) + shortHash(`${prefix}#${n}`).slice(0, 5), generateName: prefix };
  }
}
