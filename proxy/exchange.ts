/**
 * One controller request and its answer, as a sequence of explicit stages:
 *
 *   receive (read the body) -> classify (verb, resource, key) -> admit (epoch gate) -> forward upstream
 *     -> non-watch: collect the answer -> record -> completed-write hook (triggers) -> deliver (gate)
 *     -> watch:     record -> WatchRelay (event by event, through the gate)
 *
 * Faults that act on whole requests (delays, held writes, injected errors) slot in at admit and
 * deliver; the crash fault holds the epoch gate from the completed-write hook. Whatever happens,
 * the upstream request dies with the controller's connection.
 */
import type http from 'node:http';
import { parseApiPath, requestVerb } from '../src/model/api-path.js';
import { isObject, type KubeObject } from '../src/model/object-key.js';
import type { TraceSink } from '../src/model/trace.js';
import { classifyRequest, decodeContent, keyOfAnswer, parseJsonBody, type RequestFacts } from './classify.js';
import type { Epoch, EpochMember } from './epoch.js';
import { endToEndHeaders, upstreamRequestHeaders } from './headers.js';
import { upstreamFailureStatus } from './status.js';
import type { Upstream } from './upstream.js';
import { WatchRelay } from './watch-relay.js';
import type { CompletedWrite } from './write-triggers.js';
import { isSuccessStatus, isTriggerWriteVerb } from '../src/model/controller-write.js';

/** What an exchange needs from the proxy that runs it. */
export interface ExchangeHost {
  readonly upstream: Upstream;
  readonly trace: TraceSink;
  readonly upstreamToken: string | undefined;
  incarnation(): number;
  log(line: string): void;
  /** Something moved (a request finished, an event was delivered). */
  touch(): void;
  /** A successful non-dry-run write completed upstream; may hold the exchange's epoch. */
  completedWrite(write: CompletedWrite, epoch: Epoch): void;
  /** The exchange is over (exactly once). */
  finished(exchange: Exchange): void;
}

function noBodyAllowed(method: string, status: number): boolean {
  return method === 'HEAD' || status === 204 || status === 304 || (status >= 100 && status < 200);
}

export class Exchange implements EpochMember {
  readonly startedAt = Date.now();
  /** Known before classification, so activity can tell watches from other requests at once. */
  readonly isWatch: boolean;
  private facts: RequestFacts | undefined;
  private upstreamReq: http.ClientRequest | undefined;
  private relay: WatchRelay | undefined;
  /** The controller has received response headers (or the proxy started answering). */
  private answered = false;
  private streamOpen = false;
  private upstreamFailed = false;
  private closed = false;

  constructor(
    readonly id: number,
    private readonly host: ExchangeHost,
    readonly epoch: Epoch,
    private readonly req: http.IncomingMessage,
    private readonly res: http.ServerResponse,
  ) {
    const url = new URL(req.url ?? '/', 'http://proxy.invalid');
    this.isWatch = requestVerb(req.method ?? 'GET', parseApiPath(url.pathname), url.searchParams) === 'watch';
  }

  run(): void {
    this.epoch.join(this);
    this.req.on('error', () => {});
    this.res.on('error', () => {});
    this.res.on('close', () => {
      if (this.closed) return;
      if (this.res.writableFinished) this.complete();
      else this.terminate('the controller closed the connection');
    });
    this.receive().catch((err: unknown) => {
      this.host.log(`request ${this.id}: ${(err as Error).message}`);
      this.terminate('proxy error');
    });
  }

  // --- stage: receive -------------------------------------------------------------------------
  private async receive(): Promise<void> {
    const body = await readBody(this.req);
    if (this.closed || body === undefined) return;
    await this.classify(body);
  }

  // --- stage: classify ------------------------------------------------------------------------
  private async classify(body: Buffer): Promise<void> {
    this.facts = await classifyRequest(
      this.req.method ?? 'GET',
      this.req.url ?? '/',
      body,
      this.req.headers['content-type'],
      (g, v, r) => this.host.upstream.lookupResource(g, v, r),
    );
    if (this.closed) return;
    this.admit(body);
  }

