/**
 * The controller proxy: sits between the controller under test and the API server, relays every
 * request faithfully (JSON only, see headers.ts), records what the controller asked and was shown
 * into the controller trace, and offers the fault primitives the coordinator drives.
 *
 * Fault primitives so far: crash-after-write (hold everything of the controller right after its n-th
 * successful write of a given object, until the coordinator has killed it and starts a new epoch).
 *
 * Built on node:http rather than http-proxy(-3): watches are relayed event by event, writes are held
 * in a gate, and every connection belongs to an epoch whose end aborts its upstream requests; a
 * generic proxy library would be bypassed for all three.
 */
import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { parse as parseYaml, stringify as stringifyYaml } from 'yaml';
import { kubeconfigYaml } from '../src/kube/kubeconfig.js';
import { describeWrite, type WriteTrigger } from '../src/model/plan.js';
import type { TraceSink } from '../src/model/trace.js';
import { Epoch } from './epoch.js';
import { Exchange, type ExchangeHost } from './exchange.js';
import { UpgradeTunnel } from './upgrade.js';
import { Upstream } from './upstream.js';
import { WriteTriggers, type CompletedWrite } from './write-triggers.js';

export interface ControllerProxyOptions {
  /** The API server, e.g. http://127.0.0.1:PORT. */
  upstream: string;
  upstreamCaPem?: string;
  upstreamToken?: string;
  upstreamClientCertPem?: string;
  upstreamClientKeyPem?: string;
  /** Default 0 (a random port); the proxy binds 127.0.0.1 only. */
  port?: number;
  /** Every event of the controller trace goes here. */
  trace: TraceSink;
  /** Diagnostics (upstream failures...). Default: stderr. */
  log?: (line: string) => void;
}

export interface ProxyActivity {
  /** Non-watch requests being served. */
  inFlight: number;
  openWatches: number;
  /** Date.now() of the last request start/finish or watch event delivered. */
  lastActivityAt: number;
}

export interface CrashTriggered {
  requestId: number;
  description: string;
}

interface CrashFault {
  trigger: WriteTrigger;
  onTriggered: (info: CrashTriggered) => void;
}

export class ControllerProxy {
  /** Which controller process is connected (1 at first start, +1 per restart); set by the coordinator. */
  incarnation = 1;
  readonly url: string;

  private readonly upstream: Upstream;
  private readonly trace: TraceSink;
  private readonly log: (line: string) => void;
  private readonly triggers = new WriteTriggers<CrashFault>();
  private readonly host: ExchangeHost;
  private epoch = new Epoch(1);
  private nextRequestId = 1;
  private inFlight = 0;
  private openWatches = 0;
  private lastActivityAt = Date.now();
  private readonly epochOf = new WeakMap<Socket, Epoch>();
  private stopped = false;

  private constructor(
    private readonly server: http.Server,
    private readonly options: ControllerProxyOptions,
    upstream: Upstream,
  ) {
    this.upstream = upstream;
    this.trace = options.trace;
    this.log = options.log ?? ((line) => process.stderr.write(`kperturb proxy: ${line}\n`));
    this.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const self = this;
    this.host = {
      upstream,
      trace: this.trace,
      upstreamToken: options.upstreamToken,
      incarnation: () => self.incarnation,
      log: (line) => self.log(line),
      touch: () => {
        self.lastActivityAt = Date.now();
      },
      completedWrite: (write, epoch) => self.onCompletedWrite(write, epoch),
      finished: (ex) => {
        if (ex.isWatch) self.openWatches--;
        else self.inFlight--;
        self.lastActivityAt = Date.now();
      },
    };
    server.on('connection', (socket: Socket) => {
      this.epochOf.set(socket, this.epoch);
      this.epoch.adopt(socket);
    });
    server.on('request', (req, res) => this.onRequest(req, res));
    server.on('upgrade', (req: http.IncomingMessage, socket: Duplex, head: Buffer) => this.onUpgrade(req, socket, head));
    server.on('clientError', (_err, socket: Duplex) => {
      if (socket.writable) socket.end('HTTP/1.1 400 Bad Request\r\nConnection: close\r\n\r\n');
      else socket.destroy();
    });
  }

