/**
 * The controller proxy: sits between the controller under test and the API server, relays every
 * request faithfully (JSON only, see headers.ts), records what the controller asked and was shown
 * into the controller trace, and offers the fault primitives the coordinator drives:
 *
 * - `armCrashAfterWrite` / `armTrigger` + `holdController`: hold everything of the controller right
 *   after a write or a cluster change, until the coordinator has killed it (`startNewEpoch`);
 * - `holdWatchEvents`: hold watch delivery for a key or a kind, release in order or expire (410);
 * - `armHoldUntil`: the unobserved-state fault (hold from change N, expire when N' happened);
 * - `markChange` + `serveStaleView`: the stale-state fault (freeze a restarted controller's view at
 *   the resourceVersion of an earlier change, release later);
 * - `disconnect`: close or reset the controller's watch streams or connections;
 * - `addDelay`: latency for a class of requests;
 * - `releaseLeaderElection`: delete the Leases a dead controller held;
 * - `serializeDelivery` (option): one watch event at a time, for causality learning.
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
import { parse as parseYaml, stringify as stringifyYaml } from 'yaml';
import { kubeconfigYaml } from '../src/kube/kubeconfig.js';
import { answerUnauthorized, BearerTokenCheck, newBearerToken, refuseUpgradeUnauthorized, tokenPathPrefix } from '../src/kube/bearer-auth.js';
import { HousekeepingRequests } from '../src/model/bookkeeping.js';
import { describeApiError, describeChange, describeTrigger, describeWatchEnd, describeWrite, type ApiErrorFault, type ChangeTrigger, type HoldUntilFault, type Trigger, type WatchEndFault, type WriteTrigger } from '../src/model/plan.js';
import { apiErrorAction, nameForMessage, requestMatchKey } from './api-errors.js';
import type { RequestVerb } from '../src/model/api-path.js';
import { parseKey, type ObjectKey } from '../src/model/object-key.js';
import type { FaultEvent, TraceSink, Unstamped } from '../src/model/trace.js';
import { isTriggerWriteVerb, WriteOccurrenceCounter } from '../src/model/controller-write.js';
import { ChangeOccurrenceCounter, describeNearMiss, matchesChange } from '../src/model/change-match.js';
import { TriggerEvaluator } from '../src/model/trigger-eval.js';
import type { ClusterView, ObservedChange } from '../src/recorder/cluster-recorder.js';
import { isHttp2Request, resetSocket, type ClientConnection, type ClientRequest, type ClientResponse } from './client-conn.js';
import { clusterSyncStage } from './cluster-sync.js';
import { Epoch } from './epoch.js';
import { Exchange, type ExchangeHost, type RequestPlan } from './exchange.js';
import { LeaderRecords, releaseRequest } from './leases.js';
import { DeliverySerializer, type RequestActivity, type SerializeDeliveryOptions } from './serialize.js';
import { StaleView, watchListForbidden } from './stale-view.js';
import { sharedProxyCertificates, type ProxyCertificates } from './tls.js';
import { UpgradeTunnel } from './upgrade.js';
import { PodStreamCall, podStreamingFor } from './pod-streams.js';
import { podStreamingTarget, type PodStreaming } from '../src/streaming/pod-streaming.js';
import { NO_POD_STREAMING_RULES, type PodStreamingRules } from '../src/model/exec-rules.js';
import type { PodExecEvent } from '../src/model/trace.js';
import { Upstream } from './upstream.js';
import { WatchHolds, type WatchHold, type WatchHoldSelector } from './watch-holds.js';
import type { WatchEventStage } from './watch-relay.js';
import { TriggerKeys, type CompletedWrite } from './write-triggers.js';
import { isFoldedKey } from '../src/model/generated-names.js';

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

export interface CrashTriggered {
  requestId: number;
  description: string;
}

/** What made a trigger fire. */
export interface TriggerFired {
  /** The controller request whose completion fired it (write triggers). */
  requestId?: number;
  /** The cluster change that fired it (change triggers): trace seq, key and resourceVersion. */
  changeSeq?: number;
  key?: ObjectKey;
  resourceVersion?: string;
}

export interface ArmedTrigger {
  readonly trigger: Trigger;
  readonly fired: boolean;
  /** Until it fires: why not, from what came closest ("never matched: ..."). */
  whyNotFired(): string | undefined;
  cancel(): void;
}

/** The moment a cluster change matched (the frozen point of a stale view). */
export interface ChangeMark {
  readonly trigger: ChangeTrigger;
  /** Set once the change matched. */
  readonly resourceVersion: string | undefined;
  readonly seq: number | undefined;
  /** Until the change matched: why not, from what came closest. */
  whyNotFired(): string | undefined;
}

