/**
 * A planning rule turns the analysed reference runs into candidate perturbations of one pattern.
 * Each pattern (intermediate, stale, unobserved state) is its own rule module; the planner runs them
 * all and names the plans.
 */
import type { Fault, Pattern } from '../../src/model/plan.js';
import type { StageCount } from '../pruning.js';
import type { RunAnalysis } from '../trace-analysis.js';
import type { Triggers } from '../triggers.js';

export interface PlanCandidate {
  description: string;
  faults: Fault[];
  /**
   * Selection (selection.ts): candidates with the same group exercise the same step of the
   * controller; the default plan set keeps the one with the lowest `rank` (compared element by
   * element; the first in trace order among equals). No group: a group of its own.
   */
  group?: string;
  rank?: readonly number[];
}

export interface RuleResult {
  /** In trace order: plan names are assigned in this order. */
  candidates: PlanCandidate[];
  /** Candidates left after each pruning stage, starting with the baseline. */
  stages: StageCount[];
}

export interface RuleContext {
  /** The reference run plans come from (the last one). */
  main: RunAnalysis;
  /** Builds triggers for `main` and checks them against the other reference runs and the normal-delivery runs. */
  triggers: Triggers;
  /** False: every candidate that can be written as a plan, no pruning stage applied. */
  prune: boolean;
  staleReleaseSeconds: number;
}

export interface PlanningRule {
  readonly pattern: Pattern;
  /** Plans are named `<namePrefix>-0001`, `<namePrefix>-0002`... */
  readonly namePrefix: string;
  plan(context: RuleContext): RuleResult;
}
