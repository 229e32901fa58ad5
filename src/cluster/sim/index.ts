/**
 * The cluster simulation: what kube-controller-manager, kube-scheduler and kubelets would do, run as
 * ordinary API clients (list + watch + writes over HTTP) against any API server - the embedded one by
 * default, or a real kube-apiserver that has no kubelets. Their writes therefore show up in kperturb's
 * cluster trace exactly as a real cluster's would.
 *
 *   const sim = await ClusterSimulation.start(cluster.url, { nodes: ['node-1', 'node-2'] });
 *   ...
 *   await sim.stop();
 *
 * Each simulated controller lives in its own file and names the real controller it follows;
 * runtime.ts has the shared machinery (work queues, deterministic scheduling, write helpers).
 * A controller whose kinds the server does not serve is skipped (see `skipped`).
 */
import { KubeClient, type KubeClientOptions } from '../../kube/client.js';
import { InformerFactory } from '../../kube/informer.js';
import { CertManagerController } from './cert-manager.js';
import { DaemonSetController } from './daemonset-controller.js';
import { DeploymentController } from './deployment-controller.js';
import { DisruptionController } from './disruption-controller.js';
import { EndpointsController } from './endpoints-controller.js';
import { SimEvents } from './events.js';
import { GarbageCollector } from './garbage-collector.js';
import { JobController } from './job-controller.js';
import { Kubelets } from './kubelet.js';
import { NamespaceController } from './namespace-controller.js';
import { NodeLifecycle, NodeOutages, type NodeOutage } from './node-lifecycle.js';
import { NodeAgent } from './nodes.js';
import { ReplicaSetController } from './replicaset-controller.js';
import { NameGenerator, SimApi, WorkRunner, type SimContext, type SimTiming } from './runtime.js';
import type { PodReadiness } from '../../model/pod-readiness.js';
import { Scheduler } from './scheduler.js';
import { DEFAULT_NETWORK, type ClusterNetwork } from '../network.js';
import { ServiceAccountController } from './serviceaccount-controller.js';
import { StatefulSetController } from './statefulset-controller.js';
import { VolumeController, type ClaimFaultMode } from './volume-controller.js';
import type { ContainerFaultMode } from './pod-lifecycle.js';

export type { ContainerFaultMode } from './kubelet.js';
export type { NodeOutage, NodeOutageMode } from './node-lifecycle.js';
export type { ClaimFaultMode } from './volume-controller.js';

/**
 * The faults kperturb injects into the simulated managed system (src/coordinator/faults/: pod-crash,
 * node-not-ready, pod-evict, pvc-fault): each part acts as the component it stands in for would.
 * Each returns why it cannot act, if it cannot (the part does not run, the object is not there).
 */
export interface ContainerFaults {
  /** The kubelet of the pod's node crash-loops its containers or makes them unready (undefined: clears); false when no simulated kubelet runs the pod now. */
  setContainerFault(namespace: string, name: string, mode: ContainerFaultMode | undefined): boolean;
  /** A node outage as the node lifecycle and taint eviction controllers react to it (undefined: the heal). */
  setNodeOutage(node: string, outage: NodeOutage | undefined): string | undefined;
  /** Someone else removes the pod: through the eviction subresource or a plain delete. */
  removePod(namespace: string, name: string, how: 'evict' | 'delete'): Promise<string | undefined>;
  /** The claim stays Pending, loses its volume, or has its resize refused (undefined: clears). */
  setClaimFault(namespace: string, name: string, mode: ClaimFaultMode | undefined): string | undefined;
}

export const SIMULATED_CONTROLLERS = [
  'node',
  'garbage-collector',
  'namespace',
  'serviceaccount',
  'deployment',
  'replicaset',
  'statefulset',
  'daemonset',
  'job',
  'persistentvolume',
  'endpoints',
  'disruption',
  'scheduler',
  'kubelet',
  // not kube-controller-manager's: acts once cert-manager's CRDs are applied, as installing cert-manager does (cert-manager.ts)
  'cert-manager',
] as const;
export type SimulatedController = (typeof SIMULATED_CONTROLLERS)[number];

/**
 * What a real kube-apiserver + kube-controller-manager lacks: nodes, a scheduler and kubelets (add
 * 'persistentvolume' when the cluster has no volume provisioner).
 */
export const KUBELET_CONTROLLERS: readonly SimulatedController[] = ['node', 'scheduler', 'kubelet'];

