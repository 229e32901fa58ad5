/**
 * The embedded Kubernetes API server: an in-process, in-memory stand-in for kube-apiserver, served
 * over plain HTTP on 127.0.0.1 (no TLS; a bearer token, see `insecureNoAuth`), good enough for
 * kubectl, @kubernetes/client-node and client-go controllers.
 *
 *   const cluster = await EmbeddedCluster.start();
 *   writeFileSync(kubeconfigPath, cluster.kubeconfigYaml());
 *   ...
 *   await cluster.stop();
 *
 * Layout: registry.ts (which kinds exist) -> store.ts (objects, resourceVersions, history) ->
 * operations.ts (verbs and their rules; field-manager.ts for managed fields and server-side apply,
 * patch.ts for the patch types) -> server.ts (HTTP; discovery.ts, openapi.ts) and watch.ts (streams);
 * builtins.ts and kinds/ define the built-in kinds, controllers.ts the CRD and namespace controllers,
 * sim/ the simulated controllers. docs/embedded-cluster.md says what is supported and what differs.
 */
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { stringify } from 'yaml';
import { storageKey, ResourceRegistry } from './registry.js';
import { ObjectStore, type StoreChange } from './store.js';
import { Operations } from './operations.js';
import { builtinDefinitions, INITIAL_NAMESPACES } from './builtins.js';
import { CrdController, NamespaceController } from './controllers.js';
import { WatchHub } from './watch.js';
import { ApiServer } from './server.js';
import { AdmissionWebhooks, type WebhookServer } from './admission-webhooks.js';
import {
  DEFAULT_KUBERNETES_VERSION,
  KUBERNETES_VERSION_EXPECTED,
  formatKubernetesVersion,
  parseKubernetesVersion,
  watchListByDefault,
  type KubernetesVersion,
} from '../model/kube-version.js';
import { ClusterSimulation, type ContainerFaults, type SimulationOptions } from './sim/index.js';
import { PodStreaming } from '../streaming/pod-streaming.js';
import { NO_POD_STREAMING_RULES, type PodStreamingRules } from '../model/exec-rules.js';
import type { KubeClientOptions } from '../kube/client.js';
import { claimLoopbackNetwork, DEFAULT_NETWORK, type ClusterNetwork } from './network.js';
import { listenOnLoopback } from '../kube/loopback-listen.js';
import { answerUnauthorized, BearerTokenCheck, newBearerToken, refuseUpgradeUnauthorized, tokenPathPrefix } from '../kube/bearer-auth.js';

export interface EmbeddedClusterOptions {
  /** Port on 127.0.0.1; default 0 picks a free port. */
  port?: number;
  /**
   * Changes retained for resuming watches (and exact lists, continue tokens) from a resourceVersion;
   * default 10000. Older resourceVersions get 410 Expired, as after an etcd compaction.
   */
  watchHistorySize?: number;
  /** Interval of BOOKMARK events on watches that allow them; default 1000 ms (a real server: about a minute). 0 disables. */
  bookmarkIntervalMs?: number;
  /**
   * The simulated kube-controller-manager, scheduler and kubelets (src/cluster/sim), run as API
   * clients of this server; default on with default options. `false`: a bare API server.
   */
  simulation?: SimulationOptions | false;
  /**
   * What pods/exec, attach and log answer (kperturb.yaml's exec/logs rules); default none: success
   * with empty output. There are no containers: kubectl exec gets the rule's exit code and output.
   */
  podStreaming?: PodStreamingRules;
  /**
   * The Kubernetes release whose API surface is served ("1.18" ... "1.32", default "1.32"): which
   * group-versions exist (1.18-1.21 also serve apiextensions.k8s.io/v1beta1, policy/v1beta1,
   * batch/v1beta1...; 1.18-1.20 serve no policy/v1 or batch/v1 CronJob), the /version document and
   * whether aggregated discovery is answered. Behaviour otherwise stays v1.32's; see
   * docs/embedded-cluster.md. Throws `RangeError` for a release outside the range.
   */
  kubernetesVersion?: string;
  /**
   * kube-apiserver's feature gates that change answers here. `WatchList` (watches with
   * `sendInitialEvents`): on by default from 1.32 (beta), off before, as kube-apiserver's defaults
   * are (1.33 turned it off again; a test comparing with a 1.33 server turns it off here).
   */
  featureGates?: { WatchList?: boolean };
  /**
   * Where pod IPs and Service cluster IPs come from (src/cluster/network.ts): `default` 10.244.x /
   * 10.96.x as in kind clusters (nothing answers there); `loopback` a 127.X.0.0/16 block claimed for
   * this cluster, where stub applications can listen on pods' and Services' own addresses.
   */
  network?: 'default' | 'loopback';
  /**
   * Serve anyone who reaches the port. By default every request must carry the cluster's random
   * bearer token (`token`, in kubeconfigYaml() and clientOptions(); or as the path prefix of
   * tokenPathPrefix, which is how client-go sends it over plain HTTP), or gets 401; as on
   * kube-apiserver, /healthz, /livez, /readyz and /version answer without one. For tests that
   * speak raw HTTP.
   */
  insecureNoAuth?: boolean;
  /**
   * The controller's admission webhook server on 127.0.0.1 (kperturb.yaml's controller.webhookServer):
   * validating webhooks that name a Service are sent there (src/cluster/admission-webhooks.ts); without
   * it only webhooks with a `url` are called.
   */
  webhookServer?: WebhookServer;
}

