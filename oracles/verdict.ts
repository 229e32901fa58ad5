/**
 * From a test run's record and the oracles' alarms to a verdict. A run whose fault never fired is
 * never "pass": it tested nothing; neither is a run whose workload failed before the fault.
 */
import type { Alarm, RunRecord, Verdict } from '../src/model/results.js';

export interface VerdictDecision {
  verdict: Verdict;
  alarms: Alarm[];
  error?: string;
}

/** `alarms`: every oracle's alarms for the run (computed only for runs whose faults fired). */
export function decideVerdict(record: RunRecord, alarms: Alarm[]): VerdictDecision {
  if (record.error) return { verdict: 'error', alarms: [], error: record.error };
  if (!record.injected) {
    if (!record.workloadOutcome.ok) {
      return {
        verdict: 'workload-failed',
        alarms: [],
        error: `the workload failed before the fault fired, so nothing was tested: ${record.workloadOutcome.error}`,
      };
    }
    const why = record.notInjected?.length ? record.notInjected.join('; ') : "the plan's trigger never matched during the run";
    return { verdict: 'not-injected', alarms: [], error: `nothing was tested: ${why}` };
  }
  return { verdict: alarms.length > 0 ? 'bug' : 'pass', alarms };
}

/** Two alarms about the same difference (same oracle, check, object and field; same health problem). */
export function alarmSignature(a: Alarm): string {
  const what = a.oracle === 'health' || a.check === 'workload-failed' || a.check === 'workload-timeout' ? String(a.test).replace(/\d+/g, 'N') : '';
  return [a.oracle, a.check ?? '', a.object, a.field ?? '', what].join('|');
}

/**
 * Confirmation (as Acto does): `unperturbed` are the alarms a fresh run without faults raised
 * against the same references. A test alarm that the unperturbed run raised too is about a field
 * that is not deterministic: it is marked flaky. A bug whose alarms are all flaky becomes `flaky`.
 */
export function applyConfirmation(decision: VerdictDecision, unperturbed: readonly Alarm[]): VerdictDecision {
  if (decision.verdict !== 'bug') return decision;
  const nondeterministic = new Set(unperturbed.map(alarmSignature));
  const alarms = decision.alarms.map((a) => (nondeterministic.has(alarmSignature(a)) ? { ...a, flaky: true } : a));
  return { ...decision, verdict: alarms.every((a) => a.flaky) ? 'flaky' : 'bug', alarms };
}
