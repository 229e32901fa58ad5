/**
 * A node outage (node-not-ready plans), as kube-controller-manager's node lifecycle controller and
 * taint eviction controller react to it (pkg/controller/nodelifecycle, pkg/controller/tainteviction):
 * - the node's conditions: `unreachable` (the kubelet stopped posting status) turns every condition
 *   Unknown (reason NodeStatusUnknown, "Kubelet stopped posting node status."); `not-ready` (the
 *   kubelet posts NotReady) turns Ready False (KubeletNotReady); a NodeNotReady event;
 * - the taints `node.kubernetes.io/unreachable` (or `not-ready`) with effects NoSchedule and
 *   NoExecute (timeAdded), which keep the scheduler away and start the taint eviction;
 * - MarkPodsNotReady: each pod on the node gets its Ready condition False (only Ready: the
 *   containers are as the kubelet last said) and a NodeNotReady warning;
 * - taint eviction: a pod that does not tolerate the NoExecute taint is deleted at once; one that
 *   does is deleted after the least tolerationSeconds of its matching tolerations (the
 *   DefaultTolerationSeconds admission plugin gives every pod 300 s), never when they have none;
 *   the fault may shorten that wait (`evictAfterSeconds`). Before the delete the pod gets the
 *   DisruptionTarget condition (DeletionByTaintManager) and a TaintManagerEviction event.
 * Meanwhile the node's kubelet (kubelet.ts, `NodeOutages`) does nothing on an unreachable node (a
 * deleted pod stays terminating) and only finishes deletions on a not-ready one.
 * The heal: the taints go, the conditions are the kubelet's healthy ones again (a NodeReady event),
 * and the kubelet reports its running pods Ready again.
 */
import type { KubeObject } from '../../model/object-key.js';
import { isObject } from '../../model/object-key.js';
import type { Informer } from '../../kube/informer.js';
import type { CoreEventRecorder } from './events.js';
import { clone, conditions, isBeingDeleted, isPodTerminal, now, setCondition, spec, str } from './objects.js';
import { isStatus, type SimContext } from './runtime.js';

/** unreachable: the kubelet stopped posting status; not-ready: it posts Ready False. */
export type NodeOutageMode = 'unreachable' | 'not-ready';

export interface NodeOutage {
  mode: NodeOutageMode;
  /** Evict tolerating pods after at most this many seconds (their tolerationSeconds otherwise). */
  evictAfterSeconds?: number;
}

/** The taint key of each outage, as the node lifecycle controller's templates have it. */
export const OUTAGE_TAINT: Record<NodeOutageMode, string> = { unreachable: 'node.kubernetes.io/unreachable', 'not-ready': 'node.kubernetes.io/not-ready' };

/** Which simulated nodes are out now; the kubelets and the node lifecycle both follow it. */
export class NodeOutages {
  private readonly outages = new Map<string, NodeOutage>();
  private readonly listeners: Array<(node: string) => void> = [];

  get(node: string): NodeOutage | undefined {
    return this.outages.get(node);
  }

  set(node: string, outage: NodeOutage | undefined): void {
    if (outage) this.outages.set(node, outage);
    else this.outages.delete(node);
    for (const l of this.listeners) l(node);
  }

  onChange(listener: (node: string) => void): void {
    this.listeners.push(listener);
  }
}

interface Toleration {
  key?: string;
  operator?: string;
  value?: string;
  effect?: string;
  tolerationSeconds?: number;
}

/**
 * How long a pod tolerates a NoExecute taint (tainteviction's getMinTolerationTime): undefined when
 * no toleration matches (evicted at once), Infinity when the matching ones set no tolerationSeconds.
 */
export function toleratedSeconds(pod: KubeObject, taintKey: string): number | undefined {
  const list = Array.isArray(spec(pod).tolerations) ? (spec(pod).tolerations as unknown[]).filter(isObject) : [];
  const matching = (list as Toleration[]).filter(
    (t) => (!t.effect || t.effect === 'NoExecute') && (t.operator === 'Exists' ? !t.key || t.key === taintKey : t.key === taintKey && !t.value),
  );
  if (matching.length === 0) return undefined;
  const seconds = matching.flatMap((t) => (typeof t.tolerationSeconds === 'number' ? [Math.max(0, t.tolerationSeconds)] : []));
  return seconds.length > 0 ? Math.min(...seconds) : Infinity;
}

