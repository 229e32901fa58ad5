/**
 * The oracles of `kperturb explore`: each generated step judged from its run's traces, with no
 * expectation written by hand (docs/explore.md).
 *
 * 1. Input validity first: a CR change the API server refused (the step's `rejected`) is `rejected`,
 *    not a bug; the CR stays the one before, and the step changes nothing to judge.
 * 2. Consistency, traced: the objects the controller writes (its requests in the proxy's trace) are
 *    searched for the value a step wrote. A marker (`kpm-<n>`, unique in the campaign) found there
 *    gives the field -> object map; a value without a marker is traced where a field of those objects
 *    changed to it in that step (said so: weaker). A later change of the field that never reaches the
 *    mapped objects, reaches them with another value, or leaves the old marker behind, alarms.
 *    A field the map has nothing for is judged by path and value: a field of the same name in a
 *    written object that changed with it before but not now (said so in the alarm). A field that
 *    copies the CR's generation, observedGeneration or resourceVersion is bookkeeping, never a place
 *    a value went (`bookkeepingFields`).
 * 3. Health at the sequence's end: StatefulSets and Deployments not ready, pods not Running, the
 *    controller exited or panicked. After a misoperation the step is `misoperation`, not a bug.
 *
 * The field -> object map carries from one sequence to the next (the same controller), in order.
 */
import type { ClusterChangeEvent, RequestEvent, TraceEvent, WorkloadStepEvent } from '../../src/model/trace.js';
import type { KubeObject, ObjectKey } from '../../src/model/object-key.js';
import { controllerKey, isObject } from '../../src/model/object-key.js';
import { WRITE_VERBS } from '../../src/model/api-path.js';
import { writeIdentity } from '../../src/model/controller-write.js';
import { formatPath, isKeyedSegment, parseFieldPath, valueAtPath, type FieldPath } from '../../src/model/field-path.js';
import type { ExploreSequence, ExploreStep } from '../../planner/explore/index.js';
import { quantitiesEqual } from '../quantity.js';
import { scanControllerLog } from '../health.js';
import { escapeRegExp } from '../../src/model/regexp.js';
import { copiesVersion, resourceVersionsOf } from '../version-copies.js';
import { INVALID_WORDS } from '../input-refusal.js';

export type ExploreOracle = 'consistency' | 'health' | 'crash' | 'differential' | 'rollback';
export type StepVerdict = 'ok' | 'rejected' | 'alarm' | 'misoperation' | 'not-run';

export interface ExploreAlarm {
  oracle: ExploreOracle;
  /** The sequence and its 1-based step (absent: the sequence's end). */
  sequence: string;
  step?: number;
  object?: ObjectKey;
  field?: string;
  expected?: unknown;
  found?: unknown;
  message: string;
  /** How the object and field were found: a traced marker, a traced value, or a path name alone. */
  matchedBy?: 'marker' | 'value' | 'path';
  /**
   * `environment` (as a finding's class, oracles/findings.ts): the alarm shows what kperturb's cluster
   * lacks, not the controller: it waited on the application it manages, which no kperturb cluster
   * runs. `why` says what showed it.
   */
  class?: 'environment';
  why?: string;
}

export interface TracedLocation {
  object: ObjectKey;
  field: string;
  /** `exact`: the field held the written value itself; `contains`: the marker inside a longer value. */
  relation: 'exact' | 'contains';
}

export interface StepJudgement {
  step: number;
  operation: string;
  kind: ExploreStep['kind'];
  property: string;
  path: string;
  setup?: boolean;
  verdict: StepVerdict;
  /** Why the API server refused it, or what the controller said of the input. */
  rejection?: string;
  /** Who refused it: the API server (the CR never changed), or the controller (a status or event naming the field or value as invalid). */
  rejectedBy?: 'api-server' | 'controller';
  /** The run this step was judged in, when not its sequence's: after a refused input, the rollback run that went on from the rolled-back CR. */
  ranIn?: string;
  /** Where the written value went, when this step taught it. */
  traced?: { via: 'marker' | 'value'; locations: TracedLocation[] };
  notes: string[];
}

export interface SequenceRun {
  sequence: ExploreSequence;
  /** The CR the sequence writes. */
  crKey: ObjectKey;
  /** Controller and cluster trace events, merged in seq order. */
  events: readonly TraceEvent[];
  controllerLog?: string;
  /** From run.json: how each controller incarnation ended (`expected`: kperturb stopped it). */
  controllerExits?: ReadonlyArray<{ code: number | null; signal: string | null; expected: boolean; incarnation?: number }>;
  /** The run's outcome: a failed workload or run is judged up to where it got. */
  error?: string;
}

export interface SequenceJudgement {
  sequence: string;
  steps: StepJudgement[];
  alarms: ExploreAlarm[];
  error?: string;
}

/** The learned field -> object map: by concrete CR path (`spec.image`). */
export type FieldMap = Map<string, { via: 'marker' | 'value'; marker?: string; locations: TracedLocation[] }>;

/** Workload step index of operation k: the seed's apply and settle come first, then patch and settle per operation. */
export const operationStepIndex = (k: number): number => 2 + 2 * k;

const IGNORED_KINDS = new Set(['Event', 'Lease', 'EndpointSlice', 'Endpoints', 'ControllerRevision']);
/** Subresources a client connects to (a stream into a container, not a change of the object). */
const CONNECT_SUBRESOURCES: ReadonlySet<string> = new Set(['exec', 'attach', 'portforward', 'proxy']);
const IGNORED_FIELD = /^metadata\.(managedFields|resourceVersion|uid|creationTimestamp|generation|selfLink)\b/;

export function judgeExploration(runs: readonly SequenceRun[], map: FieldMap = new Map()): SequenceJudgement[] {
  return runs.map((run) => judgeSequence(run, map));
}

