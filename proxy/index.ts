/**
 * The controller proxy: sits between the controller under test and the API server, relays every
 * request faithfully (JSON only, see headers.ts), records what the controller asked and was shown
 * into the controller trace, and offers the fault primitives the coordinator's fault modules
 * combine (`primitives`, see faults/primitives.ts: triggers, holding the controller, watch holds
 * and ends, stale views, api errors, delays and disconnects), besides `releaseLeaderElection` (delete
 * the Leases a dead controller held) and `serializeDelivery` (option: one watch event at a time,
 * for causality learning).
 *
 * The class keeps the server, the relay and the trace; each primitive lives in proxy/faults/ (one
 * file per family). How a request is answered is an ordered list of interceptors (`requestPath`):
 * latency, api errors, expired re-watches, the serializer's ear, stale views.
 *
 * The controller side speaks HTTP/1.1 and HTTP/2 over TLS on one port (a CA the proxy makes, see
 * tls.ts), or plain HTTP/1.1. Built on node:http/http2 rather than a proxy library: watches are
 * relayed event by event, writes are held in a gate, and every connection belongs to an epoch whose
 * end aborts its upstream requests; a generic proxy library would be bypassed for all three.
 */
import http from 'node:http';
import http2 from 'node:http2';
import type { AddressInfo, Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { listenOnLoopback } from '../src/kube/loopback-listen.js';
import { parse as parseYaml, stringify as stringifyYaml } from 'yaml';
import { kubeconfigYaml } from '../src/kube/kubeconfig.js';
import { answerUnauthorized, BearerTokenCheck, newBearerToken, refuseUpgradeUnauthorized, tokenPathPrefix } from '../src/kube/bearer-auth.js';
import { HousekeepingRequests } from '../src/model/bookkeeping.js';
import type { ObjectKey } from '../src/model/object-key.js';
import type { TraceSink, Unstamped } from '../src/model/trace.js';
import type { ClusterView } from '../src/recorder/cluster-recorder.js';
import { isHttp2Request, type ClientRequest, type ClientResponse } from './client-conn.js';
import { clusterSyncStage } from './cluster-sync.js';
import { Epoch } from './epoch.js';
import { SpareDoor } from './spare-door.js';
import type { StandbyDoor } from './standby-door.js';
import { Exchange, type ExchangeHost, type RequestPlan } from './exchange.js';
import { LeaderRecords, releaseRequest } from './leases.js';
import { DeliverySerializer, type RequestActivity, type SerializeDeliveryOptions } from './serialize.js';
import { loopSignature } from './loop-signature.js';
import { sharedProxyCertificates, type ProxyCertificates } from './tls.js';
import { UpgradeTunnel } from './upgrade.js';
import { PodStreamCall, podStreamingFor } from './pod-streams.js';
import { podStreamingTarget, type PodStreaming } from '../src/streaming/pod-streaming.js';
import { NO_POD_STREAMING_RULES, type PodStreamingRules } from '../src/model/exec-rules.js';
import type { PodExecEvent } from '../src/model/trace.js';
import { Upstream } from './upstream.js';
import type { WatchEventStage } from './watch-relay.js';
import { WatchLines } from './watch-lines.js';
import type { CompletedWrite } from './write-triggers.js';
import { ApiErrorFaults } from './faults/api-error-fault.js';
import type { FaultContext } from './faults/context.js';
import { armCrashAfterWrite } from './faults/crash-after-write.js';
import { ConnectionFaults } from './faults/delays-disconnects.js';
import { composeInterceptors, type FaultPrimitives } from './faults/primitives.js';
import { StaleViews } from './faults/stale-views.js';
import { TriggerBoard } from './faults/triggers.js';
import type { AppCallArrival } from '../src/model/trigger.js';
import { WatchFaults } from './faults/watch-faults.js';

export type { ArmedApiError } from './faults/api-error-fault.js';
export type { CrashTriggered } from './faults/crash-after-write.js';
export type { DisconnectOptions, RequestMatch } from './faults/delays-disconnects.js';
export type { ArmedTrigger, ChangeMark, TriggerFired } from './faults/triggers.js';
export { DEFAULT_MAX_HOLD_MS, type HoldUntilState } from './faults/watch-faults.js';
export type { FaultPrimitives, RequestInterceptor } from './faults/primitives.js';
export type { ProxyCertificates } from './tls.js';
export type { WatchHold, WatchHoldSelector } from './watch-holds.js';
export type { StaleView } from './stale-view.js';
export type { SerializeDeliveryOptions } from './serialize.js';

export interface ControllerProxyOptions {
  /** The API server, e.g. http://127.0.0.1:PORT. */
  upstream: string;
  upstreamCaPem?: string;
  upstreamToken?: string;
  /** Fresh upstream tokens (exec plugins); see Upstream. */
  upstreamTokenProvider?: () => Promise<string | undefined>;
  upstreamClientCertPem?: string;
  upstreamClientKeyPem?: string;
  /** Default 0 (a random port); the proxy binds 127.0.0.1 only. */
  port?: number;
  /**
   * Serve the controller over TLS (HTTP/2 and HTTP/1.1 on one port) with these certificates, or with
   * the process's proxy CA (tls.ts) when `true`. Default false: plain HTTP/1.1.
   */
  tls?: boolean | ProxyCertificates;
  /** Every event of the controller trace goes here. */
  trace: TraceSink;
  /**
   * The door a controller started ahead of the run waits behind (standby-door.ts): the proxy requires
   * that door's token, and `admitStandby` hands its connections over.
   */
  standbyDoor?: StandbyDoor;
  /**
   * The proxy's own view of the cluster (the cluster recorder on the same upstream). Needed for
   * change triggers, hold-until and stale views.
   */
  clusterView?: ClusterView;
  /** Causality learning: deliver watch events one at a time, waiting for quiet after each. */
  serializeDelivery?: SerializeDeliveryOptions;
  /** Diagnostics (upstream failures...). Default: stderr. */
  log?: (line: string) => void;
  /**
   * What the controller's pods/exec, attach and log calls answer (the config's exec/logs rules); the
   * proxy answers them itself (pod-streams.ts). Default: no rules (success, empty output).
   */
  podStreaming?: PodStreamingRules;
  /** Each such call, once answered (the coordinator copies it into the cluster trace). */
  onPodExec?: (event: Unstamped<PodExecEvent>) => void;
  /**
   * `strict`: faults stay within the API contract. A stale view then answers only what a lagging
   * watch cache may answer (LIST and WATCH from resourceVersion "0", watches resumed from an old
   * resourceVersion); consistent reads (resourceVersion unset) go live. Default `lenient`: they are
   * served from the view too, and each such answer is marked `beyondContract` in the trace.
   */
  contract?: ContractMode;
}

import type { ContractMode } from '../src/model/results.js';
export type { ContractMode };

export interface ProxyActivity {
  /** Non-watch requests being served. */
  inFlight: number;
  openWatches: number;
  /** Date.now() of the last request start/finish or watch event delivered. */
  lastActivityAt: number;
  /** Date.now() (or serializeDelivery.now) of the last request start or finish (watch events not counted). */
  lastRequestAt: number;
  /** Requests started so far (watches included). */
  requestsStarted: number;
  /**
   * Resources whose watch the proxy ended with 410 Expired and the controller has not watched again
   * since: it has not relisted yet (client-go waits 0.8-1.6 s before it does), so what it will see
   * is still to come and "quiet" means nothing.
   */
  awaitingRelist: number;
  /**
   * Watch holds hiding events from the controller right now. A held controller is silent, not done:
   * the change that ends the hold (often the workload's last write) may not have reached the proxy
   * yet, and once it has, the controller still has to relist.
   */
  holdsInPlace: number;
}

type ProxyServer = http.Server | http2.Http2SecureServer;

export class ControllerProxy {
  /** Which controller process is connected (1 at first start, +1 per restart); set by the coordinator. */
  incarnation = 1;
  readonly url: string;
  /** PEM of the CA the controller must trust (TLS mode). */
  readonly caPem: string | undefined;
  /**
   * The bearer token of the kubeconfig the proxy writes: every request must carry it (401 otherwise),
   * since the proxy forwards with its own upstream credentials; it is never forwarded.
   */
  readonly controllerToken: string;
  private readonly controllerAuth: BearerTokenCheck;

  private readonly upstream: Upstream;
  private readonly podStreaming: PodStreaming;
  private readonly trace: TraceSink;
  private readonly log: (line: string) => void;
  private readonly host: ExchangeHost;
  private readonly serializer: DeliverySerializer | undefined;
  private readonly faults: FaultContext;
  /** What the coordinator's fault modules act through (faults/primitives.ts). */
  readonly primitives: FaultPrimitives;
  /** How each request is answered: the interceptors in order (faults/primitives.ts). */
  private readonly requestPath: (ex: Exchange, body: Buffer) => RequestPlan | undefined;
  private readonly triggers: TriggerBoard;
  private readonly apiErrors: ApiErrorFaults;
  private readonly staleViews: StaleViews;
  private readonly connections: ConnectionFaults;
  private readonly watchFaults: WatchFaults;
  private readonly leaderRecords = new LeaderRecords();
  private readonly sessions = new Map<http2.Http2Session, Epoch>();
  private unsubscribeView: (() => void) | undefined;
  private epoch = new Epoch(1);
  /** Every epoch this proxy had, for describing what is in flight (a run has a few). */
  private readonly epochs: Epoch[] = [this.epoch];
  private nextRequestId = 1;
  private inFlight = 0;
  private openWatches = 0;
  private lastActivityAt = Date.now();
  private readonly housekeeping = new HousekeepingRequests();
  /** The serializer's clock (serializeDelivery.now), which lastRequestAt is read on. */
  private readonly requestClock: () => number;
  private lastRequestAt: number;
  private lastWatchStartedAt = -Infinity;
  private watchesStarted = 0;
  private requestsStarted = 0;
  private readonly protocolCounts = { h2: 0, http1: 0 };
  private readonly epochOf = new WeakMap<object, Epoch>();
  /** The door of the warm spare not yet admitted (see spare-door.ts), and every door opened, to close them. */
  private spare: SpareDoor | undefined;
  private readonly doors: SpareDoor[] = [];
  private stopped = false;

  private constructor(
    private readonly server: ProxyServer,
    private readonly options: ControllerProxyOptions,
    upstream: Upstream,
    tlsCerts: ProxyCertificates | undefined,
  ) {
    this.controllerToken = options.standbyDoor?.token ?? newBearerToken();
    this.controllerAuth = new BearerTokenCheck(this.controllerToken);
    this.upstream = upstream;
    this.podStreaming = podStreamingFor(options.podStreaming ?? NO_POD_STREAMING_RULES, upstream);
    this.trace = options.trace;
    this.caPem = tlsCerts?.caPem;
    this.log = options.log ?? ((line) => process.stderr.write(`kperturb proxy: ${line}\n`));
    this.url = `${tlsCerts ? 'https' : 'http'}://127.0.0.1:${(server.address() as AddressInfo).port}`;
    this.requestClock = options.serializeDelivery?.now ?? Date.now;
    this.lastRequestAt = this.requestClock();
    if (options.serializeDelivery) {
      this.serializer = new DeliverySerializer(options.serializeDelivery, () => this.requestActivity(), this.trace);
    }
    const faults: FaultContext = (this.faults = { record: (event) => this.trace.append({ type: 'fault', ...event }), log: (line) => this.log(line) });
    this.triggers = new TriggerBoard(options.clusterView, this.log);
    this.apiErrors = new ApiErrorFaults(faults, this.triggers.keys);
    this.staleViews = new StaleViews(faults, options.clusterView, options.contract);
    this.connections = new ConnectionFaults(
      faults,
      () => this.epoch,
      (epoch) => [...this.sessions.entries()].filter(([, e]) => e === epoch).map(([s]) => s),
    );
    this.watchFaults = new WatchFaults(faults, this.triggers, this.connections);
    this.primitives = {
      triggers: this.triggers,
      holdController: () => this.epoch.gate.hold(),
      holdAfterWrite: (trigger, onHeld, faultIndex) => armCrashAfterWrite(faults, this.triggers, () => this.epoch, trigger, onHeld, faultIndex),
      watches: this.watchFaults,
      staleViews: {
        serve: (resourceVersion, faultIndex, kinds) => this.staleViews.serve(this.epoch, this.incarnation, resourceVersion, faultIndex, kinds),
        beyondContract: () => this.staleViews.beyondContract(),
      },
      apiErrors: this.apiErrors,
      connections: this.connections,
    };
    const serializer = this.serializer;
    this.requestPath = composeInterceptors([
      this.connections.delayInterceptor,
      (ex, body, next) => this.apiErrors.plan(ex, body) ?? next(),
      (ex, _body, next) => this.watchFaults.planExpiredWatch(ex) ?? next(),
      ...(serializer ? [(ex: Exchange, _body: Buffer, next: () => RequestPlan | undefined) => serializedPlan(serializer, ex, next())] : []),
      (ex, _body, next) => this.staleViews.plan(ex, next()),
    ]);
    this.host = this.makeHost();
    // A connection belongs to the current epoch, or to the spare's when it came through its door.
    const epochFor = (socket: Socket | undefined) => (this.spare?.owns(socket) ? this.spare.epoch : this.epoch);
    const adopt = (conn: Socket) => {
      const epoch = epochFor(conn);
      this.epochOf.set(conn, epoch);
      epoch.adopt(conn);
    };
    if (tlsCerts) {
      server.on('secureConnection', (socket: Socket) => {
        socket.setNoDelay(true);
        adopt(socket);
      });
      (server as http2.Http2SecureServer).on('session', (session: http2.Http2Session) => {
        const epoch = epochFor(session.socket as Socket | undefined);
        this.epochOf.set(session, epoch);
        this.sessions.set(session, epoch);
        session.once('close', () => this.sessions.delete(session));
        session.on('error', () => {});
      });
      // TLS handshakes that fail (a client that does not trust the CA) must not crash anything.
      server.on('tlsClientError', () => {});
    } else {
      server.on('connection', (socket: Socket) => adopt(socket));
    }
    server.on('request', (req: ClientRequest, res: ClientResponse) => this.onRequest(req, res));
    server.on('upgrade', (req: http.IncomingMessage, socket: Duplex, head: Buffer) => this.onUpgrade(req, socket, head));
    server.on('clientError', (_err: Error, socket: Duplex) => {
      if (socket.writable) socket.end('HTTP/1.1 400 Bad Request\r\nConnection: close\r\n\r\n');
      else socket.destroy();
    });
    if (options.clusterView) {
      // Every creation counts for the n-th generated name, those before the proxy started included.
      for (const c of options.clusterView.pastChanges()) this.triggers.keys.observeChange(c);
      this.unsubscribeView = options.clusterView.onChange((c) => this.triggers.onClusterChange(c));
    }
  }

  static async start(options: ControllerProxyOptions): Promise<ControllerProxy> {
    const upstream = new Upstream({
      url: options.upstream,
      ...(options.upstreamCaPem ? { caPem: options.upstreamCaPem } : {}),
      ...(options.upstreamToken ? { token: options.upstreamToken } : {}),
      ...(options.upstreamTokenProvider ? { tokenProvider: options.upstreamTokenProvider } : {}),
      ...(options.upstreamClientCertPem ? { clientCertPem: options.upstreamClientCertPem } : {}),
      ...(options.upstreamClientKeyPem ? { clientKeyPem: options.upstreamClientKeyPem } : {}),
    });
    if (options.upstreamTokenProvider && !options.upstreamToken) await upstream.refreshToken();
    const tlsCerts = options.tls === true ? await sharedProxyCertificates() : options.tls || undefined;
    // Watches last minutes; the default request timeouts would cut them.
    const server: ProxyServer = tlsCerts
      ? http2.createSecureServer({
          key: tlsCerts.keyPem,
          cert: tlsCerts.certPem,
          allowHTTP1: true,
          // Go clients multiplex every watch of a controller on one connection.
          settings: { maxConcurrentStreams: 1000 },
        })
      : http.createServer({ requestTimeout: 0, keepAliveTimeout: 30_000, noDelay: true });
    server.setTimeout(0);
    await listenOnLoopback(server, options.port ?? 0);
    return new ControllerProxy(server, options, upstream, tlsCerts);
  }

  private makeHost(): ExchangeHost {
    return {
      upstream: this.upstream,
      trace: this.trace,
      incarnation: () => this.incarnation,
      log: (line) => this.log(line),
      touch: () => {
        this.lastActivityAt = Date.now();
      },
      housekeeping: this.housekeeping,
      plan: (ex, body) => this.requestPath(ex, body),
      watchStages: (ex) => this.watchStages(ex),
      watchLines: new WatchLines(),
      completedWrite: (write, epoch, ex) => this.onCompletedWrite(write, epoch, ex),
      finished: (ex) => {
        if (ex.isWatch) this.openWatches--;
        else this.inFlight--;
        // Leader-election renewals every 2 s must not keep a finished controller from going quiet.
        if (!ex.housekeeping) this.lastActivityAt = Date.now();
        this.lastRequestAt = this.requestClock();
        this.connections.closeIfIdle(ex.connection);
      },
    };
  }

  /**
   * A kubeconfig that points the controller at this proxy, with the controller token (the proxy
   * presents its own upstream credentials). TLS: it trusts the proxy's CA. Plain HTTP: it says `insecure-skip-tls-verify: true` because
   * @kubernetes/client-node (1.x) refuses plain http:// servers otherwise; Go clients ignore the flag
   * for http://, and send no token over it, so the server URL carries it too (tokenPathPrefix).
   */
  kubeconfigYaml(url = this.url): string {
    if (this.caPem) return kubeconfigYaml(url, { name: 'kperturb-proxy', caPem: this.caPem, token: this.controllerToken });
    const doc = parseYaml(kubeconfigYaml(url + tokenPathPrefix(this.controllerToken), { name: 'kperturb-proxy', token: this.controllerToken })) as {
      clusters: Array<{ cluster: Record<string, unknown> }>;
    };
    for (const c of doc.clusters) c.cluster['insecure-skip-tls-verify'] = true;
    return stringifyYaml(doc);
  }

  activity(): ProxyActivity {
    return {
      inFlight: this.inFlight,
      openWatches: this.openWatches,
      lastActivityAt: this.lastActivityAt,
      lastRequestAt: this.lastRequestAt,
      requestsStarted: this.requestsStarted,
      awaitingRelist: this.watchFaults.awaitingRelistCount,
      holdsInPlace: this.watchFaults.holdsInPlace,
    };
  }

  /**
   * The requests in flight (not watches), where each is: what keeps a controller from being quiet
   * when it says nothing more, for the run's log. A count the epochs' exchanges do not account for
   * is said too.
   */
  describeInFlight(now = Date.now()): string[] {
    const exchanges = this.epochs.flatMap((e) => e.activeMembers()).filter((m): m is Exchange => m instanceof Exchange && !m.isWatch);
    const lines = exchanges.map((ex) => ex.describeInFlight(now));
    if (exchanges.length !== this.inFlight) lines.push(`${this.inFlight} counted in flight, ${exchanges.length} found among the connection epochs' exchanges`);
    return lines;
  }

  private requestActivity(): RequestActivity {
    return {
      inFlight: this.inFlight,
      lastRequestAt: this.lastRequestAt,
      requestsStarted: this.requestsStarted,
      watchesStarted: this.watchesStarted,
      lastWatchStartedAt: this.lastWatchStartedAt,
    };
  }

  /** Upstream requests still open (watches included); for tests and leak checks. */
  upstreamOpenCount(): number {
    return this.upstream.openRequestCount();
  }

  /** Upstream sockets still open, idle keep-alive ones included; for tests and leak checks. */
  upstreamSocketCount(): number {
    return this.upstream.openSocketCount();
  }

  /** Upstream sockets carrying a request (idle keep-alive ones excluded). */
  upstreamBusySocketCount(): number {
    return this.upstream.busySocketCount();
  }

  /** Requests served per client protocol so far. */
  clientProtocols(): { h2: number; http1: number } {
    return { ...this.protocolCounts };
  }

  /** Serialized delivery: watch events still waiting for their turn. */
  serializedBacklog(): number {
    return this.serializer?.backlog ?? 0;
  }

  // --- faults (proxy/faults/) -------------------------------------------------------------------

  /** A call of the controller arrived at a stub application (src/stubs): call triggers count it, and may fire at once. */
  onAppCall(arrival: AppCallArrival): void {
    this.triggers.onAppCall(arrival);
  }

  private onCompletedWrite(completed: CompletedWrite, epoch: Epoch, ex: Exchange): void {
    this.leaderRecords.noteWrite(completed.key, ex.facts?.resource, ex.facts?.body);
    this.triggers.onCompletedWrite(completed, epoch);
  }

  // --- watch stages -----------------------------------------------------------------------------

  private watchStages(ex: Exchange): WatchEventStage[] {
    const stages: WatchEventStage[] = [];
    const f = ex.facts!;
    const view = this.options.clusterView;
    if (f.resource) {
      // A new watch of a resource whose stream was expired: the controller has relisted it.
      this.watchFaults.watchOpened(ex.id, `${f.resource.group}/${f.resource.resource}`);
    }
    if (view && f.resource) {
      stages.push(
        clusterSyncStage({ alive: () => ex.alive, group: f.resource.group, resource: f.resource.resource }, view, () => this.triggers.needsClusterSync()),
      );
    }
    stages.push(
      this.watchFaults.stageFor({
        id: ex.id,
        get alive() {
          return ex.alive;
        },
        endWith: (event) => ex.endStreamWith(event, 'the proxy ended the stream with 410 Expired (held events dropped)'),
      }),
    );
    if (this.serializer) stages.push(this.serializer.stageFor(ex.id, () => ex.alive));
    return stages;
  }

  // --- leader election --------------------------------------------------------------------------

  /** Leases (and annotated leader records) the controller wrote so far. */
  leaderElectionRecords(): ObjectKey[] {
    return this.leaderRecords.all().map((r) => r.key);
  }

  /**
   * Deletes every Lease the controller wrote (clears the leader annotation of older ConfigMap/
   * Endpoints records) with the proxy's own credentials. Call it once the old process is gone.
   */
  async releaseLeaderElection(): Promise<ObjectKey[]> {
    const released: ObjectKey[] = [];
    for (const record of this.leaderRecords.all()) {
      const r = releaseRequest(record);
      const res = await this.upstream.send(r.method, r.path, r.body, r.contentType);
      const ok = (res.status >= 200 && res.status < 300) || res.status === 404;
      if (ok) released.push(record.key);
      this.faults.record({
        fault: 'lease-release',
        phase: 'applied',
        key: record.key,
        detail: ok
          ? `${record.form === 'lease' ? 'deleted the Lease' : 'cleared the leader annotation'} of the killed controller (HTTP ${res.status})`
          : `could not release (HTTP ${res.status})`,
      });
    }
    return released;
  }

  // --- epochs and lifecycle ---------------------------------------------------------------------

  /**
   * Opens a door for a warm spare controller (spare-door.ts) and returns the kubeconfig that leads
   * through it. The spare's requests wait there until `admitSpare`; the next `startNewEpoch` makes
   * its epoch the current one.
   */
  async prepareSpare(): Promise<string> {
    if (this.spare) throw new Error('a warm spare is already waiting');
    const door = await SpareDoor.open(this.server, this.epoch.number + 1);
    this.spare = door;
    this.doors.push(door);
    return this.kubeconfigYaml(`${this.url.slice(0, this.url.lastIndexOf(':'))}:${door.port}`);
  }

  /**
   * The controller started ahead of the run (options.standbyDoor) is now the controller: its
   * connections, those waiting at its door and later ones, are served as if made to the proxy's port.
   */
  admitStandby(): void {
    this.options.standbyDoor?.attach(this.server, this.caPem !== undefined);
  }

  /** Requests of a warm spare waiting behind its door. */
  spareRequestsWaiting(): number {
    return this.doors.reduce((n, d) => n + d.waiting, 0);
  }

  /** The warm spare is now the controller: its parked requests are taken, in the order they came. */
  admitSpare(): void {
    for (const door of this.doors) door.admit();
  }

  /**
   * Ends the current connection epoch (see epoch.ts); later connections pass through normally. The
   * next epoch is the warm spare's, if one is waiting.
   */
  startNewEpoch(): void {
    const old = this.epoch;
    this.epoch = this.spare?.epoch ?? new Epoch(old.number + 1);
    this.epochs.push(this.epoch);
    this.spare = undefined;
    old.end('the controller was stopped (connection epoch ended)');
    // A new process lists everything afresh.
    this.watchFaults.forgetRelists();
  }

  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    this.unsubscribeView?.();
    this.serializer?.stop();
    const closed = new Promise<void>((resolve) => this.server.close(() => resolve()));
    this.epoch.end('the proxy stopped');
    this.spare?.epoch.end('the proxy stopped');
    for (const door of this.doors) door.close();
    this.options.standbyDoor?.close();
    for (const s of this.sessions.keys()) s.destroy();
    if ('closeAllConnections' in this.server) this.server.closeAllConnections();
    this.upstream.destroy();
    await closed;
  }

  private currentEpochOf(req: ClientRequest): Epoch {
    const conn = isHttp2Request(req) ? req.stream.session : req.socket;
    return (conn && this.epochOf.get(conn)) ?? this.epoch;
  }

  /** The door a request of `epoch` waits behind (the spare's, not admitted yet), if any. */
  private doorParking(epoch: Epoch): SpareDoor | undefined {
    return this.doors.find((d) => d.parks(epoch));
  }

  private onRequest(req: ClientRequest, res: ClientResponse): void {
    const epoch = this.currentEpochOf(req);
    const door = this.doorParking(epoch);
    if (door) {
      door.park(() => this.onRequest(req, res));
      return;
    }
    if (epoch.ended || this.stopped) {
      if (isHttp2Request(req)) req.stream.close(http2.constants.NGHTTP2_REFUSED_STREAM);
      else req.socket.destroy();
      return;
    }
    if (!this.controllerAuth.admits(req)) {
      answerUnauthorized(res);
      return;
    }
    const target = podStreamingTarget(pathOf(req.url));
    if (target) {
      this.requestsStarted++;
      this.lastRequestAt = this.requestClock();
      new PodStreamCall(this.nextRequestId++, this.host, epoch, this.podStreaming, target, this.options.onPodExec).answer(req, res);
      return;
    }
    const ex = new Exchange(this.nextRequestId++, this.host, epoch, req, res);
    if (ex.isWatch) this.openWatches++;
    else this.inFlight++;
    this.requestsStarted++;
    this.protocolCounts[isHttp2Request(req) ? 'h2' : 'http1']++;
    // Activity starts when the request is recorded (Exchange.recordRequest), once it is known
    // whether it is housekeeping; until then it is in flight, which is not quiet either.
    this.lastRequestAt = this.requestClock();
    if (ex.isWatch) {
      this.watchesStarted++;
      this.lastWatchStartedAt = this.lastRequestAt;
    }
    try {
      ex.run();
    } catch (err) {
      this.log(`request ${ex.id} ${req.method} ${req.url}: ${(err as Error).message}`);
      ex.terminate('proxy error');
    }
  }

  private onUpgrade(req: http.IncomingMessage, socket: Duplex, head: Buffer): void {
    const epoch = this.currentEpochOf(req);
    const door = this.doorParking(epoch);
    if (door) {
      door.park(() => this.onUpgrade(req, socket, head));
      return;
    }
    if (epoch.ended || this.stopped) {
      socket.destroy();
      return;
    }
    if (!this.controllerAuth.admits(req)) {
      refuseUpgradeUnauthorized(socket);
      return;
    }
    const target = podStreamingTarget(pathOf(req.url));
    if (target) {
      this.requestsStarted++;
      this.lastRequestAt = this.requestClock();
      new PodStreamCall(this.nextRequestId++, this.host, epoch, this.podStreaming, target, this.options.onPodExec).upgrade(req, socket, head);
      return;
    }
    new UpgradeTunnel(this.nextRequestId++, this.host, epoch, req, socket, head).run();
  }
}

/** The path of a request target, without its query. */
function pathOf(url: string | undefined): string {
  const u = url ?? '/';
  const q = u.indexOf('?');
  return q < 0 ? u : u.slice(0, q);
}

/** With serialized delivery, the serializer hears how each request was answered (serialize.ts: `retrying`). */
function serializedPlan(serializer: DeliverySerializer, ex: Exchange, plan: RequestPlan | undefined): RequestPlan | undefined {
  if (ex.isWatch) return plan;
  const f = ex.facts!;
  const before = plan?.onAnswered;
  return {
    ...plan,
    onAnswered: (status, object) => {
      before?.(status, object);
      const { signature, write } = loopSignature(f, status, object);
      serializer.answered(signature, status, write);
    },
  };
}
