/**
 * The ceilings of proxy.bench.ts: what any relay process in the proxy's place can reach on this
 * machine, measured beside the proxy in the same run.
 *
 * - `startRawPipe`: a TCP relay; each client socket is piped to an upstream socket of its own, no
 *   parsing at all. The least a process in the middle can do.
 * - `startBareRelay`: an HTTP relay (`http.createServer` -> `http.request` on a keep-alive agent,
 *   as the proxy's upstream is), bodies piped, no classification, no trace, no faults. The least an
 *   HTTP-level proxy can do with Node's HTTP stack.
 */
import http from 'node:http';
import net from 'node:net';

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
