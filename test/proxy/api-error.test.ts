import test from 'ava';
import http from 'node:http';
import { rawRequest, proxyAuth, startRecordedProxy, waitFor, type RawResponse } from './helpers.js';
import type { ControllerProxy } from '../../proxy/index.js';
import type { ApiErrorFault } from '../../src/model/plan.js';
import { kubernetesBody, type Field } from '../cluster/protobuf/encode.js';

const CM = '/api/v1/namespaces/default/configmaps';
const json = { 'content-type': 'application/json' };

function create(proxy: ControllerProxy, body: object): Promise<RawResponse> {
  return rawRequest(proxy.url, { method: 'POST', path: CM, headers: { ...proxyAuth(proxy), ...json }, body: JSON.stringify(body) });
}

function put(proxy: ControllerProxy, name: string, body: object): Promise<RawResponse> {
  return rawRequest(proxy.url, { method: 'PUT', path: `${CM}/${name}`, headers: { ...proxyAuth(proxy), ...json }, body: JSON.stringify(body) });
}

test('api-error conflict answers the matching update with the Status kube-apiserver writes, without applying it, once', async (t) => {
  const { proxy, client, trace } = await startRecordedProxy(t);
  await create(proxy, { metadata: { name: 'a' }, data: { v: '1' } });
  const fault: ApiErrorFault = { type: 'api-error', on: { verb: 'update', key: 'ConfigMap/default/a', occurrence: 1 }, answer: 'conflict' };
  let fired = 0;
  const armed = proxy.primitives.apiErrors.arm(fault, 0, () => fired++);
  const res = await put(proxy, 'a', { metadata: { name: 'a' }, data: { v: '2' } });
  t.is(res.status, 409);
  t.deepEqual(JSON.parse(res.body.toString()), {
    kind: 'Status',
    apiVersion: 'v1',
    metadata: {},
    status: 'Failure',
    message: 'Operation cannot be fulfilled on configmaps "a": the object has been modified; please apply your changes to the latest version and try again',
    reason: 'Conflict',
    code: 409,
    details: { name: 'a', kind: 'configmaps' },
  });
  t.is(((await client.get('ConfigMap/default/a'))?.data as Record<string, string> | undefined)?.v, '1', 'the update was not applied');
  t.true(armed.fired);
  t.is(fired, 1);
  // One-shot: the next update goes through.
  t.is((await put(proxy, 'a', { metadata: { name: 'a' }, data: { v: '3' } })).status, 200);
  t.is(((await client.get('ConfigMap/default/a'))?.data as Record<string, string> | undefined)?.v, '3');
  const faults = trace.ofType('fault').filter((f) => f.fault === 'api-error');
  t.deepEqual(
    faults.map((f) => f.phase),
    ['triggered', 'applied'],
  );
});

test('api-error too-many-requests carries Retry-After and details.retryAfterSeconds; the n-th request is the one failed', async (t) => {
  const { proxy } = await startRecordedProxy(t);
  await create(proxy, { metadata: { name: 'a' }, data: { v: '1' } });
  proxy.primitives.apiErrors.arm({ type: 'api-error', on: { verb: 'update', key: 'ConfigMap/default/a', occurrence: 2 }, answer: 'too-many-requests' });
  t.is((await put(proxy, 'a', { metadata: { name: 'a' }, data: { v: '2' } })).status, 200, 'the 1st update passes');
  const res = await put(proxy, 'a', { metadata: { name: 'a' }, data: { v: '3' } });
  t.is(res.status, 429);
  t.is(res.headers['retry-after'], '1');
  t.like(JSON.parse(res.body.toString()), { reason: 'TooManyRequests', code: 429, details: { retryAfterSeconds: 1 } });
});

test('api-error lost-response applies a generateName create upstream and resets the connection before the answer', async (t) => {
  const { proxy, client, trace } = await startRecordedProxy(t);
  const armed = proxy.primitives.apiErrors.arm({
    type: 'api-error',
    on: { verb: 'create', key: 'ConfigMap/default/child-*#1', occurrence: 1 },
    answer: 'lost-response',
  });
  const outcome = await create(proxy, { metadata: { generateName: 'child-' }, data: { v: '1' } }).then(
    (r) => `answered ${r.status}`,
    (err: NodeJS.ErrnoException) => `failed ${err.code ?? err.message}`,
  );
  t.regex(outcome, /^failed (ECONNRESET|socket hang up)/);
  t.true(armed.fired);
  await waitFor('the object to exist', async () =>
    (await client.list({ group: '', version: 'v1', resource: 'configmaps', kind: 'ConfigMap', namespaced: true, verbs: [], subresources: [] })).items.some(
      (o) => o.metadata?.generateName === 'child-',
    ),
  );
  const response = trace.ofType('response').find((r) => r.status === 201);
  t.truthy(response, 'the trace records the answer the controller never got');
  // The retried create is the 2nd of the family: it passes.
  t.is((await create(proxy, { metadata: { generateName: 'child-' } })).status, 201);
});

test('api-error internal-error and timeout answer with their Status; an unmatched fault says what came', async (t) => {
  const { proxy, client } = await startRecordedProxy(t);
  proxy.primitives.apiErrors.arm({ type: 'api-error', on: { verb: 'create', key: 'ConfigMap/default/b', occurrence: 1 }, answer: 'internal-error' });
  const never = proxy.primitives.apiErrors.arm({ type: 'api-error', on: { verb: 'create', key: 'ConfigMap/default/zzz', occurrence: 1 }, answer: 'timeout' });
  const res = await create(proxy, { metadata: { name: 'b' } });
  t.is(res.status, 500);
  t.like(JSON.parse(res.body.toString()), {
    reason: 'InternalError',
    code: 500,
    message: 'Internal error occurred: etcdserver: request timed out',
    details: { causes: [{ message: 'etcdserver: request timed out' }] },
  });
  t.is(await client.get('ConfigMap/default/b'), undefined, 'not applied');
  t.false(never.fired);
  t.regex(never.whyNotFired() ?? '', /never matched.*ConfigMap\/default\/b/);
});

