import test from 'ava';
import { analyzeRun, type RunAnalysis, type WriteRecord } from '../../planner/index.js';
import type { TraceEvent } from '../../src/model/trace.js';
import { TraceBuilder } from './_trace-builder.js';
import { DB, STS } from './_helpers.js';

const analyze = (events: TraceEvent[], quietMs = 1000): RunAnalysis => analyzeRun(events, { quietMs, stateHashes: false });

/** The keys of the deliveries a write may react to, in delivery order. */
function causes(run: RunAnalysis, w: WriteRecord): string[] {
  const out: string[] = [];
  for (const d of w.causeExtra) out.push(`${run.deliveries[d]!.rawKey}@${d}`);
  for (let d = w.causeFrom; d < w.causeTo; d++) out.push(`${run.deliveries[d]!.rawKey}@${d}`);
  return out;
}

function writeTo(run: RunAnalysis, key: string, nth = 1): WriteRecord {
  const w = run.writes.filter((x) => x.rawKey === key)[nth - 1];
  if (!w) throw new Error(`no write ${nth} of ${key}`);
  return w;
}

test('serialized delivery: a write reacts to the delivery that opened its episode (plus related objects)', (t) => {
  const other = 'ConfigMap/default/other';
  const run = analyze(
    new TraceBuilder()
      .external('ADDED', other, { deliver: true })
      .episode()
      .external('ADDED', DB, { deliver: true })
      .episode()
      .write('create', STS, { owner: DB }).events,
  );
  t.is(run.causality, 'serialized-episodes');
  t.deepEqual(causes(run, writeTo(run, STS)), [`${DB}@1`]);
});

test('without episodes: a write reacts to anything since the end of the burst before the previous one', (t) => {
  const a = 'ConfigMap/default/a';
  const b = 'ConfigMap/default/b';
  const c = 'ConfigMap/default/c';
  const run = analyze(
    new TraceBuilder()
      .external('ADDED', a, { deliver: true })
      .write('create', 'Secret/default/s1') // burst 1
      .wait(2000)
      .external('ADDED', b, { deliver: true })
      .write('create', 'Secret/default/s2') // burst 2
      .wait(2000)
      .external('ADDED', c, { deliver: true })
      .write('create', 'Secret/default/s3') // burst 3: reacts to b (previous burst) or c, not a
      .write('create', 'Secret/default/s4').events,
  );
  t.is(run.causality, 'quiet-gap-bursts');
  t.deepEqual(causes(run, writeTo(run, 'Secret/default/s1')), [`${a}@0`]);
  t.deepEqual(causes(run, writeTo(run, 'Secret/default/s2')), [`${a}@0`, `${b}@1`]);
  t.deepEqual(causes(run, writeTo(run, 'Secret/default/s3')), [`${b}@1`, `${c}@2`]);
  t.deepEqual(causes(run, writeTo(run, 'Secret/default/s4')), [`${b}@1`, `${c}@2`]);
});

test('several workers: interleaved reconciles of two objects keep every event of the burst as a cause of each write', (t) => {
  const db2 = 'Database/default/db2';
  const sts2 = 'StatefulSet/default/db2';
  const run = analyze(
    new TraceBuilder()
      .external('ADDED', DB, { deliver: true })
      .external('ADDED', db2, { deliver: true })
      .write('create', sts2, { owner: db2 }) // worker 2 first
      .write('create', STS, { owner: DB })
      .write('patch', db2, { subresource: 'status', set: { 'status.ready': true } })
      .write('patch', DB, { subresource: 'status', set: { 'status.ready': true } }).events,
  );
  for (const key of [STS, sts2, DB, db2]) t.deepEqual(causes(run, writeTo(run, key)), [`${DB}@0`, `${db2}@1`], key);
});

