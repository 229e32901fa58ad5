/**
 * Alarms that come from the same root difference across plans: the same oracle and check on the
 * same object and field, with the same reference and test values (generated uids aside). A bug that
 * every plan after some point trips over shows up once, with the plans that found it.
 */
import type { Alarm, PlanResult } from '../model/results.js';
import { canonicalJson } from '../../oracles/semantic.js';
import { alarmSignature } from '../../oracles/verdict.js';

export interface AlarmGroup {
  alarm: Alarm;
  /** The plans whose runs raised it (each once). */
  plans: PlanResult[];
  /** Raised in some plans only as flaky (confirmation showed the field is not deterministic). */
  flakyIn: number;
}

/** UUIDs in values (a bound PVC's `spec.volumeName: pvc-<uid>`, owner uids) differ in every run of the same difference. */
const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g;
const foldGenerated = (json: string) => json.replace(UUID, '<uid>');

export function rootDifference(a: Alarm): string {
  // How many writes or errors a liveness or health alarm counted varies from plan to plan; the problem does not.
  const values = a.oracle === 'liveness' || a.oracle === 'health' ? [] : [foldGenerated(canonicalJson(a.reference)), foldGenerated(canonicalJson(a.test))];
  const what = a.check ? '' : a.message;
  return [a.oracle, a.check ?? '', a.object, a.field ?? '', ...values, a.oracle === 'health' ? alarmSignature(a) : what].join('\u0000');
}

/** Groups the alarms of every plan judged `bug` or `flaky`; most plans first. */
export function groupAlarms(results: readonly PlanResult[]): AlarmGroup[] {
  const groups = new Map<string, AlarmGroup>();
  for (const r of results) {
    if (r.verdict !== 'bug' && r.verdict !== 'flaky') continue;
    for (const a of r.alarms) {
      const key = rootDifference(a);
      const g = groups.get(key) ?? { alarm: a, plans: [], flakyIn: 0 };
      if (!g.plans.includes(r)) g.plans.push(r);
      if (a.flaky) g.flakyIn++;
      groups.set(key, g);
    }
  }
  return [...groups.values()].sort(
    (a, b) => b.plans.length - a.plans.length || (a.alarm.object < b.alarm.object ? -1 : a.alarm.object > b.alarm.object ? 1 : 0),
  );
}

export type VerdictCounts = Record<PlanResult['verdict'], number>;

export function countVerdicts(results: readonly PlanResult[]): VerdictCounts {
  const counts: VerdictCounts = { bug: 0, flaky: 0, pass: 0, 'not-injected': 0, 'workload-failed': 0, error: 0 };
  for (const r of results) counts[r.verdict]++;
  return counts;
}

const VERDICT_WORDS: Record<PlanResult['verdict'], [string, string]> = {
  bug: ['found a bug', 'found bugs'],
  flaky: ['flaky', 'flaky'],
  pass: ['passed', 'passed'],
  'not-injected': ['not injected', 'not injected'],
  'workload-failed': ['workload failed before the fault', 'workload failed before the fault'],
  error: ['error', 'errors'],
};

/** What a report shows next to a verdict whose fault went beyond the API contract. */
export const BEYOND_CONTRACT = 'beyond the API contract';

/** How many plans of each verdict had a fault that went beyond the API contract (PlanResult.beyondContract). */
export function countBeyondContract(results: readonly PlanResult[]): Partial<VerdictCounts> {
  const out: Partial<VerdictCounts> = {};
  for (const r of results) if (r.beyondContract?.length) out[r.verdict] = (out[r.verdict] ?? 0) + 1;
  return out;
}

/** "10 plans: 2 found bugs (1 beyond the API contract), 8 passed" */
export function summaryLine(results: readonly PlanResult[]): string {
  const counts = countVerdicts(results);
  const beyond = countBeyondContract(results);
  const parts = (Object.keys(VERDICT_WORDS) as Array<PlanResult['verdict']>)
    .filter((v) => counts[v] > 0)
    .map(
      (v) =>
        `${counts[v]} ${VERDICT_WORDS[v][counts[v] === 1 ? 0 : 1]}${beyond[v] && (v === 'bug' || v === 'flaky') ? ` (${beyond[v]} ${BEYOND_CONTRACT})` : ''}`,
    );
  return `${results.length} plan${results.length === 1 ? '' : 's'}${parts.length ? `: ${parts.join(', ')}` : ''}`;
}
