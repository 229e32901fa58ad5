/**
 * Bearer-token authentication for the servers kperturb starts (the embedded cluster, the proxy):
 * each makes a random token, writes it into the kubeconfig it hands out, and answers anything
 * without it with kube-apiserver's 401 Status.
 */
import { randomBytes, timingSafeEqual } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import type { Duplex } from 'node:stream';

/** A fresh random bearer token (32 bytes, hex). */
export function newBearerToken(): string {
  return randomBytes(32).toString('hex');
}

/** kube-apiserver's answer to a request it could not authenticate. */
export const UNAUTHORIZED_STATUS = {
  kind: 'Status',
  apiVersion: 'v1',
  metadata: {},
  status: 'Failure',
  message: 'Unauthorized',
  reason: 'Unauthorized',
  code: 401,
} as const;

const UNAUTHORIZED_BODY = JSON.stringify(UNAUTHORIZED_STATUS);

/**
 * Does `given` equal `expected`, in time that depends on nothing but their lengths? A token's
 * length is no secret (newBearerToken's are all 64 hex digits), so unequal lengths answer at once;
 * equal ones are compared byte by byte in constant time. This runs on every request: comparing the
 * bytes costs a fraction of hashing both sides.
 */
function sameSecret(given: string, expected: Buffer): boolean {
  const bytes = Buffer.from(given, 'utf8');
  return bytes.length === expected.length && timingSafeEqual(bytes, expected);
}

const TOKEN_PATH = '/kperturb-token/';

/**
 * client-go (kubectl, Go controllers) sends no credentials of a kubeconfig over plain HTTP
 * (kubernetes/kubectl#744), but keeps the path of its `server` URL in front of every request: a
 * plain-HTTP server's kubeconfig names `http://127.0.0.1:PORT` + this prefix, and the server takes
 * the prefix as the token too.
 */
export function tokenPathPrefix(token: string): string {
  return TOKEN_PATH + token;
}

/**
 * Checks a request's token in constant time (see sameSecret): in
 * `Authorization: Bearer <token>`, or as the tokenPathPrefix of its path.
 */
export class BearerTokenCheck {
  private readonly expectedHeader: Buffer;
  private readonly expectedToken: Buffer;

  constructor(readonly token: string) {
    this.expectedHeader = Buffer.from(`Bearer ${token}`, 'utf8');
    this.expectedToken = Buffer.from(token, 'utf8');
  }

  accepts(headers: IncomingHttpHeaders): boolean {
    const given = headers.authorization;
    return typeof given === 'string' && sameSecret(given, this.expectedHeader);
  }

  /**
   * Is the request authenticated (see accepts and tokenPathPrefix)? A token path prefix is cut from
   * `req.url`, so that the request is served as if the server URL had no path.
   */
  admits(req: { url?: string | undefined; headers: IncomingHttpHeaders }): boolean {
    const url = req.url ?? '/';
    if (url.startsWith(TOKEN_PATH)) {
      const rest = url.slice(TOKEN_PATH.length);
      const end = rest.search(/[/?]/);
      if (sameSecret(end < 0 ? rest : rest.slice(0, end), this.expectedToken)) {
        const remainder = end < 0 ? '' : rest.slice(end);
        req.url = remainder.startsWith('/') ? remainder : `/${remainder}`;
        return true;
      }
    }
    return this.accepts(req.headers);
  }
}

/** Anything with `writeHead` and `end`: http.ServerResponse and Http2ServerResponse alike. */
interface Answerable {
  writeHead(status: number, headers: Record<string, string | number>): unknown;
  end(body: string): unknown;
}

/** Answers 401 with the Status body. */
export function answerUnauthorized(res: Answerable): void {
  res.writeHead(401, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(UNAUTHORIZED_BODY) });
  res.end(UNAUTHORIZED_BODY);
}

/** Refuses a protocol upgrade with 401 on the raw socket and hangs up. */
export function refuseUpgradeUnauthorized(socket: Duplex): void {
  socket.end(
    `HTTP/1.1 401 Unauthorized\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(UNAUTHORIZED_BODY)}\r\nConnection: close\r\n\r\n${UNAUTHORIZED_BODY}`,
  );
}
