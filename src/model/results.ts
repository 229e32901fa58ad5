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
import type { ControllerActivity } from './controller-activity.js';

export const RUN_FORMAT = 'kperturb.dev/run/v1';
export const END_STATE_FORMAT = 'kperturb.dev/end-state/v1';
export const RESULTS_FORMAT = 'kperturb.dev/results/v1';

/**
 * `strict`: faults stay within the Kubernetes API contract; `lenient` (the default): they may go
 * beyond it where a client needs that (a stale view answering a consistent read), and the run says so.
 */
export type ContractMode = 'strict' | 'lenient';
export const CONTRACT_MODES: readonly ContractMode[] = ['strict', 'lenient'];

export interface RunRecord {
  format: typeof RUN_FORMAT;
  controller: string;
  workload: string;
  /** Absent for reference runs. */
  plan?: string | undefined;
  startedAt: string;
  durationMs: number;
  workloadOutcome: { ok: boolean; failedStep?: number; error?: string };
  /** For test runs: did every fault of the plan fire? */
  injected?: boolean | undefined;
  /** For each of the plan's faults that did not take effect, why not (absent when all did). */
  notInjected?: string[] | undefined;
  /**
   * Why what the faults served went beyond the Kubernetes API contract (absent when it stayed
   * within; see docs/fidelity.md). A bug found so may be an artifact of the fault.
   */
  beyondContract?: string[] | undefined;
  /** Index of the workload step running when the first fault fired (undefined if none fired). */
  injectedDuringStep?: number | undefined;
  /** Did the controller become quiet after the workload within the settle timeout? */
  settled: boolean;
  /** The quiet window the run waited for at the controller's start and to settle, in ms (settle.quietMs, or learned). */
  quietMs?: number | undefined;
  /**
   * Once settled, the controller had let changes of a custom resource's spec go by without a request,
   * and the run waited for its next one (RunOptions.awaitAnswer): how long it had been silent when
   * that request came, or when the wait ended at the settle timeout (`answered: false`).
   */
  awaitedAnswer?: { silentMs: number; answered: boolean } | undefined;
  controllerExits: Array<{ incarnation: number; code: number | null; signal: string | null; expected: boolean }>;
  /** How many of the controller's restarts a warm spare took (absent: none). */
  restartsFromSpare?: number | undefined;
  /** The controller was a standby (src/coordinator/standby.ts), started this long before the run started it, in ms. */
  controllerStartedAheadMs?: number | undefined;
  /** Set when the run could not be carried out at all (setup failure). */
  error?: string | undefined;
  /** Where the run's wall time went, in ms (see RUN_PHASES; `npm run bench:campaign` summarises them). */
  phasesMs?: Partial<Record<RunPhase, number>> | undefined;
}

/**
 * The phases of a run, in order: start the cluster; apply the setup and wait until its CRDs are
 * served; start the proxy (and the stubs, the controller's process object, the faults); wait for the
 * fixed ports another run holds (`portWait`: a controller's `ports`, an application stub's, taken by
 * another plan or campaign on the machine; time the run spent idle, not working); start the
 * controller and wait until it is quiet; run the workload's steps; settle (wait until quiet, restarts
 * and stale-view releases included, which `fault` also counts apart); read the end state; tear
 * everything down.
 */
export const RUN_PHASES = ['cluster', 'setup', 'proxy', 'portWait', 'controllerStart', 'workload', 'settle', 'fault', 'endState', 'teardown'] as const;
export type RunPhase = (typeof RUN_PHASES)[number];

export interface EndState {
  format: typeof END_STATE_FORMAT;
  objects: Record<ObjectKey, KubeObject>;
}

/**
 * What the oracles need of a run: pure data, no files. The optional inputs feed the controller-health
 * and liveness oracles; a run without them is simply not judged on them.
 */
export interface RunArtifacts {
  endState: Record<ObjectKey, KubeObject>;
  clusterChanges: ClusterChangeEvent[];
  /** controller.log: every incarnation's stdout and stderr, lines prefixed `[incarnation] `. */
  controllerLog?: string;
  /** From run.json: how each controller incarnation ended. */
  controllerExits?: RunRecord['controllerExits'];
  /** From run.json: did the controller go quiet after the workload? */
  settled?: boolean;
  /** What the controller trace says about API errors and writes after the workload (see controller-activity.ts). */
  controllerActivity?: ControllerActivity;
}

/** `health`: panics, uncaught exceptions and unexpected exits of the controller, API errors it got. */
export type OracleName = 'end-state' | 'update-summary' | 'liveness' | 'health';
export const ORACLE_NAMES: readonly OracleName[] = ['end-state', 'update-summary', 'liveness', 'health'];