export function judgeSequence(run: SequenceRun, map: FieldMap): SequenceJudgement {
  const { sequence } = run;
  const alarms: ExploreAlarm[] = [];
  const written = controllerWrittenKeys(run.events, run.crKey);
  const bookkeeping = bookkeepingFields(run.events, run.crKey, written);
  const boundaries = stepBoundaries(run.events);
  const states = replayStates(run.events, boundaries, sequence.steps.length);
  const steps: StepJudgement[] = [];
  let crBefore: unknown = sequence.seed;
  /** The operation step after which the controller refused the input: the rest ran on a CR it refuses, and is judged after rolling it back. */
  let refusedAt: number | undefined;
  for (const [k, step] of sequence.steps.entries()) {
    const judgement: StepJudgement = {
      step: k + 1,
      operation: step.operation,
      kind: step.kind,
      property: step.property,
      path: formatPath(step.path),
      ...(step.setup ? { setup: true } : {}),
      verdict: 'ok',
      notes: [],
    };
    steps.push(judgement);
    const done = boundaries.done.get(operationStepIndex(k));
    if (!done || !states[k] || !states[k + 1]) {
      judgement.verdict = 'not-run';
      continue;
    }
    if (refusedAt !== undefined && step.kind !== 'rollback') {
      judgement.verdict = 'not-run';
      judgement.notes.push(`ran on the CR step ${refusedAt + 1} left, which the controller refuses: judged after rolling that step back`);
      continue;
    }
    if (done.rejected !== undefined) {
      judgement.verdict = 'rejected';
      judgement.rejectedBy = 'api-server';
      judgement.rejection = done.error ?? `HTTP ${done.rejected}`;
      continue;
    }
    const before = states[k]!;
    const after = states[k + 1]!;
    const crAfter = after.get(run.crKey) ?? step.cr;
    if (step.kind === 'rollback') {
      // Judged by the rollback oracle (rollback.ts); the steps after it run on the CR it brought back.
      crBefore = crAfter;
      refusedAt = undefined;
      continue;
    }
    const refusal =
      controllerRefusal(step, before, after, run.crKey, written) ?? controllerWriteRefused(step, run, k) ?? controllerRewrote(step, run, k, crAfter);
    if (refusal) {
      judgement.verdict = 'rejected';
      judgement.rejectedBy = 'controller';
      judgement.rejection = refusal;
      refusedAt = k;
      continue;
    }
    const found = consistency(step, judgement, map, { before, after, written, bookkeeping }, crBefore, crAfter);
    for (const a of found) {
      const waiting = a.object ? waitingOnApplication(run, k, a.object, a.field, after) : undefined;
      alarms.push({
        ...a,
        sequence: sequence.name,
        step: k + 1,
        ...(waiting ? { class: 'environment' as const, why: waiting, message: `${a.message} (environment: ${waiting})` } : {}),
      });
    }
    if (found.length > 0) judgement.verdict = step.kind === 'misoperation' ? 'misoperation' : 'alarm';
    crBefore = crAfter;
  }
  const end = states[refusedAt !== undefined ? refusedAt + 1 : sequence.steps.length];
  if (end) {
    const unhealthy = healthAlarms(end, sequence.name);
    const last = steps.at(-1);
    // A pod placed by a generated value: a node label or a node name no node has, an affinity term
    // on a topology key no node carries, a scheduler no cluster runs. The scheduler leaves it
    // Pending, or a pod bound to a node that does not exist stays (the embedded cluster runs no pod
    // GC), and a StatefulSet waits for it before it rolls on, even after the CR stepped back
    // (Kubernetes' "forced rollback"). That is the input asking for what the cluster does not have
    // (Acto's unsatisfiable affinity, a misoperation), not the controller: the step whose marker the
    // pod holds is a misoperation, and the pod and the objects that control it are notes on it. So is
    // a pod that mounts or reads a ConfigMap or Secret whose name a step wrote and no one made: it
    // waits in ContainerCreating for the input's object. A misoperation is not rolled back (rollback.ts).
    const placed = placementLeftovers(end, sequence.steps);
    const alarmUnlessPlaced = (a: ExploreAlarm): void => {
      const by = a.object !== undefined ? placed.get(a.object) : undefined;
      if (by === undefined) {
        alarms.push(a);
        return;
      }
      const judged = steps[by.step]!;
      if (judged.verdict === 'ok') judged.verdict = 'misoperation';
      const what = by.missing ? `waits for ${by.missing}, named by this step's value` : "placed by this step's value";
      judged.notes.push(`${a.message}: ${what} (${by.holder} ${by.field} holds ${sequence.steps[by.step]!.marker})`);
    };
    // Judged by recovery: a misoperation the sequence came back from is not a bug; one it ended on is labelled so.
    if (unhealthy.length > 0 && last?.kind === 'misoperation') {
      last.verdict = 'misoperation';
      last.notes.push(...unhealthy.map((a) => a.message));
    } else if (refusedAt !== undefined) {
      // What an input the controller refused broke (zookeeper-operator puts a volumeMount of no
      // volume on its StatefulSet, whose pod the API server refuses) is that input's doing: the
      // rollback oracle judges whether re-applying the CR before it brings health back. An object
      // already unhealthy before that step still alarms, unless an earlier step's value placed it.
      const before = new Set(healthAlarms(states[refusedAt] ?? new Map(), sequence.name).map((a) => a.object));
      for (const a of unhealthy)
        if (before.has(a.object)) alarmUnlessPlaced(a);
        else steps[refusedAt]!.notes.push(`${a.message}: after the input it refused, judged by rolling it back`);
    } else for (const a of unhealthy) alarmUnlessPlaced(a);
  }
  // A run that failed before any operation (the controller could not start, a setup file was refused)
  // is an error of the set-up, not a finding about the controller: no crash alarm for it.
  if (run.error && steps.every((s) => s.verdict === 'not-run')) return { sequence: sequence.name, steps, alarms: [], error: run.error };
  alarms.push(...crashAlarms(run, sequence.name, exitSteps(run.events, boundaries, sequence.steps.length)));
  return { sequence: sequence.name, steps, alarms, ...(run.error ? { error: run.error } : {}) };
}

/** The cluster's objects after operation step `k` (0-based) of a sequence run: at the next operation's start, or the trace's end. */
export function stateAfterStep(events: readonly TraceEvent[], k: number, steps: number): State | undefined {
  return replayStates(events, stepBoundaries(events), steps)[k + 1];
}

// ---- trace reading ------------------------------------------------------------------------------

interface Boundaries {
  /** seq of each workload step's start. */
  start: Map<number, number>;
  done: Map<number, WorkloadStepEvent>;
  last: number;
}

function stepBoundaries(events: readonly TraceEvent[]): Boundaries {
  const start = new Map<number, number>();
  const done = new Map<number, WorkloadStepEvent>();
  let last = 0;
  for (const e of events) {
    last = Math.max(last, e.seq);
    if (e.type !== 'workload-step') continue;
    if (e.phase === 'start') start.set(e.index, e.seq);
    else done.set(e.index, e);
  }
  return { start, done, last };
}

type State = Map<ObjectKey, KubeObject>;

/**
 * The cluster's objects when each operation starts (index k) and after the last one (index n): the
 * state before operation k is the one at its patch's start, after the settle that ended the step before.
 */
function replayStates(events: readonly TraceEvent[], b: Boundaries, n: number): Array<State | undefined> {
  const cuts: number[] = [];
  for (let k = 0; k < n; k++) cuts.push(b.start.get(operationStepIndex(k)) ?? Infinity);
  cuts.push(b.last + 1);
  const states: Array<State | undefined> = [];
  const state: State = new Map();
  let next = 0;
  const changes = events.filter((e): e is ClusterChangeEvent => e.type === 'cluster-change');
  for (const [i, cut] of cuts.entries()) {
    if (cut === Infinity) {
      states[i] = undefined;
      continue;
    }
    while (next < changes.length && changes[next]!.seq < cut) {
      const c = changes[next++]!;
      if (c.eventType === 'DELETED') state.delete(c.key);
      else state.set(c.key, c.object);
    }
    states[i] = new Map(state);
  }
  return states;
}

/**
 * The objects the controller wrote (its requests in the proxy's trace), but the CR and bookkeeping
 * kinds. A create names its object in the request only when the proxy could read the body (JSON);
 * controller-runtime sends built-in kinds as protobuf, so a create is also counted under the key of
 * the object its answer returns (as the planner counts writes, src/model/controller-write.ts).
 * A call that only connects to a pod (`pods/exec`, `attach`, `portforward`: a POST, so a `create`)
 * writes nothing to the Pod: a pod the controller only execs into is not one of its objects
 * (redis-ot's `redis-cli` in `<name>-leader-0` made the pod's fields look like its copies of the CR).
 */
export function controllerWrittenKeys(events: readonly TraceEvent[], crKey: ObjectKey): Set<ObjectKey> {
  const keys = new Set<ObjectKey>();
  const add = (key: ObjectKey | undefined) => {
    if (key && key !== crKey && !IGNORED_KINDS.has(key.split('/')[0]!)) keys.add(key);
  };
  const writes = new Map<number, RequestEvent>();
  for (const e of events) {
    if (e.type === 'request' && WRITE_VERBS.has(e.verb)) {
      if (e.resource?.subresource && CONNECT_SUBRESOURCES.has(e.resource.subresource)) continue;
      add(e.key);
      writes.set(e.id, e);
    } else if (e.type === 'response' && e.status < 300) {
      const req = writes.get(e.id);
      if (req && !req.key) add(writeIdentity(req, e.object)?.key);
    }
  }
  return keys;
}

// ---- input validity: the controller's word -------------------------------------------------------

/** The API server's words for a write it refused as invalid (a StatusError's message). */
const API_SERVER_REFUSAL = /\bis invalid: |: (Invalid value|Unsupported value|Required value|Forbidden): /;

