/**
 * One controller request and its answer, as a sequence of explicit stages:
 *
 *   receive (read the body) -> classify (verb, resource, key) -> plan (faults on whole requests)
 *     -> admit (delay, epoch gate) -> forward upstream (or answer locally)
 *     -> non-watch: collect the answer -> (rewrite: stale list) -> record -> completed-write hook
 *                   (triggers) -> deliver (gate)
 *     -> watch:     record -> WatchRelay (event by event, through the stream's stages and the gate)
 *
 * Faults on whole requests come from the host's `plan` (delays, stale views, local answers); the
 * crash fault holds the epoch gate from the completed-write hook. Whatever happens, the upstream
 * request dies with the controller's connection.
 */
import type http from 'node:http';
import { HousekeepingRequests } from '../src/model/bookkeeping.js';
import { parseApiPath, requestVerb } from '../src/model/api-path.js';
import { isObject, type KubeObject } from '../src/model/object-key.js';
import { watchDeliveryEvent, type RequestEvent, type TraceSink, type Unstamped } from '../src/model/trace.js';
import { classifyRequest, decodeContent, isJsonLike, parseJsonBody, type RequestFacts } from './classify.js';
import {
  clientGone,
  connectionOf,
  isHttp2Request,
  resetStream,
  writeHeadTo,
  type ClientConnection,
  type ClientRequest,
  type ClientResponse,
} from './client-conn.js';
import type { Epoch, EpochMember, EpochMembership } from './epoch.js';
import { endToEndHeaders, upstreamRequestHeaders } from './headers.js';
import { upstreamFailureStatus } from './status.js';
import type { Upstream } from './upstream.js';
import { WatchRelay, type WatchEventStage } from './watch-relay.js';
import { encodeWatchEvent, type RelayedWatchEvent, type WatchLines } from './watch-lines.js';
import { expiredStatus } from './watch-holds.js';
import { completedWrite, type CompletedWrite } from './write-triggers.js';
import { isSuccessStatus, isTriggerWriteVerb } from '../src/model/controller-write.js';

/** What the host decided for one request, once it is classified. */
export interface RequestPlan {
  /** Wait this long before forwarding (the delay fault). */
  delayMs?: number;
  /** Answer locally, without asking the API server (e.g. the WatchList 422 of a stale view, an api-error fault). */
  answer?: { status: number; object: KubeObject; headers?: Record<string, string> };
  /** api-error `lost-response`: forward, then reset the controller's stream instead of answering. */
  loseResponse?: boolean;
  /** api-error `slow`: forward, then hold the answer this long before delivering it. */
  holdAnswerMs?: number;
  /** watch-end with expire: answer this watch with an in-stream 410 Expired right away (the client relists). */
  expireWatch?: boolean;
  /** Replace a successful JSON list answer (a stale view's list); undefined keeps the live answer. */
  rewriteList?: (live: KubeObject) => KubeObject | undefined;
  /**
   * A stale view's watch: open the stream now, deliver `synthetic` as ADDED events, and forward the
   * watch upstream (from `resumeFrom` if given) only when `whenReleased` calls back.
   */
  heldWatch?: { synthetic?: KubeObject[]; resumeFrom?: string; whenReleased: (resume: () => void) => void };
  /** Called with the answer that reached the controller (for the fault record), and its object when it was read. */
  onAnswered?: (status: number, object?: KubeObject) => void;
}

/** What an exchange needs from the proxy that runs it. */
export interface ExchangeHost {
  readonly upstream: Upstream;
  readonly trace: TraceSink;
  incarnation(): number;
  log(line: string): void;
  /** Something moved (a request finished, an event was delivered). */
  touch(): void;
  /** Tells the controller's housekeeping (leader election, Events) from its work, for settle. */
  readonly housekeeping: HousekeepingRequests;
  /** The request is classified and about to be admitted: faults on whole requests (`body` as received). */
  plan(exchange: Exchange, body: Buffer): RequestPlan | undefined;
  /** The stages this watch stream's events pass (cluster sync, holds, serialized delivery). */
  watchStages(exchange: Exchange): WatchEventStage[];
  /** The proxy's recent watch lines, which its streams decode through. */
  readonly watchLines: WatchLines;
  /** A successful non-dry-run write completed upstream; may hold the exchange's epoch. */
  completedWrite(write: CompletedWrite, epoch: Epoch, exchange: Exchange): void;
  /** The exchange is over (exactly once). */
  finished(exchange: Exchange): void;
}