/**
 * What exactly an oracle found, one word per kind of difference (stable across versions, for
 * grouping, confirmation and CI filters):
 *   end-state:      missing (in the references, not in the test run), unexpected (the reverse),
 *                   value (a field differs), generated-count (objects with a generated name),
 *                   duplicate-children (two generated children of one owner where references have one)
 *   update-summary: created, deleted (count of ADDED / DELETED), updated (changes of a chosen field)
 *   liveness:       workload-timeout, workload-failed, not-quiet, endless-writes, retry-loop (a failing
 *                   write retried without end after the fault)
 *   health:         crash-log (panic, uncaught exception, stack trace), unexpected-exit, api-error
 */
export type AlarmCheck =
  | 'missing'
  | 'unexpected'
  | 'value'
  | 'generated-count'
  | 'duplicate-children'
  | 'created'
  | 'deleted'
  | 'updated'
  | 'workload-timeout'
  | 'workload-failed'
  | 'not-quiet'
  | 'endless-writes'
  | 'retry-loop'
  | 'crash-log'
  | 'unexpected-exit'
  | 'api-error';

export interface Alarm {
  oracle: OracleName;
  object: ObjectKey;
  /** Dotted field path inside the object (absent when the whole object differs, e.g. missing). */
  field?: string;
  /** The value(s) the reference runs ended with (one entry per distinct value). */
  reference: unknown[];
  test: unknown;
  message: string;
  /** Absent in results written before checks existed. */
  check?: AlarmCheck;
  /** Set by confirmation (`test --confirm`): a fresh unperturbed run differed from the references here too. */
  flaky?: boolean;
}

/**
 * - `bug`: the fault fired and an oracle alarmed (with `--confirm`: at least one alarm held up);
 * - `flaky`: the fault fired and every alarm also showed in an unperturbed confirmation run;
 * - `pass`: the fault fired and nothing differs;
 * - `not-injected`: the plan's trigger never matched, so nothing was tested;
 * - `workload-failed`: the workload failed before the fault fired, so nothing was tested;
 * - `error`: the run could not be carried out.
 */
export type Verdict = 'pass' | 'bug' | 'flaky' | 'not-injected' | 'workload-failed' | 'error';
export const VERDICTS: readonly Verdict[] = ['bug', 'flaky', 'pass', 'not-injected', 'workload-failed', 'error'];

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
  /** The plan file and the config it was run with: `kperturb test <planFile> -c <configFile>` runs it again (absent in older results). */
  planFile?: string;
  configFile?: string;
  error?: string;
  /** The reference runs the test run was compared with (absent in older results). */
  referenceRunDirs?: string[];
  /** Set when the run was confirmed (`test --confirm`): the unperturbed re-run used. */
  confirmationRunDir?: string;
  /** From run.json: the fault went beyond the API contract, and how (absent: it stayed within). */
  beyondContract?: string[];
  /**
   * The controller's refusals of the workload's input that every reference run ends with (a
   * condition `False` saying the input is unsupported or invalid; oracles/input-refusal.ts). Absent
   * when there are none.
   */
  refusedInput?: string[];
  /**
   * What the verdict was judged from, so that a later `test` keeps it only while both are unchanged
   * (absent in older results, which are run again): the SHA-256 of the plan (as kperturb writes it)
   * and the start times of the reference runs; `contract: strict` when run so (`test --contract`).
   */
  inputs?: { planSha256: string; referenceRunsStartedAt: string[]; contract?: 'strict' };
  /** Where the test run first departed from the reference runs (oracles/findings.ts; absent for passes and older results). */
  divergence?: Divergence;
  /** How big the plan is, for picking a finding's shortest reproducer: its faults and its workload's steps (absent in older results). */
  size?: { faults: number; steps: number };
  /** Set by `kperturb explore` for a run of an input it generated (used to tell a misoperation, oracles/findings.ts). */
  explored?: true;
  /**
   * Set on the shortest reproducer of a finding that was re-run to confirm it (`kperturb test
   * --confirm-runs K`; oracles/confirmation.ts decides from it): what each fresh re-run showed, and
   * the fault-free run of its workload.
   */
  reruns?: Reruns;
  /** Set on the shortest reproducer of a confirmed finding that recovery was tried on (src/campaign/recovery.ts, oracles/recovery.ts). */
  recovery?: RecoveryRun;
}