/**
 * What the controller said of the step's input, when it called it invalid: a string of the CR's status
 * (a condition's message, a phase message) or an Event about the CR that is new after the step, says
 * one of INVALID_WORDS and names the step's field (its path or last name) or the value written.
 * So is a Warning Event about an object the controller writes, when it gives the API server's
 * refusal of what the controller carried there: kube-apiserver does not validate a StatefulSet's
 * template as a pod spec, so the StatefulSet controller's `FailedCreate` ("Pod ... is invalid:
 * spec.tolerations[0].operator: Invalid value ...") is where an invalid toleration from the CR is
 * refused (rabbitmq-operator's `tolerations: [{}]` left its cluster at 0 pods: an input Kubernetes
 * refused, not a controller that ignored a valid one).
 */
export function controllerRefusal(
  step: ExploreStep,
  before: State,
  after: State,
  crKey: ObjectKey,
  written: ReadonlySet<ObjectKey> = new Set(),
): string | undefined {
  const texts: string[] = [];
  const crBefore = leaves(before.get(crKey)?.status, ['status']);
  for (const [field, v] of leaves(after.get(crKey)?.status, ['status'])) if (typeof v === 'string' && crBefore.get(field) !== v) texts.push(v);
  const [kind, namespace, name] = crKey.split('/');
  for (const [key, obj] of after) {
    if (obj.kind !== 'Event' || JSON.stringify(before.get(key)) === JSON.stringify(obj)) continue;
    const about = isObject(obj.involvedObject) ? obj.involvedObject : isObject(obj.regarding) ? obj.regarding : {};
    const message = typeof obj.message === 'string' ? obj.message : typeof obj.note === 'string' ? obj.note : '';
    if (about.kind === kind && about.name === name && (about.namespace ?? namespace) === namespace) {
      if (message) texts.push(message);
      continue;
    }
    const child = `${String(about.kind)}/${String(about.namespace ?? namespace)}/${String(about.name)}`;
    if (obj.type === 'Warning' && written.has(child) && API_SERVER_REFUSAL.test(message)) texts.push(message);
  }
  const old = leavesAt(before.get(crKey), step.path);
  const filled = filledNames(step);
  return texts.find(
    (text) =>
      (INVALID_WORDS.test(text) && (namesInput(text, step) || namesChange(text, step, old) || filled.some((n) => namesWord(text, n)))) ||
      citesInput(text, step),
  );
}

/**
 * A text about the CR that gives both the step's whole path and the marker it wrote, and says
 * something failed, is the controller's account of that very input, whatever else its words: rabbitmq-operator's condition "failed to
 * append spec.rabbitmq.additionalConfig: key-value delimiter not found: kpm-60" (every reconcile then
 * stops at its ConfigMap, and what later steps change reaches nothing).
 */
function citesInput(text: string, step: ExploreStep): boolean {
  return step.marker !== undefined && FAILURE_WORDS.test(text) && text.includes(formatPath(step.path)) && markerIn(text, step.marker);
}

