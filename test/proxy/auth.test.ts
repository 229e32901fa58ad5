/**
 * The proxy forwards with its own upstream credentials, so it serves only the controller it wrote a
 * kubeconfig for: without that kubeconfig's token (or with another one) a request gets kube-apiserver's
 * 401 Status and nothing reaches the API server, over HTTP/1.1, HTTP/2 and protocol upgrades alike.
 */
import http from 'node:http';
import http2 from 'node:http2';
import test from 'ava';
import { parse } from 'yaml';
import WebSocket from 'ws';
import type { ControllerProxy } from '../../proxy/index.js';
import { proxyAuth, rawRequest, startHttpServer, startProxy } from './helpers.js';

const UNAUTHORIZED = { kind: 'Status', apiVersion: 'v1', status: 'Failure', reason: 'Unauthorized', code: 401 };
const SECRET_PATH = '/api/v1/namespaces/default/secrets/s1';

/** An upstream that answers everything with 200 and counts what reached it. */
async function countingUpstream(t: Parameters<typeof startHttpServer>[0]): Promise<{ url: string; seen: string[]; authorizations: Array<string | undefined> }> {
  const seen: string[] = [];
  const authorizations: Array<string | undefined> = [];
  const url = await startHttpServer(t, (req, res) => {
    seen.push(`${req.method} ${req.url}`);
    authorizations.push(req.headers.authorization);
    req.resume();
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ kind: 'Secret', apiVersion: 'v1', metadata: { name: 's1', namespace: 'default' }, data: { password: 'aHVudGVyMg==' } }));
  });
  return { url, seen, authorizations };
}

function h2Request(proxy: ControllerProxy, method: string, path: string, headers: http2.OutgoingHttpHeaders): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const session = http2.connect(proxy.url, { ca: proxy.caPem! });
    session.on('error', reject);
    const stream = session.request({ ':method': method, ':path': path, ...headers });
    let status = 0;
    let body = '';
    stream.on('response', (h) => (status = Number(h[':status'])));
    stream.on('data', (c: Buffer) => (body += c.toString()));
    stream.on('end', () => {
      session.close();
      resolve({ status, body });
    });
    stream.on('error', reject);
    stream.end(method === 'POST' ? '{}' : undefined);
  });
}

const WRONG = [
  { name: 'no token', headers: {} },
  { name: 'a wrong token', headers: { authorization: 'Bearer not-the-token' } },
  { name: 'a token of another length', headers: { authorization: 'Bearer x' } },
  // Tokens are 64 hex digits: this one differs in its bytes only, so the constant-time comparison decides.
  { name: 'a wrong token of the same length', headers: { authorization: `Bearer ${'0'.repeat(64)}` } },
];

test('HTTP/1.1: no token or a wrong one gets 401 and nothing goes upstream; the kubeconfig token passes', async (t) => {
  const up = await countingUpstream(t);
  const { proxy, trace } = await startProxy(t, up.url, { upstreamToken: 'upstream-secret' });
  for (const wrong of WRONG) {
    for (const method of ['GET', 'POST']) {
      const res = await rawRequest(proxy.url, {
        method,
        path: SECRET_PATH,
        headers: { ...wrong.headers, 'content-type': 'application/json' },
        ...(method === 'POST' ? { body: '{}' } : {}),
      });
      t.is(res.status, 401, `${method} with ${wrong.name}`);
      t.like(JSON.parse(res.body.toString()), UNAUTHORIZED);
    }
  }
  t.deepEqual(up.seen, [], 'no refused request reached the API server');
  t.deepEqual(trace.events, [], "refused requests are not the controller's: not traced");
  const token = (parse(proxy.kubeconfigYaml()) as { users: Array<{ user: { token: string } }> }).users[0]!.user.token;
  t.is((await rawRequest(proxy.url, { path: SECRET_PATH, headers: { authorization: `Bearer ${token}` } })).status, 200);
  t.true(up.seen.includes(`GET ${SECRET_PATH}`));
  t.true(
    up.authorizations.every((a) => a === 'Bearer upstream-secret'),
    "upstream sees the proxy's own credentials only",
  );
});

test('HTTP/2 over TLS: no token or a wrong one gets 401; the kubeconfig token passes', async (t) => {
  const up = await countingUpstream(t);
  const { proxy } = await startProxy(t, up.url, { tls: true });
  for (const wrong of WRONG) {
    for (const method of ['GET', 'POST']) {
      const res = await h2Request(proxy, method, SECRET_PATH, wrong.headers);
      t.is(res.status, 401, `${method} with ${wrong.name}`);
      t.like(JSON.parse(res.body), UNAUTHORIZED);
    }
  }
  t.deepEqual(up.seen, []);
  t.is((await h2Request(proxy, 'GET', SECRET_PATH, proxyAuth(proxy))).status, 200);
  t.is(proxy.clientProtocols().h2, 1);
});

test('upgrades (WebSocket, SPDY): no token or a wrong one gets 401 before anything is tunnelled', async (t) => {
  const up = await countingUpstream(t);
  let upgrades = 0;
  const { proxy } = await startProxy(t, up.url);
  const u = new URL(proxy.url);
  for (const wrong of WRONG) {
    for (const upgrade of ['websocket', 'SPDY/3.1']) {
      const status = await new Promise<number>((resolve, reject) => {
        const req = http.request({
          hostname: u.hostname,
          port: u.port,
          method: 'POST',
          path: '/api/v1/namespaces/default/pods/p/exec?command=sh&stdout=true',
          headers: { connection: 'Upgrade', upgrade, ...wrong.headers },
          agent: false,
        });
        req.on('upgrade', (_res, socket) => {
          upgrades++;
          socket.destroy();
          resolve(101);
        });
        req.on('response', (res) => {
          res.resume();
          resolve(res.statusCode ?? 0);
        });
        req.on('error', reject);
        req.end();
      });
      t.is(status, 401, `${upgrade} with ${wrong.name}`);
    }
    const ws = new WebSocket(`${proxy.url.replace('http', 'ws')}/api/v1/namespaces/default/configmaps?watch=true`, { headers: wrong.headers });
    const refused = await new Promise<number>((resolve) => {
      ws.on('unexpected-response', (_req, res) => resolve(res.statusCode ?? 0));
      ws.on('open', () => resolve(101));
      ws.on('error', () => resolve(0));
    });
    ws.terminate();
    t.is(refused, 401, `a WebSocket watch with ${wrong.name}`);
  }
  t.is(upgrades, 0);
  t.deepEqual(up.seen, []);
});

test('plain HTTP: the kubeconfig server URL carries the token as a path prefix (client-go sends no token over http); it never goes upstream', async (t) => {
  const up = await countingUpstream(t);
  const { proxy, trace } = await startProxy(t, up.url);
  const server = (parse(proxy.kubeconfigYaml()) as { clusters: Array<{ cluster: { server: string } }> }).clusters[0]!.cluster.server;
  t.is(server, `${proxy.url}/kperturb-token/${proxy.controllerToken}`);
  const u = new URL(server);
  t.is((await rawRequest(proxy.url, { path: `${u.pathname}${SECRET_PATH}?x=1` })).status, 200);
  t.deepEqual(
    up.seen.filter((s) => s.includes('secrets')),
    [`GET ${SECRET_PATH}?x=1`],
    'upstream gets the path without the prefix',
  );
  t.like(trace.ofType('request')[0], { path: SECRET_PATH, query: { x: '1' } });
  t.is((await rawRequest(proxy.url, { path: `/kperturb-token/${'0'.repeat(64)}${SECRET_PATH}` })).status, 401);
});
