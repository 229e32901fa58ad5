/**
 * The disruption controller (kube-controller-manager's pkg/controller/disruption), simplified: keeps
 * each PodDisruptionBudget's status, which the eviction subresource reads. For the pods its selector
 * matches: `expectedPods` (the pods' controllers' replicas for `maxUnavailable` or a percentage
 * `minAvailable`, else the number of pods), `desiredHealthy` (`minAvailable`, or expected minus
 * `maxUnavailable`; percentages rounded up), `currentHealthy` (Ready pods not being deleted and not
 * in `disruptedPods`), `disruptionsAllowed` (current minus desired, at least 0), `observedGeneration`
 * and the `DisruptionAllowed` condition (`SufficientPods` / `InsufficientPods`). A pod whose
 * controller is missing or has no scale makes the budget fail safe (no disruption allowed,
 * `SyncFailed`), as the real controller does. `disruptedPods` entries (written by the eviction) go
 * once the pod is being deleted or gone, or after 2 minutes.
 * Not simulated: the scale subresource of custom controllers, unhealthyPodEvictionPolicy.
 */
import type { KubeObject } from '../../model/object-key.js';
import { isObject } from '../../model/object-key.js';
import type { Informer } from '../../kube/informer.js';
import type { Condition } from './objects.js';
import { clone, controllerRef, deepEqual, intOrPercent, isBeingDeleted, isPodReady, num, selectorMatches, setCondition, spec, status } from './objects.js';
import { isStatus, type SimContext, type WorkRunner } from './runtime.js';

/** How long an eviction's entry in `disruptedPods` holds the pod out of the healthy count (DeletionTimeout). */
const DELETION_TIMEOUT_MS = 2 * 60_000;

/** The budget's numbers, or why it fails safe. */
type Counts = { expectedPods: number; desiredHealthy: number } | { failure: string };

export class DisruptionController {
  private readonly enqueue: (key: string, delayMs?: number) => void;

  private constructor(
    private readonly ctx: SimContext,
    runner: WorkRunner,
    private readonly budgets: Informer,
    private readonly pods: Informer,
    /** Pod controllers whose replicas count, by kind (absent when the server does not serve the kind). */
    private readonly owners: ReadonlyMap<string, Informer>,
  ) {
    this.enqueue = runner.register('disruption', (key) => this.sync(key));
  }

  static async start(ctx: SimContext, runner: WorkRunner): Promise<DisruptionController | undefined> {
    const [v1, v1beta1, pods, statefulSets, replicaSets, deployments, rcs] = await Promise.all([
      ctx.informers.forKind('PodDisruptionBudget', 'policy/v1'),
      ctx.informers.forKind('PodDisruptionBudget', 'policy/v1beta1'),
      ctx.informers.forKind('Pod', 'v1'),
      ctx.informers.forKind('StatefulSet', 'apps/v1'),
      ctx.informers.forKind('ReplicaSet', 'apps/v1'),
      ctx.informers.forKind('Deployment', 'apps/v1'),
      ctx.informers.forKind('ReplicationController', 'v1'),
    ]);
    const budgets = v1 ?? v1beta1;
    if (!budgets || !pods) return undefined;
    const owners = new Map<string, Informer>();
    for (const [kind, inf] of [
      ['StatefulSet', statefulSets],
      ['ReplicaSet', replicaSets],
      ['Deployment', deployments],
      ['ReplicationController', rcs],
    ] as const)
      if (inf) owners.set(kind, inf);
    const c = new DisruptionController(ctx, runner, budgets, pods, owners);
    const keyOf = (pdb: KubeObject) => `${pdb.metadata!.namespace}/${pdb.metadata!.name}`;
    budgets.subscribe((_type, pdb) => c.enqueue(keyOf(pdb)));
    const budgetsOfNamespace = (obj: KubeObject) => {
      for (const pdb of budgets.list(obj.metadata?.namespace)) c.enqueue(keyOf(pdb));
    };
    pods.onChange((_type, pod, old) => {
      for (const pdb of budgets.list(pod.metadata?.namespace)) {
        const sel = spec(pdb).selector;
        if (selectorMatches(sel, pod.metadata?.labels) || (old && selectorMatches(sel, old.metadata?.labels))) c.enqueue(keyOf(pdb));
      }
    });
    for (const inf of owners.values()) inf.onChange((_type, owner) => budgetsOfNamespace(owner));
    return c;
  }

