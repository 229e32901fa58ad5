/**
 * The namespace controller (kube-controller-manager's namespace deleter), as an API client. For a
 * namespace with a deletionTimestamp and the `kubernetes` finalizer in spec.finalizers:
 * 1. discover every namespaced resource that can be listed and deleted;
 * 2. delete the pods first and wait until they are gone (OrderedNamespaceDeletion, on by default
 *    since Kubernetes 1.33), then delete every other resource's content (deletecollection, or list
 *    and delete one by one);
 * 3. report progress in the namespace's status conditions (NamespaceDeletionDiscoveryFailure,
 *    NamespaceDeletionGroupVersionParsingFailure, NamespaceDeletionContentFailure,
 *    NamespaceContentRemaining, NamespaceFinalizersRemaining) with the real reasons and messages;
 * 4. once nothing is left, remove `kubernetes` from spec.finalizers through the `finalize`
 *    subresource; the API server then deletes the namespace.
 * While content remains it re-checks whenever an object of the namespace changes or goes (as seen by
 * any informer of the simulation, e.g. the garbage collector's), and at the latest after a backoff of
 * up to 5 s (a real controller waits for the estimate the deleter returns, often 15 s).
 */
import { isObject, type KubeObject } from '../../model/object-key.js';
import type { ResourceInfo } from '../../kube/discovery.js';
import { resourceId } from '../../kube/informer.js';
import { clone, conditions, isBeingDeleted, setCondition, spec, type Condition } from './objects.js';
import { isStatus, type SimContext, type WorkRunner } from './runtime.js';

export const NAMESPACE_FINALIZER = 'kubernetes';
const MAX_RECHECK_MS = 5000;

export class NamespaceController {
  private readonly enqueue: (key: string, delayMs?: number) => void;
  private readonly rechecks = new Map<string, number>();

  private constructor(
    private readonly ctx: SimContext,
    runner: WorkRunner,
    private readonly nsInfo: ResourceInfo,
  ) {
    this.enqueue = runner.register('namespace', (key) => this.reconcile(key));
  }

  static async start(ctx: SimContext, runner: WorkRunner): Promise<NamespaceController | undefined> {
    const informer = await ctx.informers.forKind('Namespace', 'v1');
    if (!informer) return undefined;
    const controller = new NamespaceController(ctx, runner, informer.info);
    informer.subscribe((type, ns) => {
      if (type !== 'DELETED' && isBeingDeleted(ns)) controller.enqueue(ns.metadata!.name!);
    });
    ctx.informers.onAnyChange((type, obj) => {
      const namespace = obj.metadata?.namespace;
      if (!namespace || (type !== 'DELETED' && !isBeingDeleted(obj))) return;
      if (isBeingDeleted(informer.get(undefined, namespace) ?? {})) controller.enqueue(namespace);
    });
    return controller;
  }

  private async reconcile(name: string): Promise<void> {
    const ns = await this.ctx.api.get(this.nsInfo, undefined, name);
    if (!ns || !isBeingDeleted(ns)) return;
    const finalizers = Array.isArray(spec(ns).finalizers) ? (spec(ns).finalizers as string[]) : [];
    if (!finalizers.includes(NAMESPACE_FINALIZER)) return;

    this.ctx.client.resources.invalidate();
    const resources = (await this.ctx.client.resources.all())
      .filter((r) => r.namespaced && r.verbs.includes('list') && (r.verbs.includes('delete') || r.verbs.includes('deletecollection')))
      .sort((a, b) => (resourceId(a) < resourceId(b) ? -1 : 1));
    const pods = resources.filter((r) => r.group === '' && r.resource === 'pods');
    const others = resources.filter((r) => !(r.group === '' && r.resource === 'pods'));

    let remaining = await this.deleteContent(name, pods);
    if (remaining.total === 0) remaining = await this.deleteContent(name, others);
    await this.updateConditions(ns, remaining);
    if (remaining.total > 0) {
      const delay = Math.min((this.rechecks.get(name) ?? 25) * 2, MAX_RECHECK_MS);
      this.rechecks.set(name, delay);
      this.enqueue(name, delay);
      return;
    }
    this.rechecks.delete(name);
    const latest = await this.ctx.api.get(this.nsInfo, undefined, name);
    if (!latest || latest.metadata?.uid !== ns.metadata?.uid) return;
    const next = clone(latest);
    const nextSpec = isObject(next.spec) ? next.spec : (next.spec = {});
    nextSpec.finalizers = finalizers.filter((f) => f !== NAMESPACE_FINALIZER);
    this.ctx.log(`namespace: finalizing ${name}`);
    try {
      await this.ctx.api.update(this.nsInfo, next, 'finalize');
    } catch (err) {
      if (!isStatus(err, 404)) throw err;
    }
  }

