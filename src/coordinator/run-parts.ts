/**
 * The parts of one run, each started by the run manager (./run-manager.ts) in the order they are
 * listed here and stopped in the reverse: the controller's webhook certificate, the cluster (and a
 * client of it), the cluster recorder, the setup, the stub applications, the controller's host
 * names, the standby controller, the proxy, the port locks, the controller process and the plan's
 * faults. A part's fields are what it started, for the parts after it; ./run.ts wires them and
 * drives the phases that use them.
 */
import { join } from 'node:path';
import { RUN_FILES } from '../io/run-files.js';
import { writeWebhookCertificate, type WebhookCertificate } from './webhook-certs.js';
import { describeStep, needsReachableAddresses, type ControllerUnderTest, type Workload } from '../config/config.js';
import { ControllerProxy } from '../../proxy/index.js';
import type { KubeClient } from '../kube/client.js';
import { deleteRunObjects, objectsCreatedByRun, uidInventory } from '../realcluster/index.js';
import { ClusterRecorder } from '../recorder/cluster-recorder.js';
import { TraceSequence, TraceWriter } from '../io/trace-io.js';
import type { TestPlan } from '../model/plan.js';
import { RUN_FORMAT, type RunRecord } from '../model/results.js';
import { isObject, type KubeObject } from '../model/object-key.js';
import { formatApiPath } from '../model/api-path.js';
import { SetupError } from '../model/errors.js';
import { writePrivateFile } from '../io/private-file.js';
import { lockPorts } from './port-locks.js';
import { ControllerProcess } from './controller-process.js';
import { standbysAllowed, type ControllerStandbys, type Standby } from './standby.js';
import { PlanFaults } from './faults.js';
import { hostsNamespaceWrapper, writePodFiles, type CommandWrapper } from './hosts-namespace.js';
import { ApplicationStubs } from '../stubs/applications.js';
import { ControllerHosts } from '../stubs/controller-hosts.js';
import { readManifests, sleep } from '../workload/runner.js';
import { NeverWatchesCheck } from './never-watches.js';
import { UnansweredChanges } from './unanswered.js';
import { CRD_SERVED_TIMEOUT_MS, RetryingKubeClient, type ClusterProvider, type ClusterRunRecord, type RunCluster } from './cluster-provider.js';
import type { RunManager, RunPart } from './run-manager.js';
import type { RunOptions } from './run.js';

/**
 * Runs serve the controller over TLS (HTTP/2 and HTTP/1.1), as a real API server does: client-go
 * then multiplexes its watches on one HTTP/2 connection, as in production, instead of one HTTP/1.1
 * connection per watch. Measured on the secret-marker example (4 alternating runs each): 2.47 s vs
 * 2.37 s per run with plain HTTP (medians), plus about 0.5 s once per process for the proxy's CA.
 */
export const CONTROLLER_TLS = true;

/** What every part of one run shares: its options, its two traces and the record being written. */
export class RunContext {
  readonly config: ControllerUnderTest;
  readonly workload: Workload;
  readonly plan: TestPlan | undefined;
  readonly log: (line: string) => void;
  readonly controllerTrace: TraceWriter;
  readonly clusterTrace: TraceWriter;
  readonly record: RunRecord;
  readonly clusterRecord: ClusterRunRecord;
  /** The workload step running now: -1 before the workload, `steps.length` after it. */
  currentStep = -1;

  constructor(
    readonly options: RunOptions,
    readonly provider: ClusterProvider,
    readonly started: number,
  ) {
    this.config = options.config;
    this.workload = options.workload;
    this.plan = options.plan;
    this.log = options.log ?? (() => undefined);
    const sequence = new TraceSequence();
    this.controllerTrace = new TraceWriter(join(options.runDir, RUN_FILES.controllerTrace), 'controller', sequence);
    // The run's outcome carries the cluster's changes (read back below); nothing reads the controller trace in memory.
    this.clusterTrace = new TraceWriter(join(options.runDir, RUN_FILES.clusterTrace), 'cluster', sequence, { keepEvents: true });
    this.record = {
      format: RUN_FORMAT,
      controller: this.config.name,
      workload: this.workload.name,
      ...(this.plan ? { plan: this.plan.metadata.name } : {}),
      startedAt: new Date(started).toISOString(),
      durationMs: 0,
      workloadOutcome: { ok: false },
      settled: false,
      quietMs: this.config.settle.quietMs,
      controllerExits: [],
    };
    this.clusterRecord = { kind: provider.kind };
  }

