/**
 * A planning rule turns an analysed reference trace into candidate perturbations of one pattern.
 * Each pattern (intermediate, stale, unobserved state) is its own rule module; the planner runs
 * them all and names the plans.
 */
import type { Fault, Pattern } from '../../src/model/plan.js';
import type { StageCount } from '../pruning.js';
import type { AnalyzedTrace } from '../trace-analysis.js';

export interface PlanCandidate {
  description: string;
  faults: Fault[];
}

export interface RuleResult {
  /** In trace order: plan names are assigned in this order. */
  candidates: PlanCandidate[];
  /** Candidates left after each pruning stage, starting with the baseline. */
  stages: StageCount[];
}

export interface PlanningRule {
  readonly pattern: Pattern;
  /** Plans are named `<namePrefix>-0001`, `<namePrefix>-0002`... */
  readonly namePrefix: string;
  plan(trace: AnalyzedTrace): RuleResult;
}
