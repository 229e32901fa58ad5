/**
 * The ceilings of proxy.bench.ts: what any relay process in the proxy's place can reach on this
 * machine, measured beside the proxy in the same run.
 *
 * - `startRawPipe`: a TCP relay; each client socket is piped to an upstream socket of its own, no
 *   parsing at all. The least a process in the middle can do.
 * - `startBareRelay`: an HTTP relay (`http.createServer` -> `http.request` on a keep-alive agent,
 *   as the proxy's upstream is), bodies piped, no classification, no trace, no faults. The least an
 *   HTTP-level proxy can do with Node's HTTP stack.
 * - `startBareTlsRelay` (proxy-real.bench.ts): the same bare relay as the proxy faces a real API
 *   server: TLS towards the client (HTTP/2 and HTTP/1.1 on one port, the proxy's certificates), TLS
 *   upstream with the admin's token in place of the client's; upstream either HTTP/1.1 on a
 *   keep-alive agent (one connection per request in flight, as the proxy's) or one HTTP/2 session
 *   (every request a stream of one connection). With `client: 'plain'` the client side is plain
 *   HTTP/1.1 instead (same token rule, same upstream): what TLS towards the client costs.
 * - `startGoRelay` (proxy-real.bench.ts): the same shape in Go (test/bench/relay-go, standard
 *   library only), built with the Go toolchain into a cache outside the clone; it says whether the
 *   relay's cost on the real control plane is Node's or any relay's.
 */
import { spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import http from 'node:http';
import http2 from 'node:http2';
import https from 'node:https';
import net from 'node:net';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { createSecureContext } from 'node:tls';
import { fileURLToPath } from 'node:url';
import { sharedProxyCertificates } from '../../proxy/tls.js';

export interface BenchRelay {
  url: string;
  stop(): Promise<void>;
}

async function listen(server: net.Server): Promise<number> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return (server.address() as net.AddressInfo).port;
}

function stopper(server: net.Server, sockets: Set<net.Socket>, also?: () => void): () => Promise<void> {
  return async () => {
    also?.();
    for (const s of sockets) s.destroy();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  };
}

function track(sockets: Set<net.Socket>, socket: net.Socket): void {
  sockets.add(socket);
  socket.once('close', () => sockets.delete(socket));
}

export async function startRawPipe(upstreamUrl: string): Promise<BenchRelay> {
  const up = new URL(upstreamUrl);
  const sockets = new Set<net.Socket>();
  const server = net.createServer((client) => {
    const upstream = net.connect({ host: up.hostname, port: Number(up.port) });
    track(sockets, client);
    track(sockets, upstream);
    client.setNoDelay(true);
    upstream.setNoDelay(true);
    const teardown = () => {
      client.destroy();
      upstream.destroy();
    };
    client.on('error', teardown).on('close', teardown);
    upstream.on('error', teardown).on('close', teardown);
    client.pipe(upstream);
    upstream.pipe(client);
  });
  const port = await listen(server);
  return { url: `http://127.0.0.1:${port}`, stop: stopper(server, sockets) };
}

/** Hop-by-hop headers a relay must not copy (RFC 9110 7.6.1). */
const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'proxy-connection', 'transfer-encoding', 'upgrade', 'te', 'trailer']);

function endToEnd(headers: http.IncomingHttpHeaders): http.OutgoingHttpHeaders {
  const out: http.OutgoingHttpHeaders = {};
  for (const [k, v] of Object.entries(headers)) if (v !== undefined && !HOP_BY_HOP.has(k)) out[k] = v;
  return out;
}