  private async sync(key: string): Promise<void> {
    const [namespace, name] = key.split('/') as [string, string];
    const pdb = this.budgets.get(namespace, name);
    if (!pdb || isBeingDeleted(pdb)) return;
    const selector = spec(pdb).selector;
    const pods = this.pods.list(namespace).filter((p) => selectorMatches(selector, p.metadata?.labels));
    const at = Date.now();
    const disrupted: Record<string, string> = {};
    let recheckMs: number | undefined;
    const previous = status(pdb).disruptedPods;
    for (const [pod, since] of Object.entries(isObject(previous) ? previous : {})) {
      const p = pods.find((x) => x.metadata?.name === pod);
      if (!p || isBeingDeleted(p) || typeof since !== 'string') continue;
      const left = Date.parse(since) + DELETION_TIMEOUT_MS - at;
      if (left <= 0) continue;
      disrupted[pod] = since;
      recheckMs = Math.min(recheckMs ?? left, left);
    }
    if (recheckMs !== undefined) this.enqueue(key, recheckMs + 5);
    const counts = this.counts(pdb, pods);
    const currentHealthy = pods.filter((p) => !isBeingDeleted(p) && isPodReady(p) && !(p.metadata!.name! in disrupted)).length;
    const old = status(pdb);
    const oldConditions = (Array.isArray(old.conditions) ? old.conditions : []) as Condition[];
    const next: Record<string, unknown> = { ...old, observedGeneration: pdb.metadata?.generation ?? 0 };
    if (Object.keys(disrupted).length > 0) next.disruptedPods = disrupted;
    else delete next.disruptedPods;
    if ('failure' in counts) {
      Object.assign(next, { disruptionsAllowed: 0, currentHealthy: 0, desiredHealthy: 0, expectedPods: 0 });
      next.conditions = setCondition(oldConditions, { type: 'DisruptionAllowed', status: 'False', reason: 'SyncFailed', message: counts.failure });
    } else {
      const allowed = Math.max(0, currentHealthy - counts.desiredHealthy);
      Object.assign(next, { disruptionsAllowed: allowed, currentHealthy, desiredHealthy: counts.desiredHealthy, expectedPods: counts.expectedPods });
      next.conditions = setCondition(
        oldConditions,
        allowed > 0
          ? { type: 'DisruptionAllowed', status: 'True', reason: 'SufficientPods', message: '' }
          : { type: 'DisruptionAllowed', status: 'False', reason: 'InsufficientPods', message: '' },
      );
    }
    if (deepEqual(next, old)) return;
    const updated = clone(pdb);
    updated.status = next;
    try {
      const written = await this.ctx.api.update(this.budgets.info, updated, 'status');
      await this.budgets.waitForWrite(written);
    } catch (err) {
      // 409: an eviction wrote the status meanwhile; the change it made re-queues the budget.
      if (isStatus(err, 404, 409)) return;
      throw err;
    }
  }

  /** getExpectedPodCount: the pods to expect and how many of them must stay healthy. */
  private counts(pdb: KubeObject, pods: KubeObject[]): Counts {
    const { minAvailable, maxUnavailable } = spec(pdb);
    if (maxUnavailable === undefined && typeof minAvailable === 'number') return { expectedPods: pods.length, desiredHealthy: minAvailable };
    if (maxUnavailable === undefined && typeof minAvailable === 'string' && /^\d+$/.test(minAvailable))
      return { expectedPods: pods.length, desiredHealthy: Number(minAvailable) };
    // maxUnavailable, or minAvailable as a percentage: the scale of the pods' controllers.
    let expected = 0;
    const seen = new Set<string>();
    for (const pod of pods) {
      const scale = this.controllerScale(pod);
      if ('failure' in scale) return scale;
      if (seen.has(scale.uid)) continue;
      seen.add(scale.uid);
      expected += scale.replicas;
    }
    if (maxUnavailable !== undefined) {
      const unavailable = intOrPercent(maxUnavailable, expected, true, 0);
      return { expectedPods: expected, desiredHealthy: Math.max(0, expected - unavailable) };
    }
    return { expectedPods: expected, desiredHealthy: intOrPercent(minAvailable, expected, true, 0) };
  }

  /** The replicas of the pod's top controller (a ReplicaSet's Deployment, as the finders do). */
  private controllerScale(pod: KubeObject): { uid: string; replicas: number } | { failure: string } {
    const ref = controllerRef(pod);
    const namespace = pod.metadata?.namespace;
    const failure = { failure: `found no controllers for pod "${pod.metadata?.name ?? ''}"` };
    if (!ref) return failure;
    const owner = this.owners.get(ref.kind)?.get(namespace, ref.name);
    if (!owner || owner.metadata?.uid !== ref.uid) return failure;
    if (ref.kind === 'ReplicaSet') {
      const top = controllerRef(owner);
      const deployment = top?.kind === 'Deployment' ? this.owners.get('Deployment')?.get(namespace, top.name) : undefined;
      if (deployment && deployment.metadata?.uid === top?.uid) return { uid: deployment.metadata!.uid!, replicas: num(spec(deployment).replicas, 1) };
    }
    return { uid: owner.metadata!.uid!, replicas: num(spec(owner).replicas, 1) };
  }
}