function noBodyAllowed(method: string, status: number): boolean {
  return method === 'HEAD' || status === 204 || status === 304 || (status >= 100 && status < 200);
}

export class Exchange implements EpochMember {
  readonly startedAt = Date.now();
  /** Leader election or Events: not activity when settle waits for the controller to go quiet. */
  housekeeping = false;
  /** Known before classification, so activity can tell watches from other requests at once. */
  readonly isWatch: boolean;
  readonly connection: ClientConnection;
  private factsValue: RequestFacts | undefined;
  private upstreamReq: http.ClientRequest | undefined;
  private relay: WatchRelay | undefined;
  /** The controller has received response headers (or the proxy started answering). */
  private answered = false;
  private streamOpen = false;
  private upstreamFailed = false;
  private closed = false;
  private requestPlan: RequestPlan | undefined;
  /** The request is in the trace (it passed admission). */
  private recorded = false;
  private membership: EpochMembership | undefined;

  constructor(
    readonly id: number,
    private readonly host: ExchangeHost,
    readonly epoch: Epoch,
    private readonly req: ClientRequest,
    private readonly res: ClientResponse,
  ) {
    const raw = req.url ?? '/';
    // Most requests are not watches: skip parsing the URL twice for them.
    if (raw.includes('watch')) {
      const url = new URL(raw, 'http://proxy.invalid');
      this.isWatch = requestVerb(req.method ?? 'GET', parseApiPath(url.pathname), url.searchParams) === 'watch';
    } else {
      this.isWatch = false;
    }
    this.connection = connectionOf(req);
  }

  /** What the request means (after classification). */
  get facts(): RequestFacts | undefined {
    return this.factsValue;
  }

  get alive(): boolean {
    return !this.closed;
  }

  /** Is this a watch whose stream is open towards the controller? */
  get isOpenStream(): boolean {
    return this.streamOpen && !this.closed;
  }

  run(): void {
    this.membership = this.epoch.join(this);
    this.req.on('error', () => {});
    this.res.on('error', () => {});
    this.res.on('close', () => {
      if (this.closed) return;
      if (this.res.writableFinished) this.complete();
      else this.terminate('the controller closed the connection');
    });
    // Gone before the proxy took the request (its 'close' came before the listener): it is not
    // sent on, and it is not in flight.
    if (clientGone(this.req)) {
      this.terminate('the controller closed the connection before the proxy took the request');
      return;
    }
    try {
      this.receive();
    } catch (err) {
      this.failed(err);
    }
  }

  // --- stage: receive -------------------------------------------------------------------------
  private receive(): void {
    // Most requests (GET, watches) have no body: skip waiting for its end.
    if (hasNoBody(this.req)) {
      this.req.resume();
      this.classify(EMPTY);
      return;
    }
    readBody(this.req).then(
      (body) => {
        if (this.closed || body === undefined) return;
        this.classify(body);
      },
      (err: unknown) => this.failed(err),
    );
  }

  private failed(err: unknown): void {
    this.host.log(`request ${this.id}: ${(err as Error).message}`);
    this.terminate('proxy error');
  }

  // --- stage: classify ------------------------------------------------------------------------
  private classify(body: Buffer): void {
    const upstream = this.host.upstream;
    const facts = classifyRequest(
      this.req.method ?? 'GET',
      this.req.url ?? '/',
      body,
      this.req.headers['content-type'],
      (g, v, r) => upstream.lookupResource(g, v, r),
      (g, v, r) => upstream.knownResource(g, v, r),
    );
    // Synchronous once discovery knows the resource; otherwise after the discovery request.
    if (facts instanceof Promise) {
      facts.then(
        (f) => this.classified(f, body),
        (err: unknown) => this.failed(err),
      );
    } else {
      this.classified(facts, body);
    }
  }

  private classified(facts: RequestFacts, body: Buffer): void {
    this.factsValue = facts;
    if (this.closed) return;
    this.requestPlan = this.host.plan(this, body);
    this.admit(body);
  }

