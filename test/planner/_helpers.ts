import { planTests, type PlannerOptions, type PlannerOutput } from '../../planner/index.js';
import type { Fault, Pattern, TestPlan } from '../../src/model/plan.js';
import type { TraceEvent } from '../../src/model/trace.js';
import { TraceBuilder } from './_trace-builder.js';

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

/**
 * Sieve's case: the controller deletes the StatefulSet because its Database is being deleted; the
 * Database and StatefulSet come back. `statusReport`: the StatefulSet reports its status after the
 * Database got its deletionTimestamp, before the delete (a second view of the delete, nearer it).
 */
export function deleteThenRecreate(opts: { statusReport?: boolean } = {}): TraceBuilder {
  const b = new TraceBuilder().external('ADDED', DB, { deliver: true }).episode().write('create', STS, { owner: DB, deliver: true }).episode();
  b.external('MODIFIED', DB, { set: { 'metadata.deletionTimestamp': '2024-01-01T00:00:00Z' }, deliver: true });
  if (opts.statusReport) b.external('MODIFIED', STS, { set: { 'status.replicas': 0 }, deliver: true });
  return b
    .episode()
    .write('delete', STS, { deliver: true })
    .episode()
    .external('DELETED', DB, { deliver: true })
    .episode()
    .external('ADDED', DB, { deliver: true })
    .episode()
    .write('create', STS, { owner: DB, deliver: true })
    .episode();
}
