/**
 * The ReplicaSet controller (pkg/controller/replicaset): keeps `spec.replicas` active pods.
 * - Pods it controls: controllerRef to the ReplicaSet; orphans matching the selector are adopted
 *   (ownerReference patched in), controlled pods that stopped matching are released.
 * - Too few: creates pods from the template (generateName `<rs>-`, controller ownerReference with
 *   blockOwnerDeletion). Too many: deletes the least valuable first (controller.ActivePods order:
 *   unscheduled, pending, not ready, ready for less time, more restarts, newer).
 * - Status (UpdateStatus): replicas, fullyLabeledReplicas, readyReplicas, availableReplicas
 *   (minReadySeconds honoured with a delayed re-sync), observedGeneration.
 * Nothing is created or deleted while the ReplicaSet itself is being deleted.
 * Events (source replicaset-controller) as controller.RealPodControl writes them on the ReplicaSet:
 * SuccessfulCreate "Created pod: x", SuccessfulDelete "Deleted pod: x".
 */
import type { KubeObject } from '../../model/object-key.js';
import type { Informer } from '../../kube/informer.js';
import {
  clone,
  controllerRef,
  deepEqual,
  isBeingDeleted,
  isControlledBy,
  isPodActive,
  isPodAvailable,
  isPodReady,
  msUntilAvailable,
  newControllerRef,
  num,
  podFromTemplate,
  podPhase,
  podTemplate,
  selectorMatches,
  spec,
  status,
  str,
} from './objects.js';
import type { CoreEventRecorder } from './events.js';
import { isStatus, type SimContext, type WorkRunner } from './runtime.js';

export class ReplicaSetController {
  private readonly enqueue: (key: string, delayMs?: number) => void;
  private readonly recorder: CoreEventRecorder;

  private constructor(
    private readonly ctx: SimContext,
    runner: WorkRunner,
    private readonly sets: Informer,
    private readonly pods: Informer,
  ) {
    this.enqueue = runner.register('replicaset', (key) => this.sync(key));
    this.recorder = ctx.events.recorder({ component: 'replicaset-controller' });
  }

  static async start(ctx: SimContext, runner: WorkRunner): Promise<ReplicaSetController | undefined> {
    const [sets, pods] = await Promise.all([ctx.informers.forKind('ReplicaSet', 'apps/v1'), ctx.informers.forKind('Pod', 'v1')]);
    if (!sets || !pods) return undefined;
    const c = new ReplicaSetController(ctx, runner, sets, pods);
    sets.subscribe((type, rs) => {
      if (type !== 'DELETED') c.enqueue(`${rs.metadata!.namespace}/${rs.metadata!.name}`);
    });
    pods.subscribe((_type, pod, old) => {
      for (const p of old ? [pod, old] : [pod]) {
        const ref = controllerRef(p);
        if (ref?.kind === 'ReplicaSet') c.enqueue(`${p.metadata!.namespace}/${ref.name}`);
        else if (!ref)
          for (const rs of c.sets.list(p.metadata?.namespace))
            if (selectorMatches(spec(rs).selector, p.metadata?.labels)) c.enqueue(`${rs.metadata!.namespace}/${rs.metadata!.name}`);
      }
    });
    return c;
  }

  private async sync(key: string): Promise<void> {
    const [namespace, name] = key.split('/') as [string, string];
    const rs = this.sets.get(namespace, name);
    if (!rs) return;
    const all = this.pods.list(namespace);
    let owned = all.filter((p) => isControlledBy(p, rs));
    if (!isBeingDeleted(rs)) owned = await this.adoptAndRelease(rs, all, owned);
    const active = owned.filter(isPodActive);
    const desired = num(spec(rs).replicas, 1);
    if (!isBeingDeleted(rs)) {
      const diff = active.length - desired;
      if (diff < 0) await this.createPods(rs, -diff);
      else if (diff > 0) await this.deletePods(rs, active, diff);
    }
    await this.updateStatus(namespace, name);
  }

  private async adoptAndRelease(rs: KubeObject, all: KubeObject[], owned: KubeObject[]): Promise<KubeObject[]> {
    const selector = spec(rs).selector;
    const result: KubeObject[] = [];
    for (const pod of owned) {
      if (selectorMatches(selector, pod.metadata?.labels)) {
        result.push(pod);
        continue;
      }
      await this.ctx.api
        .patch(this.pods.info, pod.metadata?.namespace, pod.metadata!.name!, 'strategic', {
          metadata: { ownerReferences: [{ $patch: 'delete', uid: rs.metadata?.uid }], uid: pod.metadata?.uid },
        })
        .catch((err: unknown) => {
          if (!isStatus(err, 404, 422)) throw err;
        });
    }
    for (const pod of all) {
      if (controllerRef(pod) || isBeingDeleted(pod) || !isPodActive(pod) || !selectorMatches(selector, pod.metadata?.labels)) continue;
      try {
        const adopted = await this.ctx.api.patch(this.pods.info, pod.metadata?.namespace, pod.metadata!.name!, 'strategic', {
          metadata: { ownerReferences: [newControllerRef(rs)], uid: pod.metadata?.uid },
        });
        await this.pods.waitForWrite(adopted);
        result.push(adopted);
      } catch (err) {
        if (!isStatus(err, 404, 409, 422)) throw err;
      }
    }
    return result;
  }