/** Words of a failure: a controller that only echoes its input ("applied spec.x: kpm-3") did not refuse it. */
const FAILURE_WORDS = /\b(fail|failed|failure|error|cannot|can't|unable|refused|rejected|denied)\b/i;

/**
 * The names of the properties the step's patch set besides its own field: the required properties
 * explore filled into the objects the step created (planner/explore/required.ts). They are the step's
 * input too: rabbitmq-operator merges a created `override.statefulSet.spec.template.spec` (with the
 * filled `containers: [{name: kperturb}]`) into its pod template by container name, and kube-apiserver
 * refuses the pod whose `kperturb` container has no image ("spec.containers[0].image: Required
 * value"): the input was refused, not ignored by the controller.
 */
function filledNames(step: ExploreStep): string[] {
  const names = new Set<string>();
  const walk = (value: unknown, at: ReadonlyArray<string | number>, onPath: boolean): void => {
    if (!isObject(value)) return;
    for (const [name, v] of Object.entries(value)) {
      const still = onPath && step.path[at.length] === name;
      if (still) walk(v, [...at, name], at.length + 1 < step.path.length);
      else if (onPath && v !== null) names.add(name);
    }
  };
  walk(step.patch, [], step.path.length > 0);
  return [...names];
}

function namesWord(text: string, name: string): boolean {
  return new RegExp(`(^|[^A-Za-z0-9])${escapeRegExp(name)}($|[^A-Za-z0-9])`, 'i').test(text);
}

/**
 * The API server refused a write of the controller within the step, naming the step's field or value:
 * the controller carried the input into an object and Kubernetes refused it there (rabbitmq-operator
 * copies `spec.override.service.spec.clusterIP` into its Service, and the update is refused,
 * `spec.clusterIPs[0]: Invalid value ...: may not change once set`; each reconcile then stops at that
 * Service and never reaches the StatefulSet, so what later steps change reaches nothing). The input
 * was refused, not ignored. A list field that holds the field's values (`clusterIP` in `clusterIPs`,
 * Kubernetes' dual-stack pairs) names it too.
 */
function controllerWriteRefused(step: ExploreStep, run: SequenceRun, k: number): string | undefined {
  const b = stepBoundaries(run.events);
  const from = b.start.get(operationStepIndex(k)) ?? Infinity;
  const to = b.start.get(operationStepIndex(k + 1)) ?? b.last + 1;
  const writes = new Set<number>();
  const name = [...step.path].reverse().find((s): s is string => typeof s === 'string');
  for (const e of run.events) {
    if (e.seq <= from || e.seq >= to) continue;
    if (e.type === 'request' && WRITE_VERBS.has(e.verb) && e.key !== run.crKey) writes.add(e.id);
    if (e.type !== 'response' || e.status !== 422 || !writes.has(e.id) || !isObject(e.object)) continue;
    const message = typeof e.object.message === 'string' ? e.object.message : '';
    if (!API_SERVER_REFUSAL.test(message)) continue;
    // A refusal that lists the fields an update may change names them as allowed, not as the input.
    const immutable = immutableFieldOf(message, step);
    if (immutable ?? (namesInput(message, step) || (name !== undefined && message.includes(`.${name}s[`))))
      return `the API server refused the controller's write: ${message}`;
  }
  return undefined;
}

/**
 * The API server's refusal of an update that changes a field of an object's spec that only some may
 * change ("StatefulSet.apps ... spec: Forbidden: updates to statefulset spec for fields other than
 * 'replicas', 'ordinals', 'template', ... are forbidden"), when the step wrote a field of that
 * kind's spec outside the list: an override such as rabbitmq-operator's
 * `spec.override.statefulSet.spec.podManagementPolicy`, which its StatefulSet cannot take after creation.
 * Undefined: not such a refusal.
 */
function immutableFieldOf(message: string, step: ExploreStep): boolean | undefined {
  const m = /updates to (\w+) spec for fields other than (.*) are forbidden/.exec(message);
  if (!m) return undefined;
  const allowed = new Set([...m[2]!.matchAll(/'([^']+)'/g)].map((x) => x[1]!));
  const at = step.path.findIndex((s) => typeof s === 'string' && s.toLowerCase() === m[1]!.toLowerCase());
  const field = step.path[at + 2];
  return at >= 0 && step.path[at + 1] === 'spec' && typeof field === 'string' && !allowed.has(field);
}

/**
 * The controller wrote the step's field of the CR back to another value within the step: it did not
 * take the input (rabbitmq-operator with CONTROL_RABBITMQ_IMAGE=true sets `spec.image` to its own
 * default on every reconcile), so its objects follow the CR it wrote, not the step's value.
 */
function controllerRewrote(step: ExploreStep, run: SequenceRun, k: number, crAfter: unknown): string | undefined {
  if (step.deleted || step.value === undefined || isObject(step.value) || Array.isArray(step.value)) return undefined;
  const now = leavesAt(crAfter, step.path);
  if (now === undefined || sameValue(now, step.value)) return undefined;
  const b = stepBoundaries(run.events);
  const from = b.start.get(operationStepIndex(k)) ?? Infinity;
  const to = b.start.get(operationStepIndex(k + 1)) ?? b.last + 1;
  const wroteCr = run.events.some((e) => e.type === 'request' && e.seq > from && e.seq < to && e.key === run.crKey && WRITE_VERBS.has(e.verb));
  return wroteCr
    ? `the controller wrote ${formatPath(step.path)} of the CR back to ${JSON.stringify(now)} (the step wrote ${JSON.stringify(step.value)})`
    : undefined;
}

/**
 * A message that gives both numbers of a numeric change, the one before and the one written, is
 * about it, whatever it calls the field: rabbitmq's cluster-operator refuses `spec.replicas` 2 -> 1
 * with "Cluster Scale down not supported; tried to scale cluster from 2 nodes to 1 nodes".
 */
function namesChange(text: string, step: ExploreStep, old: unknown): boolean {
  if (typeof step.value !== 'number' || typeof old !== 'number' || old === step.value) return false;
  const token = (n: number) => new RegExp(`(^|[^0-9.])${String(n).replace('.', '\\.')}($|[^0-9.])`).test(text);
  return token(old) && token(step.value);
}

function namesInput(text: string, step: ExploreStep): boolean {
  const path = formatPath(step.path);
  const name = [...step.path].reverse().find((s): s is string => typeof s === 'string');
  if (text.includes(path) || (name !== undefined && namesWord(text, name))) return true;
  if (step.deleted || (typeof step.value !== 'string' && typeof step.value !== 'number')) return false;
  const value = String(step.value);
  return text.includes(`"${value}"`) || text.includes(`'${value}'`) || (value.length >= 3 && text.includes(value));
}

// ---- consistency ----------------------------------------------------------------------------------

type Leaves = Map<string, unknown>;

/** Every scalar of an object by its dotted path (`spec.template.spec.containers[0].image`); map keys are part of the path. */
export function leaves(obj: unknown, prefix: Array<string | number> = [], out: Leaves = new Map()): Leaves {
  if (Array.isArray(obj)) obj.forEach((v, i) => leaves(v, [...prefix, i], out));
  else if (isObject(obj)) for (const [k, v] of Object.entries(obj)) leaves(v, [...prefix, k], out);
  else if (prefix.length > 0) {
    const path = formatPath(prefix);
    if (!IGNORED_FIELD.test(path)) out.set(path, obj);
  }
  return out;
}

// ---- bookkeeping: a child's copy of the CR's counters ---------------------------------------------

/**
 * Whether a field of an object is bookkeeping (`bookkeepingFields`). `field` is a `leaves` path
 * (`containers[0]`), or the end-state oracle's (`containers[name=web]`) with its keyed list items
 * found in `holder`, the object as compared.
 */
export type IsBookkeeping = (object: ObjectKey, field: string, holder?: KubeObject) => boolean;

/** The CR's counters at one of its changes: they grow with its writes, whatever its spec says. */
function crCounters(change: ClusterChangeEvent): Map<string, string> {
  const counters = new Map<string, string>([['metadata.resourceVersion', change.resourceVersion]]);
  const generation = change.object.metadata?.generation;
  const observed = isObject(change.object.status) ? change.object.status.observedGeneration : undefined;
  if (typeof generation === 'number') counters.set('metadata.generation', String(generation));
  if (typeof observed === 'number') counters.set('status.observedGeneration', String(observed));
  return counters;
}

/**
 * The fields (by `leaves` path) of the objects the controller writes (`keys`) that count the CR's
 * changes instead of carrying its values: every time such a field took a new value in the run, that
 * value was the CR's metadata.generation, status.observedGeneration or metadata.resourceVersion at
 * that moment (the same counter each time; as a string or a number), and no field of the CR's spec
 * held it each of those times. Operators copy these counters onto their children (an annotation
 * `...generation: "7"`, a label with the resourceVersion) to tell which change of the CR an object answers.
 * Such a value grows with every step, so no rollback brings it back, and it can equal a number the
 * step wrote (spec.replicas 3 in the step that made the generation 3): value tracing does not take
 * it for a destination of the CR's value, and the rollback oracle does not expect it restored.
 * Equality with the CR's own counter at each write is the test, not a number alone: a StatefulSet's
 * replicas that held 2 while the generation was 1 carries the spec, and stays traced. And a field
 * that matched the counter every time while a spec field matched it too is the spec's: integer-up
 * by one per step, from 1, keeps spec.replicas and the generation equal (its rollback, which moves
 * the two apart, is judged on a run of its own, where the copy of the generation shows itself).
 */
export function bookkeepingFields(
  events: readonly TraceEvent[],
  crKey: ObjectKey,
  keys: ReadonlySet<ObjectKey> = controllerWrittenKeys(events, crKey),
): IsBookkeeping {
  /** Per `<object> <field>`: the counters, and the CR's spec fields, that held the field's value at each of its changes. */
  const heldBy = new Map<string, { counters: Set<string>; spec: Set<string> }>();
  const last = new Map<ObjectKey, Leaves>();
  let counters = new Map<string, string>();
  let spec: Leaves = new Map();
  const holding = (fields: ReadonlyMap<string, unknown>, value: string): Set<string> =>
    new Set([...fields].filter(([, v]) => (typeof v === 'string' || typeof v === 'number') && String(v) === value).map(([path]) => path));
  for (const e of events) {
    if (e.type !== 'cluster-change') continue;
    if (e.key === crKey) {
      const gone = e.eventType === 'DELETED';
      counters = gone ? new Map() : crCounters(e);
      spec = gone ? new Map() : leaves(e.object.spec, ['spec']);
      continue;
    }
    if (!keys.has(e.key)) continue;
    const before = last.get(e.key);
    if (e.eventType === 'DELETED') {
      last.delete(e.key);
      continue;
    }
    const now = leaves(e.object);
    last.set(e.key, now);
    for (const [field, v] of now) {
      if ((typeof v !== 'string' && typeof v !== 'number') || before?.get(field) === v) continue;
      const id = `${e.key} ${field}`;
      const held = { counters: holding(counters, String(v)), spec: holding(spec, String(v)) };
      const known = heldBy.get(id);
      if (!known) heldBy.set(id, held);
      else {
        for (const c of known.counters) if (!held.counters.has(c)) known.counters.delete(c);
        for (const p of known.spec) if (!held.spec.has(p)) known.spec.delete(p);
      }
    }
  }
  const bookkeeping = new Set([...heldBy].filter(([, h]) => h.counters.size > 0 && h.spec.size === 0).map(([id]) => id));
  return (object, field, holder) => bookkeeping.has(`${object} ${holder ? positionalPath(holder, field) : field}`);
}

/**
 * Whether `value` of `field` of `object` (`holder`: the object as compared, for keyed list items)
 * copies one of the CR's counters in a run (`counterCopies`).
 */
export type IsCounterCopy = (object: ObjectKey, field: string | undefined, value: unknown, holder?: KubeObject) => boolean;

/**
 * A child's copies of the CR's counters in one run, of either kind: a value that is a resourceVersion
 * the CR had (version-copies.ts `copiesVersion`: zookeeper-operator's `owner-rv`, which also reaches
 * the Services made in the same reconcile through a shared map, so it need not be the version at
 * their write), or a field that held the CR's counter at each of its writes (`bookkeepingFields`).
 * Either counts the CR's writes, not what its spec says: the oracles that compare two states
 * (rollback, differential) take two such values for no difference, each judged in its own run.
 */
export function counterCopies(events: readonly TraceEvent[], crKey: ObjectKey, keys: ReadonlySet<ObjectKey>): IsCounterCopy {
  const versions = resourceVersionsOf(events, crKey);
  const bookkeeping = bookkeepingFields(events, crKey, keys);
  return (object, field, value, holder) => copiesVersion(value, versions) || (field !== undefined && bookkeeping(object, field, holder));
}

/** A path with keyed list items (`env[name=GEN]`) as `leaves` names the same field in `obj` (`env[2]`). */
function positionalPath(obj: KubeObject, field: string): string {
  let path: FieldPath;
  try {
    path = parseFieldPath(field);
  } catch {
    return field;
  }
  let cur: unknown = obj;
  const out: Array<string | number> = [];
  for (const seg of path) {
    if (isKeyedSegment(seg)) {
      const i = Array.isArray(cur) ? cur.findIndex((item) => isObject(item) && String(item[seg.key]) === String(seg.value)) : -1;
      if (i < 0) return field;
      out.push(i);
      cur = (cur as unknown[])[i];
    } else {
      out.push(seg);
      cur = Array.isArray(cur) && typeof seg === 'number' ? cur[seg] : isObject(cur) ? cur[String(seg)] : undefined;
    }
  }
  return formatPath(out);
}

function markerIn(text: string, marker: string): boolean {
  return new RegExp(`(^|[^A-Za-z0-9])${marker}($|[^0-9])`).test(text);
}

/** Fields of `state`'s written objects whose path or value holds the marker. */
function findMarker(state: State, keys: ReadonlySet<ObjectKey>, marker: string, written: unknown): TracedLocation[] {
  const out: TracedLocation[] = [];
  for (const key of keys) {
    const obj = state.get(key);
    if (!obj) continue;
    for (const [field, value] of leaves(obj)) {
      if (typeof value === 'string' && markerIn(value, marker)) out.push({ object: key, field, relation: value === written ? 'exact' : 'contains' });
      else if (markerIn(field, marker)) out.push({ object: key, field, relation: 'contains' });
    }
  }
  return out;
}

function sameValue(a: unknown, b: unknown): boolean {
  if (JSON.stringify(a) === JSON.stringify(b)) return true;
  if ((typeof a === 'string' || typeof a === 'number') && (typeof b === 'string' || typeof b === 'number'))
    return String(a) === String(b) || quantitiesEqual(a, b);
  return false;
}

/** The last segment of a dotted path, as a comparable name (`storageSize` and `storage_size` alike). */
function lastName(path: string): string {
  const seg =
    path
      .replace(/\[[^\]]*\]$/, '')
      .split('.')
      .at(-1) ?? '';
  return seg.replace(/[_-]/g, '').toLowerCase();
}

/** The cluster around a step: its objects before and after it, the ones the controller writes, and which of their fields are bookkeeping. */
interface StepScene {
  before: State;
  after: State;
  written: ReadonlySet<ObjectKey>;
  bookkeeping: IsBookkeeping;
}

function consistency(
  step: ExploreStep,
  judgement: StepJudgement,
  map: FieldMap,
  scene: StepScene,
  crBefore: unknown,
  crAfter: unknown,
): Array<Omit<ExploreAlarm, 'sequence' | 'step'>> {
  const { before, after, written, bookkeeping } = scene;
  const path = formatPath(step.path);
  const known = map.get(path);
  const alarms: Array<Omit<ExploreAlarm, 'sequence' | 'step'>> = [];
  const crText = JSON.stringify(crAfter);
  // (1) The old marker left the CR: it must leave the objects it reached.
  if (known?.marker && !markerIn(crText, known.marker)) {
    for (const loc of known.locations) {
      const obj = after.get(loc.object);
      const stale = obj ? findMarker(new Map([[loc.object, obj]]), new Set([loc.object]), known.marker, undefined) : [];
      for (const s of stale) {
        alarms.push({
          oracle: 'consistency',
          object: s.object,
          field: s.field,
          expected: step.deleted ? '(the old value gone)' : step.value,
          found: leaves(obj).get(s.field),
          message: `${path} no longer holds ${known.marker}, but ${s.object} ${s.field} still does (traced: the marker reached it when it was set)`,
          matchedBy: 'marker',
        });
      }
    }
  }
  // (2) A new marker: where does it go? Learn the map, or check it against the one learned.
  if (step.marker) {
    const locations = findMarker(after, written, step.marker, step.value);
    // A location the map learned in another sequence may name an object of that sequence only
    // (cass-operator's Service named after the `clusterName` a step of it set): an object absent
    // before and after the step, which the controller never wrote in this run, is not this run's.
    const elsewhere = (loc: TracedLocation): boolean => {
      const absent = !before.has(loc.object) && !after.has(loc.object) && !written.has(loc.object);
      if (absent) judgement.notes.push(`${loc.object} (where an earlier marker of ${path} went) does not exist in this run: not judged`);
      return absent;
    };
    if (locations.length > 0) {
      if (known && known.via === 'marker') {
        const reached = new Set(locations.map((l) => l.object));
        for (const loc of known.locations)
          if (!reached.has(loc.object) && !elsewhere(loc))
            alarms.push(notReached(loc, step, after, `never reached ${loc.object} ${loc.field} (traced: an earlier marker of ${path} did)`, 'marker'));
      }
      map.set(path, { via: 'marker', marker: step.marker, locations });
      judgement.traced = { via: 'marker', locations };
    } else if (known && alarms.length === 0) {
      for (const loc of known.locations.filter((l) => !elsewhere(l)))
        alarms.push(
          notReached(
            loc,
            step,
            after,
            `reached none of the objects an earlier change of it reached (${loc.object} ${loc.field}; traced by ${known.via})`,
            known.via,
          ),
        );
    } else if (!known) {
      alarms.push(...byPathAndValue(step, path, crBefore, scene));
      if (alarms.length === 0 && step.gate) alarms.push(gateOn(step, path, `the marker ${step.marker}`));
      else
        judgement.notes.push(
          `the marker ${step.marker} reached no object the controller writes (a status-only or behavioural field, or gated by another field)`,
        );
    }
    return alarms;
  }
  if (step.deleted) return alarms;
  // (3) No marker: trace by value, judge by the map where it is exact, else by path name.
  const value = step.value;
  if (isObject(value) || Array.isArray(value)) return alarms;
  if (value === 0) {
    // A Go operator cannot tell 0 from unset (an int field, omitempty), and the API server defaults a
    // zero in a built-in object (a probe's failureThreshold 0 is stored as 3, periodSeconds as 10):
    // the value need not appear anywhere, and the default that does is no inconsistency.
    judgement.notes.push('0 is not traced by value: a Go field cannot tell it from unset, and the API server defaults zeros in built-in objects');
    return alarms;
  }
  if (value === '') {
    // The same for an emptied string: Go's encoding/json drops "" from an `omitempty` field, so the
    // object the controller writes holds the field unset, and the API server fills in its default
    // (a container's imagePullPolicy "" is stored as IfNotPresent, or Always for a `:latest` image).
    judgement.notes.push('"" is not traced by value: a Go field cannot tell it from unset, and the API server defaults empty strings in built-in objects');
    return alarms;
  }
  if (known) {
    for (const loc of known.locations.filter((l) => l.relation === 'exact' && !bookkeeping(l.object, l.field))) {
      const obj = after.get(loc.object);
      const found = obj ? leaves(obj).get(loc.field) : undefined;
      const override = obj && !sameValue(found, value) ? overriddenBy(crAfter, loc, found, map, path) : undefined;
      if (override) judgement.notes.push(`${loc.object} ${loc.field} follows ${override}, which holds ${JSON.stringify(found)} (an override of that field)`);
      else if (obj && !sameValue(found, value)) {
        alarms.push({
          oracle: 'consistency',
          object: loc.object,
          field: loc.field,
          expected: value,
          found,
          message: `${path} changed to ${JSON.stringify(value)}, but ${loc.object} ${loc.field} holds ${JSON.stringify(found)} (traced by ${known.via === 'marker' ? 'a marker' : 'value: no marker fits this field'})`,
          matchedBy: known.via,
        });
      }
    }
    return alarms;
  }
  const changedTo: TracedLocation[] = [];
  for (const key of written) {
    const a = after.get(key);
    if (!a) continue;
    const b = leaves(before.get(key));
    for (const [field, v] of leaves(a))
      if (!field.startsWith('status.') && sameValue(v, value) && !sameValue(b.get(field), v) && !bookkeeping(key, field))
        changedTo.push({ object: key, field, relation: 'exact' });
  }
  if (changedTo.length > 0) {
    // Small numbers collide (a probe's thresholds and delays): where some written field of the same name took the value, that is where it went.
    const named = changedTo.filter((l) => lastName(l.field) === lastName(path));
    if (named.length > 0) changedTo.splice(0, changedTo.length, ...named);
    map.set(path, { via: 'value', locations: changedTo });
    judgement.traced = { via: 'value', locations: changedTo };
    return alarms;
  }
  alarms.push(...byPathAndValue(step, path, crBefore, scene));
  // Booleans and enum values choose behaviour rather than being copied somewhere: only a value that is data alarms.
  if (alarms.length === 0 && step.gate && typeof value !== 'boolean' && !step.operation.startsWith('enum-'))
    alarms.push(gateOn(step, path, JSON.stringify(value)));
  else if (alarms.length === 0) judgement.notes.push(`${JSON.stringify(value)} reached no object the controller writes`);
  return alarms;
}

/**
 * The CR field that overrides an object's field the step's field was traced to, holding the value
 * the object has. The object follows it, not the step's field (`spec.replicas` 2 -> 1 under an
 * override of 2 leaves the StatefulSet at 2 by design). Either a field of the CR's spec whose path
 * ends with the object's kind and the field's path (rabbitmq-operator's
 * `spec.override.statefulSet.spec.replicas` for the StatefulSet's `spec.replicas`), or another CR
 * field the map traced to that very object and field, exactly, by its marker or under the field's
 * own name (redis-ot's `spec.redisFollower.replicas` sets the follower StatefulSet's `spec.replicas`
 * over `spec.clusterSize`, traced there too). A field traced there by a value of another name (a
 * small number that collided) is no override.
 */
function overriddenBy(crAfter: unknown, loc: TracedLocation, found: unknown, map: FieldMap, path: string): string | undefined {
  const kind = loc.object.split('/')[0]!;
  const tail = `${kind.charAt(0).toLowerCase()}${kind.slice(1)}.${loc.field}`.toLowerCase();
  const spec = isObject(crAfter) ? crAfter.spec : undefined;
  const fields = leaves(spec, ['spec']);
  for (const [field, v] of fields) if (field.toLowerCase().endsWith(`.${tail}`) && sameValue(v, found)) return field;
  for (const [other, entry] of map) {
    if (other === path || !fields.has(other) || !sameValue(fields.get(other), found)) continue;
    if (entry.via !== 'marker' && lastName(other) !== lastName(loc.field)) continue;
    if (entry.locations.some((l) => l.object === loc.object && l.field === loc.field && l.relation === 'exact')) return other;
  }
  return undefined;
}

/**
 * A value that reached no object the controller writes although the `enabled` flag of the object
 * around it is on: the one reason a field is left alone by design (its feature is off) does not hold.
 */
function gateOn(step: ExploreStep, path: string, what: string): Omit<ExploreAlarm, 'sequence' | 'step'> {
  const gate = formatPath(step.gate!);
  return {
    oracle: 'consistency',
    field: path,
    expected: step.value,
    message: `${path} changed to ${JSON.stringify(step.value)} with ${gate} true, but ${what} reached no object the controller writes (gated field with its gate on; traced by ${step.marker ? 'marker' : 'value'})`,
    matchedBy: step.marker ? 'marker' : 'value',
  };
}

/** A mapped field the step's new value did not reach. */
function notReached(loc: TracedLocation, step: ExploreStep, after: State, why: string, matchedBy: 'marker' | 'value'): Omit<ExploreAlarm, 'sequence' | 'step'> {
  const obj = after.get(loc.object);
  return {
    oracle: 'consistency',
    object: loc.object,
    field: loc.field,
    expected: step.value,
    found: obj ? leaves(obj).get(loc.field) : '(object absent)',
    message: `${formatPath(step.path)} changed to ${JSON.stringify(step.value)}, which ${why}`,
    matchedBy,
  };
}

/** Path and value, where nothing was traced: a same-named field of a written object that still holds the value before the step. */
function byPathAndValue(
  step: ExploreStep,
  path: string,
  crBefore: unknown,
  { after, written, bookkeeping }: StepScene,
): Array<Omit<ExploreAlarm, 'sequence' | 'step'>> {
  const alarms: Array<Omit<ExploreAlarm, 'sequence' | 'step'>> = [];
  const value = step.value;
  const old = leavesAt(crBefore, step.path);
  if (old === undefined || isObject(old) || Array.isArray(old) || sameValue(old, value)) return alarms;
  const name = lastName(path);
  const candidates: Array<{ key: ObjectKey; field: string; v: unknown }> = [];
  for (const key of written) {
    const a = after.get(key);
    if (!a) continue;
    for (const [field, v] of leaves(a))
      if (!field.startsWith('status.') && lastName(field) === name && sameValue(v, old) && !bookkeeping(key, field)) candidates.push({ key, field, v });
  }
  // Same-named fields under parents of different names are different fields (readinessProbe.periodSeconds is not livenessProbe's):
  // where some candidate's parent has the CR field's parent's name, only those are it.
  const parent = lastName(path.slice(0, Math.max(0, path.lastIndexOf('.'))));
  const sameParent = candidates.filter((c) => lastName(c.field.replace(/(\[[^\]]*\])*\.[^.]*$/, '')) === parent);
  for (const { key, field, v } of sameParent.length > 0 ? sameParent : candidates) {
    {
      alarms.push({
        oracle: 'consistency',
        object: key,
        field,
        expected: value,
        found: v,
        message: `${path} changed from ${JSON.stringify(old)} to ${JSON.stringify(value)}, but ${key} ${field} still holds ${JSON.stringify(v)} (matched by path name and value: ${step.marker ? `the marker ${step.marker} reached no written object` : 'no marker fits this field, nothing traced'})`,
        matchedBy: 'path',
      });
    }
  }
  return alarms;
}