  get runDir(): string {
    return this.options.runDir;
  }

  /** The workload step running now, described (undefined before and after the workload). */
  workloadAt(): string | undefined {
    const step = this.workload.steps[this.currentStep];
    return this.currentStep >= 0 && step ? `step ${this.currentStep + 1} (${describeStep(step)})` : undefined;
  }
}

/** The serving certificate of the controller's webhook server (controller.webhookServer): made first, the cluster trusts it. */
export class WebhookCertPart implements RunPart {
  certificate: WebhookCertificate | undefined;

  constructor(private readonly run: RunContext) {}

  async start(): Promise<void> {
    this.certificate = await writeWebhookCertificate(this.run.config, this.run.runDir);
  }
}

/** The cluster, and a client of it; stopped after everything else. */
export class ClusterPart implements RunPart {
  private started: RunCluster | undefined;
  private kubeClient: KubeClient | undefined;

  constructor(
    private readonly run: RunContext,
    private readonly webhook: WebhookCertPart,
  ) {}

  async start(): Promise<void> {
    const { config, provider, clusterRecord } = this.run;
    const t0 = Date.now();
    if (!provider.emulatesRelease && config.cluster?.kubernetesVersion !== undefined) {
      this.run.log(
        `  cluster.kubernetesVersion ${config.cluster.kubernetesVersion} applies to the embedded cluster only; the ${provider.kind} cluster serves its own release`,
      );
    }
    const webhookServer = this.webhook.certificate?.server;
    if (webhookServer && provider.kind !== 'embedded') {
      this.run.log(
        `  controller.webhookServer: only the embedded cluster sends webhooks to the controller; the ${provider.kind} cluster calls the configurations' Services, which reach no controller out of a pod`,
      );
    }
    const cluster = await provider.start(this.run.runDir, config.cluster ?? {}, needsReachableAddresses(config), webhookServer);
    this.started = cluster;
    clusterRecord.url = cluster.url;
    if (cluster.kubernetesVersion !== undefined) clusterRecord.kubernetesVersion = cluster.kubernetesVersion;
    clusterRecord.startMs = Date.now() - t0;
    this.kubeClient = new RetryingKubeClient(cluster.url, cluster.clientOptions);
  }

  get cluster(): RunCluster {
    return startedOrThrow(this.started, 'the cluster');
  }

  get client(): KubeClient {
    return startedOrThrow(this.kubeClient, 'the cluster client');
  }

  async stop(): Promise<void> {
    try {
      this.kubeClient?.close();
    } finally {
      if (this.started) {
        const t = Date.now();
        await this.started.stop();
        this.run.clusterRecord.stopMs = Date.now() - t;
      }
    }
  }
}

/**
 * The cluster recorder (the cluster trace). On a shared cluster it also isolates the run: after the
 * recorder (and so the controller and the proxy) have stopped, what the run created is deleted, so
 * the deletions neither reach the controller nor enter the cluster trace.
 */
export class RecorderPart implements RunPart {
  private started: ClusterRecorder | undefined;
  private inventory: ReturnType<typeof uidInventory> | undefined;

  constructor(
    private readonly run: RunContext,
    private readonly cluster: ClusterPart,
  ) {}

  async start(): Promise<void> {
    this.started = await ClusterRecorder.start(this.cluster.client, this.run.clusterTrace, { events: this.run.options.recordEvents === true });
    // Taken before the setup runs: everything the recorder sees appear later, the run created.
    if (this.run.provider.shared) this.inventory = uidInventory(this.started.pastChanges());
  }

