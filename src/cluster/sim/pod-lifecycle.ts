/**
 * The simulated pod lifecycle as data: the stage table the kubelets' StageEngine (stages.ts)
 * interprets, and the status templates its stages write (what a kubelet's status manager writes).
 * The stages, first match wins:
 * - pod-kill: a running pod got a deletionTimestamp: Killing events, the stop delay starts;
 * - pod-stop: `podStopDelayMs` later (at most the grace period; at once if it never ran): the
 *   terminal status of a pod stopped by deletion;
 * - pod-delete: then the kubelet deletes it with gracePeriodSeconds=0 (uid precondition);
 * - pod-accept: a pod just bound: phase Pending, containers waiting in ContainerCreating (only when
 *   `podStartDelayMs` > 0: otherwise the pod starts at once);
 * - pod-mount-failed: `podStartDelayMs` after acceptance, a volume's Secret or ConfigMap is missing:
 *   a FailedMount warning, and the pod waits until the object appears;
 * - pod-start: `podStartDelayMs` after acceptance: image pulls, Created and Started events, phase
 *   Running with every container ready;
 * - pod-complete: a running pod with restartPolicy Never or OnFailure exits 0 after
 *   `podRunToCompletionMs`: phase Succeeded.
 * Restarts are not modelled (restartCount stays 0), as before this table.
 */
import { createHash } from 'node:crypto';
import type { KubeObject } from '../../model/object-key.js';
import { isObject } from '../../model/object-key.js';
import { condition, now, podPhase, spec, status, str } from './objects.js';
import { nodeIp } from './nodes.js';
import type { SimTiming } from './runtime.js';
import type { Lifecycle, MatchExpression, Stage } from './stages.js';

/** A volume whose Secret or ConfigMap does not exist. */
export interface MissingVolume {
  volume: string;
  kind: 'secret' | 'configmap';
  name: string;
}

/** What the pod stages need from the kubelets that run them. */
export interface PodLifecycleContext {
  readonly timing: SimTiming;
  readonly nodes: readonly string[];
  /** The pod's IP: kept if it has one, else the next free one on its node. */
  podIp(pod: KubeObject): string;
  /** The first non-optional Secret or ConfigMap volume source that does not exist. */
  missingVolume(pod: KubeObject): MissingVolume | undefined;
  /** Pulling/Pulled, Created and Started for every container in start order. */
  recordStart(pod: KubeObject): void;
  /** Killing for every container of a running pod. */
  recordKilling(pod: KubeObject): void;
  recordFailedMount(pod: KubeObject, missing: MissingVolume): void;
}

interface ExitKind {
  code: number;
  reason: string;
}
const EXIT_OK: ExitKind = { code: 0, reason: 'Completed' };
const EXIT_SIGTERM: ExitKind = { code: 143, reason: 'Error' };
const EXIT_NEVER_STARTED: ExitKind = { code: 137, reason: 'ContainerStatusUnknown' };

const BEING_DELETED: MatchExpression = { key: '.metadata.deletionTimestamp', operator: 'Exists' };
const NOT_BEING_DELETED: MatchExpression = { key: '.metadata.deletionTimestamp', operator: 'DoesNotExist' };
const NOT_TERMINAL: MatchExpression = { key: '.status.phase', operator: 'NotIn', values: ['Succeeded', 'Failed'] };
const NOT_RUNNING: MatchExpression = { key: '$runningAndReady', operator: 'DoesNotExist' };
const NOT_YET_DELETED: MatchExpression = { key: '@deleted', operator: 'DoesNotExist' };

/** Containers stop in `podStopDelayMs`, at most the grace period; a pod that never ran stops at once. */
function stopDelay(pod: KubeObject, ctx: PodLifecycleContext): number {
  const graceMs = Math.max(0, (pod.metadata?.deletionGracePeriodSeconds ?? 30) * 1000);
  return podPhase(pod) === 'Running' ? Math.min(ctx.timing.podStopDelayMs, graceMs) : 0;
}

function startDelay(_pod: KubeObject, ctx: PodLifecycleContext): number {
  return ctx.timing.podStartDelayMs;
}

function volumeKey(missing: MissingVolume | undefined): string | undefined {
  return missing && `${missing.kind} ${missing.name}`;
}

