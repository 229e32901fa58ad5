/**
 * What a run leaves behind and what the oracles conclude. One definition shared by the coordinator
 * (which writes these files), the oracles (which read run artifacts) and the reports.
 *
 * A run directory holds:
 *   run.json              RunRecord
 *   controller.trace.jsonl  the controller trace (proxy)
 *   cluster.trace.jsonl     the cluster trace (recorder)
 *   end-state.json        EndState: every object at the end of the run
 *   controller.log        the controller's stdout and stderr
 */
import type { KubeObject, ObjectKey } from './object-key.js';
import type { Pattern } from './plan.js';
import type { ClusterChangeEvent } from './trace.js';

export const RUN_FORMAT = 'kperturb.dev/run/v1';
export const END_STATE_FORMAT = 'kperturb.dev/end-state/v1';
export const RESULTS_FORMAT = 'kperturb.dev/results/v1';

export interface RunRecord {
  format: typeof RUN_FORMAT;
  controller: string;
  workload: string;
  /** Absent for reference runs. */
  plan?: string;
  startedAt: string;
  durationMs: number;
  workloadOutcome: { ok: boolean; failedStep?: number; error?: string };
  /** For test runs: did every fault of the plan fire? */
  injected?: boolean;
  /** Index of the workload step running when the first fault fired (undefined if none fired). */
  injectedDuringStep?: number;
  /** Did the controller become quiet after the workload within the settle timeout? */
  settled: boolean;
  controllerExits: Array<{ incarnation: number; code: number | null; signal: string | null; expected: boolean }>;
  /** Set when the run could not be carried out at all (setup failure). */
  error?: string;
}

export interface EndState {
  format: typeof END_STATE_FORMAT;
  objects: Record<ObjectKey, KubeObject>;
}

/** What the oracles need of a run: pure data, no files. */
export interface RunArtifacts {
  endState: Record<ObjectKey, KubeObject>;
  clusterChanges: ClusterChangeEvent[];
}

export type OracleName = 'end-state' | 'update-summary' | 'liveness';

export interface Alarm {
  oracle: OracleName;
  object: ObjectKey;
  /** Dotted field path inside the object (absent when the whole object differs, e.g. missing). */
  field?: string;
  /** The value(s) the reference runs ended with (one entry per distinct value). */
  reference: unknown[];
  test: unknown;
  message: string;
}

export type Verdict = 'pass' | 'bug' | 'not-injected' | 'error';

export interface PlanResult {
  plan: string;
  controller: string;
  workload: string;
  pattern: Pattern;
  description: string;
  verdict: Verdict;
  injected: boolean;
  alarms: Alarm[];
  durationMs: number;
  runDir: string;
  error?: string;
}

export interface ResultsFile {
  format: typeof RESULTS_FORMAT;
  results: PlanResult[];
}

/** Sentinel meaning "the object does not exist" in alarms. */
export const ABSENT = '<absent>';
