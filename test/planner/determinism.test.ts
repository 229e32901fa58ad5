import test from 'ava';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse } from 'yaml';
import { planTests, planTestsStreaming, type PlannerOutput } from '../../planner/index.js';
import { serializePlan } from '../../src/model/plan.js';
import { validatePlan } from '../../src/io/plan-file.js';
import { readTrace } from '../../src/io/trace-io.js';
import { mergeTracesBySeq } from '../../src/model/trace-merge.js';
import type { TraceEvent } from '../../src/model/trace.js';
import { TraceBuilder } from './_trace-builder.js';
import { DB, STS } from './_helpers.js';

const TS = '2024-01-01T00:00:00Z';

/** A run with plans of all three patterns. */
function richRun(): TraceEvent[] {
  return new TraceBuilder()
    .external('ADDED', DB, { set: { 'spec.replicas': 1 }, deliver: true })
    .episode()
    .write('create', STS, { owner: DB, set: { 'spec.replicas': 1 }, deliver: true })
    .write('patch', DB, { subresource: 'status', set: { 'status.phase': 'Creating' }, deliver: true })
    .write('patch', DB, { subresource: 'status', set: { 'status.phase': 'Ready' }, deliver: true })
    .episode()
    .external('MODIFIED', DB, { set: { 'spec.replicas': 3 }, deliver: true })
    .episode()
    .write('patch', STS, { set: { 'spec.replicas': 3 }, deliver: true })
    .episode()
    .external('MODIFIED', DB, { set: { 'metadata.deletionTimestamp': TS }, deliver: true })
    .episode()
    .write('delete', STS, { deliver: true })
    .episode()
    .external('DELETED', DB, { deliver: true })
    .episode()
    .external('ADDED', DB, { set: { 'spec.replicas': 1 }, deliver: true })
    .episode()
    .write('create', STS, { owner: DB, set: { 'spec.replicas': 1 }, deliver: true })
    .episode().events;
}

function text(out: PlannerOutput): string {
  return out.plans.map(serializePlan).join('---\n') + JSON.stringify(out.stats);
}

test('the rich trace yields plans of all four patterns, each a valid plan file', (t) => {
  const out = planTests({ controller: 'c', workload: 'w', references: [richRun(), richRun()] });
  t.deepEqual([...new Set(out.plans.map((p) => p.spec.pattern))], ['intermediate-state', 'stale-state', 'unobserved-state', 'error-path']);
  for (const p of out.plans) {
    t.deepEqual(validatePlan(parse(serializePlan(p)), `${p.metadata.name}.yaml`), p);
    t.false(p.spec.description.includes('\n'));
  }
  t.deepEqual(new Set(out.plans.map((p) => p.metadata.name)).size, out.plans.length);
  // Every stage keeps at most what the one before it kept, and the last stage is what was planned.
  for (const s of out.stats) {
    const counts = s.stages.map((x) => x.plans);
    const releasable = s.pattern === 'unobserved-state' ? ['releasable'] : [];
    t.deepEqual(
      s.stages.map((x) => x.stage),
      ['baseline', 'causality', ...releasable, 'effective-writes', 'deterministic', 'deduplicated'],
    );
    t.true(
      counts.every((c, i) => i === 0 || c <= counts[i - 1]!),
      `${s.pattern}: ${counts.join(' ')}`,
    );
    t.is(counts[counts.length - 1], out.plans.filter((p) => p.spec.pattern === s.pattern).length);
  }
});

test('same traces in, byte-identical plans out, whatever the order of the events in an array', (t) => {
  const first = planTests({ controller: 'c', workload: 'w', references: [richRun(), richRun()] });
  const again = planTests({ controller: 'c', workload: 'w', references: [richRun(), richRun()] });
  t.is(text(again), text(first));
  const shuffled = [...richRun()].reverse();
  shuffled.push(shuffled.shift()!);
  t.is(text(planTests({ controller: 'c', workload: 'w', references: [richRun(), shuffled] })), text(first));
});

test('streaming: the controller and cluster traces read from files and merged give the same plans', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'kperturb-planner-'));
  try {
    const files = (run: TraceEvent[], n: number) => {
      const controller = run.filter((e) => (e.type === 'header' ? e.source === 'controller' : e.type !== 'cluster-change'));
      const cluster = run.filter((e) => (e.type === 'header' ? e.source === 'cluster' : e.type === 'cluster-change'));
      const c = join(dir, `controller-${n}.jsonl`);
      const k = join(dir, `cluster-${n}.jsonl`);
      writeFileSync(c, controller.map((e) => JSON.stringify(e)).join('\n') + '\n');
      writeFileSync(k, cluster.map((e) => JSON.stringify(e)).join('\n') + '\n');
      return mergeTracesBySeq([readTrace(c), readTrace(k)]);
    };
    const streamed = await planTestsStreaming({ controller: 'c', workload: 'w', references: [files(richRun(), 1), files(richRun(), 2)] });
    const loaded = planTests({ controller: 'c', workload: 'w', references: [richRun(), richRun()] });
    t.is(text(streamed), text(loaded));
    t.deepEqual(streamed.events, loaded.events);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('mergeTracesBySeq interleaves sorted streams by seq', async (t) => {
  async function* stream(seqs: number[]): AsyncGenerator<TraceEvent> {
    for (const seq of seqs) yield { type: 'workload-step', seq, ts: 0, index: seq, description: '', phase: 'start' };
  }
  const merged: number[] = [];
  for await (const e of mergeTracesBySeq([stream([0, 2, 3, 7]), stream([0, 1, 4, 5, 6])])) merged.push(e.seq);
  t.deepEqual(merged, [0, 0, 1, 2, 3, 4, 5, 6, 7]);
});

test('a stream out of seq order is rejected (it must be merged, not concatenated)', (t) => {
  const run = richRun();
  function* concatenated() {
    yield* run.filter((e) => e.type !== 'cluster-change');
    yield* run.filter((e) => e.type === 'cluster-change');
  }
  t.throws(() => planTests({ controller: 'c', workload: 'w', references: [concatenated()] }), { message: /seq order/ });
});