export async function startBareRelay(upstreamUrl: string): Promise<BenchRelay> {
  const up = new URL(upstreamUrl);
  const agent = new http.Agent({ keepAlive: true, noDelay: true, maxFreeSockets: 1024 });
  const sockets = new Set<net.Socket>();
  const server = http.createServer((req, res) => {
    const upReq = http.request({ hostname: up.hostname, port: up.port, method: req.method, path: req.url, headers: endToEnd(req.headers), agent });
    upReq.on('response', (upRes) => {
      res.writeHead(upRes.statusCode ?? 502, endToEnd(upRes.headers));
      // A streamed answer (a watch): the headers go at once, the events as they come. Other
      // answers leave in one write with their headers.
      if (upRes.headers['content-length'] === undefined) res.flushHeaders();
      upRes.pipe(res);
    });
    upReq.on('error', () => res.destroy());
    // A client that goes away takes its upstream request (a watch) with it.
    res.on('close', () => {
      if (!res.writableFinished) upReq.destroy();
    });
    req.pipe(upReq);
  });
  server.on('connection', (s: net.Socket) => {
    s.setNoDelay(true);
    track(sockets, s);
  });
  const port = await listen(server);
  return { url: `http://127.0.0.1:${port}`, stop: stopper(server, sockets, () => agent.destroy()) };
}

/** Where a TLS relay forwards to, and with which credentials. */
export interface TlsUpstream {
  url: string;
  caPem: string;
  token: string;
}

/** The client's request headers as an upstream request carries them: end-to-end ones, no pseudo-headers, our token. */
function upstreamHeaders(headers: http.IncomingHttpHeaders, token: string, h2: boolean): http.OutgoingHttpHeaders {
  const out = endToEnd(headers);
  for (const k of Object.keys(out)) if (k.startsWith(':') || (h2 && k === 'host')) delete out[k];
  out.authorization = `Bearer ${token}`;
  return out;
}

/** The upstream answer's headers as the relay sends them back (HTTP/2 ones carry `:status`). */
function answerHeaders(headers: http.IncomingHttpHeaders | http2.IncomingHttpHeaders): http.OutgoingHttpHeaders {
  const out = endToEnd(headers as http.IncomingHttpHeaders);
  for (const k of Object.keys(out)) if (k.startsWith(':')) delete out[k];
  return out;
}

type CompatRequest = http.IncomingMessage | http2.Http2ServerRequest;
type CompatResponse = http.ServerResponse | http2.Http2ServerResponse;

export async function startBareTlsRelay(
  upstream: TlsUpstream,
  upstreamProtocol: 'http/1.1' | 'h2',
  client: 'tls' | 'plain' = 'tls',
): Promise<BenchRelay & { caPem: string }> {
  const up = new URL(upstream.url);
  const certs = await sharedProxyCertificates();
  const secureContext = createSecureContext({ ca: upstream.caPem });
  const agent = new https.Agent({ keepAlive: true, noDelay: true, maxFreeSockets: 1024, secureContext });
  let session: http2.ClientHttp2Session | undefined;
  // One session, made again when the API server closed it (as a relay in front of one must).
  const h2Session = () => {
    if (!session || session.closed || session.destroyed) {
      session = http2.connect(upstream.url, { ca: upstream.caPem });
      session.on('error', () => undefined);
    }
    return session;
  };
  const relay = (req: CompatRequest, res: CompatResponse) => {
    const answer = (status: number, headers: http.OutgoingHttpHeaders, body: NodeJS.ReadableStream) => {
      res.writeHead(status, headers);
      // A streamed answer (a watch): the headers go at once, the events as they come.
      // (HTTP/2's compatibility answer sends its headers in writeHead already.)
      if (headers['content-length'] === undefined && 'flushHeaders' in res) res.flushHeaders();
      body.pipe(res as NodeJS.WritableStream);
    };
    if (upstreamProtocol === 'h2') {
      const stream = h2Session().request({ ':method': req.method, ':path': req.url, ...upstreamHeaders(req.headers, upstream.token, true) });
      stream.on('response', (h) => answer(Number(h[':status'] ?? 502), answerHeaders(h), stream));
      stream.on('error', () => res.destroy());
      res.on('close', () => {
        if (!res.writableFinished) stream.close(http2.constants.NGHTTP2_CANCEL);
      });
      req.pipe(stream);
      return;
    }
    const upReq = https.request({
      hostname: up.hostname,
      port: up.port,
      method: req.method,
      path: req.url,
      headers: upstreamHeaders(req.headers, upstream.token, false),
      agent,
    });
    upReq.on('response', (upRes) => answer(upRes.statusCode ?? 502, answerHeaders(upRes.headers), upRes));
    upReq.on('error', () => res.destroy());
    res.on('close', () => {
      if (!res.writableFinished) upReq.destroy();
    });
    req.pipe(upReq);
  };
  const sockets = new Set<net.Socket>();
  const stopUpstream = () => {
    agent.destroy();
    session?.destroy();
  };
  if (client === 'plain') {
    // Node's cleartext server has no HTTP/2 and HTTP/1.1 on one port (no h2c with fallback), so
    // this side serves HTTP/1.1 only.
    const plain = http.createServer(relay);
    plain.on('connection', (s: net.Socket) => {
      s.setNoDelay(true);
      track(sockets, s);
    });
    plain.setTimeout(0);
    const port = await listen(plain);
    return { url: `http://127.0.0.1:${port}`, caPem: certs.caPem, stop: stopper(plain, sockets, stopUpstream) };
  }
  const server = http2.createSecureServer({ key: certs.keyPem, cert: certs.certPem, allowHTTP1: true, settings: { maxConcurrentStreams: 1000 } });
  server.on('request', relay);
  server.on('secureConnection', (s: net.Socket) => {
    s.setNoDelay(true);
    track(sockets, s);
  });
  server.on('session', (s: http2.ServerHttp2Session) => s.on('error', () => undefined));
  server.on('tlsClientError', () => undefined);
  server.setTimeout(0);
  const port = await listen(server);
  return {
    url: `https://127.0.0.1:${port}`,
    caPem: certs.caPem,
    stop: stopper(server, sockets, stopUpstream),
  };
}

