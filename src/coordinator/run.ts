/**
 * One run of one workload: a cluster (a fresh embedded one by default; see ClusterChoice), the proxy
 * in front of it, the cluster recorder, the controller process, the workload, and (for test runs)
 * the plan's faults. Leaves a run directory (see src/model/results.ts) and returns what the oracles
 * need.
 *
 * The run is parts (./run-parts.ts), started in order by a run manager (./run-manager.ts) that times
 * the phases, honours the abort signal and stops the parts in reverse; this file wires the parts and
 * drives the phases that use them: the controller's start, the workload, settling, the end state.
 */
import { mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { RUN_FILES } from '../io/run-files.js';
import type { ControllerUnderTest, Workload, WorkloadStep } from '../config/config.js';
import type { SerializeDeliveryOptions } from '../../proxy/index.js';
import { waitOutCrdCreateDelay } from '../realcluster/index.js';
import { redactSecretObjects } from '../io/trace-io.js';
import type { TestPlan } from '../model/plan.js';
import { END_STATE_FORMAT, type ContractMode, type EndState, type RunArtifacts, type RunRecord } from '../model/results.js';
import type { ClusterChangeEvent } from '../model/trace.js';
import { InterruptedError } from '../model/errors.js';
import { writeFileAtomic } from '../io/atomic-files.js';
import { writePrivateFile } from '../io/private-file.js';
import type { ControllerStandbys } from './standby.js';
import { restartController } from './faults.js';
import { runWorkload, type WorkloadOutcome } from '../workload/runner.js';
import { CLUSTER_RECORD_FILE, clusterProvider, type ClusterChoice } from './cluster-provider.js';
import { RunManager } from './run-manager.js';
import {
  ClusterPart,
  WebhookCertPart,
  CONTROLLER_TLS,
  ControllerPart,
  FaultsPart,
  HostsPart,
  PortLocksPart,
  ProxyPart,
  RecorderPart,
  RunContext,
  SetupPart,
  StandbyPart,
  StubsPart,
} from './run-parts.js';
import { Settle, STARTUP_TIMEOUT_MS } from './settle.js';

export { CLUSTER_RECORD_FILE, type ClusterChoice, type ClusterRunRecord } from './cluster-provider.js';
export { CONTROLLER_TLS } from './run-parts.js';

export interface RunOptions {
  config: ControllerUnderTest;
  workload: Workload;
  runDir: string;
  plan?: TestPlan;
  log?: (line: string) => void;
  /**
   * Causality learning for reference runs: the proxy delivers watch events one at a time and waits
   * for the controller to be quiet after each (see proxy/serialize.ts); episodes go into the trace.
   */
  serializeDelivery?: SerializeDeliveryOptions;
  /** Record the cluster's Events in the cluster trace (explore's judge reads them; see ClusterRecorderOptions). */
  recordEvents?: boolean;
  /**
   * Once settled, a controller that has let changes of its custom resource's spec go by without a
   * request is waited for until it sends one, up to the settle timeout (unanswered.ts); `run.json`
   * says so (`awaitedAnswer`). learn asks it for reference runs on a learned window.
   */
  awaitAnswer?: boolean;
  /** Serve the controller over TLS (HTTP/2 and HTTP/1.1) instead of plain HTTP; default CONTROLLER_TLS. */
  tls?: boolean;
  /** Default: `{ kind: 'embedded' }`. */
  cluster?: ClusterChoice;
  /** `strict`: faults stay within the API contract (see ControllerProxyOptions.contract). */
  contract?: ContractMode;
  /**
   * Controllers started ahead of their runs (standby.ts): the run takes one instead of starting the
   * controller, and starts one for a later run (once its own controller is up, or once its workload
   * is done: ControllerStandbys.preparesAt).
   */
  standbys?: ControllerStandbys;
  /**
   * Runs once the run has settled (its faults played out), before its end state is read: what a
   * user would do next to a broken system (src/campaign/recovery.ts tries Arsc's recovery strategies
   * so). Whatever it changes is in the run's traces and end state.
   */
  afterSettle?: (run: SettledRun) => Promise<void>;
  /**
   * Ends the run early (SIGINT, SIGTERM): its waits stop, everything it started is stopped, its
   * directory is removed (an unfinished run has no result; a later run redoes it), and executeRun
   * throws InterruptedError.
   */
  signal?: AbortSignal;
}

/** What `RunOptions.afterSettle` may do to a settled run. */
export interface SettledRun {
  /** Restarts the controller (killed, its leader-election Leases released, a new epoch at the proxy) and waits until it watches again. */
  restartController(): Promise<void>;
  /** Runs workload steps as the workload's (numbered after them in the trace). */
  runSteps(steps: WorkloadStep[]): Promise<WorkloadOutcome>;
  /** Waits until the controller has been quiet for `quietMs`, up to `timeoutMs`; false if it was not. */
  settle(quietMs: number, timeoutMs: number): Promise<boolean>;
  /**
   * Every object of the cluster now, Secret values hashed as in end-state.json, and the cluster's
   * changes so far: the oracles judge a copied resourceVersion by the versions its object had.
   */
  state(): Promise<Pick<RunArtifacts, 'endState' | 'clusterChanges'>>;
  /** The run's quiet window and settle timeout, in ms. */
  quietMs: number;
  settleTimeoutMs: number;
  /** Every fault of the run's plan fired (true without a plan): a run whose faults did not shows nothing of them. */
  injected: boolean;
}

export interface RunOutcome {
  record: RunRecord;
  artifacts: RunArtifacts;
}

/** The run's parts, wired; `settle` once the controller process exists. */
interface RunParts {
  run: RunContext;
  manager: RunManager;
  webhook: WebhookCertPart;
  cluster: ClusterPart;
  recorder: RecorderPart;
  setup: SetupPart;
  stubs: StubsPart;
  hosts: HostsPart;
  standby: StandbyPart;
  proxy: ProxyPart;
  portLocks: PortLocksPart;
  controller: ControllerPart;
  faults: FaultsPart;
}

/** The run's parts once all have started, for the phases that use them. */
interface StartedRun extends RunParts {
  settle: Settle;
}

export async function executeRun(options: RunOptions): Promise<RunOutcome> {
  const { runDir } = options;
  if (options.signal?.aborted) throw new InterruptedError(`the run in ${runDir} was not started`);
  mkdirSync(runDir, { recursive: true });
  const run = new RunContext(options, clusterProvider(options.cluster ?? { kind: 'embedded' }), Date.now());
  const { record } = run;
  const manager = new RunManager(options.signal);
  const parts = wireParts(run, manager);
  let endState: EndState['objects'] = {};
  try {
    const started = await startParts(parts);
    await startController(started);
    await runTheWorkload(started);
    await settleRun(started);
    endState = await started.recorder.recorder.snapshot();
    manager.endPhase('endState');
  } catch (err) {
    record.error = err instanceof Error ? err.message : String(err);
    if (!options.signal?.aborted) run.log(`  run failed: ${record.error}`);
  } finally {
    await manager.stopAll();
    const proc = parts.controller.created;
    if (proc) {
      record.controllerExits = proc.exits;
      if (proc.sparesUsed > 0) record.restartsFromSpare = proc.sparesUsed;
      await proc.closeLog();
    }
    await run.controllerTrace.close();
    await run.clusterTrace.close();
    manager.endPhase('teardown');
    record.phasesMs = manager.phasesMs;
  }
  if (options.signal?.aborted && record.error !== undefined) {
    rmSync(runDir, { recursive: true, force: true });
    throw new InterruptedError(`the run in ${runDir} was interrupted`);
  }
  return writeRunFiles(run, endState);
}

/** The run's parts, each given the ones it builds on (nothing starts yet). */
function wireParts(run: RunContext, manager: RunManager): RunParts {
  const webhook = new WebhookCertPart(run);
  const cluster = new ClusterPart(run, webhook);
  const recorder = new RecorderPart(run, cluster);
  const standby = new StandbyPart(run, run.options.tls ?? CONTROLLER_TLS);
  const proxy = new ProxyPart(run, cluster, recorder, standby);
  const stubs = new StubsPart(run, recorder, proxy);
  const hosts = new HostsPart(run, recorder);
  const controller = new ControllerPart(run, proxy, hosts, standby, webhook);
  return {
    run,
    manager,
    webhook,
    cluster,
    recorder,
    setup: new SetupPart(run, cluster, recorder, manager),
    stubs,
    hosts,
    standby,
    proxy,
    portLocks: new PortLocksPart(run),
    controller,
    faults: new FaultsPart(run, cluster, stubs, proxy, controller),
  };
}

/**
 * Starts the run's parts in order (phases `cluster`, `setup`, `proxy` and `portWait`); the manager stops them in
 * reverse, the faults last. The controller process is created here, launched by startController.
 */
async function startParts(parts: RunParts): Promise<StartedRun> {
  const { run, manager, proxy, controller } = parts;
  await manager.start(parts.webhook);
  await manager.start(parts.cluster);
  await manager.start(parts.recorder);
  manager.endPhase('cluster');
  await manager.start(parts.setup);
  manager.endPhase('setup');
  for (const part of [parts.stubs, parts.hosts, parts.standby, proxy]) await manager.start(part);
  manager.endPhase('proxy');
  await manager.start(parts.portLocks);
  manager.endPhase('portWait');
  await manager.start(controller);
  await manager.start(parts.faults, { stopLast: true });
  proxy.started.incarnation = 1;
  manager.throwIfAborted();
  manager.endPhase('proxy');
  const transitionPending = parts.cluster.cluster.transitionPending;
  return { ...parts, settle: new Settle(proxy.started, controller.process, run.config.settle.quietMs, transitionPending) };
}

/** Phase `controllerStart`: launches the controller (or admits its standby) and waits until it watches and is quiet. */
async function startController({ run, manager, standby, proxy, controller, faults, settle }: StartedRun): Promise<void> {
  const { config, record } = run;
  const proc = controller.process;
  const ahead = standby.standby;
  proc.start(ahead ? () => proxy.started.admitStandby() : undefined);
  if (ahead && proc.firstFromStandby) record.controllerStartedAheadMs = Date.now() - ahead.process.startedAt;
  // A plan that restarts the controller gets a warm spare, started beside it, whose requests wait
  // at the proxy until the restart (uncounted: the first process's start-up is judged alone): the
  // restart then skips the controller's own start-up, even one that comes with the first write.
  if (faults.faults?.restarts && config.controller.warmSpare !== false && config.controller.ports.length === 0) {
    const spareKubeconfig = join(run.runDir, RUN_FILES.spareKubeconfig);
    writePrivateFile(spareKubeconfig, await proxy.started.prepareSpare());
    proc.prepareSpare(spareKubeconfig);
  }
  await manager.interruptible(settle.startup(STARTUP_TIMEOUT_MS, () => proxy.neverWatches.diagnosis()));
  proxy.neverWatches.stop();
  manager.endPhase('controllerStart');
  // The next run's controller loads while this one goes on.
  if (standby.standbys?.preparesAt === 'controller-started') standby.standbys.prepare();
}

/** Phase `workload`: runs the workload's steps. */
async function runTheWorkload({ run, manager, cluster, setup, standby, settle }: StartedRun): Promise<void> {
  const { record, workload } = run;
  // A real API server would hold the workload's first custom-resource create for 2 s (src/realcluster/crd-create-delay.ts).
  if (run.provider.holdsFirstCustomResourceCreate) await manager.interruptible(waitOutCrdCreateDelay(cluster.client, setup.crds));
  const outcome: WorkloadOutcome = await manager.interruptible(
    runWorkload(cluster.client, workload, run.controllerTrace, {
      onStep: (i) => (run.currentStep = i),
      // Quiet counts from the step's start: the controller may not have seen the change before it yet.
      settle: (timeoutMs) => settle.untilQuiet(timeoutMs),
    }),
  );
  record.workloadOutcome = outcome;
  if (!outcome.ok) run.log(`  workload failed: ${outcome.error}`);
  run.currentStep = workload.steps.length;
  manager.endPhase('workload');
  if (standby.standbys?.preparesAt === 'workload-done') standby.standbys.prepare();
}

/**
 * Phase `settle`: waits until the controller is quiet, settling again after each restart a fault
 * causes (the restart counted apart, as `fault`); then the faults' outcome, and `afterSettle`.
 */
async function settleRun(started: StartedRun): Promise<void> {
  const { run, manager, proxy, faults, settle } = started;
  const { config, record } = run;
  const settleDeadline = Date.now() + config.settle.timeoutSeconds * 1000;
  // Quiet counts from the end of the workload at the earliest: its last write may not have reached
  // the controller yet (a controller silent since before it was not done; it has not seen it).
  const workloadEndedAt = Date.now();
  const plan = faults.faults;
  for (;;) {
    const restart = plan?.pending;
    // Quiet counts from the end of a restart (a stale view's release included): a controller that
    // sat silent on its frozen view was not done, it is only now seeing the present.
    let quietSince = workloadEndedAt;
    if (restart) {
      const faultStart = Date.now();
      await manager.interruptible(restart);
      quietSince = Date.now();
      manager.addToPhase('fault', quietSince - faultStart);
      // The restarted controller needs a moment to start before "quiet" means anything.
      await manager.interruptible(settle.forWatches(STARTUP_TIMEOUT_MS));
    }
    const remaining = settleDeadline - Date.now();
    record.settled = await manager.interruptible(settle.untilQuiet(Math.max(remaining, 0), quietSince));
    if (!record.settled) run.log(`  not quiet within the settle timeout: ${settle.describe()}`);
    // A fault that fires while we settle restarts the controller: settle again after it.
    if (plan?.pending === restart || remaining <= 0) break;
  }
  if (record.settled) await awaitAnswer(started, settleDeadline);
  if (plan) {
    record.injected = plan.allInjected();
    if (!record.injected) record.notInjected = plan.whyNotInjected();
    plan.finish();
  }
  const beyond = proxy.proxy?.primitives.staleViews.beyondContract() ?? [];
  if (beyond.length > 0) record.beyondContract = beyond;
  if (run.options.afterSettle) await manager.interruptible(run.options.afterSettle(settledRun(started)));
  manager.endPhase('settle');
}

/**
 * RunOptions.awaitAnswer: a settled controller that let spec changes of its custom resource go by
 * without a request may be in a long silent wait (unanswered.ts): the run goes on until its next
 * request, then settles again; or until the settle timeout, and stays as it was.
 */
async function awaitAnswer({ run, manager, proxy, controller, settle }: StartedRun, deadline: number): Promise<void> {
  const unanswered = proxy.unanswered;
  const silentMs = unanswered?.silentFor();
  if (!unanswered || silentMs === undefined) return;
  run.log(`  the controller has sent nothing for ${silentMs} ms, though changes of a custom resource's spec were shown to it: waiting for its next request`);
  const since = Date.now();
  const answered = await manager.interruptible(unanswered.answered(deadline, () => controller.process.running));
  const waitedMs = Date.now() - since;
  run.record.awaitedAnswer = { silentMs: silentMs + waitedMs, answered };
  if (!answered) {
    run.log(`  it sent nothing for ${silentMs + waitedMs} ms, until the settle timeout`);
    return;
  }
  run.log(`  it sent a request after ${silentMs + waitedMs} ms of silence; settling again`);
  run.record.settled = await manager.interruptible(settle.untilQuiet(Math.max(deadline - Date.now(), 0)));
  if (!run.record.settled) run.log(`  not quiet within the settle timeout: ${settle.describe()}`);
}

/** What `afterSettle` may do to the settled run. */
function settledRun({ run, cluster, recorder, proxy, controller, settle }: StartedRun): SettledRun {
  const { config, workload } = run;
  let nextStep = workload.steps.length;
  return {
    restartController: async () => {
      await restartController(controller.process, proxy.started);
      await settle.forWatches(STARTUP_TIMEOUT_MS);
    },
    runSteps: (steps) =>
      runWorkload(cluster.client, { ...workload, steps }, run.controllerTrace, {
        firstIndex: nextStep,
        onStep: (i) => (nextStep = i + 1),
        settle: (timeoutMs) => settle.untilQuiet(timeoutMs),
      }),
    settle: (quietMs, timeoutMs) => settle.untilQuiet(timeoutMs, Date.now(), quietMs),
    state: async () => {
      const now = await recorder.recorder.snapshot();
      redactSecretObjects(now);
      return { endState: now, clusterChanges: clusterChangesOf(run) };
    },
    quietMs: config.settle.quietMs,
    settleTimeoutMs: config.settle.timeoutSeconds * 1000,
    injected: run.plan === undefined || run.record.injected === true,
  };
}

/** Writes run.json, end-state.json and cluster.json, and returns what the oracles need of the run. */
function writeRunFiles(run: RunContext, endState: EndState['objects']): RunOutcome {
  const { record, runDir } = run;
  record.durationMs = Date.now() - run.started;
  writeFileAtomic(join(runDir, RUN_FILES.record), JSON.stringify(record, null, 2) + '\n');
  // Secret values stay off the disk, as in the traces; the oracles compare the hashes (equal values,
  // equal hashes), for test runs kept in memory as for reference runs read back from the file.
  redactSecretObjects(endState);
  const endStateFile: EndState = { format: END_STATE_FORMAT, objects: endState };
  writeFileAtomic(join(runDir, RUN_FILES.endState), JSON.stringify(endStateFile, null, 2) + '\n');
  writeFileAtomic(join(runDir, CLUSTER_RECORD_FILE), JSON.stringify(run.clusterRecord, null, 2) + '\n');
  return { record, artifacts: { endState, clusterChanges: clusterChangesOf(run) } };
}

const clusterChangesOf = (run: RunContext): ClusterChangeEvent[] => run.clusterTrace.events.filter((e): e is ClusterChangeEvent => e.type === 'cluster-change');
