/**
 * Protocol upgrades (WebSocket watches of Java clients, exec/attach/port-forward, SPDY): recorded as a
 * request, then piped raw in both directions after the upstream's 101. For a WebSocket watch the
 * proxy also reads the server's messages as they pass (websocket-watch.ts) and records each watch
 * event, with stream open/close, like a plain watch. Event-level faults do not apply to upgraded
 * streams; the crash hold and epochs do (nothing passes the gate, the tunnel dies with its epoch).
 */
import type http from 'node:http';
import type { Duplex } from 'node:stream';
import { parseApiPath, requestVerb } from '../src/model/api-path.js';
import type { Epoch, EpochMember, EpochMembership } from './epoch.js';
import { endToEndHeaders, rewriteAccept, withUpstreamAuthorization } from './headers.js';
import { upstreamFailureStatus } from './status.js';
import type { ExchangeHost } from './exchange.js';
import { decodeWatchLine } from './watch-lines.js';
import { WebSocketMessageReader } from './websocket-watch.js';
import type { RequestVerb } from '../src/model/api-path.js';

/** Raw header pairs without the named ones (case-insensitive). */
function withoutHeaders(rawHeaders: string[], drop: RegExp): string[] {
  const kept: string[] = [];
  for (let i = 0; i + 1 < rawHeaders.length; i += 2) {
    if (!drop.test(rawHeaders[i]!)) kept.push(rawHeaders[i]!, rawHeaders[i + 1]!);
  }
  return kept;
}

function rawHead(statusCode: number, statusMessage: string, rawHeaders: string[]): string {
  let head = `HTTP/1.1 ${statusCode} ${statusMessage}\r\n`;
  for (let i = 0; i + 1 < rawHeaders.length; i += 2) head += `${rawHeaders[i]}: ${rawHeaders[i + 1]}\r\n`;
  return head + '\r\n';
}

export class UpgradeTunnel implements EpochMember {
  private readonly startedAt = Date.now();
  private upstreamReq: http.ClientRequest | undefined;
  private upstreamSocket: Duplex | undefined;
  private closed = false;
  private verb: RequestVerb = 'other';
  private kind: string | undefined;
  private streamOpen = false;
  private membership: EpochMembership | undefined;

  constructor(
    readonly id: number,
    private readonly host: Pick<ExchangeHost, 'upstream' | 'trace' | 'incarnation' | 'log' | 'touch'>,
    readonly epoch: Epoch,
    private readonly req: http.IncomingMessage,
    private readonly socket: Duplex,
    private readonly head: Buffer,
  ) {}

  run(): void {
    this.membership = this.epoch.join(this);
    this.socket.on('error', () => this.terminate('client socket error'));
    this.socket.on('close', () => this.terminate('the controller closed the connection'));
    this.epoch.gate.pass(() => this.forward());
  }