/** What kube-apiserver serves to anonymous clients (the system:public-info-viewer role). */
const PUBLIC_PATHS: ReadonlySet<string> = new Set(['/healthz', '/livez', '/readyz', '/version']);

function isPublicPath(url: string | undefined): boolean {
  const path = (url ?? '/').split('?')[0]!;
  return PUBLIC_PATHS.has(path.length > 1 ? path.replace(/\/+$/, '') : path);
}

export type { StoreChange } from './store.js';

export const KUBECONFIG_NAME = 'kperturb-embedded';

export class EmbeddedCluster {
  private stopping: Promise<void> | undefined;
  private simulation: ClusterSimulation | undefined;

  private constructor(
    /** The addresses this cluster hands out to pods and Services. */
    readonly network: ClusterNetwork,
    private readonly server: Server,
    private readonly sockets: ReadonlySet<Socket>,
    private readonly watches: WatchHub,
    private readonly stopControllers: Array<() => void>,
    private readonly store: ObjectStore,
    readonly port: number,
    private readonly release: KubernetesVersion,
    /** The bearer token clients must present; undefined with `insecureNoAuth`. */
    readonly token: string | undefined,
  ) {}

  /** The emulated Kubernetes release, e.g. "1.18". */
  get kubernetesVersion(): string {
    return formatKubernetesVersion(this.release);
  }

  /**
   * Compacts the change history through `resourceVersion` (default: the current one), as an etcd
   * compaction would: watches, exact lists and continue tokens from older resourceVersions get 410.
   */
  compact(resourceVersion?: number): void {
    this.store.compact(resourceVersion);
  }

  /**
   * The retained changes after `resourceVersion`, oldest first (what a watch from it replays), or
   * undefined when some were compacted: the cluster's own record of its history, independent of
   * watch delivery, for checking what watchers received.
   */
  changesAfter(resourceVersion: number): ReadonlyArray<Readonly<StoreChange>> | undefined {
    return this.store.changesAfter(resourceVersion);
  }

  /** The latest resourceVersion (what a list returns now). */
  get resourceVersion(): number {
    return this.store.resourceVersion;
  }

  /** Number of objects stored, over all kinds. */
  get objectCount(): number {
    return this.store.size;
  }

  /** The simulated kubelets' container faults (pod-crash plans); undefined without a simulation or its kubelets. */
  get containerFaults(): ContainerFaults | undefined {
    return this.simulation?.containerFaults;
  }

