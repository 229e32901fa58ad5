import http from 'node:http';
import test from 'ava';
import { CoreV1Api, Watch } from '@kubernetes/client-node';
import { kubeConfigOf, proxyAuth, startCluster, startProxy, startTcpRelay, waitFor } from './helpers.js';
import type { ControllerProxy } from '../../proxy/index.js';

const ROUNDS = 20;

/** Opens a watch on its own connection and resolves once the response headers arrived. */
function openRawWatch(proxy: ControllerProxy): Promise<{ req: http.ClientRequest; res: http.IncomingMessage }> {
  const u = new URL(proxy.url);
  return new Promise((resolve, reject) => {
    const req = http.request({
      hostname: u.hostname,
      port: u.port,
      path: '/api/v1/namespaces/default/configmaps?watch=true&timeoutSeconds=600',
      headers: proxyAuth(proxy),
      agent: false,
    });
    const timer = setTimeout(() => {
      req.destroy();
      reject(new Error('no response headers within 3 s (are watch headers flushed?)'));
    }, 3000);
    req.on('response', (res) => {
      clearTimeout(timer);
      resolve({ req, res });
    });
    req.on('error', reject);
    req.end();
  });
}

test('a controller that goes away mid-watch takes the upstream request with it, every time', async (t) => {
  const cluster = await startCluster(t);
  // The relay counts upstream TCP connections from the outside.
  const relay = await startTcpRelay(t, cluster.port);
  const liveWatches = () => relay.liveMatching(/[?&]watch=(true|1)/);
  const { proxy, trace } = await startProxy(t, relay.url, { upstreamToken: cluster.token! });
  // Pooled keep-alive connections carry the list; watches may reuse one of them.
  const api = kubeConfigOf(proxy.kubeconfigYaml()).makeApiClient(CoreV1Api);
  await api.listNamespacedConfigMap({ namespace: 'default' });

  for (let i = 0; i < ROUNDS; i++) {
    const { req, res } = await openRawWatch(proxy);
    t.is(res.statusCode, 200);
    await waitFor('the upstream watch', () => proxy.upstreamOpenCount() === 1 && liveWatches() === 1);
    req.socket!.destroy();
    await waitFor(`round ${i}: upstream watch closed`, () => proxy.upstreamOpenCount() === 0 && liveWatches() === 0);
  }
  t.is(proxy.activity().openWatches, 0);
  t.is(trace.ofType('stream-close').length, ROUNDS);
  t.true(trace.ofType('stream-close').every((e) => /controller closed/.test(e.reason ?? '')));

  // client-node's own abort path too.
  const w = await new Watch(kubeConfigOf(proxy.kubeconfigYaml())).watch(
    '/api/v1/namespaces/default/configmaps',
    {},
    () => {},
    () => {},
  );
  await waitFor('the client-node watch upstream', () => proxy.upstreamOpenCount() === 1 && liveWatches() === 1);
  w.abort();
  await waitFor('the client-node watch to be closed upstream', () => proxy.upstreamOpenCount() === 0 && liveWatches() === 0);
  t.pass();
});

test('a controller that goes away while a non-watch request waits upstream aborts it', async (t) => {
  const { startHttpServer } = await import('./helpers.js');
  let upstreamClosed = 0;
  let upstreamGot = 0;
  const upstream = await startHttpServer(t, (req, res) => {
    if (!req.url?.endsWith('/slow')) {
      res.writeHead(404, { 'content-type': 'application/json' }).end('{}');
      return;
    }
    // Never answers; notes when the proxy hangs up.
    upstreamGot++;
    res.on('close', () => upstreamClosed++);
  });
  const { proxy } = await startProxy(t, upstream);
  const u = new URL(proxy.url);
  const req = http.request({ hostname: u.hostname, port: u.port, path: '/api/v1/namespaces/default/configmaps/slow', headers: proxyAuth(proxy), agent: false });
  req.on('error', () => {});
  req.end();
  await waitFor('the request upstream', () => upstreamGot === 1 && proxy.upstreamOpenCount() === 1);
  t.is(proxy.activity().inFlight, 1);
  req.destroy();
  await waitFor('the upstream request to be aborted', () => upstreamClosed === 1 && proxy.upstreamOpenCount() === 0);
  await waitFor('activity to settle', () => proxy.activity().inFlight === 0);
  t.pass();
});
