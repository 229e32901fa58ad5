/**
 * A simple kube-scheduler: binds each pending pod (no spec.nodeName, schedulerName unset or
 * `default-scheduler`, not being deleted) to a node through the `pods/binding` subresource, which
 * makes the API server set spec.nodeName and the PodScheduled=True condition.
 *
 * Filters honoured: spec.nodeSelector against node labels, required node affinity `matchFields` on
 * metadata.name (how DaemonSet pods are pinned) and `matchExpressions` on labels, node Ready and
 * spec.unschedulable; and the VolumeBinding plugin's PreFilter on the pod's claims: a claim that
 * does not exist, is being deleted or is Lost leaves the pod unscheduled (`persistentvolumeclaim "x"
 * is being deleted`), so a pod recreated while its old claim terminates waits for the claim to go and
 * its StatefulSet to create a new one, as kube-scheduler's podHasPVCs makes it; and a claim not Bound
 * yet (every class binds Immediately here) leaves it unscheduled until it binds (`pod has unbound
 * immediate PersistentVolumeClaims`), so a claim held Pending keeps its pod Pending. Scoring: the node with the fewest pods, ties broken by
 * name. A pod that fits no node gets PodScheduled=False/Unschedulable and is retried when nodes or
 * claims change.
 * Events as kube-scheduler writes them (events.k8s.io/v1, reportingController default-scheduler):
 * Scheduled "Successfully assigned <ns>/<pod> to <node>" (action Binding) after a binding, and
 * FailedScheduling (Warning, action Scheduling) with the fit error after each failed attempt.
 * If the server has no binding subresource, it falls back to a merge patch of spec.nodeName plus a
 * status patch of the condition (what a bare embedded server accepts; a real one requires binding).
 */
import { isObject, type KubeObject } from '../../model/object-key.js';
import type { Informer } from '../../kube/informer.js';
import { claimNames, condition, conditions, isBeingDeleted, isPodTerminal, setCondition, spec, status, str, type Labels } from './objects.js';
import type { ActionEventRecorder } from './events.js';
import { isStatus, type SimContext, type WorkRunner } from './runtime.js';

/** The hostname part of the scheduler's reportingInstance (`default-scheduler-<hostname>`). */
export const SIM_HOSTNAME = 'kperturb-sim';

export class Scheduler {
  private readonly enqueue: (key: string, delayMs?: number) => void;
  private bindingUnsupported = false;
  private readonly recorder: ActionEventRecorder;

  private constructor(
    private readonly ctx: SimContext,
    runner: WorkRunner,
    private readonly pods: Informer,
    private readonly nodes: Informer,
    private readonly claims: Informer | undefined,
  ) {
    this.enqueue = runner.register('scheduler', (key) => this.schedule(key));
    this.recorder = ctx.events.eventsRecorder('default-scheduler', SIM_HOSTNAME);
  }

  private record(pod: KubeObject, type: 'Normal' | 'Warning', reason: string, action: string, note: string): void {
    this.recorder.event({ ...pod, apiVersion: 'v1', kind: 'Pod' }, type, reason, action, note);
  }

  static async start(ctx: SimContext, runner: WorkRunner): Promise<Scheduler | undefined> {
    const [pods, nodes, claims] = await Promise.all([
      ctx.informers.forKind('Pod', 'v1'),
      ctx.informers.forKind('Node', 'v1'),
      ctx.informers.forKind('PersistentVolumeClaim', 'v1'),
    ]);
    if (!pods || !nodes) return undefined;
    const s = new Scheduler(ctx, runner, pods, nodes, claims);
    pods.subscribe((type, pod) => {
      if (type !== 'DELETED' && s.needsScheduling(pod)) s.enqueue(`${pod.metadata!.namespace}/${pod.metadata!.name}`, ctx.timing.podScheduleDelayMs);
    });
    const retryAll = (): void => {
      for (const pod of pods.list()) if (s.needsScheduling(pod)) s.enqueue(`${pod.metadata!.namespace}/${pod.metadata!.name}`);
    };
    nodes.onChange(retryAll);
    claims?.onChange(retryAll);
    return s;
  }

