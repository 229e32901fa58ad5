/**
 * Hand-built merged traces for planner tests. The builder keeps the current state of every object
 * and a clock; each call appends what the proxy and the cluster recorder would have recorded:
 * - `write`: the controller's request, the cluster change it caused, the answer (and, with
 *   `deliver`, the watch event echoing the change back to the controller);
 * - `external`: a change made by someone else (the workload), optionally delivered to the controller;
 * - `deliver`: the watch event of an object's latest change; `read`: a GET of an object's latest state;
 * - `watch`: the controller's watch request for a kind (traces without any say nothing of what it watches);
 * - `episode`: serialized-delivery markers;
 * - `wait`: time passing (quiet gaps end bursts);
 * - `stepStart` / `stepDone`: the workload's steps, as the workload runner records them;
 * - `appCall`: a call of the controller to a stub application (the cluster trace's app-call).
 */
import { parseKey, type KubeObject } from '../../src/model/object-key.js';
import type { RequestVerb } from '../../src/model/api-path.js';
import type { ResourceRef, TraceEvent, WorkloadStepAction } from '../../src/model/trace.js';

export interface ChangeOptions {
  /** Dotted field paths to set (undefined removes the field). Default for updates: a fresh `metadata.labels.rev`. */
  set?: Record<string, unknown>;
  /** Deliver the change to the controller as a watch event. */
  deliver?: boolean;
  /** Owner (object key) written into ownerReferences on creation. */
  owner?: string;
  /** Create with metadata.generateName (the key's name must start with it). */
  generateName?: string;
}

export interface WriteOptions extends ChangeOptions {
  subresource?: string;
  status?: number;
  /** What the cluster recorder sees; `none` for a no-op or failed write. Defaults from the verb. */
  change?: 'ADDED' | 'MODIFIED' | 'DELETED' | 'none';
  query?: Record<string, string>;
  /** Omit the request key (a generateName create). */
  unnamed?: boolean;
  body?: unknown;
  incarnation?: number;
  /** Optimistic concurrency: the body carries the resourceVersion of the object's latest state. */
  basedOnLatest?: boolean;
}

export class TraceBuilder {
  readonly events: TraceEvent[];
  private seq = 1;
  private ts = 1_000_000;
  private nextId = 1;
  private nextRv = 100;
  private revision = 0;
  private episodes = 0;
  private readonly objects = new Map<string, KubeObject>();
  private readonly rvs = new Map<string, string>();
  private readonly lastChange = new Map<string, 'ADDED' | 'MODIFIED' | 'DELETED'>();

  /** `setup`: objects that exist before the controller starts (key -> fields to set). */
  constructor(options: { clusterTrace?: boolean; setup?: Record<string, Record<string, unknown>> } = {}) {
    this.events = [{ type: 'header', seq: 0, ts: 0, format: 'kperturb.dev/trace/v1', source: 'controller' }];
    if (options.clusterTrace ?? true) this.events.push({ type: 'header', seq: 0, ts: 0, format: 'kperturb.dev/trace/v1', source: 'cluster' });
    for (const [key, set] of Object.entries(options.setup ?? {})) this.change('ADDED', key, { set });
    this.push({ type: 'controller', action: 'start', incarnation: 1 });
  }

  /** Time passes with nothing happening. */
  wait(ms: number): this {
    this.ts += ms;
    return this;
  }

