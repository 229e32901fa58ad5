/**
 * A real cluster kperturb can run workloads on: the real control plane (control-plane.ts) plus the
 * simulated nodes, scheduler and kubelets of src/cluster/sim running as its API clients, because
 * pods never run without kubelets. The counterpart of EmbeddedCluster, with the same surface
 * (url, kubeconfigYaml(), stop()) plus the credentials every client needs.
 *
 *   const cluster = await RealCluster.start({ log });
 *   const client = new KubeClient(cluster.url, cluster.clientOptions());
 *   ...
 *   await cluster.stop();
 */
import type { KubeClientOptions } from '../kube/client.js';
import { ClusterSimulation, KUBELET_CONTROLLERS, type ContainerFaults, type SimulationOptions } from '../cluster/sim/index.js';
import { startRealControlPlane, type ControlPlaneStartTimes, type RealControlPlane, type RealControlPlaneOptions } from './control-plane.js';
import type { ControlPlanePool } from './pool.js';

export interface RealClusterOptions extends RealControlPlaneOptions {
  /**
   * The simulation run against the control plane; default: simulated nodes (with Lease heartbeats,
   * which kube-controller-manager's node lifecycle controller needs), scheduler, kubelets and volume
   * provisioning (nothing else provisions PersistentVolumes). The workload controllers are the real
   * kube-controller-manager's. `false`: none (pods stay Pending).
   */
  simulation?: SimulationOptions | false;
  /**
   * Take the control plane from this pool (started ahead, never used before) instead of starting
   * one; the other control-plane options are then the pool's, and `logDir` is where stop() copies
   * the components' logs.
   */
  pool?: ControlPlanePool;
}

/** Nodes, scheduler, kubelets, volumes, and cert-manager once its CRDs are applied: what kube-apiserver + kube-controller-manager lack. */
export const REAL_CLUSTER_SIMULATION: SimulationOptions = {
  controllers: [...KUBELET_CONTROLLERS, 'persistentvolume', 'cert-manager'],
  nodeHeartbeatMs: 10_000,
  // kube-controller-manager's PV controller binds claims; ours only provisions pre-bound volumes.
  bindVolumes: false,
};

export class RealCluster {
  private stopping: Promise<void> | undefined;

  private constructor(
    readonly controlPlane: RealControlPlane,
    private readonly simulation: ClusterSimulation | undefined,
    /** Control plane start-up phases plus the simulation's start, in ms (for a pooled control plane, its start ahead). */
    readonly startTimes: ControlPlaneStartTimes & { simulation: number },
    /** Where stop() copies the control plane's logs (a pooled control plane's). */
    private readonly keepLogsIn: string | undefined,
  ) {}

  get url(): string {
    return this.controlPlane.url;
  }

  /** The simulated kubelets' container faults (pod-crash plans); undefined without the simulation. */
  get containerFaults(): ContainerFaults | undefined {
    return this.simulation?.containerFaults;
  }

  /** Is the simulated managed system about to change by itself (ClusterSimulation.transitionPending)? */
  transitionPending(): boolean {
    return this.simulation?.transitionPending() ?? false;
  }

  static async start(options: RealClusterOptions = {}): Promise<RealCluster> {
    const controlPlane = options.pool ? await options.pool.take() : await startRealControlPlane(options);
    const keepLogsIn = options.pool ? options.logDir : undefined;
    const started = Date.now();
    let simulation: ClusterSimulation | undefined;
    if (options.simulation !== false) {
      const simOptions: SimulationOptions = { ...REAL_CLUSTER_SIMULATION, ...(options.log ? { log: options.log } : {}), ...(options.simulation ?? {}) };
      try {
        simulation = await ClusterSimulation.start(controlPlane.url, simOptions, controlPlane.clientOptions());
      } catch (err) {
        await controlPlane.stop(keepLogsIn !== undefined ? { keepLogsIn } : {});
        throw err;
      }
    }
    return new RealCluster(controlPlane, simulation, { ...controlPlane.startTimes, simulation: Date.now() - started }, keepLogsIn);
  }

  /** Admin kubeconfig (https, CA embedded, bearer token). */
  kubeconfigYaml(): string {
    return this.controlPlane.kubeconfigYaml();
  }

  clientOptions(): KubeClientOptions {
    return this.controlPlane.clientOptions();
  }

  /** Stops the simulation, then the control plane (deleting its data). Idempotent. */
  stop(): Promise<void> {
    this.stopping ??= (async () => {
      try {
        await this.simulation?.stop();
      } finally {
        await this.controlPlane.stop(this.keepLogsIn !== undefined ? { keepLogsIn: this.keepLogsIn } : {});
      }
    })();
    return this.stopping;
  }
}
