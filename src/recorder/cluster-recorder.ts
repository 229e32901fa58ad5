/**
 * The cluster recorder: kperturb's own list+watch of every resource the cluster serves, written as
 * `cluster-change` events. It is what the cluster did, independent of what the controller was shown,
 * and the source of the oracles' end state and update summaries.
 *
 * It is also the proxy's view of the cluster (`ClusterView`): listeners hear every change with the
 * object's previous state (change triggers match on that), the recorder keeps each resource's
 * history so the proxy can serve a list as the cluster was at an older resourceVersion (stale views),
 * and `caughtUp` lets the proxy wait until the recorder has seen a resourceVersion a controller watch
 * is about to deliver, so a fault triggered by a change is in place before the controller sees it.
 *
 * New kinds appear when CRDs are created: the recorder watches CRDs and starts watching each new
 * resource as soon as discovery serves it (list first, so objects created meanwhile are not missed).
 */
import { formatApiPath } from '../model/api-path.js';
import { isObject, type KubeObject, type ObjectKey } from '../model/object-key.js';
import type { TraceSink } from '../model/trace.js';
import { keyOfListed, type KubeClient, type WatchHandle } from '../kube/client.js';
import type { ResourceInfo } from '../kube/discovery.js';
import { sleep } from '../workload/runner.js';

/** Resources whose churn says nothing about the controller's correctness (recorded only on request: `ClusterRecorderOptions.events`). */
const EVENT_RESOURCES: ReadonlySet<string> = new Set(['events', 'events.events.k8s.io']);

export interface ClusterRecorderOptions {
  /**
   * Record Events too (core/v1 and events.k8s.io): what the cluster's controllers and the controller
   * under test said about objects. Explore's judge reads them (a StatefulSet's `FailedCreate` gives
   * the API server's refusal of a pod template the CR carried); the plan oracles do not compare them.
   */
  events?: boolean;
}

interface Watched {
  info: ResourceInfo;
  handle?: WatchHandle;
  lastResourceVersion: string;
  /** The resourceVersion of the first list: history is complete from here on. */
  historyFrom?: number;
  /** Every change seen, oldest first (bounded, see HISTORY_LIMIT). */
  history: HistoryEntry[];
  /** Waiters for `caughtUp`. */
  waiters: Array<{ rv: number; resolve: (ok: boolean) => void }>;
}

interface HistoryEntry {
  rv: number;
  key: ObjectKey;
  /** Undefined: deleted at `rv`. */
  object: KubeObject | undefined;
}

/** One change of the cluster as a listener hears it. */
export interface ObservedChange {
  type: 'ADDED' | 'MODIFIED' | 'DELETED';
  key: ObjectKey;
  /** The state before (undefined when the object did not exist). */
  prev: KubeObject | undefined;
  /** The state after (undefined when the object was deleted). */
  next: KubeObject | undefined;
  resourceVersion: string;
  /** Sequence number of the `cluster-change` event in the trace. */
  seq: number;
  group: string;
  resource: string;
}

/** What the proxy needs of the cluster recorder. */
export interface ClusterView {
  onChange(listener: (change: ObservedChange) => void): () => void;
  /**
   * Every change seen so far, oldest first (the recorder's initial lists included), so that a
   * trigger armed after the recorder started counts occurrences from the same start as the planner,
   * which reads the whole cluster trace.
   */
  pastChanges(): readonly ObservedChange[];
  /**
   * Objects of a resource as they were at `resourceVersion` (keys -> state), or undefined when the
   * recorder does not know (resource not watched, or history does not reach back that far).
   */
  stateAt(group: string, resource: string, resourceVersion: number): Map<ObjectKey, KubeObject> | undefined;
  /** Resolves true once the recorder has seen `resourceVersion` on the resource's watch (false after `timeoutMs` or if not watched). */
  caughtUp(group: string, resource: string, resourceVersion: number, timeoutMs: number): Promise<boolean>;
  /** The latest resourceVersion the recorder has seen on any resource. */
  latestResourceVersion(): number;
  /** The current state of an object as the recorder last saw it. */
  current(key: ObjectKey): KubeObject | undefined;
}

/** Changes kept per resource for stale views; the oldest are dropped beyond this. */
const HISTORY_LIMIT = 20_000;
/** Changes kept for triggers armed late (pastChanges). */
const PAST_CHANGES_LIMIT = 100_000;

function rvNumber(rv: string | undefined): number {
  const n = Number(rv);
  return Number.isFinite(n) ? n : 0;
}

export class ClusterRecorder implements ClusterView {
  private readonly watched = new Map<string, Watched>();
  private readonly listeners = new Set<(change: ObservedChange) => void>();
  private readonly past: ObservedChange[] = [];
  private latestRv = 0;
  /** Latest known state of every live object, with the RV the recorder last saw for it. */
  private readonly live = new Map<ObjectKey, KubeObject>();
  private stopped = false;
  private refreshing: Promise<void> | undefined;

