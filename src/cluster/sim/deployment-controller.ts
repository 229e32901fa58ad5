/**
 * The Deployment controller (pkg/controller/deployment), as an API client:
 * - owns ReplicaSets named `<deployment>-<pod-template-hash>`; the hash labels the RS, its selector and
 *   its pod template; annotations deployment.kubernetes.io/revision, desired-replicas, max-replicas;
 * - RollingUpdate (maxSurge / maxUnavailable, 25% by default): scale the new RS up within maxSurge,
 *   old ones down keeping minAvailable, unhealthy old replicas first; Recreate: old RSs to 0, wait for
 *   their pods to be gone, then the new RS;
 * - old RSs with no replicas beyond revisionHistoryLimit (default 10) are deleted;
 * - status: observedGeneration, replicas, updatedReplicas, readyReplicas, availableReplicas,
 *   unavailableReplicas, collisionCount, conditions Available (MinimumReplicasAvailable /
 *   MinimumReplicasUnavailable) and Progressing (NewReplicaSetCreated, FoundNewReplicaSet,
 *   ReplicaSetUpdated, NewReplicaSetAvailable, ProgressDeadlineExceeded) with the real messages;
 *   the Deployment's revision annotation is written with the status, as the real controller does.
 * Paused deployments and deployments being deleted only get their status synced.
 * Events (source deployment-controller) on the Deployment: ScalingReplicaSet "Scaled up replica set
 * <rs> from <old> to <new>" (or down) for each change of a ReplicaSet's replicas, as scaleReplicaSet
 * and getNewReplicaSet record it.
 */
import type { KubeObject } from '../../model/object-key.js';
import { isObject } from '../../model/object-key.js';
import type { Informer } from '../../kube/informer.js';
import {
  clone,
  condition,
  conditions,
  controllerRef,
  deepEqual,
  intOrPercent,
  isBeingDeleted,
  isControlledBy,
  isPodTerminal,
  newControllerRef,
  now,
  num,
  selectorMatches,
  spec,
  status,
  str,
  templateHash,
  asGoTemplate,
  type Condition,
} from './objects.js';
import type { CoreEventRecorder } from './events.js';
import { isStatus, type SimContext, type WorkRunner } from './runtime.js';

export const POD_TEMPLATE_HASH = 'pod-template-hash';
export const REVISION_ANNOTATION = 'deployment.kubernetes.io/revision';
const DESIRED_REPLICAS = 'deployment.kubernetes.io/desired-replicas';
const MAX_REPLICAS = 'deployment.kubernetes.io/max-replicas';
/** Annotations of the Deployment not copied to its ReplicaSets (deploymentutil.skipCopyAnnotation). */
const SKIPPED_ANNOTATIONS = new Set([
  'kubectl.kubernetes.io/last-applied-configuration',
  REVISION_ANNOTATION,
  'deployment.kubernetes.io/revision-history',
  DESIRED_REPLICAS,
  MAX_REPLICAS,
  'deprecated.deployment.rollback.to',
]);

export class DeploymentController {
  private readonly enqueue: (key: string, delayMs?: number) => void;
  private readonly recorder: CoreEventRecorder;

  private constructor(
    private readonly ctx: SimContext,
    runner: WorkRunner,
    private readonly deployments: Informer,
    private readonly sets: Informer,
    private readonly pods: Informer,
  ) {
    this.enqueue = runner.register('deployment', (key) => this.sync(key));
    this.recorder = ctx.events.recorder({ component: 'deployment-controller' });
  }

