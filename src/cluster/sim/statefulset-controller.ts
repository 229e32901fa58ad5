/**
 * The StatefulSet controller (pkg/controller/statefulset), as an API client:
 * - pods `<set>-<ordinal>` (from spec.ordinals.start), with labels controller-revision-hash,
 *   statefulset.kubernetes.io/pod-name and apps.kubernetes.io/pod-index, hostname = pod name,
 *   subdomain = serviceName, and one volume per volumeClaimTemplate pointing at its PVC;
 * - PVCs `<template>-<set>-<ordinal>` are created before their pod, labelled with the template's labels
 *   and the set's matchLabels; their ownerReferences follow persistentVolumeClaimRetentionPolicy as
 *   isClaimOwnerUpToDate / updateClaimOwnerRefForSetAndPod do: whenDeleted=Delete -> controller ref to
 *   the set; whenScaled=Delete -> controller ref to the pod once its ordinal is out of range (set just
 *   before the pod is deleted, so the garbage collector removes the PVC after the pod);
 * - OrderedReady (default): one pod at a time, the next only when the previous is Running and Ready
 *   (and available for minReadySeconds); scale-down removes the highest ordinal first, one at a time,
 *   waiting for it to be gone; Parallel: all at once;
 * - terminal (Succeeded/Failed) pods are deleted and recreated; a RollingUpdate deletes pods at an
 *   older revision from the highest ordinal down to the partition, one at a time;
 * - ControllerRevisions `<set>-<hash>` when the cluster serves them;
 * - status: replicas, readyReplicas, currentReplicas, updatedReplicas, availableReplicas,
 *   currentRevision, updateRevision, collisionCount, observedGeneration.
 * Events (source statefulset-controller) on the set, as realStatefulPodControl records them:
 * SuccessfulCreate "create Claim <claim> Pod <pod> in StatefulSet <set> success", SuccessfulCreate
 * "create Pod <pod> in StatefulSet <set> successful", SuccessfulDelete "delete Pod ... successful".
 * Simplification: pods are always created from the current template (the update revision), also below
 * a rolling-update partition.
 */
import type { KubeObject } from '../../model/object-key.js';
import { isObject } from '../../model/object-key.js';
import type { ResourceInfo } from '../../kube/discovery.js';
import type { Informer } from '../../kube/informer.js';
import {
  clone,
  controllerRef,
  isBeingDeleted,
  isControlledBy,
  isPodAvailable,
  isPodReady,
  isPodTerminal,
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
  fnv32,
  goJson,
  safeEncode,
} from './objects.js';
import type { CoreEventRecorder } from './events.js';
import { isStatus, statusMessage, type SimContext, type WorkRunner } from './runtime.js';
import { KubeApiError } from '../../kube/client.js';

export const REVISION_LABEL = 'controller-revision-hash';
export const POD_NAME_LABEL = 'statefulset.kubernetes.io/pod-name';
export const POD_INDEX_LABEL = 'apps.kubernetes.io/pod-index';
const ORDINAL = /^(.*)-(\d+)$/;

/**
 * The ControllerRevision name suffix kube-controller-manager gives a StatefulSet's template:
 * history.HashControllerRevision of getPatch(set), i.e. FNV-1 of the JSON patch
 * `{"spec":{"template":{...,"$patch":"replace"}}}` as Go encodes it (a zero `creationTimestamp` of the
 * template's metadata is written as null), followed by the collision count in decimal (always passed).
 * Same names on both clusters make triggers on `status.currentRevision` and on pods'
 * controller-revision-hash label transfer between them.
 */
export function revisionHash(template: unknown, collisionCount: number): string {
  const t = isObject(template) ? clone(template) : {};
  const metadata = isObject(t.metadata) ? t.metadata : {};
  t.metadata = { creationTimestamp: null, ...metadata };
  t.$patch = 'replace';
  return safeEncode(String(fnv32(goJson({ spec: { template: t } }) + String(collisionCount))));
}

function ordinalOf(set: KubeObject, pod: KubeObject): number {
  const m = ORDINAL.exec(pod.metadata?.name ?? '');
  return m && m[1] === set.metadata?.name ? Number(m[2]) : -1;
}

