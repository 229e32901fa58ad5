/**
 * The JSON report (`kperturb report --json`): the findings first (one per distinct bug,
 * oracles/findings.ts) and the workloads that tested nothing, then counts per verdict, every alarm
 * flattened with its plan's description (for scripts), the groups by root difference, and the plan
 * results as read.
 */
import type { Alarm, Finding, NotRunPlan, PlanResult, UntestedWorkload } from '../model/results.js';
import { countBeyondContract, countVerdicts, groupAlarms, type VerdictCounts } from './groups.js';
import { groupFindings } from '../../oracles/findings.js';

export const REPORT_FORMAT = 'kperturb.dev/report/v1';

export interface ReportAlarm extends Alarm {
  controller: string;
  workload: string;
  plan: string;
  /** The plan's one-line description of the perturbation. */
  description: string;
  /** The plan's fault went beyond the API contract (PlanResult.beyondContract says how). */
  beyondContract?: true;
}

export interface JsonReport {
  format: typeof REPORT_FORMAT;
  sources: string[];
  notes: string[];
  /** One per distinct bug (or flaky difference...), bugs first: what the report leads with. */
  findings: Finding[];
  /** Workloads that tested nothing: not clean (absent when there are none). */
  untested?: UntestedWorkload[];
  /** `beyondContract`: per verdict, how many of those plans had a fault beyond the API contract; `findings`: how many there are. */
  summary: { plans: number; findings: number; beyondContract: Partial<VerdictCounts> } & VerdictCounts;
  alarms: ReportAlarm[];
  groups: Array<{
    oracle: string;
    check?: string;
    object: string;
    field?: string;
    reference: unknown[];
    test: unknown;
    message: string;
    count: number;
    plans: string[];
  }>;
  results: PlanResult[];
  /** Plans an interrupted campaign did not run (absent when there are none). */
  notRun?: NotRunPlan[];
}

export function buildJsonReport(
  results: PlanResult[],
  sources: string[] = [],
  notes: string[] = [],
  notRun: NotRunPlan[] = [],
  untested: UntestedWorkload[] = [],
): JsonReport {
  const findings = groupFindings(results);
  return {
    format: REPORT_FORMAT,
    sources,
    notes,
    findings,
    ...(untested.length > 0 ? { untested } : {}),
    summary: { plans: results.length, findings: findings.length, ...countVerdicts(results), beyondContract: countBeyondContract(results) },
    alarms: results.flatMap((r) =>
      r.alarms.map((a) => ({
        controller: r.controller,
        workload: r.workload,
        plan: r.plan,
        description: r.description,
        ...a,
        ...(r.beyondContract?.length ? { beyondContract: true as const } : {}),
      })),
    ),
    groups: groupAlarms(results).map((g) => ({
      oracle: g.alarm.oracle,
      ...(g.alarm.check ? { check: g.alarm.check } : {}),
      object: g.alarm.object,
      ...(g.alarm.field !== undefined ? { field: g.alarm.field } : {}),
      reference: g.alarm.reference,
      test: g.alarm.test,
      message: g.alarm.message,
      count: g.plans.length,
      plans: g.plans.map((p) => `${p.controller}/${p.workload}/${p.plan}`),
    })),
    results,
    ...(notRun.length > 0 ? { notRun } : {}),
  };
}