  static async start(ctx: SimContext, runner: WorkRunner): Promise<DeploymentController | undefined> {
    const [deployments, sets, pods] = await Promise.all([
      ctx.informers.forKind('Deployment', 'apps/v1'),
      ctx.informers.forKind('ReplicaSet', 'apps/v1'),
      ctx.informers.forKind('Pod', 'v1'),
    ]);
    if (!deployments || !sets || !pods) return undefined;
    const c = new DeploymentController(ctx, runner, deployments, sets, pods);
    deployments.subscribe((type, d) => {
      if (type !== 'DELETED') c.enqueue(`${d.metadata!.namespace}/${d.metadata!.name}`);
    });
    sets.subscribe((_type, rs, old) => {
      for (const r of old ? [rs, old] : [rs]) {
        const ref = controllerRef(r);
        if (ref?.kind === 'Deployment') c.enqueue(`${r.metadata!.namespace}/${ref.name}`);
        else if (!ref)
          for (const d of deployments.list(r.metadata?.namespace))
            if (selectorMatches(spec(d).selector, r.metadata?.labels)) c.enqueue(`${d.metadata!.namespace}/${d.metadata!.name}`);
      }
    });
    // Recreate waits for the old pods to be gone.
    pods.onChange((type, pod) => {
      if (type !== 'DELETED' && !isPodTerminal(pod)) return;
      const rsRef = controllerRef(pod);
      const rs = rsRef?.kind === 'ReplicaSet' ? sets.get(pod.metadata?.namespace, rsRef.name) : undefined;
      const dRef = rs ? controllerRef(rs) : undefined;
      if (dRef?.kind === 'Deployment') c.enqueue(`${pod.metadata!.namespace}/${dRef.name}`);
    });
    return c;
  }

  private replicas(d: KubeObject): number {
    return num(spec(d).replicas, 1);
  }

  private strategy(d: KubeObject): { type: string; maxSurge: number; maxUnavailable: number } {
    const s = isObject(spec(d).strategy) ? (spec(d).strategy as Record<string, unknown>) : {};
    const type = str(s.type, 'RollingUpdate');
    if (type === 'Recreate') return { type, maxSurge: 0, maxUnavailable: 0 };
    const ru = isObject(s.rollingUpdate) ? s.rollingUpdate : {};
    const desired = this.replicas(d);
    const maxSurge = intOrPercent(ru.maxSurge ?? '25%', desired, true, 0);
    let maxUnavailable = intOrPercent(ru.maxUnavailable ?? '25%', desired, false, 0);
    if (maxSurge === 0 && maxUnavailable === 0) maxUnavailable = 1;
    return { type, maxSurge, maxUnavailable: Math.min(maxUnavailable, desired) };
  }

  private async sync(key: string): Promise<void> {
    const [namespace, name] = key.split('/') as [string, string];
    const d = this.deployments.get(namespace, name);
    if (!d) return;
    const rsList = await this.replicaSetsFor(d);
    if (isBeingDeleted(d) || spec(d).paused === true) {
      await this.syncStatus(d, rsList, this.findNewReplicaSet(d, rsList));
      return;
    }
    if (this.strategy(d).type === 'Recreate') await this.rolloutRecreate(d, rsList);
    else await this.rolloutRolling(d, rsList);
  }

  /** getReplicaSetsForDeployment: controlled ReplicaSets, adopting matching orphans. */
  private async replicaSetsFor(d: KubeObject): Promise<KubeObject[]> {
    const result: KubeObject[] = [];
    for (const rs of this.sets.list(d.metadata?.namespace)) {
      if (isControlledBy(rs, d)) {
        result.push(rs);
        continue;
      }
      if (controllerRef(rs) || isBeingDeleted(d) || isBeingDeleted(rs) || !selectorMatches(spec(d).selector, rs.metadata?.labels)) continue;
      try {
        const adopted = await this.ctx.api.patch(this.sets.info, rs.metadata?.namespace, rs.metadata!.name!, 'strategic', {
          metadata: { ownerReferences: [newControllerRef(d)], uid: rs.metadata?.uid },
        });
        await this.sets.waitForWrite(adopted);
        result.push(adopted);
      } catch (err) {
        if (!isStatus(err, 404, 409, 422)) throw err;
      }
    }
    return result;
  }

