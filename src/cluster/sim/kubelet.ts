/**
 * Simulated kubelets, one per simulated node, sharing one pod informer. For each pod bound to a
 * simulated node they write the pod status as a kubelet's status manager does (merge patches on
 * pods/status with a uid precondition):
 * 1. right after binding: phase Pending, hostIP, startTime, containers waiting in ContainerCreating,
 *    conditions PodReadyToStartContainers=False, Initialized=True, Ready/ContainersReady=False,
 *    PodScheduled=True;
 * 2. `podStartDelayMs` later: phase Running, podIP, every container running and ready, all
 *    conditions True;
 * 3. pods with restartPolicy Never or OnFailure (Job pods) "run" `podRunToCompletionMs`, then exit 0:
 *    phase Succeeded, containers terminated with reason Completed, Ready=False/PodCompleted.
 * A pod whose volume names a Secret or ConfigMap that does not exist (and is not `optional`) stays in
 * step 1, as the kubelet's volume manager keeps it there (a Warning FailedMount event
 * `MountVolume.SetUp failed for volume "v" : secret "s" not found`), until the object appears.
 * Deletion: a pod with a deletionTimestamp is stopped (its containers take `podStopDelayMs`, at most
 * the pod's grace period), its terminal status is written, then the kubelet deletes it with
 * gracePeriodSeconds=0 (uid precondition). A pod with finalizers then stays, terminating, until they
 * are removed, as on a real cluster.
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
import { condition, isBeingDeleted, isPodTerminal, now, podPhase, spec, status, str } from './objects.js';
import type { CoreEventRecorder } from './events.js';
import { nodeIndex, nodeIp } from './nodes.js';
import { isStatus, type SimContext, type WorkRunner } from './runtime.js';

interface ExitKind {
  code: number;
  reason: string;
}
const EXIT_OK: ExitKind = { code: 0, reason: 'Completed' };
const EXIT_SIGTERM: ExitKind = { code: 143, reason: 'Error' };
const EXIT_NEVER_STARTED: ExitKind = { code: 137, reason: 'ContainerStatusUnknown' };

interface PodState {
  uid: string;
  acceptedAt?: number;
  runningAt?: number;
  terminatingSince?: number;
  deleted?: boolean;
  /** The volume it waits for, as `<kind> <name>`, after a FailedMount. */
  waitingFor?: string | undefined;
}

export class Kubelets {
  private readonly enqueue: (key: string, delayMs?: number) => void;
  private readonly state = new Map<string, PodState>();
  private readonly nextIp = new Map<string, number>();
  private readonly nodeSet: Set<string>;
  private readonly recorders = new Map<string, CoreEventRecorder>();
  /** `<node> <image>` of the images pulled so far (what IfNotPresent finds on the node). */
  private readonly pulled = new Set<string>();

  private constructor(
    private readonly ctx: SimContext,
    runner: WorkRunner,
    private readonly pods: Informer,
    private readonly secrets: Informer | undefined,
    private readonly configMaps: Informer | undefined,
  ) {
    this.nodeSet = new Set(ctx.nodes);
    this.enqueue = runner.register('kubelet', (key) => this.sync(key));
    for (const node of ctx.nodes) this.recorders.set(node, ctx.events.recorder({ component: 'kubelet', host: node }));
  }

  private containerEvent(pod: KubeObject, container: Record<string, unknown>, init: boolean, reason: string, message: string): void {
    const recorder = this.recorders.get(str(spec(pod).nodeName));
    const fieldPath = `spec.${init ? 'initContainers' : 'containers'}{${str(container.name)}}`;
    recorder?.event({ ...pod, apiVersion: 'v1', kind: 'Pod' }, 'Normal', reason, message, fieldPath);
  }

