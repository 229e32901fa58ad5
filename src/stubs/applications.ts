/**
 * Stub applications (kperturb.yaml `applications:`): for each, a listener on the IP of every
 * selected pod while it runs (closed, with its connections, when the pod stops or is being deleted,
 * so the controller gets connection refused as from a dead pod) and on the cluster IP of every named
 * Service while it exists. The addresses are reachable when the cluster hands out loopback addresses
 * (src/cluster/network.ts); elsewhere binding fails and the stub says so once per address.
 * Every call a stub answers goes into the cluster trace as an `app-call` event.
 *
 * An app-unavailable fault (`setUnavailable`) makes a listener answer every HTTP call with an error
 * status, or closes it (connections refused, the call that started the fault reset) until the heal,
 * when it listens again with the state its rules had set. Each call is announced as it arrives
 * (`onArrival`, before an HTTP call is answered; a ZooKeeper call once answered), for call triggers.
 *
 * All listeners of one zookeeper application serve one ensemble (one data tree). The tree lives on
 * its pods' volumes: it is emptied when the last of its pods has stopped and none of the claims its
 * pods mounted remains (a cluster deleted with its volumes and created again, or pods without a
 * claim), and kept while a claim remains, as a real ensemble's data survives its pods' restarts (a
 * one-replica StatefulSet rolled for a template change).
 */
import { createServer, type Server, type Socket } from 'node:net';
import type { Server as HttpServer } from 'node:http';
import { isApplicationService, isServingPod, podServingIp, serviceClusterIp, DEFAULT_HTTP_ANSWER, type ApplicationConfig } from '../model/applications.js';
import { APP_ERROR_STATUS, type AppUnavailableAnswer } from '../model/faults/index.js';
import type { AppCallArrival } from '../model/trigger.js';
import { isObject, type KubeObject, type ObjectKey } from '../model/object-key.js';
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

/** Hears every call of the controller to a stub as it arrives (call triggers are fed from it). */
export type OnCallArrival = (arrival: AppCallArrival) => void;

class ApplicationStub {
  private readonly listeners = new Map<ObjectKey, Listener>();
  /** app-unavailable faults in force: by the key of the failing address, `*` for all of them. */
  private readonly unavailable = new Map<ObjectKey | '*', AppUnavailableAnswer>();
  /** Each HTTP address's state (the rules' setState), kept while a fault has closed its listener. */
  private readonly httpState = new Map<ObjectKey, string>();
  private readonly ensemble: ZooKeeperEnsemble | undefined;
  /** Addresses already reported as unusable, so that each is reported once. */
  private readonly reported = new Set<string>();
  /** Whether pods have served since the ZooKeeper tree last started. */
  private served = false;
  /** The claims the pods that served since then mounted: the tree's data volumes. */
  private readonly dataClaims = new Set<ObjectKey>();

  constructor(
    readonly app: ApplicationConfig,
    private readonly trace: Pick<TraceSink, 'append'>,
    private readonly log: (line: string) => void,
    private readonly onArrival: OnCallArrival,
  ) {
    this.ensemble = app.protocol === 'zookeeper' ? new ZooKeeperEnsemble() : undefined;
  }

  private answerFor(key: ObjectKey): AppUnavailableAnswer | undefined {
    return this.unavailable.get(key) ?? this.unavailable.get('*');
  }

  /** Starts (answer) or heals (undefined) an app-unavailable fault; why it cannot act, if it cannot. */
  setUnavailable(key: ObjectKey | undefined, answer: AppUnavailableAnswer | undefined): string | undefined {
    if (answer !== undefined && answer !== 'refuse' && this.app.protocol !== 'http')
      return `application ${this.app.name} speaks ${this.app.protocol}, not HTTP: it cannot answer ${answer} (use answer refuse)`;
    if (answer === undefined) this.unavailable.delete(key ?? '*');
    else this.unavailable.set(key ?? '*', answer);
    return undefined;
  }

  /** Brings the listener of `key` in line with the object's current state (a claim: whether the tree's data remains). */
  update(kind: TrackedChange['kind'], key: ObjectKey, objects: PodsAndServices): void {
    if (kind === 'PersistentVolumeClaim') return this.startOverIfDataGone(objects);
    const obj = kind === 'Pod' ? objects.pods.get(key) : objects.services.get(key);
    let ip: string | undefined;
    if (obj && kind === 'Pod' && isServingPod(this.app, obj)) ip = podServingIp(obj);
    if (obj && kind === 'Service' && isApplicationService(this.app, obj)) ip = serviceClusterIp(obj);
    // The address is gone: a later pod of that name starts afresh.
    if (!ip) this.httpState.delete(key);
    if (this.answerFor(key) === 'refuse') ip = undefined;
    const current = this.listeners.get(key);
    if (current?.ip === ip) return;
    if (current) this.close(key, current);
    if (ip) this.open(key, ip);
    if (kind === 'Pod' && this.ensemble) {
      if (ip && obj) {
        this.served = true;
        for (const claim of podClaims(obj)) this.dataClaims.add(claim);
      }
      this.startOverIfDataGone(objects);
    }
  }