export interface HoldUntilState {
  /** armed -> holding (from matched) -> expired (until matched, held streams ended with 410). */
  readonly state: 'armed' | 'holding' | 'expired';
  /** Streams that were ended with 410 Expired. */
  readonly expiredStreams: number[];
  /** Did the fault change what the controller saw (some stream held and expired)? */
  readonly injected: boolean;
  /** The cancelling change did not come in time and the hold was expired anyway (recorded in the trace). */
  readonly timedOut: boolean;
  /** Why the change it waits for (`from` while armed, `until` while holding) has not come, from what came closest. */
  whyNotFired(): string | undefined;
}

/** Which requests a delay applies to; every given field must match. */
export interface RequestMatch {
  verbs?: RequestVerb[];
  kind?: string;
  /** Resource name, e.g. `configmaps`. */
  resource?: string;
  key?: ObjectKey;
}

export interface DisconnectOptions {
  /** `watches`: the controller's open watch streams; `connections`: its connections (all requests on them). */
  target: 'watches' | 'connections';
  /** `graceful`: a clean end of stream / GOAWAY / FIN; `reset`: RST_STREAM / TCP reset. */
  mode: 'graceful' | 'reset';
  /** Only watches of this kind (target `watches`). */
  kind?: string;
}

/** An armed api-error fault (see armApiError). */
export interface ArmedApiError {
  readonly fired: boolean;
  /** Until it fires: how many matching requests came (and of what). */
  whyNotFired(): string | undefined;
  cancel(): void;
}

interface ApiErrorEntry {
  fault: ApiErrorFault;
  faultIndex: number | undefined;
  /** Matching write requests so far. */
  seen: number;
  /** Requests of the same verb and kind under other keys (for whyNotFired). */
  nearKeys: Set<ObjectKey>;
  fired: boolean;
  onFired: (requestId: number) => void;
}

interface ArmedEntry {
  evaluator: TriggerEvaluator;
  onFire: (info: TriggerFired, epoch: Epoch | undefined) => void;
  cancelled: boolean;
}

interface MarkEntry {
  trigger: ChangeTrigger;
  counter: ChangeOccurrenceCounter;
  resourceVersion: string | undefined;
  seq: number | undefined;
}

type ProxyServer = http.Server | http2.Http2SecureServer;

/** How long a hold-until fault holds at most when its cancelling change does not come. */
export const DEFAULT_MAX_HOLD_MS = 10_000;