const POD_STAGES: ReadonlyArray<Stage<PodLifecycleContext>> = [
  {
    name: 'pod-kill',
    selector: {
      matchExpressions: [BEING_DELETED, { key: '@terminating', operator: 'DoesNotExist' }, { key: '.status.phase', operator: 'In', values: ['Running'] }],
    },
    steps: [{ mark: 'terminating' }, { events: (pod, ctx) => ctx.recordKilling(pod) }],
  },
  {
    name: 'pod-stop',
    selector: { matchExpressions: [BEING_DELETED, NOT_YET_DELETED, NOT_TERMINAL] },
    delay: { from: 'terminating', ms: stopDelay },
    // SIGTERM ends a long-running server cleanly (exit 0) and a batch container with an error (143);
    // containers that never started end ContainerStatusUnknown (137).
    steps: [
      { status: (pod, ctx) => terminatedStatus(pod, ctx, podPhase(pod) !== 'Running' ? EXIT_NEVER_STARTED : runsToCompletion(pod) ? EXIT_SIGTERM : EXIT_OK) },
    ],
  },
  {
    name: 'pod-delete',
    selector: { matchExpressions: [BEING_DELETED, NOT_YET_DELETED] },
    delay: { from: 'terminating', ms: stopDelay },
    steps: [{ log: (key) => `kubelet: deleting ${key} (grace period over)` }, { delete: true }, { mark: 'deleted' }],
  },
  {
    name: 'pod-accept',
    selector: {
      matchExpressions: [
        NOT_BEING_DELETED,
        NOT_TERMINAL,
        NOT_RUNNING,
        { key: '@accepted', operator: 'DoesNotExist' },
        { key: '$startsLater', operator: 'Exists' },
      ],
    },
    steps: [{ mark: 'accepted' }, { status: pendingStatus }],
  },
  {
    name: 'pod-mount-failed',
    selector: { matchExpressions: [NOT_BEING_DELETED, NOT_TERMINAL, NOT_RUNNING, { key: '$unreportedMissingVolume', operator: 'Exists' }] },
    delay: { from: 'accepted', ms: startDelay },
    steps: [
      { remember: 'waitingFor', value: (pod, ctx) => volumeKey(ctx.missingVolume(pod)) },
      { status: (pod, ctx) => (str(status(pod).phase) ? undefined : pendingStatus(pod, ctx)) },
      {
        log: (key, pod, ctx) => {
          const missing = ctx.missingVolume(pod)!;
          return `kubelet: ${key} waits for ${missing.kind} ${missing.name} (volume ${missing.volume})`;
        },
      },
      { events: (pod, ctx) => ctx.recordFailedMount(pod, ctx.missingVolume(pod)!) },
    ],
  },
  {
    name: 'pod-start',
    selector: { matchExpressions: [NOT_BEING_DELETED, NOT_TERMINAL, NOT_RUNNING, { key: '$missingVolume', operator: 'DoesNotExist' }] },
    delay: { from: 'accepted', ms: startDelay },
    steps: [{ remember: 'waitingFor', value: () => undefined }, { mark: 'running' }, { events: (pod, ctx) => ctx.recordStart(pod) }, { status: runningStatus }],
  },
  {
    name: 'pod-complete',
    selector: {
      matchExpressions: [
        NOT_BEING_DELETED,
        { key: '$runningAndReady', operator: 'Exists' },
        { key: '.spec.restartPolicy', operator: 'In', values: ['Never', 'OnFailure'] },
      ],
    },
    delay: { from: 'running', ms: (_pod, ctx) => ctx.timing.podRunToCompletionMs },
    steps: [{ log: (key) => `kubelet: ${key} completed` }, { status: (pod, ctx) => terminatedStatus(pod, ctx, EXIT_OK) }],
  },
];

export const POD_LIFECYCLE: Lifecycle<PodLifecycleContext> = {
  facts: {
    runningAndReady: (pod) => (podPhase(pod) === 'Running' && condition(pod, 'Ready')?.status === 'True' ? 'true' : undefined),
    startsLater: (_pod, _memory, ctx) => (ctx.timing.podStartDelayMs > 0 ? 'true' : undefined),
    missingVolume: (pod, _memory, ctx) => volumeKey(ctx.missingVolume(pod)),
    unreportedMissingVolume: (pod, memory, ctx) => {
      const missing = volumeKey(ctx.missingVolume(pod));
      return missing !== memory.values.get('waitingFor') ? missing : undefined;
    },
  },
  stages: POD_STAGES,
};

function runsToCompletion(pod: KubeObject): boolean {
  const policy = str(spec(pod).restartPolicy, 'Always');
  return policy === 'Never' || policy === 'OnFailure';
}

