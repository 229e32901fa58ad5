/**
 * The planner: from the merged trace of a reference run to test plans, one perturbation each.
 * Pure: no files, processes or clocks; the same trace always gives byte-identical plans.
 */
import { PLAN_API_VERSION, type Pattern, type TestPlan } from '../src/model/plan.js';
import type { TraceEvent } from '../src/model/trace.js';
import type { StageCount } from './pruning.js';
import { intermediateStateRule } from './rules/intermediate-state.js';
import type { PlanningRule } from './rules/rule.js';
import { analyzeTrace } from './trace-analysis.js';

export interface PlannerInput {
  controller: string;
  workload: string;
  /** The merged controller and cluster traces of one reference run, in any order. */
  trace: Iterable<TraceEvent>;
}

export interface PruningStats {
  pattern: Pattern;
  stages: StageCount[];
}

export interface PlannerOutput {
  plans: TestPlan[];
  stats: PruningStats[];
}

export const DEFAULT_RULES: readonly PlanningRule[] = [intermediateStateRule];

export function planTests(input: PlannerInput, rules: readonly PlanningRule[] = DEFAULT_RULES): PlannerOutput {
  const trace = analyzeTrace(input.trace);
  const plans: TestPlan[] = [];
  const stats: PruningStats[] = [];
  for (const rule of rules) {
    const result = rule.plan(trace);
    stats.push({ pattern: rule.pattern, stages: result.stages });
    result.candidates.forEach((c, i) => {
      plans.push({
        apiVersion: PLAN_API_VERSION,
        kind: 'TestPlan',
        metadata: { name: `${rule.namePrefix}-${String(i + 1).padStart(4, '0')}` },
        spec: {
          controller: input.controller,
          workload: input.workload,
          pattern: rule.pattern,
          description: c.description,
          faults: c.faults,
        },
      });
    });
  }
  return { plans, stats };
}

export type { StageCount } from './pruning.js';
export type { PlanningRule, PlanCandidate, RuleResult } from './rules/rule.js';
export type { AnalyzedTrace, ControllerWrite } from './trace-analysis.js';
export { analyzeTrace } from './trace-analysis.js';
export { intermediateStateRule } from './rules/intermediate-state.js';