function isRunningAndReady(pod: KubeObject): boolean {
  return podPhase(pod) === 'Running' && isPodReady(pod);
}

interface RetentionPolicy {
  whenDeleted: 'Retain' | 'Delete';
  whenScaled: 'Retain' | 'Delete';
}

export class StatefulSetController {
  private readonly enqueue: (key: string, delayMs?: number) => void;
  private readonly recorder: CoreEventRecorder;

  private constructor(
    private readonly ctx: SimContext,
    runner: WorkRunner,
    private readonly sets: Informer,
    private readonly pods: Informer,
    private readonly claims: Informer,
    private readonly revisions: ResourceInfo | undefined,
  ) {
    this.enqueue = runner.register('statefulset', (key) => this.sync(key));
    this.recorder = ctx.events.recorder({ component: 'statefulset-controller' });
  }

  static async start(ctx: SimContext, runner: WorkRunner): Promise<StatefulSetController | undefined> {
    const [sets, pods, claims] = await Promise.all([
      ctx.informers.forKind('StatefulSet', 'apps/v1'),
      ctx.informers.forKind('Pod', 'v1'),
      ctx.informers.forKind('PersistentVolumeClaim', 'v1'),
    ]);
    if (!sets || !pods || !claims) return undefined;
    const revisions = await ctx.client.resources.byKind('ControllerRevision', 'apps/v1');
    const c = new StatefulSetController(ctx, runner, sets, pods, claims, revisions);
    sets.subscribe((type, set) => {
      if (type !== 'DELETED') c.enqueue(`${set.metadata!.namespace}/${set.metadata!.name}`);
    });
    pods.subscribe((_type, pod, old) => {
      for (const p of old ? [pod, old] : [pod]) {
        const ref = controllerRef(p);
        if (ref?.kind === 'StatefulSet') c.enqueue(`${p.metadata!.namespace}/${ref.name}`);
        else if (!ref)
          for (const set of sets.list(p.metadata?.namespace))
            if (ordinalOf(set, p) >= 0 && selectorMatches(spec(set).selector, p.metadata?.labels))
              c.enqueue(`${set.metadata!.namespace}/${set.metadata!.name}`);
      }
    });
    claims.onChange((_type, pvc) => {
      for (const set of sets.list(pvc.metadata?.namespace)) {
        if (selectorMatches(spec(set).selector, pvc.metadata?.labels)) c.enqueue(`${set.metadata!.namespace}/${set.metadata!.name}`);
      }
    });
    return c;
  }

  private policy(set: KubeObject): RetentionPolicy {
    const p = isObject(spec(set).persistentVolumeClaimRetentionPolicy) ? (spec(set).persistentVolumeClaimRetentionPolicy as Record<string, unknown>) : {};
    return { whenDeleted: p.whenDeleted === 'Delete' ? 'Delete' : 'Retain', whenScaled: p.whenScaled === 'Delete' ? 'Delete' : 'Retain' };
  }

  /**
   * UpdateStatefulSet: as kube-controller-manager, the status written at the end of a sync is computed
   * from the pods the sync started with (a pod it created is not counted before the next sync, a pod it
   * deleted still is), so a real and an embedded cluster show a controller the same status writes.
   */
  private async sync(key: string): Promise<void> {
    const [namespace, name] = key.split('/') as [string, string];
    const set = this.sets.get(namespace, name);
    if (!set) return;
    const pods = await this.claimPods(set);
    const updateRevision = await this.ensureRevision(set);
    const currentRevision = str(status(set).currentRevision) || updateRevision;
    const deleting = isBeingDeleted(set);
    const updateDeletions = deleting ? 0 : await this.reconcilePods(set, pods, updateRevision);
    // Once past the "being deleted" check, KCM recounts the pods it sorted into replicas and condemned: valid ordinals only.
    const counted = deleting ? pods : pods.filter((p) => ordinalOf(set, p) >= 0);
    await this.updateStatus(set, counted, currentRevision, updateRevision, updateDeletions);
  }