/**
 * Arsc's recovery strategies, in the order they are tried on a run that showed the bug: nothing but
 * time (settle again, longer), restarting the controller, re-applying the workload's last custom
 * resource as applied, rolling back to the one before it.
 */
export const RECOVERY_STRATEGIES = ['time', 'restart', 're-apply', 'rollback'] as const;
export type RecoveryStrategy = (typeof RECOVERY_STRATEGIES)[number];
/** What brought a finding's run back to the reference end state: the first strategy that did, or `none` (state that needs a human). */
export type Recovery = RecoveryStrategy | 'none';

/** One recovery attempt on a run that showed a finding, and the end-state alarms after it. */
export interface RecoveryAttempt {
  strategy: RecoveryStrategy;
  /** The end-state alarms left after it (those the fault-free run also shows are not counted). */
  alarms: number;
  /** Why it was not tried (no earlier custom resource to roll back to...). */
  skipped?: string;
}

/** The run recovery was tried on (the finding's reproducer run once more), the end-state alarms before, and each attempt in order. */
export interface RecoveryRun {
  runDir: string;
  /** End-state alarms once the run settled, before any attempt (0: the controller recovered on its own, or the run did not show the finding). */
  before: number;
  /**
   * With `before` 0: whether the run showed the finding at all (judged as a re-run is,
   * oracles/confirmation.ts `showsFinding`). A run that did not (a fault that missed its moment, a
   * bug that shows sometimes) says nothing about recovery. Absent in results stored before it was kept.
   */
  shown?: boolean;
  attempts: RecoveryAttempt[];
  error?: string;
}

/** One fresh re-run of a finding's shortest reproducer: where it ran, its verdict, and what it showed. */
export interface Rerun {
  runDir: string;
  verdict: Verdict;
  /** Its finding signature (oracles/findings.ts `findingSignature`), when its verdict is bug or flaky. */
  signature?: FindingSignature;
  /** The objects its state oracles (end state, update summary) alarmed on, not flaky (absent in older results). */
  stateAlarmObjects?: ObjectKey[];
}

/** The re-runs that confirm (or not) a finding: the reproducer's K re-runs and the fault-free run of its workload. */
export interface Reruns {
  runs: Rerun[];
  /** The workload run once more without faults (the confirmation run): how many alarms, and their signature. */
  faultFree?: { runDir: string; alarms: number; signature?: FindingSignature; error?: string };
}

/**
 * The first write in which a test run departed from every reference run (oracles/findings.ts,
 * `firstDivergence`): `extra` when the test run made a write no reference run made (a delete, a
 * create, a change of an alarmed field to a value no reference run had), `missing` when it never
 * made a write the reference runs made. `object` has generated names folded (`Kind/ns/<prefix>*`,
 * as the oracles name them).
 */
export interface Divergence {
  kind: 'extra' | 'missing';
  verb: 'create' | 'update' | 'delete';
  object: ObjectKey;
  field?: string;
  /**
   * An extra create of an object whose controller owner (ownerReferences, by uid) no longer existed
   * when it was created (deleted, or deleted and created again): the controller acted for an owner
   * it should have known gone. Findings group such creates by this owner, whichever of its children
   * the controller re-created first.
   */
  ownerGone?: ObjectKey;
  /**
   * An extra delete made with propagationPolicy Orphan or Foreground (the finalizer it gave the
   * object): another call than a delete that takes the dependents along in the background, as a
   * StatefulSet deleted to be made again with a new volume size is another bug than one deleted
   * with its pods.
   */
  propagation?: 'Orphan' | 'Foreground';
}

/** A plan a campaign was given but did not run (it was interrupted first): reports list it as such. */
export interface NotRunPlan {
  controller: string;
  workload: string;
  plan: string;
  pattern: string;
  description: string;
}

export interface ResultsFile {
  format: typeof RESULTS_FORMAT;
  results: PlanResult[];
  /** Written after every plan: false while the campaign is still running (or was interrupted). */
  complete?: boolean;
  /** How many plans the campaign was given. */
  planned?: number;
  /** While the campaign is unfinished (`complete: false`): the plans given to it that have no result yet. */
  notRun?: NotRunPlan[];
  /** Set when the plans were one shard's share (`test --shard I/N`, 0-based): `report` merges the shards. */
  shard?: { index: number; count: number };
  /** Workloads that were planned but tested nothing (oracles/findings.ts, `untestedWorkloads`); absent when there are none. */
  untested?: UntestedWorkload[];
  /** The workloads of the controller that were planned, with their plan counts (for `untested` after shards merge). */
  workloads?: PlannedWorkload[];
  /** The findings of the results (oracles/findings.ts, `groupFindings`), written with them for scripts. */
  findings?: Finding[];
}

