import test, { type ExecutionContext } from 'ava';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { hashSecretValue } from '../../src/model/secret-hash.js';
import { readTraceAll, redactSecretObjects, TraceSequence, TraceWriter, type TraceWriterOptions } from '../../src/io/trace-io.js';
import { watchDeliveryEvent, type RequestEvent, type ResponseEvent, type SharedTextSlot, type Unstamped, type WatchEventType } from '../../src/model/trace.js';
import type { KubeObject } from '../../src/model/object-key.js';
import { scratchDir } from '../_scratch-dir.js';

test('end-state objects: Secret values become hashes (equal values, equal hashes); other kinds are untouched', (t) => {
  const objects: Record<string, unknown> = {
    'Secret/default/a': { metadata: { name: 'a' }, data: { 'tls.crt': 'Y2VydA==', 'tls.key': 'a2V5' }, stringData: { user: 'admin' } },
    'Secret/default/b': { metadata: { name: 'b' }, data: { 'tls.crt': 'Y2VydA==' } },
    'ConfigMap/default/a': { metadata: { name: 'a' }, data: { 'tls.crt': 'Y2VydA==' } },
  };
  redactSecretObjects(objects);
  const a = objects['Secret/default/a'] as { data: Record<string, string>; stringData: Record<string, string> };
  const b = objects['Secret/default/b'] as { data: Record<string, string> };
  t.is(a.data['tls.crt'], hashSecretValue('Y2VydA=='));
  t.is(a.data['tls.crt'], b.data['tls.crt']);
  t.not(a.data['tls.key'], a.data['tls.crt']);
  t.is(a.stringData.user, hashSecretValue('admin'));
  t.false(JSON.stringify(objects['Secret/default/a']).includes('a2V5'));
  t.deepEqual(objects['ConfigMap/default/a'], { metadata: { name: 'a' }, data: { 'tls.crt': 'Y2VydA==' } });
});

function tempDir(t: ExecutionContext): string {
  return scratchDir(t, 'kperturb-trace-io-');
}

/** The lines of a trace file, with the wall-clock stamps (which differ between writers) blanked. */
function linesOf(file: string): string[] {
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => l.replace(/"ts":\d+/, '"ts":0'));
}

/** Writes the same events through two writers: `fast` as given, `slow` through the plain append path. */
async function writeBoth(
  t: ExecutionContext,
  options: TraceWriterOptions,
  write: (fast: TraceWriter, slow: TraceWriter) => void,
): Promise<{ fast: string[]; slow: string[] }> {
  const dir = tempDir(t);
  const fast = new TraceWriter(join(dir, 'fast.jsonl'), 'controller', new TraceSequence(), options);
  const slow = new TraceWriter(join(dir, 'slow.jsonl'), 'controller', new TraceSequence(), options);
  write(fast, slow);
  await fast.close();
  await slow.close();
  return { fast: linesOf(fast.file), slow: linesOf(slow.file) };
}

const ANSWERS: Array<[string, string]> = [
  ['canonical', JSON.stringify({ kind: 'ConfigMap', apiVersion: 'v1', metadata: { name: 'a', resourceVersion: '7' }, data: { a: 'b' } })],
  ['with the newline a Go API server ends with', JSON.stringify({ kind: 'ConfigMap', metadata: { name: 'a' } }) + '\n'],
  ['with escapes JSON.stringify does not write', '{"kind":"ConfigMap","data":{"html":"\\u003cb\\u003e","slash":"a\\/b"}}'],
  ['indented', JSON.stringify({ kind: 'ConfigMap', spec: { replicas: 2 } }, null, 2)],
  ['with a fraction', '{"kind":"Widget","spec":{"ratio":0.50,"n":1e2}}'],
  ['with duplicate keys', '{"kind":"ConfigMap","data":{"a":"1","a":"2"}}'],
  ['with an integer key', '{"kind":"ConfigMap","data":{"b":"x","10":"y"}}'],
  ['a Secret', JSON.stringify({ kind: 'Secret', metadata: { name: 's' }, data: { password: 'aHVudGVyMg==' }, stringData: { user: 'admin' } })],
  ['a SecretList', JSON.stringify({ kind: 'SecretList', items: [{ metadata: { name: 's' }, data: { password: 'aHVudGVyMg==' } }] })],
  ['a Status', JSON.stringify({ kind: 'Status', status: 'Failure', code: 404 })],
  ['an array', '[1,2]'],
  ['a string', '"text"'],
  ['invalid JSON', '{"kind":"ConfigMap",'],
  ['empty', ''],
];