  write(verb: RequestVerb, key: string, opts: WriteOptions = {}): this {
    const status = opts.status ?? (verb === 'create' ? 201 : 200);
    const ok = status >= 200 && status < 300;
    const dryRun = opts.query?.dryRun !== undefined;
    const defaultChange = verb === 'create' ? 'ADDED' : verb === 'delete' ? 'DELETED' : verb === 'update' || verb === 'patch' ? 'MODIFIED' : 'none';
    const change = !ok || dryRun ? 'none' : (opts.change ?? defaultChange);
    const id = this.nextId++;
    const parts = parseKey(key)!;
    let body = opts.body ?? ((verb === 'patch' || opts.basedOnLatest) && opts.set ? bodyOf(opts.set) : undefined);
    if (opts.basedOnLatest) body = { ...(body as Record<string, unknown>), metadata: { name: parts.name, resourceVersion: this.rvs.get(key) } };
    this.push({
      type: 'request',
      id,
      incarnation: opts.incarnation ?? 1,
      method: { create: 'POST', update: 'PUT', patch: 'PATCH', delete: 'DELETE' }[verb as string] ?? 'GET',
      path: `/fake/${key}`,
      query: opts.query ?? {},
      verb,
      resource: resourceOf(parts.kind, opts.subresource),
      ...(opts.unnamed ? {} : { key }),
      ...(body !== undefined ? { body } : {}),
    });
    if (change !== 'none') this.change(change, key, opts);
    const current = this.objects.get(key);
    const rv = this.rvs.get(key) ?? '1';
    this.push({
      type: 'response',
      id,
      status,
      object: ok
        ? {
            ...(current ?? objectOf(parts.kind, parts.namespace, parts.name)),
            metadata: { ...(current?.metadata ?? { name: parts.name }), resourceVersion: rv },
          }
        : { kind: 'Status', apiVersion: 'v1' },
      durationMs: 1,
    });
    if (opts.deliver && change !== 'none') this.deliver(key);
    return this;
  }

  /** The controller reads `key` (a GET answered with its latest state). */
  read(key: string): this {
    const id = this.nextId++;
    const parts = parseKey(key)!;
    this.push({
      type: 'request',
      id,
      incarnation: 1,
      method: 'GET',
      path: `/fake/${key}`,
      query: {},
      verb: 'get',
      resource: resourceOf(parts.kind, undefined),
      key,
    });
    const current = this.objects.get(key);
    this.push({
      type: 'response',
      id,
      status: current ? 200 : 404,
      object: current ? structuredClone(current) : { kind: 'Status', apiVersion: 'v1' },
      durationMs: 1,
    });
    return this;
  }

  /** The controller lists and watches a kind (an informer starting): its watch request. */
  watch(kind: string): this {
    this.push({
      type: 'request',
      id: this.nextId++,
      incarnation: 1,
      method: 'GET',
      path: `/fake/${kind}`,
      query: { watch: 'true' },
      verb: 'watch',
      resource: resourceOf(kind, undefined),
    });
    return this;
  }

  /** A change made by someone other than the controller (e.g. the workload). */
  external(eventType: 'ADDED' | 'MODIFIED' | 'DELETED', key: string, opts: ChangeOptions = {}): this {
    this.change(eventType, key, opts);
    if (opts.deliver) this.deliver(key);
    return this;
  }

  /** The controller is shown the latest change of `key` (a watch event). */
  deliver(key: string): this {
    const obj = this.objects.get(key) ?? this.deleted.get(key)!;
    this.push({ type: 'watch-event', id: 9000, eventType: this.lastChange.get(key)!, key, resourceVersion: this.rvs.get(key)!, object: obj });
    return this;
  }

  /** Serialized delivery: the previous episode ends (quiet), a new one starts for the last watch event. */
  episode(opts: { quiet?: boolean; retrying?: boolean } = {}): this {
    const lastWatch = [...this.events].reverse().find((e) => e.type === 'watch-event');
    const retrying = opts.retrying ? { retrying: true } : {};
    if (this.episodes > 0) this.push({ type: 'episode', phase: 'end', index: this.episodes, id: 9000, quiet: opts.quiet ?? true, ...retrying });
    this.episodes++;
    this.push({ type: 'episode', phase: 'start', index: this.episodes, id: 9000, ...(lastWatch ? { watchEventSeq: lastWatch.seq } : {}) });
    return this;
  }

  /** A workload step begins (what it does, to which objects). */
  stepStart(index: number, action: WorkloadStepAction, keys: string[]): this {
    this.push({ type: 'workload-step', index, description: `step ${index}`, phase: 'start', action, keys });
    return this;
  }

  /**
   * A workload step ends. A write step records the resourceVersion its answer carried for each key in
   * `wrote` (their latest); a wait step how many times it polled and, with `metBy`, the
   * resourceVersion of that object's latest change, which met it.
   */
  stepDone(index: number, opts: { wrote?: string[]; polls?: number; metBy?: string } = {}): this {
    this.push({
      type: 'workload-step',
      index,
      description: `step ${index}`,
      phase: 'done',
      ...(opts.wrote ? { wrote: opts.wrote.map((key) => ({ key, resourceVersion: this.rvs.get(key)! })) } : {}),
      ...(opts.polls !== undefined ? { polls: opts.polls } : {}),
      ...(opts.metBy ? { metAt: this.rvs.get(opts.metBy)! } : {}),
    });
    return this;
  }