function leavesAt(obj: unknown, path: ReadonlyArray<string | number>): unknown {
  let cur = obj;
  for (const seg of path) cur = Array.isArray(cur) && typeof seg === 'number' ? cur[seg] : isObject(cur) ? cur[String(seg)] : undefined;
  return cur;
}

// ---- the managed application ---------------------------------------------------------------------

/** A failed connection to a Service of the cluster (`<name>.<namespace>.svc[.cluster.local][:port]`). */
const SERVICE_UNREACHABLE =
  /[a-z0-9-]+\.[a-z0-9-]+\.svc(\.cluster\.local)?(:\d+)?\b.*\b(no such host|connection refused|i\/o timeout|no route to host|connection reset)/i;

/**
 * The controller saying the application's endpoint in a pod is not up: cass-operator's "management
 * api is not running on pod" (every reconcile then stops in CheckPodsReady), or an agent, server or
 * API "not reachable" / "not ready" on or in a pod.
 */
const APPLICATION_DOWN_ON_POD =
  /\b(api|agent|server|endpoint|daemon|sidecar|application)\s+(is\s+not|isn't|not)\s+(running|ready|reachable|available|responding|up)\s+(on|in)\s+pod\b/i;

/** The pod a log line names: a structured `"pod": "<name>"` field, or the words `on pod <name>`. */
function podOfLine(line: string): string | undefined {
  return /"pod":\s*"([a-z0-9.-]+)"/.exec(line)?.[1] ?? /\b(?:on|in) pod[: ]+"?([a-z0-9][a-z0-9.-]*)/i.exec(line)?.[1];
}

/** A log line's time in ms: zap's JSON `"ts"` (seconds, or an ISO string), or the console encoder's leading time (ISO, or epoch seconds). */
function lineMs(line: string): number | undefined {
  const seconds = /"ts":\s*([0-9.]+(?:e\+\d+)?)/.exec(line) ?? /^(?:\[\d+\]\s+)?(\d+(?:\.\d+)?(?:e\+\d+)?)\s/.exec(line);
  if (seconds) return Number(seconds[1]) * 1000;
  const iso = /"ts":\s*"([0-9T:.+-]+Z?)"/.exec(line)?.[1] ?? /^(?:\[\d+\]\s+)?(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?Z)\s/.exec(line)?.[1];
  const ms = iso !== undefined ? Date.parse(iso) : NaN;
  return Number.isNaN(ms) ? undefined : ms;
}

/**
 * The fields of a pod or of the objects that control it that an operator changes only through the
 * application in the pod: the replica count (a scale-down decommissions a node first) and the pod
 * template (a rolling restart), and the pod's own spec. Labels, annotations and claim templates are
 * not: a controller that leaves them waits on nothing in the pod.
 */
const THROUGH_THE_APPLICATION = /^spec\.(replicas$|template\.)/;

/**
 * Why operation step `k` (0-based) did not reach `object`, when the controller was waiting on the
 * application it manages: between the step's patch and the next one it sent no write to that object
 * after its first word of the application's absence, which is either
 * - a failed connection to a Service of the cluster: no container runs behind a kperturb cluster's
 *   Services, so an operator that talks to its application before it changes an object
 *   (zookeeper-operator connects to ZooKeeper before it scales its StatefulSet, and returns on the
 *   error) never gets there; or
 * - the application's endpoint in a pod not running (cass-operator's management API; no Cassandra
 *   runs in a kperturb pod), when the alarm is about that pod's spec or about the replicas or pod
 *   template of an object that controls it (its StatefulSet; ReplicaSet and Deployment): what the
 *   operator changes only with the application up (cass-operator's scale-down and pod template come
 *   after its CheckPodsReady gate). `field` and `after` (the state after the step) give those.
 * The cluster's gap, not the controller's bug. An object it wrote after its first such word is
 * judged as usual (zookeeper-operator updates its StatefulSet on a storage change and leaves the
 * claim templates: zkop-540, a bug). So is a field the controller set by creating the object while
 * the application was already away (its first such word in the run before the create), other than
 * the replicas and pod template (THROUGH_THE_APPLICATION): what it writes without the application
 * it does not wait on it for (percona-server-mongodb-operator creates an exposed member's Service
 * with the CR's annotations, long after its first mongod dial failed, and never updates them:
 * mgoptwo-742, a bug).
 */
export function waitingOnApplication(run: SequenceRun, k: number, object: ObjectKey, field?: string, after?: State): string | undefined {
  const b = stepBoundaries(run.events);
  const from = b.start.get(operationStepIndex(k));
  if (from === undefined) return undefined;
  const to = b.start.get(operationStepIndex(k + 1)) ?? b.last + 1;
  const inWindow = run.events.filter((e) => e.seq >= from && e.seq < to);
  if (inWindow.length === 0) return undefined;
  const [startMs, endMs] = [inWindow[0]!.ts, inWindow.at(-1)!.ts];
  const onPod = (line: string): string | undefined => {
    if (field === undefined || !after) return undefined;
    const down = APPLICATION_DOWN_ON_POD.exec(line);
    const pod = down ? podOfLine(line) : undefined;
    if (!down || pod === undefined) return undefined;
    const podKey = [...after.keys()].find((key) => key.startsWith('Pod/') && key.endsWith(`/${pod}`));
    if (podKey === undefined) return undefined;
    if (podKey === object) return field.startsWith('spec.') ? `${down[0]} ${pod}` : undefined;
    let ctl = controllerKey(after.get(podKey));
    for (let depth = 0; ctl !== undefined && depth < 2; depth++) {
      if (ctl === object) return THROUGH_THE_APPLICATION.test(field) ? `${down[0]} ${pod}` : undefined;
      ctl = controllerKey(after.get(ctl));
    }
    return undefined;
  };
  const lines = (run.controllerLog ?? '').split('\n');
  if (field !== undefined && !THROUGH_THE_APPLICATION.test(field)) {
    const firstWord = lines.find((line) => lineMs(line) !== undefined && (SERVICE_UNREACHABLE.test(line) || onPod(line) !== undefined));
    if (firstWord !== undefined && createdHolding(run.events, object, field, lineMs(firstWord)!)) return undefined;
  }
  // The first failure to reach the application after the patch; a write sent before it may come from
  // a reconcile that still saw the CR before the step (the informer's lag).
  for (const line of lines) {
    const ms = lineMs(line);
    if (ms === undefined || ms < startMs || ms > endMs) continue;
    const service = SERVICE_UNREACHABLE.exec(line)?.[0];
    const pod = service === undefined ? onPod(line) : undefined;
    if (service === undefined && pod === undefined) continue;
    if (
      controllerWrittenKeys(
        inWindow.filter((e) => e.ts >= ms),
        run.crKey,
      ).has(object)
    )
      return undefined;
    return service !== undefined
      ? `the controller did not write ${object} after this step and could not reach its application: ${service.slice(0, 200)}`
      : `the controller did not write ${object} after this step and said its application is not up: ${pod!.slice(0, 200)}`;
  }
  // Said before the step and not since: a controller that polls the pod logs its absence once per
  // state (cass-operator's "management api is not running on pod" while the pod is not started; its
  // reconciles after the step stop at the same gate with "checks failed ... started:0"). The last
  // such word before the patch counts when the controller has not written the object since it.
  let last: { ms: number; why: string } | undefined;
  for (const line of lines) {
    const ms = lineMs(line);
    if (ms === undefined || ms >= startMs) continue;
    const why = onPod(line);
    if (why !== undefined) last = { ms, why };
  }
  if (!last) return undefined;
  const since = run.events.filter((e) => e.ts >= last.ms && e.seq < to);
  if (controllerWrittenKeys(since, run.crKey).has(object)) return undefined;
  return `the controller did not write ${object} since it said, before this step, that its application is not up: ${last.why.slice(0, 200)}`;
}

/** Did the controller create `object`, holding `field`, at or after `fromMs`? */
function createdHolding(events: readonly TraceEvent[], object: ObjectKey, field: string, fromMs: number): boolean {
  let path: FieldPath;
  try {
    path = parseFieldPath(field);
  } catch {
    return false;
  }
  const creates = new Map<number, RequestEvent>();
  for (const e of events) {
    if (e.type === 'request' && e.verb === 'create' && e.ts >= fromMs && !(e.resource?.subresource && CONNECT_SUBRESOURCES.has(e.resource.subresource)))
      creates.set(e.id, e);
    else if (e.type === 'response' && e.status < 300) {
      const req = creates.get(e.id);
      if (req && (req.key ?? writeIdentity(req, e.object)?.key) === object && valueAtPath(e.object, path) !== undefined) return true;
    }
  }
  return false;
}

/** Go's os/exec when the program is not on PATH. */
const MISSING_PROGRAM = /exec: "[^"]+": executable file not found in \$PATH/;

