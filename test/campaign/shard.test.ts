import test from 'ava';
import { formatShard, parseShard, partitionPlans, shardPlans, type PlanWeight } from '../../src/campaign/shard.js';
import { UserInputError } from '../../src/model/errors.js';
import type { TestPlan } from '../../src/model/plan.js';

function plan(workload: string, name: string, staleSeconds?: number): TestPlan {
  const fault =
    staleSeconds === undefined
      ? { type: 'crash-after-write' as const, after: { verb: 'create' as const, key: `ConfigMap/default/${name}`, occurrence: 1 } }
      : {
          type: 'stale-restart' as const,
          at: { key: `ConfigMap/default/${name}`, type: 'ADDED' as const, occurrence: 1 },
          viewAfter: { key: 'ConfigMap/default/x', type: 'ADDED' as const, occurrence: 1 },
          releaseAfterSeconds: staleSeconds,
        };
  return {
    apiVersion: 'kperturb.dev/v1',
    kind: 'TestPlan',
    metadata: { name },
    spec: { controller: 'c', workload, pattern: staleSeconds === undefined ? 'intermediate-state' : 'stale-state', description: name, faults: [fault] },
  } as TestPlan;
}

/** 45 plans over three workloads of different lengths, a third of them stale (5 s more each). */
const PLANS: TestPlan[] = [];
for (const [w, n] of [
  ['short', 20],
  ['medium', 15],
  ['long', 10],
] as const) {
  for (let i = 0; i < n; i++) PLANS.push(plan(w, `p-${String(i).padStart(3, '0')}`, i % 3 === 0 ? 5 : undefined));
}
const WORKLOAD_MS: Record<string, number> = { short: 1000, medium: 3000, long: 9000 };
const weight: PlanWeight = (p) =>
  WORKLOAD_MS[p.spec.workload]! + p.spec.faults.reduce((ms, f) => ms + (f.type === 'stale-restart' ? f.releaseAfterSeconds * 1000 : 0), 0);
const id = (p: TestPlan) => `${p.spec.workload}/${p.metadata.name}`;

/** A deterministic shuffle (the order plan files are found in differs between machines). */
function shuffled<T>(list: readonly T[], seed: number): T[] {
  const out = [...list];
  let s = seed;
  for (let i = out.length - 1; i > 0; i--) {
    s = (s * 1103515245 + 12345) % 2 ** 31;
    const j = s % (i + 1);
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  return out;
}

test('for N = 1..8 the shards partition the plans exactly: every plan in one shard, none twice, none lost', (t) => {
  for (let n = 1; n <= 8; n++) {
    const shares = Array.from({ length: n }, (_, i) => shardPlans(PLANS, { index: i, count: n }, weight));
    const all = shares.flat().map(id);
    t.is(all.length, PLANS.length, `N=${n}`);
    t.deepEqual([...all].sort(), PLANS.map(id).sort(), `N=${n}`);
    t.is(new Set(all).size, PLANS.length, `N=${n}: a plan in two shards`);
  }
});

test('the shares are the same whatever order the plan files are found in (every machine computes the same split)', (t) => {
  for (let n = 2; n <= 8; n++) {
    const reference = partitionPlans(PLANS, n, weight).map((s) => s.map(id).sort());
    for (const seed of [1, 7, 42]) {
      t.deepEqual(
        partitionPlans(shuffled(PLANS, seed), n, weight).map((s) => s.map(id).sort()),
        reference,
        `N=${n}, order ${seed}`,
      );
    }
  }
});

test('shares are balanced by expected time: no shard exceeds the mean by more than the longest plan', (t) => {
  const longest = Math.max(...PLANS.map(weight));
  const total = PLANS.reduce((ms, p) => ms + weight(p), 0);
  for (let n = 2; n <= 8; n++) {
    const loads = partitionPlans(PLANS, n, weight).map((s) => s.reduce((ms, p) => ms + weight(p), 0));
    t.true(Math.max(...loads) <= total / n + longest, `N=${n}: ${loads.join(', ')}`);
  }
  // By count alone, a split would put the 10 long plans in few shards: here every shard of 4 gets some.
  for (const share of partitionPlans(PLANS, 4, weight)) t.true(share.some((p) => p.spec.workload === 'long'));
});

test('a share keeps the plans in the order given', (t) => {
  const share = shardPlans(PLANS, { index: 1, count: 3 }, weight);
  const positions = share.map((p) => PLANS.indexOf(p));
  t.deepEqual(
    positions,
    [...positions].sort((a, b) => a - b),
  );
});

test('--shard is I/N with 0 <= I < N, 0-based as a Job completion index', (t) => {
  t.deepEqual(parseShard('0/4'), { index: 0, count: 4 });
  t.deepEqual(parseShard('3/4'), { index: 3, count: 4 });
  t.is(formatShard({ index: 2, count: 5 }), '2/5');
  for (const bad of ['4/4', '1/0', '-1/3', 'a/b', '1', '1/2/3', '', '0/1001']) {
    const err = t.throws(() => parseShard(bad), { instanceOf: UserInputError }, bad);
    t.regex(err!.message, /--shard: I\/N with 0 <= I < N/);
  }
});
