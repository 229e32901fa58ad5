/**
 * The embedded Kubernetes API server: an in-process, in-memory stand-in for kube-apiserver, served
 * over plain HTTP on 127.0.0.1 (no TLS, no authentication), good enough for kubectl,
 * @kubernetes/client-node and client-go controllers.
 *
 *   const cluster = await EmbeddedCluster.start();
 *   writeFileSync(kubeconfigPath, cluster.kubeconfigYaml());
 *   ...
 *   await cluster.stop();
 *
 * Layout: registry.ts (which kinds exist) -> store.ts (objects, resourceVersions, history) ->
 * operations.ts (verbs and their rules) -> server.ts (HTTP) and watch.ts (streams); builtins.ts and
 * controllers.ts define the built-in kinds and the CRD and namespace controllers. See docs in each file.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { stringify } from 'yaml';
import { resourceKey, ResourceRegistry } from './registry.js';
import { ObjectStore } from './store.js';
import { Operations } from './operations.js';
import { builtinDefinitions, INITIAL_NAMESPACES } from './builtins.js';
import { CrdController, NamespaceController } from './controllers.js';
import { WatchHub } from './watch.js';
import { ApiServer } from './server.js';

export interface EmbeddedClusterOptions {
  /** Port on 127.0.0.1; default 0 picks a free port. */
  port?: number;
  /** Changes retained for resuming watches from a resourceVersion; default 10000. Older ones get 410 Expired. */
  watchHistorySize?: number;
  /** Interval of BOOKMARK events on watches that allow them; default 1000 ms (a real server: about a minute). 0 disables. */
  bookmarkIntervalMs?: number;
}

export const KUBECONFIG_NAME = 'kperturb-embedded';

export class EmbeddedCluster {
  private stopping: Promise<void> | undefined;

  private constructor(
    private readonly server: Server,
    private readonly sockets: ReadonlySet<Socket>,
    private readonly watches: WatchHub,
    private readonly stopControllers: Array<() => void>,
    readonly port: number,
  ) {}

  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  static async start(options: EmbeddedClusterOptions = {}): Promise<EmbeddedCluster> {
    const registry = new ResourceRegistry();
    for (const def of builtinDefinitions()) registry.define(def);
    const store = new ObjectStore(options.watchHistorySize ?? 10000);
    const ops = new Operations(store, registry);
    const watches = new WatchHub(store, { bookmarkIntervalMs: options.bookmarkIntervalMs ?? 1000 });
    registry.onRemove((def) => watches.closeResource(resourceKey(def)));
    const controllers = [new CrdController(store, registry, ops).start(), new NamespaceController(store, registry, ops).start()];
    const nsDef = registry.get({ group: '', resource: 'namespaces' })!;
    for (const name of INITIAL_NAMESPACES) ops.create({ def: nsDef, version: 'v1' }, { metadata: { name } });

    let port = 0;
    const api = new ApiServer({ registry, ops, watches, serverAddress: () => `127.0.0.1:${port}` });
    const server = createServer({ keepAliveTimeout: 30_000 }, api.listener);
    server.on('clientError', (_err, socket) => {
      if (socket.writable) socket.end('HTTP/1.1 400 Bad Request\r\nConnection: close\r\n\r\n');
      else socket.destroy();
    });
    const sockets = new Set<Socket>();
    server.on('connection', (socket) => {
      sockets.add(socket);
      socket.on('close', () => sockets.delete(socket));
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(options.port ?? 0, '127.0.0.1', () => {
        server.off('error', reject);
        resolve();
      });
    });
    port = (server.address() as AddressInfo).port;
    return new EmbeddedCluster(server, sockets, watches, controllers, port);
  }

  /**
   * A kubeconfig whose current context (`kperturb-embedded`) points at this server, namespace `default`.
   * `insecure-skip-tls-verify` is set because @kubernetes/client-node refuses http:// servers without it;
   * kubectl and client-go ignore it for plain HTTP.
   */
  kubeconfigYaml(): string {
    return stringify({
      apiVersion: 'v1',
      kind: 'Config',
      clusters: [{ name: KUBECONFIG_NAME, cluster: { server: this.url, 'insecure-skip-tls-verify': true } }],
      users: [{ name: KUBECONFIG_NAME, user: {} }],
      contexts: [{ name: KUBECONFIG_NAME, context: { cluster: KUBECONFIG_NAME, user: KUBECONFIG_NAME, namespace: 'default' } }],
      'current-context': KUBECONFIG_NAME,
      preferences: {},
    });
  }

  /** Stops listening and ends every open connection and watch right away. */
  stop(): Promise<void> {
    this.stopping ??= new Promise<void>((resolve) => {
      for (const stop of this.stopControllers) stop();
      this.watches.closeAll();
      this.server.close(() => resolve());
      for (const socket of this.sockets) socket.destroy();
      this.server.closeAllConnections();
    });
    return this.stopping;
  }
}
