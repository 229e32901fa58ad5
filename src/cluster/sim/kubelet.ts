/**
 * Simulated kubelets, one per simulated node, sharing one pod informer. For each pod bound to a
 * simulated node they write the pod status as a kubelet's status manager does (merge patches on
 * pods/status with a uid precondition):
 * 1. right after binding: phase Pending, hostIP, startTime, containers waiting in ContainerCreating,
 *    conditions PodReadyToStartContainers=False, Initialized=True, Ready/ContainersReady=False,
 *    PodScheduled=True;
 * 2. `podStartDelayMs` later: phase Running, podIP, every container running and ready, all
 *    conditions True;
 * 3. pods with restartPolicy Never or OnFailure (Job pods) and no probed container "run"
 *    `podRunToCompletionMs`, then exit 0: phase Succeeded, containers terminated with reason
 *    Completed, Ready=False/PodCompleted.
 * A pod whose volume names a Secret or ConfigMap that does not exist (and is not `optional`) stays in
 * step 1, as the kubelet's volume manager keeps it there (a Warning FailedMount event
 * `MountVolume.SetUp failed for volume "v" : secret "s" not found`), until the object appears.
 * Deletion: a pod with a deletionTimestamp is stopped (its containers take `podStopDelayMs`, at most
 * the pod's grace period), its terminal status is written, then the kubelet deletes it with
 * gracePeriodSeconds=0 (uid precondition). A pod with finalizers then stays, terminating, until they
 * are removed, as on a real cluster.
 * The lifecycle itself is the stage table of pod-lifecycle.ts, run by the StageEngine of stages.ts;
 * this file holds what those stages ask of a kubelet: informers, pod IPs, the image cache, events.
 * Container faults (pod-crash plans, `setContainerFault`): a running pod's containers crash-loop
 * (restartCount up, waiting in CrashLoopBackOff with back-off, Ready False, a BackOff warning per
 * crash) or turn unready (Ready False), until the fault is cleared; then they run and are ready.
 * Node outages (node-not-ready plans, node-lifecycle.ts): the kubelet of an unreachable node does
 * nothing (a deleted pod stays terminating), that of a not-ready node only finishes deletions; after
 * the heal it reports its running pods Ready again (stage node-recover).
 * Events (core/v1, source kubelet on the pod's node) as the kubelet's image manager and runtime
 * write them, per container with fieldPath `spec.containers{name}` (`spec.initContainers{name}`):
 * Pulling/Pulled (an image is pulled once per node unless its pull policy is Always, then "already
 * present on machine"), Created, Started when the pod starts; Killing ("Stopping container x")
 * for each running container when a pod is deleted.
 */
import { createHash } from 'node:crypto';
import type { KubeObject } from '../../model/object-key.js';
import { isObject } from '../../model/object-key.js';
import type { Informer } from '../../kube/informer.js';
import { isBeingDeleted, spec, status, str } from './objects.js';
import type { CoreEventRecorder } from './events.js';
import { nodeIndex } from './nodes.js';
import { POD_LIFECYCLE, podContainers, type ContainerFaultMode, type MissingVolume, type PodLifecycleContext } from './pod-lifecycle.js';
import { isStatus, type SimContext, type SimTiming, type WorkRunner } from './runtime.js';
import { StageEngine } from './stages.js';

export type { ContainerFaultMode } from './pod-lifecycle.js';

/**
 * Container faults kperturb injects (pod-crash plans, src/coordinator/faults/pod-crash.ts): the
 * pod's containers crash-loop or turn unready until the fault is cleared. The pod-lifecycle stages
 * write what a kubelet would report.
 */
export interface KubeletFaults {
  /** Sets (or, with undefined, clears) the fault of a pod; false when no simulated kubelet runs the pod now. */
  setContainerFault(namespace: string, name: string, mode: ContainerFaultMode | undefined): boolean;
}

export class Kubelets implements PodLifecycleContext, KubeletFaults {
  /** Injected container faults, by namespace/name. */
  private readonly faults = new Map<string, ContainerFaultMode>();
  private readonly enqueue: (key: string, delayMs?: number) => void;
  private readonly engine: StageEngine<PodLifecycleContext>;
  private readonly nextIp = new Map<string, number>();
  /**
   * Each pod's IP, by uid, from its acceptance (pendingStatus asks for it): handed out in the order
   * pods are accepted, not in the order their start timers fire, which load can swap (a deterministic
   * run's three pods got 10.244.0.2 and .3 the other way round once in CI).
   */
  private readonly reservedIps = new Map<string, string>();
  private readonly nodeSet: Set<string>;
  private readonly recorders = new Map<string, CoreEventRecorder>();
  /** `<node> <image>` of the images pulled so far (what IfNotPresent finds on the node). */
  private readonly pulled = new Set<string>();
  readonly timing: SimTiming;
  readonly nodes: readonly string[];

