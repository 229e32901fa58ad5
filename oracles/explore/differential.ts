/**
 * Explore's level-triggered differential oracle (Acto's "differential for normal transitions"): a CR
 * the sequence reached through its history, created with that spec at once on a fresh cluster, must leave the objects the controller writes as the history left them. A controller that
 * only honours a change when it sees the object from scratch (or only as a change) differs here.
 * Compared with the end-state oracle's comparison and masks (built-in, the config's); the CR itself
 * is left out (its status carries the history).
 */
import type { KubeObject, ObjectKey } from '../../src/model/object-key.js';
import type { TraceEvent } from '../../src/model/trace.js';
import type { Alarm } from '../../src/model/results.js';
import { compareEndStates } from '../end-state.js';
import { isPathMasked, learnMasks, Masks, type MaskRule, type ObjectMask } from '../masks.js';
// Learned masks are concrete paths (learnMasks).
import type { FieldPath } from '../../src/model/field-path.js';
import { endStateView } from '../object-identity.js';
import { controllerWrittenKeys, counterCopies, operationStepIndex, type ExploreAlarm, type ExploreOracle } from './judge.js';

export interface DifferentialCase {
  sequence: string;
  /** The 1-based step after which the chained state was taken. */
  step: number;
  crKey: ObjectKey;
  /** The cluster's objects after that step of the sequence. */
  chained: ReadonlyMap<ObjectKey, KubeObject>;
  /** The trace of the fresh run that applied the same CR from the seed. */
  freshEvents: readonly TraceEvent[];
  /** The sequence run's trace (for the objects its controller wrote). */
  chainedEvents: readonly TraceEvent[];
  /** How the controller of each run ended (run.json's `controllerExits`; `expected`: kperturb stopped it). */
  chainedExits?: ReadonlyArray<{ expected: boolean; incarnation?: number }>;
  freshExits?: ReadonlyArray<{ expected: boolean }>;
}

/**
 * Why a case cannot be compared: a run whose controller exited when kperturb did not stop it ended
 * with whatever the dead controller had written (rabbitmq-operator losing its Lease on a loaded
 * machine left the sequence without any of its objects: 23 "differences", none about the CR). The
 * crash oracle says so for the sequence; the fresh run is only the differential's. A state the
 * sequence reached before its controller exited (the exit's trace event comes after the next
 * operation began) was the live controller's answer, and is compared: redis-ot's controller exits at
 * step 5 of a sequence whose step 3 already showed a bug the differential sees.
 */
export function differentialNotCompared(c: Partial<Pick<DifferentialCase, 'chainedExits' | 'freshExits' | 'chainedEvents' | 'step'>>): string | undefined {
  const exits = c.chainedExits?.filter((e) => !e.expected) ?? [];
  if (exits.length > 0 && !exitedAfterState(exits, c.chainedEvents ?? [], c.step))
    return 'not compared: the controller exited during the sequence (the crash oracle judges that)';
  if (c.freshExits?.some((e) => !e.expected)) return 'not compared: the controller exited in the run from scratch';
  return undefined;
}

/** Every one of these exits was traced after the state following operation step `step` (1-based) was taken: at the next operation's start. */
export function exitedAfterState(exits: ReadonlyArray<{ incarnation?: number }>, events: readonly TraceEvent[], step: number | undefined): boolean {
  if (step === undefined) return false;
  const next = operationStepIndex(step);
  const taken = events.find((e) => e.type === 'workload-step' && e.phase === 'start' && e.index === next)?.seq;
  if (taken === undefined) return false;
  return exits.every((x) => {
    const exit = events.find((e) => e.type === 'controller' && e.action === 'exit' && e.incarnation === x.incarnation);
    return x.incarnation !== undefined && exit !== undefined && exit.seq > taken;
  });
}

/**
 * Values the API server (or its controllers) allocates for an object when it is created, from what
 * is free at that moment: a Service's cluster IPs and node ports, a claim's volume. Two clusters
 * that saw different histories allocate differently, whatever the controller does (Acto's
 * differential excludes `cluster_ip`, `cluster_i_ps`, `node_port` and `volume_name` too).
 */