  /** ClaimPods: controlled pods, plus adopted orphans named like members and matching the selector. */
  private async claimPods(set: KubeObject): Promise<KubeObject[]> {
    const result: KubeObject[] = [];
    for (const pod of this.pods.list(set.metadata?.namespace)) {
      if (isControlledBy(pod, set)) {
        result.push(pod);
        continue;
      }
      if (
        controllerRef(pod) ||
        isBeingDeleted(set) ||
        isBeingDeleted(pod) ||
        ordinalOf(set, pod) < 0 ||
        !selectorMatches(spec(set).selector, pod.metadata?.labels)
      )
        continue;
      try {
        const adopted = await this.ctx.api.patch(this.pods.info, pod.metadata?.namespace, pod.metadata!.name!, 'strategic', {
          metadata: { ownerReferences: [newControllerRef(set)], uid: pod.metadata?.uid },
        });
        await this.pods.waitForWrite(adopted);
        result.push(adopted);
      } catch (err) {
        if (!isStatus(err, 404, 409, 422)) throw err;
      }
    }
    return result;
  }

  /** The update revision's name; its ControllerRevision is created when the kind is served. */
  private async ensureRevision(set: KubeObject): Promise<string> {
    const template = spec(set).template;
    const collisionCount = num(status(set).collisionCount, 0);
    const hash = revisionHash(template, collisionCount);
    const name = `${set.metadata!.name}-${hash}`;
    if (!this.revisions || isBeingDeleted(set)) return name;
    const existing = await this.ctx.api.get(this.revisions, set.metadata?.namespace, name);
    if (existing) return name;
    const all = await this.ctx.api.list(this.revisions, set.metadata?.namespace);
    const mine = all.filter((r) => isControlledBy(r, set));
    const revision = Math.max(0, ...mine.map((r) => num(r.revision, 0))) + 1;
    const labels = { ...((podTemplate(set).metadata.labels as Record<string, string> | undefined) ?? {}), 'controller.kubernetes.io/hash': hash };
    const data = { spec: { template: { ...(isObject(template) ? clone(template) : {}), $patch: 'replace' } } };
    await this.ctx.api
      .create(this.revisions, set.metadata?.namespace, {
        metadata: { name, namespace: set.metadata?.namespace, labels, ownerReferences: [newControllerRef(set)] },
        data,
        revision,
      })
      .catch((err: unknown) => {
        if (!isStatus(err, 409)) throw err;
      });
    return name;
  }

