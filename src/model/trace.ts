/**
 * Trace events: what kperturb records of a run, one JSON object per line.
 *
 * A run has two traces that share one sequence counter, so their events interleave in a total order:
 * - the controller trace (written by the proxy): every request the controller made, every response,
 *   every watch event it was shown, stream opens/closes, injected faults, controller starts/exits;
 * - the cluster trace (written by the cluster recorder): every state change the cluster went through,
 *   from kperturb's own watch on the API server, independent of what the controller saw.
 * The first line of each file is a header naming the format version.
 */
import type { ObjectKey, KubeObject } from './object-key.js';
import type { RequestVerb } from './api-path.js';

export const TRACE_FORMAT = 'kperturb.dev/trace/v1';

export type TraceSource = 'controller' | 'cluster';
export type WatchEventType = 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK' | 'ERROR';

interface Stamped {
  /** Monotonic sequence number, shared by the traces of one run. */
  seq: number;
  /** Wall-clock milliseconds since the epoch (for humans; order by `seq`). */
  ts: number;
}

export interface TraceHeader extends Stamped {
  type: 'header';
  format: typeof TRACE_FORMAT;
  source: TraceSource;
}

export interface ResourceRef {
  group: string;
  version: string;
  resource: string;
  subresource?: string;
  kind?: string;
  namespaced?: boolean;
}

/** A request the controller sent through the proxy. */
export interface RequestEvent extends Stamped {
  type: 'request';
  /** Request id, unique within the run; responses, watch events and stream events refer to it. */
  id: number;
  /** Which controller process (1 for the first start, 2 after the first restart...). */
  incarnation: number;
  method: string;
  path: string;
  query: Record<string, string>;
  verb: RequestVerb;
  resource?: ResourceRef;
  /** The object the request addresses (named requests, and creates whose body names the object). */
  key?: ObjectKey;
  /** The request body when it was JSON (YAML/protobuf bodies are recorded by size only). */
  body?: unknown;
  bodyBytes?: number;
  contentType?: string;
}

export interface ResponseEvent extends Stamped {
  type: 'response';
  id: number;
  status: number;
  /** The decoded JSON answer (an object, a list, or a Status); absent for watches and non-JSON answers. */
  object?: KubeObject | undefined;
  durationMs: number;
}

/** One watch event delivered to the controller on stream `id`. */
export interface WatchDeliveryEvent extends Stamped {
  type: 'watch-event';
  id: number;
  eventType: WatchEventType;
  key?: ObjectKey;
  resourceVersion?: string;
  object: KubeObject;
}

export interface StreamEvent extends Stamped {
  type: 'stream-open' | 'stream-close';
  id: number;
  reason?: string;
}

/**
 * The plan faults (see plan.ts) and the proxy primitives the coordinator may drive on its own:
 * `watch-hold` (hold a key's or kind's watch events), `disconnect` (close or reset streams or
 * connections), `delay` (latency for a class of requests), `lease-release` (the coordinator deleted
 * a dead controller's leader-election Lease so its successor need not wait).
 */
export type FaultKind =
  | 'crash-after-write'
  | 'stale-restart'
  | 'hold-until'
  | 'api-error'
  | 'watch-end'
  | 'pod-crash'
  | 'app-unavailable'
  | 'node-not-ready'
  | 'pod-evict'
  | 'pvc-fault'
  | 'watch-hold'
  | 'disconnect'
  | 'delay'
  | 'lease-release';

export interface FaultEvent extends Stamped {
  type: 'fault';
  fault: FaultKind;
  /**
   * `triggered`: the trigger matched (crash/stale-restart: the controller is held);
   * `killed`/`restarted`: the controller process was killed / the new one runs;
   * `held`: watch events are being held; `released`: held events (or a stale view) were released in order;
   * `expired`: held streams were ended with an in-stream 410 Expired;
   * `applied`: a one-shot primitive took effect (disconnect, delay armed, lease deleted), or a fault
   * on the managed system started (pod-crash, app-unavailable, node-not-ready, pod-evict, pvc-fault: in the cluster trace);
   * `healed`: a fault on the managed system ended (in the cluster trace);
   * `not-injected`: the run ended before the fault's trigger matched.
   */
  phase: 'triggered' | 'killed' | 'restarted' | 'held' | 'released' | 'expired' | 'applied' | 'healed' | 'not-injected';
  /** The request that matched the trigger. */
  requestId?: number;
  /** Index of the fault in the plan's `spec.faults`, when it comes from a plan. */
  faultIndex?: number;
  /** The object key the fault acts on, when it acts on one. */
  key?: ObjectKey;
  /** stale-restart: the resourceVersion of the frozen view. */
  resourceVersion?: string;
  /** Watch streams affected (request ids). */
  streams?: number[];
  /**
   * Set when what the fault served goes beyond the Kubernetes API contract (docs/fidelity.md): why,
   * e.g. a consistent read (LIST with resourceVersion unset) answered from a stale view. No real API
   * server does that, so a bug found this way may be an artifact of the fault.
   */
  beyondContract?: string;
  detail: string;
}

