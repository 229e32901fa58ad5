/**
 * Sharding a campaign over machines (`kperturb test --shard I/N`): N machines with the same config,
 * reference runs and plans each run one share, and `kperturb report` merges their results.
 *
 * The partition must come out the same on every machine whatever order the plan files are found in,
 * so it depends only on the plans themselves and on the reference runs every shard was shipped:
 * plans are taken longest first (their expected time: the workload's reference run plus what the
 * fault adds, e.g. a stale view held for `releaseAfterSeconds`), ties broken by workload and name,
 * and each goes to the shard with the least expected time so far (ties: the lowest index). That is
 * the classic longest-processing-time rule: no shard's expected time exceeds the mean by more than
 * the longest plan. Indices are 0-based, as a Kubernetes Indexed Job's JOB_COMPLETION_INDEX.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { UserInputError } from '../model/errors.js';
import { faultExtraMs, type TestPlan } from '../model/plan.js';
import type { CampaignLayout } from './layout.js';
import { RUN_FILES } from '../io/run-files.js';

export interface Shard {
  /** 0-based. */
  index: number;
  count: number;
}

/** At most this many shards: more machines than that would each get a plan or two. */
export const MAX_SHARDS = 1000;

/** Parses `I/N` (0 <= I < N). */
export function parseShard(text: string, option = '--shard'): Shard {
  const m = /^(\d+)\/(\d+)$/.exec(text.trim());
  const expected = `I/N with 0 <= I < N <= ${MAX_SHARDS}, e.g. 0/4 for the first of four (got ${JSON.stringify(text)})`;
  if (!m) throw new UserInputError(undefined, option, expected);
  const index = Number(m[1]);
  const count = Number(m[2]);
  if (count < 1 || count > MAX_SHARDS || index >= count) throw new UserInputError(undefined, option, expected);
  return { index, count };
}

export function formatShard(shard: Shard): string {
  return `${shard.index}/${shard.count}`;
}

/** A plan's expected duration in ms (any positive scale works: only the order and sums matter). */
export type PlanWeight = (plan: TestPlan) => number;

/** What a plan adds to its workload's run, in ms: each fault's expected cost, as its kind declares it (src/model/faults/). */
function planExtraMs(plan: TestPlan): number {
  let extra = 0;
  for (const f of plan.spec.faults) extra += faultExtraMs(f);
  return extra;
}

/**
 * Expected durations from the reference runs (the first one's `durationMs` in run.json, per
 * workload), plus what each fault adds. A workload without a readable reference run counts as 1 s.
 */
export function referenceWeights(layout: CampaignLayout): PlanWeight {
  const perWorkload = new Map<string, number>();
  const workloadMs = (workload: string): number => {
    let ms = perWorkload.get(workload);
    if (ms === undefined) {
      ms = 1000;
      const file = join(layout.referenceRun(workload, 1), RUN_FILES.record);
      if (existsSync(file)) {
        try {
          const d = (JSON.parse(readFileSync(file, 'utf8')) as { durationMs?: unknown }).durationMs;
          if (typeof d === 'number' && Number.isFinite(d) && d > 0) ms = d;
        } catch {
          // An unreadable run.json only makes the balance rougher; `test` itself reports it.
        }
      }
      perWorkload.set(workload, ms);
    }
    return ms;
  };
  return (plan) => workloadMs(plan.spec.workload) + planExtraMs(plan);
}

function planId(plan: TestPlan): string {
  return `${plan.spec.workload}\u0000${plan.metadata.name}`;
}

/**
 * Splits `plans` into `count` shares (the same on every machine for the same plans and weights) and
 * returns each share in the plans' given order. A plan listed twice (same workload and name) lands
 * in one share, as often as given.
 */
export function partitionPlans(plans: readonly TestPlan[], count: number, weight: PlanWeight): TestPlan[][] {
  const ids = [...new Set(plans.map(planId))];
  const w = new Map<string, number>();
  for (const p of plans) {
    const id = planId(p);
    w.set(id, Math.max(w.get(id) ?? 0, weight(p)));
  }
  ids.sort((a, b) => w.get(b)! - w.get(a)! || (a < b ? -1 : a > b ? 1 : 0));
  const load = new Array<number>(count).fill(0);
  const shardOf = new Map<string, number>();
  for (const id of ids) {
    let best = 0;
    for (let s = 1; s < count; s++) if (load[s]! < load[best]!) best = s;
    shardOf.set(id, best);
    load[best]! += w.get(id)!;
  }
  const shares: TestPlan[][] = Array.from({ length: count }, () => []);
  for (const p of plans) shares[shardOf.get(planId(p))!]!.push(p);
  return shares;
}

/** The plans of one shard. */
export function shardPlans(plans: readonly TestPlan[], shard: Shard, weight: PlanWeight): TestPlan[] {
  return partitionPlans(plans, shard.count, weight)[shard.index]!;
}