  /** The pod work of one sync; returns how many pods it deleted for a rolling update (KCM's `status.CurrentReplicas--`). */
  private async reconcilePods(set: KubeObject, pods: KubeObject[], updateRevision: string): Promise<number> {
    const replicas = num(spec(set).replicas, 1);
    const start = isObject(spec(set).ordinals) ? num((spec(set).ordinals as Record<string, unknown>).start, 0) : 0;
    const monotonic = str(spec(set).podManagementPolicy, 'OrderedReady') !== 'Parallel';
    const minReady = num(spec(set).minReadySeconds, 0);
    const byOrdinal = new Map<number, KubeObject>();
    for (const p of pods) byOrdinal.set(ordinalOf(set, p), p);
    const setKey = `${set.metadata!.namespace}/${set.metadata!.name}`;

    let unhealthy: KubeObject | undefined;
    for (let ordinal = start; ordinal < start + replicas; ordinal++) {
      const pod = byOrdinal.get(ordinal);
      if (pod && isPodTerminal(pod)) {
        if (!isBeingDeleted(pod)) await this.deletePod(set, pod, `${pod.metadata?.name} is ${podPhase(pod)}`);
        if (monotonic) return 0;
        continue;
      }
      if (!pod) {
        await this.createPod(set, ordinal, updateRevision);
        if (monotonic) return 0;
        continue;
      }
      if (podPhase(pod) === 'Pending' || !podPhase(pod)) await this.createClaims(set, ordinal);
      await this.updateClaimOwners(set, pod, true);
      if (isBeingDeleted(pod)) {
        unhealthy ??= pod;
        if (monotonic) return 0;
        continue;
      }
      if (!isRunningAndReady(pod)) {
        unhealthy ??= pod;
        if (monotonic) return 0;
        continue;
      }
      if (!isPodAvailable(pod, minReady)) {
        unhealthy ??= pod;
        if (monotonic) {
          this.enqueue(setKey, (msUntilAvailable(pod, minReady) ?? 0) + 5);
          return 0;
        }
      }
    }

    const condemned = pods.filter((p) => {
      const o = ordinalOf(set, p);
      return o < start || o >= start + replicas;
    });
    condemned.sort((a, b) => ordinalOf(set, b) - ordinalOf(set, a));
    const firstUnhealthyCondemned = [...condemned].reverse().find((p) => !isRunningAndReady(p) || isBeingDeleted(p));
    for (const pod of condemned) {
      if (isBeingDeleted(pod)) {
        if (monotonic) return 0;
        continue;
      }
      if (monotonic && (unhealthy || (!isRunningAndReady(pod) && pod !== firstUnhealthyCondemned))) return 0;
      await this.updateClaimOwners(set, pod, false);
      await this.deletePod(set, pod, `scaling ${set.metadata?.name} down`);
      if (monotonic) return 0;
    }

    const strategy = isObject(spec(set).updateStrategy) ? (spec(set).updateStrategy as Record<string, unknown>) : {};
    if (str(strategy.type, 'RollingUpdate') !== 'RollingUpdate') return 0;
    const partition = isObject(strategy.rollingUpdate) ? num(strategy.rollingUpdate.partition, 0) : 0;
    for (let ordinal = start + replicas - 1; ordinal >= start + partition; ordinal--) {
      const pod = byOrdinal.get(ordinal);
      if (!pod) return 0;
      if (pod.metadata?.labels?.[REVISION_LABEL] !== updateRevision && !isBeingDeleted(pod)) {
        await this.deletePod(set, pod, `updating to revision ${updateRevision}`);
        return 1;
      }
      if (isBeingDeleted(pod) || !isRunningAndReady(pod)) return 0;
    }
    return 0;
  }

  private claimName(set: KubeObject, template: Record<string, unknown>, ordinal: number): string {
    const md = isObject(template.metadata) ? template.metadata : {};
    return `${str(md.name)}-${set.metadata!.name}-${ordinal}`;
  }

  private templates(set: KubeObject): Array<Record<string, unknown>> {
    const t = spec(set).volumeClaimTemplates;
    return Array.isArray(t) ? t.filter(isObject) : [];
  }

  /** createPersistentVolumeClaims: missing PVCs of one ordinal; fails while one of them is being deleted. */
  private async createClaims(set: KubeObject, ordinal: number): Promise<void> {
    const ns = set.metadata?.namespace;
    for (const template of this.templates(set)) {
      const name = this.claimName(set, template, ordinal);
      const cached = this.claims.get(ns, name);
      if (cached) {
        if (isBeingDeleted(cached)) throw new Error(`PVC ${ns}/${name} is being deleted`);
        continue;
      }
      const md = isObject(template.metadata) ? clone(template.metadata) : {};
      const selectorLabels =
        isObject(spec(set).selector) && isObject((spec(set).selector as Record<string, unknown>).matchLabels)
          ? ((spec(set).selector as Record<string, unknown>).matchLabels as Record<string, string>)
          : {};
      const claim: KubeObject = {
        metadata: {
          name,
          namespace: ns,
          labels: { ...(isObject(md.labels) ? (md.labels as Record<string, string>) : {}), ...selectorLabels },
          ...(isObject(md.annotations) ? { annotations: md.annotations as Record<string, string> } : {}),
          ...(this.policy(set).whenDeleted === 'Delete' ? { ownerReferences: [newControllerRef(set)] } : {}),
        },
        spec: isObject(template.spec) ? clone(template.spec) : {},
      };
      try {
        const created = await this.ctx.api.create(this.claims.info, ns, claim);
        this.ctx.log(`statefulset: created pvc ${ns}/${name}`);
        this.recorder.event(
          set,
          'Normal',
          'SuccessfulCreate',
          `create Claim ${name} Pod ${set.metadata?.name}-${ordinal} in StatefulSet ${set.metadata?.name} success`,
        );
        await this.claims.waitForWrite(created);
      } catch (err) {
        if (!isStatus(err, 409)) throw err;
      }
    }
  }