/**
 * Serialized delivery (causality learning): the proxy delivered one watch event (`watchEventSeq`, on
 * stream `id`) and then waited until the controller was quiet. Every request the controller started
 * between an episode's `start` and `end` most likely reacts to that event (or to earlier ones).
 * `end.quiet` is false when the controller did not go quiet within the episode's time limit, or
 * when the episode ended early because the controller kept repeating a write the API server
 * refused (`end.retrying`; proxy/serialize.ts).
 */
export interface EpisodeEvent extends Stamped {
  type: 'episode';
  phase: 'start' | 'end';
  /** 1-based, in delivery order. */
  index: number;
  /** The watch stream (request id) the event went to. */
  id: number;
  watchEventSeq?: number;
  key?: ObjectKey;
  eventType?: WatchEventType;
  resourceVersion?: string;
  quiet?: boolean;
  /** The episode ended early: the controller kept repeating a refused write (on `end`). */
  retrying?: boolean;
  /** Requests the controller started during the episode (on `end`). */
  requests?: number;
}

export interface ControllerProcessEvent extends Stamped {
  type: 'controller';
  action: 'start' | 'exit';
  incarnation: number;
  pid?: number;
  code?: number | null;
  signal?: string | null;
}

export interface WorkloadStepEvent extends Stamped {
  type: 'workload-step';
  index: number;
  description: string;
  phase: 'start' | 'done' | 'failed';
  error?: string;
  /** On `start`: what the step does (absent in traces written before it was recorded). */
  action?: WorkloadStepAction;
  /** On `start`: the objects a write step writes (an apply: its manifests'), or the one a wait step waits for. */
  keys?: ObjectKey[];
  /** On `done` of an apply or patch: the resourceVersion each answer carried, by object. */
  wrote?: Array<{ key: ObjectKey; resourceVersion: string }>;
  /** On `done` of a wait: how many times it read the object (1: the condition held when the step began). */
  polls?: number;
  /** On `done` of a wait for a state (not `absent`): the resourceVersion of the object that met it. */
  metAt?: string;
  /** On `done` of a wait with `onTimeout: continue` whose condition never held, or of a `settle` step that never saw quiet: the workload went on. */
  timedOut?: boolean;
  /** On `done` of a patch with `onError: continue` the API server refused (4xx): its status; `error` says why. */
  rejected?: number;
  /** On `done` or `failed` of a command or script: what it printed (its last part). */
  output?: string;
}

export type WorkloadStepAction = 'write' | 'wait' | 'sleep';

/** A state change of the cluster, from kperturb's own watch. */
export interface ClusterChangeEvent extends Stamped {
  type: 'cluster-change';
  eventType: 'ADDED' | 'MODIFIED' | 'DELETED';
  key: ObjectKey;
  resourceVersion: string;
  object: KubeObject;
}

/**
 * A `pods/exec`, `pods/attach`, `pods/log` or `pods/portforward` call and what it was answered (from
 * the config's exec/log rules: no container runs behind kperturb's kubelets). In the controller trace
 * it follows the call's `request` and `response` (same `id`); the cluster trace has it too, as what
 * happened "inside" the pod, since no object change shows it.
 */
export interface PodExecEvent extends Stamped {
  type: 'pod-exec';
  /** The controller request (controller trace, and the cluster trace's copy of a controller call). */
  id?: number;
  subresource: 'exec' | 'attach' | 'log' | 'portforward';
  /** Pod/namespace/name. */
  key: ObjectKey;
  container?: string;
  /** exec only: the argv. */
  command?: string[];
  /** 101 (upgraded), 200 (a log), or the status the call was refused with. */
  status: number;
  /** exec/attach: the exit code the client was given. */
  exitCode?: number;
  /** Index of the config's exec (or logs) rule that answered; absent for the default answer. */
  rule?: number;
  transport?: 'spdy' | 'websocket' | 'http';
  /** The negotiated stream protocol, e.g. v4.channel.k8s.io. */
  protocol?: string;
  /** The output and exit status reached the client. */
  delivered: boolean;
  stdoutBytes?: number;
  stderrBytes?: number;
  /** Why it was refused or not delivered. */
  message?: string;
}

/**
 * A call a stub application answered (kperturb.yaml `applications:`, src/stubs): the controller
 * talking to "its" application on a pod's or a Service's address, outside the Kubernetes API. Only in
 * the cluster trace, as what happened inside the cluster; the planner and oracles ignore it.
 */
