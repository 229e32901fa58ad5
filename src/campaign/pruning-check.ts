/**
 * Does a pruned plan set find every bug the unpruned set finds? The comparison behind
 * `test/bench/check-pruning.ts` (`npm run check:pruning`), as pure functions of plans and verdicts
 * (docs/planner.md, "Checking that pruning keeps every bug").
 *
 * A bug is an object that a bug verdict's non-flaky alarms name: the oracles explain every
 * difference per object, and one run can show two independent symptoms (a leaked claim and a
 * re-created pod), which count as two bugs found, not as a third, combined one.
 */
import { foldTemplateHash, GENERATED_NAME_ALPHABET, GENERATED_SUFFIX_LENGTH } from '../model/generated-names.js';
import type { TestPlan } from '../model/plan.js';
import type { PlanResult } from '../model/results.js';

const GENERATED_SUFFIX = new RegExp(`-[${GENERATED_NAME_ALPHABET}]{${GENERATED_SUFFIX_LENGTH}}$`);

/**
 * An alarm's object with a random generated-name suffix folded (`web-7xk2p` -> `web-*`), so that a
 * bug means the same object in every run. The oracles already fold the objects they can pair up;
 * this catches those only one run has (their generateName is not in the alarm). A Deployment's
 * pod-template-hash is folded too (foldTemplateHash: `web-6d4cf56db6` -> `web-*`, its pods `web-*-*`).
 */
export function bugKey(object: string): string {
  return foldTemplateHash(object.replace(GENERATED_SUFFIX, '-*'));
}

/** The bugs one verdict shows: the folded objects of its non-flaky alarms, sorted (none unless a bug verdict). */
export function bugsOfResult(r: PlanResult): string[] {
  if (r.verdict !== 'bug') return [];
  return [...new Set(r.alarms.filter((a) => !a.flaky).map((a) => bugKey(a.object)))].sort();
}

/** bug -> the plans whose runs found it, in the results' order; bugs sorted. */
export function bugsFound(results: readonly PlanResult[]): Map<string, string[]> {
  const bugs = new Map<string, string[]>();
  for (const r of results) {
    for (const bug of bugsOfResult(r)) {
      const plans = bugs.get(bug);
      if (plans) plans.push(r.plan);
      else bugs.set(bug, [r.plan]);
    }
  }
  return new Map([...bugs].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}

/** The distinct sets of bugs single runs showed together ("A + B"), sorted. */
export function findingsTogether(results: readonly PlanResult[]): string[] {
  return [...new Set(results.map((r) => bugsOfResult(r).join(' + ')).filter(Boolean))].sort();
}

/**
 * For each bug the unpruned set found, the plans of the pruned set that have the very faults of a
 * plan that found it (names differ between the sets), in the pruned set's order. Independent of the
 * runs' timing: it says whether pruning dropped every plan that found the bug.
 */
export function keptPlansOfBugs(
  unprunedBugs: ReadonlyMap<string, readonly string[]>,
  unprunedPlans: readonly TestPlan[],
  prunedPlans: readonly TestPlan[],
): Map<string, TestPlan[]> {
  const faultsOf = (p: TestPlan) => JSON.stringify(p.spec.faults);
  const prunedByFaults = new Map(prunedPlans.map((p) => [faultsOf(p), p]));
  const unprunedByName = new Map(unprunedPlans.map((p) => [p.metadata.name, p]));
  const kept = new Map<string, TestPlan[]>();
  for (const [bug, plans] of unprunedBugs) {
    const same = new Set<TestPlan>();
    for (const name of plans) {
      const u = unprunedByName.get(name);
      const p = u && prunedByFaults.get(faultsOf(u));
      if (p) same.add(p);
    }
    kept.set(
      bug,
      prunedPlans.filter((p) => same.has(p)),
    );
  }
  return kept;
}

/** The bugs of the unpruned set that none of `prunedFound` (the pruned runs, then any runs again) found. */
export function missedBugs(unprunedBugs: ReadonlyMap<string, unknown>, ...prunedFound: ReadonlyArray<ReadonlyMap<string, unknown>>): string[] {
  return [...unprunedBugs.keys()].filter((bug) => !prunedFound.some((found) => found.has(bug)));
}

/**
 * The kept plans to run again for the bugs still missed: every pruned plan with the faults of a plan
 * that found one of them, each once, in the pruned set's order.
 */
export function plansToRetry(missed: readonly string[], kept: ReadonlyMap<string, readonly TestPlan[]>, prunedPlans: readonly TestPlan[]): TestPlan[] {
  const wanted = new Set(missed.flatMap((bug) => kept.get(bug) ?? []));
  return prunedPlans.filter((p) => wanted.has(p));
}