  private templateWithoutHash(template: unknown): unknown {
    const t = clone(asGoTemplate(isObject(template) ? template : {})) as Record<string, unknown>;
    const md = isObject(t.metadata) ? t.metadata : undefined;
    if (md && isObject(md.labels)) {
      delete md.labels[POD_TEMPLATE_HASH];
      if (Object.keys(md.labels).length === 0) delete md.labels;
    }
    return t;
  }

  /** FindNewReplicaSet: the oldest ReplicaSet whose template equals the Deployment's, hash label aside. */
  private findNewReplicaSet(d: KubeObject, rsList: KubeObject[]): KubeObject | undefined {
    const want = this.templateWithoutHash(spec(d).template);
    return [...rsList].sort(byCreation).find((rs) => deepEqual(this.templateWithoutHash(spec(rs).template), want));
  }

  private revisionOf(obj: KubeObject): number {
    return Number(obj.metadata?.annotations?.[REVISION_ANNOTATION] ?? '0') || 0;
  }

  private async rolloutRolling(d: KubeObject, rsList: KubeObject[]): Promise<void> {
    const newRS = await this.getNewReplicaSet(d, rsList, true);
    if (!newRS) return;
    const oldRSs = rsList.filter((rs) => rs.metadata?.uid !== newRS.metadata?.uid);
    const all = [newRS, ...oldRSs];
    const desired = this.replicas(d);
    const { maxSurge, maxUnavailable } = this.strategy(d);

    // reconcileNewReplicaSet
    const newReplicas = num(spec(newRS).replicas, 0);
    if (newReplicas !== desired) {
      let target: number;
      if (newReplicas > desired) target = desired;
      else {
        const current = all.reduce((n, rs) => n + num(spec(rs).replicas, 0), 0);
        const maxTotal = desired + maxSurge;
        target = current >= maxTotal ? newReplicas : newReplicas + Math.min(maxTotal - current, desired - newReplicas);
      }
      if (target !== newReplicas) {
        await this.scale(newRS, target, d);
        return;
      }
    }

    // reconcileOldReplicaSets
    const activeOld = oldRSs.filter((rs) => num(spec(rs).replicas, 0) > 0).sort(byCreation);
    if (activeOld.length > 0) {
      const allPods = all.reduce((n, rs) => n + num(spec(rs).replicas, 0), 0);
      const minAvailable = desired - maxUnavailable;
      const newUnavailable = num(spec(newRS).replicas, 0) - num(status(newRS).availableReplicas, 0);
      const maxScaledDown = allPods - minAvailable - newUnavailable;
      if (maxScaledDown > 0) {
        let scaledDown = 0;
        // cleanupUnhealthyReplicas
        for (const rs of activeOld) {
          if (scaledDown >= maxScaledDown) break;
          const replicas = num(spec(rs).replicas, 0);
          const available = num(status(rs).availableReplicas, 0);
          if (replicas === available) continue;
          const by = Math.min(maxScaledDown - scaledDown, replicas - available);
          await this.scale(rs, replicas - by, d);
          rs.spec = { ...spec(rs), replicas: replicas - by };
          scaledDown += by;
        }
        // scaleDownOldReplicaSetsForRollingUpdate
        const available = all.reduce((n, rs) => n + num(status(rs).availableReplicas, 0), 0);
        let budget = Math.max(0, available - minAvailable);
        for (const rs of activeOld) {
          if (budget <= 0) break;
          const replicas = num(spec(rs).replicas, 0);
          if (replicas === 0) continue;
          const by = Math.min(replicas, budget);
          await this.scale(rs, replicas - by, d);
          budget -= by;
          scaledDown += by;
        }
        if (scaledDown > 0) return;
      }
    }
    await this.finishSync(d, all, newRS, oldRSs);
  }

