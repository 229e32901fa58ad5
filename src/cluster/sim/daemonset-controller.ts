/**
 * The DaemonSet controller (pkg/controller/daemon), as an API client: one pod per node whose labels
 * match the template's nodeSelector. Pods (generateName `<ds>-`) are pinned to their node with the
 * required node affinity `matchFields metadata.name In [node]` and scheduled by the scheduler, as
 * since Kubernetes 1.12; they carry the DaemonSet tolerations, controller-revision-hash and
 * pod-template-generation labels. Extra pods on a node, pods on nodes that are gone, and (RollingUpdate,
 * maxUnavailable 1) pods of an older template are deleted. Status: desiredNumberScheduled,
 * currentNumberScheduled, numberMisscheduled, numberReady, updatedNumberScheduled, numberAvailable,
 * numberUnavailable, observedGeneration.
 * Events (source daemonset-controller) on the DaemonSet: SuccessfulCreate "Created pod: x",
 * SuccessfulDelete "Deleted pod: x".
 */
import type { KubeObject } from '../../model/object-key.js';
import { isObject } from '../../model/object-key.js';
import type { Informer } from '../../kube/informer.js';
import {
  clone,
  controllerRef,
  deepEqual,
  isBeingDeleted,
  isControlledBy,
  isPodAvailable,
  isPodReady,
  isPodTerminal,
  num,
  podFromTemplate,
  podTemplate,
  spec,
  status,
  str,
  templateHash,
} from './objects.js';
import type { CoreEventRecorder } from './events.js';
import { isStatus, type SimContext, type WorkRunner } from './runtime.js';

const TOLERATIONS = [
  { key: 'node.kubernetes.io/not-ready', operator: 'Exists', effect: 'NoExecute' },
  { key: 'node.kubernetes.io/unreachable', operator: 'Exists', effect: 'NoExecute' },
  { key: 'node.kubernetes.io/disk-pressure', operator: 'Exists', effect: 'NoSchedule' },
  { key: 'node.kubernetes.io/memory-pressure', operator: 'Exists', effect: 'NoSchedule' },
  { key: 'node.kubernetes.io/pid-pressure', operator: 'Exists', effect: 'NoSchedule' },
  { key: 'node.kubernetes.io/unschedulable', operator: 'Exists', effect: 'NoSchedule' },
];

/** The node a daemon pod is bound or pinned to. */
function targetNode(pod: KubeObject): string | undefined {
  const nodeName = str(spec(pod).nodeName);
  if (nodeName) return nodeName;
  const aff = spec(pod).affinity;
  const terms =
    isObject(aff) && isObject(aff.nodeAffinity) && isObject(aff.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution)
      ? aff.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms
      : undefined;
  if (!Array.isArray(terms)) return undefined;
  for (const t of terms) {
    if (!isObject(t) || !Array.isArray(t.matchFields)) continue;
    for (const f of t.matchFields) if (isObject(f) && f.key === 'metadata.name' && f.operator === 'In' && Array.isArray(f.values)) return String(f.values[0]);
  }
  return undefined;
}

export class DaemonSetController {
  private readonly enqueue: (key: string, delayMs?: number) => void;
  private readonly recorder: CoreEventRecorder;

  private constructor(
    private readonly ctx: SimContext,
    runner: WorkRunner,
    private readonly sets: Informer,
    private readonly pods: Informer,
    private readonly nodes: Informer,
  ) {
    this.enqueue = runner.register('daemonset', (key) => this.sync(key));
    this.recorder = ctx.events.recorder({ component: 'daemonset-controller' });
  }

  static async start(ctx: SimContext, runner: WorkRunner): Promise<DaemonSetController | undefined> {
    const [sets, pods, nodes] = await Promise.all([
      ctx.informers.forKind('DaemonSet', 'apps/v1'),
      ctx.informers.forKind('Pod', 'v1'),
      ctx.informers.forKind('Node', 'v1'),
    ]);
    if (!sets || !pods || !nodes) return undefined;
    const c = new DaemonSetController(ctx, runner, sets, pods, nodes);
    const all = () => {
      for (const ds of sets.list()) c.enqueue(`${ds.metadata!.namespace}/${ds.metadata!.name}`);
    };
    sets.subscribe((type, ds) => {
      if (type !== 'DELETED') c.enqueue(`${ds.metadata!.namespace}/${ds.metadata!.name}`);
    });
    pods.onChange((_type, pod) => {
      const ref = controllerRef(pod);
      if (ref?.kind === 'DaemonSet') c.enqueue(`${pod.metadata!.namespace}/${ref.name}`);
    });
    nodes.onChange(all);
    return c;
  }

  private eligibleNodes(ds: KubeObject): string[] {
    const selector = podTemplate(ds).spec.nodeSelector;
    return this.nodes
      .list()
      .filter((n) => !isObject(selector) || Object.entries(selector).every(([k, v]) => n.metadata?.labels?.[k] === v))
      .map((n) => n.metadata!.name!);
  }

