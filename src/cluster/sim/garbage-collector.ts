/**
 * The garbage collector (kube-controller-manager's garbagecollector), as an API client:
 * - it watches every resource that supports delete, list and watch (except events), keeps the
 *   owner -> dependents graph from ownerReferences, and follows new kinds when CRDs change;
 * - attemptToDelete (garbagecollector.go attemptToDeleteItem): for a dependent, it looks each owner up
 *   live (GET, uid compared), classifies owners as solid / dangling / waiting-for-dependents-deletion;
 *   with a solid owner it only patches dangling and waiting references away, otherwise it deletes the
 *   dependent (Foreground if a waiting owner exists and the dependent has dependents of its own, else
 *   honouring the dependent's own orphan/foreground finalizer, else Background), with uid and
 *   resourceVersion preconditions;
 * - foreground: an owner carrying `foregroundDeletion` and a deletionTimestamp has all its dependents
 *   deleted; the finalizer is removed once no dependent with blockOwnerDeletion=true is left;
 * - orphan: an owner carrying `orphan` and a deletionTimestamp has its ownerReference removed from every
 *   dependent (strategic merge patch `$patch: delete`, or a JSON merge patch for custom resources),
 *   then the finalizer is removed.
 */
import type { KubeObject, OwnerReference } from '../../model/object-key.js';
import type { ResourceInfo } from '../../kube/discovery.js';
import { resourceId, type Informer } from '../../kube/informer.js';
import { hasFinalizer, isBeingDeleted } from './objects.js';
import { isStatus, type SimContext, type WorkRunner } from './runtime.js';

export const FOREGROUND_FINALIZER = 'foregroundDeletion';
export const ORPHAN_FINALIZER = 'orphan';
const IGNORED_RESOURCES = new Set(['events', 'events.events.k8s.io']);

interface GraphNode {
  uid: string;
  info: ResourceInfo;
  namespace: string | undefined;
  name: string;
  owners: OwnerReference[];
  beingDeleted: boolean;
  deletingDependents: boolean;
  orphaning: boolean;
}

type Action = 'delete' | 'orphan';

export class GarbageCollector {
  private readonly nodes = new Map<string, GraphNode>();
  private readonly dependents = new Map<string, Set<string>>();
  private readonly monitored = new Map<string, () => void>();
  private refreshing: Promise<void> | undefined;
  private refreshAgain = false;
  private readonly enqueue: (key: string, delayMs?: number) => void;

  private constructor(
    private readonly ctx: SimContext,
    runner: WorkRunner,
  ) {
    this.enqueue = runner.register('garbage-collector', (key) => this.process(key));
  }

  /**
   * Starts the monitors in the background, as the real garbage collector does: the graph fills in as
   * informers sync, and a dependent whose owner is not in the graph yet is checked live anyway.
   */
  static async start(ctx: SimContext, runner: WorkRunner): Promise<GarbageCollector> {
    const gc = new GarbageCollector(ctx, runner);
    const refresh = (invalidate: boolean) => gc.refreshMonitors(invalidate).catch((err: Error) => ctx.log(`garbage-collector: discovery: ${err.message}`));
    gc.started = (async () => {
      await refresh(false);
      const crds = await ctx.informers.forKind('CustomResourceDefinition', 'apiextensions.k8s.io/v1');
      crds?.onChange(() => void refresh(true));
    })().catch((err: Error) => ctx.log(`garbage-collector: ${err.message}`));
    return gc;
  }

  /** Resolves once the first set of monitors is running. */
  started: Promise<void> = Promise.resolve();

  /** Starts watching every deletable resource discovery serves now (GetDeletableResources). */
  refreshMonitors(invalidate = true): Promise<void> {
    if (this.refreshing) {
      this.refreshAgain = this.refreshAgain || invalidate;
      return this.refreshing;
    }
    this.refreshing = (async () => {
      let again = invalidate;
      do {
        this.refreshAgain = false;
        if (again) this.ctx.client.resources.invalidate();
        const all = await this.ctx.client.resources.all();
        const infos = all.filter((i) => ['delete', 'list', 'watch'].every((v) => i.verbs.includes(v)) && !IGNORED_RESOURCES.has(resourceId(i)));
        await Promise.all(infos.filter((i) => !this.monitored.has(resourceId(i))).map((i) => this.monitor(i)));
        again = this.refreshAgain;
      } while (again);
    })().finally(() => (this.refreshing = undefined));
    return this.refreshing;
  }

  private async monitor(info: ResourceInfo): Promise<void> {
    const id = resourceId(info);
    this.monitored.set(id, () => undefined);
    const informer: Informer = await this.ctx.informers.forResource(info);
    if (informer.gone) {
      this.monitored.delete(id);
      return;
    }
    const unsubscribe = informer.subscribe((type, obj, old) => this.observe(info, type, obj, old));
    this.monitored.set(id, unsubscribe);
  }

