import test from 'ava';
import { rewriteAccept, upstreamRequestHeaders } from '../../proxy/headers.js';
import { LineSplitter } from '../../proxy/watch-relay.js';
import { WatchLines, type LineCursor } from '../../proxy/watch-lines.js';
import { WriteOccurrenceCounter } from '../../src/model/controller-write.js';
import { TriggerEvaluator } from '../../src/model/trigger-eval.js';
import { DeliveryGate } from '../../proxy/gate.js';

test('Accept loses protobuf and CBOR entries only', (t) => {
  t.is(rewriteAccept('application/vnd.kubernetes.protobuf, application/json'), 'application/json');
  t.is(
    rewriteAccept('application/vnd.kubernetes.protobuf;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1;g=meta.k8s.io,application/json'),
    'application/json;as=Table;v=v1;g=meta.k8s.io, application/json',
  );
  t.is(rewriteAccept('application/vnd.kubernetes.protobuf'), 'application/json');
  t.is(rewriteAccept('application/cbor;stream=watch'), 'application/json');
  t.is(rewriteAccept('application/yaml, */*'), 'application/yaml, */*');
  t.is(rewriteAccept(undefined), undefined);
});

test('hop-by-hop headers are dropped, the controller token never goes upstream: the proxy token replaces it', (t) => {
  const h = upstreamRequestHeaders(
    {
      connection: 'keep-alive, x-private',
      'keep-alive': 'timeout=5',
      'x-private': '1',
      'transfer-encoding': 'chunked',
      authorization: 'Bearer controller-token',
      host: 'proxy',
      'x-end': 'kept',
    },
    { token: 'proxy-token' },
  );
  t.deepEqual(h, { authorization: 'Bearer proxy-token', 'x-end': 'kept' });
  t.deepEqual(upstreamRequestHeaders({ authorization: 'Bearer controller-token' }, {}), {}, 'no upstream token: no Authorization at all');
});

test('LineSplitter reassembles lines across chunks', (t) => {
  const s = new LineSplitter();
  t.deepEqual(s.push(Buffer.from('ab')).map(String), []);
  t.deepEqual(s.push(Buffer.from('c\nde\nf')).map(String), ['abc\n', 'de\n']);
  t.deepEqual(s.push(Buffer.from('\n\n')).map(String), ['f\n', '\n']);
  t.is(s.rest(), undefined);
  s.push(Buffer.from('tail'));
  t.is(String(s.rest()), 'tail');
});

test('LineSplitter says when its lines are exactly the chunk, which a one-line chunk is itself', (t) => {
  const s = new LineSplitter();
  const one = Buffer.from('{"a":1}\n');
  const [line] = s.push(one);
  t.is(line, one, 'the chunk itself, not a copy or a view');
  t.true(s.wholeLines);
  t.deepEqual(s.push(Buffer.from('a\nb\n')).map(String), ['a\n', 'b\n']);
  t.true(s.wholeLines);
  s.push(Buffer.from('c\nd'));
  t.false(s.wholeLines, 'bytes left over after the last line');
  t.deepEqual(s.push(Buffer.from('\ne\n')).map(String), ['d\n', 'e\n']);
  t.false(s.wholeLines, 'the first line began in the chunk before');
  t.true(s.push(Buffer.from('f\n')).length === 1 && s.wholeLines);
});

test('streams that receive the same lines share one decoding of each, however far behind; any line decodes as it is', (t) => {
  const line = (name: string, rv: number) =>
    Buffer.from(
      JSON.stringify({
        type: 'MODIFIED',
        object: { kind: 'ConfigMap', apiVersion: 'v1', metadata: { name, namespace: 'default', resourceVersion: String(rv) } },
      }) + '\n',
    );
  const lines = new WatchLines();
  const decodeWatchLine = (raw: Buffer, kind: string | undefined, cursor?: LineCursor) => lines.decode(raw, kind, cursor);
  const fast: LineCursor = { n: 0 };
  const slow: LineCursor = { n: 0 };
  const other: LineCursor = { n: 0 };
  // 600 lines: more than the recent lines the streams find by their cursors; another stream's lines interleave.
  const first = [];
  for (let i = 0; i < 600; i++) {
    first.push(decodeWatchLine(line('units-a', i), undefined, fast));
    if (i % 3 === 0) t.is(decodeWatchLine(line('units-b', i), undefined, other).resourceVersion, String(i));
  }
  for (let i = 0; i < 600; i++) {
    // Another socket's bytes: equal, not the same buffer.
    const e = decodeWatchLine(line('units-a', i), undefined, slow);
    t.is(e.key, 'ConfigMap/default/units-a');
    t.is(e.resourceVersion, String(i));
    t.is(e.object, first[i]!.object, `line ${i}: the same decoding`);
  }
  // A stream that skips ahead (its next line is not the one after its last) and one without a cursor.
  const skipping: LineCursor = { n: 0 };
  t.is(decodeWatchLine(line('units-a', 10), undefined, skipping).object, first[10]!.object);
  t.is(decodeWatchLine(line('units-a', 599), undefined, skipping).object, first[599]!.object);
  t.is(decodeWatchLine(line('units-a', 598), undefined).object, first[598]!.object);
  t.is(decodeWatchLine(line('units-a', 600), undefined, skipping).resourceVersion, '600');
  // Not an event: forwarded as it is, without one.
  t.is(decodeWatchLine(Buffer.from('not json\n'), undefined, slow).type, undefined);
});