export interface AppCallEvent extends Stamped {
  type: 'app-call';
  /** The application's name in kperturb.yaml. */
  application: string;
  protocol: 'zookeeper' | 'http';
  /** The pod (Pod/namespace/name) or Service (Service/namespace/name) whose address was called. */
  key: ObjectKey;
  /** ip:port the call arrived on. */
  address: string;
  /** zookeeper: connect, create, exists, getData, setData, getChildren, delete, ping, close, ...; http: the method. */
  operation: string;
  /** The znode or the HTTP path (with query). */
  path?: string;
  /** zookeeper: "ok" or the error's name (NoNode, NodeExists, BadVersion, ...); http: the status code. */
  result: string | number;
  /** zookeeper: the session. */
  session?: string;
  /** http: index of the rule that answered; absent for the default answer. */
  rule?: number;
}

export type ControllerTraceEvent =
  RequestEvent | ResponseEvent | WatchDeliveryEvent | StreamEvent | FaultEvent | EpisodeEvent | ControllerProcessEvent | WorkloadStepEvent | PodExecEvent;

/** What the cluster trace holds besides its header. */
/** Besides the cluster's changes: calls inside pods, and the faults kperturb made the managed system go through (`fault`, phases applied and healed). */
export type ClusterTraceEvent = ClusterChangeEvent | PodExecEvent | AppCallEvent | FaultEvent;

export type TraceEvent = TraceHeader | ControllerTraceEvent | ClusterTraceEvent;

/** Every `type` a trace line may have: a Record, so that the compiler keeps it equal to TraceEvent's. */
const EVENT_TYPES: Readonly<Record<TraceEvent['type'], true>> = {
  header: true,
  request: true,
  response: true,
  'watch-event': true,
  'stream-open': true,
  'stream-close': true,
  fault: true,
  episode: true,
  controller: true,
  'workload-step': true,
  'cluster-change': true,
  'pod-exec': true,
  'app-call': true,
};

export const TRACE_EVENT_TYPES = Object.keys(EVENT_TYPES) as ReadonlyArray<TraceEvent['type']>;

export function isTraceEventType(type: string): type is TraceEvent['type'] {
  return Object.hasOwn(EVENT_TYPES, type);
}

/** Distributive Omit, so that `Unstamped<TraceEvent>` keeps the union's variants apart. */
export type Unstamped<E> = E extends unknown ? Omit<E, 'seq' | 'ts'> : never;

/** One counter for all traces of a run. */
export class TraceSequence {
  private next = 1;
  take(): number {
    return this.next++;
  }
}

/**
 * Appends events to a JSON-lines trace. Writes are synchronous appends to an in-memory buffer that
 * is flushed to disk in batches; `close()` flushes the rest. Keeping `seq` assignment and buffering in
 * one place is what lets two writers share an order.
 */
export interface TraceSink {
  append(event: Unstamped<ControllerTraceEvent | ClusterTraceEvent>): number;
  /**
   * Optional: records a `response` whose answer is still JSON text (as the API server sent it,
   * decoded). The result is what `append` records with `object` set to `JSON.parse(objectJson)` if
   * that is an object, and without `object` otherwise; `event.object` (undefined) marks where it goes
   * among the keys. A sink that can copy the text into its line saves a parse and a serialization.
   */
  appendAnswer?(event: Unstamped<ResponseEvent>, objectJson: string): number;
  /**
   * Optional: records what `append` records for `watchDeliveryEvent(id, eventType, key,
   * resourceVersion, object)`. The proxy calls it once per event and stream: a sink can write the
   * line without making the event first. `shared`: the object is one line's, delivered on many
   * streams and never changed (never a Secret); the sink may keep its serialized text in the slot
   * and reuse it for every stream.
   */
  appendWatchEvent?(
    id: number,
    eventType: WatchEventType,
    key: ObjectKey | undefined,
    resourceVersion: string | undefined,
    object: KubeObject,
    shared?: SharedTextSlot,
  ): number;
}

/**
 * Where a trace sink keeps the serialized text of an object shared by many watch events (one event
 * line delivered on many streams), filled by the first sink that writes it. Its owner (the proxy's
 * watch lines, proxy/watch-lines.ts) makes one per shared object; what the sink puts there is its own.
 */
export interface SharedTextSlot {
  text?: unknown;
}

/** A `watch-event` as the proxy records it: its keys in this order, key and resourceVersion only when known. */
export function watchDeliveryEvent(
  id: number,
  eventType: WatchEventType,
  key: ObjectKey | undefined,
  resourceVersion: string | undefined,
  object: KubeObject,
): Unstamped<WatchDeliveryEvent> {
  // Built key by key (no spread copies: this runs per event and stream).
  const event = { type: 'watch-event', id, eventType } as Unstamped<WatchDeliveryEvent>;
  if (key !== undefined) event.key = key;
  if (resourceVersion !== undefined) event.resourceVersion = resourceVersion;
  event.object = object;
  return event;
}
