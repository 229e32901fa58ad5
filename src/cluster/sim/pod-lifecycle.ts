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
 *   Running with every container ready; with `podReadiness: 'probe'`, a pod whose containers have
 *   readiness probes with an initial delay runs unready (Ready False, ContainersNotReady). Awaited,
 *   as pod-ready is: while a pod waits to start, a run has not settled;
 * - pod-ready: then, the longest initialDelaySeconds later (a kubelet's first readiness probe, which
 *   the simulation takes to succeed): Ready;
 * - pod-complete: a running pod with restartPolicy Never or OnFailure and no probe exits 0 after
 *   `podRunToCompletionMs`: phase Succeeded. A container with a readiness, liveness or startup
 *   probe is a server (nifikop runs NiFi in bare pods with restartPolicy Never): it runs on.
 * Container faults (pod-crash plans; checked before pod-accept, so that pod-start never restarts a
 * faulted pod):
 * - container-crash: a running pod whose containers are to crash-loop: they exit 1 (lastState
 *   terminated, reason Error), restartCount + 1, waiting in CrashLoopBackOff, Ready False, a BackOff
 *   warning;
 * - container-crash-again: each back-off later (`crashBackOffMs`, doubled per restart, at most 30
 *   times; a restart that crashes again at once is not written in between), the same again;
 * - container-unready: a running pod whose containers are to turn unready: Ready False, running;
 * - container-recover: the fault was cleared: the containers run again at once (the back-off is not
 *   waited out) and are ready, restartCount and lastState kept.
 * After a node outage (node-not-ready plans; the kubelet does nothing while its node is out):
 * - node-recover: a running pod whose Ready condition the node lifecycle controller set False
 *   (ContainersReady still True) is reported Ready again.
 * Other restarts are not modelled (restartCount stays 0 without a fault).
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

/** A container fault injected by a pod-crash plan. */
export type ContainerFaultMode = 'crash-loop' | 'unready';

