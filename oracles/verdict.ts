/**
 * From a test run's record and the oracles' alarms to a verdict. A run whose fault never fired is
 * never "pass": it tested nothing.
 */
import type { Alarm, RunRecord, Verdict } from '../src/model/results.js';

export interface VerdictDecision {
  verdict: Verdict;
  alarms: Alarm[];
  error?: string;
}

/** Liveness alarms from the run itself: a workload that did not complete, a controller that never went quiet. */
export function livenessAlarms(record: RunRecord): Alarm[] {
  const alarms: Alarm[] = [];
  if (!record.workloadOutcome.ok && record.workloadOutcome.error) {
    alarms.push({
      oracle: 'liveness',
      object: '(workload)',
      reference: ['completed'],
      test: record.workloadOutcome.error,
      message: `the workload did not complete after the fault: ${record.workloadOutcome.error}`,
    });
  }
  if (!record.settled && record.workloadOutcome.ok) {
    alarms.push({
      oracle: 'liveness',
      object: '(controller)',
      reference: ['quiet'],
      test: 'still busy',
      message: 'the controller never became quiet after the workload ended (endless writes or watch churn)',
    });
  }
  return alarms;
}

export function decideVerdict(record: RunRecord, stateAlarms: Alarm[]): VerdictDecision {
  if (record.error) return { verdict: 'error', alarms: [], error: record.error };
  if (!record.injected) {
    if (!record.workloadOutcome.ok) {
      return { verdict: 'error', alarms: [], error: `the workload failed before the fault fired: ${record.workloadOutcome.error}` };
    }
    return { verdict: 'not-injected', alarms: [] };
  }
  const alarms = [...livenessAlarms(record), ...stateAlarms];
  return { verdict: alarms.length > 0 ? 'bug' : 'pass', alarms };
}
