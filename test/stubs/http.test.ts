/**
 * The HTTP stub application: rules by method and path glob (query ignored), first match wins, JSON
 * or text bodies with headers, the default answer; every answered request reported once.
 */
import test from 'ava';
import type { AddressInfo } from 'node:net';
import { createHttpStub, type HttpCall } from '../../src/stubs/http.js';
import type { HttpStubConfig } from '../../src/model/applications.js';

const CONFIG: HttpStubConfig = {
  rules: [
    { method: 'GET', path: '/_cluster/health*', status: 200, json: { status: 'green' }, headers: {} },
    { path: '/_cluster/*', status: 503, text: 'busy\n', headers: { 'Retry-After': '1' } },
  ],
  default: { status: 404, json: { error: 'not stubbed' }, headers: {} },
};

test('rules answer by method and path glob, the first match wins, the default answers the rest', async (t) => {
  const calls: HttpCall[] = [];
  const server = createHttpStub(CONFIG, (c) => calls.push(c));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => server.close());
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  const health = await fetch(`${base}/_cluster/health?wait_for_status=green`);
  t.is(health.status, 200);
  t.is(health.headers.get('content-type'), 'application/json');
  t.deepEqual(await health.json(), { status: 'green' });

  // Same path, another method: the first rule does not match, the glob of the second does.
  const put = await fetch(`${base}/_cluster/health`, { method: 'PUT', body: '{"x":1}' });
  t.is(put.status, 503);
  t.is(put.headers.get('retry-after'), '1');
  t.is(put.headers.get('content-type'), 'text/plain; charset=utf-8');
  t.is(await put.text(), 'busy\n');

  const other = await fetch(`${base}/nodes`);
  t.is(other.status, 404);
  t.deepEqual(await other.json(), { error: 'not stubbed' });

  t.deepEqual(calls, [
    { method: 'GET', path: '/_cluster/health?wait_for_status=green', status: 200, rule: 0 },
    { method: 'PUT', path: '/_cluster/health', status: 503, rule: 1 },
    { method: 'GET', path: '/nodes', status: 404 },
  ]);
});

test('rules may match a substring of the body and a state that an earlier call set, per server', async (t) => {
  // Jolokia takes every call as a POST to /jolokia/; a Cassandra node reports DECOMMISSIONED once
  // it was decommissioned (casskop's scale-down waits for that).
  const jolokia: HttpStubConfig = {
    rules: [
      {
        method: 'POST',
        path: '/jolokia/',
        bodyContains: '"operation":"decommission"',
        setState: 'decommissioned',
        status: 200,
        json: { status: 200, value: null },
        headers: {},
      },
      {
        method: 'POST',
        path: '/jolokia/',
        bodyContains: '"attribute":"OperationMode"',
        state: 'decommissioned',
        status: 200,
        json: { status: 200, value: 'DECOMMISSIONED' },
        headers: {},
      },
      { method: 'POST', path: '/jolokia/', bodyContains: '"attribute":"OperationMode"', status: 200, json: { status: 200, value: 'NORMAL' }, headers: {} },
    ],
    default: { status: 404, json: {}, headers: {} },
  };
  const calls: HttpCall[] = [];
  const start = async () => {
    const server = createHttpStub(jolokia, (c) => calls.push(c));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    t.teardown(() => server.close());
    return `http://127.0.0.1:${(server.address() as AddressInfo).port}/jolokia/`;
  };
  const mode = async (url: string) =>
    ((await (await fetch(url, { method: 'POST', body: '{"type":"READ","mbean":"x", "attribute":"OperationMode"}' })).json()) as { value: unknown }).value;
  const node0 = await start();
  const node1 = await start();
  t.is(await mode(node0), 'NORMAL');
  const dec = await fetch(node0, { method: 'POST', body: '{"type":"EXEC","mbean":"x","operation":"decommission","arguments":[]}' });
  t.deepEqual(await dec.json(), { status: 200, value: null });
  t.is(await mode(node0), 'DECOMMISSIONED');
  // Another server (another pod) keeps its own state.
  t.is(await mode(node1), 'NORMAL');
  t.deepEqual(
    calls.map((c) => c.rule),
    [2, 0, 1, 2],
  );
});