for (const keepEvents of [false, true]) {
  for (const redactSecrets of [true, false]) {
    test(`appendAnswer writes what append writes with the parsed answer (keepEvents ${keepEvents}, redactSecrets ${redactSecrets})`, async (t) => {
      const { fast, slow } = await writeBoth(t, { keepEvents, redactSecrets }, (fast, slow) => {
        for (const [, text] of ANSWERS) {
          const event = { type: 'response', id: 3, status: 200, object: undefined, durationMs: 2 } as const;
          fast.appendAnswer(event, text);
          let parsed: unknown;
          try {
            parsed = JSON.parse(text);
          } catch {
            parsed = undefined;
          }
          const isObject = typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed);
          slow.append({ type: 'response', id: 3, status: 200, ...(isObject ? { object: parsed as ResponseEvent['object'] } : {}), durationMs: 2 });
        }
        if (keepEvents)
          t.deepEqual(
            fast.events.map((e) => ({ ...e, ts: 0 })),
            slow.events.map((e) => ({ ...e, ts: 0 })),
          );
      });
      t.is(fast.length, ANSWERS.length + 1);
      for (let i = 0; i < fast.length; i++) t.is(fast[i], slow[i], ANSWERS[i - 1]?.[0] ?? 'header');
      const secretLine = fast[1 + ANSWERS.findIndex(([what]) => what === 'a Secret')]!;
      t.is(secretLine.includes('aHVudGVyMg=='), !redactSecrets);
      t.is(secretLine.includes(hashSecretValue('aHVudGVyMg==')), redactSecrets);
    });
  }
}

test('appendAnswer puts the answer where the event has its object key', async (t) => {
  const dir = tempDir(t);
  const w = new TraceWriter(join(dir, 'c.jsonl'), 'controller', new TraceSequence());
  const event: Unstamped<ResponseEvent> = { type: 'response', id: 1, status: 200, object: undefined, durationMs: 5 };
  w.appendAnswer(event, '{"kind":"ConfigMap"}');
  await w.close();
  const [, e] = await readTraceAll(w.file);
  t.deepEqual(Object.keys(e!), ['seq', 'ts', 'type', 'id', 'status', 'object', 'durationMs']);
  t.deepEqual((e as ResponseEvent).object, { kind: 'ConfigMap' });
});