  private async rolloutRecreate(d: KubeObject, rsList: KubeObject[]): Promise<void> {
    let newRS = this.findNewReplicaSet(d, rsList);
    const oldRSs = rsList.filter((rs) => rs.metadata?.uid !== newRS?.metadata?.uid);
    const activeOld = oldRSs.filter((rs) => num(spec(rs).replicas, 0) > 0);
    if (activeOld.length > 0) {
      for (const rs of activeOld) await this.scale(rs, 0, d);
      return;
    }
    const oldUids = new Set(oldRSs.map((rs) => rs.metadata?.uid));
    const oldPodsRunning = this.pods.list(d.metadata?.namespace).some((p) => oldUids.has(controllerRef(p)?.uid) && !isPodTerminal(p));
    if (oldPodsRunning) {
      await this.syncStatus(d, rsList, newRS);
      return;
    }
    newRS = await this.getNewReplicaSet(d, rsList, true);
    if (!newRS) return;
    if (num(spec(newRS).replicas, 0) !== this.replicas(d)) {
      await this.scale(newRS, this.replicas(d), d);
      return;
    }
    await this.finishSync(d, [newRS, ...oldRSs], newRS, oldRSs);
  }

  private async finishSync(d: KubeObject, all: KubeObject[], newRS: KubeObject, oldRSs: KubeObject[]): Promise<void> {
    const st = this.calculateStatus(d, all, newRS);
    if (this.complete(d, st)) await this.cleanup(d, oldRSs);
    await this.syncStatus(d, all, newRS);
  }

  /** getNewReplicaSet: finds or creates the new ReplicaSet and syncs the revision annotations. */
  private async getNewReplicaSet(d: KubeObject, rsList: KubeObject[], create: boolean): Promise<KubeObject | undefined> {
    const existing = this.findNewReplicaSet(d, rsList);
    const oldRSs = rsList.filter((rs) => rs.metadata?.uid !== existing?.metadata?.uid);
    const maxOld = Math.max(0, ...oldRSs.map((rs) => this.revisionOf(rs)));
    const newRevision = String(maxOld + 1);
    const desired = this.replicas(d);
    const { maxSurge } = this.strategy(d);
    if (existing) {
      const ann = existing.metadata?.annotations ?? {};
      const wantAnn = { ...ann };
      if (this.revisionOf(existing) <= maxOld) wantAnn[REVISION_ANNOTATION] = newRevision;
      const minReady = num(spec(d).minReadySeconds, 0);
      if (!deepEqual(wantAnn, ann) || num(spec(existing).minReadySeconds, 0) !== minReady) {
        const next = clone(existing);
        next.metadata!.annotations = wantAnn;
        next.spec = { ...spec(next), minReadySeconds: minReady };
        const written = await this.ctx.api.update(this.sets.info, next);
        await this.sets.waitForWrite(written);
        return written;
      }
      const revision = ann[REVISION_ANNOTATION] ?? newRevision;
      const statusConditions = conditions(d);
      let found: Condition[] | undefined;
      if (!statusConditions.some((c) => c.type === 'Progressing')) {
        found = setDeploymentCondition(statusConditions, {
          type: 'Progressing',
          status: 'True',
          reason: 'FoundNewReplicaSet',
          message: `Found new replica set "${existing.metadata?.name}"`,
        });
      }
      if (found || d.metadata?.annotations?.[REVISION_ANNOTATION] !== revision)
        await this.writeStatus(d, { ...status(d), ...(found ? { conditions: found } : {}) }, revision);
      return existing;
    }
    if (!create) return undefined;
    const collisionCount = num(status(d).collisionCount, 0);
    const template = clone(isObject(spec(d).template) ? spec(d).template : {}) as Record<string, unknown>;
    const hash = templateHash(template, collisionCount || undefined);
    const md = isObject(template.metadata) ? template.metadata : (template.metadata = {});
    md.labels = { ...(isObject(md.labels) ? md.labels : {}), [POD_TEMPLATE_HASH]: hash };
    const selector = clone(isObject(spec(d).selector) ? spec(d).selector : {}) as Record<string, unknown>;
    selector.matchLabels = { ...(isObject(selector.matchLabels) ? selector.matchLabels : {}), [POD_TEMPLATE_HASH]: hash };
    const annotations: Record<string, string> = {};
    for (const [k, v] of Object.entries(d.metadata?.annotations ?? {})) if (!SKIPPED_ANNOTATIONS.has(k)) annotations[k] = v;
    annotations[DESIRED_REPLICAS] = String(desired);
    annotations[MAX_REPLICAS] = String(desired + maxSurge);
    annotations[REVISION_ANNOTATION] = newRevision;
    const current = rsList.reduce((n, rs) => n + num(spec(rs).replicas, 0), 0);
    const replicas = this.strategy(d).type === 'Recreate' ? desired : Math.max(0, Math.min(desired + maxSurge - current, desired));
    const rsName = `${d.metadata!.name}-${hash}`;
    const rs: KubeObject = {
      metadata: {
        name: rsName,
        namespace: d.metadata?.namespace,
        labels: md.labels as Record<string, string>,
        annotations,
        ownerReferences: [newControllerRef(d)],
      },
      spec: { replicas, minReadySeconds: num(spec(d).minReadySeconds, 0), selector, template },
    };
    let created: KubeObject;
    try {
      created = await this.ctx.api.create(this.sets.info, d.metadata?.namespace, rs);
    } catch (err) {
      if (!isStatus(err, 409)) throw err;
      const clash = await this.ctx.api.get(this.sets.info, d.metadata?.namespace, rsName);
      if (clash && isControlledBy(clash, d) && deepEqual(this.templateWithoutHash(spec(clash).template), this.templateWithoutHash(spec(d).template)))
        return clash;
      // A hash collision: bump collisionCount so that the next sync computes another name.
      await this.writeStatus(d, { ...status(d), collisionCount: collisionCount + 1 });
      return undefined;
    }
    this.ctx.log(`deployment: created replicaset ${d.metadata?.namespace}/${rsName}`);
    if (replicas > 0) this.recorder.event(d, 'Normal', 'ScalingReplicaSet', `Scaled up replica set ${rsName} from 0 to ${replicas}`);
    await this.sets.waitForWrite(created);
    const cond = setDeploymentCondition(conditions(d), {
      type: 'Progressing',
      status: 'True',
      reason: 'NewReplicaSetCreated',
      message: `Created new replica set "${rsName}"`,
    });
    await this.writeStatus(d, { ...status(d), conditions: cond }, newRevision);
    return created;
  }