export const ALLOCATED_AT_CREATION: readonly MaskRule[] = [
  { keyGlob: 'Service/*', paths: ['spec.clusterIP', 'spec.clusterIPs', 'spec.ports[*].nodePort', 'spec.healthCheckNodePort'] },
  { keyGlob: 'PersistentVolumeClaim/*', paths: ['spec.volumeName'] },
];

/**
 * The fields that differ between two runs of the same input (Acto's `get_nondeterministic_fields`,
 * Sieve's learning twice): the final states of the written objects of two fresh runs that applied
 * the same CR, compared as the reference runs of `learn` are (oracles/masks.ts `learnMasks`). What
 * differs there is not the controller's answer to the input but chance: a generated password and its
 * hash in a Secret, a timestamp, a random suffix. Learned per object, for the whole campaign.
 */
export function nondeterministicFields(
  runs: ReadonlyArray<readonly TraceEvent[]>,
  crKey: ObjectKey,
  into: Map<ObjectKey, ObjectMask> = new Map(),
): Map<ObjectKey, ObjectMask> {
  const keys = new Set(runs.flatMap((events) => [...controllerWrittenKeys(events, crKey)]));
  const states = runs.map((events) => {
    const state = finalState(events);
    return endStateView(Object.fromEntries([...keys].filter((k) => state.has(k)).map((k) => [k, state.get(k)!]))).named;
  });
  const builtIn = new Masks([]);
  for (const [key, mask] of learnMasks(states)) {
    // What the built-in masks leave out already (uids, managedFields, timestamps) is not news.
    const patterns = mask.patterns.filter((p) => !isPathMasked(builtIn.forObject(key), p as FieldPath));
    if (!mask.whole && patterns.length === 0) continue;
    const known = into.get(key);
    into.set(key, { whole: mask.whole || (known?.whole ?? false), patterns: [...(known?.patterns ?? []), ...patterns] });
  }
  return into;
}

/**
 * Fields the API server defaults from other fields when the object is created and keeps through
 * later updates, so history and scratch differ by Kubernetes' own rules, whatever the controller
 * does: a container's imagePullPolicy follows its image's tag at creation (`Always` for none or
 * `:latest`, else `IfNotPresent`), and an image changed later keeps the first one's policy.
 */
export const DEFAULTED_AT_CREATION: readonly MaskRule[] = [
  {
    keyGlob: '*',
    paths: ['containers', 'initContainers'].flatMap((list) => [`spec.${list}[*].imagePullPolicy`, `spec.template.spec.${list}[*].imagePullPolicy`]),
  },
];

export function differentialAlarms(
  c: DifferentialCase,
  maskRules: readonly MaskRule[] = [],
  nondeterministic: ReadonlyMap<ObjectKey, ObjectMask> = new Map(),
): ExploreAlarm[] {
  if (differentialNotCompared(c)) return [];
  const keys = new Set([...controllerWrittenKeys(c.chainedEvents, c.crKey), ...controllerWrittenKeys(c.freshEvents, c.crKey)]);
  const fresh = finalState(c.freshEvents);
  const chainedCopy = counterCopies(c.chainedEvents, c.crKey, keys);
  const freshCopy = counterCopies(c.freshEvents, c.crKey, keys);
  return objectDifferenceAlarms(c.chained, fresh, keys, [...DEFAULTED_AT_CREATION, ...ALLOCATED_AT_CREATION, ...maskRules], {
    oracle: 'differential',
    sequence: c.sequence,
    step: c.step,
    say: (difference) =>
      `the CR after this step, created with that spec on a fresh cluster, ends differently: ${difference.replace('after reference runs', 'through the sequence').replace('after the test run', 'from scratch')}`,
    nondeterministic,
    // A copy of the CR's counters (judge.ts `counterCopies`: zookeeper-operator's `owner-rv` label, a
    // copied generation) counts the CR's writes, so history and scratch differ by nature: the
    // sequence's CR has had many versions and generations, the one from scratch few. Acto masks
    // `owner-rv` by name.
    ignore: (a) => chainedCopy(a.object, a.field, a.reference[0], c.chained.get(a.object)) && freshCopy(a.object, a.field, a.test, fresh.get(a.object)),
  });
}

