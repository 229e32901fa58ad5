/**
 * The controller's side of the proxy speaks HTTP/1.1 (plain or TLS) and HTTP/2 (TLS, ALPN `h2`) on
 * one port. Node hands both to the same `request` handler with the compatibility API; this file holds
 * the few places where the two differ: status messages, which connection a request arrived on, and
 * how a stream or a connection is closed gracefully or reset.
 */
import http from 'node:http';
import http2 from 'node:http2';
import type { Socket } from 'node:net';

export type ClientRequest = http.IncomingMessage | http2.Http2ServerRequest;
export type ClientResponse = http.ServerResponse | http2.Http2ServerResponse;

/** A controller connection: a TCP/TLS socket, carrying an HTTP/2 session when ALPN chose h2. */
export type ClientConnection = Socket | http2.Http2Session;

export function isHttp2Response(res: ClientResponse): res is http2.Http2ServerResponse {
  return 'stream' in res;
}

export function isHttp2Request(req: ClientRequest): req is http2.Http2ServerRequest {
  return 'stream' in req;
}

/**
 * The controller has gone from this request (it reset the stream or closed the connection, e.g. a
 * client-side timeout while the request waited at a spare's door): its 'close' has been emitted
 * already, and nothing written reaches it.
 */
export function clientGone(req: ClientRequest): boolean {
  if (isHttp2Request(req)) return req.stream.destroyed || req.stream.closed;
  return req.socket.destroyed;
}

/** HTTP/2 has no status message (RFC 9113 8.3.2); Node warns if one is given. */
export function writeHeadTo(res: ClientResponse, status: number, statusMessage: string | undefined, headers: http.OutgoingHttpHeaders): void {
  if (isHttp2Response(res) || statusMessage === undefined) (res as http.ServerResponse).writeHead(status, headers);
  else res.writeHead(status, statusMessage, headers);
}

/** The connection a request arrived on (its HTTP/2 session, or its socket). */
export function connectionOf(req: ClientRequest): ClientConnection {
  return isHttp2Request(req) ? req.stream.session! : req.socket;
}

/**
 * Resets one request's stream: RST_STREAM (CANCEL) on HTTP/2; on HTTP/1.1 a stream is its
 * connection, so the socket is reset (TCP RST).
 */
export function resetStream(req: ClientRequest, res: ClientResponse): void {
  if (isHttp2Response(res)) {
    if (!res.stream.destroyed) res.stream.close(http2.constants.NGHTTP2_CANCEL);
    return;
  }
  resetSocket(req.socket as Socket);
}

export function resetSocket(socket: Socket): void {
  if (socket.destroyed) return;
  if (typeof socket.resetAndDestroy === 'function') {
    try {
      socket.resetAndDestroy();
      return;
    } catch {
      /* not a TCP socket underneath (TLS wraps one): fall through */
    }
  }
  socket.destroy();
}

/** Sends the response headers now (client-go starts its watch timers before the first event). */
export function flushHeadersOf(res: ClientResponse): void {
  (res as http.ServerResponse).flushHeaders();
}

/** Writes a chunk; false when the client's buffer is full (wait for 'drain'). */
export function writeChunk(res: ClientResponse, chunk: Buffer): boolean {
  return (res as http.ServerResponse).write(chunk);
}