  // --- stage: admit ---------------------------------------------------------------------------
  private admit(body: Buffer): void {
    const delay = this.requestPlan?.delayMs ?? 0;
    if (delay > 0) {
      const timer = setTimeout(() => this.epoch.gate.pass(() => this.forward(body)), delay);
      timer.unref();
      return;
    }
    this.epoch.gate.pass(() => this.forward(body));
  }

  // --- stage: forward -------------------------------------------------------------------------
  private forward(body: Buffer): void {
    if (this.closed) return;
    const f = this.factsValue!;
    this.recordRequest(f);
    const plan = this.requestPlan;
    if (plan?.answer) {
      this.answerLocally(plan.answer.status, plan.answer.object, plan.answer.headers);
      return;
    }
    if (plan?.expireWatch && f.isWatch) {
      this.openExpiredWatch();
      return;
    }
    if (plan?.heldWatch && f.isWatch) {
      this.openHeldWatch(plan.heldWatch);
      return;
    }
    this.sendUpstream(f.rawUrl, body, plan?.rewriteList !== undefined);
  }

  private sendUpstream(rawUrl: string, body: Buffer, identityEncoding: boolean): void {
    const f = this.factsValue!;
    const token = this.host.upstream.token;
    const headers = upstreamRequestHeaders(this.req.headers, {
      ...(token ? { token } : {}),
      dropAcceptEncoding: f.isWatch || identityEncoding,
    });
    if (body.length > 0 || headers['content-length'] !== undefined) headers['content-length'] = String(body.length);
    const up = this.host.upstream.request(f.method, rawUrl, headers);
    this.upstreamReq = up;
    up.on('response', (upRes) => this.onUpstreamResponse(upRes));
    up.on('error', (err) => this.onUpstreamError(err));
    // No body (GET, watches): the head goes out alone, in one plain write rather than a writev of
    // the head and an empty chunk.
    if (body.length > 0) up.end(body);
    else up.end();
  }

  private answerLocally(status: number, object: KubeObject, headers: Record<string, string> = {}): void {
    this.recordResponse(status, object);
    this.requestPlan?.onAnswered?.(status);
    this.deliver(status, undefined, { ...headers, 'content-type': 'application/json' }, Buffer.from(JSON.stringify(object)));
  }

  /** A watch the API server would refuse as too old: HTTP 200, then an in-stream ERROR 410 Expired. */
  private openExpiredWatch(): void {
    this.recordResponse(200, undefined);
    this.requestPlan?.onAnswered?.(200);
    const relay = this.makeRelay(true);
    relay.open({ 'content-type': 'application/json', 'cache-control': 'no-cache, private' });
    this.endReason = 'the proxy answered the re-watch with 410 Expired (watch-end fault)';
    relay.endWith(encodeWatchEvent('ERROR', expiredStatus()));
  }

  private onUpstreamResponse(upRes: http.IncomingMessage): void {
    if (this.closed) {
      upRes.destroy();
      return;
    }
    upRes.on('error', (err) => this.onUpstreamError(err));
    upRes.on('aborted', () => this.onUpstreamError(new Error('the API server closed the connection mid-answer')));
    const status = upRes.statusCode ?? 502;
    if (status === 401) void this.host.upstream.refreshToken();
    if (this.factsValue!.isWatch && status === 200) this.relayWatch(upRes);
    else if (this.relay) this.endHeldWatchWithStatus(upRes, status);
    else this.collect(upRes, status);
  }