  /** EnsureImageExists, then startContainer's Created and Started, for every container in start order. */
  private recordStart(pod: KubeObject): void {
    const node = str(spec(pod).nodeName);
    for (const init of [true, false]) {
      for (const c of this.containers(pod, init)) {
        const image = str(c.image);
        const policy = str(c.imagePullPolicy, 'IfNotPresent');
        const present = this.pulled.has(`${node} ${image}`);
        if (policy === 'Always' || (policy === 'IfNotPresent' && !present)) {
          this.pulled.add(`${node} ${image}`);
          const { durationMs, size } = simulatedPull(image);
          this.containerEvent(pod, c, init, 'Pulling', `Pulling image "${image}"`);
          this.containerEvent(pod, c, init, 'Pulled', `Successfully pulled image "${image}" in ${goDuration(durationMs)} (${goDuration(durationMs)} including waiting). Image size: ${size} bytes.`);
        } else {
          this.containerEvent(pod, c, init, 'Pulled', `Container image "${image}" already present on machine`);
        }
        this.containerEvent(pod, c, init, 'Created', `Created container: ${str(c.name)}`);
        this.containerEvent(pod, c, init, 'Started', `Started container ${str(c.name)}`);
      }
    }
  }

  static async start(ctx: SimContext, runner: WorkRunner): Promise<Kubelets | undefined> {
    const [pods, secrets, configMaps] = await Promise.all([ctx.informers.forKind('Pod', 'v1'), ctx.informers.forKind('Secret', 'v1'), ctx.informers.forKind('ConfigMap', 'v1')]);
    if (!pods) return undefined;
    const k = new Kubelets(ctx, runner, pods, secrets, configMaps);
    // A pod waiting for a volume's Secret or ConfigMap is synced again when one appears.
    for (const [kind, informer] of [['secret', secrets], ['configmap', configMaps]] as const) {
      informer?.subscribe((type, obj) => {
        if (type === 'DELETED') return;
        const wanted = `${kind} ${obj.metadata?.name}`;
        for (const [key, s] of k.state) if (s.waitingFor === wanted && key.startsWith(`${obj.metadata?.namespace}/`)) k.enqueue(key);
      });
    }
    pods.subscribe((type, pod) => {
      const key = `${pod.metadata!.namespace}/${pod.metadata!.name}`;
      if (type === 'DELETED') {
        if (k.state.get(key)?.uid === pod.metadata?.uid) k.state.delete(key);
        return;
      }
      if (k.nodeSet.has(str(spec(pod).nodeName))) k.enqueue(key);
    });
    return k;
  }

  private stateOf(key: string, pod: KubeObject): PodState {
    let s = this.state.get(key);
    if (!s || s.uid !== pod.metadata?.uid) this.state.set(key, (s = { uid: pod.metadata!.uid! }));
    return s;
  }