export interface SimulationOptions {
  /** Simulated node names; default ['node-1']. */
  nodes?: string[];
  /** From creation to the scheduler's binding; default 0. */
  podScheduleDelayMs?: number;
  /** From binding (status Pending, ContainerCreating) to Running and Ready; default 100. 0 skips the Pending status write. */
  podStartDelayMs?: number;
  /** How long containers take to stop after a pod's deletion (capped by its grace period); default 50. */
  podStopDelayMs?: number;
  /** How long pods with restartPolicy Never/OnFailure (Job pods) run before exiting 0; default 500. */
  podRunToCompletionMs?: number;
  /** From a PVC's creation to its binding (dynamic provisioning); default 0. */
  volumeBindDelayMs?: number;
  /** Node Lease renewal interval; default 0 (off). A real kube-controller-manager needs it (10000). */
  nodeHeartbeatMs?: number;
  /** The first restart back-off of a container crashed by a pod-crash fault; default 10000, as a kubelet's. */
  crashBackOffMs?: number;
  /**
   * When a started pod is first ready: 'immediate' (default) at Running; 'probe' after the longest
   * initialDelaySeconds of its containers' readiness probes, as a kubelet reports it (slower: 10 s
   * for a RabbitMQ node), so that what a controller does while its pods start is seen.
   */
  podReadiness?: PodReadiness;
  /**
   * The 'persistentvolume' controller binds PVCs and PVs and runs pvc/pv-protection, as
   * kube-controller-manager does; default true. Set false next to a real kube-controller-manager: the
   * controller then only provisions PVs (pre-bound to their claim, as an external provisioner does)
   * and deletes the released ones it provisioned.
   */
  bindVolumes?: boolean;
  /** Events from the simulated components, as the real ones write them; default true. */
  events?: boolean;
  /** One worker, keys in a stable order, fixed delays and counter-derived names, for reproducible runs. */
  deterministic?: boolean;
  /** Where pod IPs and node pod CIDRs come from (src/cluster/network.ts); default DEFAULT_NETWORK. */
  network?: ClusterNetwork;
  /** Controllers to run; default all of SIMULATED_CONTROLLERS. */
  controllers?: readonly SimulatedController[];
  /** Receives one line per notable action or error; default: discarded. */
  log?: (line: string) => void;
}

interface Stoppable {
  stop?(): void;
}
/** A started controller; some have something to stop. */
type Started = object;

const STARTERS: Record<Exclude<SimulatedController, 'node'>, (ctx: SimContext, runner: WorkRunner) => Promise<Started | undefined>> = {
  'garbage-collector': GarbageCollector.start,
  namespace: NamespaceController.start,
  serviceaccount: ServiceAccountController.start,
  deployment: DeploymentController.start,
  replicaset: ReplicaSetController.start,
  statefulset: StatefulSetController.start,
  daemonset: DaemonSetController.start,
  job: JobController.start,
  persistentvolume: VolumeController.start,
  endpoints: EndpointsController.start,
  disruption: DisruptionController.start,
  scheduler: Scheduler.start,
  kubelet: Kubelets.start,
  'cert-manager': CertManagerController.start,
};

export class ClusterSimulation {
  private stopping: Promise<void> | undefined;

  private constructor(
    private readonly client: KubeClient,
    private readonly informers: InformerFactory,
    private readonly runner: WorkRunner,
    private readonly events: SimEvents,
    private readonly parts: Started[],
    /** Controllers not started because the server does not serve their kinds. */
    readonly skipped: readonly SimulatedController[],
  ) {}