  private async scale(rs: KubeObject, replicas: number, d: KubeObject): Promise<void> {
    const next = clone(this.sets.get(rs.metadata?.namespace, rs.metadata!.name!) ?? rs);
    const oldScale = num(spec(next).replicas, 1);
    next.spec = { ...spec(next), replicas };
    next.metadata!.annotations = {
      ...(next.metadata?.annotations ?? {}),
      [DESIRED_REPLICAS]: String(this.replicas(d)),
      [MAX_REPLICAS]: String(this.replicas(d) + this.strategy(d).maxSurge),
    };
    this.ctx.log(`deployment: scaling replicaset ${rs.metadata?.namespace}/${rs.metadata?.name} to ${replicas}`);
    const written = await this.ctx.api.update(this.sets.info, next);
    if (oldScale !== replicas)
      this.recorder.event(
        d,
        'Normal',
        'ScalingReplicaSet',
        `Scaled ${oldScale < replicas ? 'up' : 'down'} replica set ${rs.metadata?.name} from ${oldScale} to ${replicas}`,
      );
    await this.sets.waitForWrite(written);
    const latest = this.deployments.get(d.metadata?.namespace, d.metadata!.name!);
    if (latest) {
      const all = await this.replicaSetsFor(latest);
      await this.syncStatus(latest, all, this.findNewReplicaSet(latest, all));
    }
  }

