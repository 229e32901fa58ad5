/**
 * Error path: the writes whose failure the controller must survive, failed on purpose, with answers
 * kube-apiserver gives (proxy/api-errors.ts). For each write the intermediate-state rule keeps after
 * its pruning (causality, effective writes, determinism, one per exposed state: the writes the
 * controller builds on), a few plans, each failing that write request once with an answer that can
 * change what the controller does next:
 *   create          lost-response (applied, the answer lost: a retried create meets AlreadyExists, a
 *                   retried generateName create makes a twin) and internal-error (500, not applied)
 *   update, patch   conflict (409, the optimistic-concurrency failure every writer must retry) and
 *                   internal-error
 *   delete          lost-response (a retried delete meets NotFound) and internal-error
 * Answers left out of generated plans (hand-written plans may use them): too-many-requests and
 * timeout carry Retry-After, which client-go obeys by retrying the request itself, so the controller
 * never sees them once; service-unavailable is handled as the 500 is; slow only delays.
 *
 * The fault counts write requests, failed ones included; the reference trace's trigger counts
 * successful writes, so the occurrence is recounted over every request of that write, in the runs
 * plans are tested like (`Triggers.requestOccurrence`).
 *
 * Watch side: of those same writes, the ones whose echo the controller saw on a watch mark the moments
 * it waits on that kind's watch for the result of its own work. For each such kind, two plans end
 * the controller's watches of it (watch-end) right after one of those writes:
 *   first write of the kind  reset, then 410 Expired on the re-watch: the controller must relist
 *                            before it sees the echo (an informer does; a hand-rolled watch loop that
 *                            resumes from a remembered resourceVersion, or that gives up, does not)
 *   last write of the kind   a clean close: the client re-watches from its last resourceVersion and
 *                            must not lose or repeat the events in between
 * One of each per kind (the same write gives one plan, the reset), so the count grows with the kinds
 * the controller writes and watches, not with its writes; they follow the api-error plans, whose
 * names stay as they were.
 */
import { parseKey } from '../../src/model/object-key.js';
import {
  describeApiError,
  describeWatchEnd,
  type ApiErrorAnswer,
  type ApiErrorFault,
  type TriggerWriteVerb,
  type WatchEndFault,
  type WriteTrigger,
} from '../../src/model/plan.js';
import type { RunAnalysis, WriteRecord } from '../trace-analysis.js';
import { intermediateWrites } from './intermediate-state.js';
import type { PlanCandidate, PlanningRule } from './rule.js';

export const ERROR_PATH_ANSWERS: Record<TriggerWriteVerb, readonly ApiErrorAnswer[]> = {
  create: ['lost-response', 'internal-error'],
  update: ['conflict', 'internal-error'],
  patch: ['conflict', 'internal-error'],
  delete: ['lost-response', 'internal-error'],
};

/** Every verb gets this many answers (ERROR_PATH_ANSWERS), so stage counts are the intermediate ones times this. */
const ANSWERS_PER_WRITE = 2;

export const errorPathRule: PlanningRule = {
  pattern: 'error-path',
  namePrefix: 'error',
  plan(context) {
    const { writes, stages } = intermediateWrites(context);
    const candidates: PlanCandidate[] = [];
    for (const w of writes) {
      const trigger = w.trigger!;
      const on: WriteTrigger = { ...trigger, occurrence: context.triggers.requestOccurrence(trigger) };
      // Selection: one plan per verb and subresource, the first write's first answer (its failure
      // and the retry that meets it applied, or the 409 every writer must retry).
      const group = `api-error ${trigger.verb} ${trigger.subresource ?? ''}`;
      for (const answer of ERROR_PATH_ANSWERS[trigger.verb]) candidates.push({ ...candidateFor({ type: 'api-error', on, answer }), group });
    }
    const watchEnds = watchEndFaults(context.main, writes);
    // Selection: one watch end, the first kind's reset with 410 Expired.
    for (const fault of watchEnds) candidates.push({ description: describeWatchEnd(fault), faults: [fault], group: 'watch-end' });
    // Stages count plans, as every pattern's do: each write left at a stage makes one per answer. The
    // watch-end plans (at most two per kind, chosen from the writes left at the end) count at every
    // stage, so that no stage seems to add plans.
    return { candidates, stages: stages.map((s) => ({ stage: s.stage, plans: s.plans * ANSWERS_PER_WRITE + watchEnds.length })) };
  },
};

/** Per kind whose writes (of `writes`) the controller saw echoed on a watch: a reset + 410 after the first, a clean close after the last. */
function watchEndFaults(main: RunAnalysis, writes: readonly WriteRecord[]): WatchEndFault[] {
  const byKind = new Map<string, WriteTrigger[]>();
  for (const w of writes) {
    const change = w.effectChange >= 0 ? main.changes[w.effectChange] : undefined;
    const kind = w.trigger && change?.watched ? parseKey(w.trigger.key)?.kind : undefined;
    if (!kind || !w.trigger) continue;
    const list = byKind.get(kind) ?? [];
    list.push(w.trigger);
    byKind.set(kind, list);
  }
  const faults: WatchEndFault[] = [];
  for (const [kind, triggers] of byKind) {
    faults.push({ type: 'watch-end', kind, at: { write: triggers[0]! }, mode: 'reset', expire: true });
    if (triggers.length > 1) faults.push({ type: 'watch-end', kind, at: { write: triggers[triggers.length - 1]! }, mode: 'close' });
  }
  return faults;
}

function candidateFor(fault: ApiErrorFault): PlanCandidate {
  return { description: describeApiError(fault), faults: [fault] };
}