  static async start(options: ControllerProxyOptions): Promise<ControllerProxy> {
    const upstream = new Upstream({
      url: options.upstream,
      ...(options.upstreamCaPem ? { caPem: options.upstreamCaPem } : {}),
      ...(options.upstreamToken ? { token: options.upstreamToken } : {}),
      ...(options.upstreamClientCertPem ? { clientCertPem: options.upstreamClientCertPem } : {}),
      ...(options.upstreamClientKeyPem ? { clientKeyPem: options.upstreamClientKeyPem } : {}),
    });
    // Watches last minutes; the default request timeout would cut them.
    const server = http.createServer({ requestTimeout: 0, keepAliveTimeout: 30_000 });
    server.timeout = 0;
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(options.port ?? 0, '127.0.0.1', () => {
        server.off('error', reject);
        resolve();
      });
    });
    return new ControllerProxy(server, options, upstream);
  }

  /**
   * A kubeconfig that points the controller at this proxy (credentials are the proxy's business).
   * It says `insecure-skip-tls-verify: true` because @kubernetes/client-node (1.x) refuses plain
   * http:// servers otherwise; Go clients ignore the flag for http://.
   */
  kubeconfigYaml(): string {
    const doc = parseYaml(kubeconfigYaml(this.url, { name: 'kperturb-proxy' })) as { clusters: Array<{ cluster: Record<string, unknown> }> };
    for (const c of doc.clusters) c.cluster['insecure-skip-tls-verify'] = true;
    return stringifyYaml(doc);
  }

  activity(): ProxyActivity {
    return { inFlight: this.inFlight, openWatches: this.openWatches, lastActivityAt: this.lastActivityAt };
  }

  /** Upstream requests still open (watches included); for tests and leak checks. */
  upstreamOpenCount(): number {
    return this.upstream.openRequestCount();
  }

  /** Upstream sockets still open, idle keep-alive ones included; for tests and leak checks. */
  upstreamSocketCount(): number {
    return this.upstream.openSocketCount();
  }

  armCrashAfterWrite(trigger: WriteTrigger, onTriggered: (info: CrashTriggered) => void): void {
    this.triggers.arm({ ...trigger }, { trigger: { ...trigger }, onTriggered });
  }

  /** Ends the current connection epoch (see epoch.ts); later connections pass through normally. */
  startNewEpoch(): void {
    const old = this.epoch;
    this.epoch = new Epoch(old.number + 1);
    old.end('the controller was stopped (connection epoch ended)');
  }

  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    const closed = new Promise<void>((resolve) => this.server.close(() => resolve()));
    this.epoch.end('the proxy stopped');
    this.server.closeAllConnections();
    this.upstream.destroy();
    await closed;
  }

  private currentEpochOf(socket: Socket): Epoch {
    return this.epochOf.get(socket) ?? this.epoch;
  }

  private onRequest(req: http.IncomingMessage, res: http.ServerResponse): void {
    const epoch = this.currentEpochOf(req.socket);
    if (epoch.ended || this.stopped) {
      req.socket.destroy();
      return;
    }
    const ex = new Exchange(this.nextRequestId++, this.host, epoch, req, res);
    if (ex.isWatch) this.openWatches++;
    else this.inFlight++;
    this.lastActivityAt = Date.now();
    try {
      ex.run();
    } catch (err) {
      this.log(`request ${ex.id} ${req.method} ${req.url}: ${(err as Error).message}`);
      ex.terminate('proxy error');
    }
  }

  private onUpgrade(req: http.IncomingMessage, socket: Duplex, head: Buffer): void {
    const epoch = this.currentEpochOf(req.socket);
    if (epoch.ended || this.stopped) {
      socket.destroy();
      return;
    }
    new UpgradeTunnel(this.nextRequestId++, this.host, epoch, req, socket, head).run();
  }

  private onCompletedWrite(write: CompletedWrite, epoch: Epoch): void {
    for (const { payload } of this.triggers.record(write)) this.fireCrash(payload, write, epoch);
  }

  /** Holds everything of the controller (its epoch), records the fault, tells the coordinator. */
  private fireCrash(fault: CrashFault, write: CompletedWrite, epoch: Epoch): void {
    epoch.gate.hold();
    const description = describeWrite(fault.trigger);
    this.trace.append({
      type: 'fault',
      fault: 'crash-after-write',
      phase: 'triggered',
      requestId: write.requestId,
      detail: `the controller ${description}; holding it until it is killed`,
    });
    try {
      fault.onTriggered({ requestId: write.requestId, description });
    } catch (err) {
      this.log(`crash-after-write callback failed: ${(err as Error).message}`);
    }
  }
}
