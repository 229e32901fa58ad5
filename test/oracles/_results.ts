/** Hand-built plan results for the findings and confirmation tests (oracles/findings.ts, oracles/confirmation.ts). */
import type { Alarm, Divergence, PlanResult, RecoveryRun } from '../../src/model/results.js';

export const deleted: Alarm = {
  oracle: 'update-summary',
  check: 'deleted',
  object: 'StatefulSet/default/mc1-rs0',
  reference: [1],
  test: 2,
  message: 'StatefulSet/default/mc1-rs0 was deleted 2 times; the reference runs deleted it once',
};
export const claimGone: Alarm = {
  oracle: 'end-state',
  check: 'missing',
  object: 'PersistentVolumeClaim/default/data-0',
  reference: [{}],
  test: '<absent>',
  message: 'PersistentVolumeClaim/default/data-0 is missing',
};
/** A recovery in which only rolling the workload's input back healed the end state. */
export const rolledBack: RecoveryRun = {
  runDir: '/recovery/a',
  before: 1,
  attempts: [
    { strategy: 'time', alarms: 1 },
    { strategy: 'restart', alarms: 1 },
    { strategy: 're-apply', alarms: 1 },
    { strategy: 'rollback', alarms: 0 },
  ],
};
/** rabbitmq-operator's refusal of a scale-down, as the reference runs end with it. */
export const refusedScaleDown = ['RabbitmqCluster/default/r: ReconcileSuccess False (UnsupportedOperation: Cluster Scale down not supported)'];
export const deletesSet: Divergence = { kind: 'extra', verb: 'delete', object: 'StatefulSet/default/mc1-rs0' };

/** A bug verdict of `plan`; `undefined` in `extra` leaves a field out (an older result). */
export function result(plan: string, extra: { [K in keyof PlanResult]?: PlanResult[K] | undefined } = {}): PlanResult {
  const r: Record<string, unknown> = {
    plan,
    controller: 'op',
    workload: 'recreate',
    pattern: 'stale-state',
    description: `perturbation of ${plan}`,
    verdict: 'bug',
    injected: true,
    alarms: [deleted],
    durationMs: 1000,
    runDir: `/runs/${plan}`,
    planFile: `/plans/${plan}.yaml`,
    configFile: '/op/kperturb.yaml',
    divergence: deletesSet,
    size: { faults: 1, steps: 7 },
    ...extra,
  };
  for (const k of Object.keys(r)) if (r[k] === undefined) delete r[k];
  return r as unknown as PlanResult;
}