  private needsScheduling(pod: KubeObject): boolean {
    const sp = spec(pod);
    const schedulerName = str(sp.schedulerName, 'default-scheduler');
    return !sp.nodeName && schedulerName === 'default-scheduler' && !isBeingDeleted(pod) && !isPodTerminal(pod);
  }

  private podsOn(node: string): number {
    return this.pods.list().filter((p) => spec(p).nodeName === node && !isPodTerminal(p)).length;
  }

  private fits(pod: KubeObject, node: KubeObject): boolean {
    const labels: Labels = node.metadata?.labels ?? {};
    const nodeSpec = spec(node);
    if (nodeSpec.unschedulable === true) return false;
    if (condition(node, 'Ready')?.status !== 'True') return false;
    const sp = spec(pod);
    if (isObject(sp.nodeSelector) && !Object.entries(sp.nodeSelector).every(([k, v]) => labels[k] === v)) return false;
    const affinity = isObject(sp.affinity) && isObject(sp.affinity.nodeAffinity) ? sp.affinity.nodeAffinity : undefined;
    const required =
      affinity && isObject(affinity.requiredDuringSchedulingIgnoredDuringExecution) ? affinity.requiredDuringSchedulingIgnoredDuringExecution : undefined;
    const terms = required && Array.isArray(required.nodeSelectorTerms) ? required.nodeSelectorTerms.filter(isObject) : [];
    if (terms.length > 0 && !terms.some((t) => termMatches(t, node))) return false;
    return true;
  }

  private async schedule(key: string): Promise<void> {
    const [namespace, name] = key.split('/') as [string, string];
    const pod = this.pods.get(namespace, name);
    if (!pod || !this.needsScheduling(pod)) return;
    const claimProblem = this.claimProblem(pod);
    if (claimProblem) {
      await this.markUnschedulable(pod, claimProblem);
      return;
    }
    const candidates = this.nodes.list().filter((n) => this.fits(pod, n));
    if (candidates.length === 0) {
      await this.markUnschedulable(pod);
      return;
    }
    candidates.sort((a, b) => this.podsOn(a.metadata!.name!) - this.podsOn(b.metadata!.name!) || (a.metadata!.name! < b.metadata!.name! ? -1 : 1));
    const target = candidates[0]!.metadata!.name!;
    this.ctx.log(`scheduler: binding ${key} to ${target}`);
    if (!this.bindingUnsupported) {
      try {
        await this.ctx.api.post(this.pods.info, namespace, name, 'binding', {
          apiVersion: 'v1',
          kind: 'Binding',
          metadata: { name, namespace, uid: pod.metadata?.uid },
          target: { apiVersion: 'v1', kind: 'Node', name: target },
        });
        this.record(pod, 'Normal', 'Scheduled', 'Binding', `Successfully assigned ${namespace}/${name} to ${target}`);
        await this.pods.waitUntil(() => !!spec(this.pods.get(namespace, name) ?? pod).nodeName || !this.pods.get(namespace, name), 2000);
        return;
      } catch (err) {
        if (isStatus(err, 409)) return; // already bound (or the pod was replaced)
        if (!isStatus(err, 404, 405) || !this.pods.get(namespace, name)) throw err;
        // A 404 is the pod's own when it went away after the informer last saw it (a garbage
        // collector's delete in flight): nothing to bind, and no sign that binding is not served.
        if (isStatus(err, 404) && (await this.ctx.api.get(this.pods.info, namespace, name))?.metadata?.uid !== pod.metadata?.uid) return;
        this.bindingUnsupported = true;
        this.ctx.log('scheduler: the server has no pods/binding subresource; binding by patching spec.nodeName');
      }
    }
    const bound = await this.ctx.api.patch(this.pods.info, namespace, name, 'merge', { metadata: { uid: pod.metadata?.uid }, spec: { nodeName: target } });
    const scheduled = setCondition(conditions(bound), { type: 'PodScheduled', status: 'True', lastProbeTime: null, reason: undefined, message: undefined });
    await this.ctx.api.patch(this.pods.info, namespace, name, 'merge', { status: { conditions: scheduled.map(stripUndefined) } }, 'status');
    this.record(pod, 'Normal', 'Scheduled', 'Binding', `Successfully assigned ${namespace}/${name} to ${target}`);
    await this.pods.waitUntil(() => !!spec(this.pods.get(namespace, name) ?? pod).nodeName || !this.pods.get(namespace, name), 2000);
  }