  private async createPod(set: KubeObject, ordinal: number, revision: string): Promise<void> {
    await this.createClaims(set, ordinal);
    const name = `${set.metadata!.name}-${ordinal}`;
    const pod = podFromTemplate(set, podTemplate(set), { [REVISION_LABEL]: revision, [POD_NAME_LABEL]: name, [POD_INDEX_LABEL]: String(ordinal) });
    pod.metadata!.name = name;
    const podSpec = pod.spec as Record<string, unknown>;
    podSpec.hostname = name;
    const serviceName = str(spec(set).serviceName);
    if (serviceName) podSpec.subdomain = serviceName;
    const claimVolumes = this.templates(set).map((t) => ({
      name: str(isObject(t.metadata) ? t.metadata.name : ''),
      persistentVolumeClaim: { claimName: this.claimName(set, t, ordinal) },
    }));
    const others = (Array.isArray(podSpec.volumes) ? podSpec.volumes.filter(isObject) : []).filter((v) => !claimVolumes.some((c) => c.name === v.name));
    if (claimVolumes.length + others.length > 0) podSpec.volumes = [...claimVolumes, ...others];
    try {
      const created = await this.ctx.api.create(this.pods.info, set.metadata?.namespace, pod);
      this.ctx.log(`statefulset: created pod ${set.metadata?.namespace}/${name}`);
      this.recorder.event(set, 'Normal', 'SuccessfulCreate', `create Pod ${name} in StatefulSet ${set.metadata?.name} successful`);
      await this.pods.waitForWrite(created);
    } catch (err) {
      if (isStatus(err, 409)) return;
      // recordPodEvent (stateful_pod_control.go): the API server's refusal, as a Warning on the set. A
      // StatefulSet's template is not validated as a pod spec (ValidatePodTemplateSpecForStatefulSet),
      // so an invalid toleration or probe in it shows first here, each time the controller retries.
      if (err instanceof KubeApiError)
        this.recorder.event(set, 'Warning', 'FailedCreate', `create Pod ${name} in StatefulSet ${set.metadata?.name} failed error: ${statusMessage(err)}`);
      throw err;
    }
  }

  private async deletePod(set: KubeObject, pod: KubeObject, why: string): Promise<void> {
    this.ctx.log(`statefulset: deleting pod ${pod.metadata?.namespace}/${pod.metadata?.name} (${why})`);
    try {
      const res = await this.ctx.api.delete(this.pods.info, pod.metadata?.namespace, pod.metadata!.name!, { preconditions: { uid: pod.metadata?.uid } });
      if (res) this.recorder.event(set, 'Normal', 'SuccessfulDelete', `delete Pod ${pod.metadata?.name} in StatefulSet ${set.metadata?.name} successful`);
      if (res?.kind === 'Pod') await this.pods.waitForWrite(res);
      else await this.pods.waitForGone(pod.metadata?.namespace, pod.metadata!.name!, pod.metadata?.uid);
    } catch (err) {
      if (!isStatus(err, 404, 409)) throw err;
    }
  }

  /** isClaimOwnerUpToDate + updateClaimOwnerRefForSetAndPod for the PVCs of one pod. */
  private async updateClaimOwners(set: KubeObject, pod: KubeObject, inRange: boolean): Promise<void> {
    const policy = this.policy(set);
    const ordinal = ordinalOf(set, pod);
    for (const template of this.templates(set)) {
      const claim = this.claims.get(set.metadata?.namespace, this.claimName(set, template, ordinal));
      if (!claim || isBeingDeleted(claim)) continue;
      const refs = claim.metadata?.ownerReferences ?? [];
      const other = refs.find((r) => r.controller === true && r.uid !== set.metadata?.uid && r.uid !== pod.metadata?.uid);
      if (other) continue; // controlled by someone else: leave it alone
      const wantSet = policy.whenDeleted === 'Delete' && (inRange || policy.whenScaled === 'Retain');
      const wantPod = policy.whenScaled === 'Delete' && !inRange;
      const hasSet = refs.some((r) => r.uid === set.metadata?.uid);
      const hasPod = refs.some((r) => r.uid === pod.metadata?.uid);
      if (wantSet === hasSet && wantPod === hasPod) continue;
      const next = clone(claim);
      const kept = refs.filter((r) => r.uid !== set.metadata?.uid && r.uid !== pod.metadata?.uid);
      if (wantSet) kept.push(newControllerRef(set));
      if (wantPod) kept.push(newControllerRef(pod));
      next.metadata!.ownerReferences = kept;
      if (kept.length === 0) delete next.metadata!.ownerReferences;
      try {
        const written = await this.ctx.api.update(this.claims.info, next);
        await this.claims.waitForWrite(written);
      } catch (err) {
        if (!isStatus(err, 404)) throw err;
      }
    }
  }

