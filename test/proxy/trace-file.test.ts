import test from 'ava';
import http from 'node:http';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { TraceSequence, TraceWriter } from '../../src/io/trace-io.js';
import { hashSecretValue } from '../../src/model/secret-hash.js';
import type { ClusterChangeEvent, ControllerTraceEvent, ResponseEvent, TraceSink, Unstamped } from '../../src/model/trace.js';
import { ControllerProxy } from '../../proxy/index.js';
import { startCluster, upstreamOf, waitFor } from './helpers.js';
import { scratchDir } from '../_scratch-dir.js';

/**
 * The proxy's trace file, written with the writer's shortcuts (answers spliced in as text, shared
 * watch objects serialized once), against a reference writer that gets every event through plain
 * `append`, parsed and copied: the two files must be the same, line for line.
 */
class TeeTrace implements TraceSink {
  constructor(
    private readonly fast: TraceWriter,
    private readonly reference: TraceWriter,
  ) {}

  append(event: Unstamped<ControllerTraceEvent | ClusterChangeEvent>): number {
    const copy = structuredClone(event);
    const seq = this.fast.append(event);
    this.reference.append(copy);
    return seq;
  }

  appendAnswer(event: Unstamped<ResponseEvent>, objectJson: string): number {
    const seq = this.fast.appendAnswer(event, objectJson);
    let parsed: unknown;
    try {
      parsed = JSON.parse(objectJson);
    } catch {
      parsed = undefined;
    }
    const isObject = typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed);
    const { type, id, status, durationMs } = event;
    this.reference.append({ type, id, status, ...(isObject ? { object: parsed as ResponseEvent['object'] } : {}), durationMs });
    return seq;
  }
}

function send(base: string, token: string, method: string, path: string, body?: unknown): Promise<{ status: number; text: string }> {
  const url = new URL(base);
  const payload = body === undefined ? undefined : Buffer.from(JSON.stringify(body));
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        hostname: url.hostname,
        port: url.port,
        method,
        path,
        headers: {
          authorization: `Bearer ${token}`,
          accept: 'application/json',
          ...(payload ? { 'content-type': method === 'PATCH' ? 'application/merge-patch+json' : 'application/json', 'content-length': payload.length } : {}),
        },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }));
      },
    );
    req.on('error', reject);
    req.end(payload);
  });
}

/** A watch through the proxy; counts the event lines it receives. */
function watch(base: string, token: string, path: string): { lines: () => number; stop: () => void } {
  const url = new URL(base);
  let lines = 0;
  const req = http.request({ hostname: url.hostname, port: url.port, path, headers: { authorization: `Bearer ${token}` } }, (res) => {
    res.on('data', (c: Buffer) => (lines += c.toString('utf8').split('\n').length - 1));
  });
  req.on('error', () => undefined);
  req.end();
  return { lines: () => lines, stop: () => req.destroy() };
}

/** The writers stamp the time each on its own. */
const ts = (line: string) => line.replace(/"ts":\d+/, '"ts":0');

test('the trace file reads exactly as if every event were serialized in full; Secret values are hashed', async (t) => {
  const dir = scratchDir(t, 'kperturb-trace-file-');
  const fast = new TraceWriter(join(dir, 'fast.jsonl'), 'controller', new TraceSequence());
  const reference = new TraceWriter(join(dir, 'reference.jsonl'), 'controller', new TraceSequence());
  const cluster = await startCluster(t);
  const proxy = await ControllerProxy.start({ ...upstreamOf(cluster), trace: new TeeTrace(fast, reference), log: () => undefined });
  t.teardown(() => proxy.stop());
  const token = proxy.controllerToken;
  const cms = '/api/v1/namespaces/default/configmaps';
  const secrets = '/api/v1/namespaces/default/secrets';

  t.is((await send(proxy.url, token, 'POST', cms, { metadata: { name: 'plain', labels: { app: 'x' } }, data: { a: 'b' } })).status, 201);
  const created = await send(proxy.url, token, 'POST', cms, {
    metadata: { name: 'odd' },
    data: { html: '<b>&</b>', quote: 'say "hi"\n', unicode: 'é 日本 😀', '10': 'integer-like key' },
  });
  t.is(created.status, 201);
  const rv = (JSON.parse(created.text) as { metadata: { resourceVersion: string } }).metadata.resourceVersion;
  const secretRv = (
    JSON.parse((await send(proxy.url, token, 'POST', secrets, { metadata: { name: 's' }, data: { password: 'aHVudGVyMg==' } })).text) as {
      metadata: { resourceVersion: string };
    }
  ).metadata.resourceVersion;
  // Several watchers of one resource share the parsed event lines.
  const watchers = [1, 2, 3].map(() => watch(proxy.url, token, `${cms}?watch=1&resourceVersion=${rv}`));
  const secretWatcher = watch(proxy.url, token, `${secrets}?watch=1&resourceVersion=${secretRv}`);
  t.teardown(() => [...watchers, secretWatcher].forEach((w) => w.stop()));
  for (let i = 1; i <= 3; i++) t.is((await send(proxy.url, token, 'PATCH', `${cms}/odd`, { data: { n: String(i) } })).status, 200);
  t.is((await send(proxy.url, token, 'PATCH', `${secrets}/s`, { data: { password: 'c2VjcmV0Mg==' } })).status, 200);
  const answers = [
    await send(proxy.url, token, 'GET', `${cms}/plain`),
    await send(proxy.url, token, 'GET', `${cms}/odd`),
    await send(proxy.url, token, 'GET', cms),
    await send(proxy.url, token, 'GET', `${cms}/missing`),
    await send(proxy.url, token, 'GET', `${secrets}/s`),
    await send(proxy.url, token, 'GET', secrets),
  ];
  t.deepEqual(
    answers.map((a) => a.status),
    [200, 200, 200, 404, 200, 200],
  );
  await waitFor('every watch event', () => watchers.every((w) => w.lines() >= 3) && secretWatcher.lines() >= 1);
  [...watchers, secretWatcher].forEach((w) => w.stop());
  await waitFor('the streams to close', () => proxy.activity().openWatches === 0);
  await fast.close();
  await reference.close();

  const fastLines = readFileSync(fast.file, 'utf8').split('\n').filter(Boolean);
  const referenceLines = readFileSync(reference.file, 'utf8').split('\n').filter(Boolean);
  t.deepEqual(fastLines.map(ts), referenceLines.map(ts));
  const events = fastLines.map((l) => JSON.parse(l) as { type: string; object?: { kind?: string } });
  t.is(events.filter((e) => e.type === 'watch-event' && e.object?.kind === 'ConfigMap').length, 9);
  t.true(events.some((e) => e.type === 'response' && e.object?.kind === 'Status'));
  const text = fastLines.join('\n');
  for (const value of ['aHVudGVyMg==', 'c2VjcmV0Mg==']) {
    t.false(text.includes(value), 'no Secret value in the trace');
    t.true(text.includes(hashSecretValue(value)));
  }
});