  private constructor(
    private readonly client: KubeClient,
    private readonly trace: TraceSink,
    private readonly options: ClusterRecorderOptions,
  ) {}

  static async start(client: KubeClient, trace: TraceSink, options: ClusterRecorderOptions = {}): Promise<ClusterRecorder> {
    const rec = new ClusterRecorder(client, trace, options);
    await rec.refreshResources();
    return rec;
  }

  private id(info: Pick<ResourceInfo, 'group' | 'resource'>): string {
    return info.group ? `${info.resource}.${info.group}` : info.resource;
  }

  onChange(listener: (change: ObservedChange) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  pastChanges(): readonly ObservedChange[] {
    return this.past;
  }

  current(key: ObjectKey): KubeObject | undefined {
    return this.live.get(key);
  }

  latestResourceVersion(): number {
    return this.latestRv;
  }

  stateAt(group: string, resource: string, resourceVersion: number): Map<ObjectKey, KubeObject> | undefined {
    const entry = this.watched.get(this.id({ group, resource }));
    if (!entry || entry.historyFrom === undefined || resourceVersion < entry.historyFrom) return undefined;
    const first = entry.history[0];
    if (first && first.rv > entry.historyFrom && resourceVersion < first.rv && entry.history.length >= HISTORY_LIMIT) return undefined;
    const state = new Map<ObjectKey, KubeObject>();
    for (const h of entry.history) {
      if (h.rv > resourceVersion) continue;
      if (h.object) state.set(h.key, h.object);
      else state.delete(h.key);
    }
    return state;
  }

  caughtUp(group: string, resource: string, resourceVersion: number, timeoutMs: number): Promise<boolean> {
    const entry = this.watched.get(this.id({ group, resource }));
    if (!entry) return Promise.resolve(false);
    if (rvNumber(entry.lastResourceVersion) >= resourceVersion) return Promise.resolve(true);
    return new Promise((resolve) => {
      const waiter = { rv: resourceVersion, resolve: (ok: boolean) => resolve(ok) };
      entry.waiters.push(waiter);
      const timer = setTimeout(() => {
        entry.waiters = entry.waiters.filter((w) => w !== waiter);
        resolve(false);
      }, timeoutMs);
      timer.unref();
      waiter.resolve = (ok) => {
        clearTimeout(timer);
        resolve(ok);
      };
    });
  }

  private advance(entry: Watched, rv: string): void {
    entry.lastResourceVersion = rv;
    const n = rvNumber(rv);
    if (n > this.latestRv) this.latestRv = n;
    if (entry.waiters.length === 0) return;
    const ready = entry.waiters.filter((w) => w.rv <= n);
    if (ready.length === 0) return;
    entry.waiters = entry.waiters.filter((w) => w.rv > n);
    for (const w of ready) w.resolve(true);
  }

  /** Re-reads discovery and starts watching resources not yet watched. */
  refreshResources(): Promise<void> {
    const run = async () => {
      this.client.resources.invalidate();
      const all = await this.client.resources.all();
      for (const info of all) {
        const id = this.id(info);
        if (this.watched.has(id) || (!this.options.events && EVENT_RESOURCES.has(id))) continue;
        if (!info.verbs.includes('list') || !info.verbs.includes('watch')) continue;
        const entry: Watched = { info, lastResourceVersion: '', history: [], waiters: [] };
        this.watched.set(id, entry);
        await this.listAndWatch(entry);
      }
    };
    // Refreshes run one after another. A failed one is reported to its own caller only: the next
    // still runs, and the promise kept for snapshot() never rejects (nobody else awaits it, so a
    // rejection there would be an unhandled one that ends the process).
    const p = (this.refreshing ?? Promise.resolve()).then(run);
    const settled: Promise<void> = p
      .then(
        () => undefined,
        () => undefined,
      )
      .finally(() => {
        if (this.refreshing === settled) this.refreshing = undefined;
      });
    this.refreshing = settled;
    return p;
  }

  private async listAndWatch(entry: Watched): Promise<void> {
    if (this.stopped) return;
    const { items, resourceVersion } = await this.client.list(entry.info);
    const seen = new Set<ObjectKey>();
    for (const obj of items) {
      const key = keyOfListed(obj, entry.info);
      seen.add(key);
      this.observe(entry, 'ADDED', key, obj);
    }
    // After a relist, objects that vanished while we were not watching are deletions.
    for (const [key, obj] of this.live) {
      if (key.startsWith(entry.info.kind + '/') && !seen.has(key) && this.kindMatches(obj, entry.info)) {
        this.observe(entry, 'DELETED', key, { ...obj, metadata: { ...obj.metadata, resourceVersion } });
      }
    }
    if (entry.historyFrom === undefined) entry.historyFrom = rvNumber(resourceVersion);
    this.advance(entry, resourceVersion);
    this.watch(entry);
  }

  private kindMatches(obj: KubeObject, info: ResourceInfo): boolean {
    const apiVersion = info.group ? `${info.group}/${info.version}` : info.version;
    return obj.apiVersion === undefined || obj.apiVersion === apiVersion;
  }

  private watch(entry: Watched): void {
    if (this.stopped) return;
    const { info } = entry;
    const apiVersion = info.group ? `${info.group}/${info.version}` : info.version;
    const path = formatApiPath({ group: info.group, version: info.version, resource: info.resource });
    let expired = false;
    const handle = this.client.watch(path, { resourceVersion: entry.lastResourceVersion, allowWatchBookmarks: 'true' }, (type, object) => {
      if (type === 'ERROR') {
        if (isObject(object) && object.code === 410) expired = true;
        return;
      }
      const rv = object.metadata?.resourceVersion;
      if (type === 'ADDED' || type === 'MODIFIED' || type === 'DELETED') {
        const obj = { ...object, kind: object.kind ?? info.kind, apiVersion: object.apiVersion ?? apiVersion };
        this.observe(entry, type, keyOfListed(obj, info), obj);
      }
      // After the change is observed: whoever waits for this resourceVersion finds its triggers evaluated.
      if (rv) this.advance(entry, rv);
      if (type === 'BOOKMARK') return;
      if (info.resource === 'customresourcedefinitions' && info.group === 'apiextensions.k8s.io') {
        void this.refreshResources().catch(() => undefined);
      }
    });
    entry.handle = handle;
    void handle.done.then(async ({ status }) => {
      if (this.stopped) return;
      if (status === 404) {
        // The kind is no longer served (its CRD was deleted); a new CRD re-adds it through refreshResources.
        this.watched.delete(this.id(info));
        return;
      }
      await sleep(expired ? 0 : 50);
      if (expired) await this.listAndWatch(entry).catch(() => undefined);
      else this.watch(entry);
    });
  }

  private observe(entry: Watched, type: 'ADDED' | 'MODIFIED' | 'DELETED', key: ObjectKey, object: KubeObject): void {
    const rv = object.metadata?.resourceVersion ?? '';
    const known = this.live.get(key);
    if (type === 'ADDED' && known && known.metadata?.resourceVersion === rv) return; // relist of a known state
    if (type === 'DELETED') this.live.delete(key);
    else this.live.set(key, object);
    entry.history.push({ rv: rvNumber(rv), key, object: type === 'DELETED' ? undefined : object });
    if (entry.history.length > HISTORY_LIMIT) entry.history.splice(0, entry.history.length - HISTORY_LIMIT);
    // A trace writer may redact Secret values in place: the recorder's own copy (served to stale
    // views, matched by change triggers) must keep the real values.
    const traced = object.kind === 'Secret' ? structuredClone(object) : object;
    const seq = this.trace.append({ type: 'cluster-change', eventType: type, key, resourceVersion: rv, object: traced });
    const change: ObservedChange = {
      type,
      key,
      prev: known,
      next: type === 'DELETED' ? undefined : object,
      resourceVersion: rv,
      seq,
      group: entry.info.group,
      resource: entry.info.resource,
    };
    this.past.push(change);
    if (this.past.length > PAST_CHANGES_LIMIT) this.past.splice(0, this.past.length - PAST_CHANGES_LIMIT);
    for (const l of [...this.listeners]) {
      try {
        l(change);
      } catch {
        /* a listener's failure must not stop the recording */
      }
    }
  }

  /**
   * Lists every watched resource afresh and waits (bounded) until the recorder has seen each listed
   * object at the listed resourceVersion, so the cluster trace is complete up to the snapshot.
   */
  async snapshot(timeoutMs = 5000): Promise<Record<ObjectKey, KubeObject>> {
    await this.refreshing;
    const objects: Record<ObjectKey, KubeObject> = {};
    for (const entry of this.watched.values()) {
      let listed;
      try {
        listed = await this.client.list(entry.info);
      } catch {
        continue; // the kind went away (CRD deleted)
      }
      for (const obj of listed.items) objects[keyOfListed(obj, entry.info)] = obj;
    }
    const deadline = Date.now() + timeoutMs;
    while (Date.now() < deadline) {
      const lagging = Object.entries(objects).some(([key, obj]) => this.live.get(key)?.metadata?.resourceVersion !== obj.metadata?.resourceVersion);
      const phantom = [...this.live.keys()].some((key) => !(key in objects) && this.watched.size > 0 && this.isWatchedKey(key));
      if (!lagging && !phantom) break;
      await sleep(20);
    }
    return sortKeys(objects);
  }

  private isWatchedKey(key: ObjectKey): boolean {
    const kind = key.split('/')[0];
    for (const e of this.watched.values()) if (e.info.kind === kind) return true;
    return false;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    for (const entry of this.watched.values()) for (const w of entry.waiters.splice(0)) w.resolve(false);
    for (const entry of this.watched.values()) entry.handle?.stop();
    await Promise.all([...this.watched.values()].map((e) => e.handle?.done));
  }
}

function sortKeys<T>(record: Record<string, T>): Record<string, T> {
  const out: Record<string, T> = {};
  for (const k of Object.keys(record).sort()) out[k] = record[k]!;
  return out;
}