  /** Deletes the content of `resources` in the namespace; what is left, with its finalizers. */
  private async deleteContent(
    namespace: string,
    resources: ResourceInfo[],
  ): Promise<{ total: number; byResource: Map<string, number>; finalizers: Map<string, number> }> {
    const byResource = new Map<string, number>();
    const finalizers = new Map<string, number>();
    let total = 0;
    for (const info of resources) {
      let items = await this.ctx.api.list(info, namespace);
      if (items.length === 0) continue;
      const live = items.filter((o) => !isBeingDeleted(o));
      if (live.length > 0) {
        const collected = info.verbs.includes('deletecollection') && (await this.ctx.api.deleteCollection(info, namespace));
        if (!collected) {
          for (const obj of live)
            await this.ctx.api.delete(info, namespace, obj.metadata!.name!, { preconditions: { uid: obj.metadata?.uid } }).catch((err: unknown) => {
              if (!isStatus(err, 404, 409)) throw err;
            });
        }
        items = await this.ctx.api.list(info, namespace);
      }
      if (items.length === 0) continue;
      total += items.length;
      byResource.set(resourceId(info), items.length);
      for (const obj of items) for (const f of obj.metadata?.finalizers ?? []) finalizers.set(f, (finalizers.get(f) ?? 0) + 1);
    }
    return { total, byResource, finalizers };
  }

  private async updateConditions(
    ns: KubeObject,
    remaining: { total: number; byResource: Map<string, number>; finalizers: Map<string, number> },
  ): Promise<void> {
    let list: Condition[] = conditions(ns);
    list = setCondition(list, {
      type: 'NamespaceDeletionDiscoveryFailure',
      status: 'False',
      reason: 'ResourcesDiscovered',
      message: 'All resources successfully discovered',
    });
    list = setCondition(list, {
      type: 'NamespaceDeletionGroupVersionParsingFailure',
      status: 'False',
      reason: 'ParsedGroupVersions',
      message: 'All legacy kube types successfully parsed',
    });
    list = setCondition(list, {
      type: 'NamespaceDeletionContentFailure',
      status: 'False',
      reason: 'ContentDeleted',
      message: 'All content successfully deleted, may be waiting on finalization',
    });
    if (remaining.total > 0) {
      const what = [...remaining.byResource.entries()].map(([r, n]) => `${r} has ${n} resource instances`).join(', ');
      list = setCondition(list, {
        type: 'NamespaceContentRemaining',
        status: 'True',
        reason: 'SomeResourcesRemain',
        message: `Some resources are remaining: ${what}`,
      });
    } else {
      list = setCondition(list, { type: 'NamespaceContentRemaining', status: 'False', reason: 'ContentRemoved', message: 'All content successfully removed' });
    }
    if (remaining.finalizers.size > 0) {
      const what = [...remaining.finalizers.entries()].map(([f, n]) => `${f} in ${n} resource instances`).join(', ');
      list = setCondition(list, {
        type: 'NamespaceFinalizersRemaining',
        status: 'True',
        reason: 'SomeFinalizersRemain',
        message: `Some content in the namespace has finalizers remaining: ${what}`,
      });
    } else {
      list = setCondition(list, {
        type: 'NamespaceFinalizersRemaining',
        status: 'False',
        reason: 'ContentHasNoFinalizers',
        message: 'All content-preserving finalizers finished',
      });
    }
    if (JSON.stringify(list) === JSON.stringify(conditions(ns))) return;
    const next = clone(ns);
    next.status = { ...(isObject(next.status) ? next.status : {}), conditions: list };
    try {
      await this.ctx.api.update(this.nsInfo, next, 'status');
    } catch (err) {
      if (!isStatus(err, 404, 409)) throw err;
    }
  }
}