test('the recent lines hold at most 1 MiB of copies: large objects push the oldest out, and still decode as they are', (t) => {
  const line = (i: number) =>
    Buffer.from(
      JSON.stringify({
        type: 'MODIFIED',
        object: {
          kind: 'ConfigMap',
          apiVersion: 'v1',
          metadata: { name: 'units-big', namespace: 'default', resourceVersion: String(i) },
          data: { a: 'x'.repeat(40_000) },
        },
      }) + '\n',
    );
  const lines = new WatchLines();
  const decodeWatchLine = (raw: Buffer, kind: string | undefined, cursor?: LineCursor) => lines.decode(raw, kind, cursor);
  const fast: LineCursor = { n: 0 };
  const slow: LineCursor = { n: 0 };
  const first = [];
  for (let i = 0; i < 100; i++) first.push(decodeWatchLine(line(i), undefined, fast));
  const held = lines.held();
  t.true(held.bytes <= 1024 * 1024, `${held.bytes} bytes`);
  t.true(held.lines <= 26 && held.lines >= 20, `${held.lines} lines of 40 KB`);
  for (let i = 0; i < 100; i++) {
    const e = decodeWatchLine(line(i), undefined, slow);
    t.is(e.resourceVersion, String(i));
    t.deepEqual(e.object, first[i]!.object);
  }
  t.true(lines.held().bytes <= 1024 * 1024);
});

test('write triggers count per verb, key and subresource and fire once on the n-th (as the proxy feeds them)', (t) => {
  const counter = new WriteOccurrenceCounter();
  const main = new TriggerEvaluator({ write: { verb: 'patch', key: 'ConfigMap/default/a', occurrence: 2 } });
  const status = new TriggerEvaluator({ write: { verb: 'patch', key: 'ConfigMap/default/a', subresource: 'status', occurrence: 1 } });
  const record = (w: { verb: 'patch' | 'update'; key: string; subresource?: string }) => {
    const n = counter.record(w);
    return [main.write(w, n) ? 'main' : '', status.write(w, n) ? 'status' : ''].filter(Boolean);
  };
  t.deepEqual(record({ verb: 'patch', key: 'ConfigMap/default/a' }), []);
  t.deepEqual(record({ verb: 'update', key: 'ConfigMap/default/a' }), []);
  t.deepEqual(record({ verb: 'patch', key: 'ConfigMap/default/b' }), []);
  t.deepEqual(record({ verb: 'patch', key: 'ConfigMap/default/a' }), ['main']);
  t.deepEqual(record({ verb: 'patch', key: 'ConfigMap/default/a' }), [], 'fires once');
  t.deepEqual(record({ verb: 'patch', key: 'ConfigMap/default/a', subresource: 'status' }), ['status']);
  t.is(counter.count({ verb: 'patch', key: 'ConfigMap/default/a' }), 3);
});

test('a held gate queues work in order; release runs it, drop forgets it', (t) => {
  const g = new DeliveryGate();
  const ran: number[] = [];
  g.pass(() => ran.push(1));
  g.hold();
  g.pass(() => ran.push(2));
  g.pass(() => ran.push(3));
  t.deepEqual(ran, [1]);
  g.release();
  t.deepEqual(ran, [1, 2, 3]);
  g.hold();
  g.pass(() => ran.push(4));
  g.drop();
  g.release();
  t.deepEqual(ran, [1, 2, 3]);
});