/** How long a hold-until whose cancelling change came first waits for a controller stream to deliver the change it holds from. */
const UNTIL_BEFORE_HELD_MS = 2_000;

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
  readonly controllerToken = newBearerToken();
  private readonly controllerAuth = new BearerTokenCheck(this.controllerToken);

  private readonly upstream: Upstream;
  private readonly podStreaming: PodStreaming;
  private readonly trace: TraceSink;
  private readonly log: (line: string) => void;
  private readonly host: ExchangeHost;
  private readonly writeCounter = new WriteOccurrenceCounter();
  /** Keys as triggers name them (generated names folded to `<prefix>*#<n>`, as the planner does). */
  private readonly triggerKeys = new TriggerKeys();
  private armed: ArmedEntry[] = [];
  private marks: MarkEntry[] = [];
  private readonly holds = new WatchHolds();
  private readonly serializer: DeliverySerializer | undefined;
  private readonly staleViews = new WeakMap<Epoch, StaleView>();
  private readonly beyondContractReasons = new Set<string>();
  private readonly delays: Array<{ match: RequestMatch; ms: number }> = [];
  private apiErrors: ApiErrorEntry[] = [];
  /** watch-end with expire: kinds whose next watch is answered 410 Expired (the resumed watch's resourceVersion is "too old"). */
  private readonly expireNextWatch = new Map<string, number | undefined>();
  private readonly leaderRecords = new LeaderRecords();
  private readonly sessions = new Map<http2.Http2Session, Epoch>();
  private readonly closeWhenIdle = new Set<ClientConnection>();
  private unsubscribeView: (() => void) | undefined;
  private epoch = new Epoch(1);
  private nextRequestId = 1;
  private inFlight = 0;
  private openWatches = 0;
  private lastActivityAt = Date.now();
  private readonly housekeeping = new HousekeepingRequests();
  /** The serializer's clock (serializeDelivery.now), which lastRequestAt is read on. */
  private readonly requestClock: () => number;
  private lastRequestAt: number;
  private requestsStarted = 0;
  /** Watch stream id -> its resource (`group/resource`), and the resources expired streams await a new watch of. */
  private readonly watchResource = new Map<number, string>();
  private readonly awaitingRelist = new Set<string>();
  /** Watch requests answered 410 Expired by a watch-end fault (they do not end awaitingRelist). */
  private readonly expiredWatches = new Set<number>();
  private readonly protocolCounts = { h2: 0, http1: 0 };
  private readonly epochOf = new WeakMap<object, Epoch>();
  private stopped = false;

  private constructor(
    private readonly server: ProxyServer,
    private readonly options: ControllerProxyOptions,
    upstream: Upstream,
    tlsCerts: ProxyCertificates | undefined,
  ) {
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
    this.host = this.makeHost();
    const adopt = (conn: ClientConnection) => {
      this.epochOf.set(conn, this.epoch);
      this.epoch.adopt(conn);
    };
    if (tlsCerts) {
      server.on('secureConnection', (socket: Socket) => {
        socket.setNoDelay(true);
        adopt(socket);
      });
      (server as http2.Http2SecureServer).on('session', (session: http2.Http2Session) => {
        this.epochOf.set(session, this.epoch);
        this.sessions.set(session, this.epoch);
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
      for (const c of options.clusterView.pastChanges()) this.triggerKeys.observeChange(c);
      this.unsubscribeView = options.clusterView.onChange((c) => this.onClusterChange(c));
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
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(options.port ?? 0, '127.0.0.1', () => {
        server.off('error', reject);
        resolve();
      });
    });
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
      plan: (ex, body) => this.planRequest(ex, body),
      watchStages: (ex) => this.watchStages(ex),
      completedWrite: (write, epoch, ex) => this.onCompletedWrite(write, epoch, ex),
      finished: (ex) => {
        if (ex.isWatch) this.openWatches--;
        else this.inFlight--;
        // Leader-election renewals every 2 s must not keep a finished controller from going quiet.
        if (!ex.housekeeping) this.lastActivityAt = Date.now();
        this.lastRequestAt = this.requestClock();
        this.maybeCloseIdle(ex.connection);
      },
    };
  }

  /**
   * A kubeconfig that points the controller at this proxy, with the controller token (the proxy
   * presents its own upstream credentials). TLS: it trusts the proxy's CA. Plain HTTP: it says `insecure-skip-tls-verify: true` because
   * @kubernetes/client-node (1.x) refuses plain http:// servers otherwise; Go clients ignore the flag
   * for http://, and send no token over it, so the server URL carries it too (tokenPathPrefix).
   */
  kubeconfigYaml(): string {
    if (this.caPem) return kubeconfigYaml(this.url, { name: 'kperturb-proxy', caPem: this.caPem, token: this.controllerToken });
    const doc = parseYaml(kubeconfigYaml(this.url + tokenPathPrefix(this.controllerToken), { name: 'kperturb-proxy', token: this.controllerToken })) as { clusters: Array<{ cluster: Record<string, unknown> }> };
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
      awaitingRelist: this.awaitingRelist.size,
      holdsInPlace: this.holds.activeCount,
    };
  }

  private requestActivity(): RequestActivity {
    return { inFlight: this.inFlight, lastRequestAt: this.lastRequestAt, requestsStarted: this.requestsStarted };
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

  private fault(event: Omit<Unstamped<FaultEvent>, 'type'>): number {
    return this.trace.append({ type: 'fault', ...event });
  }

  // --- triggers ---------------------------------------------------------------------------------

  /**
   * Arms a trigger (write, change or composite; see trigger-eval.ts). `onFire` runs synchronously at
   * the moment it fires: after the write's answer arrived but before the controller gets it, or
   * when the cluster view saw the change but before any controller stream delivers it. Write counts
   * run over the proxy's whole life; change counts over every change the cluster view has seen,
   * those before arming included (a trigger that matches one of those fires at once).
   */
  armTrigger(trigger: Trigger, onFire: (info: TriggerFired) => void): ArmedTrigger {
    const evaluator = new TriggerEvaluator(trigger);
    if (evaluator.watchesChanges && !this.options.clusterView) {
      throw new Error(`the trigger "${describeTrigger(trigger)}" needs the proxy's cluster view (start the proxy with clusterView)`);
    }
    const entry: ArmedEntry = { evaluator, onFire: (info) => onFire(info), cancelled: false };
    this.armed.push(entry);
    // Changes before arming count too (the planner counts from the start of the cluster trace).
    if (evaluator.watchesChanges) {
      for (const c of this.options.clusterView!.pastChanges()) {
        if (evaluator.change(this.triggerKeys.fold(c.key), c.prev, c.next)) {
          this.fire(entry, { changeSeq: c.seq, key: c.key, resourceVersion: c.resourceVersion }, undefined);
          break;
        }
      }
    }
    return {
      trigger,
      get fired() {
        return evaluator.fired;
      },
      whyNotFired: () => evaluator.whyNotFired(),
      cancel: () => {
        entry.cancelled = true;
        this.armed = this.armed.filter((a) => a !== entry);
      },
    };
  }

  /** Remembers the resourceVersion at which the cluster view first sees a change matching `trigger`. */
  markChange(trigger: ChangeTrigger): ChangeMark {
    if (!this.options.clusterView) throw new Error('markChange needs the proxy\'s cluster view');
    const entry: MarkEntry = { trigger, counter: new ChangeOccurrenceCounter(), resourceVersion: undefined, seq: undefined };
    this.marks.push(entry);
    for (const c of this.options.clusterView.pastChanges()) {
      if (matchesChange(trigger, c.prev, c.next, entry.counter, this.triggerKeys.fold(c.key))) {
        entry.resourceVersion = c.resourceVersion;
        entry.seq = c.seq;
        break;
      }
    }
    return {
      trigger,
      get resourceVersion() {
        return entry.resourceVersion;
      },
      get seq() {
        return entry.seq;
      },
      whyNotFired: () => (entry.resourceVersion !== undefined ? undefined : (describeNearMiss(trigger, entry.counter) ?? `never matched: ${describeChange(trigger)}`)),
    };
  }

  private needsClusterSync(): boolean {
    return this.armed.some((a) => a.evaluator.watchesChanges) || this.marks.some((m) => m.resourceVersion === undefined);
  }

  private onClusterChange(c: ObservedChange): void {
    const key = this.triggerKeys.observeChange(c);
    for (const m of this.marks) {
      if (m.resourceVersion !== undefined) continue;
      if (matchesChange(m.trigger, c.prev, c.next, m.counter, key)) {
        m.resourceVersion = c.resourceVersion;
        m.seq = c.seq;
      }
    }
    for (const a of [...this.armed]) {
      if (a.cancelled || !a.evaluator.watchesChanges) continue;
      if (a.evaluator.change(key, c.prev, c.next)) this.fire(a, { changeSeq: c.seq, key: c.key, resourceVersion: c.resourceVersion }, undefined);
    }
  }

  private onCompletedWrite(completed: CompletedWrite, epoch: Epoch, ex: Exchange): void {
    this.leaderRecords.noteWrite(completed.key, ex.facts?.resource, ex.facts?.body);
    const write = this.triggerKeys.observeWrite(completed);
    const n = this.writeCounter.record(write);
    for (const a of [...this.armed]) {
      if (a.cancelled) continue;
      if (a.evaluator.write(write, n)) this.fire(a, { requestId: write.requestId, key: completed.key }, epoch);
    }
  }

  private fire(entry: ArmedEntry, info: TriggerFired, epoch: Epoch | undefined): void {
    this.armed = this.armed.filter((a) => a !== entry);
    try {
      entry.onFire(info, epoch);
    } catch (err) {
      this.log(`a fault callback failed: ${(err as Error).message}`);
    }
  }

  /** Holds everything of the current controller (its epoch) until `startNewEpoch`. */
  holdController(): void {
    this.epoch.gate.hold();
  }

  /**
   * Crash after write: right after the matching write completes upstream (before the controller
   * gets the answer), holds everything of the controller and tells the coordinator.
   */
  armCrashAfterWrite(trigger: WriteTrigger, onTriggered: (info: CrashTriggered) => void, faultIndex?: number): ArmedTrigger {
    const t = { ...trigger };
    const evaluator = new TriggerEvaluator({ write: t });
    const entry: ArmedEntry = {
      evaluator,
      cancelled: false,
      onFire: (info, epoch) => {
        (epoch ?? this.epoch).gate.hold();
        const description = describeWrite(t);
        this.fault({
          fault: 'crash-after-write',
          phase: 'triggered',
          ...(info.requestId !== undefined ? { requestId: info.requestId } : {}),
          ...(faultIndex !== undefined ? { faultIndex } : {}),
          key: t.key,
          detail: `the controller ${description}; holding it until it is killed`,
        });
        onTriggered({ requestId: info.requestId ?? 0, description });
      },
    };
    this.armed.push(entry);
    return {
      trigger: { write: t },
      get fired() {
        return evaluator.fired;
      },
      whyNotFired: () => evaluator.whyNotFired(),
      cancel: () => {
        entry.cancelled = true;
        this.armed = this.armed.filter((a) => a !== entry);
      },
    };
  }

  // --- error paths ------------------------------------------------------------------------------

  /**
   * api-error: the n-th write request matching `fault.on` gets `fault.answer` (see api-errors.ts):
   * a Status answered without forwarding, a lost response (forwarded, applied, then the stream reset)
   * or a slow answer. One-shot. `onFired` runs when the request matches, before anything is answered.
   */
  armApiError(fault: ApiErrorFault, faultIndex?: number, onFired: (requestId: number) => void = () => {}): ArmedApiError {
    const entry: ApiErrorEntry = { fault, faultIndex, seen: 0, nearKeys: new Set(), fired: false, onFired };
    this.apiErrors.push(entry);
    return {
      get fired() {
        return entry.fired;
      },
      whyNotFired: () => {
        if (entry.fired) return undefined;
        const on = fault.on;
        if (entry.seen > 0) return `only ${entry.seen} matching request(s) came, the ${entry.fault.on.occurrence}th was awaited`;
        const near = [...entry.nearKeys].slice(0, 3).join(', ');
        return `never matched: the controller never sent a ${on.verb} of ${on.key}${on.subresource ? ` ${on.subresource}` : ''}${near ? ` (it sent ${on.verb}s of ${near})` : ''}`;
      },
      cancel: () => {
        this.apiErrors = this.apiErrors.filter((e) => e !== entry);
      },
    };
  }

  private planApiError(ex: Exchange, body: Buffer): RequestPlan | undefined {
    const f = ex.facts!;
    if (f.dryRun || !isTriggerWriteVerb(f.verb)) return undefined;
    const candidates = this.apiErrors.filter((e) => e.fault.on.verb === f.verb && (e.fault.on.subresource ?? undefined) === (f.resource?.subresource ?? undefined));
    if (candidates.length === 0) return undefined;
    const key = requestMatchKey(f, body, (k) => this.triggerKeys.fold(k), (family) => this.triggerKeys.nextGenerated(family));
    for (const entry of candidates) {
      if (key === entry.fault.on.key) entry.seen++;
      else if (key && parseKey(key)?.kind === parseKey(entry.fault.on.key)?.kind) entry.nearKeys.add(key);
    }
    for (const entry of candidates) {
      if (key !== entry.fault.on.key || entry.seen !== entry.fault.on.occurrence) continue;
      entry.fired = true;
      this.apiErrors = this.apiErrors.filter((e) => e !== entry);
      const idx = entry.faultIndex !== undefined ? { faultIndex: entry.faultIndex } : {};
      const description = describeApiError(entry.fault);
      this.fault({ fault: 'api-error', phase: 'triggered', requestId: ex.id, key, ...idx, detail: description });
      try {
        entry.onFired(ex.id);
      } catch (err) {
        this.log(`a fault callback failed: ${(err as Error).message}`);
      }
      const action = apiErrorAction(entry.fault, f, nameForMessage(key));
      const applied = (detail: string) => this.fault({ fault: 'api-error', phase: 'applied', requestId: ex.id, key, ...idx, detail });
      switch (action.kind) {
        case 'answer':
          return { answer: action.answer, onAnswered: (status) => applied(`answered ${status} ${String(action.answer.object.reason)} without forwarding (not applied)`) };
        case 'lose-response':
          return { loseResponse: true, onAnswered: (status) => applied(`the API server answered ${status}; the stream was reset before the controller got it`) };
        case 'delay-answer':
          return { holdAnswerMs: action.ms, onAnswered: (status) => applied(`the API server answered ${status}; holding the answer ${action.ms / 1000} s`) };
      }
    }
    return undefined;
  }

  /**
   * watch-end: when `fault.at` fires, end the controller's open watch streams of `fault.kind`
   * (cleanly or with a reset); with `expire`, its next resumed watch of that kind gets 410 Expired.
   */
  armWatchEnd(fault: WatchEndFault, faultIndex?: number, onFired: (streams: number[]) => void = () => {}): ArmedTrigger {
    return this.armTrigger(fault.at, () => {
      const idx = faultIndex !== undefined ? { faultIndex } : {};
      this.fault({ fault: 'watch-end', phase: 'triggered', ...idx, detail: describeWatchEnd(fault) });
      if (fault.expire) this.expireNextWatch.set(fault.kind, faultIndex);
      const { streams } = this.disconnect({ target: 'watches', mode: fault.mode === 'close' ? 'graceful' : 'reset', kind: fault.kind });
      // The run has not settled until the controller watches that kind again (client-go backs off
      // for about a second before it re-watches or relists): a quiet controller meanwhile is blind.
      for (const id of streams) {
        const resource = this.watchResource.get(id);
        if (resource !== undefined) this.awaitingRelist.add(resource);
      }
      onFired(streams);
    });
  }

  // --- watch holds ------------------------------------------------------------------------------

  /** Holds the controller's watch delivery for a key or a kind (see watch-holds.ts). */
  holdWatchEvents(selector: WatchHoldSelector, fault: FaultEvent['fault'] = 'watch-hold', faultIndex?: number, onStreamHeld?: () => void): WatchHold {
    const what = selector.key ?? `kind ${selector.kind}`;
    const hold = this.holds.hold(selector, (streamId, event) => {
      this.fault({
        fault,
        phase: 'held',
        streams: [streamId],
        ...(event.key ? { key: event.key } : {}),
        ...(faultIndex !== undefined ? { faultIndex } : {}),
        detail: `holding watch stream ${streamId} from ${event.type} ${event.key} (resourceVersion ${event.resourceVersion})`,
      });
      onStreamHeld?.();
    });
    const release = hold.release.bind(hold);
    const expire = hold.expire.bind(hold);
    hold.release = () => {
      const streams = hold.streamIds;
      const queued = hold.queuedEvents;
      release();
      this.fault({ fault, phase: 'released', streams, ...(selector.key ? { key: selector.key } : {}), ...(faultIndex !== undefined ? { faultIndex } : {}), detail: `released ${queued} held event(s) of ${what} in order` });
    };
    hold.expire = () => {
      const result = expire();
      for (const id of result.streams) {
        const resource = this.watchResource.get(id);
        if (resource !== undefined) this.awaitingRelist.add(resource);
      }
      this.fault({
        fault,
        phase: 'expired',
        streams: result.streams,
        ...(selector.key ? { key: selector.key } : {}),
        ...(faultIndex !== undefined ? { faultIndex } : {}),
        detail: `ended ${result.streams.length} held stream(s) with an in-stream 410 Expired, dropping ${result.droppedEvents} event(s); the controller relists`,
      });
      return result;
    };
    return hold;
  }

  /**
   * Unobserved state: from the change `from` on, hold the controller's watch events of `key`; once
   * the change `until` has happened, end the held streams with an in-stream 410 Expired so the
   * controller relists and never sees the states in between.
   */
  armHoldUntil(
    fault: HoldUntilFault,
    faultIndex?: number,
    callbacks: { onHeld?: () => void; onExpired?: (streams: number[]) => void; onTimedOut?: () => void } = {},
    /**
     * If `until` has not happened this long after `from`, expire the hold anyway (the controller
     * relists) and count the fault as not injected: `until` probably waits for the controller to
     * act on what is held, and holding on would only fail the workload.
     */
    maxHoldMs = DEFAULT_MAX_HOLD_MS,
  ): HoldUntilState {
    let state: HoldUntilState['state'] = 'armed';
    let hold: WatchHold | undefined;
    let expiredStreams: number[] = [];
    let timedOut = false;
    let timer: NodeJS.Timeout | undefined;
    // `until` came before the controller's stream delivered `from` (the cluster view runs ahead of
    // the streams): expire once a stream is held, so that the hold hides something (bounded).
    let expireWhenHeld = false;
    const idx = faultIndex !== undefined ? { faultIndex } : {};
    const expire = () => {
      if (!hold || state === 'expired') return;
      if (timer) clearTimeout(timer);
      expiredStreams = hold.expire().streams;
      state = 'expired';
      callbacks.onExpired?.(expiredStreams);
    };
    const fromArmed = this.armTrigger({ change: fault.from }, (info) => {
      state = 'holding';
      // A folded key (`<prefix>*#<n>`) names no watch event: hold the object the change was of.
      hold = this.holdWatchEvents({ key: isFoldedKey(fault.key) && info.key ? info.key : fault.key }, 'hold-until', faultIndex, () => {
        if (expireWhenHeld) queueMicrotask(expire);
      });
      this.fault({ fault: 'hold-until', phase: 'triggered', key: fault.key, ...idx, ...(info.resourceVersion ? { resourceVersion: info.resourceVersion } : {}), detail: `${describeChange(fault.from)}: holding the controller's events of ${fault.key}` });
      callbacks.onHeld?.();
      timer = setTimeout(() => {
        if (state !== 'holding') return;
        timedOut = true;
        callbacks.onTimedOut?.();
        this.fault({ fault: 'hold-until', phase: 'not-injected', key: fault.key, ...idx, detail: `${describeChange(fault.until)} did not happen within ${maxHoldMs / 1000} s of holding: expiring the hold anyway` });
        expire();
      }, maxHoldMs);
      timer.unref();
    });
    const untilArmed = this.armTrigger({ change: fault.until }, () => {
      if (hold && hold.everHeld === 0 && state === 'holding') {
        expireWhenHeld = true;
        setTimeout(expire, UNTIL_BEFORE_HELD_MS).unref();
        return;
      }
      expire();
    });
    return {
      get state() {
        return state;
      },
      get expiredStreams() {
        return expiredStreams;
      },
      get injected() {
        return state === 'expired' && !timedOut && expiredStreams.length > 0;
      },
      get timedOut() {
        return timedOut;
      },
      whyNotFired: () => (state === 'armed' ? fromArmed.whyNotFired() : state === 'holding' ? untilArmed.whyNotFired() : undefined),
    };
  }

  // --- stale views ------------------------------------------------------------------------------

  /**
   * Serves the current epoch's controller (start it after this) a view frozen at `resourceVersion`
   * (see stale-view.ts) until the returned view is released; with `kinds`, only those kinds' lists
   * and watches are frozen.
   */
  /** Why what the faults served went beyond the API contract, once per reason (empty: it stayed within). */
  beyondContract(): string[] {
    return [...this.beyondContractReasons];
  }

  serveStaleView(resourceVersion: string, faultIndex?: number, kinds?: readonly string[]): StaleView {
    if (!this.options.clusterView) throw new Error('stale views need the proxy\'s cluster view');
    const view = new StaleView(resourceVersion, this.options.clusterView, kinds);
    this.staleViews.set(this.epoch, view);
    const idx = faultIndex !== undefined ? { faultIndex } : {};
    const scope = kinds ? ` for ${kinds.join(', ')} (every other kind live)` : '';
    this.fault({ fault: 'stale-restart', phase: 'held', resourceVersion, ...idx, detail: `serving the controller (incarnation ${this.incarnation}) a view frozen at resourceVersion ${resourceVersion}${scope}` });
    const release = view.release.bind(view);
    view.release = () => {
      if (view.released) return;
      release();
      this.fault({ fault: 'stale-restart', phase: 'released', resourceVersion, ...idx, detail: 'stale view released: held watches continue from where they asked, new requests are live' });
    };
    return view;
  }

  private planRequest(ex: Exchange, body: Buffer): RequestPlan | undefined {
    const f = ex.facts!;
    let plan: RequestPlan | undefined;
    const delay = this.delays.find((d) => requestMatches(d.match, f));
    if (delay) plan = { delayMs: delay.ms };
    const apiError = this.apiErrors.length > 0 ? this.planApiError(ex, body) : undefined;
    if (apiError) return { ...plan, ...apiError };
    if (f.isWatch && f.resource?.kind && this.expireNextWatch.has(f.resource.kind) && (f.query.resourceVersion ?? '') !== '' && f.query.resourceVersion !== '0') {
      // Only a resumed watch (from a resourceVersion) can be too old; a fresh one is answered live.
      const faultIndex = this.expireNextWatch.get(f.resource.kind);
      this.expireNextWatch.delete(f.resource.kind);
      this.expiredWatches.add(ex.id);
      this.fault({ fault: 'watch-end', phase: 'expired', requestId: ex.id, ...(faultIndex !== undefined ? { faultIndex } : {}), detail: `answered the controller's re-watch of ${f.resource.kind} from resourceVersion ${f.query.resourceVersion} with 410 Expired; it relists` });
      return { ...plan, expireWatch: true };
    }
    const view = this.staleViews.get(ex.epoch);
    if (!view || view.released) return plan;
    const rv = f.query.resourceVersion;
    // resourceVersion unset asks for a consistent read (a LIST from etcd, a WATCH from the newest
    // state): no API server answers it from a lagging cache. "0" may be answered by any cache.
    const consistentRead = rv === undefined || rv === '';
    if (consistentRead && this.options.contract === 'strict') return plan;
    const contract = consistentRead ? 'resourceVersion unset: a consistent read, beyond the API contract' : 'resourceVersion "0": a lagging cache may answer this';
    const beyond = consistentRead ? { beyondContract: `${f.verb === 'watch' ? 'a WATCH' : 'a LIST'} with resourceVersion unset (a consistent read) answered from a stale view` } : {};
    const note = (detail: string) => {
      view.served();
      if (beyond.beyondContract) this.beyondContractReasons.add(beyond.beyondContract);
      this.fault({ fault: 'stale-restart', phase: 'applied', requestId: ex.id, resourceVersion: view.resourceVersion, ...beyond, detail });
    };
    if (view.appliesToWatch(f)) {
      if (f.query.sendInitialEvents === 'true') {
        note('WatchList (sendInitialEvents) refused with 422 so the client falls back to LIST');
        return { ...plan, answer: { status: 422, object: watchListForbidden() } };
      }
      const fromScratch = rv === undefined || rv === '' || rv === '0';
      const synthetic = fromScratch ? view.objectsFor(f) : undefined;
      if (fromScratch && !synthetic) return plan;
      note(fromScratch ? `WATCH from "${rv ?? ''}": the view's state as ADDED events, then held until release` : `WATCH from resourceVersion ${rv} held until release`);
      return {
        ...plan,
        heldWatch: {
          ...(synthetic ? { synthetic } : {}),
          ...(fromScratch ? { resumeFrom: view.resourceVersion } : {}),
          whenReleased: (resume) => view.whenReleased(resume),
        },
      };
    }
    if (view.appliesToList(f)) {
      return {
        ...plan,
        rewriteList: (live) => {
          const out = view.rewriteList(f, live);
          if (out) note(`LIST served from the view at resourceVersion ${view.resourceVersion} (${contract})`);
          return out;
        },
      };
    }
    return plan;
  }

  // --- watch stages -----------------------------------------------------------------------------

  private watchStages(ex: Exchange): WatchEventStage[] {
    const stages: WatchEventStage[] = [];
    const f = ex.facts!;
    const view = this.options.clusterView;
    if (f.resource) {
      // A new watch of a resource whose stream was expired: the controller has relisted it.
      const resource = `${f.resource.group}/${f.resource.resource}`;
      this.watchResource.set(ex.id, resource);
      // A re-watch answered 410 Expired is not the controller watching again: it relists first.
      if (!this.expiredWatches.delete(ex.id)) this.awaitingRelist.delete(resource);
    }
    if (view && f.resource) {
      stages.push(clusterSyncStage({ alive: () => ex.alive, group: f.resource.group, resource: f.resource.resource }, view, () => this.needsClusterSync()));
    }
    stages.push(
      this.holds.stageFor({
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

  // --- delays and disconnects -------------------------------------------------------------------

  /** Adds `ms` of latency before each matching request is forwarded, until removed. */
  addDelay(match: RequestMatch, ms: number): { remove(): void } {
    const entry = { match, ms };
    this.delays.push(entry);
    this.fault({ fault: 'delay', phase: 'applied', ...(match.key ? { key: match.key } : {}), detail: `delaying ${describeMatch(match)} by ${ms} ms` });
    return {
      remove: () => {
        const i = this.delays.indexOf(entry);
        if (i < 0) return;
        this.delays.splice(i, 1);
        this.fault({ fault: 'delay', phase: 'released', detail: `no more delay for ${describeMatch(match)}` });
      },
    };
  }

  /**
   * Closes the current controller's watch streams or connections. Graceful: watch streams end
   * cleanly (the client re-watches from its last resourceVersion), HTTP/2 connections get GOAWAY,
   * HTTP/1.1 connections are closed once their requests are answered. Reset: RST_STREAM / TCP reset.
   */
  disconnect(options: DisconnectOptions): { streams: number[]; connections: number } {
    const members = this.epoch.activeMembers().filter((m): m is Exchange => m instanceof Exchange);
    const streams: number[] = [];
    let connections = 0;
    const reason = `the proxy ${options.mode === 'graceful' ? 'closed' : 'reset'} the ${options.target === 'watches' ? 'stream' : 'connection'} (disconnect fault)`;
    if (options.target === 'watches') {
      for (const ex of members) {
        if (!ex.isOpenStream) continue;
        if (options.kind && ex.facts?.resource?.kind !== options.kind) continue;
        streams.push(ex.id);
        if (options.mode === 'graceful') ex.closeGracefully(reason);
        else ex.reset(reason);
      }
    } else {
      for (const ex of members) if (ex.isOpenStream) streams.push(ex.id);
      const conns = this.epoch.openConnections();
      const h2 = [...this.sessions.entries()].filter(([, e]) => e === this.epoch).map(([s]) => s);
      connections = conns.length;
      if (options.mode === 'graceful') {
        for (const ex of members) if (ex.isOpenStream) ex.closeGracefully(reason);
        for (const s of h2) s.close();
        for (const c of conns) {
          if (h2.some((s) => (s.socket as unknown) === c)) continue;
          this.closeWhenIdle.add(c);
          this.maybeCloseIdle(c);
        }
      } else {
        for (const ex of members) ex.terminate(reason);
        for (const c of conns) resetSocket(c as Socket);
      }
    }
    this.fault({ fault: 'disconnect', phase: 'applied', streams, detail: `${options.mode} ${options.target}${options.kind ? ` of kind ${options.kind}` : ''}: ${streams.length} stream(s), ${connections} connection(s)` });
    return { streams, connections };
  }

  private maybeCloseIdle(conn: ClientConnection): void {
    if (!this.closeWhenIdle.has(conn)) return;
    const busy = this.epoch.activeMembers().some((m) => m instanceof Exchange && m.connection === conn);
    if (busy) return;
    this.closeWhenIdle.delete(conn);
    (conn as Socket).end();
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
      this.fault({
        fault: 'lease-release',
        phase: 'applied',
        key: record.key,
        detail: ok ? `${record.form === 'lease' ? 'deleted the Lease' : 'cleared the leader annotation'} of the killed controller (HTTP ${res.status})` : `could not release (HTTP ${res.status})`,
      });
    }
    return released;
  }

  // --- epochs and lifecycle ---------------------------------------------------------------------

  /** Ends the current connection epoch (see epoch.ts); later connections pass through normally. */
  startNewEpoch(): void {
    const old = this.epoch;
    this.epoch = new Epoch(old.number + 1);
    old.end('the controller was stopped (connection epoch ended)');
    // A new process lists everything afresh.
    this.awaitingRelist.clear();
  }

  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    this.unsubscribeView?.();
    this.serializer?.stop();
    const closed = new Promise<void>((resolve) => this.server.close(() => resolve()));
    this.epoch.end('the proxy stopped');
    for (const s of this.sessions.keys()) s.destroy();
    if ('closeAllConnections' in this.server) this.server.closeAllConnections();
    this.upstream.destroy();
    await closed;
  }

  private currentEpochOf(req: ClientRequest): Epoch {
    const conn = isHttp2Request(req) ? req.stream.session : req.socket;
    return (conn && this.epochOf.get(conn)) ?? this.epoch;
  }

  private onRequest(req: ClientRequest, res: ClientResponse): void {
    const epoch = this.currentEpochOf(req);
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
    try {
      ex.run();
    } catch (err) {
      this.log(`request ${ex.id} ${req.method} ${req.url}: ${(err as Error).message}`);
      ex.terminate('proxy error');
    }
  }

  private onUpgrade(req: http.IncomingMessage, socket: Duplex, head: Buffer): void {
    const epoch = this.currentEpochOf(req);
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

function requestMatches(m: RequestMatch, f: NonNullable<Exchange['facts']>): boolean {
  if (m.verbs && !m.verbs.includes(f.verb)) return false;
  if (m.kind && f.resource?.kind !== m.kind) return false;
  if (m.resource && f.resource?.resource !== m.resource) return false;
  if (m.key && f.key !== m.key) return false;
  return true;
}

function describeMatch(m: RequestMatch): string {
  const parts = [m.verbs?.join('/') ?? 'all requests', m.kind ? `of kind ${m.kind}` : '', m.resource ? `on ${m.resource}` : '', m.key ? `of ${m.key}` : ''];
  return parts.filter(Boolean).join(' ');
}