  private async sync(key: string): Promise<void> {
    const [namespace, name] = key.split('/') as [string, string];
    const ds = this.sets.get(namespace, name);
    if (!ds) return;
    const hash = templateHash(spec(ds).template, num(status(ds).collisionCount, 0) || undefined);
    const owned = this.pods.list(namespace).filter((p) => isControlledBy(p, ds));
    const nodes = this.eligibleNodes(ds);
    if (!isBeingDeleted(ds)) {
      const byNode = new Map<string, KubeObject[]>();
      for (const p of owned) {
        if (isPodTerminal(p)) {
          if (!isBeingDeleted(p)) await this.deletePod(ds, p);
          continue;
        }
        const node = targetNode(p) ?? '';
        byNode.set(node, [...(byNode.get(node) ?? []), p]);
      }
      for (const node of nodes) {
        const here = (byNode.get(node) ?? []).filter((p) => !isBeingDeleted(p));
        if (here.length === 0 && !(byNode.get(node) ?? []).length) await this.createPod(ds, node, hash);
        for (const extra of here.slice(1)) await this.deletePod(ds, extra);
      }
      for (const [node, list] of byNode) if (!nodes.includes(node)) for (const p of list) if (!isBeingDeleted(p)) await this.deletePod(ds, p);
      const strategy = isObject(spec(ds).updateStrategy) ? (spec(ds).updateStrategy as Record<string, unknown>) : {};
      if (str(strategy.type, 'RollingUpdate') === 'RollingUpdate') {
        const live = this.pods.list(namespace).filter((p) => isControlledBy(p, ds) && !isPodTerminal(p));
        const unavailable = live.filter((p) => isBeingDeleted(p) || !isPodReady(p)).length;
        const old = live.find((p) => !isBeingDeleted(p) && p.metadata?.labels?.[REVISION_LABEL] !== hash);
        if (old && unavailable === 0) await this.deletePod(ds, old);
      }
    }
    await this.updateStatus(namespace, name, hash);
  }

  private async createPod(ds: KubeObject, node: string, hash: string): Promise<void> {
    const pod = podFromTemplate(ds, podTemplate(ds), { [REVISION_LABEL]: hash, 'pod-template-generation': String(ds.metadata?.generation ?? 1) });
    Object.assign(pod.metadata!, this.ctx.nameFor(`${ds.metadata!.name}-`));
    const podSpec = pod.spec as Record<string, unknown>;
    const affinity = isObject(podSpec.affinity) ? podSpec.affinity : {};
    affinity.nodeAffinity = {
      requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [{ matchFields: [{ key: 'metadata.name', operator: 'In', values: [node] }] }] },
    };
    podSpec.affinity = affinity;
    const tolerations = Array.isArray(podSpec.tolerations) ? podSpec.tolerations.filter(isObject) : [];
    for (const t of TOLERATIONS) if (!tolerations.some((x) => x.key === t.key && x.effect === t.effect)) tolerations.push({ ...t });
    podSpec.tolerations = tolerations;
    try {
      const created = await this.ctx.api.create(this.pods.info, ds.metadata?.namespace, pod);
      this.ctx.log(`daemonset: created pod ${created.metadata?.namespace}/${created.metadata?.name} for ${node}`);
      this.recorder.event(ds, 'Normal', 'SuccessfulCreate', `Created pod: ${created.metadata?.name}`);
      await this.pods.waitForWrite(created);
    } catch (err) {
      if (!isStatus(err, 409)) throw err;
    }
  }

  private async deletePod(ds: KubeObject, pod: KubeObject): Promise<void> {
    try {
      const res = await this.ctx.api.delete(this.pods.info, pod.metadata?.namespace, pod.metadata!.name!, { preconditions: { uid: pod.metadata?.uid } });
      if (res) this.recorder.event(ds, 'Normal', 'SuccessfulDelete', `Deleted pod: ${pod.metadata?.name}`);
      if (res?.kind === 'Pod') await this.pods.waitForWrite(res);
      else await this.pods.waitForGone(pod.metadata?.namespace, pod.metadata!.name!, pod.metadata?.uid);
    } catch (err) {
      if (!isStatus(err, 404, 409)) throw err;
    }
  }

  private async updateStatus(namespace: string, name: string, hash: string): Promise<void> {
    const ds = this.sets.get(namespace, name);
    if (!ds) return;
    const nodes = new Set(this.eligibleNodes(ds));
    const pods = this.pods.list(namespace).filter((p) => isControlledBy(p, ds) && !isPodTerminal(p) && !isBeingDeleted(p));
    const scheduled = pods.filter((p) => str(spec(p).nodeName));
    const onNodes = scheduled.filter((p) => nodes.has(str(spec(p).nodeName)));
    const minReady = num(spec(ds).minReadySeconds, 0);
    const available = onNodes.filter((p) => isPodAvailable(p, minReady)).length;
    const next: Record<string, unknown> = {
      ...status(ds),
      currentNumberScheduled: onNodes.length,
      desiredNumberScheduled: nodes.size,
      numberMisscheduled: scheduled.length - onNodes.length,
      numberReady: onNodes.filter(isPodReady).length,
      observedGeneration: ds.metadata?.generation ?? 0,
      updatedNumberScheduled: onNodes.filter((p) => p.metadata?.labels?.[REVISION_LABEL] === hash).length,
      numberAvailable: available,
      numberUnavailable: Math.max(0, nodes.size - available),
    };
    for (const f of ['updatedNumberScheduled', 'numberAvailable', 'numberUnavailable']) if (next[f] === 0) delete next[f];
    if (deepEqual(next, status(ds))) return;
    const updated = clone(ds);
    updated.status = next;
    try {
      const written = await this.ctx.api.update(this.sets.info, updated, 'status');
      await this.sets.waitForWrite(written);
    } catch (err) {
      if (!isStatus(err, 404)) throw err;
    }
  }
}

const REVISION_LABEL = 'controller-revision-hash';