  // --- non-watch: collect -> record -> completed-write hook -> deliver ------------------------
  private collect(upRes: http.IncomingMessage, status: number): void {
    const chunks: Buffer[] = [];
    upRes.on('data', (c: Buffer) => chunks.push(c));
    upRes.on('end', () => {
      if (this.closed) return;
      const bytes = chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks);
      const headers = endToEndHeaders(upRes.headers);
      const f = this.factsValue!;
      const plan = this.requestPlan;
      // The answer must be read before it is delivered when something depends on it: a stale view
      // rewrites lists, a write may fire a trigger (which holds the gate before the controller gets
      // the answer), a plan wants to know, or the gate is held (the record keeps its place then).
      const readFirst = plan?.rewriteList !== undefined || plan?.onAnswered !== undefined || this.epoch.gate.isHeld || mayFireTrigger(f, status);
      if (readFirst) {
        this.readAnswer(upRes, status, bytes, headers);
        return;
      }
      // Nothing depends on the answer's content: the controller gets the bytes first, the trace
      // records the same answer right after (in the same turn of the event loop, so in order).
      this.deliver(status, upRes.statusMessage, headers, bytes);
      this.recordAnswer(status, upRes, bytes);
    });
  }

  private answerObject(upRes: http.IncomingMessage, bytes: Buffer): KubeObject | undefined {
    const decoded = decodeContent(bytes, upRes.headers['content-encoding']);
    const parsed = decoded ? parseJsonBody(decoded, upRes.headers['content-type']) : undefined;
    return isObject(parsed) ? (parsed as KubeObject) : undefined;
  }

  /** Records an answer nothing else reads: a sink that takes the JSON text gets it unparsed. */
  private recordAnswer(status: number, upRes: http.IncomingMessage, bytes: Buffer): void {
    const trace = this.host.trace;
    if (!trace.appendAnswer) {
      this.recordResponse(status, this.answerObject(upRes, bytes));
      return;
    }
    const decoded = decodeContent(bytes, upRes.headers['content-encoding']);
    if (!decoded || !isJsonLike(upRes.headers['content-type'])) {
      this.recordResponse(status, undefined);
      return;
    }
    // The same keys in the same order as recordResponse; `object` marks the answer's place.
    trace.appendAnswer({ type: 'response', id: this.id, status, object: undefined, durationMs: Date.now() - this.startedAt }, decoded.toString('utf8'));
  }

  private readAnswer(upRes: http.IncomingMessage, status: number, raw: Buffer, headers: http.OutgoingHttpHeaders): void {
    let bytes = raw;
    let object = this.answerObject(upRes, bytes);
    const rewrite = this.requestPlan?.rewriteList;
    if (rewrite && status === 200 && object) {
      const rewritten = rewrite(object);
      if (rewritten) {
        object = rewritten;
        bytes = Buffer.from(JSON.stringify(rewritten));
        delete headers['content-encoding'];
      }
    }
    this.recordResponse(status, object);
    this.afterUpstreamAnswer(status, object);
    this.requestPlan?.onAnswered?.(status, object);
    if (this.requestPlan?.loseResponse) {
      // The write is applied upstream; the controller never learns how it went.
      this.reset('the proxy reset the stream before the answer reached the controller (api-error lost-response)');
      return;
    }
    const hold = this.requestPlan?.holdAnswerMs ?? 0;
    if (hold > 0) {
      setTimeout(() => this.deliver(status, upRes.statusMessage, headers, bytes), hold).unref();
      return;
    }
    this.deliver(status, upRes.statusMessage, headers, bytes);
  }

  /** The completed-write hook: counts successful writes, which may fire a trigger (and hold the gate). */
  private afterUpstreamAnswer(status: number, object: KubeObject | undefined): void {
    const f = this.factsValue!;
    if (!isSuccessStatus(status) || f.dryRun || !isTriggerWriteVerb(f.verb)) return;
    // Counted under the same key as the planner counts it (src/model/controller-write.ts).
    const write = completedWrite(this.id, f, status, object);
    if (write) this.host.completedWrite(write, this.epoch, this);
  }

  private deliver(status: number, statusMessage: string | undefined, headers: http.OutgoingHttpHeaders, body: Buffer): void {
    this.epoch.gate.pass(() => {
      if (this.closed) return;
      this.answered = true;
      try {
        const method = this.factsValue?.method ?? 'GET';
        if (noBodyAllowed(method, status)) {
          writeHeadTo(this.res, status, statusMessage, headers);
          this.res.end();
          return;
        }
        headers['content-length'] = String(body.length);
        writeHeadTo(this.res, status, statusMessage, headers);
        this.res.end(body);
      } catch (err) {
        this.host.log(`request ${this.id} ${this.describe()}: could not deliver the answer: ${(err as Error).message}`);
        this.terminate(`proxy error: ${(err as Error).message}`);
      }
    });
  }

  // --- watch: record -> relay -----------------------------------------------------------------
  private makeRelay(decode: boolean): WatchRelay {
    const f = this.factsValue!;
    const relay = new WatchRelay({
      client: this.res,
      gate: this.epoch.gate,
      ...(f.resource?.kind ? { kind: f.resource.kind } : {}),
      decode,
      lines: this.host.watchLines,
      stages: decode ? this.host.watchStages(this) : [],
      onOpen: () => {
        this.answered = true;
        this.streamOpen = true;
        this.host.trace.append({ type: 'stream-open', id: this.id });
        this.host.touch();
      },
      onDelivered: (e) => {
        const trace = this.host.trace;
        const seq = trace.appendWatchEvent
          ? trace.appendWatchEvent(this.id, e.type!, e.key, e.resourceVersion, e.object!, e.shared)
          : trace.append(watchDeliveryEvent(this.id, e.type!, e.key, e.resourceVersion, e.object!));
        // A BOOKMARK only moves the client's resourceVersion: the controller does nothing on it, so it
        // is not activity (the embedded cluster sends one per watch every second, and watches opened a
        // little apart would otherwise keep a controller from ever going quiet).
        // Nor is a leader-election record's renewal (an operator that watches every ConfigMap sees
        // its own lock change every 2 s), nor a Lease or Event.
        if (e.type !== 'BOOKMARK' && !this.host.housekeeping.isHousekeepingObject(e.key, e.object)) this.host.touch();
        return seq;
      },
      onEnd: () => {
        this.closeStream(this.endReason ?? 'the API server ended the stream');
        this.upstreamReq?.destroy();
      },
      onFailure: (err) => {
        this.host.log(`request ${this.id} ${this.describe()}: relaying the watch failed: ${err.message}`);
        this.terminate(`proxy error: ${err.message}`);
      },
    });
    this.relay = relay;
    return relay;
  }

  private endReason: string | undefined;

  private relayWatch(upRes: http.IncomingMessage): void {
    if (this.relay) {
      // A held watch (stale view) whose upstream is attached now: the stream is already open.
      this.relay.attach(upRes);
      return;
    }
    this.recordResponse(200, undefined);
    const contentType = String(upRes.headers['content-type'] ?? '');
    const relay = this.makeRelay(contentType === '' || contentType.includes('json'));
    relay.start(endToEndHeaders(upRes.headers), upRes);
  }

  private openHeldWatch(held: NonNullable<RequestPlan['heldWatch']>): void {
    const f = this.factsValue!;
    this.recordResponse(200, undefined);
    this.requestPlan?.onAnswered?.(200);
    const relay = this.makeRelay(true);
    relay.open({ 'content-type': 'application/json', 'cache-control': 'no-cache, private' });
    for (const obj of held.synthetic ?? []) relay.inject(encodeWatchEvent('ADDED', obj, f.resource?.kind));
    held.whenReleased(() => {
      if (this.closed) return;
      let rawUrl = f.rawUrl;
      if (held.resumeFrom !== undefined) {
        const u = new URL(f.rawUrl, 'http://proxy.invalid');
        u.searchParams.set('resourceVersion', held.resumeFrom);
        rawUrl = u.pathname + u.search;
      }
      this.sendUpstream(rawUrl, Buffer.alloc(0), false);
    });
  }

  /** A held watch's upstream refused (e.g. 410 Gone): the stream is open already, so say it in-stream. */
  private endHeldWatchWithStatus(upRes: http.IncomingMessage, status: number): void {
    const chunks: Buffer[] = [];
    upRes.on('data', (c: Buffer) => chunks.push(c));
    upRes.on('end', () => {
      if (this.closed || !this.relay) return;
      const parsed = parseJsonBody(Buffer.concat(chunks), upRes.headers['content-type']);
      const object = isObject(parsed) && parsed.kind === 'Status' ? (parsed as KubeObject) : upstreamFailureStatus(new Error(`HTTP ${status}`)).object;
      this.relay.endWith(encodeWatchEvent('ERROR', object));
    });
  }

  /**
   * Ends an open watch stream now with `event` (an in-stream ERROR), dropping what its stages still
   * hold, and aborts the upstream watch.
   */
  endStreamWith(event: RelayedWatchEvent, reason: string): void {
    if (!this.relay || this.closed) return;
    this.endReason = reason;
    this.relay.endWith(event);
  }

  /** Closes the exchange cleanly towards the controller: a watch's stream ends (client re-watches). */
  closeGracefully(reason: string): void {
    if (this.closed) return;
    if (this.relay && this.streamOpen) {
      this.endReason = reason;
      this.relay.stop();
      this.upstreamReq?.destroy();
      this.epoch.gate.pass(() => {
        if (this.closed) return;
        try {
          this.res.end();
        } catch {
          /* already gone */
        }
        this.closeStream(reason);
      });
      return;
    }
    this.terminate(reason);
  }

  /** Resets the exchange's stream (RST_STREAM on HTTP/2, TCP reset on HTTP/1.1). */
  reset(reason: string): void {
    if (this.closed) return;
    this.endReason = reason;
    resetStream(this.req, this.res);
    this.terminate(reason);
  }

  private closeStream(reason: string): void {
    if (!this.streamOpen) return;
    this.streamOpen = false;
    this.host.trace.append({ type: 'stream-close', id: this.id, reason });
  }

  // --- failures -------------------------------------------------------------------------------
  private onUpstreamError(err: Error): void {
    // endReason: the proxy itself ended the stream (410 Expired, disconnect) and aborted the upstream.
    if (this.closed || this.upstreamFailed || this.endReason !== undefined) return;
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

  describe(): string {
    return `${this.req.method} ${this.req.url}`;
  }

  // --- trace ----------------------------------------------------------------------------------
  private recordRequest(f: RequestFacts): void {
    // Built key by key in the trace's order, without the spread copies of optional keys.
    const event = {
      type: 'request',
      id: this.id,
      incarnation: this.host.incarnation(),
      method: f.method,
      path: f.pathname,
      query: f.query,
      verb: f.verb,
    } as Unstamped<RequestEvent>;
    if (f.resource) event.resource = f.resource;
    if (f.key) event.key = f.key;
    if (f.body !== undefined) event.body = f.body;
    event.bodyBytes = f.bodyBytes;
    if (f.contentType) event.contentType = f.contentType;
    this.host.trace.append(event);
    this.recorded = true;
    this.housekeeping = this.host.housekeeping.isHousekeeping(f.resource, f.key, f.body);
    if (!this.housekeeping) this.host.touch();
  }

  private recordResponse(status: number, object: KubeObject | undefined): void {
    if (!this.housekeeping && this.host.housekeeping.noteAnswer(this.factsValue?.key, object)) this.housekeeping = true;
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
    this.relay?.stop();
    this.upstreamReq?.destroy();
    this.closeStream(this.endReason ?? 'the stream ended');
    this.epoch.leave(this.membership);
    this.host.finished(this);
  }

  /** Where this exchange is, for a run's log when a controller does not go quiet: "request 52 PUT /path (epoch 2, for 30.1 s, waiting for the API server)". */
  describeInFlight(now: number): string {
    const stage =
      this.factsValue === undefined
        ? 'being received or classified'
        : !this.recorded
          ? 'waiting to be admitted (a held gate or a delay)'
          : this.answered
            ? 'answering the controller'
            : this.upstreamReq
              ? 'waiting for the API server'
              : 'held by a fault';
    return `request ${this.id} ${this.req.method ?? '?'} ${this.req.url ?? '?'} (epoch ${this.epoch.number}, for ${((now - this.startedAt) / 1000).toFixed(1)} s, ${stage})`;
  }

  /** Ends the exchange now: aborts the upstream request and drops the controller's connection if unanswered. */
  terminate(reason: string): void {
    if (this.closed) return;
    this.closed = true;
    this.relay?.stop();
    this.upstreamReq?.destroy();
    if (!this.res.writableFinished) this.res.destroy();
    this.closeStream(reason);
    this.epoch.leave(this.membership);
    this.host.finished(this);
  }
}

const EMPTY = Buffer.alloc(0);

/** Can this answer fire a write trigger (see afterUpstreamAnswer)? */
function mayFireTrigger(f: RequestFacts, status: number): boolean {
  return isSuccessStatus(status) && !f.dryRun && isTriggerWriteVerb(f.verb);
}

/** A request that carries no body by its framing: no Content-Length (or 0) and no Transfer-Encoding; on HTTP/2, END_STREAM on its headers. */
function hasNoBody(req: ClientRequest): boolean {
  if (isHttp2Request(req)) return req.stream.endAfterHeaders;
  const length = req.headers['content-length'];
  return (length === undefined || length === '0') && req.headers['transfer-encoding'] === undefined;
}

/** Reads a request body; undefined if the client went away first. */
function readBody(req: ClientRequest): Promise<Buffer | undefined> {
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