  private forward(): void {
    if (this.closed) return;
    const url = new URL(this.req.url ?? '/', 'http://proxy.invalid');
    const apiPath = parseApiPath(url.pathname);
    this.verb = requestVerb(this.req.method ?? 'GET', apiPath, url.searchParams);
    this.host.trace.append({
      type: 'request',
      id: this.id,
      incarnation: this.host.incarnation(),
      method: this.req.method ?? 'GET',
      path: url.pathname,
      query: Object.fromEntries(url.searchParams.entries()),
      verb: this.verb,
      ...(apiPath
        ? {
            resource: {
              group: apiPath.group,
              version: apiPath.version,
              resource: apiPath.resource,
              ...(apiPath.subresource ? { subresource: apiPath.subresource } : {}),
            },
          }
        : {}),
      bodyBytes: 0,
    });
    this.host.touch();
    const headers = endToEndHeaders(this.req.headers);
    headers.connection = 'Upgrade';
    headers.upgrade = this.req.headers.upgrade ?? 'websocket';
    const accept = rewriteAccept(this.req.headers.accept);
    if (accept !== undefined) headers.accept = accept;
    withUpstreamAuthorization(headers, this.host.upstream.token);
    const up = this.host.upstream.upgradeRequest(this.req.method ?? 'GET', this.req.url ?? '/', headers);
    this.upstreamReq = up;
    up.on('upgrade', (upRes, upSocket, upHead) => {
      this.upstreamSocket = upSocket;
      if (this.closed) {
        upSocket.destroy();
        return;
      }
      this.record(upRes.statusCode ?? 101);
      this.socket.write(rawHead(upRes.statusCode ?? 101, upRes.statusMessage ?? 'Switching Protocols', upRes.rawHeaders));
      if (upHead.length > 0) this.socket.write(upHead);
      if (this.head.length > 0) upSocket.write(this.head);
      upSocket.on('error', () => this.terminate('upstream socket error'));
      upSocket.on('close', () => this.terminate('the API server closed the connection'));
      const isWebSocket = String(upRes.headers.upgrade ?? '').toLowerCase() === 'websocket';
      if (isWebSocket && this.verb === 'watch') this.recordWatchMessages(upSocket, upHead, String(upRes.headers['sec-websocket-protocol'] ?? ''));
      upSocket.pipe(this.socket);
      this.socket.pipe(upSocket);
    });
    up.on('response', (upRes) => {
      // The API server refused the upgrade: relay its answer and hang up.
      this.record(upRes.statusCode ?? 502);
      const chunks: Buffer[] = [];
      upRes.on('data', (c: Buffer) => chunks.push(c));
      upRes.on('end', () => {
        if (this.closed) return;
        const body = Buffer.concat(chunks);
        const kept = withoutHeaders(upRes.rawHeaders, /^(connection|transfer-encoding|content-length|keep-alive)$/i);
        this.socket.end(
          rawHead(upRes.statusCode ?? 502, upRes.statusMessage ?? '', [...kept, 'Content-Length', String(body.length), 'Connection', 'close']) +
            body.toString('latin1'),
          'latin1',
        );
      });
    });
    up.on('error', (err) => {
      if (this.closed) return;
      const { code, object } = upstreamFailureStatus(err);
      this.host.log(`upgrade ${this.id} ${this.req.method} ${this.req.url}: upstream failed (${err.message}); answering ${code}`);
      this.record(code);
      const body = JSON.stringify(object);
      this.socket.end(
        rawHead(code, 'Upstream Failure', ['Content-Type', 'application/json', 'Content-Length', String(Buffer.byteLength(body)), 'Connection', 'close']) +
          body,
      );
    });
    up.end();
  }

  /** Records the watch events of a WebSocket watch as they pass to the controller. */
  private recordWatchMessages(upSocket: Duplex, upHead: Buffer, subprotocol: string): void {
    const reader = new WebSocketMessageReader(subprotocol.startsWith('base64.'));
    this.streamOpen = true;
    this.host.trace.append({ type: 'stream-open', id: this.id });
    void this.host.upstream
      .lookupResource(...this.resourceOf())
      .then((info) => (this.kind = info?.kind))
      .catch(() => undefined);
    const onData = (chunk: Buffer) => {
      for (const text of reader.push(chunk)) {
        const e = decodeWatchLine(Buffer.from(text), this.kind);
        if (!e.type || !e.object) continue;
        this.host.trace.append({
          type: 'watch-event',
          id: this.id,
          eventType: e.type,
          ...(e.key ? { key: e.key } : {}),
          ...(e.resourceVersion !== undefined ? { resourceVersion: e.resourceVersion } : {}),
          object: e.object,
        });
        this.host.touch();
      }
    };
    if (upHead.length > 0) onData(upHead);
    upSocket.on('data', onData);
  }

  private resourceOf(): [string, string, string] {
    const apiPath = parseApiPath(new URL(this.req.url ?? '/', 'http://proxy.invalid').pathname);
    return [apiPath?.group ?? '', apiPath?.version ?? '', apiPath?.resource ?? ''];
  }

  private record(status: number): void {
    this.host.trace.append({ type: 'response', id: this.id, status, durationMs: Date.now() - this.startedAt });
  }

  terminate(reason: string): void {
    if (this.closed) return;
    this.closed = true;
    if (this.streamOpen) {
      this.streamOpen = false;
      this.host.trace.append({ type: 'stream-close', id: this.id, reason });
    }
    this.upstreamReq?.destroy();
    this.upstreamSocket?.destroy();
    this.socket.destroy();
    this.epoch.leave(this.membership);
  }
}