/** A raw watch of ConfigMaps (from `resourceVersion` if given): its status, and its body once it ends. */
function rawWatch(proxy: ControllerProxy, resourceVersion?: string): Promise<{ status: number; ended: Promise<string> }> {
  const u = new URL(proxy.url);
  const rv = resourceVersion ? `&resourceVersion=${resourceVersion}` : '';
  return new Promise((resolve, reject) => {
    const req = http.request({ hostname: u.hostname, port: u.port, path: `${CM}?watch=true&timeoutSeconds=600${rv}`, headers: proxyAuth(proxy), agent: false });
    req.on('response', (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      const ended = new Promise<string>((done) => {
        res.on('end', () => done(Buffer.concat(chunks).toString()));
        res.on('error', () => done(`reset after: ${Buffer.concat(chunks).toString()}`));
        res.on('aborted', () => done(`reset after: ${Buffer.concat(chunks).toString()}`));
      });
      resolve({ status: res.statusCode ?? 0, ended });
    });
    req.on('error', reject);
    req.end();
  });
}

test("watch-end closes the kind's watches when its trigger fires, and with expire answers the re-watch 410 Expired", async (t) => {
  const { proxy, trace } = await startRecordedProxy(t);
  let streams: number[] | undefined;
  proxy.primitives.watches.armWatchEnd(
    { type: 'watch-end', kind: 'ConfigMap', at: { write: { verb: 'create', key: 'ConfigMap/default/go', occurrence: 1 } }, mode: 'close', expire: true },
    0,
    (s) => (streams = s),
  );
  const first = await rawWatch(proxy);
  t.is(first.status, 200);
  await waitFor('the watch to be open', () => proxy.activity().openWatches === 1);
  const created = await create(proxy, { metadata: { name: 'go' } });
  t.is(created.status, 201);
  await first.ended;
  t.is(streams?.length, 1, 'the open ConfigMap watch was closed');
  // Not settled while the controller is blind to ConfigMaps: until it watches them again.
  t.is(proxy.activity().awaitingRelist, 1);
  const rv = JSON.parse(created.body.toString()).metadata.resourceVersion as string;
  const again = await rawWatch(proxy, rv);
  t.is(again.status, 200);
  const event = JSON.parse((await again.ended).trim()) as { type: string; object: { code: number; reason: string } };
  t.like(event, { type: 'ERROR', object: { code: 410, reason: 'Expired' } });
  t.is(proxy.activity().awaitingRelist, 1, 'a re-watch answered 410 is not watching again: the controller must relist');
  // Once: the relist's watch is served live.
  const live = await rawWatch(proxy, rv);
  t.is(live.status, 200);
  await waitFor('the live watch', () => proxy.activity().openWatches === 1);
  t.is(proxy.activity().awaitingRelist, 0);
  t.deepEqual(
    trace
      .ofType('fault')
      .filter((f) => f.fault === 'watch-end')
      .map((f) => f.phase),
    ['triggered', 'expired'],
  );
});

test("api-error matches creates whose body is protobuf (client-go's default for built-in kinds), named or generated", async (t) => {
  const { proxy, client } = await startRecordedProxy(t);
  const meta = (fields: Field[]) => [{ n: 1, message: fields }];
  const post = (fields: Field[]) =>
    rawRequest(proxy.url, {
      method: 'POST',
      path: CM,
      headers: { ...proxyAuth(proxy), 'content-type': 'application/vnd.kubernetes.protobuf' },
      body: kubernetesBody('v1', 'ConfigMap', meta(fields)),
    });
  const named = proxy.primitives.apiErrors.arm({
    type: 'api-error',
    on: { verb: 'create', key: 'ConfigMap/default/pb', occurrence: 1 },
    answer: 'internal-error',
  });
  const generated = proxy.primitives.apiErrors.arm({
    type: 'api-error',
    on: { verb: 'create', key: 'ConfigMap/default/gen-*#1', occurrence: 1 },
    answer: 'service-unavailable',
  });
  t.is(
    (
      await post([
        { n: 1, bytes: 'pb' },
        { n: 3, bytes: 'default' },
      ])
    ).status,
    500,
  );
  t.true(named.fired);
  t.is(await client.get('ConfigMap/default/pb'), undefined, 'not applied');
  t.is(
    (
      await post([
        { n: 2, bytes: 'gen-' },
        { n: 3, bytes: 'default' },
      ])
    ).status,
    503,
  );
  t.true(generated.fired);
});

test('api-error slow applies the write and delivers its answer once the hold is over', async (t) => {
  const { proxy, client, trace } = await startRecordedProxy(t);
  proxy.primitives.apiErrors.arm({ type: 'api-error', on: { verb: 'create', key: 'ConfigMap/default/late', occurrence: 1 }, answer: 'slow', slowSeconds: 1 });
  let answered = false;
  const answer = create(proxy, { metadata: { name: 'late' } }).finally(() => (answered = true));
  // The write is applied upstream while the controller still waits for its answer (held 1 s, far
  // longer than the poll that sees the fault applied).
  await waitFor('the applied fault', () => trace.ofType('fault').some((f) => f.fault === 'api-error' && f.phase === 'applied'));
  t.truthy(await client.get('ConfigMap/default/late'));
  t.false(answered, 'the answer is still held');
  t.is((await answer).status, 201);
  t.regex(trace.ofType('fault').find((f) => f.phase === 'applied')!.detail, /answered 201; holding the answer 1 s/);
});