test('watch events of a shared object (its text kept in their slot, no events kept) are written as JSON.stringify writes them; a Secret without one is redacted', async (t) => {
  const shared = { kind: 'ConfigMap', metadata: { name: 'a', resourceVersion: '9' }, data: { a: '"quoted" é 😀' } };
  // Larger than a batch's buffer: written on its own line all the same.
  const big = { kind: 'ConfigMap', metadata: { name: 'big' }, data: { a: 'x'.repeat(500_000) } };
  const secret = { kind: 'Secret', metadata: { name: 's' }, data: { k: 'djE=' } };
  type Event = [number, WatchEventType, string | undefined, string | undefined, KubeObject];
  const events = (object: KubeObject, bigObject: KubeObject): Event[] => [
    [1, 'MODIFIED', 'ConfigMap/default/a', '9', object],
    [10, 'DELETED', 'ConfigMap/default/a', '9', object],
    [2, 'ADDED', undefined, undefined, object],
    // Characters JSON.stringify escapes (each alone, so that none hides another), and one it does not.
    ...['"', '\\', '\n', '\u001f', '\ud800', 'é😀'].map((c, i): Event => [30 + i, 'MODIFIED', `ConfigMap/default/a${c}b`, c, object]),
    [7.5, 'MODIFIED', undefined, '9', object],
    [Number.NaN, 'MODIFIED', undefined, undefined, object],
    [8, 'MODIFIED', undefined, undefined, bigObject],
  ];
  const slots: { shared: SharedTextSlot; big: SharedTextSlot } = { shared: {}, big: {} };
  const { fast, slow } = await writeBoth(t, {}, (fast, slow) => {
    // Many times over, so that lines cross the batches' boundaries.
    for (let round = 0; round < 300; round++) {
      for (const [id, type, key, rv, object] of events(shared, big))
        fast.appendWatchEvent(id, type, key, rv, object, object === big ? slots.big : slots.shared);
      // The slow writer gets copies of its own, never shared.
      for (const [id, type, key, rv, object] of events(structuredClone(shared), structuredClone(big)))
        slow.append(watchDeliveryEvent(id, type, key, rv, object));
    }
    fast.appendWatchEvent(4, 'ADDED', 'Secret/default/s', undefined, secret);
    slow.append(watchDeliveryEvent(4, 'ADDED', 'Secret/default/s', undefined, structuredClone(secret)));
  });
  t.is(fast.length, 2 + 300 * events(shared, big).length);
  t.deepEqual(fast, slow);
  t.true(fast.at(-1)!.includes(hashSecretValue('djE=')));
  t.false(fast.at(-1)!.includes('djE='));
  t.not(slots.shared.text, undefined, 'the text of the shared object is kept in its slot');
});

for (const keepEvents of [false, true]) {
  test(`appendWatchEvent writes what append writes for the same event, stamped now (keepEvents ${keepEvents})`, async (t) => {
    const shared: KubeObject = { kind: 'ConfigMap', metadata: { name: 'a', resourceVersion: '9' }, data: { a: '"quoted" é 😀' } };
    const notShared: KubeObject = { kind: 'ConfigMap', metadata: { name: 'b' } };
    const slot: SharedTextSlot = {};
    const events: Array<[number, WatchEventType, string | undefined, string | undefined, KubeObject]> = [
      [0, 'ADDED', 'ConfigMap/default/a', '9', shared],
      [7, 'MODIFIED', undefined, '9', shared],
      [10, 'DELETED', 'ConfigMap/default/a', undefined, shared],
      [2147483647, 'MODIFIED', 'ConfigMap/default/a', '9', shared],
      [2147483648, 'MODIFIED', 'ConfigMap/default/a', '9', shared],
      [1234567890123, 'MODIFIED', 'ConfigMap/default/a', '9', shared],
      // Ids no sequence gives, written all the same.
      [-1, 'MODIFIED', 'ConfigMap/default/a', '9', shared],
      [2.5, 'MODIFIED', 'ConfigMap/default/a', '9', shared],
      [3, 'BOOKMARK', undefined, '11', shared],
      [4, 'MODIFIED', 'ConfigMap/default/b', '1', notShared],
    ];
    const { fast, slow } = await writeBoth(t, { keepEvents }, (fast, slow) => {
      // Enough for the sequence numbers to pass 10, 100, ... 10000, and lines to cross batches.
      for (let round = 0; round < 2000; round++) {
        for (const [id, type, key, rv, object] of events) {
          t.is(
            fast.appendWatchEvent(id, type, key, rv, object, object === shared ? slot : undefined),
            slow.append(watchDeliveryEvent(id, type, key, rv, structuredClone(object))),
          );
        }
      }
      if (keepEvents)
        t.deepEqual(
          fast.events.map((e) => ({ ...e, ts: 0 })),
          slow.events.map((e) => ({ ...e, ts: 0 })),
        );
    });
    t.is(fast.length, 1 + 2000 * events.length);
    t.deepEqual(fast, slow);
    const dir = tempDir(t);
    const w = new TraceWriter(join(dir, 'ts.jsonl'), 'controller', new TraceSequence());
    const before = Date.now();
    w.appendWatchEvent(1, 'ADDED', 'ConfigMap/default/a', '9', shared, {});
    const after = Date.now();
    await w.close();
    const ts = (await readTraceAll(w.file))[1]!.ts;
    t.true(ts >= before && ts <= after, `ts ${ts}`);
  });
}

