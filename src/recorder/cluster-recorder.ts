/**
 * The cluster recorder: kperturb's own list+watch of every resource the cluster serves, written as
 * `cluster-change` events. It is what the cluster did, independent of what the controller was shown,
 * and the source of the oracles' end state and update summaries.
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

/** Resources whose churn says nothing about the controller's correctness. */
const IGNORED_RESOURCES = new Set(['events', 'events.events.k8s.io']);

interface Watched {
  info: ResourceInfo;
  handle?: WatchHandle;
  lastResourceVersion: string;
}

export class ClusterRecorder {
  private readonly watched = new Map<string, Watched>();
  /** Latest known state of every live object, with the RV the recorder last saw for it. */
  private readonly live = new Map<ObjectKey, KubeObject>();
  private stopped = false;
  private refreshing: Promise<void> | undefined;

  private constructor(
    private readonly client: KubeClient,
    private readonly trace: TraceSink,
  ) {}

  static async start(client: KubeClient, trace: TraceSink): Promise<ClusterRecorder> {
    const rec = new ClusterRecorder(client, trace);
    await rec.refreshResources();
    return rec;
  }

  private id(info: ResourceInfo): string {
    return info.group ? `${info.resource}.${info.group}` : info.resource;
  }

  /** Re-reads discovery and starts watching resources not yet watched. */
  refreshResources(): Promise<void> {
    const run = async () => {
      this.client.resources.invalidate();
      const all = await this.client.resources.all();
      for (const info of all) {
        const id = this.id(info);
        if (this.watched.has(id) || IGNORED_RESOURCES.has(id)) continue;
        if (!info.verbs.includes('list') || !info.verbs.includes('watch')) continue;
        const entry: Watched = { info, lastResourceVersion: '' };
        this.watched.set(id, entry);
        await this.listAndWatch(entry);
      }
    };
    const p = (this.refreshing ?? Promise.resolve()).then(run);
    this.refreshing = p.finally(() => {
      if (this.refreshing === p) this.refreshing = undefined;
    });
    return p;
  }

  private async listAndWatch(entry: Watched): Promise<void> {
    if (this.stopped) return;
    const { items, resourceVersion } = await this.client.list(entry.info);
    const seen = new Set<ObjectKey>();
    for (const obj of items) {
      const key = keyOfListed(obj, entry.info);
      seen.add(key);
      this.observe('ADDED', key, obj);
    }
    // After a relist, objects that vanished while we were not watching are deletions.
    for (const [key, obj] of this.live) {
      if (key.startsWith(entry.info.kind + '/') && !seen.has(key) && this.kindMatches(obj, entry.info)) {
        this.observe('DELETED', key, obj);
      }
    }
    entry.lastResourceVersion = resourceVersion;
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
    const handle = this.client.watch(
      path,
      { resourceVersion: entry.lastResourceVersion, allowWatchBookmarks: 'true' },
      (type, object) => {
        if (type === 'ERROR') {
          if (isObject(object) && object.code === 410) expired = true;
          return;
        }
        const rv = object.metadata?.resourceVersion;
        if (rv) entry.lastResourceVersion = rv;
        if (type === 'BOOKMARK') return;
        if (type !== 'ADDED' && type !== 'MODIFIED' && type !== 'DELETED') return;
        const obj = { ...object, kind: object.kind ?? info.kind, apiVersion: object.apiVersion ?? apiVersion };
        this.observe(type, keyOfListed(obj, info), obj);
        if (info.resource === 'customresourcedefinitions' && info.group === 'apiextensions.k8s.io') {
          void this.refreshResources().catch(() => undefined);
        }
      },
    );
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

  private observe(type: 'ADDED' | 'MODIFIED' | 'DELETED', key: ObjectKey, object: KubeObject): void {
    const rv = object.metadata?.resourceVersion ?? '';
    const known = this.live.get(key);
    if (type === 'ADDED' && known && known.metadata?.resourceVersion === rv) return; // relist of a known state
    if (type === 'DELETED') this.live.delete(key);
    else this.live.set(key, object);
    this.trace.append({ type: 'cluster-change', eventType: type, key, resourceVersion: rv, object });
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
    for (const entry of this.watched.values()) entry.handle?.stop();
    await Promise.all([...this.watched.values()].map((e) => e.handle?.done));
  }
}

function sortKeys<T>(record: Record<string, T>): Record<string, T> {
  const out: Record<string, T> = {};
  for (const k of Object.keys(record).sort()) out[k] = record[k]!;
  return out;
}