/** What the pod stages need from the kubelets that run them. */
export interface PodLifecycleContext {
  /** The container fault injected into the pod now, if any. */
  containerFault(pod: KubeObject): ContainerFaultMode | undefined;
  /** A BackOff warning for every container of a crashed pod. */
  recordBackOff(pod: KubeObject): void;
  readonly timing: SimTiming;
  readonly nodes: readonly string[];
  /** The pod's IP: kept if it has one or was given one (at acceptance), else the next free one on its node. */
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
const RUNNING: MatchExpression = { key: '.status.phase', operator: 'In', values: ['Running'] };
/** The fault the stages applied last (`@fault`, remembered) and the one injected now (`$containerFault`). */
const NO_FAULT_APPLIED: MatchExpression = { key: '@fault', operator: 'DoesNotExist' };

/** The back-off after the n-th restart: base * 2^(n-1), at most 30 times the base (10 s to 300 s on a kubelet). */
function crashBackOff(pod: KubeObject, ctx: PodLifecycleContext): number {
  return ctx.timing.crashBackOffMs * Math.min(30, 2 ** Math.max(0, restartCount(pod) - 1));
}

const CONTAINER_FAULT_STAGES: ReadonlyArray<Stage<PodLifecycleContext>> = [
  {
    name: 'container-crash',
    selector: {
      matchExpressions: [
        NOT_BEING_DELETED,
        RUNNING,
        { key: '$containerFault', operator: 'In', values: ['crash-loop'] },
        { key: '@fault', operator: 'NotIn', values: ['crash-loop'] },
      ],
    },
    steps: [
      { remember: 'fault', value: () => 'crash-loop' },
      { mark: 'crashed' },
      { log: (key) => `kubelet: ${key}: containers crashed (pod-crash fault), back-off` },
      { events: (pod, ctx) => ctx.recordBackOff(pod) },
      { status: crashLoopStatus },
    ],
  },
  {
    name: 'container-crash-again',
    selector: {
      matchExpressions: [
        NOT_BEING_DELETED,
        RUNNING,
        { key: '$containerFault', operator: 'In', values: ['crash-loop'] },
        { key: '@fault', operator: 'In', values: ['crash-loop'] },
      ],
    },
    delay: { from: 'crashed', ms: crashBackOff },
    steps: [{ mark: 'crashed' }, { events: (pod, ctx) => ctx.recordBackOff(pod) }, { status: crashLoopStatus }],
  },
  {
    name: 'container-unready',
    selector: {
      matchExpressions: [
        NOT_BEING_DELETED,
        RUNNING,
        { key: '$containerFault', operator: 'In', values: ['unready'] },
        { key: '@fault', operator: 'NotIn', values: ['unready'] },
      ],
    },
    steps: [
      { remember: 'fault', value: () => 'unready' },
      { log: (key) => `kubelet: ${key}: containers unready (pod-crash fault)` },
      { status: unreadyStatus },
    ],
  },
  {
    // A container restarted after a crash is probed again from its start: with podReadiness 'probe'
    // and a readiness delay, it runs unready until pod-ready (from the new 'running' mark).
    name: 'container-restart-probed',
    selector: {
      matchExpressions: [
        NOT_BEING_DELETED,
        RUNNING,
        { key: '@fault', operator: 'In', values: ['crash-loop'] },
        { key: '$containerFault', operator: 'DoesNotExist' },
        { key: '$readinessDelayed', operator: 'Exists' },
      ],
    },
    steps: [
      { remember: 'fault', value: () => undefined },
      { mark: 'running' },
      { log: (key) => `kubelet: ${key}: containers running again (fault healed), ready after their readiness probes' initial delay` },
      { status: (pod) => recoveredStatus(pod, false) },
    ],
  },
  {
    name: 'container-recover',
    selector: { matchExpressions: [NOT_BEING_DELETED, RUNNING, { key: '@fault', operator: 'Exists' }, { key: '$containerFault', operator: 'DoesNotExist' }] },
    steps: [
      { remember: 'fault', value: () => undefined },
      { log: (key) => `kubelet: ${key}: containers running and ready again (fault healed)` },
      { status: (pod) => recoveredStatus(pod) },
    ],
  },
];

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
    name: 'node-recover',
    selector: { matchExpressions: [NOT_BEING_DELETED, RUNNING, { key: '$markedNotReadyByNode', operator: 'Exists' }] },
    steps: [{ log: (key) => `kubelet: ${key} ready again (its node is back)` }, { status: (pod) => ({ conditions: conds(pod, {}) }) }],
  },
  ...CONTAINER_FAULT_STAGES,
  // Before pod-start, which matches any pod not yet running and ready.
  {
    name: 'pod-ready',
    selector: { matchExpressions: [NOT_BEING_DELETED, RUNNING, NO_FAULT_APPLIED, { key: '$readinessProbed', operator: 'Exists' }] },
    delay: { from: 'running', ms: readinessDelayMs },
    steps: [{ log: (key) => `kubelet: ${key} ready (its readiness probe's initial delay over)` }, { status: (pod) => recoveredStatus(pod) }],
    awaited: true,
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
    selector: { matchExpressions: [NOT_BEING_DELETED, NOT_TERMINAL, NOT_RUNNING, NO_FAULT_APPLIED, { key: '$missingVolume', operator: 'DoesNotExist' }] },
    delay: { from: 'accepted', ms: startDelay },
    steps: [
      { remember: 'waitingFor', value: () => undefined },
      { mark: 'running' },
      { events: (pod, ctx) => ctx.recordStart(pod) },
      { status: (pod, ctx) => runningStatus(pod, ctx, readinessDelayMs(pod, ctx) === 0) },
    ],
    // A pod accepted is about to run: a run that settled before would end on its Pending status, and
    // under load the start delay's timer fires late (a run with a quiet window of 250 ms ended before
    // its probed pod even started, at load 25).
    awaited: true,
  },
  {
    name: 'pod-complete',
    selector: {
      matchExpressions: [
        NOT_BEING_DELETED,
        { key: '$runningAndReady', operator: 'Exists' },
        NO_FAULT_APPLIED,
        { key: '$runsToCompletion', operator: 'Exists' },
      ],
    },
    delay: { from: 'running', ms: (_pod, ctx) => ctx.timing.podRunToCompletionMs },
    steps: [{ log: (key) => `kubelet: ${key} completed` }, { status: (pod, ctx) => terminatedStatus(pod, ctx, EXIT_OK) }],
  },
];

