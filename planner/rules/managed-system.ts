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
 * write) and each pod of the application the controller called after it, before the workload's
 * next write step, one plan that crash-loops that pod from the change on for
 * CRASH_WINDOW_SECONDS (pod-crash): the fault is held while the controller acts on the change and
 * healed after it. Pods that did not exist at the change are left out (nothing to crash yet).
 *
 * Pruning stages, as the other patterns report them (the schedule's plans count at every stage
 * but `deterministic`, which keeps those whose change trigger fires in every reference run):
 *   baseline          every call the application answered normally
 *   causality         calls a write of the controller followed before the workload's next step
 *   effective-writes  that write succeeded and changed the cluster
 *   deterministic     not judged yet for calls (every call is kept): whether the call recurs with the
 *                     same rank in the other reference runs is left to the run, which says "not injected"
 *   deduplicated      one plan per call (they are distinct by rank)
 */
import type { ObjectKey } from '../../src/model/object-key.js';
import { describeFault, describeWrite, type AppUnavailableFault, type PodCrashFault } from '../../src/model/plan.js';
import type { AppCallRecord } from '../analysis/app-calls.js';
import { StageCounter } from '../pruning.js';
import { isSuccess, type RunAnalysis, type WriteRecord } from '../trace-analysis.js';
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
      const fault: PodCrashFault = { type: 'pod-crash', pod, mode: 'crash-loop', at: { change: trigger }, forSeconds: CRASH_WINDOW_SECONDS };
      candidates.push({ description: `${describeFault(fault)}, while the controller acts on the workload's change (OAT's schedule)`, faults: [fault] });
    }
    return { candidates, stages: counter.result() };
  },
};

/** How long a planned crash loop lasts: one crash (the kubelet's first back-off is 10 s), then the heal. */
export const CRASH_WINDOW_SECONDS = 3;

/** Each change a workload write step made, with the application's pods (existing then) the controller called after it, before the next write step. */
function workloadChangesAndPods(main: RunAnalysis): Array<{ change: number; pod: ObjectKey }> {
  const writeSteps = main.workloadSteps.filter((s) => s.action === 'write');
  const out: Array<{ change: number; pod: ObjectKey }> = [];
  writeSteps.forEach((step, i) => {
    const until = writeSteps[i + 1]?.startSeq ?? Infinity;
    for (const key of step.keys) {
      const change = main.changesOf(key).find((c) => main.changes[c]!.seq > step.startSeq && main.changes[c]!.seq < until);
      if (change === undefined) continue;
      const at = main.changes[change]!.seq;
      const pods = new Set(main.appCalls.filter((c) => c.seq > at && c.seq < until && c.key.startsWith('Pod/')).map((c) => c.key));
      for (const pod of pods) if (main.existsAfter(pod, change)) out.push({ change, pod });
    }
  });
  return out;
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
export function unavailableFrom(call: AppCallRecord): AppUnavailableFault {
  const at = {
    application: call.application,
    key: call.key,
    operation: call.operation,
    ...(call.path !== undefined ? { path: call.path } : {}),
    occurrence: call.occurrence,
  };
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
