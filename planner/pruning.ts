/**
 * Pruning stages and their counts. Every pattern reports the same stages, in this order, each the
 * number of candidate plans left after it (docs/planner.md says what each stage means per pattern and
 * why it can only keep plans that could find a bug):
 *   baseline          the naive rule (Sieve's basic rules, nothing pruned)
 *   causality         pairs and writes that causality (episodes or bursts, plus relations) allows
 *   effective-writes  unsuccessful and no-op writes dropped (and, for stale state, writes nothing undoes)
 *   deterministic     triggers that do not fire in a majority of the reference runs (both of two), or name bookkeeping objects, dropped
 *   deduplicated      one plan per introduced state
 * Unobserved state has one more, after causality:
 *   releasable        holds that only the controller's own reaction to the held events would release, dropped
 * With pruning off, a pattern reports `baseline` and `expressible` (the candidates a plan can name).
 * With selection on (the default plan set of `kperturb plan`), every pattern reports one more, last:
 *   selected          one plan per group of plans that exercise the same step (selection.ts)
 */
export const STAGES = ['baseline', 'causality', 'effective-writes', 'deterministic', 'deduplicated'] as const;
export type Stage = (typeof STAGES)[number] | 'releasable';
export const UNOBSERVED_STAGES: readonly Stage[] = ['baseline', 'causality', 'releasable', 'effective-writes', 'deterministic', 'deduplicated'];

export interface StageCount {
  stage: string;
  plans: number;
}

/** Counts per stage; a candidate passing stage k also passed every stage before it. */
export class StageCounter {
  private readonly counts = new Map<string, number>();

  constructor(private readonly stages: readonly string[] = STAGES) {
    for (const s of stages) this.counts.set(s, 0);
  }

  add(stage: string, n = 1): void {
    if (!this.counts.has(stage)) throw new Error(`internal: unknown pruning stage ${stage}`);
    this.counts.set(stage, this.counts.get(stage)! + n);
  }

  result(): StageCount[] {
    return this.stages.map((stage) => ({ stage, plans: this.counts.get(stage)! }));
  }
}

/** Reference runs `learn` makes at most, adding runs while `wantsMoreReferenceRuns` says so. */
export const MAX_REFERENCE_RUNS = 5;

/**
 * Do the reference runs disagree so much that another one is worth making? True when the
 * `deterministic` stage kept fewer than half of the candidates that reached it, over all patterns:
 * the runs took different paths, and a third run gives the majority (Triggers) that keeps the
 * triggers most runs share. A workload whose every plan the runs' disagreement pruned is otherwise
 * reported untested.
 */
export function wantsMoreReferenceRuns(stats: ReadonlyArray<{ stages: readonly StageCount[] }>): boolean {
  let reached = 0;
  let kept = 0;
  for (const { stages } of stats) {
    const i = stages.findIndex((s) => s.stage === 'deterministic');
    if (i <= 0) continue;
    reached += stages[i - 1]!.plans;
    kept += stages[i]!.plans;
  }
  return reached > 0 && kept * 2 < reached;
}