  private observe(info: ResourceInfo, type: 'ADDED' | 'MODIFIED' | 'DELETED', obj: KubeObject, old: KubeObject | undefined): void {
    const uid = obj.metadata?.uid;
    if (!uid) return;
    const previous = this.nodes.get(uid);
    if (type === 'DELETED') {
      this.nodes.delete(uid);
      for (const ref of previous?.owners ?? []) this.unlink(ref.uid, uid);
      // Dependents of a vanished owner, and owners waiting for this dependent, have work to do.
      for (const dep of this.dependents.get(uid) ?? []) this.enqueue(`delete|${dep}`);
      for (const ref of previous?.owners ?? []) {
        if (this.nodes.get(ref.uid)?.deletingDependents) this.enqueue(`delete|${ref.uid}`);
      }
      if (!this.dependents.get(uid)?.size) this.dependents.delete(uid);
      return;
    }
    const owners = [...(obj.metadata?.ownerReferences ?? [])];
    const node: GraphNode = {
      uid,
      info,
      namespace: obj.metadata?.namespace,
      name: obj.metadata?.name ?? '',
      owners,
      beingDeleted: isBeingDeleted(obj),
      deletingDependents: isBeingDeleted(obj) && hasFinalizer(obj, FOREGROUND_FINALIZER),
      orphaning: isBeingDeleted(obj) && hasFinalizer(obj, ORPHAN_FINALIZER),
    };
    this.nodes.set(uid, node);
    const before = new Set((previous?.owners ?? old?.metadata?.ownerReferences ?? []).map((r) => r.uid));
    for (const ref of previous?.owners ?? []) if (!owners.some((o) => o.uid === ref.uid)) this.unlink(ref.uid, uid);
    for (const ref of owners) {
      let set = this.dependents.get(ref.uid);
      if (!set) this.dependents.set(ref.uid, (set = new Set()));
      set.add(uid);
    }
    // A reference to an owner the graph has not seen may be dangling: check it live.
    const unknownOwner = owners.some((r) => !this.nodes.has(r.uid));
    const ownersChanged = owners.length !== before.size || owners.some((r) => !before.has(r.uid));
    if (owners.length > 0 && (unknownOwner || (ownersChanged && previous !== undefined))) this.enqueue(`delete|${uid}`);
    // An owner whose waiting dependents changed blockOwnerDeletion must be re-checked.
    if (previous && owners.some((r) => this.nodes.get(r.uid)?.deletingDependents)) {
      for (const r of owners) if (this.nodes.get(r.uid)?.deletingDependents) this.enqueue(`delete|${r.uid}`);
    }
    for (const r of previous?.owners ?? [])
      if (!owners.some((o) => o.uid === r.uid) && this.nodes.get(r.uid)?.deletingDependents) this.enqueue(`delete|${r.uid}`);
    if (node.deletingDependents && !previous?.deletingDependents) {
      this.enqueue(`delete|${uid}`);
      for (const dep of this.dependents.get(uid) ?? []) this.enqueue(`delete|${dep}`);
    }
    if (node.orphaning) this.enqueue(`orphan|${uid}`);
  }

  private unlink(ownerUid: string, dependentUid: string): void {
    const set = this.dependents.get(ownerUid);
    if (!set) return;
    set.delete(dependentUid);
    if (set.size === 0 && !this.nodes.has(ownerUid)) this.dependents.delete(ownerUid);
  }

  private dependentNodes(uid: string): GraphNode[] {
    return [...(this.dependents.get(uid) ?? [])]
      .map((d) => this.nodes.get(d))
      .filter((n): n is GraphNode => n !== undefined)
      .sort((a, b) => (a.uid < b.uid ? -1 : 1));
  }

  private async process(key: string): Promise<void> {
    const [action, uid] = key.split('|') as [Action, string];
    const node = this.nodes.get(uid);
    if (!node) return;
    if (action === 'orphan') await this.orphanDependents(node);
    else await this.attemptToDelete(node);
  }

  private async attemptToDelete(item: GraphNode): Promise<void> {
    if (item.beingDeleted && !item.deletingDependents) return;
    const latest = await this.ctx.api.get(item.info, item.namespace, item.name);
    if (!latest || latest.metadata?.uid !== item.uid) return;
    if (isBeingDeleted(latest) && hasFinalizer(latest, FOREGROUND_FINALIZER)) {
      await this.processDeletingDependents(item);
      return;
    }
    const refs = latest.metadata?.ownerReferences ?? [];
    if (refs.length === 0) return;
    const solid: OwnerReference[] = [];
    const dangling: OwnerReference[] = [];
    const waiting: OwnerReference[] = [];
    for (const ref of refs) {
      const owner = await this.lookupOwner(item, ref);
      if (owner === 'invalid') return; // a cluster-scoped dependent of a namespaced owner: never resolvable
      if (owner === undefined) dangling.push(ref);
      else if (isBeingDeleted(owner) && hasFinalizer(owner, FOREGROUND_FINALIZER)) waiting.push(ref);
      else solid.push(ref);
    }
    if (solid.length > 0) {
      if (dangling.length === 0 && waiting.length === 0) return;
      await this.removeOwnerReferences(
        item,
        latest,
        [...dangling, ...waiting].map((r) => r.uid),
      );
      return;
    }
    let policy: 'Background' | 'Foreground' | 'Orphan';
    if (waiting.length > 0 && this.dependentNodes(item.uid).length > 0) policy = 'Foreground';
    else if (hasFinalizer(latest, ORPHAN_FINALIZER)) policy = 'Orphan';
    else if (hasFinalizer(latest, FOREGROUND_FINALIZER)) policy = 'Foreground';
    else policy = 'Background';
    this.ctx.log(`garbage-collector: deleting ${item.info.kind} ${item.namespace ? item.namespace + '/' : ''}${item.name} (${policy})`);
    try {
      await this.ctx.api.delete(item.info, item.namespace, item.name, {
        propagationPolicy: policy,
        preconditions: { uid: item.uid, resourceVersion: latest.metadata?.resourceVersion },
      });
    } catch (err) {
      if (!isStatus(err, 409)) throw err;
      this.enqueue(`delete|${item.uid}`);
    }
  }

