import net from 'node:net';
import test from 'ava';
import { CoreV1Api } from '@kubernetes/client-node';
import { deadPort, kubeConfigOf, proxyAuth, rawRequest, startCluster, startProxy } from './helpers.js';

test('a dead upstream gives the controller a 503 Status and the proxy stays up', async (t) => {
  const port = await deadPort();
  const { proxy, trace, logs } = await startProxy(t, `http://127.0.0.1:${port}`);
  const api = kubeConfigOf(proxy.kubeconfigYaml()).makeApiClient(CoreV1Api);
  const err = await t.throwsAsync(api.listNamespacedConfigMap({ namespace: 'default' }));
  t.is((err as { code?: number }).code, 503);

  for (let i = 0; i < 3; i++) {
    const res = await rawRequest(proxy.url, { path: '/api/v1/namespaces/default/configmaps/x', headers: proxyAuth(proxy) });
    t.is(res.status, 503);
    const body = JSON.parse(res.body.toString('utf8'));
    t.like(body, { kind: 'Status', status: 'Failure', code: 503, reason: 'ServiceUnavailable' });
    t.regex(body.message, /ECONNREFUSED/);
  }
  const watch = await rawRequest(proxy.url, { path: '/api/v1/namespaces/default/configmaps?watch=1', headers: proxyAuth(proxy) });
  t.is(watch.status, 503);
  t.true(
    logs.some((l) => l.includes('ECONNREFUSED')),
    'a log line says why',
  );
  t.true(trace.ofType('response').every((r) => r.status === 503));
  t.is(proxy.activity().inFlight, 0);
  t.is(proxy.activity().openWatches, 0);
});

test('an upstream that answers garbage or hangs up mid-answer gives an error status; the proxy survives', async (t) => {
  const server = net.createServer((socket) => {
    socket.once('data', (d) => {
      const path = d.toString('latin1').split(' ')[1] ?? '';
      if (path.includes('garbage')) socket.end('THIS IS NOT HTTP\r\n\r\n');
      else if (path.includes('cut')) socket.end('HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 100\r\n\r\n{"kind":');
      else socket.destroy();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  t.teardown(() => new Promise<void>((r) => server.close(() => r())));
  const { proxy } = await startProxy(t, `http://127.0.0.1:${(server.address() as net.AddressInfo).port}`);

  const garbage = await rawRequest(proxy.url, { path: '/api/v1/namespaces/default/configmaps/garbage', headers: proxyAuth(proxy) });
  t.is(garbage.status, 502);
  t.like(JSON.parse(garbage.body.toString()), { kind: 'Status', code: 502 });
  const reset = await rawRequest(proxy.url, { path: '/api/v1/namespaces/default/configmaps/reset', headers: proxyAuth(proxy) });
  t.is(reset.status, 502);
  const cut = await rawRequest(proxy.url, { path: '/api/v1/namespaces/default/configmaps/cut', headers: proxyAuth(proxy) });
  t.is(cut.status, 502);

  // Still serving after all that.
  const cluster = await startCluster(t);
  const again = await rawRequest(proxy.url, { path: '/api/v1/namespaces/default/configmaps/garbage', headers: proxyAuth(proxy) });
  t.is(again.status, 502);
  void cluster;
});