  /** The VolumeBinding plugin's podHasPVCs: why the pod's claims keep it from any node, if they do. */
  private claimProblem(pod: KubeObject): string | undefined {
    if (!this.claims) return undefined;
    for (const name of claimNames(pod)) {
      const claim = this.claims.get(pod.metadata?.namespace, name);
      if (!claim) return `persistentvolumeclaim "${name}" not found`;
      if (status(claim).phase === 'Lost') return `persistentvolumeclaim "${name}" bound to non-existent persistentvolume "${str(spec(claim).volumeName)}"`;
      if (isBeingDeleted(claim)) return `persistentvolumeclaim "${name}" is being deleted`;
      // Every class binds Immediately here (volume-controller.ts): such a claim must be bound before
      // the pod is placed, or the pod would run on a volume that does not exist yet.
      if (status(claim).phase !== 'Bound') return 'pod has unbound immediate PersistentVolumeClaims';
    }
    return undefined;
  }

  private async markUnschedulable(pod: KubeObject, preFilterMessage?: string): Promise<void> {
    const existing = condition(pod, 'PodScheduled');
    const total = this.nodes.list().length;
    const reason = preFilterMessage ?? (total === 0 ? 'no nodes available to schedule pods' : `${total} node(s) didn't match Pod's node affinity/selector`);
    const message = `0/${total} nodes are available: ${reason}. preemption: 0/${total} nodes are available: ${total} Preemption is not helpful for scheduling.`;
    // handleSchedulingFailure records the fit error on every failed attempt, then updates the condition.
    this.record(pod, 'Warning', 'FailedScheduling', 'Scheduling', message);
    if (existing?.status === 'False' && existing.reason === 'Unschedulable' && existing.message === message) return;
    const next = setCondition(conditions(pod), { type: 'PodScheduled', status: 'False', lastProbeTime: null, reason: 'Unschedulable', message });
    await this.ctx.api
      .patch(
        this.pods.info,
        pod.metadata?.namespace,
        pod.metadata!.name!,
        'strategic',
        { status: { conditions: next.filter((c) => c.type === 'PodScheduled').map(stripUndefined) } },
        'status',
      )
      .catch((err: unknown) => {
        if (!isStatus(err, 404)) throw err;
      });
  }
}

function stripUndefined<T extends Record<string, unknown>>(obj: T): T {
  return Object.fromEntries(Object.entries(obj).filter(([, v]) => v !== undefined)) as T;
}

function termMatches(term: Record<string, unknown>, node: KubeObject): boolean {
  const labels: Labels = node.metadata?.labels ?? {};
  const fields: Record<string, string> = { 'metadata.name': node.metadata?.name ?? '' };
  const check = (exprs: unknown, values: Record<string, string>): boolean => {
    if (!Array.isArray(exprs)) return true;
    return exprs.filter(isObject).every((e) => {
      const key = str(e.key);
      const vals = Array.isArray(e.values) ? (e.values as string[]) : [];
      const has = Object.prototype.hasOwnProperty.call(values, key);
      switch (e.operator) {
        case 'In':
          return has && vals.includes(values[key]!);
        case 'NotIn':
          return !has || !vals.includes(values[key]!);
        case 'Exists':
          return has;
        case 'DoesNotExist':
          return !has;
        case 'Gt':
          return has && Number(values[key]) > Number(vals[0]);
        case 'Lt':
          return has && Number(values[key]) < Number(vals[0]);
        default:
          return false;
      }
    });
  };
  return check(term.matchExpressions, labels) && check(term.matchFields, fields);
}