/** The Go relay's sources (in the clone, beside this file's source) and its binary (in the user's cache, outside the clone). */
const GO_RELAY_SOURCE = fileURLToPath(new URL('../../../test/bench/relay-go', import.meta.url));
const GO_BUILD = fileURLToPath(new URL('../../../scripts/go-build-cached.sh', import.meta.url));
const GO_RELAY_BINARY = join(process.env.XDG_CACHE_HOME ?? join(homedir(), '.cache'), 'kperturb', 'bench', 'relay-go');

export interface GoRelay extends BenchRelay {
  caPem: string;
  /** The bearer token the relay requires of its clients. */
  token: string;
  /** The relay's process id, for its CPU time in /proc. */
  pid: number;
}

/**
 * Builds (when its sources changed; scripts/go-build-cached.sh) and starts the Go relay. Without a
 * `go` command there is nothing to measure: the reason is returned instead, for the bench to print.
 */
export async function startGoRelay(upstream: TlsUpstream, upstreamProtocol: 'http/1.1' | 'h2'): Promise<GoRelay | string> {
  if (spawnSync('go', ['version']).error) return 'no `go` command on PATH: the Go relay (test/bench/relay-go) cannot be built';
  const built = spawnSync('sh', [GO_BUILD, 'bench-relay-go', GO_RELAY_SOURCE, GO_RELAY_BINARY, 'the Go relay is not measured'], {
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  if (built.status !== 0) throw new Error(`building the Go relay (${GO_RELAY_SOURCE}) failed; its output is above`);
  const certs = await sharedProxyCertificates();
  const token = randomBytes(24).toString('base64url');
  const child = spawn(GO_RELAY_BINARY, [], { stdio: ['pipe', 'pipe', 'inherit'] });
  const exited = once(child, 'exit');
  // The secrets go on stdin (not argv or the environment); stdin stays open, and its end stops the relay.
  child.stdin.write(
    JSON.stringify({
      upstream: upstream.url,
      upstreamCaPem: upstream.caPem,
      upstreamToken: upstream.token,
      upstreamProtocol,
      clientToken: token,
      certPem: certs.certPem,
      keyPem: certs.keyPem,
    }) + '\n',
  );
  const lines = createInterface({ input: child.stdout });
  const first = await Promise.race([once(lines, 'line').then(([l]) => String(l)), exited.then(([code]) => `exit ${String(code)}`)]);
  lines.close();
  if (!first.startsWith('https://')) throw new Error(`the Go relay did not start (${first}); its output is above`);
  return {
    url: first,
    caPem: certs.caPem,
    token,
    pid: child.pid!,
    stop: async () => {
      child.stdin.end();
      await exited;
    },
  };
}
