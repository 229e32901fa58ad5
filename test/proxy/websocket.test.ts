import http from 'node:http';
import test from 'ava';
import WebSocket, { WebSocketServer } from 'ws';
import { startProxy, waitFor } from './helpers.js';

test('a WebSocket watch (as Java clients watch) through the TLS proxy: bytes pass unchanged and every event is recorded', async (t) => {
  const events = [
    { type: 'ADDED', object: { kind: 'ConfigMap', apiVersion: 'v1', metadata: { name: 'a', namespace: 'default', resourceVersion: '5' } } },
    // Over 125 bytes: a 16-bit length frame.
    {
      type: 'MODIFIED',
      object: { kind: 'ConfigMap', apiVersion: 'v1', metadata: { name: 'a', namespace: 'default', resourceVersion: '6' }, data: { big: 'x'.repeat(300) } },
    },
    { type: 'DELETED', object: { kind: 'ConfigMap', apiVersion: 'v1', metadata: { name: 'a', namespace: 'default', resourceVersion: '7' } } },
  ];
  const upstreamServer = http.createServer((_req, res) => res.writeHead(404).end());
  const wss = new WebSocketServer({ server: upstreamServer, perMessageDeflate: false });
  wss.on('connection', (ws) => {
    ws.send(JSON.stringify(events[0]));
    ws.send(JSON.stringify(events[1]));
    // A fragmented message: two frames.
    const text = JSON.stringify(events[2]);
    ws.send(text.slice(0, 20), { fin: false });
    ws.send(text.slice(20), { fin: true });
  });
  await new Promise<void>((r) => upstreamServer.listen(0, '127.0.0.1', r));
  t.teardown(() => {
    for (const c of wss.clients) c.terminate();
    upstreamServer.close();
  });
  const { proxy, trace } = await startProxy(t, `http://127.0.0.1:${(upstreamServer.address() as { port: number }).port}`, { tls: true });
  const ws = new WebSocket(`${proxy.url.replace('https', 'wss')}/api/v1/namespaces/default/configmaps?watch=true`, {
    ca: proxy.caPem!,
    perMessageDeflate: false,
    headers: { authorization: `Bearer ${proxy.controllerToken}` },
  });
  const received: string[] = [];
  await new Promise<void>((resolve, reject) => {
    ws.on('message', (m) => {
      received.push(String(m));
      if (received.length === 3) resolve();
    });
    ws.on('error', reject);
  });
  t.deepEqual(
    received,
    events.map((e) => JSON.stringify(e)),
  );
  await waitFor('three recorded events', () => trace.ofType('watch-event').length === 3);
  t.deepEqual(
    trace.ofType('watch-event').map((e) => [e.eventType, e.key, e.resourceVersion]),
    [
      ['ADDED', 'ConfigMap/default/a', '5'],
      ['MODIFIED', 'ConfigMap/default/a', '6'],
      ['DELETED', 'ConfigMap/default/a', '7'],
    ],
  );
  t.is(trace.ofType('stream-open').length, 1);
  ws.close();
  await waitFor('the stream to close', () => trace.ofType('stream-close').length === 1);
  await waitFor('the upstream socket to close', () => proxy.upstreamOpenCount() === 0);
});
