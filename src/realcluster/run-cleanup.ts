/**
 * Isolation between runs on a cluster kperturb does not own (`--kubeconfig`): after a run, delete
 * every object the run created and wait until they are gone, so that the next run starts from the
 * cluster as this run found it. (Runs on the embedded and on the real control plane need none of
 * this: each gets a fresh cluster.)
 *
 * "Created by the run" is decided by uid: the cluster recorder lists every resource before the
 * run's setup, and every object whose uid the recorder then sees appear was created during the run
 * (by the setup, the workload, the controller, or the cluster's own controllers reacting to them).
 * Objects that existed before the run are never deleted, even if the run changed them; nor are
 * Nodes, Events, and objects in the kube-system, kube-public and kube-node-lease namespaces, which
 * belong to the cluster.
 *
 * Deletion order: namespaced objects (custom resources included), then other cluster-scoped
 * objects, then CustomResourceDefinitions, then Namespaces. The controller under test is stopped
 * by then, so a finalizer it added would block deletion forever: objects still present after
 * `stuckAfterMs` (and every `stuckAfterMs` after that) get their metadata.finalizers removed, and pods still terminating are deleted with
 * a zero grace period (what `kubectl delete --force` does). Anything left after `timeoutMs` is
 * reported as a leftover.
 */
import { formatApiPath } from '../model/api-path.js';
import type { KubeObject } from '../model/object-key.js';
import type { KubeClient } from '../kube/client.js';
import type { ObservedChange } from '../recorder/cluster-recorder.js';

/** One object to delete, with where it lives. */
export interface RunObject {
  key: string;
  uid: string;
  group: string;
  version: string;
  resource: string;
  namespace?: string;
  name: string;
}

export interface CleanupReport {
  /** Objects the run created that were still there when the cleanup began. */
  objects: number;
  /** Objects whose finalizers were removed because deletion was stuck. */
  finalizersRemoved: string[];
  /** Pods deleted again with a zero grace period. */
  forced: string[];
  /** Objects still present when the cleanup gave up (the next run is not isolated from them). */
  leftovers: string[];
  durationMs: number;
}

const CLUSTER_NAMESPACES = new Set(['kube-system', 'kube-public', 'kube-node-lease']);
const CLUSTER_RESOURCES = new Set(['nodes', 'events', 'events.events.k8s.io']);

function uidOf(obj: KubeObject | undefined): string | undefined {
  const uid = obj?.metadata?.uid;
  return typeof uid === 'string' ? uid : undefined;
}

/** The uids of every object the recorder has seen so far (call it before the run creates anything). */
export function uidInventory(changes: readonly ObservedChange[]): Set<string> {
  const uids = new Set<string>();
  for (const c of changes) {
    const uid = uidOf(c.next) ?? uidOf(c.prev);
    if (uid) uids.add(uid);
  }
  return uids;
}

/**
 * The objects created after `inventory` was taken that still existed when the recorder last saw
 * them, in deletion order (see the module comment).
 */
export function objectsCreatedByRun(inventory: ReadonlySet<string>, changes: readonly ObservedChange[]): RunObject[] {
  const latest = new Map<string, { change: ObservedChange; deleted: boolean }>();
  for (const c of changes) {
    const uid = uidOf(c.next) ?? uidOf(c.prev);
    if (!uid || inventory.has(uid)) continue;
    latest.set(uid, { change: c, deleted: c.type === 'DELETED' });
  }
  const objects: RunObject[] = [];
  for (const [uid, { change, deleted }] of latest) {
    if (deleted || !change.next) continue;
    const md = change.next.metadata ?? {};
    const namespace = typeof md.namespace === 'string' && md.namespace !== '' ? md.namespace : undefined;
    if (namespace && CLUSTER_NAMESPACES.has(namespace)) continue;
    const id = change.group ? `${change.resource}.${change.group}` : change.resource;
    if (CLUSTER_RESOURCES.has(id)) continue;
    const apiVersion = typeof change.next.apiVersion === 'string' ? change.next.apiVersion : '';
    const version = apiVersion.includes('/') ? apiVersion.split('/')[1]! : apiVersion || 'v1';
    objects.push({
      key: change.key,
      uid,
      group: change.group,
      version,
      resource: change.resource,
      ...(namespace ? { namespace } : {}),
      name: String(md.name ?? ''),
    });
  }
  const rank = (o: RunObject) =>
    o.namespace
      ? 0
      : o.group === 'apiextensions.k8s.io' && o.resource === 'customresourcedefinitions'
        ? 2
        : o.group === '' && o.resource === 'namespaces'
          ? 3
          : 1;
  return objects.sort((a, b) => rank(a) - rank(b) || a.key.localeCompare(b.key));
}

