/** Hand-built controller activity and records for the liveness and health oracle tests. */
import type { ControllerActivity } from '../../src/model/controller-activity.js';
import type { RunArtifacts, RunRecord } from '../../src/model/results.js';
import { runWith } from './_runs.js';

export function record(extra: Partial<RunRecord> = {}): RunRecord {
  return {
    format: 'kperturb.dev/run/v1',
    controller: 'c',
    workload: 'w',
    startedAt: '2024-01-01T00:00:00Z',
    durationMs: 1000,
    workloadOutcome: { ok: true },
    settled: true,
    controllerExits: [
      { incarnation: 1, code: null, signal: 'SIGKILL', expected: true },
      { incarnation: 2, code: 0, signal: null, expected: true },
    ],
    injected: true,
    ...extra,
  };
}

export function runWithHealth(extra: Partial<RunArtifacts> = {}): RunArtifacts {
  return {
    ...runWith([]),
    controllerLog: '',
    controllerExits: record().controllerExits,
    controllerActivity: { apiErrors: [], writesAfterWorkload: [] },
    ...extra,
  };
}

export function activity(a: Partial<ControllerActivity>): ControllerActivity {
  return { apiErrors: [], writesAfterWorkload: [], ...a };
}