  private async sync(key: string): Promise<void> {
    const [namespace, name] = key.split('/') as [string, string];
    const pod = this.pods.get(namespace, name);
    if (!pod || !this.nodeSet.has(str(spec(pod).nodeName))) return;
    const s = this.stateOf(key, pod);
    const t = Date.now();
    const { timing } = this.ctx;

    if (isBeingDeleted(pod)) {
      if (s.deleted) return;
      const wasRunning = podPhase(pod) === 'Running';
      if (s.terminatingSince === undefined) {
        s.terminatingSince = t;
        if (wasRunning) for (const c of this.containers(pod)) this.containerEvent(pod, c, false, 'Killing', `Stopping container ${str(c.name)}`);
      }
      const graceMs = Math.max(0, (pod.metadata?.deletionGracePeriodSeconds ?? 30) * 1000);
      const stopAt = s.terminatingSince + (wasRunning ? Math.min(timing.podStopDelayMs, graceMs) : 0);
      if (t < stopAt) {
        this.enqueue(key, stopAt - t);
        return;
      }
      if (!isPodTerminal(pod)) {
        // Stopped by deletion: SIGTERM ends a long-running server cleanly (exit 0) and a batch container
        // with an error (143); containers that never started end ContainerStatusUnknown (137).
        const exit = !wasRunning ? EXIT_NEVER_STARTED : this.runsToCompletion(pod) ? EXIT_SIGTERM : EXIT_OK;
        await this.writeStatus(pod, this.terminatedStatus(pod, exit));
      }
      s.deleted = true;
      this.ctx.log(`kubelet: deleting ${key} (grace period over)`);
      try {
        await this.ctx.api.delete(this.pods.info, namespace, name, { gracePeriodSeconds: 0, preconditions: { uid: s.uid } });
      } catch (err) {
        if (!isStatus(err, 404, 409)) {
          s.deleted = false;
          throw err;
        }
      }
      return;
    }
    if (isPodTerminal(pod)) return;

    const phase = podPhase(pod);
    const running = phase === 'Running' && condition(pod, 'Ready')?.status === 'True';
    if (!running) {
      if (s.acceptedAt === undefined) {
        s.acceptedAt = t;
        if (timing.podStartDelayMs > 0) {
          await this.writeStatus(pod, this.pendingStatus(pod));
          this.enqueue(key, timing.podStartDelayMs);
          return;
        }
      }
      const startAt = s.acceptedAt + timing.podStartDelayMs;
      if (t < startAt) {
        this.enqueue(key, startAt - t);
        return;
      }
      const missing = this.missingVolume(pod);
      if (missing) {
        if (s.waitingFor !== `${missing.kind} ${missing.name}`) {
          s.waitingFor = `${missing.kind} ${missing.name}`;
          if (!str(status(pod).phase)) await this.writeStatus(pod, this.pendingStatus(pod));
          this.ctx.log(`kubelet: ${key} waits for ${missing.kind} ${missing.name} (volume ${missing.volume})`);
          this.recorders.get(str(spec(pod).nodeName))?.event({ ...pod, apiVersion: 'v1', kind: 'Pod' }, 'Warning', 'FailedMount', `MountVolume.SetUp failed for volume "${missing.volume}" : ${missing.kind} "${missing.name}" not found`);
        }
        return;
      }
      s.waitingFor = undefined;
      s.runningAt = t;
      this.recordStart(pod);
      await this.writeStatus(pod, this.runningStatus(pod));
      if (this.runsToCompletion(pod)) this.enqueue(key, timing.podRunToCompletionMs);
      return;
    }
    if (this.runsToCompletion(pod)) {
      s.runningAt ??= t;
      const doneAt = s.runningAt + timing.podRunToCompletionMs;
      if (t < doneAt) {
        this.enqueue(key, doneAt - t);
        return;
      }
      this.ctx.log(`kubelet: ${key} completed`);
      await this.writeStatus(pod, this.completedStatus(pod));
    }
  }