  // --- stage: admit ---------------------------------------------------------------------------
  private admit(body: Buffer): void {
    this.epoch.gate.pass(() => this.forward(body));
  }

  // --- stage: forward -------------------------------------------------------------------------
  private forward(body: Buffer): void {
    if (this.closed) return;
    const f = this.facts!;
    this.recordRequest(f);
    const headers = upstreamRequestHeaders(this.req.headers, {
      ...(this.host.upstreamToken ? { token: this.host.upstreamToken } : {}),
      dropAcceptEncoding: f.isWatch,
    });
    if (body.length > 0 || headers['content-length'] !== undefined) headers['content-length'] = String(body.length);
    const up = this.host.upstream.request(f.method, f.rawUrl, headers);
    this.upstreamReq = up;
    up.on('response', (upRes) => this.onUpstreamResponse(upRes));
    up.on('error', (err) => this.onUpstreamError(err));
    up.end(body);
  }

  private onUpstreamResponse(upRes: http.IncomingMessage): void {
    if (this.closed) {
      upRes.destroy();
      return;
    }
    upRes.on('error', (err) => this.onUpstreamError(err));
    upRes.on('aborted', () => this.onUpstreamError(new Error('the API server closed the connection mid-answer')));
    const status = upRes.statusCode ?? 502;
    if (this.facts!.isWatch && status === 200) this.relayWatch(upRes);
    else this.collect(upRes, status);
  }

  // --- non-watch: collect -> record -> completed-write hook -> deliver ------------------------
  private collect(upRes: http.IncomingMessage, status: number): void {
    const chunks: Buffer[] = [];
    upRes.on('data', (c: Buffer) => chunks.push(c));
    upRes.on('end', () => {
      if (this.closed) return;
      const bytes = Buffer.concat(chunks);
      const decoded = decodeContent(bytes, upRes.headers['content-encoding']);
      const object = decoded ? parseJsonBody(decoded, upRes.headers['content-type']) : undefined;
      this.recordResponse(status, isObject(object) ? (object as KubeObject) : undefined);
      this.afterUpstreamAnswer(status, isObject(object) ? (object as KubeObject) : undefined);
      const headers = endToEndHeaders(upRes.headers);
      this.deliver(status, upRes.statusMessage, headers, bytes);
    });
  }

  /** The completed-write hook: counts successful writes, which may fire a trigger (and hold the gate). */
  private afterUpstreamAnswer(status: number, object: KubeObject | undefined): void {
    const f = this.facts!;
    if (!isSuccessStatus(status) || f.dryRun || !isTriggerWriteVerb(f.verb)) return;
    const key = f.verb === 'create' && f.apiPath?.name === undefined ? (keyOfAnswer(object, f.resource?.kind) ?? f.key) : f.key;
    if (!key) return;
    const write: CompletedWrite = { requestId: this.id, verb: f.verb, key };
    if (f.apiPath?.subresource) write.subresource = f.apiPath.subresource;
    this.host.completedWrite(write, this.epoch);
  }

  private deliver(status: number, statusMessage: string | undefined, headers: http.OutgoingHttpHeaders, body: Buffer): void {
    this.epoch.gate.pass(() => {
      if (this.closed) return;
      this.answered = true;
      try {
        const method = this.facts?.method ?? 'GET';
        if (noBodyAllowed(method, status)) {
          this.res.writeHead(status, statusMessage, headers);
          this.res.end();
          return;
        }
        headers['content-length'] = String(body.length);
        this.res.writeHead(status, statusMessage, headers);
        this.res.end(body);
      } catch (err) {
        this.host.log(`request ${this.id} ${this.describe()}: could not deliver the answer: ${(err as Error).message}`);
        this.terminate(`proxy error: ${(err as Error).message}`);
      }
    });
  }

