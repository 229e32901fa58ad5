/**
 * The cluster a run uses, behind one interface: a fresh embedded API server, a fresh real control
 * plane, or the cluster of a kubeconfig shared by every run. The run (./run.ts) asks the provider
 * what differs (does it emulate a release, hold the first custom-resource create, is it shared) and
 * never switches on the kind itself.
 */
import { createWriteStream } from 'node:fs';
import { join } from 'node:path';
import type { KubeconfigSource } from '../kube/kubeconfig-source.js';
import { RUN_FILES } from '../io/run-files.js';
import type { ClusterConfig } from '../config/config.js';
import { EmbeddedCluster } from '../cluster/index.js';
import type { WebhookServer } from '../cluster/admission-webhooks.js';
import type { ContainerFaults } from '../cluster/sim/index.js';
import { KubeApiError, KubeClient, type KubeClientOptions } from '../kube/client.js';
import {
  ExistingCluster,
  proxyUpstreamFor,
  RealCluster,
  type CleanupReport,
  type ControlPlaneBinaries,
  type ControlPlanePool,
  type ProxyUpstreamOptions,
} from '../realcluster/index.js';
import { isObject } from '../model/object-key.js';
import { claimLoopbackNetwork } from '../cluster/network.js';
import { sleep } from '../workload/runner.js';

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

/** How long the custom resources of the setup's CRDs may take to be served. */
export const CRD_SERVED_TIMEOUT_MS = 30_000;

/** A started cluster, as a run uses it. */
export interface RunCluster {
  url: string;
  /** The simulated kubelets' container faults (embedded and real clusters). */
  containerFaults?: ContainerFaults;
  /** Is the simulated managed system about to change by itself (embedded and real clusters)? A run's end waits for it. */
  transitionPending?: () => boolean;
  /** The emulated release (embedded clusters). */
  kubernetesVersion?: string;
  clientOptions: KubeClientOptions;
  proxyUpstream: ProxyUpstreamOptions;
  stop(): Promise<void>;
}

/** One kind of cluster: how to start one for a run, and what sets it apart. */
export interface ClusterProvider {
  readonly kind: ClusterChoice['kind'];
  /** Does it emulate the config's `cluster.kubernetesVersion` (the embedded cluster), or serve its own release? */
  readonly emulatesRelease: boolean;
  /** A real API server holds the first create of a new CRD's resources for 2 s (src/realcluster/crd-create-delay.ts). */
  readonly holdsFirstCustomResourceCreate: boolean;
  /** Shared by every run: what a run creates is deleted after it (src/realcluster/run-cleanup.ts). */
  readonly shared: boolean;
  /**
   * `settings`: the embedded cluster's emulated release. `reachable`: pods (and, on the embedded
   * cluster, Services) get loopback addresses where stub applications can listen
   * (src/cluster/network.ts). A real control plane allocates Service cluster IPs itself
   * (--service-cluster-ip-range), so there only pod IPs are reachable.
   */
  /** webhookServer: the controller's admission webhook server (the embedded cluster calls it; the others cannot). */
  start(runDir: string, settings: ClusterConfig, reachable: boolean, webhookServer?: WebhookServer): Promise<RunCluster>;
}

export function clusterProvider(choice: ClusterChoice): ClusterProvider {
  switch (choice.kind) {
    case 'embedded':
      return { kind: 'embedded', emulatesRelease: true, holdsFirstCustomResourceCreate: false, shared: false, start: startEmbedded };
    case 'real':
      return {
        kind: 'real',
        emulatesRelease: false,
        holdsFirstCustomResourceCreate: true,
        shared: false,
        start: (runDir, settings, reachable) => startReal(choice, runDir, settings, reachable),
      };
    case 'existing':
      return { kind: 'existing', emulatesRelease: false, holdsFirstCustomResourceCreate: true, shared: true, start: () => connectExisting(choice.kubeconfig) };
  }
}

async function startEmbedded(runDir: string, settings: ClusterConfig, reachable: boolean, webhookServer?: WebhookServer): Promise<RunCluster> {
  // The simulated controllers' log (a binding refused, a key dropped after its retries): what
  // explains a pod that never ran, kept with the run.
  const simLog = createWriteStream(join(runDir, RUN_FILES.clusterLog));
  simLog.on('error', () => undefined);
  const closeLog = () => new Promise<void>((resolve) => simLog.end(resolve));
  let cluster: EmbeddedCluster;
  try {
    cluster = await EmbeddedCluster.start({
      ...(settings.kubernetesVersion !== undefined ? { kubernetesVersion: settings.kubernetesVersion } : {}),
      network: reachable ? 'loopback' : 'default',
      ...(webhookServer ? { webhookServer } : {}),
      simulation: { log: (line) => void simLog.write(`${line}\n`), ...(settings.podReadiness ? { podReadiness: settings.podReadiness } : {}) },
    });
  } catch (err) {
    await closeLog();
    throw err;
  }
  const containerFaults = cluster.containerFaults;
  return {
    url: cluster.url,
    ...(containerFaults ? { containerFaults } : {}),
    transitionPending: () => cluster.transitionPending(),
    kubernetesVersion: cluster.kubernetesVersion,
    clientOptions: cluster.clientOptions(),
    proxyUpstream: proxyUpstreamFor(cluster.url, cluster.clientOptions()),
    stop: async () => {
      try {
        await cluster.stop();
      } finally {
        await closeLog();
      }
    },
  };
}

async function startReal(choice: Extract<ClusterChoice, { kind: 'real' }>, runDir: string, settings: ClusterConfig, reachable: boolean): Promise<RunCluster> {
  const network = reachable ? await claimLoopbackNetwork() : undefined;
  // The simulated kubelets beside the real control plane: their readiness as the config says.
  const simulation = { ...(network ? { network } : {}), ...(settings.podReadiness ? { podReadiness: settings.podReadiness } : {}) };
  try {
    const cluster = await RealCluster.start({
      ...(choice.binaries ? { binaries: choice.binaries } : {}),
      ...(choice.pool ? { pool: choice.pool } : {}),
      logDir: join(runDir, 'control-plane'),
      ...(Object.keys(simulation).length > 0 ? { simulation } : {}),
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
      transitionPending: () => cluster.transitionPending(),
      clientOptions,
      proxyUpstream: proxyUpstreamFor(cluster.url, clientOptions),
      stop,
    };
  } catch (err) {
    network?.release();
    throw err;
  }
}

async function connectExisting(kubeconfig: KubeconfigSource): Promise<RunCluster> {
  const cluster = await ExistingCluster.connect(kubeconfig);
  return { url: cluster.url, clientOptions: cluster.clientOptions(), proxyUpstream: cluster.proxyUpstream(), stop: () => cluster.stop() };
}

/**
 * A KubeClient whose lists are retried while the API server answers 429, as client-go's are: a real
 * kube-apiserver refuses lists of a custom resource with "storage is (re)initializing" for a moment
 * after its CRD is created or its accepted names change, and the cluster recorder lists every new
 * resource as soon as discovery serves it.
 */
export class RetryingKubeClient extends KubeClient {
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