  get recorder(): ClusterRecorder {
    return startedOrThrow(this.started, 'the cluster recorder');
  }

  async stop(): Promise<void> {
    if (!this.started) return;
    try {
      await this.started.stop();
    } finally {
      if (this.inventory) await this.deleteRunObjects(this.inventory);
    }
  }

  private async deleteRunObjects(inventory: ReturnType<typeof uidInventory>): Promise<void> {
    const { clusterRecord, log } = this.run;
    const objects = objectsCreatedByRun(inventory, this.recorder.pastChanges());
    clusterRecord.cleanup = await deleteRunObjects(this.cluster.client, objects, { log });
    const c = clusterRecord.cleanup;
    if (c.leftovers.length > 0) log(`  cleanup left ${c.leftovers.length} object(s) behind; the next run on this cluster is not isolated from them`);
  }
}

/** The config's setup manifests, applied, and their CRDs' resources served (nothing to stop). */
export class SetupPart implements RunPart {
  readonly crds: KubeObject[] = [];

  constructor(
    private readonly run: RunContext,
    private readonly cluster: ClusterPart,
    private readonly recorder: RecorderPart,
    private readonly manager: RunManager,
  ) {}

  async start(): Promise<void> {
    const client = this.cluster.client;
    for (const file of this.run.config.setup) {
      for (const obj of readManifests(file)) {
        await client.apply(obj);
        if (obj.kind === 'CustomResourceDefinition') this.crds.push(obj);
      }
    }
    await this.manager.interruptible(waitUntilServed(client, this.crds, CRD_SERVED_TIMEOUT_MS));
    await this.recorder.recorder.refreshResources();
  }
}

/**
 * The config's stub applications. They follow the cluster through the recorder; their calls go into
 * the cluster trace (what happened inside the cluster, beside the object changes), and each call is
 * announced to the proxy's triggers as it arrives (call triggers of plan faults).
 */
export class StubsPart implements RunPart {
  stubs: ApplicationStubs | undefined;

  constructor(
    private readonly run: RunContext,
    private readonly recorder: RecorderPart,
    private readonly proxy: ProxyPart,
  ) {}

  start(): void {
    const { config, log } = this.run;
    if (config.applications.length === 0) return;
    this.stubs = new ApplicationStubs(
      config.applications,
      this.recorder.recorder,
      this.run.clusterTrace,
      (line) => log(`  ${line}`),
      (arrival) => this.proxy.proxy?.onAppCall(arrival),
    );
  }

  stop(): void {
    this.stubs?.stop();
  }
}

/** The controller's host names (controller.clusterDNS, controller.hostAliases) and pod files (controller.podNamespaceFile): a hosts file and the command wrapper that gives them. */
export class HostsPart implements RunPart {
  wrapController: CommandWrapper | undefined;
  private hosts: ControllerHosts | undefined;

  constructor(
    private readonly run: RunContext,
    private readonly recorder: RecorderPart,
  ) {}

  async start(): Promise<void> {
    const { config, runDir } = this.run;
    const c = config.controller;
    const names = c.clusterDNS || c.hostAliases.length > 0;
    if (!names && !c.podNamespaceFile) return;
    const option = c.clusterDNS ? 'controller.clusterDNS' : names ? 'controller.hostAliases' : 'controller.podNamespaceFile';
    if (names)
      this.hosts = new ControllerHosts(
        join(runDir, 'controller.hosts'),
        c.hostAliases,
        c.clusterDNS ? this.recorder.recorder : undefined,
        undefined,
        c.namespace,
      );
    const podFiles = c.podNamespaceFile ? writePodFiles(runDir, c.namespace ?? 'default') : undefined;
    this.wrapController = await hostsNamespaceWrapper({ hostsFile: this.hosts?.file, podFiles }, `${config.file}: ${option}`);
  }

  stop(): void {
    this.hosts?.stop();
  }
}