/**
 * The objects among `keys` compared between two states with the end-state oracle's comparison and
 * masks, status left out (the cluster's account of the spec: a spec difference says it first): one
 * alarm per object that differs, on its first difference (`say` words the end-state oracle's
 * sentence, "after reference runs" for `expected` and "after the test run" for `found`), naming the others.
 */
/**
 * An annotation in which a client keeps the object it last applied (kubectl's
 * `kubectl.kubernetes.io/last-applied-configuration`, banzaicloud k8s-objectmatcher's
 * `banzaicloud.com/last-applied`, a zip of the object): an encoding of the object's own fields,
 * which are compared themselves; it differs whenever the history of applies does (redis-ot's
 * StatefulSets after every rollback, with nothing else different).
 */
const LAST_APPLIED = /^metadata\.annotations\["[^"]*last-applied[^"]*"\]$/;

/**
 * The Deployment controller's count of the rollouts of a Deployment's template (and its ReplicaSets'):
 * bookkeeping of the history, as a copy of the CR's generation is. A rollback is one more rollout,
 * so the state before a step (revision 1) and after its rollback (revision 3) differ there with the
 * same template, and a CR created at once has had one rollout where the sequence had several.
 */
const ROLLOUT_REVISION = /^metadata\.annotations\["deployment\.kubernetes\.io\/revision(-history)?"\]$/;

export function objectDifferenceAlarms(
  expected: ReadonlyMap<ObjectKey, KubeObject>,
  found: ReadonlyMap<ObjectKey, KubeObject>,
  keys: ReadonlySet<ObjectKey>,
  maskRules: readonly MaskRule[],
  about: {
    oracle: ExploreOracle;
    sequence: string;
    step: number;
    say: (difference: string) => string;
    /** Fields learned to differ between two runs of the same input. */
    nondeterministic?: ReadonlyMap<ObjectKey, ObjectMask>;
    /** Differences that are no alarm by a rule of the caller's. */
    ignore?: (difference: Alarm) => boolean;
  },
): ExploreAlarm[] {
  const pick = (state: ReadonlyMap<ObjectKey, KubeObject>) => Object.fromEntries([...keys].filter((k) => state.has(k)).map((k) => [k, state.get(k)!]));
  const differences = compareEndStates([endStateView(pick(expected))], endStateView(pick(found)), new Masks(maskRules, about.nondeterministic)).filter(
    (a) => !a.field?.startsWith('status.') && !LAST_APPLIED.test(a.field ?? '') && !ROLLOUT_REVISION.test(a.field ?? '') && !(about.ignore?.(a) ?? false),
  );
  const byObject = new Map<ObjectKey, Alarm[]>();
  for (const a of differences) byObject.set(a.object, [...(byObject.get(a.object) ?? []), a]);
  return [...byObject].map(([object, all]) => {
    const first = all[0]!;
    const others = all.slice(1).map((a) => a.field ?? '(the object)');
    return {
      oracle: about.oracle,
      sequence: about.sequence,
      step: about.step,
      object,
      ...(first.field ? { field: first.field } : {}),
      expected: first.reference[0],
      found: first.test,
      message: `${about.say(first.message)}${others.length > 0 ? ` (and ${others.join(', ')})` : ''}`,
    };
  });
}

/** The objects at the end of a trace. */
export function finalState(events: readonly TraceEvent[]): Map<ObjectKey, KubeObject> {
  const state = new Map<ObjectKey, KubeObject>();
  for (const e of events) {
    if (e.type !== 'cluster-change') continue;
    if (e.eventType === 'DELETED') state.delete(e.key);
    else state.set(e.key, e.object);
  }
  return state;
}
