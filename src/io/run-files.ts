/**
 * The run directory's format: the one place its file names are spelled. The coordinator writes a
 * run's files (src/coordinator/run.ts), the campaign adds the verdict and results.json
 * (src/campaign/campaign.ts), and the reports read them back (src/io/run-dir.ts,
^ * results-file.ts). What each file holds is in src/model/results.ts and trace.ts.
 */
export const RUN_FILES = {
  /** RunRecord: outcome, faults, phases. */
  record: 'run.json',
  /** EndState: every object at the end of the run. */
  endState: 'end-state.json',
  /** What the controller sent and was shown (JSON lines). */
  controllerTrace: 'controller.trace.jsonl',
  /** What the cluster did, from kperturb's own watch (JSON lines). */
  clusterTrace: 'cluster.trace.jsonl',
  /** Every controller incarnation's output. */
  controllerLog: 'controller.log',
  /** The kubeconfig the controller was given (the proxy's). */
  controllerKubeconfig: 'controller.kubeconfig',
  /** The kubeconfig of a warm spare controller (through the proxy's spare door), for runs that restart it. */
  spareKubeconfig: 'controller-spare.kubeconfig',
  /** The embedded cluster's simulated controllers (scheduler, kubelets, garbage collector ...): what they did and what failed. */
  clusterLog: 'cluster.log',
  /** ClusterRunRecord: which cluster the run used and what isolation cost. */
  clusterRecord: 'cluster.json',
  /** PlanResult of a test run (written last: a run directory with it is complete). */
  verdict: 'verdict.json',
} as const;

/** A controller's campaign results, beside its learn/, plans/ and test/ directories. */
export const RESULTS_FILE = 'results.json';
