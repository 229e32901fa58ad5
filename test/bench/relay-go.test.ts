/**
 * The Go relay of bench:proxy-real (test/bench/relay-go, started by startGoRelay): a ceiling is only
 * a fair one if it does what the proxy must do. It requires the client's bearer token, sends the
 * admin's upstream in its place, speaks HTTP/2 and HTTP/1.1 to clients, and passes a streamed
 * answer (a watch) on as it comes. The upstream here is a small HTTPS server of the test's own.
 */
import { spawnSync } from 'node:child_process';
import { once } from 'node:events';
import http from 'node:http';
import http2 from 'node:http2';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import test from 'ava';
import { generateProxyCertificates } from '../../proxy/tls.js';
import { startGoRelay, type GoRelay } from './proxy-bench-relays.js';

const goMissing = spawnSync('go', ['version']).error ? 'no `go` command on PATH' : undefined;
const goTest = goMissing ? test.skip : test.serial;

const ADMIN_TOKEN = 'admin-token-of-the-test';

interface Upstream {
  url: string;
  caPem: string;
  /** The Authorization header of each request the upstream got, in order. */
  seen: Array<string | undefined>;
  /** Answers of /stream, held open until the test ends them. */
  streams: http.ServerResponse[];
  streamOpened: Promise<void>;
  close(): Promise<void>;
}

async function startUpstream(): Promise<Upstream> {
  const certs = await generateProxyCertificates();
  const seen: Array<string | undefined> = [];
  const streams: http.ServerResponse[] = [];
  let opened: () => void = () => undefined;
  const streamOpened = new Promise<void>((r) => (opened = r));
  const server = https.createServer({ key: certs.keyPem, cert: certs.certPem }, (req, res) => {
    seen.push(req.headers.authorization);
    if (req.url === '/stream') {
      // No Content-Length: chunked, as kube-apiserver answers a watch.
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write('{"type":"ADDED"}\n');
      streams.push(res);
      opened();
      return;
    }
    const body = JSON.stringify({ path: req.url });
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
    res.end(body);
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return {
    url: `https://127.0.0.1:${(server.address() as AddressInfo).port}`,
    caPem: certs.caPem,
    seen,
    streams,
    streamOpened,
    close: async () => {
      for (const s of streams) s.end();
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}

async function started(upstream: Upstream, protocol: 'http/1.1' | 'h2'): Promise<GoRelay> {
  const relay = await startGoRelay({ url: upstream.url, caPem: upstream.caPem, token: ADMIN_TOKEN }, protocol);
  if (typeof relay === 'string') throw new Error(relay);
  return relay;
}

/** One HTTP/1.1 GET through the relay: status and body. */
async function get(relay: GoRelay, path: string, authorization?: string): Promise<{ status: number; body: string }> {
  const agent = new https.Agent({ ca: relay.caPem });
  const req = https.get(`${relay.url}${path}`, { agent, headers: authorization ? { authorization } : {} });
  const [res] = (await once(req, 'response')) as [http.IncomingMessage];
  res.setEncoding('utf8');
  let body = '';
  for await (const chunk of res) body += chunk as string;
  agent.destroy();
  return { status: res.statusCode ?? 0, body };
}

for (const protocol of ['http/1.1', 'h2'] as const) {
  goTest(`the Go relay (${protocol} upstream) binds 127.0.0.1, refuses a client without its token and sends the admin's upstream`, async (t) => {
    const upstream = await startUpstream();
    const relay = await started(upstream, protocol);
    try {
      t.is(new URL(relay.url).hostname, '127.0.0.1');
      t.is((await get(relay, '/api/v1/namespaces')).status, 401);
      t.is((await get(relay, '/api/v1/namespaces', 'Bearer not-the-token')).status, 401);
      t.deepEqual(upstream.seen, [], 'a refused request must not reach the upstream');

      const ok = await get(relay, '/api/v1/namespaces?limit=1', `Bearer ${relay.token}`);
      t.is(ok.status, 200);
      t.deepEqual(JSON.parse(ok.body), { path: '/api/v1/namespaces?limit=1' });
      t.deepEqual(upstream.seen, [`Bearer ${ADMIN_TOKEN}`]);
    } finally {
      await relay.stop();
      await upstream.close();
    }
  });
}

goTest('the Go relay speaks HTTP/2 to its clients (ALPN) and passes a streamed answer on before it ends', async (t) => {
  const upstream = await startUpstream();
  const relay = await started(upstream, 'http/1.1');
  const session = http2.connect(relay.url, { ca: relay.caPem });
  try {
    const stream = session.request({ ':path': '/stream', authorization: `Bearer ${relay.token}` });
    stream.setEncoding('utf8');
    const [headers] = (await once(stream, 'response')) as [http2.IncomingHttpHeaders];
    t.is(Number(headers[':status']), 200);
    await upstream.streamOpened;
    // The first event arrives while the upstream still holds its answer open.
    const [first] = (await once(stream, 'data')) as [string];
    t.is(first, '{"type":"ADDED"}\n');
    t.is(upstream.streams.length, 1);
    t.false(upstream.streams[0]!.writableEnded);
    upstream.streams[0]!.end('{"type":"MODIFIED"}\n');
    let rest = '';
    for await (const chunk of stream) rest += chunk as string;
    t.is(rest, '{"type":"MODIFIED"}\n');
  } finally {
    session.close();
    await relay.stop();
    await upstream.close();
  }
});

if (goMissing) test.skip(`the Go relay's tests (${goMissing})`, () => undefined);
