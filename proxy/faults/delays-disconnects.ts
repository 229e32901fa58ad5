/**
 * Faults on the controller's connections rather than on what it is shown: latency for a class of
 * requests (`addDelay`) and closing or resetting its watch streams or connections (`disconnect`).
 */
import type http2 from 'node:http2';
import type { Socket } from 'node:net';
import type { RequestVerb } from '../../src/model/api-path.js';
import type { ObjectKey } from '../../src/model/object-key.js';
import { resetSocket, type ClientConnection } from '../client-conn.js';
import type { Epoch } from '../epoch.js';
import { Exchange } from '../exchange.js';
import type { FaultContext } from './context.js';
import type { RequestInterceptor } from './primitives.js';

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

export class ConnectionFaults {
  private readonly delays: Array<{ match: RequestMatch; ms: number }> = [];
  private readonly closeWhenIdle = new Set<ClientConnection>();

  constructor(
    private readonly ctx: FaultContext,
    private readonly currentEpoch: () => Epoch,
    /** The HTTP/2 sessions of an epoch (they get GOAWAY on a graceful disconnect). */
    private readonly sessionsOf: (epoch: Epoch) => http2.Http2Session[],
  ) {}

  /** Adds `ms` of latency before each matching request is forwarded, until removed. */
  addDelay(match: RequestMatch, ms: number): { remove(): void } {
    const entry = { match, ms };
    this.delays.push(entry);
    this.ctx.record({ fault: 'delay', phase: 'applied', ...(match.key ? { key: match.key } : {}), detail: `delaying ${describeMatch(match)} by ${ms} ms` });
    return {
      remove: () => {
        const i = this.delays.indexOf(entry);
        if (i < 0) return;
        this.delays.splice(i, 1);
        this.ctx.record({ fault: 'delay', phase: 'released', detail: `no more delay for ${describeMatch(match)}` });
      },
    };
  }

  /** The request path's latency step: the first armed delay matching the request, before however the rest answers it. */
  readonly delayInterceptor: RequestInterceptor = (ex, _body, next) => {
    const delayMs = this.delays.find((d) => requestMatches(d.match, ex.facts!))?.ms;
    const rest = next();
    return delayMs === undefined ? rest : { delayMs, ...rest };
  };

  /**
   * Closes the current controller's watch streams or connections. Graceful: watch streams end
   * cleanly (the client re-watches from its last resourceVersion), HTTP/2 connections get GOAWAY,
   * HTTP/1.1 connections are closed once their requests are answered. Reset: RST_STREAM / TCP reset.
   */
  disconnect(options: DisconnectOptions): { streams: number[]; connections: number } {
    const epoch = this.currentEpoch();
    const members = epoch.activeMembers().filter((m): m is Exchange => m instanceof Exchange);
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
      const conns = epoch.openConnections();
      const h2 = this.sessionsOf(epoch);
      connections = conns.length;
      if (options.mode === 'graceful') {
        for (const ex of members) if (ex.isOpenStream) ex.closeGracefully(reason);
        for (const s of h2) s.close();
        for (const c of conns) {
          if (h2.some((s) => (s.socket as unknown) === c)) continue;
          this.closeWhenIdle.add(c);
          this.closeIfIdle(c);
        }
      } else {
        for (const ex of members) ex.terminate(reason);
        for (const c of conns) resetSocket(c as Socket);
      }
    }
    this.ctx.record({
      fault: 'disconnect',
      phase: 'applied',
      streams,
      detail: `${options.mode} ${options.target}${options.kind ? ` of kind ${options.kind}` : ''}: ${streams.length} stream(s), ${connections} connection(s)`,
    });
    return { streams, connections };
  }

  /** A graceful disconnect closes an HTTP/1.1 connection once its last request is answered. */
  closeIfIdle(conn: ClientConnection): void {
    if (!this.closeWhenIdle.has(conn)) return;
    const busy = this.currentEpoch()
      .activeMembers()
      .some((m) => m instanceof Exchange && m.connection === conn);
    if (busy) return;
    this.closeWhenIdle.delete(conn);
    (conn as Socket).end();
  }
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
