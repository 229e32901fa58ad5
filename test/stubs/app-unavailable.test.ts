/**
 * app-unavailable on the stub applications: an HTTP stub answers 503 (or 500) while the fault lasts
 * and its rules' state does not move; `refuse` closes the address (connections refused) and the
 * heal opens it again with the state its rules had set; a call is announced before it is answered,
 * so that a fault started by that announcement (a call trigger) already shapes it; a ZooKeeper
 * application cannot answer HTTP errors; a pod whose containers crashed has no listener.
 */
import test from 'ava';
import { EmbeddedCluster } from '../../src/cluster/index.js';
import { KubeClient } from '../../src/kube/client.js';
import { ClusterRecorder } from '../../src/recorder/cluster-recorder.js';
import { ApplicationStubs } from '../../src/stubs/applications.js';
import { connect } from 'node:net';
import type { AppCallArrival } from '../../src/model/trigger.js';
import type { AppCallEvent, ClusterTraceEvent, ControllerTraceEvent, TraceSink, Unstamped } from '../../src/model/trace.js';
import { waitFor } from '../proxy/helpers.js';
import { freePort } from '../_free-port.js';

test('an HTTP stub answers 503 or refuses connections for the window, then answers from its rules with the state they had set', async (t) => {
  const cluster = await EmbeddedCluster.start({ network: 'loopback', simulation: { podStopDelayMs: 0 } });
  const client = new KubeClient(cluster.url, cluster.clientOptions());
  const events: Array<Unstamped<ControllerTraceEvent | ClusterTraceEvent>> = [];
  const sink: TraceSink = { append: (e) => events.push(e) };
  const recorder = await ClusterRecorder.start(client, sink);
  const arrivals: AppCallArrival[] = [];
  const stubLog: string[] = [];
  let onArrival: (a: AppCallArrival) => void = () => undefined;
  // Not a well-known port: a Go operator in a campaign on this machine may hold [::]:8080 (its
  // metrics, dual-stack), and then no pod address can take 8080 (EADDRINUSE, seen at load).
  const kvPort = await freePort();
  const stubs = new ApplicationStubs(
    [
      {
        name: 'kv',
        protocol: 'http',
        port: kvPort,
        namespace: 'default',
        pods: { matchLabels: { app: 'kv' } },
        services: [],
        http: {
          rules: [
            { method: 'POST', path: '/upgrade', status: 200, json: {}, headers: {}, setState: 'v2' },
            { method: 'GET', path: '/version', state: 'v2', status: 200, json: { version: 'v2' }, headers: {} },
            { method: 'GET', path: '/version', status: 200, json: { version: 'v1' }, headers: {} },
          ],
          default: { status: 404, json: {}, headers: {} },
        },
      },
      { name: 'zk', protocol: 'zookeeper', port: 2181, namespace: 'default', pods: { matchLabels: { app: 'zk' } }, services: [] },
    ],
    recorder,
    sink,
    (line) => stubLog.push(line),
    (a) => {
      arrivals.push(a);
      onArrival(a);
    },
  );
  t.teardown(async () => {
    stubs.stop();
    await recorder.stop();
    client.close();
    await cluster.stop();
  });
  await client.request('POST', '/api/v1/namespaces/default/pods', {
    body: { metadata: { name: 'kv-0', labels: { app: 'kv' } }, spec: { containers: [{ name: 'kv', image: 'kv' }] } },
  });
  const app = stubs.application('kv')!;
  // What the stubs logged (a listen that failed) names the cause if the listener never comes.
  await waitFor('the pod listener', () => app.addresses().length === 1, 15_000).catch((err: Error) => {
    throw new Error(`${err.message}; the stubs logged: ${JSON.stringify(stubLog)}`);
  });
  const address = app.addresses()[0]!;
  const base = `http://${address}`;
  const call = async (method: string, path: string) => {
    const res = await fetch(`${base}${path}`, { method });
    return [res.status, await res.json()] as const;
  };
  const key = 'Pod/default/kv-0';

  t.deepEqual(await call('GET', '/version'), [200, { version: 'v1' }]);
  t.is(stubs.setUnavailable('kv', key, 'service-unavailable'), undefined);
  const [status] = await call('POST', '/upgrade');
  t.is(status, 503, 'the fault answers, not the rules');
  t.is((await call('GET', '/version'))[0], 503);
  t.is(stubs.setUnavailable('kv', key, undefined), undefined);
  t.deepEqual(await call('GET', '/version'), [200, { version: 'v1' }], 'the failed upgrade did not move the state');

  // A fault started as a call arrives (what a call trigger does) shapes that very call.
  onArrival = (a) => {
    if (a.operation === 'POST') stubs.setUnavailable('kv', undefined, 'internal-error');
  };
  t.is((await call('POST', '/upgrade'))[0], 500);
  onArrival = () => undefined;
  stubs.setUnavailable('kv', undefined, undefined);
  t.deepEqual(await call('POST', '/upgrade'), [200, {}]);
  t.deepEqual(await call('GET', '/version'), [200, { version: 'v2' }]);

  stubs.setUnavailable('kv', key, 'refuse');
  await waitFor('the listener to close', () => app.addresses().length === 0, 15_000);
  const [host, port] = address.split(':') as [string, string];
  const refused = await new Promise<string>((resolve) => {
    const socket = connect(Number(port), host, () => {
      socket.destroy();
      resolve('connected');
    });
    socket.on('error', (err: NodeJS.ErrnoException) => resolve(err.code ?? err.message));
  });
  t.is(refused, 'ECONNREFUSED');
  stubs.setUnavailable('kv', key, undefined);
  await waitFor('the listener to open again', () => app.addresses().length === 1, 15_000);
  t.deepEqual(await call('GET', '/version'), [200, { version: 'v2' }], 'the state set before the fault is kept');

  const calls = events.filter((e): e is Unstamped<AppCallEvent> => e.type === 'app-call').map((c) => [c.operation, c.path, c.result]);
  t.deepEqual(calls, [
    ['GET', '/version', 200],
    ['POST', '/upgrade', 503],
    ['GET', '/version', 503],
    ['GET', '/version', 200],
    ['POST', '/upgrade', 500],
    ['POST', '/upgrade', 200],
    ['GET', '/version', 200],
    ['GET', '/version', 200],
  ]);
  t.deepEqual(
    arrivals.map((a) => [a.application, a.key, a.operation, a.path]),
    calls.map(([op, path]) => ['kv', key, op, path]),
    'every call announced as it arrived',
  );
  t.regex(stubs.setUnavailable('zk', undefined, 'service-unavailable') ?? '', /speaks zookeeper, not HTTP/);
  t.regex(stubs.setUnavailable('nope', undefined, 'refuse') ?? '', /no application named nope/);

  // A pod whose containers crashed has no process to answer: its listener closes, and opens when it runs again.
  cluster.containerFaults!.setContainerFault('default', 'kv-0', 'crash-loop');
  await waitFor('the crashed pod listener to close', () => app.addresses().length === 0, 15_000);
  cluster.containerFaults!.setContainerFault('default', 'kv-0', undefined);
  await waitFor('the listener to open again', () => app.addresses().length === 1, 15_000);
});