// ---- health and crash ----------------------------------------------------------------------------

function num(v: unknown): number {
  return typeof v === 'number' ? v : 0;
}

/** The pod fields that decide where it may run, and who places it (a scheduler no cluster runs never does). */
const PLACEMENT = ['nodeName', 'nodeSelector', 'affinity', 'topologySpreadConstraints', 'schedulerName'] as const;

/**
 * The ConfigMaps and Secrets a pod's spec names: its volumes' (projected ones' sources too), its
 * containers' and init containers' `env[].valueFrom` and `envFrom[]`. A pod that names one that
 * does not exist waits in ContainerCreating (a volume) or CreateContainerConfigError (an env var).
 */
function podReferences(spec: Record<string, unknown>): Array<{ kind: 'ConfigMap' | 'Secret'; name: string; field: string }> {
  const out: Array<{ kind: 'ConfigMap' | 'Secret'; name: string; field: string }> = [];
  const add = (kind: 'ConfigMap' | 'Secret', holder: unknown, nameField: string, field: string): void => {
    if (isObject(holder) && typeof holder[nameField] === 'string' && holder.optional !== true)
      out.push({ kind, name: holder[nameField], field: `${field}.${nameField}` });
  };
  const list = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);
  for (const [i, volume] of list(spec.volumes).entries()) {
    if (!isObject(volume)) continue;
    const at = `spec.volumes[${i}]`;
    add('ConfigMap', volume.configMap, 'name', `${at}.configMap`);
    add('Secret', volume.secret, 'secretName', `${at}.secret`);
    const projected = isObject(volume.projected) ? volume.projected : {};
    for (const [j, source] of list(projected.sources).entries()) {
      if (!isObject(source)) continue;
      add('ConfigMap', source.configMap, 'name', `${at}.projected.sources[${j}].configMap`);
      add('Secret', source.secret, 'name', `${at}.projected.sources[${j}].secret`);
    }
  }
  for (const group of ['initContainers', 'containers'] as const)
    for (const [i, container] of list(spec[group]).entries()) {
      if (!isObject(container)) continue;
      const at = `spec.${group}[${i}]`;
      for (const [j, env] of list(container.env).entries()) {
        const from = isObject(env) && isObject(env.valueFrom) ? env.valueFrom : {};
        add('ConfigMap', from.configMapKeyRef, 'name', `${at}.env[${j}].valueFrom.configMapKeyRef`);
        add('Secret', from.secretKeyRef, 'name', `${at}.env[${j}].valueFrom.secretKeyRef`);
      }
      for (const [j, from] of list(container.envFrom).entries()) {
        if (!isObject(from)) continue;
        add('ConfigMap', from.configMapRef, 'name', `${at}.envFrom[${j}].configMapRef`);
        add('Secret', from.secretRef, 'name', `${at}.envFrom[${j}].secretRef`);
      }
    }
  return out;
}