  // --- watch: record -> relay -----------------------------------------------------------------
  private relayWatch(upRes: http.IncomingMessage): void {
    const f = this.facts!;
    this.recordResponse(200, undefined);
    const contentType = String(upRes.headers['content-type'] ?? '');
    const relay = new WatchRelay({
      upstream: upRes,
      client: this.res,
      gate: this.epoch.gate,
      ...(f.resource?.kind ? { kind: f.resource.kind } : {}),
      decode: contentType === '' || contentType.includes('json'),
      onOpen: () => {
        this.answered = true;
        this.streamOpen = true;
        this.host.trace.append({ type: 'stream-open', id: this.id });
        this.host.touch();
      },
      onDelivered: (e) => {
        this.host.trace.append({
          type: 'watch-event',
          id: this.id,
          eventType: e.type!,
          ...(e.key ? { key: e.key } : {}),
          ...(e.resourceVersion !== undefined ? { resourceVersion: e.resourceVersion } : {}),
          object: e.object!,
        });
        this.host.touch();
      },
      onEnd: () => this.closeStream('the API server ended the stream'),
      onFailure: (err) => {
        this.host.log(`request ${this.id} ${this.describe()}: relaying the watch failed: ${err.message}`);
        this.terminate(`proxy error: ${err.message}`);
      },
    });
    this.relay = relay;
    relay.start(endToEndHeaders(upRes.headers));
  }

  private closeStream(reason: string): void {
    if (!this.streamOpen) return;
    this.streamOpen = false;
    this.host.trace.append({ type: 'stream-close', id: this.id, reason });
  }

  // --- failures -------------------------------------------------------------------------------
  private onUpstreamError(err: Error): void {
    if (this.closed || this.upstreamFailed) return;
    this.upstreamFailed = true;
    if (this.answered) {
      // Bytes already reached the controller: all it can be told is that the connection broke.
      this.host.log(`request ${this.id} ${this.describe()}: upstream failed mid-answer: ${err.message}`);
      this.terminate(`upstream error: ${err.message}`);
      return;
    }
    this.relay?.stop();
    this.upstreamReq?.destroy();
    const { code, object } = upstreamFailureStatus(err);
    this.host.log(`request ${this.id} ${this.describe()}: upstream failed (${err.message}); answering ${code}`);
    this.recordResponse(code, object);
    this.deliver(code, undefined, { 'content-type': 'application/json' }, Buffer.from(JSON.stringify(object)));
  }

  private describe(): string {
    return `${this.req.method} ${this.req.url}`;
  }

  // --- trace ----------------------------------------------------------------------------------
  private recordRequest(f: RequestFacts): void {
    this.host.trace.append({
      type: 'request',
      id: this.id,
      incarnation: this.host.incarnation(),
      method: f.method,
      path: f.pathname,
      query: f.query,
      verb: f.verb,
      ...(f.resource ? { resource: f.resource } : {}),
      ...(f.key ? { key: f.key } : {}),
      ...(f.body !== undefined ? { body: f.body } : {}),
      bodyBytes: f.bodyBytes,
      ...(f.contentType ? { contentType: f.contentType } : {}),
    });
    this.host.touch();
  }

  private recordResponse(status: number, object: KubeObject | undefined): void {
    this.host.trace.append({
      type: 'response',
      id: this.id,
      status,
      ...(object ? { object } : {}),
      durationMs: Date.now() - this.startedAt,
    });
  }

  // --- end --------------------------------------------------------------------------------------
  private complete(): void {
    if (this.closed) return;
    this.closed = true;
    this.epoch.leave(this);
    this.host.finished(this);
  }

  /** Ends the exchange now: aborts the upstream request and drops the controller's connection if unanswered. */
  terminate(reason: string): void {
    if (this.closed) return;
    this.closed = true;
    this.relay?.stop();
    this.upstreamReq?.destroy();
    if (!this.res.writableFinished) this.res.destroy();
    this.closeStream(reason);
    this.epoch.leave(this);
    this.host.finished(this);
  }
}

/** Reads a request body; undefined if the client went away first. */
function readBody(req: http.IncomingMessage): Promise<Buffer | undefined> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let done = false;
    const finish = (value: Buffer | undefined) => {
      if (done) return;
      done = true;
      resolve(value);
    };
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => finish(Buffer.concat(chunks)));
    req.on('error', () => finish(undefined));
    req.on('close', () => finish(req.complete ? Buffer.concat(chunks) : undefined));
  });
}