  /** The first volume (also a projected volume's source) whose non-optional Secret or ConfigMap does not exist. */
  private missingVolume(pod: KubeObject): { volume: string; kind: 'secret' | 'configmap'; name: string } | undefined {
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

  private runsToCompletion(pod: KubeObject): boolean {
    const policy = str(spec(pod).restartPolicy, 'Always');
    return policy === 'Never' || policy === 'OnFailure';
  }

  private async writeStatus(pod: KubeObject, next: Record<string, unknown>): Promise<void> {
    try {
      const written = await this.ctx.api.patch(this.pods.info, pod.metadata?.namespace, pod.metadata!.name!, 'merge', { metadata: { uid: pod.metadata?.uid }, status: next }, 'status');
      await this.pods.waitForWrite(written, 2000);
    } catch (err) {
      if (!isStatus(err, 404, 409)) throw err;
    }
  }

  private podIp(pod: KubeObject): string {
    const existing = str(status(pod).podIP);
    if (existing) return existing;
    const node = str(spec(pod).nodeName);
    const n = this.nextIp.get(node) ?? 0;
    this.nextIp.set(node, n + 1);
    return this.ctx.network.podIp(nodeIndex(this.ctx.nodes, node), n);
  }

  private conds(pod: KubeObject, values: Record<string, [string, string?, string?]>): unknown[] {
    const at = now();
    return ['PodReadyToStartContainers', 'Initialized', 'Ready', 'ContainersReady', 'PodScheduled'].map((type) => {
      const [st, reason, message] = values[type] ?? ['True'];
      const existing = condition(pod, type);
      const c: Record<string, unknown> = { type, status: st, lastProbeTime: null, lastTransitionTime: existing?.status === st ? existing.lastTransitionTime ?? at : at };
      if (reason) c.reason = reason;
      if (message) c.message = message;
      return c;
    });
  }

  private base(pod: KubeObject): Record<string, unknown> {
    const hostIP = nodeIp(this.ctx.nodes, str(spec(pod).nodeName));
    return { hostIP, hostIPs: [{ ip: hostIP }], startTime: str(status(pod).startTime) || now() };
  }

  private containers(pod: KubeObject, init = false): Array<Record<string, unknown>> {
    const list = spec(pod)[init ? 'initContainers' : 'containers'];
    return Array.isArray(list) ? list.filter(isObject) : [];
  }

  private containerId(pod: KubeObject, name: string): string {
    return 'containerd://' + createHash('sha256').update(`${pod.metadata?.uid}/${name}`).digest('hex');
  }

  private imageId(image: string): string {
    return `${image.split(':')[0]}@sha256:${createHash('sha256').update(image).digest('hex')}`;
  }

  private initStatuses(pod: KubeObject): Record<string, unknown> {
    const inits = this.containers(pod, true);
    if (inits.length === 0) return {};
    const at = now();
    return {
      initContainerStatuses: inits.map((c) => ({
        name: str(c.name),
        state: { terminated: { exitCode: 0, reason: 'Completed', startedAt: at, finishedAt: at, containerID: this.containerId(pod, str(c.name)) } },
        lastState: {},
        ready: true,
        restartCount: 0,
        image: str(c.image),
        imageID: this.imageId(str(c.image)),
        containerID: this.containerId(pod, str(c.name)),
        started: false,
      })),
    };
  }

  private pendingStatus(pod: KubeObject): Record<string, unknown> {
    const names = this.containers(pod).map((c) => str(c.name));
    const unready = `containers with unready status: [${names.join(' ')}]`;
    return {
      phase: 'Pending',
      conditions: this.conds(pod, {
        PodReadyToStartContainers: ['False'],
        Ready: ['False', 'ContainersNotReady', unready],
        ContainersReady: ['False', 'ContainersNotReady', unready],
      }),
      ...this.base(pod),
      containerStatuses: this.containers(pod).map((c) => ({
        name: str(c.name),
        state: { waiting: { reason: 'ContainerCreating' } },
        lastState: {},
        ready: false,
        restartCount: 0,
        image: str(c.image),
        imageID: '',
        started: false,
      })),
    };
  }

  private runningStatus(pod: KubeObject): Record<string, unknown> {
    const ip = this.podIp(pod);
    const at = now();
    return {
      phase: 'Running',
      conditions: this.conds(pod, {}),
      ...this.base(pod),
      podIP: ip,
      podIPs: [{ ip }],
      ...this.initStatuses(pod),
      containerStatuses: this.containers(pod).map((c) => ({
        name: str(c.name),
        state: { running: { startedAt: at } },
        lastState: {},
        ready: true,
        restartCount: 0,
        image: str(c.image),
        imageID: this.imageId(str(c.image)),
        containerID: this.containerId(pod, str(c.name)),
        started: true,
      })),
    };
  }

  /** Every container exited with `exit`: the status of a completed pod, or of a pod stopped by deletion. */
  private terminatedStatus(pod: KubeObject, exit: ExitKind = EXIT_OK): Record<string, unknown> {
    const reason = exit.code === 0 ? 'PodCompleted' : 'PodFailed';
    const at = now();
    const st = status(pod);
    const previous = Array.isArray(st.containerStatuses) ? st.containerStatuses.filter(isObject) : [];
    return {
      phase: exit.code === 0 ? 'Succeeded' : 'Failed',
      conditions: this.conds(pod, {
        PodReadyToStartContainers: ['False'],
        Initialized: ['True', reason],
        Ready: ['False', reason],
        ContainersReady: ['False', reason],
      }),
      ...this.base(pod),
      ...(st.podIP ? { podIP: st.podIP, podIPs: st.podIPs } : {}),
      containerStatuses: this.containers(pod).map((c) => {
        const prev = previous.find((p) => p.name === c.name);
        const startedAt = isObject(prev?.state) && isObject(prev.state.running) ? str(prev.state.running.startedAt, at) : at;
        return {
          name: str(c.name),
          state: { terminated: { exitCode: exit.code, reason: exit.reason, startedAt, finishedAt: at, containerID: this.containerId(pod, str(c.name)) } },
          lastState: {},
          ready: false,
          restartCount: 0,
          image: str(c.image),
          imageID: this.imageId(str(c.image)),
          containerID: this.containerId(pod, str(c.name)),
          started: false,
        };
      }),
    };
  }

  private completedStatus(pod: KubeObject): Record<string, unknown> {
    return this.terminatedStatus(pod, EXIT_OK);
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