/**
 * The objects a step's value left unplaced or unstartable: each pod not Running whose placement
 * fields hold the marker a step wrote, or that names a ConfigMap or Secret (a volume's, an env
 * var's) whose name holds it and that does not exist in the state (redis-ot mounts the ConfigMap
 * named by `additionalRedisConfig`, the Secret named by `TLS.secret.secretName`: a generated name
 * leaves the pod in ContainerCreating), and the objects that control it (its StatefulSet; its
 * ReplicaSet and that one's Deployment), with the step (0-based), the pod and its field.
 */
function placementLeftovers(
  state: State,
  steps: readonly ExploreStep[],
): Map<ObjectKey, { step: number; holder: ObjectKey; field: string; missing?: ObjectKey }> {
  const out = new Map<ObjectKey, { step: number; holder: ObjectKey; field: string; missing?: ObjectKey }>();
  const markers = steps.flatMap((s, k) => (s.marker ? [{ step: k, marker: s.marker }] : []));
  if (markers.length === 0) return out;
  for (const [key, obj] of state) {
    if (obj.kind !== 'Pod' || !isObject(obj.spec) || (isObject(obj.status) && obj.status.phase === 'Running')) continue;
    const spec = obj.spec;
    const placedBy = PLACEMENT.flatMap((f): Array<{ step: number; marker: string; field: string; missing?: ObjectKey }> => {
      const m = spec[f] !== undefined ? markers.find((x) => markerIn(JSON.stringify(spec[f]), x.marker)) : undefined;
      return m ? [{ ...m, field: `spec.${f}` }] : [];
    })[0];
    const namespace = obj.metadata?.namespace ?? key.split('/')[1] ?? '';
    const hit =
      placedBy ??
      podReferences(spec).flatMap((r) => {
        const m = markers.find((x) => markerIn(r.name, x.marker));
        const missing = `${r.kind}/${namespace}/${r.name}`;
        return m && !state.has(missing) ? [{ ...m, field: r.field, missing }] : [];
      })[0];
    if (!hit) continue;
    let k: ObjectKey | undefined = key;
    for (let depth = 0; k !== undefined && depth < 3; depth++) {
      out.set(k, { step: hit.step, holder: key, field: hit.field, ...(hit.missing !== undefined ? { missing: hit.missing } : {}) });
      k = controllerKey(state.get(k));
    }
  }
  return out;
}