  private constructor(
    private readonly ctx: SimContext,
    runner: WorkRunner,
    private readonly pods: Informer,
    private readonly secrets: Informer | undefined,
    private readonly configMaps: Informer | undefined,
  ) {
    this.timing = ctx.timing;
    this.nodes = ctx.nodes;
    this.nodeSet = new Set(ctx.nodes);
    this.enqueue = runner.register('kubelet', (key) => this.sync(key));
    const effects = {
      get: (key: string) => this.boundPod(key),
      writeStatus: (pod: KubeObject, next: Record<string, unknown>) => this.writeStatus(pod, next),
      delete: (pod: KubeObject) => this.deletePod(pod),
      requeue: (key: string, ms: number) => this.enqueue(key, ms),
      log: (line: string) => ctx.log(line),
    };
    this.engine = new StageEngine<PodLifecycleContext>(POD_LIFECYCLE, effects, this);
    for (const node of ctx.nodes) this.recorders.set(node, ctx.events.recorder({ component: 'kubelet', host: node }));
  }

  static async start(ctx: SimContext, runner: WorkRunner): Promise<Kubelets | undefined> {
    const [pods, secrets, configMaps] = await Promise.all([
      ctx.informers.forKind('Pod', 'v1'),
      ctx.informers.forKind('Secret', 'v1'),
      ctx.informers.forKind('ConfigMap', 'v1'),
    ]);
    if (!pods) return undefined;
    const k = new Kubelets(ctx, runner, pods, secrets, configMaps);
    // A pod waiting for a volume's Secret or ConfigMap is synced again when one appears.
    for (const [kind, informer] of [
      ['secret', secrets],
      ['configmap', configMaps],
    ] as const) {
      informer?.subscribe((type, obj) => {
        if (type === 'DELETED') return;
        for (const key of k.engine.keysRemembering('waitingFor', `${kind} ${obj.metadata?.name}`)) {
          if (key.startsWith(`${obj.metadata?.namespace}/`)) k.enqueue(key);
        }
      });
    }
    ctx.outages.onChange((node) => {
      for (const pod of pods.list()) if (str(spec(pod).nodeName) === node) k.enqueue(`${pod.metadata!.namespace}/${pod.metadata!.name}`);
    });
    pods.subscribe((type, pod) => {
      const key = `${pod.metadata!.namespace}/${pod.metadata!.name}`;
      if (type === 'DELETED') {
        k.engine.forget(key, pod.metadata?.uid);
        k.reservedIps.delete(str(pod.metadata?.uid));
        return;
      }
      if (k.nodeSet.has(str(spec(pod).nodeName))) k.enqueue(key);
    });
    return k;
  }

  /** When the last pod transition the kubelets wait to make by themselves is due (a pod turning ready); undefined: none. */
  pendingUntil(): number | undefined {
    return this.engine.pendingUntil();
  }

  setContainerFault(namespace: string, name: string, mode: ContainerFaultMode | undefined): boolean {
    const key = `${namespace}/${name}`;
    if (mode === undefined) this.faults.delete(key);
    else this.faults.set(key, mode);
    this.enqueue(key);
    return this.boundPod(key) !== undefined;
  }

  containerFault(pod: KubeObject): ContainerFaultMode | undefined {
    return this.faults.get(`${pod.metadata?.namespace}/${pod.metadata?.name}`);
  }

  recordBackOff(pod: KubeObject): void {
    const ref = `${pod.metadata?.name}_${pod.metadata?.namespace}(${pod.metadata?.uid})`;
    for (const c of podContainers(pod)) {
      this.recorders
        .get(str(spec(pod).nodeName))
        ?.event(
          { ...pod, apiVersion: 'v1', kind: 'Pod' },
          'Warning',
          'BackOff',
          `Back-off restarting failed container ${str(c.name)} in pod ${ref}`,
          `spec.containers{${str(c.name)}}`,
        );
    }
  }

  /** The pod of `key` if it is bound to one of the simulated nodes. */
  private boundPod(key: string): KubeObject | undefined {
    const [namespace, name] = key.split('/') as [string, string];
    const pod = this.pods.get(namespace, name);
    return pod && this.nodeSet.has(str(spec(pod).nodeName)) ? pod : undefined;
  }

  private async sync(key: string): Promise<void> {
    const pod = this.boundPod(key);
    if (!pod) return;
    const outage = this.ctx.outages.get(str(spec(pod).nodeName));
    if (outage && (outage.mode === 'unreachable' || !isBeingDeleted(pod))) return;
    await this.engine.sync(key, pod);
  }

  private containerEvent(pod: KubeObject, container: Record<string, unknown>, init: boolean, reason: string, message: string): void {
    const recorder = this.recorders.get(str(spec(pod).nodeName));
    const fieldPath = `spec.${init ? 'initContainers' : 'containers'}{${str(container.name)}}`;
    recorder?.event({ ...pod, apiVersion: 'v1', kind: 'Pod' }, 'Normal', reason, message, fieldPath);
  }

