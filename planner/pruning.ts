/**
 * Pruning stages and their counts. Every pattern reports the same stages, in this order, each the
 * number of candidate plans left after it (docs/planner.md says what each stage means per pattern and
 * why it can only keep plans that could find a bug):
 *   baseline          the naive rule (Sieve's basic rules, nothing pruned)
 *   causality         pairs and writes that causality (episodes or bursts, plus relations) allows
 *   effective-writes  unsuccessful and no-op writes dropped (and, for stale state, writes nothing undoes)
 *   deterministic     triggers that do not fire in every reference run, or name bookkeeping objects, dropped
 *   deduplicated      one plan per introduced state
 * Unobserved state has one more, after causality:
 *   releasable        holds that only the controller's own reaction to the held events would release, dropped
 * With pruning off, a pattern reports `baseline` and `expressible` (the candidates a plan can name).
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
