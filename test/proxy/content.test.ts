import http from 'node:http';
import { gzipSync } from 'node:zlib';
import test from 'ava';
import WebSocket, { WebSocketServer } from 'ws';
import { proxyAuth, rawRequest, startCluster, startHttpServer, startProxy } from './helpers.js';

test('Accept asking for protobuf first still gets JSON from the API server', async (t) => {
  const cluster = await startCluster(t);
  const { proxy, trace } = await startProxy(t, cluster);
  const res = await rawRequest(proxy.url, {
    path: '/api/v1/namespaces/default/configmaps',
    headers: { accept: 'application/vnd.kubernetes.protobuf, application/json', ...proxyAuth(proxy) },
  });
  t.is(res.status, 200);
  t.regex(String(res.headers['content-type']), /^application\/json/);
  t.like(JSON.parse(res.body.toString('utf8')), { kind: 'ConfigMapList' });
  t.like(trace.ofType('response')[0]?.object, { kind: 'ConfigMapList' });
});

interface Seen {
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
}

async function recordingUpstream(t: Parameters<typeof startHttpServer>[0], answer: (seen: Seen, res: http.ServerResponse) => void) {
  const seen: Seen[] = [];
  const url = await startHttpServer(t, (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const s = { method: req.method ?? '', url: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks) };
      if (s.url === '/api/v1') {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(
          JSON.stringify({ kind: 'APIResourceList', groupVersion: 'v1', resources: [{ name: 'configmaps', kind: 'ConfigMap', namespaced: true, verbs: [] }] }),
        );
        return;
      }
      seen.push(s);
      answer(s, res);
    });
  });
  return { url, seen };
}

test('requests reach the upstream with JSON-only Accept and body bytes, minus hop-by-hop headers and the controller token', async (t) => {
  const up = await recordingUpstream(t, (s, res) => {
    const accept = String(s.headers.accept ?? '');
    res.writeHead(201, { 'content-type': accept.includes('protobuf') ? 'application/vnd.kubernetes.protobuf' : 'application/json', 'x-upstream': 'yes' });
    res.end(JSON.stringify({ kind: 'ConfigMap', apiVersion: 'v1', metadata: { name: 'p', namespace: 'default' } }));
  });
  const { proxy, trace } = await startProxy(t, up.url);
  const protobufBody = Buffer.from([0x6b, 0x38, 0x73, 0x00, 0x0a, 0x0f, 0xff, 0xfe, 0x01]);
  const res = await rawRequest(proxy.url, {
    method: 'POST',
    path: '/api/v1/namespaces/default/configmaps?fieldManager=m',
    headers: {
      accept: 'application/vnd.kubernetes.protobuf;q=1, application/json;q=0.9',
      ...proxyAuth(proxy),
      'content-type': 'application/vnd.kubernetes.protobuf',
      connection: 'keep-alive, x-hop',
      'x-hop': 'drop me',
      'x-end': 'keep me',
    },
    body: protobufBody,
  });
  t.is(res.status, 201);
  t.is(res.headers['x-upstream'], 'yes');
  t.regex(String(res.headers['content-type']), /json/);
  const s = up.seen[0]!;
  t.is(s.method, 'POST');
  t.is(s.url, '/api/v1/namespaces/default/configmaps?fieldManager=m');
  t.is(s.headers.accept, 'application/json;q=0.9');
  t.is(s.headers.authorization, undefined, 'the controller token stays with the proxy');
  t.is(s.headers['x-hop'], undefined);
  t.is(s.headers['x-end'], 'keep me');
  t.true(s.body.equals(protobufBody), 'the body went through as opaque bytes');
  const req = trace.ofType('request')[0]!;
  t.like(req, {
    method: 'POST',
    verb: 'create',
    bodyBytes: protobufBody.length,
    contentType: 'application/vnd.kubernetes.protobuf',
    query: { fieldManager: 'm' },
  });
  t.is(req.body, undefined, 'a protobuf body is recorded by size only');
  t.is(req.key, undefined, 'no key without a readable body');
  t.like(trace.ofType('response')[0], { id: req.id, status: 201, object: { metadata: { name: 'p' } } });
});

test('a gzipped answer is forwarded as is and recorded decoded', async (t) => {
  const payload = { kind: 'ConfigMap', apiVersion: 'v1', metadata: { name: 'z', namespace: 'default' }, data: { big: 'x'.repeat(200_000) } };
  const gz = gzipSync(Buffer.from(JSON.stringify(payload)));
  const up = await recordingUpstream(t, (_s, res) => {
    res.writeHead(200, { 'content-type': 'application/json', 'content-encoding': 'gzip' });
    res.end(gz);
  });
  const { proxy, trace } = await startProxy(t, up.url);
  const res = await rawRequest(proxy.url, { path: '/api/v1/namespaces/default/configmaps/z', headers: { 'accept-encoding': 'gzip', ...proxyAuth(proxy) } });
  t.is(res.status, 200);
  t.is(res.headers['content-encoding'], 'gzip');
  t.true(res.body.equals(gz));
  t.is(up.seen[0]!.headers['accept-encoding'], 'gzip');
  t.like(trace.ofType('request')[0], { verb: 'get', key: 'ConfigMap/default/z' });
  t.deepEqual(trace.ofType('response')[0]!.object, payload);
});

test('protocol upgrades are piped raw in both directions', async (t) => {
  const upstreamServer = http.createServer((_req, res) => res.writeHead(404).end());
  const wss = new WebSocketServer({ server: upstreamServer });
  wss.on('connection', (ws, req) => {
    ws.send(`hello ${req.url}`);
    ws.on('message', (m) => ws.send(`echo ${String(m)}`));
  });
  await new Promise<void>((r) => upstreamServer.listen(0, '127.0.0.1', r));
  t.teardown(() => {
    for (const c of wss.clients) c.terminate();
    upstreamServer.close();
  });
  const { proxy, trace } = await startProxy(t, `http://127.0.0.1:${(upstreamServer.address() as { port: number }).port}`);
  const ws = new WebSocket(`${proxy.url.replace('http', 'ws')}/api/v1/namespaces/default/configmaps?watch=true`, { headers: proxyAuth(proxy) });
  const messages: string[] = [];
  await new Promise<void>((resolve, reject) => {
    ws.on('message', (m) => {
      messages.push(String(m));
      if (messages.length === 1) ws.send('ping');
      if (messages.length === 2) resolve();
    });
    ws.on('error', reject);
  });
  t.deepEqual(messages, ['hello /api/v1/namespaces/default/configmaps?watch=true', 'echo ping']);
  t.like(trace.ofType('request')[0], { verb: 'watch', path: '/api/v1/namespaces/default/configmaps' });
  t.like(trace.ofType('response')[0], { status: 101 });
  ws.close();
});