  /** EnsureImageExists, then startContainer's Created and Started, for every container in start order. */
  recordStart(pod: KubeObject): void {
    const node = str(spec(pod).nodeName);
    for (const init of [true, false]) {
      for (const c of podContainers(pod, init)) {
        const image = str(c.image);
        const policy = str(c.imagePullPolicy, 'IfNotPresent');
        const present = this.pulled.has(`${node} ${image}`);
        if (policy === 'Always' || (policy === 'IfNotPresent' && !present)) {
          this.pulled.add(`${node} ${image}`);
          const { durationMs, size } = simulatedPull(image);
          this.containerEvent(pod, c, init, 'Pulling', `Pulling image "${image}"`);
          this.containerEvent(
            pod,
            c,
            init,
            'Pulled',
            `Successfully pulled image "${image}" in ${goDuration(durationMs)} (${goDuration(durationMs)} including waiting). Image size: ${size} bytes.`,
          );
        } else {
          this.containerEvent(pod, c, init, 'Pulled', `Container image "${image}" already present on machine`);
        }
        this.containerEvent(pod, c, init, 'Created', `Created container: ${str(c.name)}`);
        this.containerEvent(pod, c, init, 'Started', `Started container ${str(c.name)}`);
      }
    }
  }

  recordKilling(pod: KubeObject): void {
    for (const c of podContainers(pod)) this.containerEvent(pod, c, false, 'Killing', `Stopping container ${str(c.name)}`);
  }

  recordFailedMount(pod: KubeObject, missing: MissingVolume): void {
    this.recorders
      .get(str(spec(pod).nodeName))
      ?.event(
        { ...pod, apiVersion: 'v1', kind: 'Pod' },
        'Warning',
        'FailedMount',
        `MountVolume.SetUp failed for volume "${missing.volume}" : ${missing.kind} "${missing.name}" not found`,
      );
  }

  /** The first volume (also a projected volume's source) whose non-optional Secret or ConfigMap does not exist. */
  missingVolume(pod: KubeObject): MissingVolume | undefined {
    const namespace = pod.metadata?.namespace;
    const volumes = Array.isArray(spec(pod).volumes) ? (spec(pod).volumes as unknown[]).filter(isObject) : [];
    for (const v of volumes) {
      const sources: Array<Record<string, unknown>> = [v];
      if (isObject(v.projected) && Array.isArray(v.projected.sources)) sources.push(...v.projected.sources.filter(isObject));
      for (const src of sources) {
        if (isObject(src.secret) && src.secret.optional !== true) {
          const name = str(src.secret.secretName ?? src.secret.name);
          if (name && this.secrets && !this.secrets.get(namespace, name)) return { volume: str(v.name), kind: 'secret', name };
        }
        if (isObject(src.configMap) && src.configMap.optional !== true) {
          const name = str(src.configMap.name);
          if (name && this.configMaps && !this.configMaps.get(namespace, name)) return { volume: str(v.name), kind: 'configmap', name };
        }
      }
    }
    return undefined;
  }

  podIp(pod: KubeObject): string {
    const existing = str(status(pod).podIP);
    if (existing) return existing;
    const uid = str(pod.metadata?.uid);
    const reserved = this.reservedIps.get(uid);
    if (reserved) return reserved;
    const node = str(spec(pod).nodeName);
    const n = this.nextIp.get(node) ?? 0;
    this.nextIp.set(node, n + 1);
    const ip = this.ctx.network.podIp(nodeIndex(this.ctx.nodes, node), n);
    this.reservedIps.set(uid, ip);
    return ip;
  }

  private async writeStatus(pod: KubeObject, next: Record<string, unknown>): Promise<void> {
    try {
      const written = await this.ctx.api.patch(
        this.pods.info,
        pod.metadata?.namespace,
        pod.metadata!.name!,
        'merge',
        { metadata: { uid: pod.metadata?.uid }, status: next },
        'status',
      );
      await this.pods.waitForWrite(written, 2000);
    } catch (err) {
      if (!isStatus(err, 404, 409)) throw err;
    }
  }

  /** The grace period is over: delete now, only the very pod stopped (uid precondition). */
  private async deletePod(pod: KubeObject): Promise<void> {
    try {
      await this.ctx.api.delete(this.pods.info, pod.metadata?.namespace, pod.metadata!.name!, {
        gracePeriodSeconds: 0,
        preconditions: { uid: pod.metadata!.uid! },
      });
    } catch (err) {
      if (!isStatus(err, 404, 409)) throw err;
    }
  }
}

/** A pull's duration and image size, derived from the image name so that messages are reproducible. */
function simulatedPull(image: string): { durationMs: number; size: number } {
  const digest = createHash('sha256').update(image).digest();
  return { durationMs: 200 + (digest.readUInt16BE(0) % 1800), size: 2_000_000 + (digest.readUInt32BE(2) % 60_000_000) };
}

/** time.Duration.String() of a whole number of milliseconds ("512ms", "1.2s"). */
export function goDuration(ms: number): string {
  if (ms < 1000) return `${ms}ms`;
  const seconds = (ms / 1000).toFixed(3).replace(/\.?0+$/, '');
  return `${seconds}s`;
}