export const POD_LIFECYCLE: Lifecycle<PodLifecycleContext> = {
  facts: {
    runsToCompletion: (pod) => (runsToCompletion(pod) ? 'true' : undefined),
    // Running, not yet reported ready by the kubelet (not a node's MarkPodsNotReady), and probed after a delay.
    readinessDelayed: (pod, _memory, ctx) => (readinessDelayMs(pod, ctx) > 0 ? 'true' : undefined),
    readinessProbed: (pod, _memory, ctx) => (condition(pod, 'ContainersReady')?.status === 'False' && readinessDelayMs(pod, ctx) > 0 ? 'true' : undefined),
    runningAndReady: (pod) => (podPhase(pod) === 'Running' && condition(pod, 'Ready')?.status === 'True' ? 'true' : undefined),
    startsLater: (_pod, _memory, ctx) => (ctx.timing.podStartDelayMs > 0 ? 'true' : undefined),
    missingVolume: (pod, _memory, ctx) => volumeKey(ctx.missingVolume(pod)),
    containerFault: (pod, _memory, ctx) => ctx.containerFault(pod),
    // MarkPodsNotReady flips Ready alone; every status the kubelet writes moves both.
    markedNotReadyByNode: (pod) => (condition(pod, 'Ready')?.status === 'False' && condition(pod, 'ContainersReady')?.status === 'True' ? 'true' : undefined),
    unreportedMissingVolume: (pod, memory, ctx) => {
      const missing = volumeKey(ctx.missingVolume(pod));
      return missing !== memory.values.get('waitingFor') ? missing : undefined;
    },
  },
  stages: POD_STAGES,
};

/**
 * A pod that exits by itself: restartPolicy Never or OnFailure (a Job's pod), and no container the
 * kubelet probes. Nothing probes a task for readiness or liveness; a server in a bare pod with
 * restartPolicy Never (nifikop's NiFi nodes, which the operator replaces when they stop) is probed.
 */
function runsToCompletion(pod: KubeObject): boolean {
  const policy = str(spec(pod).restartPolicy, 'Always');
  if (policy !== 'Never' && policy !== 'OnFailure') return false;
  const containers = Array.isArray(spec(pod).containers) ? (spec(pod).containers as unknown[]) : [];
  return !containers.some((c) => isObject(c) && PROBES.some((probe) => isObject(c[probe])));
}

const PROBES = ['readinessProbe', 'livenessProbe', 'startupProbe'];

/**
 * How long after its start a pod is first reported ready: with `podReadiness: 'probe'`, the longest
 * readiness probe initialDelaySeconds of its containers (a kubelet probes first then; the simulation
 * takes the probe to succeed); else 0, ready at Running.
 */
function readinessDelayMs(pod: KubeObject, ctx: PodLifecycleContext): number {
  if (ctx.timing.podReadiness !== 'probe') return 0;
  let seconds = 0;
  for (const c of podContainers(pod)) {
    const probe = c.readinessProbe;
    if (isObject(probe) && typeof probe.initialDelaySeconds === 'number') seconds = Math.max(seconds, probe.initialDelaySeconds);
  }
  return seconds * 1000;
}

const KUBELET_CONDITIONS = ['PodReadyToStartContainers', 'Initialized', 'Ready', 'ContainersReady', 'PodScheduled'];

