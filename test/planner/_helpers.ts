import { planTests, type PlannerOptions, type PlannerOutput } from '../../planner/index.js';
import type { Fault, Pattern, TestPlan } from '../../src/model/plan.js';
import type { TraceEvent } from '../../src/model/trace.js';

export const DB = 'Database/default/db1';
export const SECRET = 'Secret/default/db1-tls';
export const CM = 'ConfigMap/default/db1-config';
export const STS = 'StatefulSet/default/db1';

/** Plans from reference traces (the last one is the run plans come from). */
export function plan(references: Array<Iterable<TraceEvent>> | Iterable<TraceEvent>, options: PlannerOptions = {}): PlannerOutput {
  const refs =
    Array.isArray(references) && references.length > 0 && !('seq' in (references[0] as object))
      ? (references as Array<Iterable<TraceEvent>>)
      : [references as Iterable<TraceEvent>];
  return planTests({ controller: 'db-operator', workload: 'create-and-scale', references: refs, options });
}

export function plansOf(out: PlannerOutput, pattern: Pattern): TestPlan[] {
  return out.plans.filter((p) => p.spec.pattern === pattern);
}

export function faultsOf(out: PlannerOutput, pattern: Pattern): Fault[] {
  return plansOf(out, pattern).map((p) => p.spec.faults[0]!);
}

export function stages(out: PlannerOutput, pattern: Pattern): Record<string, number> {
  const s = out.stats.find((x) => x.pattern === pattern);
  if (!s) throw new Error(`no stats for ${pattern}`);
  return Object.fromEntries(s.stages.map((x) => [x.stage, x.plans]));
}