  private async createPods(rs: KubeObject, count: number): Promise<void> {
    const template = podTemplate(rs);
    for (let i = 0; i < count; i++) {
      const pod = podFromTemplate(rs, template);
      Object.assign(pod.metadata!, this.ctx.nameFor(`${rs.metadata!.name}-`));
      let created: KubeObject;
      try {
        created = await this.ctx.api.create(this.pods.info, rs.metadata?.namespace, pod);
      } catch (err) {
        if (isStatus(err, 409) && pod.metadata?.name) {
          i--; // deterministic name taken: the next counter value
          continue;
        }
        throw err;
      }
      this.ctx.log(`replicaset: created pod ${created.metadata?.namespace}/${created.metadata?.name}`);
      this.recorder.event(rs, 'Normal', 'SuccessfulCreate', `Created pod: ${created.metadata?.name}`);
      await this.pods.waitForWrite(created);
    }
  }

  private async deletePods(rs: KubeObject, active: KubeObject[], count: number): Promise<void> {
    const victims = [...active].sort(compareForDeletion).slice(0, count);
    for (const pod of victims) {
      this.ctx.log(`replicaset: deleting pod ${pod.metadata?.namespace}/${pod.metadata?.name}`);
      try {
        const res = await this.ctx.api.delete(this.pods.info, pod.metadata?.namespace, pod.metadata!.name!, { preconditions: { uid: pod.metadata?.uid } });
        if (res) this.recorder.event(rs, 'Normal', 'SuccessfulDelete', `Deleted pod: ${pod.metadata?.name}`);
        if (res?.kind === 'Pod') await this.pods.waitForWrite(res);
        else await this.pods.waitForGone(pod.metadata?.namespace, pod.metadata!.name!, pod.metadata?.uid);
      } catch (err) {
        if (!isStatus(err, 404, 409)) throw err;
      }
    }
  }

  private async updateStatus(namespace: string, name: string): Promise<void> {
    const rs = this.sets.get(namespace, name);
    if (!rs) return;
    const owned = this.pods.list(namespace).filter((p) => isControlledBy(p, rs) && isPodActive(p));
    const minReady = num(spec(rs).minReadySeconds, 0);
    const templateLabels = podTemplate(rs).metadata.labels as Record<string, string> | undefined;
    const fully = owned.filter((p) => Object.entries(templateLabels ?? {}).every(([k, v]) => p.metadata?.labels?.[k] === v));
    const next: Record<string, unknown> = {
      ...status(rs),
      replicas: owned.length,
      fullyLabeledReplicas: fully.length,
      readyReplicas: owned.filter(isPodReady).length,
      availableReplicas: owned.filter((p) => isPodAvailable(p, minReady)).length,
      observedGeneration: rs.metadata?.generation ?? 0,
    };
    for (const f of ['readyReplicas', 'availableReplicas', 'fullyLabeledReplicas']) if (next[f] === 0) delete next[f];
    if (minReady > 0) {
      const waits = owned.map((p) => msUntilAvailable(p, minReady)).filter((ms): ms is number => ms !== undefined && ms > 0);
      if (waits.length > 0) this.enqueue(`${namespace}/${name}`, Math.min(...waits) + 5);
    }
    if (deepEqual(next, status(rs))) return;
    const updated = clone(rs);
    updated.status = next;
    try {
      const written = await this.ctx.api.update(this.sets.info, updated, 'status');
      await this.sets.waitForWrite(written);
    } catch (err) {
      if (isStatus(err, 404)) return;
      throw err;
    }
  }
}

/** controller.ActivePods order: the pods to delete first come first. */
export function compareForDeletion(a: KubeObject, b: KubeObject): number {
  const assigned = (p: KubeObject) => (str(spec(p).nodeName) ? 1 : 0);
  if (assigned(a) !== assigned(b)) return assigned(a) - assigned(b);
  const phaseRank = (p: KubeObject) => ({ Pending: 0, Unknown: 1, Running: 2 })[podPhase(p)] ?? 0;
  if (phaseRank(a) !== phaseRank(b)) return phaseRank(a) - phaseRank(b);
  const ready = (p: KubeObject) => (isPodReady(p) ? 1 : 0);
  if (ready(a) !== ready(b)) return ready(a) - ready(b);
  const created = (p: KubeObject) => Date.parse(p.metadata?.creationTimestamp ?? '') || 0;
  if (created(a) !== created(b)) return created(b) - created(a);
  return (a.metadata?.name ?? '') < (b.metadata?.name ?? '') ? 1 : -1;
}