/** The kubelet's conditions as `values` say, then the others kept (DisruptionTarget, readiness gates): a kubelet writes only its own. */
function conds(pod: KubeObject, values: Record<string, [string, string?, string?]>): unknown[] {
  const at = now();
  const others = (Array.isArray(status(pod).conditions) ? (status(pod).conditions as unknown[]) : []).filter(
    (c) => isObject(c) && !KUBELET_CONDITIONS.includes(str(c.type)),
  );
  const own = KUBELET_CONDITIONS.map((type) => {
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
  return [...own, ...others];
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
  ctx.podIp(pod); // reserved now, reported once running (Kubelets.podIp)
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

/** A pod just started: Running, its containers ready unless `ready` is false (a readiness probe not yet run). */
function runningStatus(pod: KubeObject, ctx: PodLifecycleContext, ready = true): Record<string, unknown> {
  const ip = ctx.podIp(pod);
  const at = now();
  return {
    phase: 'Running',
    conditions: ready ? conds(pod, {}) : unreadyConditions(pod),
    ...base(pod, ctx),
    podIP: ip,
    podIPs: [{ ip }],
    ...initStatuses(pod),
    containerStatuses: podContainers(pod).map((c) => createdContainerStatus(pod, c, { running: { startedAt: at } }, ready, true)),
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

function restartCount(pod: KubeObject): number {
  const first = previousStatuses(pod)[0];
  return typeof first?.restartCount === 'number' ? first.restartCount : 0;
}

function previousStatuses(pod: KubeObject): Array<Record<string, unknown>> {
  const st = status(pod);
  return Array.isArray(st.containerStatuses) ? st.containerStatuses.filter(isObject) : [];
}

/** Ready and ContainersReady False (ContainersNotReady), the rest True: a running pod with unready containers. */
function unreadyConditions(pod: KubeObject): unknown[] {
  const unready = `containers with unready status: [${podContainers(pod)
    .map((c) => str(c.name))
    .join(' ')}]`;
  return conds(pod, { Ready: ['False', 'ContainersNotReady', unready], ContainersReady: ['False', 'ContainersNotReady', unready] });
}

/** Each container's status as `next` makes it from its previous one (absent: as a running container's). */
function mapContainers(pod: KubeObject, next: (c: Record<string, unknown>, prev: Record<string, unknown>) => Record<string, unknown>): unknown[] {
  const previous = previousStatuses(pod);
  const at = now();
  return podContainers(pod).map((c) => {
    const prev = previous.find((p) => p.name === c.name) ?? createdContainerStatus(pod, c, { running: { startedAt: at } }, true, true);
    return next(c, prev);
  });
}

/** The containers exited with an error and wait out their restart back-off. */
function crashLoopStatus(pod: KubeObject, ctx: PodLifecycleContext): Record<string, unknown> {
  const at = now();
  // The back-off after this crash: the next restart's (crashBackOff of the pod once restartCount went up).
  const backOffSeconds = Math.round((ctx.timing.crashBackOffMs * Math.min(30, 2 ** restartCount(pod))) / 1000);
  const ref = `${pod.metadata?.name}_${pod.metadata?.namespace}(${pod.metadata?.uid})`;
  return {
    conditions: unreadyConditions(pod),
    containerStatuses: mapContainers(pod, (c, prev) => {
      const state = isObject(prev.state) ? prev.state : {};
      const startedAt = isObject(state.running) ? str(state.running.startedAt, at) : at;
      return {
        ...prev,
        state: { waiting: { reason: 'CrashLoopBackOff', message: `back-off ${backOffSeconds}s restarting failed container=${str(c.name)} pod=${ref}` } },
        lastState: { terminated: { exitCode: 1, reason: 'Error', startedAt, finishedAt: at, containerID: containerId(pod, str(c.name)) } },
        ready: false,
        started: false,
        restartCount: Number(prev.restartCount ?? 0) + 1,
      };
    }),
  };
}

/** The containers run but fail their readiness. */
function unreadyStatus(pod: KubeObject): Record<string, unknown> {
  return { conditions: unreadyConditions(pod), containerStatuses: mapContainers(pod, (_c, prev) => ({ ...prev, ready: false })) };
}

/**
 * The fault healed: the containers run (a crashed one restarted now) and are ready, or not yet when
 * `ready` is false (a readiness probe's initial delay to wait); restartCount and lastState stay.
 */
function recoveredStatus(pod: KubeObject, ready = true): Record<string, unknown> {
  const at = now();
  return {
    conditions: ready ? conds(pod, {}) : unreadyConditions(pod),
    containerStatuses: mapContainers(pod, (_c, prev) => {
      const state = isObject(prev.state) && isObject(prev.state.running) ? prev.state : { running: { startedAt: at } };
      return { ...prev, state, ready, started: true };
    }),
  };
}