function conds(pod: KubeObject, values: Record<string, [string, string?, string?]>): unknown[] {
  const at = now();
  return ['PodReadyToStartContainers', 'Initialized', 'Ready', 'ContainersReady', 'PodScheduled'].map((type) => {
    const [st, reason, message] = values[type] ?? ['True'];
    const existing = condition(pod, type);
    const c: Record<string, unknown> = {
      type,
      status: st,
      lastProbeTime: null,
      lastTransitionTime: existing?.status === st ? (existing.lastTransitionTime ?? at) : at,
    };
    if (reason) c.reason = reason;
    if (message) c.message = message;
    return c;
  });
}

function base(pod: KubeObject, ctx: PodLifecycleContext): Record<string, unknown> {
  const hostIP = nodeIp(ctx.nodes, str(spec(pod).nodeName));
  return { hostIP, hostIPs: [{ ip: hostIP }], startTime: str(status(pod).startTime) || now() };
}

export function podContainers(pod: KubeObject, init = false): Array<Record<string, unknown>> {
  const list = spec(pod)[init ? 'initContainers' : 'containers'];
  return Array.isArray(list) ? list.filter(isObject) : [];
}

function containerId(pod: KubeObject, name: string): string {
  return 'containerd://' + createHash('sha256').update(`${pod.metadata?.uid}/${name}`).digest('hex');
}

function imageId(image: string): string {
  return `${image.split(':')[0]}@sha256:${createHash('sha256').update(image).digest('hex')}`;
}

/** A container's status once it has a container: created, running or exited. */
function createdContainerStatus(
  pod: KubeObject,
  c: Record<string, unknown>,
  state: Record<string, unknown>,
  ready: boolean,
  started: boolean,
): Record<string, unknown> {
  const containerID = containerId(pod, str(c.name));
  return { name: str(c.name), state, lastState: {}, ready, restartCount: 0, image: str(c.image), imageID: imageId(str(c.image)), containerID, started };
}

function initStatuses(pod: KubeObject): Record<string, unknown> {
  const inits = podContainers(pod, true);
  if (inits.length === 0) return {};
  const at = now();
  return {
    initContainerStatuses: inits.map((c) =>
      createdContainerStatus(
        pod,
        c,
        { terminated: { exitCode: 0, reason: 'Completed', startedAt: at, finishedAt: at, containerID: containerId(pod, str(c.name)) } },
        true,
        false,
      ),
    ),
  };
}

function pendingStatus(pod: KubeObject, ctx: PodLifecycleContext): Record<string, unknown> {
  const names = podContainers(pod).map((c) => str(c.name));
  const unready = `containers with unready status: [${names.join(' ')}]`;
  return {
    phase: 'Pending',
    conditions: conds(pod, {
      PodReadyToStartContainers: ['False'],
      Ready: ['False', 'ContainersNotReady', unready],
      ContainersReady: ['False', 'ContainersNotReady', unready],
    }),
    ...base(pod, ctx),
    containerStatuses: podContainers(pod).map((c) => ({
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

function runningStatus(pod: KubeObject, ctx: PodLifecycleContext): Record<string, unknown> {
  const ip = ctx.podIp(pod);
  const at = now();
  return {
    phase: 'Running',
    conditions: conds(pod, {}),
    ...base(pod, ctx),
    podIP: ip,
    podIPs: [{ ip }],
    ...initStatuses(pod),
    containerStatuses: podContainers(pod).map((c) => createdContainerStatus(pod, c, { running: { startedAt: at } }, true, true)),
  };
}

/** Every container exited with `exit`: the status of a completed pod, or of a pod stopped by deletion. */
function terminatedStatus(pod: KubeObject, ctx: PodLifecycleContext, exit: ExitKind): Record<string, unknown> {
  const reason = exit.code === 0 ? 'PodCompleted' : 'PodFailed';
  const at = now();
  const st = status(pod);
  const previous = Array.isArray(st.containerStatuses) ? st.containerStatuses.filter(isObject) : [];
  return {
    phase: exit.code === 0 ? 'Succeeded' : 'Failed',
    conditions: conds(pod, {
      PodReadyToStartContainers: ['False'],
      Initialized: ['True', reason],
      Ready: ['False', reason],
      ContainersReady: ['False', reason],
    }),
    ...base(pod, ctx),
    ...(st.podIP ? { podIP: st.podIP, podIPs: st.podIPs } : {}),
    containerStatuses: podContainers(pod).map((c) => {
      const prev = previous.find((p) => p.name === c.name);
      const startedAt = isObject(prev?.state) && isObject(prev.state.running) ? str(prev.state.running.startedAt, at) : at;
      return createdContainerStatus(
        pod,
        c,
        { terminated: { exitCode: exit.code, reason: exit.reason, startedAt, finishedAt: at, containerID: containerId(pod, str(c.name)) } },
        false,
        false,
      );
    }),
  };
}