  /** Is the simulated managed system about to change by itself (ClusterSimulation.transitionPending)? */
  transitionPending(): boolean {
    return this.simulation?.transitionPending() ?? false;
  }

  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  static async start(options: EmbeddedClusterOptions = {}): Promise<EmbeddedCluster> {
    const release = parseKubernetesVersion(options.kubernetesVersion ?? DEFAULT_KUBERNETES_VERSION);
    if (!release) throw new RangeError(`kubernetesVersion ${JSON.stringify(options.kubernetesVersion)}: expected ${KUBERNETES_VERSION_EXPECTED}`);
    const network = options.network === 'loopback' ? await claimLoopbackNetwork() : DEFAULT_NETWORK;
    const registry = new ResourceRegistry();
    for (const def of builtinDefinitions(release, network)) registry.define(def);
    const store = new ObjectStore(options.watchHistorySize ?? 10000);
    const ops = new Operations(store, registry);
    const watches = new WatchHub(store, { bookmarkIntervalMs: options.bookmarkIntervalMs ?? 1000 });
    registry.onRemove((def) => watches.closeResource(storageKey(def)));
    // Namespace finalization moves to the simulated namespace controller when that one runs.
    const simulatesNamespaces = options.simulation !== false && (options.simulation?.controllers?.includes('namespace') ?? true);
    const controllers = [
      new CrdController(store, registry, ops).start(),
      ...(simulatesNamespaces ? [] : [new NamespaceController(store, registry, ops).start()]),
    ];
    const nsDef = registry.get({ group: '', resource: 'namespaces' })!;
    const system = { fieldManager: 'kube-apiserver' };
    for (const name of INITIAL_NAMESPACES) ops.create({ def: nsDef, version: 'v1' }, { metadata: { name } }, system);
    createKubernetesService(registry, ops, network);

    let port = 0;
    let api: ApiServer | undefined;
    const podStreaming = new PodStreaming(
      options.podStreaming ?? NO_POD_STREAMING_RULES,
      (namespace, name) => api!.lookupPod(namespace, name),
      (name) => api!.lookupNode(name),
    );
    api = new ApiServer({
      registry,
      ops,
      watches,
      serverAddress: () => `127.0.0.1:${port}`,
      podStreaming,
      kubernetesVersion: release,
      watchList: options.featureGates?.WatchList ?? watchListByDefault(release),
      admission: new AdmissionWebhooks(store, options.webhookServer),
    });
    const token = options.insecureNoAuth ? undefined : newBearerToken();
    const auth = token === undefined ? undefined : new BearerTokenCheck(token);
    // A wrong token is refused even on the public paths, as kube-apiserver's authenticator does.
    const admitted = (req: IncomingMessage) => !auth || auth.admits(req) || (req.headers.authorization === undefined && isPublicPath(req.url));
    const server = createServer({ keepAliveTimeout: 30_000 }, (req, res) => {
      if (admitted(req)) api.listener(req, res);
      else {
        req.resume();
        answerUnauthorized(res);
      }
    });
    server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
      if (admitted(req)) api.upgradeListener(req, socket, head);
      else refuseUpgradeUnauthorized(socket);
    });
    server.on('clientError', (_err, socket) => {
      if (socket.writable) socket.end('HTTP/1.1 400 Bad Request\r\nConnection: close\r\n\r\n');
      else socket.destroy();
    });
    const sockets = new Set<Socket>();
    server.on('connection', (socket) => {
      sockets.add(socket);
      socket.on('close', () => sockets.delete(socket));
    });
    try {
      port = await listenOnLoopback(server, options.port ?? 0);
    } catch (err) {
      network.release();
      throw err;
    }
    const cluster = new EmbeddedCluster(network, server, sockets, watches, controllers, store, port, release, token);
    if (options.simulation !== false) {
      try {
        cluster.simulation = await ClusterSimulation.start(cluster.url, { network, ...(options.simulation ?? {}) }, cluster.clientOptions());
      } catch (err) {
        await cluster.stop();
        throw err;
      }
    }
    return cluster;
  }

  /**
   * A kubeconfig whose current context (`kperturb-embedded`) points at this server, namespace `default`,
   * with the token both as the user's token and as the server URL's path (tokenPathPrefix: client-go
   * sends no token over plain HTTP).
   * `insecure-skip-tls-verify` is set because @kubernetes/client-node refuses http:// servers without it;
   * kubectl and client-go ignore it for plain HTTP.
   */
  kubeconfigYaml(): string {
    return stringify({
      apiVersion: 'v1',
      kind: 'Config',
      clusters: [
        {
          name: KUBECONFIG_NAME,
          cluster: { server: this.token === undefined ? this.url : this.url + tokenPathPrefix(this.token), 'insecure-skip-tls-verify': true },
        },
      ],
      users: [{ name: KUBECONFIG_NAME, user: this.token === undefined ? {} : { token: this.token } }],
      contexts: [{ name: KUBECONFIG_NAME, context: { cluster: KUBECONFIG_NAME, user: KUBECONFIG_NAME, namespace: 'default' } }],
      'current-context': KUBECONFIG_NAME,
      preferences: {},
    });
  }

  /** What KubeClient needs to talk to this server: its bearer token (plain HTTP). */
  clientOptions(): KubeClientOptions {
    return this.token === undefined ? {} : { token: this.token };
  }

  /** Stops listening and ends every open connection and watch right away. */
  stop(): Promise<void> {
    const simulationStopped = this.simulation?.stop() ?? Promise.resolve();
    this.stopping ??= simulationStopped.then(() =>
      new Promise<void>((resolve) => {
        for (const stop of this.stopControllers) stop();
        this.watches.closeAll();
        this.server.close(() => resolve());
        for (const socket of this.sockets) socket.destroy();
        this.server.closeAllConnections();
      }).finally(() => this.network.release()),
    );
    return this.stopping;
  }
}

/**
 * The `kubernetes` Service and Endpoints in `default` that kube-apiserver maintains for itself
 * (clusterIP: the first address of the service range, 10.96.0.1 by default).
 */
function createKubernetesService(registry: ResourceRegistry, ops: Operations, network: ClusterNetwork): void {
  const system = { fieldManager: 'kube-apiserver' };
  const svc = registry.get({ group: '', resource: 'services' })!;
  const labels = { component: 'apiserver', provider: 'kubernetes' };
  ops.create(
    { def: svc, version: 'v1', namespace: 'default' },
    {
      metadata: { name: 'kubernetes', labels },
      spec: {
        clusterIP: network.kubernetesServiceIp,
        ports: [{ name: 'https', port: 443, protocol: 'TCP', targetPort: 6443 }],
        sessionAffinity: 'None',
        type: 'ClusterIP',
      },
    },
    system,
  );
  const ep = registry.get({ group: '', resource: 'endpoints' })!;
  ops.create(
    { def: ep, version: 'v1', namespace: 'default' },
    {
      metadata: { name: 'kubernetes', labels: { 'endpointslice.kubernetes.io/skip-mirror': 'true' } },
      subsets: [{ addresses: [{ ip: '127.0.0.1' }], ports: [{ name: 'https', port: 6443, protocol: 'TCP' }] }],
    },
    system,
  );
}