  /** The live owner, undefined if absent (404 or another uid), 'invalid' for an impossible reference. */
  private async lookupOwner(item: GraphNode, ref: OwnerReference): Promise<KubeObject | undefined | 'invalid'> {
    const known = this.nodes.get(ref.uid);
    let info = known?.info;
    if (!info) {
      info = await this.ctx.client.resources.byKind(ref.kind, ref.apiVersion);
      if (!info) info = await this.ctx.client.resources.byKind(ref.kind);
    }
    if (!info) throw new Error(`cannot resolve owner kind ${ref.kind} (${ref.apiVersion}) of ${item.info.kind} ${item.name}`);
    if (info.namespaced && !item.namespace) return 'invalid';
    const owner = await this.ctx.api.get(info, info.namespaced ? item.namespace : undefined, ref.name);
    if (!owner || owner.metadata?.uid !== ref.uid) return undefined;
    return owner;
  }

  private async processDeletingDependents(owner: GraphNode): Promise<void> {
    const blocking = this.dependentNodes(owner.uid).filter((d) => d.owners.some((r) => r.uid === owner.uid && r.blockOwnerDeletion === true));
    if (blocking.length === 0) {
      await this.removeFinalizer(owner, FOREGROUND_FINALIZER);
      return;
    }
    for (const dep of blocking) if (!dep.deletingDependents) this.enqueue(`delete|${dep.uid}`);
  }

  private async orphanDependents(owner: GraphNode): Promise<void> {
    for (const dep of this.dependentNodes(owner.uid)) {
      const latest = await this.ctx.api.get(dep.info, dep.namespace, dep.name);
      if (!latest || latest.metadata?.uid !== dep.uid) continue;
      if (!(latest.metadata?.ownerReferences ?? []).some((r) => r.uid === owner.uid)) continue;
      await this.removeOwnerReferences(dep, latest, [owner.uid]);
    }
    await this.removeFinalizer(owner, ORPHAN_FINALIZER);
  }

  /** GenerateDeleteOwnerRefStrategicMergeBytes, with the JSON merge patch fallback custom resources need. */
  private async removeOwnerReferences(item: GraphNode, latest: KubeObject, ownerUids: string[]): Promise<void> {
    const smp = { metadata: { ownerReferences: ownerUids.map((uid) => ({ $patch: 'delete', uid })), uid: item.uid } };
    try {
      await this.ctx.api.patch(item.info, item.namespace, item.name, 'strategic', smp);
      return;
    } catch (err) {
      if (isStatus(err, 404)) return;
      if (!isStatus(err, 415)) throw err;
    }
    const remaining = (latest.metadata?.ownerReferences ?? []).filter((r) => !ownerUids.includes(r.uid));
    const merge = { metadata: { ownerReferences: remaining.length > 0 ? remaining : null, uid: item.uid, resourceVersion: latest.metadata?.resourceVersion } };
    try {
      await this.ctx.api.patch(item.info, item.namespace, item.name, 'merge', merge);
    } catch (err) {
      if (!isStatus(err, 404)) throw err;
    }
  }

  private async removeFinalizer(node: GraphNode, finalizer: string): Promise<void> {
    const latest = await this.ctx.api.get(node.info, node.namespace, node.name);
    if (!latest || latest.metadata?.uid !== node.uid || !hasFinalizer(latest, finalizer)) return;
    const finalizers = (latest.metadata?.finalizers ?? []).filter((f) => f !== finalizer);
    this.ctx.log(`garbage-collector: removing ${finalizer} from ${node.info.kind} ${node.namespace ? node.namespace + '/' : ''}${node.name}`);
    try {
      await this.ctx.api.patch(node.info, node.namespace, node.name, 'merge', {
        metadata: { resourceVersion: latest.metadata?.resourceVersion, finalizers: finalizers.length > 0 ? finalizers : null },
      });
    } catch (err) {
      if (isStatus(err, 404)) return;
      throw err; // 409: retried by the queue
    }
  }

  stop(): void {
    for (const unsubscribe of this.monitored.values()) unsubscribe();
  }
}