export function healthAlarms(state: State, sequence: string): ExploreAlarm[] {
  const alarms: ExploreAlarm[] = [];
  for (const [key, obj] of state) {
    const spec = isObject(obj.spec) ? obj.spec : {};
    const status = isObject(obj.status) ? obj.status : {};
    if (obj.kind === 'StatefulSet' || obj.kind === 'Deployment') {
      const want = typeof spec.replicas === 'number' ? spec.replicas : 1;
      if (want > 0 && num(status.readyReplicas) !== want)
        alarms.push({
          oracle: 'health',
          sequence,
          object: key,
          field: 'status.readyReplicas',
          expected: want,
          found: status.readyReplicas ?? 0,
          message: `${key} has ${num(status.readyReplicas)} of ${want} replicas ready at the sequence's end`,
        });
    } else if (obj.kind === 'Pod') {
      const phase = status.phase;
      if (phase !== 'Running' && phase !== 'Succeeded' && !obj.metadata?.deletionTimestamp)
        alarms.push({
          oracle: 'health',
          sequence,
          object: key,
          field: 'status.phase',
          expected: 'Running',
          found: phase,
          message: `${key} is ${String(phase)} at the sequence's end`,
        });
    }
  }
  return alarms;
}

/**
 * The crash alarms of a run: each exit kperturb did not cause, each panic or fatal error in the log.
 * `exitStep` (from the run's trace) gives the 1-based operation step during which an incarnation
 * exited: that exit, and the panics that incarnation logged, are that step's (the input it crashed
 * on). A panic the controller survived (controller-runtime recovers a reconciler's) names no step.
 */
export function crashAlarms(
  run: Pick<SequenceRun, 'controllerExits' | 'controllerLog'>,
  sequence: string,
  exitStep: ReadonlyMap<number, number> = new Map(),
): ExploreAlarm[] {
  const alarms: ExploreAlarm[] = [];
  const stepOf = (incarnation: number | undefined) => {
    const step = incarnation !== undefined ? exitStep.get(incarnation) : undefined;
    return step !== undefined ? { step } : {};
  };
  for (const e of run.controllerExits ?? []) {
    if (!e.expected)
      alarms.push({
        oracle: 'crash',
        sequence,
        ...stepOf(e.incarnation),
        message: `the controller exited (code ${String(e.code)}${e.signal ? `, signal ${e.signal}` : ''}) during the sequence`,
      });
  }
  for (const inc of scanControllerLog(run.controllerLog ?? '')) {
    const message = `controller.log line ${inc.line}: ${inc.summary}`;
    const missing = MISSING_PROGRAM.exec(inc.summary);
    // The controller shells out to a program its image ships (cockroach-operator runs `cockroach cert
    // create-ca`); kperturb runs the manager on this machine, without the image: the environment's gap.
    if (missing)
      alarms.push({
        oracle: 'crash',
        sequence,
        ...stepOf(inc.incarnation),
        message: `${message} (environment: ${missing[0]}, a program of the controller's image)`,
        class: 'environment',
        why: `the controller runs a program its image ships and this machine lacks: ${missing[0]}`,
      });
    else alarms.push({ oracle: 'crash', sequence, ...stepOf(inc.incarnation), message });
  }
  return alarms;
}

/** Per incarnation that exited after the first operation began: the 1-based operation step it exited in (the last one begun). */
function exitSteps(events: readonly TraceEvent[], b: Boundaries, steps: number): Map<number, number> {
  const out = new Map<number, number>();
  for (const e of events) {
    if (e.type !== 'controller' || e.action !== 'exit') continue;
    let step: number | undefined;
    for (let k = 0; k < steps; k++) {
      const start = b.start.get(operationStepIndex(k));
      if (start !== undefined && start < e.seq) step = k + 1;
    }
    if (step !== undefined) out.set(e.incarnation, step);
  }
  return out;
}