  private async cleanup(d: KubeObject, oldRSs: KubeObject[]): Promise<void> {
    const limit = num(spec(d).revisionHistoryLimit, 10);
    const cleanable = oldRSs.filter(
      (rs) => num(spec(rs).replicas, 0) === 0 && num(status(rs).replicas, 0) === 0 && !isBeingDeleted(rs) && rs.metadata?.deletionTimestamp === undefined,
    );
    const diff = cleanable.length - limit;
    if (diff <= 0) return;
    const byRevision = [...cleanable].sort((a, b) => this.revisionOf(a) - this.revisionOf(b) || byCreation(a, b));
    for (const rs of byRevision.slice(0, diff)) {
      this.ctx.log(`deployment: deleting old replicaset ${rs.metadata?.namespace}/${rs.metadata?.name}`);
      await this.ctx.api
        .delete(this.sets.info, rs.metadata?.namespace, rs.metadata!.name!, { preconditions: { uid: rs.metadata?.uid } })
        .catch((err: unknown) => {
          if (!isStatus(err, 404, 409)) throw err;
        });
    }
  }

  private calculateStatus(d: KubeObject, all: KubeObject[], newRS: KubeObject | undefined): Record<string, unknown> {
    const sum = (list: KubeObject[], f: (rs: KubeObject) => number) => list.reduce((n, rs) => n + f(rs), 0);
    const available = sum(all, (rs) => num(status(rs).availableReplicas, 0));
    const total = sum(all, (rs) => num(spec(rs).replicas, 0));
    const next: Record<string, unknown> = {
      observedGeneration: d.metadata?.generation ?? 0,
      replicas: sum(all, (rs) => num(status(rs).replicas, 0)),
      updatedReplicas: newRS ? num(status(newRS).replicas, 0) : 0,
      readyReplicas: sum(all, (rs) => num(status(rs).readyReplicas, 0)),
      availableReplicas: available,
      unavailableReplicas: Math.max(0, total - available),
    };
    if (status(d).collisionCount !== undefined) next.collisionCount = status(d).collisionCount;
    let conds = conditions(d);
    const minAvailable = this.replicas(d) - this.strategy(d).maxUnavailable;
    conds =
      available >= minAvailable
        ? setDeploymentCondition(conds, {
            type: 'Available',
            status: 'True',
            reason: 'MinimumReplicasAvailable',
            message: 'Deployment has minimum availability.',
          })
        : setDeploymentCondition(conds, {
            type: 'Available',
            status: 'False',
            reason: 'MinimumReplicasUnavailable',
            message: 'Deployment does not have minimum availability.',
          });
    next.conditions = conds;
    return next;
  }

  private complete(d: KubeObject, st: Record<string, unknown>): boolean {
    const desired = this.replicas(d);
    return (
      st.updatedReplicas === desired &&
      st.replicas === desired &&
      st.availableReplicas === desired &&
      num(st.observedGeneration, 0) >= (d.metadata?.generation ?? 0)
    );
  }