/** The controller started ahead for this run, if one waits (./standby.ts); until the controller and the proxy have it, the run's to end. */
export class StandbyPart implements RunPart {
  /** The standbys this run may take from and prepare for (none when its controller cannot use one). */
  standbys: ControllerStandbys | undefined;
  standby: Standby | undefined;

  constructor(
    private readonly run: RunContext,
    readonly tls: boolean,
  ) {}

  start(): void {
    const { options, config } = this.run;
    this.standbys = options.standbys && standbysAllowed(config, this.tls) ? options.standbys : undefined;
    this.standby = this.standbys?.take();
  }

  async stop(): Promise<void> {
    if (!this.standby) return;
    this.standby.door.close();
    await this.standby.process.kill();
  }
}

/** The proxy between the controller and the cluster, and the controller's kubeconfig pointing at it. */
export class ProxyPart implements RunPart {
  proxy: ControllerProxy | undefined;
  /** Counts the controller's lists while it starts, to name one that never watches (never-watches.ts). */
  neverWatches!: NeverWatchesCheck;
  /** With RunOptions.awaitAnswer: the spec changes shown to the controller since its last request (unanswered.ts). */
  unanswered: UnansweredChanges | undefined;
  readonly kubeconfigFile: string;

  constructor(
    private readonly run: RunContext,
    private readonly cluster: ClusterPart,
    private readonly recorder: RecorderPart,
    private readonly standby: StandbyPart,
  ) {
    this.kubeconfigFile = join(run.runDir, RUN_FILES.controllerKubeconfig);
  }

  async start(): Promise<void> {
    const { options, config, clusterTrace } = this.run;
    const standby = this.standby.standby;
    this.neverWatches = new NeverWatchesCheck(this.run.controllerTrace);
    this.unanswered = options.awaitAnswer ? new UnansweredChanges(this.neverWatches.sink) : undefined;
    const proxy = await ControllerProxy.start({
      ...this.cluster.cluster.proxyUpstream,
      ...(standby ? { standbyDoor: standby.door } : {}),
      trace: this.unanswered?.sink ?? this.neverWatches.sink,
      clusterView: this.recorder.recorder,
      tls: this.standby.tls,
      // The controller's exec/log calls are answered by the proxy from the config's rules, on any
      // cluster; the cluster trace records them too, since no object change shows them.
      podStreaming: { exec: config.exec, logs: config.logs },
      onPodExec: (event) => clusterTrace.append(event),
      ...(options.serializeDelivery ? { serializeDelivery: options.serializeDelivery } : {}),
      ...(options.contract ? { contract: options.contract } : {}),
    });
    this.proxy = proxy;
    writePrivateFile(this.kubeconfigFile, proxy.kubeconfigYaml());
  }

  /** The started proxy (the parts after this one run only once it has started). */
  get started(): ControllerProxy {
    return startedOrThrow(this.proxy, 'the proxy');
  }

  async stop(): Promise<void> {
    await this.proxy?.stop();
  }
}

/**
 * Fixed ports: one run at a time per port a controller binds on this machine, and none beside a run
 * whose application stubs listen at that port (port-locks.ts); the locks go after the controller has stopped.
 */
export class PortLocksPart implements RunPart {
  private release: (() => Promise<void> | void) | undefined;

  constructor(private readonly run: RunContext) {}

  async start(): Promise<void> {
    const { config, log } = this.run;
    const shared = config.applications.map((a) => a.port);
    if (config.controller.ports.length === 0 && shared.length === 0) return;
    const exclusive = new Set(config.controller.ports);
    this.release = await lockPorts(
      { exclusive: config.controller.ports, shared },
      { onWait: (port, reason) => log(`  waiting for port ${port} (${exclusive.has(port) ? 'controller.ports' : 'applications'}): ${reason}`) },
    );
  }

  async stop(): Promise<void> {
    await this.release?.();
  }
}

/** The controller process (created here, launched by the run once the faults are armed). */
export class ControllerPart implements RunPart {
  private proc: ControllerProcess | undefined;

  constructor(
    private readonly run: RunContext,
    private readonly proxy: ProxyPart,
    private readonly hosts: HostsPart,
    private readonly standby: StandbyPart,
    private readonly webhook: WebhookCertPart,
  ) {}

