/**
 * Liveness oracle: the system must get somewhere. A workload step that times out after the fault
 * (a wait that never came true), a controller that never goes quiet after the workload, and a
 * controller that keeps writing the same object long after the workload ended, which the reference
 * runs did not do (from the controller trace).
 */
import type { WriteCount } from '../src/model/controller-activity.js';
import type { Alarm, RunArtifacts, RunRecord } from '../src/model/results.js';

const ORACLE = 'liveness';

/** Fewer writes than this after the workload are never "endless". */
export const ENDLESS_WRITES_MIN = 10;
/** ...and the test run must write at least this many times as often as the busiest reference run. */
export const ENDLESS_WRITES_FACTOR = 3;

function writeTarget(w: WriteCount): string {
  return w.subresource ? `${w.key} ${w.subresource}` : w.key;
}

export function livenessAlarms(record: RunRecord, references: readonly RunArtifacts[] = [], test?: RunArtifacts): Alarm[] {
  const alarms: Alarm[] = [];
  const outcome = record.workloadOutcome;
  if (!outcome.ok && outcome.error) {
    const timeout = /timed out|timeout/i.test(outcome.error);
    alarms.push({
      oracle: ORACLE,
      check: timeout ? 'workload-timeout' : 'workload-failed',
      object: '(workload)',
      reference: ['completed'],
      test: outcome.error,
      message: `the workload did not complete after the fault: ${outcome.error}`,
    });
  }

  const endless = endlessWrites(references, test);
  // A controller that never goes quiet in the reference runs either (it polls) says nothing here.
  if (!record.settled && outcome.ok && !references.some((r) => r.settled === false)) {
    const busiest = test?.controllerActivity?.writesAfterWorkload?.[0];
    const detail = busiest ? `; it wrote ${writeTarget(busiest)} ${busiest.count} time(s) after the workload ended` : '';
    alarms.push({
      oracle: ORACLE,
      check: 'not-quiet',
      object: busiest?.key ?? '(controller)',
      reference: ['quiet'],
      test: 'still busy',
      message: `the controller never became quiet after the workload ended (endless writes or watch churn)${detail}`,
    });
    // The alarm above names the busiest object already.
    if (busiest) endless.splice(0, endless.length, ...endless.filter((e) => e.target.key !== busiest.key));
  }
  for (const { target, refMax } of endless) {
    alarms.push({
      oracle: ORACLE,
      check: 'endless-writes',
      object: target.key,
      ...(target.subresource ? { field: target.subresource } : {}),
      reference: [refMax],
      test: target.count,
      message: `the controller kept writing ${writeTarget(target)} after the workload ended: ${target.count} write(s), the reference runs at most ${refMax}`,
    });
  }
  return alarms;
}

function endlessWrites(references: readonly RunArtifacts[], test: RunArtifacts | undefined): Array<{ target: WriteCount; refMax: number }> {
  const writes = test?.controllerActivity?.writesAfterWorkload;
  if (!writes) return [];
  const out: Array<{ target: WriteCount; refMax: number }> = [];
  for (const w of writes) {
    const refMax = Math.max(
      0,
      ...references.map((r) => r.controllerActivity?.writesAfterWorkload?.find((x) => x.key === w.key && x.subresource === w.subresource)?.count ?? 0),
    );
    if (w.count >= ENDLESS_WRITES_MIN && w.count >= ENDLESS_WRITES_FACTOR * Math.max(refMax, 1)) out.push({ target: w, refMax });
  }
  return out;
}
