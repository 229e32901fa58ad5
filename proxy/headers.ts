/**
 * Header rules for relaying between the controller and the API server: hop-by-hop headers stay on
 * their own hop, and `Accept` is narrowed to JSON so that every answer is something the trace can read.
 */
import type { IncomingHttpHeaders, OutgoingHttpHeaders } from 'node:http';

/** RFC 9110 section 7.6.1 connection-specific headers, plus the ones HTTP/2 forbids. */
const HOP_BY_HOP = new Set([
  'connection',
  'keep-alive',
  'proxy-authenticate',
  'proxy-authorization',
  'proxy-connection',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
  'host',
  'http2-settings',
]);

/** Media types the proxy cannot decode; the API server answers JSON once they are gone. */
const OPAQUE_MEDIA_PREFIXES = ['application/vnd.kubernetes.protobuf', 'application/cbor'];

/**
 * Drops protobuf and CBOR entries from an Accept header, keeping every other entry verbatim
 * (including `;as=Table;g=...` parameters on JSON entries). Falls back to `application/json`.
 */
export function rewriteAccept(accept: string | undefined): string | undefined {
  if (accept === undefined) return undefined;
  let rewritten = acceptRewrites.get(accept);
  if (rewritten === undefined) {
    rewritten = rewriteAcceptUncached(accept);
    // A client sends a handful of distinct Accept headers; anything beyond is not worth keeping.
    if (acceptRewrites.size >= 256) acceptRewrites.clear();
    acceptRewrites.set(accept, rewritten);
  }
  return rewritten;
}

const acceptRewrites = new Map<string, string>();

function rewriteAcceptUncached(accept: string): string {
  const kept = accept
    .split(',')
    .map((entry) => entry.trim())
    .filter((entry) => entry.length > 0)
    .filter((entry) => {
      const media = entry.split(';')[0]!.trim().toLowerCase();
      return !OPAQUE_MEDIA_PREFIXES.some((p) => media.startsWith(p));
    });
  return kept.length > 0 ? kept.join(', ') : 'application/json';
}

function connectionListed(headers: IncomingHttpHeaders): Set<string> | undefined {
  const conn = headers.connection;
  // The usual values name no header of their own.
  if (typeof conn !== 'string' || conn === 'keep-alive' || conn === 'close' || conn === 'Keep-Alive') return undefined;
  const listed = new Set<string>();
  for (const token of conn.split(',')) {
    const t = token.trim().toLowerCase();
    if (t) listed.add(t);
  }
  return listed;
}

/** Copies end-to-end headers (drops hop-by-hop ones and whatever `Connection` names). */
export function endToEndHeaders(headers: IncomingHttpHeaders): OutgoingHttpHeaders {
  const listed = connectionListed(headers);
  const out: OutgoingHttpHeaders = {};
  // Node gives header names in lower case already (both HTTP/1.1 and HTTP/2).
  for (const name in headers) {
    const value = headers[name];
    if (value === undefined) continue;
    const lower = name.toLowerCase();
    if (HOP_BY_HOP.has(lower) || lower.charCodeAt(0) === 58 /* ':' */ || (listed !== undefined && listed.has(lower))) continue;
    out[lower] = value;
  }
  return out;
}

export interface UpstreamHeaderOptions {
  /** Bearer token the proxy presents upstream. */
  token?: string;
  /** Watches must arrive uncompressed so the relay can split them into events. */
  dropAcceptEncoding?: boolean;
}

/**
 * The controller's Authorization carried the proxy's controller token: it authenticated the
 * controller to the proxy and goes no further; the proxy's own upstream token (if any) replaces it.
 */
export function withUpstreamAuthorization(headers: OutgoingHttpHeaders, token: string | undefined): void {
  delete headers.authorization;
  if (token) headers.authorization = `Bearer ${token}`;
}

/** Headers for the upstream request of a controller request. */
export function upstreamRequestHeaders(headers: IncomingHttpHeaders, options: UpstreamHeaderOptions): OutgoingHttpHeaders {
  const out = endToEndHeaders(headers);
  const accept = rewriteAccept(headers.accept);
  if (accept !== undefined) out.accept = accept;
  withUpstreamAuthorization(out, options.token);
  if (options.dropAcceptEncoding) delete out['accept-encoding'];
  // The proxy has read the whole body already; nothing waits for a 100 Continue.
  delete out.expect;
  return out;
}