  /** The controller process restarts. */
  restart(incarnation: number): this {
    this.push({ type: 'controller', action: 'start', incarnation });
    return this;
  }

  private readonly deleted = new Map<string, KubeObject>();
  private readonly lives = new Map<string, number>();

  /** The uid of the object's current (or last) life: `uid-<name>`, then `uid-<name>-2`, ... */
  private uidOf(key: string): string {
    const life = this.lives.get(key) ?? 1;
    return `uid-${parseKey(key)!.name}${life > 1 ? `-${life}` : ''}`;
  }

  private change(eventType: 'ADDED' | 'MODIFIED' | 'DELETED', key: string, opts: ChangeOptions): void {
    const parts = parseKey(key)!;
    const rv = String(this.nextRv++);
    this.revision++;
    let obj: KubeObject;
    if (eventType === 'ADDED') {
      obj = objectOf(parts.kind, parts.namespace, parts.name);
      if (opts.generateName) obj.metadata!.generateName = opts.generateName;
      if (opts.owner) {
        const o = parseKey(opts.owner)!;
        obj.metadata!.ownerReferences = [{ apiVersion: 'v1', kind: o.kind, name: o.name, uid: this.uidOf(opts.owner), controller: true }];
      }
    } else {
      obj = structuredClone(this.objects.get(key) ?? objectOf(parts.kind, parts.namespace, parts.name));
    }
    const set = opts.set ?? (eventType === 'MODIFIED' ? { 'metadata.labels.rev': String(this.revision) } : {});
    for (const [path, value] of Object.entries(set)) setPath(obj as Record<string, unknown>, path, value);
    obj.metadata!.resourceVersion = rv;
    // Each life of an object has its own uid, as the API server gives: a re-created object is another one.
    if (eventType === 'ADDED') this.lives.set(key, (this.lives.get(key) ?? 0) + 1);
    obj.metadata!.uid = this.uidOf(key);
    this.rvs.set(key, rv);
    this.lastChange.set(key, eventType);
    if (eventType === 'DELETED') {
      this.objects.delete(key);
      this.deleted.set(key, obj);
    } else {
      this.objects.set(key, obj);
    }
    this.push({ type: 'cluster-change', eventType, key, resourceVersion: rv, object: structuredClone(obj) });
  }

  /** A call of the controller to a stub application, as the stub records it in the cluster trace. */
  appCall(application: string, key: string, operation: string, path: string, result: number | string = 200): this {
    this.push({ type: 'app-call', application, protocol: 'http', key, address: '127.0.1.2:8080', operation, path, result });
    return this;
  }

  private push(e: Record<string, unknown>): void {
    this.events.push({ seq: this.seq++, ts: this.ts++, ...e } as unknown as TraceEvent);
  }
}

function setPath(obj: Record<string, unknown>, path: string, value: unknown): void {
  const segs = path.split('.');
  let cur = obj;
  for (const s of segs.slice(0, -1)) {
    if (typeof cur[s] !== 'object' || cur[s] === null) cur[s] = {};
    cur = cur[s] as Record<string, unknown>;
  }
  const last = segs[segs.length - 1]!;
  if (value === undefined) delete cur[last];
  else cur[last] = structuredClone(value);
}

function bodyOf(set: Record<string, unknown>): Record<string, unknown> {
  const body: Record<string, unknown> = {};
  for (const [path, value] of Object.entries(set)) setPath(body, path, value === undefined ? null : value);
  return body;
}

function resourceOf(kind: string, subresource: string | undefined): ResourceRef {
  const ref: ResourceRef =
    kind === 'Lease'
      ? { group: 'coordination.k8s.io', version: 'v1', resource: 'leases', kind }
      : kind === 'Database'
        ? { group: 'example.com', version: 'v1', resource: 'databases', kind }
        : { group: '', version: 'v1', resource: `${kind.toLowerCase()}s`, kind };
  if (subresource) ref.subresource = subresource;
  return ref;
}

function objectOf(kind: string, namespace: string | undefined, name: string): KubeObject {
  return { kind, apiVersion: 'v1', metadata: { name, ...(namespace ? { namespace } : {}) }, spec: {}, status: {} };
}