  static async start(server: string, options: SimulationOptions = {}, clientOptions: KubeClientOptions = {}): Promise<ClusterSimulation> {
    const log = options.log ?? (() => undefined);
    const client = new KubeClient(server, clientOptions);
    const informers = new InformerFactory(client, (m) => log(`informer: ${m}`));
    const deterministic = options.deterministic === true;
    const runner = new WorkRunner(deterministic, log, SIMULATED_CONTROLLERS);
    const names = new NameGenerator(deterministic);
    let eventsV1Served: boolean;
    try {
      await client.resources.all(); // one discovery read for every controller's kind lookups
      eventsV1Served = (await client.resources.byKind('Event', 'events.k8s.io/v1')) !== undefined;
    } catch (err) {
      client.close();
      throw err;
    }
    const events = new SimEvents(client, deterministic, log, eventsV1Served, options.events ?? true);
    if (deterministic) runner.setAfterReconcile(() => events.flush());
    const timing: SimTiming = {
      podScheduleDelayMs: options.podScheduleDelayMs ?? 0,
      podStartDelayMs: options.podStartDelayMs ?? 100,
      podStopDelayMs: options.podStopDelayMs ?? 50,
      podRunToCompletionMs: options.podRunToCompletionMs ?? 500,
      volumeBindDelayMs: options.volumeBindDelayMs ?? 0,
      nodeHeartbeatMs: options.nodeHeartbeatMs ?? 0,
      crashBackOffMs: options.crashBackOffMs ?? 10_000,
      podReadiness: options.podReadiness ?? 'immediate',
    };
    const ctx: SimContext = {
      client,
      informers,
      api: new SimApi(client),
      events,
      timing,
      nodes: options.nodes ?? ['node-1'],
      network: options.network ?? DEFAULT_NETWORK,
      deterministic,
      bindVolumes: options.bindVolumes ?? true,
      outages: new NodeOutages(),
      log,
      nameFor: (prefix) => names.nameFor(prefix),
    };
    const wanted = new Set(options.controllers ?? SIMULATED_CONTROLLERS);
    const parts: Started[] = [];
    const skipped: SimulatedController[] = [];
    try {
      if (wanted.has('node')) {
        const agent = await NodeAgent.start(ctx);
        const lifecycle = agent && (await NodeLifecycle.start(ctx));
        if (agent) parts.push(agent);
        else skipped.push('node');
        if (lifecycle) parts.push(lifecycle);
      }
      const started = await Promise.all(
        SIMULATED_CONTROLLERS.filter((n): n is Exclude<SimulatedController, 'node'> => n !== 'node' && wanted.has(n)).map(async (name) => {
          const part = await STARTERS[name](ctx, runner);
          if (!part) skipped.push(name);
          return part;
        }),
      );
      for (const part of started) if (part) parts.push(part);
    } catch (err) {
      runner.stop();
      await informers.stop();
      client.close();
      throw err;
    }
    skipped.sort((a, b) => SIMULATED_CONTROLLERS.indexOf(a) - SIMULATED_CONTROLLERS.indexOf(b));
    if (skipped.length > 0) log(`simulation: not started (kinds not served): ${skipped.join(', ')}`);
    return new ClusterSimulation(client, informers, runner, events, parts, skipped);
  }

  /**
   * Is a change of the managed system pending that it makes by itself soon (a pod about to start, or
   * to turn ready after its readiness probe's initial delay), or are its controllers at work on one
   * (a key queued or being reconciled: a pod the scheduler has yet to bind, a kubelet's first sync of
   * it)? A run has not settled while one is: its end state would depend on whether it ended before.
   * Back-off and requeue timers do not count (a crash loop is a state, not a change about to end).
   */
  transitionPending(): boolean {
    return !this.runner.idle() || this.parts.some((p) => p instanceof Kubelets && p.pendingUntil() !== undefined);
  }

  /** The faults of the simulated managed system (pod-crash, node-not-ready, pod-evict, pvc-fault plans); undefined when no kubelet runs. */
  get containerFaults(): ContainerFaults | undefined {
    const kubelets = this.parts.find((p): p is Kubelets => p instanceof Kubelets);
    if (!kubelets) return undefined;
    const nodes = this.parts.find((p): p is NodeLifecycle => p instanceof NodeLifecycle);
    const volumes = this.parts.find((p): p is VolumeController => p instanceof VolumeController);
    return {
      setContainerFault: (namespace, name, mode) => kubelets.setContainerFault(namespace, name, mode),
      setNodeOutage: (node, outage) => (nodes ? nodes.setOutage(node, outage) : 'the simulation runs no node controller'),
      removePod: (namespace, name, how) => this.removePod(namespace, name, how),
      setClaimFault: (namespace, name, mode) =>
        volumes ? volumes.setClaimFault(namespace, name, mode) : 'the simulation runs no volume controller (a real cluster provisions its volumes)',
    };
  }

  /** What `kubectl drain` (evict) or `kubectl delete pod` does; the owner's simulated controller recreates the pod. */
  private async removePod(namespace: string, name: string, how: 'evict' | 'delete'): Promise<string | undefined> {
    const info = await this.client.resources.byKind('Pod', 'v1');
    if (!info) return 'the cluster serves no pods';
    const api = new SimApi(this.client);
    try {
      if (how === 'evict') {
        await api.post(info, namespace, name, 'eviction', { apiVersion: 'policy/v1', kind: 'Eviction', metadata: { name, namespace } });
      } else if (!(await api.delete(info, namespace, name))) {
        return `Pod ${namespace}/${name} does not exist when the fault starts`;
      }
      return undefined;
    } catch (err) {
      return `${how === 'evict' ? 'the eviction' : 'the delete'} of Pod ${namespace}/${name} failed: ${(err as Error).message}`;
    }
  }

  /** Stops every controller and watch; pending timers are dropped. */
  stop(): Promise<void> {
    this.stopping ??= (async () => {
      this.runner.stop();
      this.events.stop();
      for (const part of this.parts) (part as Stoppable).stop?.();
      await this.informers.stop();
      this.client.close();
    })();
    return this.stopping;
  }
}
