/**
 * A shared informer: list + watch of one resource in all namespaces, kept as a local cache, with
 * change handlers. It follows client-go's reflector where it matters for correctness: a consistent
 * list first, a watch from the list's resourceVersion, a re-watch from the last seen resourceVersion
 * when the stream ends, and a relist (with DELETED events for objects that vanished meanwhile) after
 * an in-stream 410 Expired. `InformerFactory` shares one informer per resource among its users.
 *
 *   const factory = new InformerFactory(client);
 *   const pods = await factory.forKind('Pod');
 *   pods.onChange((type, pod) => ...);
 *   await factory.stop();
 */
import { formatApiPath } from '../model/api-path.js';
import { isObject, type KubeObject } from '../model/object-key.js';
import type { KubeClient, WatchHandle } from './client.js';
import type { ResourceInfo } from './discovery.js';

export type ChangeType = 'ADDED' | 'MODIFIED' | 'DELETED';
/** `old` is the previously cached state (MODIFIED, DELETED). Objects are shared: never mutate them. */
export type ChangeHandler = (type: ChangeType, object: KubeObject, old: KubeObject | undefined) => void;

/** Consecutive failed (re)watches or relists after which an informer gives up (the server is gone). */
const MAX_CONSECUTIVE_FAILURES = 40;

export function resourceId(info: ResourceInfo): string {
  return info.group ? `${info.resource}.${info.group}` : info.resource;
}

export function cacheKey(namespace: string | undefined, name: string): string {
  return namespace ? `${namespace}/${name}` : name;
}

export class Informer {
  private readonly cache = new Map<string, KubeObject>();
  private readonly handlers = new Set<ChangeHandler>();
  private readonly waiters = new Set<() => void>();
  private handle: WatchHandle | undefined;
  private lastResourceVersion = '';
  /** The highest resourceVersion the stream has delivered (events and bookmarks), as a number. */
  private seenResourceVersion = 0;
  private stopped = false;
  private failures = 0;
  private started: Promise<void> | undefined;
  private retryTimer: NodeJS.Timeout | undefined;
  /** Set when the server stopped serving the resource (404 on watch or list), e.g. its CRD was deleted. */
  gone = false;

  constructor(
    private readonly client: KubeClient,
    readonly info: ResourceInfo,
    private readonly onError: (message: string) => void = () => undefined,
  ) {}

  get apiVersion(): string {
    return this.info.group ? `${this.info.group}/${this.info.version}` : this.info.version;
  }

  /** Lists and starts watching; resolves once the cache holds the listed state. */
  start(): Promise<void> {
    this.started ??= this.relist().then(() => this.watch());
    return this.started;
  }

  onChange(handler: ChangeHandler): () => void {
    this.handlers.add(handler);
    return () => this.handlers.delete(handler);
  }

  /** Like onChange, but first replays the cached objects as ADDED, so the handler misses nothing. */
  subscribe(handler: ChangeHandler): () => void {
    this.handlers.add(handler);
    for (const obj of this.list()) handler('ADDED', obj, undefined);
    return () => this.handlers.delete(handler);
  }

  get(namespace: string | undefined, name: string): KubeObject | undefined {
    return this.cache.get(cacheKey(this.info.namespaced ? namespace : undefined, name));
  }

