/**
 * One run of one workload: a cluster (a fresh embedded one by default; see ClusterChoice), the proxy
 * in front of it, the cluster recorder, the controller process, the workload, and (for test runs)
 * the plan's faults. Leaves a run directory (see src/model/results.ts) and returns what the oracles
 * need.
 */
import type { KubeconfigSource } from '../kube/kubeconfig-source.js';
import { RUN_FILES } from '../io/run-files.js';
import { mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { describeStep, needsReachableAddresses, type ClusterConfig, type ControllerUnderTest, type Workload, type WorkloadStep } from '../config/config.js';
import { EmbeddedCluster } from '../cluster/index.js';
import type { ContainerFaults } from '../cluster/sim/index.js';
import { ControllerProxy, type ProxyActivity, type SerializeDeliveryOptions } from '../../proxy/index.js';
import { KubeApiError, KubeClient, type KubeClientOptions } from '../kube/client.js';
import {
  deleteRunObjects,
  ExistingCluster,
  objectsCreatedByRun,
  proxyUpstreamFor,
  RealCluster,
  uidInventory,
  waitOutCrdCreateDelay,
  type CleanupReport,
  type ControlPlaneBinaries,
  type ControlPlanePool,
  type ProxyUpstreamOptions,
} from '../realcluster/index.js';
import { ClusterRecorder } from '../recorder/cluster-recorder.js';
import { redactSecretObjects, TraceSequence, TraceWriter } from '../io/trace-io.js';
import type { TestPlan } from '../model/plan.js';
import { END_STATE_FORMAT, RUN_FORMAT, type ContractMode, type EndState, type RunArtifacts, type RunPhase, type RunRecord } from '../model/results.js';
import type { ClusterChangeEvent } from '../model/trace.js';
import { isObject, type KubeObject } from '../model/object-key.js';
import { formatApiPath } from '../model/api-path.js';
import { InterruptedError, SetupError } from '../model/errors.js';
import { writeFileAtomic } from '../io/atomic-files.js';
import { writePrivateFile } from '../io/private-file.js';
import { lockPorts } from './port-locks.js';
import { ControllerProcess } from './controller-process.js';
import { standbysAllowed, type ControllerStandbys } from './standby.js';
import { PlanFaults, restartController } from './faults.js';
import { hostsNamespaceWrapper, type CommandWrapper } from './hosts-namespace.js';
import { ApplicationStubs } from '../stubs/applications.js';
import { ControllerHosts } from '../stubs/controller-hosts.js';
import { claimLoopbackNetwork } from '../cluster/network.js';
import { readManifests, runWorkload, sleep, type WorkloadOutcome } from '../workload/runner.js';
import { NeverWatchesCheck } from './never-watches.js';

/**
 * The cluster a run uses. Runs are isolated from each other on the first two, which start a fresh
 * cluster per run, but not on `existing`, which every run shares: there, after each run, kperturb
 * deletes every object the run created and waits until they are gone (src/realcluster/run-cleanup.ts).
 */
export type ClusterChoice =
  /** A fresh embedded in-memory API server per run (the default; milliseconds to start). */
  | { kind: 'embedded' }
  /**
   * A fresh real control plane per run (etcd with a new data directory, kube-apiserver,
   * kube-controller-manager, plus simulated kubelets), about 5 s to start; the components' logs
   * are kept in the run directory's control-plane/. `binaries`: default locateControlPlaneBinaries().
   * `pool`: take the control plane from this pool (started ahead, never used before; a campaign
   * makes one for its runs unless this is `false`).
   */
  | { kind: 'real'; binaries?: ControlPlaneBinaries; pool?: ControlPlanePool | false }
  /** The cluster of a kubeconfig's context (kubectl's loading rules), shared by every run; cleaned up after each. */
  | { kind: 'existing'; kubeconfig: KubeconfigSource };

/** What `cluster.json` in a run directory holds: which cluster the run used and what isolation cost. */
export interface ClusterRunRecord {
  kind: ClusterChoice['kind'];
  url?: string;
  /** `embedded` only: the Kubernetes release it emulated (the config's `cluster.kubernetesVersion`). */
  kubernetesVersion?: string;
  /** Starting the cluster (connecting, for `existing`), in ms. */
  startMs?: number;
  /** Stopping it (deleting the data, for `real`), in ms. */
  stopMs?: number;
  /** `existing` only: deleting what the run created. */
  cleanup?: CleanupReport;
}

export const CLUSTER_RECORD_FILE = RUN_FILES.clusterRecord;

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

/**
 * Runs serve the controller over TLS (HTTP/2 and HTTP/1.1), as a real API server does: client-go
 * then multiplexes its watches on one HTTP/2 connection, as in production, instead of one HTTP/1.1
 * connection per watch. Measured on the secret-marker example (4 alternating runs each): 2.47 s vs
 * 2.37 s per run with plain HTTP (medians), plus about 0.5 s once per process for the proxy's CA.
 */
export const CONTROLLER_TLS = true;

/** What `RunOptions.afterSettle` may do to a settled run. */
export interface SettledRun {
  /** Restarts the controller (killed, its leader-election Leases released, a new epoch at the proxy) and waits until it watches again. */
  restartController(): Promise<void>;
  /** Runs workload steps as the workload's (numbered after them in the trace). */
  runSteps(steps: WorkloadStep[]): Promise<WorkloadOutcome>;
  /** Waits until the controller has been quiet for `quietMs`, up to `timeoutMs`; false if it was not. */
  settle(quietMs: number, timeoutMs: number): Promise<boolean>;
  /** Every object of the cluster now, Secret values hashed as in end-state.json. */
  endState(): Promise<Record<string, KubeObject>>;
  /** The run's quiet window and settle timeout, in ms. */
  quietMs: number;
  settleTimeoutMs: number;
}

export interface RunOutcome {
  record: RunRecord;
  artifacts: RunArtifacts;
}

/** How long a controller may take to open its watches and go quiet after it starts. */
const STARTUP_TIMEOUT_MS = 30_000;

/** How long the custom resources of the setup's CRDs may take to be served. */
const CRD_SERVED_TIMEOUT_MS = 30_000;

export async function executeRun(options: RunOptions): Promise<RunOutcome> {
  const { config, workload, runDir, plan } = options;
  const log = options.log ?? (() => undefined);
  const interruptible = <T>(promise: Promise<T>) => unlessAborted(promise, options.signal);
  if (options.signal?.aborted) throw new InterruptedError(`the run in ${runDir} was not started`);
  mkdirSync(runDir, { recursive: true });
  const started = Date.now();
  const sequence = new TraceSequence();
  const controllerTrace = new TraceWriter(join(runDir, RUN_FILES.controllerTrace), 'controller', sequence);
  // The run's outcome carries the cluster's changes (read back below); nothing reads the controller trace in memory.
  const clusterTrace = new TraceWriter(join(runDir, RUN_FILES.clusterTrace), 'cluster', sequence, { keepEvents: true });

  const cleanups: Array<() => Promise<void> | void> = [];
  const record: RunRecord = {
    format: RUN_FORMAT,
    controller: config.name,
    workload: workload.name,
    ...(plan ? { plan: plan.metadata.name } : {}),
    startedAt: new Date(started).toISOString(),
    durationMs: 0,
    workloadOutcome: { ok: false },
    settled: false,
    quietMs: config.settle.quietMs,
    controllerExits: [],
  };
  let endState: EndState['objects'] = {};
  let controller: ControllerProcess | undefined;
  let proxyOf: ControllerProxy | undefined;

  const choice = options.cluster ?? { kind: 'embedded' };
  const clusterRecord: ClusterRunRecord = { kind: choice.kind };
  // Each phase ends where the next begins; `fault` is counted inside `settle` and apart.
  const phasesMs: NonNullable<RunRecord['phasesMs']> = {};
  let phaseStart = Date.now();
  const endPhase = (phase: RunPhase) => {
    const now = Date.now();
    phasesMs[phase] = (phasesMs[phase] ?? 0) + now - phaseStart;
    phaseStart = now;
  };

  try {
    const t0 = Date.now();
    if (choice.kind !== 'embedded' && config.cluster?.kubernetesVersion !== undefined) {
      log(
        `  cluster.kubernetesVersion ${config.cluster.kubernetesVersion} applies to the embedded cluster only; the ${choice.kind} cluster serves its own release`,
      );
    }
    const cluster = await startCluster(choice, runDir, config.cluster ?? {}, needsReachableAddresses(config));
    clusterRecord.url = cluster.url;
    if (cluster.kubernetesVersion !== undefined) clusterRecord.kubernetesVersion = cluster.kubernetesVersion;
    clusterRecord.startMs = Date.now() - t0;
    cleanups.push(async () => {
      const t = Date.now();
      await cluster.stop();
      clusterRecord.stopMs = Date.now() - t;
    });
    const client = new RetryingKubeClient(cluster.url, cluster.clientOptions);
    cleanups.push(() => client.close());
    const recorder = await ClusterRecorder.start(client, clusterTrace);
    if (choice.kind === 'existing') {
      // Taken before the setup runs: everything the recorder sees appear later, the run created.
      const inventory = uidInventory(recorder.pastChanges());
      // Runs after the controller, the proxy and the recorder have stopped (cleanups run in reverse),
      // so the deletions neither reach the controller nor enter the cluster trace.
      cleanups.push(async () => {
        const objects = objectsCreatedByRun(inventory, recorder.pastChanges());
        clusterRecord.cleanup = await deleteRunObjects(client, objects, { log });
        const c = clusterRecord.cleanup;
        if (c.leftovers.length > 0) log(`  cleanup left ${c.leftovers.length} object(s) behind; the next run on this cluster is not isolated from them`);
      });
    }
    cleanups.push(() => recorder.stop());
    endPhase('cluster');

    const setupCrds: KubeObject[] = [];
    for (const file of config.setup) {
      for (const obj of readManifests(file)) {
        await client.apply(obj);
        if (obj.kind === 'CustomResourceDefinition') setupCrds.push(obj);
      }
    }
    await interruptible(waitUntilServed(client, setupCrds, CRD_SERVED_TIMEOUT_MS));
    await recorder.refreshResources();
    endPhase('setup');

    // Stub applications and the controller's names follow the cluster through the recorder; their
    // calls go into the cluster trace (what happened inside the cluster, beside the object changes).
    // Each call is announced to the proxy's triggers as it arrives (call triggers of plan faults).
    let stubs: ApplicationStubs | undefined;
    if (config.applications.length > 0) {
      const started = new ApplicationStubs(
        config.applications,
        recorder,
        clusterTrace,
        (line) => log(`  ${line}`),
        (arrival) => proxyOf?.onAppCall(arrival),
      );
      stubs = started;
      cleanups.push(() => started.stop());
    }
    let wrapController: CommandWrapper | undefined;
    if (config.controller.clusterDNS || config.controller.hostAliases.length > 0) {
      const option = config.controller.clusterDNS ? 'controller.clusterDNS' : 'controller.hostAliases';
      const hosts = new ControllerHosts(
        join(runDir, 'controller.hosts'),
        config.controller.hostAliases,
        config.controller.clusterDNS ? recorder : undefined,
        undefined,
        config.controller.namespace,
      );
      cleanups.push(() => hosts.stop());
      wrapController = await hostsNamespaceWrapper(hosts.file, `${config.file}: ${option}`);
    }

    const tls = options.tls ?? CONTROLLER_TLS;
    const standbys = options.standbys && standbysAllowed(config, tls) ? options.standbys : undefined;
    const standby = standbys?.take();
    // Until the controller and the proxy have them, the standby and its door are the run's to end.
    if (standby) {
      cleanups.push(async () => {
        standby.door.close();
        await standby.process.kill();
      });
    }
    // Counts the controller's lists while it starts, to name one that never watches (never-watches.ts).
    const neverWatches = new NeverWatchesCheck(controllerTrace);
    const proxy = await ControllerProxy.start({
      ...cluster.proxyUpstream,
      ...(standby ? { standbyDoor: standby.door } : {}),
      trace: neverWatches.sink,
      clusterView: recorder,
      tls,
      // The controller's exec/log calls are answered by the proxy from the config's rules, on any
      // cluster; the cluster trace records them too, since no object change shows them.
      podStreaming: { exec: config.exec, logs: config.logs },
      onPodExec: (event) => clusterTrace.append(event),
      ...(options.serializeDelivery ? { serializeDelivery: options.serializeDelivery } : {}),
      ...(options.contract ? { contract: options.contract } : {}),
    });
    proxyOf = proxy;
    cleanups.push(() => proxy.stop());
    const kubeconfigFile = join(runDir, RUN_FILES.controllerKubeconfig);
    writePrivateFile(kubeconfigFile, proxy.kubeconfigYaml());
    // Fixed ports: one run at a time per port on this machine; the lock goes after the controller has stopped.
    if (config.controller.ports.length > 0) {
      const releasePorts = await lockPorts(config.controller.ports, {
        onWait: (port, reason) => log(`  waiting for port ${port} (controller.ports): ${reason}`),
      });
      cleanups.push(releasePorts);
    }
    const proc = new ControllerProcess(config, kubeconfigFile, join(runDir, RUN_FILES.controllerLog), controllerTrace, wrapController);
    controller = proc;
    cleanups.push(() => proc.stop());
    if (standby) proc.useStandby(standby.process);

    let currentStep = -1;
    const faults = plan
      ? new PlanFaults(
          plan,
          proxy,
          proc,
          controllerTrace,
          log,
          () => {
            if (record.injectedDuringStep === undefined) record.injectedDuringStep = currentStep;
          },
          () =>
            currentStep >= 0 && currentStep < workload.steps.length ? `step ${currentStep + 1} (${describeStep(workload.steps[currentStep]!)})` : undefined,
          config.settle.quietMs,
          { containers: cluster.containerFaults, applications: stubs, clusterTrace },
        )
      : undefined;
    faults?.arm();
    if (faults) cleanups.unshift(() => faults.finish());

    proxy.incarnation = 1;
    options.signal?.throwIfAborted();
    endPhase('proxy');
    proc.start(standby ? () => proxy.admitStandby() : undefined);
    if (standby && proc.firstFromStandby) record.controllerStartedAheadMs = Date.now() - standby.process.startedAt;
    // A plan that restarts the controller gets a warm spare, started beside it, whose requests wait
    // at the proxy until the restart (uncounted: the first process's start-up is judged alone): the
    // restart then skips the controller's own start-up, even one that comes with the first write.
    if (faults?.restarts && config.controller.warmSpare !== false && config.controller.ports.length === 0) {
      const spareKubeconfig = join(runDir, RUN_FILES.spareKubeconfig);
      writePrivateFile(spareKubeconfig, await proxy.prepareSpare());
      proc.prepareSpare(spareKubeconfig);
    }
    await interruptible(waitUntilQuiet(proxy, proc, config.settle.quietMs, STARTUP_TIMEOUT_MS, true, 0, () => neverWatches.diagnosis()));
    neverWatches.stop();
    endPhase('controllerStart');
    // The next run's controller loads while this one goes on.
    if (standbys?.preparesAt === 'controller-started') standbys.prepare();

    // A real API server would hold the workload's first custom-resource create for 2 s (src/realcluster/crd-create-delay.ts).
    if (choice.kind !== 'embedded') await interruptible(waitOutCrdCreateDelay(client, setupCrds));
    const outcome: WorkloadOutcome = await interruptible(
      runWorkload(client, workload, controllerTrace, {
        onStep: (i) => (currentStep = i),
        // Quiet counts from the step's start: the controller may not have seen the change before it yet.
        settle: (timeoutMs) => waitUntilQuiet(proxy, proc, config.settle.quietMs, timeoutMs, false, Date.now()),
      }),
    );
    record.workloadOutcome = outcome;
    if (!outcome.ok) log(`  workload failed: ${outcome.error}`);
    currentStep = workload.steps.length;
    endPhase('workload');
    if (standbys?.preparesAt === 'workload-done') standbys.prepare();

    const settleDeadline = Date.now() + config.settle.timeoutSeconds * 1000;
    // Quiet counts from the end of the workload at the earliest: its last write may not have reached
    // the controller yet (a controller silent since before it was not done; it has not seen it).
    const workloadEndedAt = Date.now();
    for (;;) {
      const restart = faults?.pending;
      // Quiet counts from the end of a restart (a stale view's release included): a controller that
      // sat silent on its frozen view was not done, it is only now seeing the present.
      let quietSince = workloadEndedAt;
      if (restart) {
        const faultStart = Date.now();
        await interruptible(restart);
        quietSince = Date.now();
        phasesMs.fault = (phasesMs.fault ?? 0) + quietSince - faultStart;
        // The restarted controller needs a moment to start before "quiet" means anything.
        await interruptible(waitForWatches(proxy, proc, STARTUP_TIMEOUT_MS));
      }
      const remaining = settleDeadline - Date.now();
      record.settled = await interruptible(waitUntilQuiet(proxy, proc, config.settle.quietMs, Math.max(remaining, 0), false, quietSince));
      if (!record.settled) log(`  not quiet within the settle timeout: ${describeActivity(proxy.activity(), Date.now())}`);
      // A fault that fires while we settle restarts the controller: settle again after it.
      if (faults?.pending === restart || remaining <= 0) break;
    }
    if (faults) {
      record.injected = faults.allInjected();
      if (!record.injected) record.notInjected = faults.whyNotInjected();
      faults.finish();
    }
    const beyond = proxyOf?.primitives.staleViews.beyondContract() ?? [];
    if (beyond.length > 0) record.beyondContract = beyond;
    if (options.afterSettle) {
      let nextStep = workload.steps.length;
      await interruptible(
        options.afterSettle({
          restartController: async () => {
            await restartController(proc, proxy);
            await waitForWatches(proxy, proc, STARTUP_TIMEOUT_MS);
          },
          runSteps: (steps) =>
            runWorkload(client, { ...workload, steps }, controllerTrace, {
              firstIndex: nextStep,
              onStep: (i) => (nextStep = i + 1),
              settle: (timeoutMs) => waitUntilQuiet(proxy, proc, config.settle.quietMs, timeoutMs, false, Date.now()),
            }),
          settle: (quietMs, timeoutMs) => waitUntilQuiet(proxy, proc, quietMs, timeoutMs, false, Date.now()),
          endState: async () => {
            const now = await recorder.snapshot();
            redactSecretObjects(now);
            return now;
          },
          quietMs: config.settle.quietMs,
          settleTimeoutMs: config.settle.timeoutSeconds * 1000,
        }),
      );
    }
    endPhase('settle');
    endState = await recorder.snapshot();
    endPhase('endState');
  } catch (err) {
    record.error = err instanceof Error ? err.message : String(err);
    if (!options.signal?.aborted) log(`  run failed: ${record.error}`);
  } finally {
    for (const cleanup of cleanups.reverse()) {
      try {
        await cleanup();
      } catch {
        /* best effort: keep tearing down */
      }
    }
    if (controller) {
      record.controllerExits = controller.exits;
      if (controller.sparesUsed > 0) record.restartsFromSpare = controller.sparesUsed;
      await controller.closeLog();
    }
    await controllerTrace.close();
    await clusterTrace.close();
    endPhase('teardown');
    record.phasesMs = phasesMs;
  }
  if (options.signal?.aborted && record.error !== undefined) {
    rmSync(runDir, { recursive: true, force: true });
    throw new InterruptedError(`the run in ${runDir} was interrupted`);
  }
  record.durationMs = Date.now() - started;
  writeFileAtomic(join(runDir, RUN_FILES.record), JSON.stringify(record, null, 2) + '\n');
  // Secret values stay off the disk, as in the traces; the oracles compare the hashes (equal values,
  // equal hashes), for test runs kept in memory as for reference runs read back from the file.
  redactSecretObjects(endState);
  const endStateFile: EndState = { format: END_STATE_FORMAT, objects: endState };
  writeFileAtomic(join(runDir, RUN_FILES.endState), JSON.stringify(endStateFile, null, 2) + '\n');
  writeFileAtomic(join(runDir, CLUSTER_RECORD_FILE), JSON.stringify(clusterRecord, null, 2) + '\n');
  const clusterChanges = clusterTrace.events.filter((e): e is ClusterChangeEvent => e.type === 'cluster-change');
  return { record, artifacts: { endState, clusterChanges } };
}

/** `promise`, unless `signal` aborts first: then InterruptedError at once (the promise goes on, unobserved). */
function unlessAborted<T>(promise: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (!signal) return promise;
  promise.catch(() => undefined);
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(new InterruptedError('interrupted'));
    if (signal.aborted) return onAbort();
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}

/**
 * A KubeClient whose lists are retried while the API server answers 429, as client-go's are: a real
 * kube-apiserver refuses lists of a custom resource with "storage is (re)initializing" for a moment
 * after its CRD is created or its accepted names change, and the cluster recorder lists every new
 * resource as soon as discovery serves it.
 */
class RetryingKubeClient extends KubeClient {
  override async list(info: Parameters<KubeClient['list']>[0]): ReturnType<KubeClient['list']> {
    const deadline = Date.now() + CRD_SERVED_TIMEOUT_MS;
    for (;;) {
      try {
        return await super.list(info);
      } catch (err) {
        if (!(err instanceof KubeApiError) || err.status !== 429 || Date.now() >= deadline) throw err;
        const details = isObject(err.body) && isObject(err.body.details) ? err.body.details : {};
        const retryAfterMs = typeof details.retryAfterSeconds === 'number' ? details.retryAfterSeconds * 1000 : 200;
        await sleep(Math.min(retryAfterMs, 1000));
      }
    }
  }
}

interface RunCluster {
  url: string;
  /** The simulated kubelets' container faults (embedded and real clusters). */
  containerFaults?: ContainerFaults;
  /** The emulated release (embedded clusters). */
  kubernetesVersion?: string;
  clientOptions: KubeClientOptions;
  proxyUpstream: ProxyUpstreamOptions;
  stop(): Promise<void>;
}

/**
 * `settings`: the embedded cluster's emulated release. `reachable`: pods (and, on the embedded
 * cluster, Services) get loopback addresses where stub applications can listen
 * (src/cluster/network.ts). A real control plane allocates Service cluster IPs itself
 * (--service-cluster-ip-range), so there only pod IPs are reachable.
 */
async function startCluster(choice: ClusterChoice, runDir: string, settings: ClusterConfig, reachable: boolean): Promise<RunCluster> {
  switch (choice.kind) {
    case 'embedded': {
      const cluster = await EmbeddedCluster.start({
        ...(settings.kubernetesVersion !== undefined ? { kubernetesVersion: settings.kubernetesVersion } : {}),
        network: reachable ? 'loopback' : 'default',
      });
      const containerFaults = cluster.containerFaults;
      return {
        url: cluster.url,
        ...(containerFaults ? { containerFaults } : {}),
        kubernetesVersion: cluster.kubernetesVersion,
        clientOptions: cluster.clientOptions(),
        proxyUpstream: proxyUpstreamFor(cluster.url, cluster.clientOptions()),
        stop: () => cluster.stop(),
      };
    }
    case 'real': {
      const network = reachable ? await claimLoopbackNetwork() : undefined;
      try {
        const cluster = await RealCluster.start({
          ...(choice.binaries ? { binaries: choice.binaries } : {}),
          ...(choice.pool ? { pool: choice.pool } : {}),
          logDir: join(runDir, 'control-plane'),
          ...(network ? { simulation: { network } } : {}),
        });
        const clientOptions = cluster.clientOptions();
        const stop = async () => {
          try {
            await cluster.stop();
          } finally {
            network?.release();
          }
        };
        const containerFaults = cluster.containerFaults;
        return {
          url: cluster.url,
          ...(containerFaults ? { containerFaults } : {}),
          clientOptions,
          proxyUpstream: proxyUpstreamFor(cluster.url, clientOptions),
          stop,
        };
      } catch (err) {
        network?.release();
        throw err;
      }
    }
    case 'existing': {
      const cluster = await ExistingCluster.connect(choice.kubeconfig);
      return { url: cluster.url, clientOptions: cluster.clientOptions(), proxyUpstream: cluster.proxyUpstream(), stop: () => cluster.stop() };
    }
  }
}

/**
 * Waits until a list of each CRD's custom resources succeeds. A real kube-apiserver answers 404 until
 * the CRD is Established, and then 429 "storage is (re)initializing" for a moment while the resource's
 * watch cache starts; the recorder and the controller would see those errors otherwise.
 */
async function waitUntilServed(client: KubeClient, crds: readonly KubeObject[], timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (const crd of crds) {
    const spec = isObject(crd.spec) ? crd.spec : {};
    const names = isObject(spec.names) ? spec.names : {};
    // An apiextensions.k8s.io/v1beta1 CRD may name its only version in spec.version.
    const versions =
      Array.isArray(spec.versions) && spec.versions.length > 0
        ? spec.versions.filter(isObject)
        : typeof spec.version === 'string'
          ? [{ name: spec.version }]
          : [];
    const version = versions.find((v) => v.storage === true) ?? versions[0];
    if (typeof spec.group !== 'string' || typeof names.plural !== 'string' || typeof version?.name !== 'string') continue;
    const path = formatApiPath({ group: spec.group, version: version.name, resource: names.plural });
    const groupVersion = `/apis/${spec.group}/${version.name}`;
    for (;;) {
      // Unpaginated, like an informer's list: served from the watch cache, which is what answers 429.
      const res = await client.request('GET', path).catch(() => undefined);
      // Discovery too: a real API server may serve the resource before discovery lists it, and the
      // cluster recorder only watches what discovery lists (it would miss every custom resource).
      const discovered = res?.status === 200 ? await client.request('GET', groupVersion).catch(() => undefined) : undefined;
      const resources = discovered?.status === 200 && isObject(discovered.body) && Array.isArray(discovered.body.resources) ? discovered.body.resources : [];
      const listed = resources.some((r) => isObject(r) && r.name === names.plural);
      if (listed) break;
      if (Date.now() >= deadline) {
        throw new SetupError(
          `the custom resources of CRD ${String(crd.metadata?.name)} were not served and listed by discovery within ${timeoutMs / 1000} s (last answer: ${res ? `HTTP ${res.status}` : 'none'})`,
        );
      }
      await sleep(100);
    }
  }
}

/**
 * Waits until the controller has been quiet (no request in flight, none started or finished and no
 * watch event delivered) for `quietMs`, counted from `since` at the earliest. At startup also
 * requires an open watch, and fails if the controller exits. Returns false on timeout.
 */
/**
 * Has the controller settled? Nothing in flight and nothing delivered for `quietMs` (since `since`),
 * a watch open (at start-up), no serialized event waiting, no stream a hold expired that the
 * controller has not watched again (it has not relisted yet), and no hold in place: a held
 * controller is silent, not done (the change that ends the hold may be the workload's last write,
 * not yet seen by the proxy, and after it the controller still relists).
 */
export function isQuiet(a: ProxyActivity, o: { now: number; quietMs: number; since: number; startup: boolean; serializedBacklog: number }): boolean {
  return (
    a.inFlight === 0 &&
    o.now - Math.max(a.lastActivityAt, o.since) >= o.quietMs &&
    (!o.startup || a.openWatches > 0) &&
    o.serializedBacklog === 0 &&
    a.awaitingRelist === 0 &&
    a.holdsInPlace === 0
  );
}

/** What kept a run from being quiet, for its log. */
function describeActivity(a: ProxyActivity, now: number): string {
  return `${a.inFlight} request(s) in flight, ${a.openWatches} watch(es) open, last activity ${now - a.lastActivityAt} ms ago, ${a.awaitingRelist} stream(s) awaiting a relist, ${a.holdsInPlace} hold(s) in place`;
}

async function waitUntilQuiet(
  proxy: ControllerProxy,
  proc: ControllerProcess,
  quietMs: number,
  timeoutMs: number,
  startup: boolean,
  since = 0,
  /** At start-up: why the controller will never go quiet (it lists in a loop), to fail at once with. */
  neverQuiet?: () => string | undefined,
): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (startup && !proc.running && proc.exitedUnexpectedly) {
      throw new SetupError(proc.startFailure ?? proc.startupExitMessage());
    }
    const never = neverQuiet?.();
    if (never) throw new SetupError(never);
    if (isQuiet(proxy.activity(), { now: Date.now(), quietMs, since, startup, serializedBacklog: proxy.serializedBacklog() })) return true;
    if (Date.now() >= deadline) {
      if (startup) throw new SetupError(`the controller did not open a watch and go quiet within ${timeoutMs / 1000}s of starting (see controller.log)`);
      return false;
    }
    await sleep(Math.min(50, quietMs / 4));
  }
}

/** Waits (bounded, never failing) until the controller has a watch open or has exited. */
async function waitForWatches(proxy: ControllerProxy, proc: ControllerProcess, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline && proc.running && proxy.activity().openWatches === 0) await sleep(20);
}