  /** syncRolloutStatus. */
  private async syncStatus(d: KubeObject, all: KubeObject[], newRS: KubeObject | undefined): Promise<void> {
    const next = this.calculateStatus(d, all, newRS);
    const current = condition(d, 'Progressing');
    const progressDeadline = spec(d).progressDeadlineSeconds;
    const hasDeadline = progressDeadline === undefined || num(progressDeadline, 600) !== 2147483647;
    const completed = next.replicas === next.updatedReplicas && current?.reason === 'NewReplicaSetAvailable';
    if (hasDeadline && !completed && !isBeingDeleted(d)) {
      const rsName = newRS?.metadata?.name;
      let conds = next.conditions as Condition[];
      const prev = status(d);
      if (this.complete(d, next)) {
        conds = setDeploymentCondition(conds, {
          type: 'Progressing',
          status: 'True',
          reason: 'NewReplicaSetAvailable',
          message: rsName ? `ReplicaSet "${rsName}" has successfully progressed.` : `Deployment "${d.metadata?.name}" has successfully progressed.`,
        });
      } else if (
        num(next.updatedReplicas, 0) > num(prev.updatedReplicas, 0) ||
        num(next.replicas, 0) - num(next.updatedReplicas, 0) < num(prev.replicas, 0) - num(prev.updatedReplicas, 0) ||
        num(next.readyReplicas, 0) > num(prev.readyReplicas, 0) ||
        num(next.availableReplicas, 0) > num(prev.availableReplicas, 0)
      ) {
        const cond: Condition = {
          type: 'Progressing',
          status: 'True',
          reason: 'ReplicaSetUpdated',
          message: rsName ? `ReplicaSet "${rsName}" is progressing.` : `Deployment "${d.metadata?.name}" is progressing.`,
        };
        const at = now();
        conds = [
          ...conds.filter((c) => c.type !== 'Progressing'),
          {
            type: cond.type,
            status: cond.status,
            lastUpdateTime: at,
            lastTransitionTime: current?.status === 'True' ? current.lastTransitionTime : at,
            reason: cond.reason,
            message: cond.message,
          },
        ];
      } else if (current && current.status === 'True' && current.reason !== 'NewReplicaSetAvailable') {
        const deadlineMs = num(progressDeadline, 600) * 1000;
        const since = Date.parse(current.lastUpdateTime ?? current.lastTransitionTime ?? '');
        if (Number.isFinite(since) && since + deadlineMs <= Date.now()) {
          conds = setDeploymentCondition(conds, {
            type: 'Progressing',
            status: 'False',
            reason: 'ProgressDeadlineExceeded',
            message: rsName ? `ReplicaSet "${rsName}" has timed out progressing.` : `Deployment "${d.metadata?.name}" has timed out progressing.`,
          });
        } else if (Number.isFinite(since)) {
          this.enqueue(`${d.metadata?.namespace}/${d.metadata?.name}`, since + deadlineMs - Date.now() + 5);
        }
      }
      next.conditions = conds;
    }
    if (deepEqual(next, status(d))) return;
    await this.writeStatus(d, next);
  }

  /**
   * UpdateStatus. The real deployments/status strategy keeps metadata changes, and the controller
   * writes the revision annotation that way; a server that drops them gets a metadata patch after.
   */
  private async writeStatus(d: KubeObject, next: Record<string, unknown>, revision?: string): Promise<void> {
    const latest = this.deployments.get(d.metadata?.namespace, d.metadata!.name!) ?? d;
    const updated = clone(latest);
    updated.status = next;
    if (revision !== undefined) updated.metadata!.annotations = { ...(updated.metadata?.annotations ?? {}), [REVISION_ANNOTATION]: revision };
    let written: KubeObject;
    try {
      written = await this.ctx.api.update(this.deployments.info, updated, 'status');
    } catch (err) {
      if (isStatus(err, 404)) return;
      throw err;
    }
    if (revision !== undefined && written.metadata?.annotations?.[REVISION_ANNOTATION] !== revision) {
      written = await this.ctx.api.patch(this.deployments.info, d.metadata?.namespace, d.metadata!.name!, 'merge', {
        metadata: { annotations: { [REVISION_ANNOTATION]: revision } },
      });
    }
    await this.deployments.waitForWrite(written);
  }
}

function byCreation(a: KubeObject, b: KubeObject): number {
  const ta = Date.parse(a.metadata?.creationTimestamp ?? '') || 0;
  const tb = Date.parse(b.metadata?.creationTimestamp ?? '') || 0;
  if (ta !== tb) return ta - tb;
  return (a.metadata?.name ?? '') < (b.metadata?.name ?? '') ? -1 : 1;
}

/** deploymentutil.SetDeploymentCondition: unchanged status+reason keeps the old one; otherwise the condition moves to the end. */
export function setDeploymentCondition(list: Condition[], next: Condition): Condition[] {
  const existing = list.find((c) => c.type === next.type);
  if (existing && existing.status === next.status && existing.reason === next.reason) return list;
  const at = now();
  const cond: Condition = {
    type: next.type,
    status: next.status,
    lastUpdateTime: at,
    lastTransitionTime: existing && existing.status === next.status ? existing.lastTransitionTime : at,
    reason: next.reason,
    message: next.message,
  };
  return [...list.filter((c) => c.type !== next.type), cond];
}