const HEALTHY_CONDITIONS: Record<string, [string, string, string]> = {
  MemoryPressure: ['False', 'KubeletHasSufficientMemory', 'kubelet has sufficient memory available'],
  DiskPressure: ['False', 'KubeletHasNoDiskPressure', 'kubelet has no disk pressure'],
  PIDPressure: ['False', 'KubeletHasSufficientPID', 'kubelet has sufficient PID available'],
  Ready: ['True', 'KubeletReady', 'kubelet is posting ready status'],
};

export class NodeLifecycle {
  private readonly evictions = new Map<string, NodeJS.Timeout>();
  private readonly nodeController: CoreEventRecorder;
  private readonly taintEviction: CoreEventRecorder;

  constructor(
    private readonly ctx: SimContext,
    private readonly nodes: Informer,
    private readonly pods: Informer,
  ) {
    this.nodeController = ctx.events.recorder({ component: 'node-controller' });
    this.taintEviction = ctx.events.recorder({ component: 'taint-eviction-controller' });
  }

  static async start(ctx: SimContext): Promise<NodeLifecycle | undefined> {
    const [nodes, pods] = await Promise.all([ctx.informers.forKind('Node', 'v1'), ctx.informers.forKind('Pod', 'v1')]);
    return nodes && pods ? new NodeLifecycle(ctx, nodes, pods) : undefined;
  }

  /** Starts (or, undefined, heals) an outage of `node`; why not, when the node is not a simulated one. */
  setOutage(node: string, outage: NodeOutage | undefined): string | undefined {
    if (!this.ctx.nodes.includes(node) || !this.nodes.get(undefined, node)) return `${node} is not a simulated node of this cluster`;
    const before = this.ctx.outages.get(node);
    this.ctx.outages.set(node, outage);
    const work = outage ? this.fail(node, outage, before) : this.heal(node, before);
    void work.catch((err: Error) => this.ctx.log(`node-lifecycle: ${node}: ${err.message}`));
    return undefined;
  }

  stop(): void {
    for (const timer of this.evictions.values()) clearTimeout(timer);
    this.evictions.clear();
  }

  private async fail(node: string, outage: NodeOutage, before: NodeOutage | undefined): Promise<void> {
    const taint = OUTAGE_TAINT[outage.mode];
    await this.writeNode(node, (n) => {
      const at = now();
      n.status = { ...(n.status ?? {}), conditions: outageConditions(n, outage.mode, at) };
      const others = taints(n).filter((t) => t.key !== taint && (!before || t.key !== OUTAGE_TAINT[before.mode]));
      n.spec = { ...spec(n), taints: [...others, { key: taint, effect: 'NoSchedule' }, { key: taint, effect: 'NoExecute', timeAdded: at }] };
    });
    this.nodeController.event(this.nodeRef(node), 'Normal', 'NodeNotReady', `Node ${node} status is now: NodeNotReady`);
    for (const pod of this.podsOn(node)) {
      await this.markNotReady(pod);
      this.scheduleEviction(pod, taint, outage.evictAfterSeconds);
    }
  }

  private async heal(node: string, before: NodeOutage | undefined): Promise<void> {
    for (const [key, timer] of this.evictions) {
      if (key.startsWith(`${node} `)) {
        clearTimeout(timer);
        this.evictions.delete(key);
      }
    }
    await this.writeNode(node, (n) => {
      const at = now();
      n.status = { ...(n.status ?? {}), conditions: healthyConditions(n, at) };
      const kept = taints(n).filter((t) => !Object.values(OUTAGE_TAINT).includes(str(t.key)) || (before && t.key !== OUTAGE_TAINT[before.mode]));
      n.spec = { ...spec(n), taints: kept.length > 0 ? kept : undefined };
    });
    this.nodeController.event(this.nodeRef(node), 'Normal', 'NodeReady', `Node ${node} status is now: NodeReady`);
  }

  private podsOn(node: string): KubeObject[] {
    return this.pods.list().filter((p) => spec(p).nodeName === node && !isPodTerminal(p));
  }

  private nodeRef(node: string): KubeObject {
    return { apiVersion: 'v1', kind: 'Node', metadata: { name: node, uid: node } };
  }

