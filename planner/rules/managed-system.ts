/**
 * Managed system (issue 37, OAT's fault class): the application the controller manages fails while
 * the controller changes it. For each call of the controller to its stub application in the
 * reference run (`applications:`; the cluster trace's app-call events) that answered normally and
 * that a write of the controller followed before the workload's next step, one plan: that call and
 * every later call to the same pod or Service fail (HTTP 503; a ZooKeeper application refuses
 * connections) until the controller calls that address again, or for MANAGED_WINDOW_SECONDS at most.
 * A controller that retries gets the healed application on its retry and ends like the reference
 * run; one that ignores the error and records the change as done (OAT's "ignores an application
 * error") leaves a state the reference run does not have, which the oracles compare.
 *
 *
 * Then OAT's schedule: for each change a workload step made (a CR change, the workload's own
 * write) and each pod of the application the controller called after that step started, before
 * the workload's next write step, one plan that crash-loops that pod from the change on for
 * CRASH_WINDOW_SECONDS (pod-crash): the fault is held while the controller acts on the change and
 * healed after it. Pods that did not exist at the change are left out (nothing to crash yet).
 *
 * The schedule also breaks what the controller's workload runs on (the pods of the StatefulSets it
 * created and the pods it created itself, their claims and nodes), from the same change and
 * existing then, a few plans per change:
 * - pod-evict: the first of those pods is evicted (kubectl drain's way) as the change arrives; its
 *   StatefulSet recreates it while the controller acts on the change;
 * - node-not-ready: the node of that pod (from its binding) goes not-ready for NODE_WINDOW_SECONDS,
 *   its pods evicted after NODE_EVICT_SECONDS (the default 300 s toleration would outlast the run);
 * - pvc-fault `resize-refused`: each claim the controller updated after the change, before the
 *   workload's next write step (it resizes), has its resize refused for CLAIM_WINDOW_SECONDS;
 * - pvc-fault `pending`: each claim of the controller's StatefulSets created after the change,
 *   before the next write step, stays Pending for CLAIM_WINDOW_SECONDS from its creation.
 * Not planned: `unreachable` nodes and `lost` claims (for hand-written plans).
 *
 * Pruning stages, as the other patterns report them (the schedule's plans count at every stage
 * but `deterministic`, which keeps those whose change trigger fires in every reference run):
 *   baseline          every call the application answered normally
 *   causality         calls a write of the controller followed before the workload's next step
 *   effective-writes  that write succeeded and changed the cluster
 *   deterministic     the call comes with the same rank (its operation and path counted as the
 *                     trigger counts them) in a majority of the reference runs
 *   deduplicated      one plan per call (they are distinct by rank)
 */
import type { ObjectKey } from '../../src/model/object-key.js';
import type { CallTrigger, ChangeTrigger } from '../../src/model/trigger.js';
import {
  describeFault,
  describeWrite,
  type AppUnavailableFault,
  type Fault,
  type NodeNotReadyFault,
  type PodCrashFault,
  type PodEvictFault,
  type PvcFault,
} from '../../src/model/plan.js';
import type { AppCallRecord } from '../analysis/app-calls.js';
import { StageCounter } from '../pruning.js';
import { isSuccess, type RunAnalysis, type WriteRecord } from '../trace-analysis.js';
import type { Triggers } from '../triggers.js';
import type { PlanCandidate, PlanningRule } from './rule.js';

/** The longest a planned fault lasts when the controller never calls the application again. */
export const MANAGED_WINDOW_SECONDS = 5;

export const managedSystemRule: PlanningRule = {
  pattern: 'managed-system',
  namePrefix: 'managed',
  plan(context) {
    const main = context.main;
    const counter = new StageCounter();
    const candidates: PlanCandidate[] = [];
    for (const call of main.appCalls) {
      if (!answeredNormally(call)) continue;
      counter.add('baseline');
      const write = writeAfter(main, call);
      if (context.prune && !write) continue;
      counter.add('causality');
      if (context.prune && (!write || !isSuccess(write) || write.effect !== 'effective' || write.bookkeeping)) continue;
      counter.add('effective-writes');
      if (context.prune && !context.triggers.deterministicCall(callTriggerOf(call))) continue;
      counter.add('deterministic');
      counter.add('deduplicated');
      const fault = unavailableFrom(call);
      const before = write?.trigger ? `, before the controller ${describeWrite(write.trigger)}` : '';
      candidates.push({ description: `${describeFault(fault)}${before}`, faults: [fault] });
    }
    for (const { change, pod } of workloadChangesAndPods(main)) {
      const trigger = context.triggers.change(change);
      if (!trigger) continue;
      for (const stage of ['baseline', 'causality', 'effective-writes'] as const) counter.add(stage);
      if (context.prune && !context.triggers.deterministicChange(change)) continue;
      counter.add('deterministic');
      counter.add('deduplicated');
      const fault: PodCrashFault = {
        type: 'pod-crash',
        pod: planKey(main, pod),
        mode: 'crash-loop',
        at: { change: trigger },
        forSeconds: CRASH_WINDOW_SECONDS,
      };
      candidates.push({ description: `${describeFault(fault)}, while the controller acts on the workload's change (OAT's schedule)`, faults: [fault] });
    }
    for (const { change, fault } of workloadFaults(main, context.triggers)) {
      for (const stage of ['baseline', 'causality', 'effective-writes'] as const) counter.add(stage);
      if (context.prune && !context.triggers.deterministicChange(change)) continue;
      counter.add('deterministic');
      counter.add('deduplicated');
      candidates.push({ description: `${describeFault(fault)}, while the controller acts on the workload's change (OAT's schedule)`, faults: [fault] });
    }
    // Selection: one plan per kind of fault (its type), the first.
    return { candidates: candidates.map((c) => ({ ...c, group: c.faults[0]!.type })), stages: counter.result() };
  },
};