/** Writes `events` through a writer that keeps no events (its fast paths) and one that keeps them (the plain append path). */
async function writeFastAndPlain(t: ExecutionContext, write: (w: TraceWriter) => void): Promise<{ fast: string[]; slow: string[] }> {
  const dir = tempDir(t);
  const fast = new TraceWriter(join(dir, 'fast.jsonl'), 'controller', new TraceSequence());
  const slow = new TraceWriter(join(dir, 'slow.jsonl'), 'controller', new TraceSequence(), { keepEvents: true });
  write(fast);
  write(slow);
  await fast.close();
  await slow.close();
  return { fast: linesOf(fast.file), slow: linesOf(slow.file) };
}

test('request lines are written as JSON.stringify writes them, whether their end is copied from the last request to the path or not', async (t) => {
  const path = '/api/v1/namespaces/default/configmaps/a';
  const resource = () => ({ group: '', version: 'v1', resource: 'configmaps', kind: 'ConfigMap', namespaced: true });
  const base = () => ({
    type: 'request',
    id: 1,
    incarnation: 1,
    method: 'GET',
    path,
    query: {},
    verb: 'get',
    resource: resource(),
    key: 'ConfigMap/default/a',
    bodyBytes: 0,
  });
  const mutated: Record<string, string> = { labelSelector: 'a=b' };
  const events = (round: number): object[] => [
    base(),
    { ...base(), id: 2 + round, incarnation: 2 },
    { ...base(), query: { resourceVersion: '0' } },
    { ...base(), query: { resourceVersion: '1' } },
    { ...base(), query: { 'a"b': 'é\n😀', '\\': '\ud800' } },
    // Recorded, changed, recorded again (see below): the second line has the new value.
    { ...base(), query: mutated },
    { ...base(), query: mutated },
    { ...base(), resource: { group: '', version: 'v1', resource: 'configmaps' } },
    { ...base(), resource: { ...resource(), subresource: 'status' } },
    { ...base(), key: undefined },
    (({ key: _key, ...rest }) => rest)(base()),
    { ...base(), contentType: 'application/json' },
    { ...base(), method: 'PUT', verb: 'update', bodyBytes: 20, body: { kind: 'ConfigMap', data: { a: 'b' } }, contentType: 'application/json' },
    { ...base(), extra: 'kept' },
    { id: 1, type: 'request', incarnation: 1, method: 'GET', path, query: {}, verb: 'get', bodyBytes: 0 },
    { ...base(), query: { nested: { a: 1 } } },
    { ...base(), query: ['x'] },
    { ...base(), resource: new Date(0) },
    { ...base(), query: { n: Number.NaN, u: undefined, b: true, z: null } },
    { ...base(), id: Number.NaN },
    { ...base(), incarnation: 1.5, id: -0 },
    { ...base(), path: '/api/v1/namespaces/"q"/configmaps/é\\😀' },
    { ...base(), path: `/api/v1/namespaces/default/configmaps/${'x'.repeat(400_000)}` },
    { ...base(), method: 'GET', verb: 'watch', query: { watch: 'true', resourceVersion: String(round) }, path: '/api/v1/configmaps' },
  ];
  const { fast, slow } = await writeFastAndPlain(t, (w) => {
    mutated.labelSelector = 'a=b';
    for (let round = 0; round < 3; round++) {
      for (const e of events(round)) {
        w.append(e as Unstamped<RequestEvent>);
        if ((e as { query?: unknown }).query === mutated) mutated.labelSelector += '+';
      }
    }
  });
  t.is(fast.length, 1 + 3 * events(0).length);
  for (let i = 0; i < fast.length; i++) t.is(fast[i], slow[i], `line ${i}`);
});