  private async writeNode(node: string, change: (n: KubeObject) => void): Promise<void> {
    for (let attempt = 0; attempt < 5; attempt++) {
      const current = this.nodes.get(undefined, node);
      if (!current) return;
      const next = clone(current);
      change(next);
      try {
        // The status carries the conditions, the object the taints (the controller's two writes).
        const withStatus = await this.ctx.api.update(this.nodes.info, { ...clone(current), status: next.status }, 'status');
        const written = await this.ctx.api.update(this.nodes.info, { ...withStatus, spec: next.spec });
        await this.nodes.waitForWrite(written);
        return;
      } catch (err) {
        if (!isStatus(err, 409)) throw err;
        await this.nodes.waitUntil(() => this.nodes.get(undefined, node)?.metadata?.resourceVersion !== current.metadata?.resourceVersion, 500);
      }
    }
  }

  /** MarkPodsNotReady: the pod's Ready condition False, nothing else. */
  private async markNotReady(pod: KubeObject): Promise<void> {
    const ready = conditions(pod).find((c) => c.type === 'Ready');
    if (!ready || ready.status === 'False') return;
    const next = setCondition(conditions(pod), { ...ready, status: 'False' });
    try {
      await this.ctx.api.patch(
        this.pods.info,
        pod.metadata?.namespace,
        pod.metadata!.name!,
        'merge',
        { metadata: { uid: pod.metadata?.uid }, status: { conditions: next } },
        'status',
      );
      this.nodeController.event({ ...pod, apiVersion: 'v1', kind: 'Pod' }, 'Warning', 'NodeNotReady', 'Node is not ready');
    } catch (err) {
      if (!isStatus(err, 404, 409)) throw err;
    }
  }

  private scheduleEviction(pod: KubeObject, taint: string, capSeconds: number | undefined): void {
    const tolerated = toleratedSeconds(pod, taint);
    if (tolerated === Infinity || isBeingDeleted(pod)) return;
    const seconds = tolerated === undefined ? 0 : Math.min(tolerated, capSeconds ?? Infinity);
    const key = `${str(spec(pod).nodeName)} ${pod.metadata?.namespace}/${pod.metadata?.name}`;
    this.ctx.log(`node-lifecycle: ${key.split(' ')[1]} evicted in ${seconds} s (NoExecute ${taint})`);
    this.evictions.set(
      key,
      setTimeout(() => {
        this.evictions.delete(key);
        void this.evict(pod).catch((err: Error) => this.ctx.log(`node-lifecycle: evicting ${key}: ${err.message}`));
      }, seconds * 1000),
    );
  }

  /** The taint eviction controller's deletion: DisruptionTarget first, then the delete (the very pod: uid precondition). */
  private async evict(pod: KubeObject): Promise<void> {
    const { namespace, name, uid } = pod.metadata!;
    const current = this.pods.get(namespace, name!);
    if (!current || current.metadata?.uid !== uid || isBeingDeleted(current)) return;
    const target = { type: 'DisruptionTarget', status: 'True', reason: 'DeletionByTaintManager', message: 'Taint manager: deleting due to NoExecute taint' };
    try {
      await this.ctx.api.patch(
        this.pods.info,
        namespace,
        name!,
        'merge',
        { metadata: { uid }, status: { conditions: setCondition(conditions(current), target) } },
        'status',
      );
      this.taintEviction.event(
        { ...current, apiVersion: 'v1', kind: 'Pod' },
        'Normal',
        'TaintManagerEviction',
        `Marking for deletion Pod ${namespace}/${name}`,
      );
      await this.ctx.api.delete(this.pods.info, namespace, name!, { preconditions: { uid: uid! } });
    } catch (err) {
      if (!isStatus(err, 404, 409)) throw err;
    }
  }
}

function taints(node: KubeObject): Array<Record<string, unknown>> {
  return Array.isArray(spec(node).taints) ? (spec(node).taints as unknown[]).filter(isObject) : [];
}

function outageConditions(node: KubeObject, mode: NodeOutageMode, at: string): unknown[] {
  return conditions(node).map((c) => {
    if (mode === 'unreachable') {
      return { ...c, status: 'Unknown', reason: 'NodeStatusUnknown', message: 'Kubelet stopped posting node status.', lastTransitionTime: at };
    }
    if (c.type !== 'Ready') return c;
    return { ...c, status: 'False', reason: 'KubeletNotReady', message: 'container runtime is down', lastHeartbeatTime: at, lastTransitionTime: at };
  });
}

function healthyConditions(node: KubeObject, at: string): unknown[] {
  return conditions(node).map((c) => {
    const healthy = HEALTHY_CONDITIONS[str(c.type)];
    if (!healthy || c.status === healthy[0]) return c;
    return { ...c, status: healthy[0], reason: healthy[1], message: healthy[2], lastHeartbeatTime: at, lastTransitionTime: at };
  });
}
