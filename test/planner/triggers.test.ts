import test from 'ava';
import { analyzeRun, planTests, wantsMoreReferenceRuns } from '../../planner/index.js';
import { Triggers } from '../../planner/triggers.js';
import { TriggerEvaluator } from '../../src/model/trigger-eval.js';
import { serializePlan } from '../../src/model/plan.js';
import { validatePlan } from '../../src/io/plan-file.js';
import { parse } from 'yaml';
import type { KubeObject } from '../../src/model/object-key.js';
import type { ClusterChangeEvent, TraceEvent } from '../../src/model/trace.js';
import { TraceBuilder } from './_trace-builder.js';
import { DB, faultsOf } from './_helpers.js';

/** A small deterministic PRNG (mulberry32). */
function prng(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Random churn on two objects: leaf flips, whole maps appearing and vanishing, lists growing, deletions and re-creations. */
function churn(seed: number, steps: number): TraceEvent[] {
  const rnd = prng(seed);
  const pick = <T>(xs: T[]): T => xs[Math.floor(rnd() * xs.length)]!;
  const keys = [DB, 'Database/default/db2'];
  const exists = new Set<string>();
  const b = new TraceBuilder();
  for (let i = 0; i < steps; i++) {
    const key = pick(keys);
    if (!exists.has(key)) {
      b.external('ADDED', key, { set: { 'spec.a': pick([1, 2]) } });
      exists.add(key);
      continue;
    }
    const r = rnd();
    if (r < 0.06) {
      b.external('DELETED', key);
      exists.delete(key);
    } else if (r < 0.12) {
      b.external('MODIFIED', key, { set: { 'metadata.resourceVersionOnly': undefined } }); // nothing visible changes
    } else {
      const set: Record<string, unknown> = {};
      for (let n = 1 + Math.floor(rnd() * 3); n > 0; n--) {
        const field = pick(['spec.a', 'spec.b', 'spec.m', 'status.phase', 'status.list']);
        set[field] =
          field === 'spec.m'
            ? pick([undefined, { x: 1 }, { x: 1, y: 2 }, { x: 2 }, 'scalar'])
            : field === 'status.list'
              ? pick([[1], [1, 2], [2, 1], undefined])
              : field === 'status.phase'
                ? pick(['Pending', 'Running', 'Failed'])
                : pick([1, 2, 3]);
      }
      b.external('MODIFIED', key, { set });
    }
  }
  return b.events;
}

/**
 * Feeds the trace's cluster changes to a TriggerEvaluator as the proxy does (from the controller's
 * start on, with the recorder's previous state of the object); returns the index of the change it
 * fires at, among all the trace's changes.
 */
function firesAt(events: TraceEvent[], trigger: ConstructorParameters<typeof TriggerEvaluator>[0]): number {
  const evaluator = new TriggerEvaluator(trigger);
  const state = new Map<string, KubeObject>();
  let started = false;
  let index = -1;
  for (const e of events) {
    if (e.type === 'controller') started = true;
    if (e.type !== 'cluster-change') continue;
    index++;
    const c = e as ClusterChangeEvent;
    const prev = c.eventType === 'ADDED' ? undefined : state.get(c.key);
    const next = c.eventType === 'DELETED' ? undefined : c.object;
    if (next) state.set(c.key, next);
    else state.delete(c.key);
    if (started && evaluator.change(c.key, prev, next)) return index;
  }
  return -1;
}

for (const [seed, maxFields, other] of [
  [1, 5, undefined],
  [2, 1, undefined],
  [3, 2, undefined],
  [4, 5, 5], // another run's churn makes most fields unstable: whole maps are named by their stable members
] as const) {
  test(`every change trigger fires, by change-match.ts's own matcher, exactly at the change it was planned for (seed ${seed}, ${maxFields} field(s)${other ? ', unstable fields' : ''})`, (t) => {
    const events = churn(seed, 160);
    const run = analyzeRun(events, { quietMs: 1000, stateHashes: false });
    const others = other ? [analyzeRun(churn(other, 160), { quietMs: 1000, stateHashes: false })] : [];
    const triggers = new Triggers(run, others, { maxFields, masks: [] });
    let checked = 0;
    for (const c of run.changes) {
      const trigger = triggers.change(c.index);
      if (!c.diff) {
        t.is(trigger, undefined);
        continue;
      }
      t.is(firesAt(events, { change: trigger! }), c.index, JSON.stringify(trigger));
      checked++;
    }
    t.true(checked > 100);
  });
}

test('fields whose values differ between reference runs do not identify a change; the rest still do', (t) => {
  const run = (token: string) =>
    new TraceBuilder()
      .external('ADDED', DB, { set: { 'status.token': 'x' } })
      .external('MODIFIED', DB, { set: { 'status.phase': 'Ready', 'status.token': token } }).events;
  const a = analyzeRun(run('aaa'), { quietMs: 1000, stateHashes: false });
  const b = analyzeRun(run('bbb'), { quietMs: 1000, stateHashes: false });
  const triggers = new Triggers(b, [a], { maxFields: 5, masks: [] });
  t.deepEqual(triggers.nondeterministicPaths(DB), ['status\u0000token']);
  t.deepEqual(triggers.change(1), {
    key: DB,
    change: 'update',
    fields: [{ path: 'status.phase', before: undefined, after: 'Ready' }].map(({ path, after }) => ({ path, after })),
    occurrence: 1,
  });
  t.true(triggers.deterministicChange(1));
  // With only the token changing, nothing stable is left: the trigger is "the 1st update", still deterministic here.
  const onlyToken = (token: string) =>
    new TraceBuilder().external('ADDED', DB, { set: { 'status.token': 'x' } }).external('MODIFIED', DB, { set: { 'status.token': token } }).events;
  const t2 = new Triggers(
    analyzeRun(onlyToken('b'), { quietMs: 1000, stateHashes: false }),
    [analyzeRun(onlyToken('a'), { quietMs: 1000, stateHashes: false })],
    { maxFields: 5, masks: [] },
  );
  t.deepEqual(t2.change(1), { key: DB, change: 'update', occurrence: 1 });
});

test('a map set whole with one unstable member: its other members still name the change, and a run setting it member by member agrees', (t) => {
  const whole = (token: string) =>
    new TraceBuilder().external('ADDED', DB, { set: { 'spec.a': 1 } }).external('MODIFIED', DB, { set: { 'spec.m': { x: 1, token } } }).events;
  const a = analyzeRun(whole('aaa'), { quietMs: 1000, stateHashes: false });
  const bEvents = whole('bbb');
  const b = analyzeRun(bEvents, { quietMs: 1000, stateHashes: false });
  const triggers = new Triggers(b, [a], { maxFields: 5, masks: [] });
  t.deepEqual(triggers.nondeterministicPaths(DB), ['spec\u0000m\u0000token']);
  const trigger = triggers.change(1)!;
  t.deepEqual(trigger, { key: DB, change: 'update', fields: [{ path: 'spec.m.x', after: 1 }], occurrence: 1 });
  t.is(firesAt(bEvents, { change: trigger }), 1);
  t.true(triggers.deterministicChange(1));
  // The same values, member by member in one run and whole in the other: nothing is unstable.
  const byMember = new TraceBuilder()
    .external('ADDED', DB, { set: { 'spec.a': 1 } })
    .external('MODIFIED', DB, { set: { 'spec.m': { x: 1 } } })
    .external('MODIFIED', DB, { set: { 'spec.m.token': 'aaa' } }).events;
  const twoSteps = new Triggers(
    analyzeRun(whole('aaa'), { quietMs: 1000, stateHashes: false }),
    [analyzeRun(byMember, { quietMs: 1000, stateHashes: false })],
    {
      maxFields: 5,
      masks: [],
    },
  );
  t.deepEqual(twoSteps.nondeterministicPaths(DB), []);
});

test('user masks: masked fields never identify a change; a whole-masked object never triggers', (t) => {
  const events = new TraceBuilder().external('ADDED', DB).external('MODIFIED', DB, { set: { 'status.phase': 'Ready', 'status.generatedAt': 'now' } }).events;
  const run = analyzeRun(events, { quietMs: 1000, stateHashes: false });
  const masked = new Triggers(run, [], { maxFields: 5, masks: [{ key: 'Database/default/*', paths: ['status.generatedAt'] }] });
  t.deepEqual(masked.change(1)?.fields, [{ path: 'status.phase', after: 'Ready' }]);
  const whole = new Triggers(run, [], { maxFields: 5, masks: [{ key: 'Database/*', paths: [] }] });
  t.false(whole.deterministicChange(1));
});

test('objects with generated names are named by prefix and ordinal, so plans match in a new run', (t) => {
  const run = (suffixes: [string, string]) =>
    new TraceBuilder()
      .external('ADDED', DB, { deliver: true })
      .episode()
      .write('create', `Pod/default/db1-${suffixes[0]}`, { unnamed: true, generateName: 'db1-', owner: DB, deliver: true })
      .write('create', `Pod/default/db1-${suffixes[1]}`, { unnamed: true, generateName: 'db1-', owner: DB, deliver: true })
      .write('patch', `Pod/default/db1-${suffixes[0]}`, { set: { 'metadata.labels.role': 'primary' } })
      .write('patch', DB, { subresource: 'status', set: { 'status.primary': 'db1-0' } })
      .episode()
      .external('DELETED', `Pod/default/db1-${suffixes[1]}`, { deliver: true })
      .episode().events;
  const out = planTests({ controller: 'c', workload: 'w', references: [run(['bcdfg', 'hjklm']), run(['npqrs', 'tvwxz'])] });
  const crashKeys = faultsOf(out, 'intermediate-state').map((f) => (f.type === 'crash-after-write' ? f.after.key : ''));
  // The creates are named by the objects their answers return, and the patch of the first pod by
  // its folded key (the last write of the burst, the status patch, leaves no intermediate state).
  t.deepEqual(crashKeys, ['Pod/default/db1-*#1', 'Pod/default/db1-*#2', 'Pod/default/db1-*#1']);
  // Re-issuing the second pod's create (it was deleted since) would resurrect it.
  t.true(
    faultsOf(out, 'stale-state').some(
      (f) => f.type === 'stale-restart' && 'change' in f.at && f.at.change.key === 'Pod/default/db1-*#2' && f.at.change.change === 'delete',
    ),
  );
  t.false(/abcde|fghij|klmno|pqrst/.test(JSON.stringify(out.plans)));
  // Folded keys are valid object keys in a plan file.
  for (const p of out.plans) t.deepEqual(validatePlan(parse(serializePlan(p)), 'plan.yaml'), p);
});

test('changes before the controller started (setup, existing objects) are neither named nor counted, as the proxy arms triggers only then', (t) => {
  const cm = 'ConfigMap/default/settings';
  const events = new TraceBuilder({ setup: { [cm]: { 'data.mode': 'a' } } })
    .external('MODIFIED', cm, { set: { 'data.mode': 'b' }, deliver: true })
    .external('DELETED', cm, { deliver: true })
    .external('ADDED', cm, { deliver: true }).events;
  const run = analyzeRun(events, { quietMs: 1000, stateHashes: false });
  const triggers = new Triggers(run, [], { maxFields: 5, masks: [] });
  t.true(run.changes[0]!.beforeStart);
  t.is(triggers.change(0), undefined);
  t.deepEqual(triggers.change(1), { key: cm, change: 'update', fields: [{ path: 'data.mode', before: 'a', after: 'b' }], occurrence: 1 });
  // The re-creation is the 1st creation the proxy sees.
  t.deepEqual(triggers.change(3), { key: cm, change: 'create', occurrence: 1 });
  // And it fires there, fed only what the proxy sees (changes after the controller started).
  t.is(firesAt(events, { change: triggers.change(3)! }), 3);
});

test('a trigger that fires in a majority of the reference runs is deterministic; with two runs, both must agree', (t) => {
  // One run in three took another path: the database never became Ready in it.
  const ready = () =>
    analyzeRun(
      new TraceBuilder().external('ADDED', DB, { set: { 'status.phase': 'Pending' } }).external('MODIFIED', DB, { set: { 'status.phase': 'Ready' } }).events,
      {
        quietMs: 1000,
        stateHashes: false,
      },
    );
  const stuck = analyzeRun(new TraceBuilder().external('ADDED', DB, { set: { 'status.phase': 'Pending' } }).events, { quietMs: 1000, stateHashes: false });
  const main = ready();
  t.false(new Triggers(main, [stuck], { maxFields: 5, masks: [] }).deterministicChange(1));
  t.true(new Triggers(main, [stuck, ready()], { maxFields: 5, masks: [] }).deterministicChange(1));
  t.false(new Triggers(main, [stuck, stuck, ready()], { maxFields: 5, masks: [] }).deterministicChange(1), 'two of four is no majority');
  // A field's sequence of values: the same majority decides whether it names a change.
  const token = (v: string) =>
    analyzeRun(
      new TraceBuilder()
        .external('ADDED', DB, { set: { 'status.token': 'x' } })
        .external('MODIFIED', DB, { set: { 'status.phase': 'Ready', 'status.token': v } }).events,
      { quietMs: 1000, stateHashes: false },
    );
  t.deepEqual(new Triggers(token('a'), [token('b')], { maxFields: 5, masks: [] }).nondeterministicPaths(DB), ['status\u0000token']);
  t.deepEqual(new Triggers(token('a'), [token('b'), token('a')], { maxFields: 5, masks: [] }).nondeterministicPaths(DB), []);
});

test('learn wants another reference run when the deterministic stage kept fewer than half of what reached it, over all patterns', (t) => {
  const pattern = (before: number, after: number) => ({
    stages: [
      { stage: 'effective-writes', plans: before },
      { stage: 'deterministic', plans: after },
      { stage: 'deduplicated', plans: after },
    ],
  });
  t.true(wantsMoreReferenceRuns([pattern(6, 0), pattern(8, 0), pattern(12, 0)]), 'snapshot-copy-fixed: every candidate dropped');
  t.true(wantsMoreReferenceRuns([pattern(10, 2), pattern(4, 2)]));
  t.false(wantsMoreReferenceRuns([pattern(10, 5), pattern(4, 2)]), 'half kept');
  t.false(wantsMoreReferenceRuns([pattern(0, 0)]), 'nothing reached the stage: more runs would not help');
  t.false(
    wantsMoreReferenceRuns([
      {
        stages: [
          { stage: 'baseline', plans: 3 },
          { stage: 'expressible', plans: 3 },
        ],
      },
    ]),
    'unpruned',
  );
});