  start(): void {
    const { runDir, controllerTrace } = this.run;
    const extraEnv = this.webhook.certificate?.env ?? {};
    const config =
      Object.keys(extraEnv).length === 0
        ? this.run.config
        : { ...this.run.config, controller: { ...this.run.config.controller, env: { ...this.run.config.controller.env, ...extraEnv } } };
    this.proc = new ControllerProcess(config, this.proxy.kubeconfigFile, join(runDir, RUN_FILES.controllerLog), controllerTrace, this.hosts.wrapController);
    if (this.standby.standby) this.proc.useStandby(this.standby.standby.process);
  }

  /** The process, once created (undefined if the run failed before). */
  get created(): ControllerProcess | undefined {
    return this.proc;
  }

  get process(): ControllerProcess {
    return startedOrThrow(this.proc, 'the controller process');
  }

  async stop(): Promise<void> {
    await this.proc?.stop();
  }
}

/** The plan's faults, armed on the proxy's primitives (a reference run has none). Stopped last (RunManager.start's `stopLast`). */
export class FaultsPart implements RunPart {
  faults: PlanFaults | undefined;

  constructor(
    private readonly run: RunContext,
    private readonly cluster: ClusterPart,
    private readonly stubs: StubsPart,
    private readonly proxy: ProxyPart,
    private readonly controller: ControllerPart,
  ) {}

  start(): void {
    const { plan, config, record, controllerTrace, clusterTrace, log } = this.run;
    if (!plan) return;
    const faults = new PlanFaults(
      plan,
      this.proxy.started,
      this.controller.process,
      controllerTrace,
      log,
      () => {
        if (record.injectedDuringStep === undefined) record.injectedDuringStep = this.run.currentStep;
      },
      () => this.run.workloadAt(),
      config.settle.quietMs,
      { containers: this.cluster.cluster.containerFaults, applications: this.stubs.stubs, clusterTrace },
    );
    faults.arm();
    // Finished at the end only once armed, as a plan whose faults could not be armed has none to finish.
    this.faults = faults;
  }

  stop(): void {
    this.faults?.finish();
  }
}

/** What a part started, for the parts after it (which start only once it has). */
function startedOrThrow<T>(value: T | undefined, what: string): T {
  if (value === undefined) throw new Error(`${what} has not started`);
  return value;
}

/**
 * Waits until a list of each CRD's custom resources succeeds. A real kube-apiserver answers 404 until
 * the CRD is Established, and then 429 "storage is (re)initializing" for a moment while the resource's
 * watch cache starts; the recorder and the controller would see those errors otherwise.
 */
async function waitUntilServed(client: KubeClient, crds: readonly KubeObject[], timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (const crd of crds) {
    const served = servedPaths(crd);
    if (!served) continue;
    for (;;) {
      // Unpaginated, like an informer's list: served from the watch cache, which is what answers 429.
      const res = await client.request('GET', served.path).catch(() => undefined);
      // Discovery too: a real API server may serve the resource before discovery lists it, and the
      // cluster recorder only watches what discovery lists (it would miss every custom resource).
      const discovered = res?.status === 200 ? await client.request('GET', served.groupVersion).catch(() => undefined) : undefined;
      const resources = discovered?.status === 200 && isObject(discovered.body) && Array.isArray(discovered.body.resources) ? discovered.body.resources : [];
      const listed = resources.some((r) => isObject(r) && r.name === served.plural);
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

/** A CRD's list path and group-version discovery path (its storage version's), if it names them. */
function servedPaths(crd: KubeObject): { path: string; groupVersion: string; plural: string } | undefined {
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
  if (typeof spec.group !== 'string' || typeof names.plural !== 'string' || typeof version?.name !== 'string') return undefined;
  return {
    path: formatApiPath({ group: spec.group, version: version.name, resource: names.plural }),
    groupVersion: `/apis/${spec.group}/${version.name}`,
    plural: names.plural,
  };
}
