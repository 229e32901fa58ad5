/**
 * Liveness oracle: the system must get somewhere. A workload step that times out after the fault
 * (a wait that never came true), a controller that never goes quiet after the workload, a
 * controller that keeps writing the same object long after the workload ended, and one that keeps
 * retrying a write that fails long after the fault is gone (a hot loop: one error it never recovers
 * from), which the reference runs did not do (from the controller trace). A controller that retries
 * with back-off and converges fails a few times at most once the fault is over, and says nothing here.
 */
import type { FailedWriteCount, WriteCount } from '../src/model/controller-activity.js';
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
  for (const { target, refMax } of failingRetries(references, test)) {
    alarms.push({
      oracle: ORACLE,
      check: 'retry-loop',
      object: target.key,
      ...(target.subresource ? { field: target.subresource } : {}),
      reference: [refMax],
      test: target.count,
      message: `the controller kept retrying ${writeTarget(target)} after the fault and the workload were over, failing with ${target.status} ${target.count} time(s), the reference runs at most ${refMax}: it does not recover from the error (a hot loop)`,
    });
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

function failingRetries(references: readonly RunArtifacts[], test: RunArtifacts | undefined): Array<{ target: FailedWriteCount; refMax: number }> {
  return manyMoreThanReferences(test?.controllerActivity?.failedWritesAfterWorkload, references, (r, w) =>
    r.controllerActivity?.failedWritesAfterWorkload?.find((x) => x.key === w.key && x.subresource === w.subresource && x.status === w.status),
  );
}

function endlessWrites(references: readonly RunArtifacts[], test: RunArtifacts | undefined): Array<{ target: WriteCount; refMax: number }> {
  return manyMoreThanReferences(test?.controllerActivity?.writesAfterWorkload, references, (r, w) =>
    r.controllerActivity?.writesAfterWorkload?.find((x) => x.key === w.key && x.subresource === w.subresource),
  );
}

/** Counts of the test run that are many (ENDLESS_WRITES_MIN) and far above (ENDLESS_WRITES_FACTOR) the busiest reference run's. */
function manyMoreThanReferences<W extends WriteCount>(
  counts: readonly W[] | undefined,
  references: readonly RunArtifacts[],
  inReference: (r: RunArtifacts, w: W) => WriteCount | undefined,
): Array<{ target: W; refMax: number }> {
  const out: Array<{ target: W; refMax: number }> = [];
  for (const w of counts ?? []) {
    const refMax = Math.max(0, ...references.map((r) => inReference(r, w)?.count ?? 0));
    if (w.count >= ENDLESS_WRITES_MIN && w.count >= ENDLESS_WRITES_FACTOR * Math.max(refMax, 1)) out.push({ target: w, refMax });
  }
  return out;
}
