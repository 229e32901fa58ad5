/**
 * Stub applications (kperturb.yaml `applications:`): for each, a listener on the IP of every
 * selected pod while it runs (closed, with its connections, when the pod stops or is being deleted,
 * so the controller gets connection refused as from a dead pod) and on the cluster IP of every named
 * Service while it exists. The addresses are reachable when the cluster hands out loopback addresses
 * (src/cluster/network.ts); elsewhere binding fails and the stub says so once per address.
 * Every call a stub answers goes into the cluster trace as an `app-call` event.
 *
 * All listeners of one zookeeper application serve one ensemble (one data tree). When the last of
 * its pods stops, the tree is emptied: the next pods start a new ensemble, as when a cluster is
 * deleted with its volumes and created again.
 */
import { createServer, type Server, type Socket } from 'node:net';
import type { Server as HttpServer } from 'node:http';
import { isServingPod, podServingIp, serviceClusterIp, DEFAULT_HTTP_ANSWER, type ApplicationConfig } from '../model/applications.js';
import type { ObjectKey } from '../model/object-key.js';
import type { AppCallEvent, TraceSink, Unstamped } from '../model/trace.js';
import { PodsAndServices, type PodsAndServicesView, type TrackedChange } from './cluster-objects.js';
import { createHttpStub } from './http.js';
import { ZooKeeperEnsemble } from './zookeeper.js';

interface Listener {
  ip: string;
  server: Server | HttpServer;
  sockets: Set<Socket>;
  listening: boolean;
}

class ApplicationStub {
  private readonly listeners = new Map<ObjectKey, Listener>();
  private readonly ensemble: ZooKeeperEnsemble | undefined;
  /** Addresses already reported as unusable, so that each is reported once. */
  private readonly reported = new Set<string>();
  private hadPods = false;

  constructor(
    readonly app: ApplicationConfig,
    private readonly trace: Pick<TraceSink, 'append'>,
    private readonly log: (line: string) => void,
  ) {
    this.ensemble = app.protocol === 'zookeeper' ? new ZooKeeperEnsemble() : undefined;
  }

  /** Brings the listener of `key` in line with the object's current state. */
  update(kind: 'Pod' | 'Service', key: ObjectKey, objects: PodsAndServices): void {
    const obj = kind === 'Pod' ? objects.pods.get(key) : objects.services.get(key);
    let ip: string | undefined;
    if (obj && kind === 'Pod' && isServingPod(this.app, obj)) ip = podServingIp(obj);
    if (obj && kind === 'Service' && obj.metadata?.namespace === this.app.namespace && this.app.services.includes(obj.metadata?.name ?? ''))
      ip = serviceClusterIp(obj);
    const current = this.listeners.get(key);
    if (current?.ip === ip) return;
    if (current) this.close(key, current);
    if (ip) this.open(key, ip);
    if (kind === 'Pod' && this.ensemble) {
      const pods = [...this.listeners.keys()].some((k) => k.startsWith('Pod/'));
      if (this.hadPods && !pods) {
        this.ensemble.reset();
        this.log(`application ${this.app.name}: its last pod stopped; the ZooKeeper data tree starts over`);
      }
      this.hadPods = pods;
    }
  }

  private open(key: ObjectKey, ip: string): void {
    const sockets = new Set<Socket>();
    const address = `${ip}:${this.app.port}`;
    const call = (c: Omit<Unstamped<AppCallEvent>, 'type' | 'application' | 'protocol' | 'key' | 'address'>) =>
      this.trace.append({ type: 'app-call', application: this.app.name, protocol: this.app.protocol, key, address, ...c });
    let server: Server | HttpServer;
    if (this.ensemble) {
      const ensemble = this.ensemble;
      server = createServer((socket) => ensemble.serve(socket, (c) => call(c)));
    } else {
      server = createHttpStub(this.app.http ?? { rules: [], default: DEFAULT_HTTP_ANSWER }, (c) =>
        call({ operation: c.method, path: c.path, result: c.status, ...(c.rule !== undefined ? { rule: c.rule } : {}) }),
      );
    }
    const listener: Listener = { ip, server, sockets, listening: false };
    server.on('connection', (socket: Socket) => {
      sockets.add(socket);
      socket.on('close', () => sockets.delete(socket));
    });
    server.on('error', (err: NodeJS.ErrnoException) => {
      if (this.listeners.get(key) === listener) this.listeners.delete(key);
      if (!this.reported.has(address)) {
        this.reported.add(address);
        const hint = err.code === 'EADDRNOTAVAIL' ? ' (not a local address: the cluster does not hand out loopback addresses here)' : '';
        this.log(`application ${this.app.name}: cannot listen on ${address} for ${key}: ${err.message}${hint}`);
      }
    });
    this.listeners.set(key, listener);
    server.listen(this.app.port, ip, () => {
      listener.listening = true;
      // Closed before the bind completed: the pod stopped meanwhile.
      if (this.listeners.get(key) !== listener) this.shut(listener);
    });
  }

  private close(key: ObjectKey, listener: Listener): void {
    this.listeners.delete(key);
    if (listener.listening) this.shut(listener);
  }

  private shut(listener: Listener): void {
    listener.server.close(() => undefined);
    for (const s of listener.sockets) s.destroy();
  }

  stop(): void {
    for (const [key, l] of this.listeners) this.close(key, l);
    this.ensemble?.close();
  }

  /** For tests: the ensemble of a zookeeper application. */
  get zookeeper(): ZooKeeperEnsemble | undefined {
    return this.ensemble;
  }

  /** For tests: the addresses listened on now. */
  addresses(): string[] {
    return [...this.listeners.values()]
      .filter((l) => l.listening)
      .map((l) => `${l.ip}:${this.app.port}`)
      .sort();
  }
}

export class ApplicationStubs {
  private readonly stubs: ApplicationStub[];
  private readonly objects: PodsAndServices;

  constructor(apps: readonly ApplicationConfig[], view: PodsAndServicesView, trace: Pick<TraceSink, 'append'>, log: (line: string) => void = () => undefined) {
    this.stubs = apps.map((a) => new ApplicationStub(a, trace, log));
    this.objects = new PodsAndServices(view, (c: TrackedChange) => {
      for (const s of this.stubs) s.update(c.kind, c.key, this.objects);
    });
    for (const key of this.objects.pods.keys()) for (const s of this.stubs) s.update('Pod', key, this.objects);
    for (const key of this.objects.services.keys()) for (const s of this.stubs) s.update('Service', key, this.objects);
  }

  /** The stub of the application named `name`. */
  application(name: string): { zookeeper: ZooKeeperEnsemble | undefined; addresses(): string[] } | undefined {
    return this.stubs.find((s) => s.app.name === name);
  }

  stop(): void {
    this.objects.stop();
    for (const s of this.stubs) s.stop();
  }
}