function pathOf(o: RunObject): string {
  return formatApiPath({ group: o.group, version: o.version, resource: o.resource, name: o.name, ...(o.namespace ? { namespace: o.namespace } : {}) });
}

export interface CleanupOptions {
  /** After this long, stuck objects lose their finalizers (default 5 s). */
  stuckAfterMs?: number;
  /** Give up after this long (default 60 s). */
  timeoutMs?: number;
  log?: (line: string) => void;
}

/** Deletes `objects` (in order) and waits until every one is gone; never throws for API errors. */
export async function deleteRunObjects(client: KubeClient, objects: readonly RunObject[], options: CleanupOptions = {}): Promise<CleanupReport> {
  const started = Date.now();
  const stuckAfterMs = options.stuckAfterMs ?? 5_000;
  const timeoutMs = options.timeoutMs ?? 60_000;
  const report: CleanupReport = { objects: objects.length, finalizersRemoved: [], forced: [], leftovers: [], durationMs: 0 };
  const remove = async (o: RunObject, gracePeriodSeconds?: number) => {
    // The uid precondition: never delete a namesake created by someone else meanwhile.
    const body = {
      kind: 'DeleteOptions',
      apiVersion: 'v1',
      preconditions: { uid: o.uid },
      ...(gracePeriodSeconds !== undefined ? { gracePeriodSeconds } : {}),
    };
    await client.request('DELETE', pathOf(o), { body }).catch(() => undefined);
  };
  for (const o of objects) await remove(o);

  let pending = [...objects];
  // Objects can get stuck later (a custom resource deleted by its CRD's cleanup): unstick every stuckAfterMs.
  let nextUnstick = started + stuckAfterMs;
  for (;;) {
    const states = await Promise.all(
      pending.map(async (o) => {
        const res = await client.request('GET', pathOf(o)).catch(() => undefined);
        if (!res) return { o, gone: false, obj: undefined };
        const obj = res.status === 200 ? (res.body as KubeObject) : undefined;
        // Gone, or a different object of the same name (not ours to delete).
        return { o, gone: res.status === 404 || (obj !== undefined && uidOf(obj) !== o.uid), obj };
      }),
    );
    pending = states.filter((s) => !s.gone).map((s) => s.o);
    if (pending.length === 0) break;
    const elapsed = Date.now() - started;
    if (elapsed >= timeoutMs) {
      report.leftovers = pending.map((o) => o.key);
      options.log?.(`  cleanup gave up after ${Math.round(elapsed / 1000)} s; still present: ${report.leftovers.join(', ')}`);
      break;
    }
    if (Date.now() >= nextUnstick) {
      nextUnstick = Date.now() + stuckAfterMs;
      for (const s of states) {
        if (s.gone || !s.obj) continue;
        const finalizers = s.obj.metadata?.finalizers;
        if (Array.isArray(finalizers) && finalizers.length > 0) {
          const res = await client
            .request('PATCH', pathOf(s.o), { body: { metadata: { finalizers: null, uid: s.o.uid } }, contentType: 'application/merge-patch+json' })
            .catch(() => undefined);
          if (res?.status === 200 && !report.finalizersRemoved.includes(`${s.o.key} (${finalizers.join(', ')})`))
            report.finalizersRemoved.push(`${s.o.key} (${finalizers.join(', ')})`);
        }
        if (s.o.group === '' && s.o.resource === 'pods') {
          await remove(s.o, 0);
          if (!report.forced.includes(s.o.key)) report.forced.push(s.o.key);
        } else if (!s.obj.metadata?.deletionTimestamp) {
          await remove(s.o);
        }
      }
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  report.durationMs = Date.now() - started;
  return report;
}