/**
 * What a finding is (oracles/findings.ts `classifyFinding`; docs/findings.md):
 * - `bug`: a fault within the API contract made the controller go wrong;
 * - `beyond-contract`: only faults beyond the API contract (docs/fidelity.md) showed it;
 * - `flaky`: every alarm also showed without the fault;
 * - `rejected-input`: the API server refused a workload step (the system said no, as it may);
 * - `misoperation`: an input the API server accepted that the controller cannot honour (from explore;
 *   or work a refused input held up, healed by rolling the input back);
 * - `environment`: the embedded cluster or a stub answered what a real cluster would not.
 */
export type FindingClass = 'bug' | 'beyond-contract' | 'flaky' | 'rejected-input' | 'misoperation' | 'environment' | 'transient';
export const FINDING_CLASSES: readonly FindingClass[] = ['bug', 'beyond-contract', 'flaky', 'rejected-input', 'misoperation', 'environment', 'transient'];
/** The classes that are a bug found: they fail a CI build (JUnit), count in the demo's findings and make `test`, `demo` and `report` exit 1. */
export const BUG_FOUND_CLASSES: ReadonlySet<FindingClass> = new Set(['bug', 'beyond-contract']);

/** What the runs of a finding show (oracles/findings.ts, `findingSignature`). */
export interface FindingSignature {
  oracle: OracleName;
  divergence?: Divergence;
  /** Without a divergence: the check and object of the first liveness or health alarm. */
  check?: AlarmCheck;
  object?: ObjectKey;
  /** The controller's last new error (numbers folded). */
  lastError?: string;
}

/** One distinct bug (or flaky difference...) and every plan that showed it. */
export interface Finding {
  class: FindingClass;
  /** Why it has that class, in a sentence. */
  why: string;
  controller: string;
  /** The signature in words. */
  summary: string;
  signature: FindingSignature;
  /** The other first divergences of plans that showed the same alarms (oracles/findings.ts, `symptomKey`). */
  variants?: FindingSignature[];
  plans: Array<Pick<PlanResult, 'workload' | 'plan' | 'pattern' | 'verdict' | 'description'> & { beyondContract?: true }>;
  /** The plan with the fewest faults and workload steps that showed it. */
  reproducer: Pick<PlanResult, 'workload' | 'plan' | 'description' | 'runDir' | 'size' | 'planFile'>;
  /** The command that runs the reproducer again (absent when its plan file is not known). */
  command?: string;
  /** The reproducer's alarms. */
  alarms: Alarm[];
  /** How the re-runs of its reproducer went (oracles/confirmation.ts); absent when it was not re-run. */
  confirmation?: FindingConfirmation;
  /** What recovered its run (oracles/recovery.ts): `time`, `restart`, `re-apply`, `rollback` or `none`; absent when not tried. */
  recovery?: Recovery;
  /** Where recovery was tried, and each attempt's end-state alarms. */
  recoveryRun?: RecoveryRun;
}

/** Re-runs of a bug finding's shortest reproducer when `kperturb test` and `kperturb demo` are not told (`--confirm-runs`). */
export const DEFAULT_CONFIRM_RUNS = 3;

/** A finding's confirmation: how many of its reproducer's re-runs failed again with its signature, and the fault-free run. */
export interface FindingConfirmation {
  failedAgain: number;
  runs: number;
  runDirs: string[];
  faultFree?: { runDir: string; passed: boolean };
  /** Failed again in every re-run, and the fault-free run passed. */
  confirmed: boolean;
}

/** What a campaign knows of a planned workload: how many plans the planner kept, and why none if none. */
export interface PlannedWorkload {
  controller: string;
  workload: string;
  plans: number;
  /** The planner's stage that kept no candidate of any pattern, when it was the same for all (e.g. `deterministic`). */
  emptiedBy?: string;
  referenceRuns?: number;
}

/**
 * A workload of a campaign that tested nothing: every candidate plan was pruned (`no-plans`: its
 * reference runs disagreed, so the determinism stage kept none), or every plan that ran ended
 * without its fault firing (`not-injected`) or with its workload failing first. Never reported clean.
 */
export interface UntestedWorkload {
  controller: string;
  workload: string;
  reason: 'no-plans' | 'not-injected';
  /** What happened, in a sentence. */
  detail: string;
  /** What to do about it, in a sentence. */
  advice: string;
}

/** Sentinel meaning "the object does not exist" in alarms. */
export const ABSENT = '<absent>';