  /**
   * computeReplicaStatus + completeRollingUpdate + inconsistentStatus + UpdateStatus: the whole status
   * is replaced (zero counts and empty revisions omitted as the Go types' omitempty does), and only
   * when one of the fields KCM compares changed.
   */
  private async updateStatus(set: KubeObject, pods: KubeObject[], currentRevision: string, updateRevision: string, updateDeletions: number): Promise<void> {
    const minReady = num(spec(set).minReadySeconds, 0);
    let replicas = 0;
    let ready = 0;
    let available = 0;
    let current = 0;
    let updated = 0;
    for (const pod of pods) {
      const created = podPhase(pod) !== '';
      if (created) replicas++;
      if (isRunningAndReady(pod)) {
        ready++;
        if (isPodAvailable(pod, minReady)) available++;
      }
      if (created && !isBeingDeleted(pod)) {
        const revision = pod.metadata?.labels?.[REVISION_LABEL];
        if (revision === currentRevision) current++;
        if (revision === updateRevision) updated++;
      }
    }
    current -= updateDeletions;
    const wanted = num(spec(set).replicas, 1);
    const strategy = isObject(spec(set).updateStrategy) ? (spec(set).updateStrategy as Record<string, unknown>) : {};
    if (str(strategy.type, 'RollingUpdate') === 'RollingUpdate' && updated === wanted && ready === wanted && replicas === wanted) {
      current = updated;
      currentRevision = updateRevision;
    }
    const generation = set.metadata?.generation ?? 0;
    const prev = status(set);
    const namespace = set.metadata!.namespace!;
    const name = set.metadata!.name!;
    if (minReady > 0) {
      const waits = pods
        .filter(isRunningAndReady)
        .map((p) => msUntilAvailable(p, minReady))
        .filter((ms): ms is number => ms !== undefined && ms > 0);
      if (waits.length > 0) this.enqueue(`${namespace}/${name}`, Math.min(...waits) + 5);
    }
    const inconsistent =
      generation > num(prev.observedGeneration, 0) ||
      replicas !== num(prev.replicas, 0) ||
      current !== num(prev.currentReplicas, 0) ||
      ready !== num(prev.readyReplicas, 0) ||
      updated !== num(prev.updatedReplicas, 0) ||
      currentRevision !== str(prev.currentRevision) ||
      available !== num(prev.availableReplicas, 0) ||
      updateRevision !== str(prev.updateRevision);
    if (!inconsistent) return;
    const next: Record<string, unknown> = { replicas, availableReplicas: available, collisionCount: num(prev.collisionCount, 0) };
    if (generation) next.observedGeneration = generation;
    if (ready) next.readyReplicas = ready;
    if (current) next.currentReplicas = current;
    if (updated) next.updatedReplicas = updated;
    if (currentRevision) next.currentRevision = currentRevision;
    if (updateRevision) next.updateRevision = updateRevision;
    const latest = this.sets.get(namespace, name);
    if (!latest || latest.metadata?.uid !== set.metadata?.uid) return;
    const updatedSet = clone(latest);
    updatedSet.status = next;
    try {
      const written = await this.ctx.api.update(this.sets.info, updatedSet, 'status');
      await this.sets.waitForWrite(written);
    } catch (err) {
      if (!isStatus(err, 404)) throw err;
    }
  }
}