  /** Cached objects, in one namespace or all, sorted by namespace/name (a stable order). */
  list(namespace?: string): KubeObject[] {
    const all = [...this.cache.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, obj]) => obj);
    return namespace === undefined ? all : all.filter((o) => o.metadata?.namespace === namespace);
  }

  /**
   * Resolves true once `predicate` holds for the cache (checked now and after every change), false
   * after `timeoutMs`. Controllers use it to read their own writes before acting on the cache again.
   */
  waitUntil(predicate: () => boolean, timeoutMs = 5000): Promise<boolean> {
    if (predicate()) return Promise.resolve(true);
    return new Promise((resolve) => {
      const check = (): void => {
        if (this.stopped || predicate()) finish(!this.stopped);
      };
      const finish = (ok: boolean): void => {
        clearTimeout(timer);
        this.waiters.delete(check);
        resolve(ok);
      };
      const timer = setTimeout(() => finish(false), timeoutMs);
      this.waiters.add(check);
    });
  }

  /**
   * Waits until the cache has seen `obj` at its resourceVersion or later, or the stream has moved past
   * that resourceVersion (the object may be gone again). resourceVersions are compared as numbers,
   * which holds for the embedded server and etcd-backed servers alike.
   */
  waitForWrite(obj: KubeObject, timeoutMs = 5000): Promise<boolean> {
    const ns = obj.metadata?.namespace;
    const name = obj.metadata?.name ?? '';
    const uid = obj.metadata?.uid;
    const rv = Number(obj.metadata?.resourceVersion ?? '0');
    return this.waitUntil(() => {
      if (this.seenResourceVersion >= rv) return true;
      const cached = this.get(ns, name);
      if (!cached) return false;
      if (uid && cached.metadata?.uid !== uid) return true; // replaced by a newer object of that name
      return Number(cached.metadata?.resourceVersion ?? '0') >= rv;
    }, timeoutMs);
  }

  /** Waits until the cache no longer holds the object with this uid. */
  waitForGone(namespace: string | undefined, name: string, uid: string | undefined, timeoutMs = 5000): Promise<boolean> {
    return this.waitUntil(() => {
      const cached = this.get(namespace, name);
      return !cached || (uid !== undefined && cached.metadata?.uid !== uid);
    }, timeoutMs);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.retryTimer) clearTimeout(this.retryTimer);
    for (const check of [...this.waiters]) check();
    this.handle?.stop();
    await this.handle?.done;
  }

  private withTypeMeta(obj: KubeObject): KubeObject {
    return { ...obj, kind: obj.kind ?? this.info.kind, apiVersion: obj.apiVersion ?? this.apiVersion };
  }

  private emit(type: ChangeType, obj: KubeObject, old: KubeObject | undefined): void {
    for (const handler of [...this.handlers]) {
      try {
        handler(type, obj, old);
      } catch (err) {
        this.onError(`${resourceId(this.info)} handler failed: ${(err as Error).message}`);
      }
    }
    for (const check of [...this.waiters]) check();
  }

  private apply(type: ChangeType, raw: KubeObject): void {
    const obj = this.withTypeMeta(raw);
    const key = cacheKey(this.info.namespaced ? obj.metadata?.namespace : undefined, obj.metadata?.name ?? '');
    const old = this.cache.get(key);
    if (type === 'DELETED') {
      this.cache.delete(key);
      this.emit('DELETED', obj, old);
      return;
    }
    if (old && old.metadata?.resourceVersion === obj.metadata?.resourceVersion) return;
    this.cache.set(key, obj);
    this.emit(old ? 'MODIFIED' : 'ADDED', obj, old);
  }

  private async relist(): Promise<void> {
    while (!this.stopped) {
      try {
        const { items, resourceVersion } = await this.client.list(this.info);
        const seen = new Set<string>();
        for (const item of items) {
          seen.add(cacheKey(this.info.namespaced ? item.metadata?.namespace : undefined, item.metadata?.name ?? ''));
          this.apply('ADDED', item);
        }
        for (const [key, obj] of [...this.cache.entries()]) if (!seen.has(key)) this.apply('DELETED', obj);
        this.lastResourceVersion = resourceVersion;
        const n = Number(resourceVersion);
        if (Number.isFinite(n) && n > this.seenResourceVersion) this.seenResourceVersion = n;
        this.failures = 0;
        return;
      } catch (err) {
        const status = (err as { status?: number }).status;
        if (status === 404) {
          this.gone = true;
          return;
        }
        if (!(await this.backoff(`list ${resourceId(this.info)}: ${(err as Error).message}`))) return;
      }
    }
  }

  /** Sleeps before a retry; false when the informer should give up. */
  private async backoff(reason: string): Promise<boolean> {
    this.failures++;
    if (this.failures >= MAX_CONSECUTIVE_FAILURES) {
      this.onError(`${reason}; giving up after ${this.failures} attempts`);
      return false;
    }
    const delay = Math.min(10 * 2 ** Math.min(this.failures, 7), 1000);
    await new Promise<void>((resolve) => {
      this.retryTimer = setTimeout(resolve, delay);
    });
    return !this.stopped;
  }

  private watch(): void {
    if (this.stopped || this.gone) return;
    const path = formatApiPath({ group: this.info.group, version: this.info.version, resource: this.info.resource });
    let expired = false;
    let events = 0;
    const handle = this.client.watch(path, { resourceVersion: this.lastResourceVersion, allowWatchBookmarks: 'true' }, (type, object) => {
      events++;
      if (type === 'ERROR') {
        if (isObject(object) && object.code === 410) expired = true;
        return;
      }
      const rv = object.metadata?.resourceVersion;
      if (rv) this.lastResourceVersion = rv;
      if (type === 'ADDED' || type === 'MODIFIED' || type === 'DELETED') this.apply(type, object);
      const n = Number(rv);
      if (Number.isFinite(n) && n > this.seenResourceVersion) {
        this.seenResourceVersion = n;
        for (const check of [...this.waiters]) check();
      }
    });
    this.handle = handle;
    void handle.done.then(async ({ status }) => {
      if (this.stopped) return;
      if (status === 404) {
        this.gone = true;
        for (const obj of [...this.cache.values()]) this.apply('DELETED', obj);
        return;
      }
      if (status === 200 && (events > 0 || expired)) this.failures = 0;
      else if (!(await this.backoff(`watch ${resourceId(this.info)} ended with HTTP ${status}`))) return;
      if (expired) await this.relist();
      this.watch();
    });
  }
}

/** One informer per resource, started on first use and stopped together. */
export class InformerFactory {
  private readonly informers = new Map<string, Informer>();
  private readonly anyChange = new Set<ChangeHandler>();
  private stopped = false;

  constructor(
    readonly client: KubeClient,
    private readonly onError: (message: string) => void = () => undefined,
  ) {}

  /** The started informer of a resource. */
  async forResource(info: ResourceInfo): Promise<Informer> {
    const id = resourceId(info);
    let informer = this.informers.get(id);
    if (!informer || informer.gone) {
      const created = new Informer(this.client, info, this.onError);
      informer = created;
      this.informers.set(id, created);
      created.onChange((type, obj, old) => {
        for (const handler of [...this.anyChange]) handler(type, obj, old);
      });
      if (this.stopped) void created.stop();
    }
    await informer.start();
    return informer;
  }

  /** The started informer of a kind, or undefined when the cluster does not serve it. */
  async forKind(kind: string, apiVersion?: string): Promise<Informer | undefined> {
    const info = await this.client.resources.byKind(kind, apiVersion);
    if (!info || !info.verbs.includes('list') || !info.verbs.includes('watch')) return undefined;
    return this.forResource(info);
  }

  /** Receives the changes of every informer of this factory, present and future (no replay). */
  onAnyChange(handler: ChangeHandler): () => void {
    this.anyChange.add(handler);
    return () => this.anyChange.delete(handler);
  }

  /** Informers started so far (including those whose resource is gone). */
  all(): Informer[] {
    return [...this.informers.values()];
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await Promise.all([...this.informers.values()].map((i) => i.stop()));
  }
}
