/** Hand-built merged traces for planner tests: each call appends request, cluster change and response. */
import { parseKey } from '../../src/model/object-key.js';
import type { RequestVerb } from '../../src/model/api-path.js';
import type { ResourceRef, TraceEvent } from '../../src/model/trace.js';

export interface WriteOptions {
  subresource?: string;
  status?: number;
  /** What the cluster recorder sees; `none` for a no-op or failed write. Defaults from the verb. */
  change?: 'ADDED' | 'MODIFIED' | 'DELETED' | 'none';
  query?: Record<string, string>;
  /** Omit the request key (a generateName create). */
  unnamed?: boolean;
  body?: unknown;
}

export class TraceBuilder {
  readonly events: TraceEvent[];
  private seq = 1;
  private nextId = 1;
  private nextRv = 100;
  private readonly rvs = new Map<string, string>();

  constructor(options: { clusterTrace?: boolean } = {}) {
    this.events = [{ type: 'header', seq: 0, ts: 0, format: 'kperturb.dev/trace/v1', source: 'controller' }];
    if (options.clusterTrace ?? true) this.events.push({ type: 'header', seq: 0, ts: 0, format: 'kperturb.dev/trace/v1', source: 'cluster' });
  }

  write(verb: RequestVerb, key: string, opts: WriteOptions = {}): this {
    const status = opts.status ?? (verb === 'create' ? 201 : 200);
    const ok = status >= 200 && status < 300;
    const dryRun = opts.query?.dryRun !== undefined;
    const defaultChange = verb === 'create' ? 'ADDED' : verb === 'delete' ? 'DELETED' : verb === 'update' || verb === 'patch' ? 'MODIFIED' : 'none';
    const change = !ok || dryRun ? 'none' : (opts.change ?? defaultChange);
    const id = this.nextId++;
    const parts = parseKey(key)!;
    this.events.push({
      type: 'request',
      seq: this.seq++,
      ts: 0,
      id,
      incarnation: 1,
      method: { create: 'POST', update: 'PUT', patch: 'PATCH', delete: 'DELETE' }[verb as string] ?? 'GET',
      path: `/fake/${key}`,
      query: opts.query ?? {},
      verb,
      resource: resourceOf(parts.kind, opts.subresource),
      ...(opts.unnamed ? {} : { key }),
      ...(opts.body !== undefined ? { body: opts.body } : {}),
    });
    if (change !== 'none') {
      const rv = String(this.nextRv++);
      this.rvs.set(key, rv);
      this.events.push({
        type: 'cluster-change',
        seq: this.seq++,
        ts: 0,
        eventType: change,
        key,
        resourceVersion: rv,
        object: objectOf(parts.kind, parts.namespace, parts.name, rv),
      });
    }
    const rv = this.rvs.get(key) ?? '1';
    this.events.push({
      type: 'response',
      seq: this.seq++,
      ts: 0,
      id,
      status,
      object: ok ? objectOf(parts.kind, parts.namespace, parts.name, rv) : { kind: 'Status', apiVersion: 'v1' },
      durationMs: 1,
    });
    return this;
  }

  /** A change made by someone other than the controller (e.g. the workload). */
  external(eventType: 'ADDED' | 'MODIFIED' | 'DELETED', key: string): this {
    const parts = parseKey(key)!;
    const rv = String(this.nextRv++);
    this.rvs.set(key, rv);
    this.events.push({ type: 'cluster-change', seq: this.seq++, ts: 0, eventType, key, resourceVersion: rv, object: objectOf(parts.kind, parts.namespace, parts.name, rv) });
    return this;
  }
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

function objectOf(kind: string, namespace: string | undefined, name: string, rv: string) {
  return { kind, apiVersion: 'v1', metadata: { name, ...(namespace ? { namespace } : {}), resourceVersion: rv } };
}