  /** Empties the ZooKeeper tree once no pod serves it and no claim its pods mounted remains. */
  private startOverIfDataGone(objects: PodsAndServices): void {
    if (!this.ensemble || !this.served || [...this.listeners.keys()].some((k) => k.startsWith('Pod/'))) return;
    if ([...this.dataClaims].some((claim) => objects.claims.has(claim))) return;
    this.ensemble.reset();
    this.served = false;
    this.dataClaims.clear();
    this.log(`application ${this.app.name}: its last pod stopped and no claim of its pods remains; the ZooKeeper data tree starts over`);
  }

  private open(key: ObjectKey, ip: string): void {
    const sockets = new Set<Socket>();
    const address = `${ip}:${this.app.port}`;
    const call = (c: Omit<Unstamped<AppCallEvent>, 'type' | 'application' | 'protocol' | 'key' | 'address'>) =>
      this.trace.append({ type: 'app-call', application: this.app.name, protocol: this.app.protocol, key, address, ...c });
    const arrived = (operation: string, path: string | undefined) =>
      this.onArrival({ application: this.app.name, key, operation, ...(path !== undefined ? { path } : {}) });
    let server: Server | HttpServer;
    if (this.ensemble) {
      const ensemble = this.ensemble;
      server = createServer((socket) =>
        ensemble.serve(socket, (c) => {
          call(c);
          arrived(c.operation, c.path);
        }),
      );
    } else {
      server = createHttpStub(
        this.app.http ?? { rules: [], default: DEFAULT_HTTP_ANSWER },
        (c) => call({ operation: c.method, path: c.path, result: c.status, ...(c.rule !== undefined ? { rule: c.rule } : {}) }),
        {
          arrived: (method, path) => {
            arrived(method, path);
            const answer = this.answerFor(key);
            return answer === undefined ? undefined : answer === 'refuse' ? 'reset' : APP_ERROR_STATUS[answer];
          },
          state: { get: () => this.httpState.get(key), set: (state) => this.httpState.set(key, state) },
        },
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

/** The claims a pod mounts (`volumes[*].persistentVolumeClaim.claimName`), as keys in its namespace. */
function podClaims(pod: KubeObject): ObjectKey[] {
  const volumes = isObject(pod.spec) && Array.isArray(pod.spec.volumes) ? pod.spec.volumes.filter(isObject) : [];
  const namespace = pod.metadata?.namespace ?? 'default';
  return volumes.flatMap((v) =>
    isObject(v.persistentVolumeClaim) && typeof v.persistentVolumeClaim.claimName === 'string'
      ? [`PersistentVolumeClaim/${namespace}/${v.persistentVolumeClaim.claimName}`]
      : [],
  );
}

export class ApplicationStubs {
  private readonly stubs: ApplicationStub[];
  private readonly objects: PodsAndServices;

  constructor(
    apps: readonly ApplicationConfig[],
    view: PodsAndServicesView,
    trace: Pick<TraceSink, 'append'>,
    log: (line: string) => void = () => undefined,
    onArrival: OnCallArrival = () => undefined,
  ) {
    this.stubs = apps.map((a) => new ApplicationStub(a, trace, log, onArrival));
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

  /**
   * Starts (answer) or heals (undefined) an app-unavailable fault on the application's address of
   * `key` (all of them when absent), at once; why it cannot act, if it cannot.
   */
  setUnavailable(application: string, key: ObjectKey | undefined, answer: AppUnavailableAnswer | undefined): string | undefined {
    const stub = this.stubs.find((s) => s.app.name === application);
    if (!stub) return `no application named ${application} in kperturb.yaml (applications: ${this.stubs.map((s) => s.app.name).join(', ') || 'none'})`;
    const refused = stub.setUnavailable(key, answer);
    if (refused) return refused;
    for (const k of this.objects.pods.keys()) if (key === undefined || k === key) stub.update('Pod', k, this.objects);
    for (const k of this.objects.services.keys()) if (key === undefined || k === key) stub.update('Service', k, this.objects);
    return undefined;
  }

  stop(): void {
    this.objects.stop();
    for (const s of this.stubs) s.stop();
  }
}