test('answers of other shapes than the proxy makes are written as JSON.stringify writes them', async (t) => {
  const text = JSON.stringify({ kind: 'ConfigMap', metadata: { name: 'a' }, data: { a: '"é😀' } });
  const events = [
    { type: 'response', id: 3, status: 200, object: undefined, durationMs: 2 },
    { type: 'response', id: 3, status: 200, object: undefined, durationMs: 2.5 },
    { type: 'response', id: -0, status: 404, object: undefined, durationMs: Number.NaN },
    { type: 'response', id: 3, status: 200, durationMs: 2, object: undefined },
    { id: 3, type: 'response', status: 200, object: undefined, durationMs: 2 },
    { type: 'response', id: 3, status: 200, object: undefined, durationMs: 2, extra: 'kept' },
    { type: 'response', id: '3', status: 200, object: undefined, durationMs: 2 },
  ];
  const { fast, slow } = await writeFastAndPlain(t, (w) => {
    for (let round = 0; round < 2; round++) for (const e of events) w.appendAnswer(e as Unstamped<ResponseEvent>, text);
  });
  t.is(fast.length, 1 + 2 * events.length);
  for (let i = 0; i < fast.length; i++) t.is(fast[i], slow[i], `line ${i}`);
});

test('answers repeated and interleaved are written as the plain path writes them (Secrets hashed every time)', async (t) => {
  const answer = (name: string) => JSON.stringify({ kind: 'ConfigMap', metadata: { name }, data: { a: 'é' } });
  const secret = JSON.stringify({ kind: 'Secret', metadata: { name: 's' }, data: { password: 'aHVudGVyMg==' } });
  const texts = [
    answer('a'),
    answer('a'),
    secret,
    secret,
    answer('a'),
    '{"kind":"ConfigMap", "x":1}',
    '{"kind":"ConfigMap", "x":1}',
    answer('b'),
    answer('a') + '\n',
  ];
  const { fast, slow } = await writeFastAndPlain(t, (w) => {
    for (const text of texts) w.appendAnswer({ type: 'response', id: 1, status: 200, object: undefined, durationMs: 1 }, text);
  });
  t.is(fast.length, 1 + texts.length);
  for (let i = 0; i < fast.length; i++) t.is(fast[i], slow[i], `line ${i}`);
  for (const i of [3, 4]) t.false(fast[i]!.includes('aHVudGVyMg=='));
});

test('the trace file has every line in order once closed; events are in memory only when asked for', async (t) => {
  const dir = tempDir(t);
  const w = new TraceWriter(join(dir, 'c.jsonl'), 'controller', new TraceSequence());
  // More than one batch's worth, written at once and across timed flushes.
  const big = 'x'.repeat(3000);
  for (let id = 1; id <= 200; id++) w.append({ type: 'stream-open', id });
  await new Promise((r) => setTimeout(r, 50));
  for (let id = 201; id <= 400; id++) w.append({ type: 'stream-close', id, reason: big });
  t.throws(() => w.events, { message: /keepEvents/ });
  await w.close();
  w.append({ type: 'stream-open', id: 999 });
  const events = await readTraceAll(w.file);
  t.deepEqual(
    events.map((e) => e.seq),
    Array.from({ length: 401 }, (_, i) => i),
  );
});

test('isGeneratedName: only prefix + 5 characters of the API server alphabet count as generated', async (t) => {
  const { isGeneratedName } = await import('../../src/model/generated-names.js');
  t.true(isGeneratedName('web-7xk2p', 'web-'));
  // kube-controller-manager names StatefulSet pods itself and also sends generateName `<set>-`.
  t.false(isGeneratedName('dc1-1', 'dc1-'));
  t.false(isGeneratedName('web-abcde', 'web-'), 'vowels are not in the alphabet');
  t.false(isGeneratedName('web-7xk2p2', 'web-'));
  t.false(isGeneratedName('web-7xk2p', undefined));
  const long = 'p'.repeat(70);
  t.true(isGeneratedName(`${long.slice(0, 58)}bcdfg`, long), 'a long prefix is cut to 58 characters');
});