/** How long a planned node outage lasts, and how soon its pods are evicted. */
export const NODE_WINDOW_SECONDS = 3;
export const NODE_EVICT_SECONDS = 1;
/** How long a planned claim fault lasts. */
export const CLAIM_WINDOW_SECONDS = 3;

/**
 * The moments of OAT's schedule: each change a workload write step made, with when that step started
 * (`from`) and when the next write step starts (`until`).
 */
function workloadChanges(main: RunAnalysis): Array<{ change: number; from: number; until: number }> {
  const writeSteps = main.workloadSteps.filter((s) => s.action === 'write');
  return writeSteps.flatMap((step, i) => {
    const until = writeSteps[i + 1]?.startSeq ?? Infinity;
    return step.keys.flatMap((key) => {
      const change = main.changesOf(key).find((c) => main.changes[c]!.seq > step.startSeq && main.changes[c]!.seq < until);
      return change === undefined ? [] : [{ change, from: step.startSeq, until }];
    });
  });
}

/** The pods and claims the controller's workload runs on: created by it, or by a StatefulSet it created. */
function managedObjects(main: RunAnalysis): { pods: ObjectKey[]; claims: ObjectKey[] } {
  const created = new Set(main.writes.filter((w) => w.verb === 'create' && isSuccess(w) && w.rawKey).map((w) => w.rawKey!));
  const statefulSets = [...created].filter((k) => k.startsWith('StatefulSet/'));
  const ofStatefulSet = (key: ObjectKey, owners: readonly ObjectKey[] | undefined) =>
    (owners ?? []).some((o) => statefulSets.includes(o)) ||
    // A StatefulSet's claims are named <template>-<set>-<ordinal> and not owned (the default retention).
    statefulSets.some((set) => {
      const [, ns, name] = set.split('/');
      const ordinal = key.lastIndexOf('-');
      return key.startsWith(`PersistentVolumeClaim/${ns}/`) && /^-\d+$/.test(key.slice(ordinal)) && key.slice(0, ordinal).endsWith(`-${name}`);
    });
  const pods = new Set<ObjectKey>();
  const claims = new Set<ObjectKey>();
  for (const c of main.changes) {
    if (c.eventType !== 'ADDED') continue;
    const mine = created.has(c.rawKey) || ofStatefulSet(c.rawKey, c.owners);
    if (mine && c.rawKey.startsWith('Pod/')) pods.add(c.rawKey);
    if (mine && c.rawKey.startsWith('PersistentVolumeClaim/')) claims.add(c.rawKey);
  }
  return { pods: [...pods].sort(), claims: [...claims].sort() };
}

/**
 * The key a plan names an object of the reference run by: its folded key when the API server
 * generated its name (`<prefix>*#<n>`, src/model/generated-names.ts), which the test run resolves to
 * the object it created in its place; a generated name itself never comes again.
 */
function planKey(main: RunAnalysis, rawKey: ObjectKey): ObjectKey {
  const first = main.changesOf(rawKey)[0];
  return first === undefined ? rawKey : main.changes[first]!.key;
}

/** The node a pod was bound to, from its changes up to `change`. */
function nodeOf(main: RunAnalysis, pod: ObjectKey, change: number): string | undefined {
  for (const c of main.changesOf(pod)) {
    if (c > change) break;
    const bound = main.changes[c]!.diff?.fields.find((f) => f.path === 'spec.nodeName' && typeof f.after === 'string');
    if (bound) return bound.after as string;
  }
  return undefined;
}