test('related objects: the latest delivery of the owner, owned objects and siblings since the last write of the object', (t) => {
  const pod = 'Pod/default/db1-0';
  const sibling = 'Service/default/db1';
  const unrelated = 'ConfigMap/default/unrelated';
  const run = analyze(
    new TraceBuilder()
      .external('ADDED', DB, { deliver: true })
      .episode()
      .write('create', STS, { owner: DB, deliver: true })
      .write('create', sibling, { owner: DB, deliver: true })
      .episode()
      .external('ADDED', pod, { owner: STS, deliver: true })
      .episode()
      .external('MODIFIED', DB, { set: { 'spec.replicas': 2 }, deliver: true })
      .episode()
      .external('ADDED', unrelated, { deliver: true })
      .episode()
      // A requeued reconcile of the StatefulSet, in the unrelated object's episode.
      .write('patch', STS, { set: { 'spec.replicas': 2 } }).events,
  );
  // Window: the unrelated delivery; related since the STS create: its own echo, the Service (sibling), the pod (owned), the DB update (owner).
  t.deepEqual(causes(run, writeTo(run, STS, 2)), [`${STS}@1`, `${sibling}@2`, `${pod}@3`, `${DB}@4`, `${unrelated}@5`]);
});

test('related deliveries older than the last write of the object are not causes again', (t) => {
  const run = analyze(
    new TraceBuilder()
      .external('ADDED', DB, { deliver: true })
      .episode()
      .write('create', STS, { owner: DB })
      .episode()
      .external('ADDED', 'ConfigMap/default/x', { deliver: true })
      .episode()
      .write('patch', STS, { set: { 'spec.replicas': 2 } }).events,
  );
  t.deepEqual(causes(run, writeTo(run, STS, 2)), ['ConfigMap/default/x@1']);
});

test('a restarted controller reacts only to what it was shown since it started (its relist counts)', (t) => {
  const b = new TraceBuilder().external('ADDED', DB, { deliver: true }).write('create', STS, { owner: DB }).restart(2);
  const events = b.events;
  // The new process lists Databases: the proxy records the list and its answer.
  const last = events[events.length - 1]!;
  const db = (events.filter((e) => e.type === 'cluster-change' && e.key === DB).pop() as Extract<TraceEvent, { type: 'cluster-change' }>).object;
  events.push(
    {
      type: 'request',
      seq: last.seq + 1,
      ts: last.ts + 1,
      id: 77,
      incarnation: 2,
      method: 'GET',
      path: '/apis/example.com/v1/databases',
      query: {},
      verb: 'list',
      resource: { group: 'example.com', version: 'v1', resource: 'databases', kind: 'Database' },
    },
    {
      type: 'response',
      seq: last.seq + 2,
      ts: last.ts + 2,
      id: 77,
      status: 200,
      object: { kind: 'DatabaseList', apiVersion: 'v1', metadata: { resourceVersion: '999' }, items: [{ ...db, kind: undefined }] },
      durationMs: 1,
    },
  );
  const after = new TraceBuilder()
    .write('patch', STS, { incarnation: 2, set: { 'spec.x': 1 } })
    .events.filter((e) => e.type !== 'header' && e.type !== 'controller');
  // Re-stamp the second part after the first.
  let seq = last.seq + 3;
  for (const e of after) events.push({ ...e, seq: seq++, ts: last.ts + 3, ...(e.type === 'request' || e.type === 'response' ? { id: 78 } : {}) } as TraceEvent);
  const run = analyze(events);
  t.is(run.deliveries.length, 2);
  t.is(run.deliveries[1]!.source, 'read');
  t.is(run.deliveries[1]!.change, run.deliveries[0]!.change, 'the list showed the same state of the Database');
  const patch = run.writes.find((w) => w.verb === 'patch')!;
  t.deepEqual(causes(run, patch), [`${DB}@1`]);
});

test("a write's effect, conflicts and the changes that cancel each other are found whatever order the recorder and proxy interleave", (t) => {
  // The answer before the cluster change it caused (the recorder's watch lags the proxy).
  const events = new TraceBuilder()
    .write('create', STS)
    .write('patch', STS, { set: { 'spec.x': 1 } })
    .external('MODIFIED', STS, { set: { 'spec.x': 2 } }).events;
  const reordered: TraceEvent[] = [];
  for (let i = 0; i < events.length; i++) {
    const e = events[i]!;
    const next = events[i + 1];
    if (e.type === 'cluster-change' && next?.type === 'response') {
      reordered.push({ ...next, seq: e.seq }, { ...e, seq: next.seq });
      i++;
    } else reordered.push(e);
  }
  const run = analyze(reordered);
  const patch = run.writes.find((w) => w.verb === 'patch')!;
  t.is(patch.effect, 'effective');
  t.is(run.changes[patch.conflict]!.diff?.fields[0]?.after, 2);
  t.is(run.changes[patch.effectChange]!.cancelledBy, patch.conflict);
});