/** The schedule's faults on pods, nodes and claims (see the file comment), with the change each starts from. */
function workloadFaults(main: RunAnalysis, triggers: Triggers): Array<{ change: number; trigger: ChangeTrigger; fault: Fault }> {
  const { pods, claims } = managedObjects(main);
  if (pods.length === 0 && claims.length === 0) return [];
  const out: Array<{ change: number; trigger: ChangeTrigger; fault: Fault }> = [];
  for (const { change, until } of workloadChanges(main)) {
    const trigger = triggers.change(change);
    if (!trigger) continue;
    const at = { change: trigger };
    const seq = main.changes[change]!.seq;
    const pod = pods.find((p) => main.existsAfter(p, change));
    if (pod) {
      const evict: PodEvictFault = { type: 'pod-evict', pod: planKey(main, pod), how: 'evict', at };
      out.push({ change, trigger, fault: evict });
      const node = nodeOf(main, pod, change);
      if (node) {
        const outage: NodeNotReadyFault = {
          type: 'node-not-ready',
          node: `Node/${node}`,
          mode: 'not-ready',
          evictAfterSeconds: NODE_EVICT_SECONDS,
          at,
          forSeconds: NODE_WINDOW_SECONDS,
        };
        out.push({ change, trigger, fault: outage });
      }
    }
    const resized = new Set(
      main.writes
        .filter((w) => (w.verb === 'update' || w.verb === 'patch') && !w.subresource && isSuccess(w) && w.effect === 'effective')
        .filter((w) => w.requestSeq > seq && w.requestSeq < until && w.rawKey?.startsWith('PersistentVolumeClaim/') && main.existsAfter(w.rawKey, change))
        .map((w) => w.rawKey!),
    );
    for (const claim of [...resized].sort()) {
      const refused: PvcFault = { type: 'pvc-fault', claim: planKey(main, claim), mode: 'resize-refused', at, forSeconds: CLAIM_WINDOW_SECONDS };
      out.push({ change, trigger, fault: refused });
    }
    for (const claim of claims) {
      const createdAt = main.changesOf(claim).find((c) => main.changes[c]!.eventType === 'ADDED');
      if (createdAt === undefined || main.changes[createdAt]!.seq <= seq || main.changes[createdAt]!.seq >= until) continue;
      const created = triggers.change(createdAt);
      if (!created) continue;
      const pending: PvcFault = { type: 'pvc-fault', claim: planKey(main, claim), mode: 'pending', at: { change: created }, forSeconds: CLAIM_WINDOW_SECONDS };
      out.push({ change: createdAt, trigger: created, fault: pending });
    }
  }
  return out;
}

/** How long a planned crash loop lasts: one crash (the kubelet's first back-off is 10 s), then the heal. */
export const CRASH_WINDOW_SECONDS = 3;

/**
 * Each change a workload write step made, with the application's pods (existing then) the controller
 * called after the step started, before the next write step. From the step's start, not from the
 * change: a stub records a call as it arrives, while the recorder records a change when its watch
 * delivers it, so on the real control plane the controller's calls in answer to the change can come
 * before the change in the cluster trace.
 */
function workloadChangesAndPods(main: RunAnalysis): Array<{ change: number; pod: ObjectKey }> {
  return workloadChanges(main).flatMap(({ change, from, until }) => {
    const pods = new Set(main.appCalls.filter((c) => c.seq > from && c.seq < until && c.key.startsWith('Pod/')).map((c) => c.key));
    return [...pods].filter((pod) => main.existsAfter(pod, change)).map((pod) => ({ change, pod }));
  });
}

function answeredNormally(call: AppCallRecord): boolean {
  return typeof call.result === 'number' ? call.result >= 200 && call.result < 400 : call.result === 'ok';
}

/** The first write of the controller after the call and before the next workload step starts. */
function writeAfter(main: RunAnalysis, call: AppCallRecord): WriteRecord | undefined {
  const nextStep = main.workloadSteps.find((s) => s.startSeq > call.seq && s.action !== 'wait' && s.action !== 'sleep')?.startSeq ?? Infinity;
  return main.writes.find((w) => w.requestSeq > call.seq && w.requestSeq < nextStep && !w.dryRun && !w.bookkeeping && w.trigger !== undefined);
}

/** The call and the address's later calls fail until the controller calls the address again. */
/** The trigger naming this call: the n-th call with its application, address, operation and path. */
function callTriggerOf(call: AppCallRecord): CallTrigger {
  return {
    application: call.application,
    key: call.key,
    operation: call.operation,
    ...(call.path !== undefined ? { path: call.path } : {}),
    occurrence: call.occurrence,
  };
}

export function unavailableFrom(call: AppCallRecord): AppUnavailableFault {
  const at = callTriggerOf(call);
  return {
    type: 'app-unavailable',
    application: call.application,
    key: call.key,
    answer: call.protocol === 'http' ? 'service-unavailable' : 'refuse',
    at: { call: at },
    until: { call: { application: call.application, key: call.key, occurrence: call.occurrenceOfKey + 1 } },
    forSeconds: MANAGED_WINDOW_SECONDS,
  };
}
