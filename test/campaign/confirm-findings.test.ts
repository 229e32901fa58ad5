/**
 * Confirmation's re-runs (src/campaign/confirm-findings.ts) with a hand-built context: a finding's
 * plans are re-run K times each, its shortest reproducer first, until one fails again every time,
 * and no more; the finding's reproducer is then that plan (oracles/findings.ts).
 */
import test from 'ava';
import { confirmFindings, REPRODUCERS_TRIED, type ConfirmFindingsContext } from '../../src/campaign/confirm-findings.js';
import { Limiter } from '../../src/campaign/limiter.js';
import { findingSignature, groupFindings } from '../../oracles/findings.js';
import type { ControllerUnderTest } from '../../src/config/config.js';
import type { TestPlan } from '../../src/model/plan.js';
import type { PlanResult, Rerun } from '../../src/model/results.js';
import type { CampaignLayout } from '../../src/campaign/layout.js';
import { result } from '../oracles/_results.js';

const plan = (name: string) => ({ metadata: { name }, spec: { workload: 'recreate' } }) as unknown as TestPlan;

/** A context whose re-run of plan P fails again (the finding's signature) in the runs `fails[P]` names (1-based), passes otherwise. */
function context(results: PlanResult[], fails: Record<string, number[]>) {
  const rerunsOf: string[] = [];
  const ctx: ConfirmFindingsContext = {
    config: { name: 'op' } as ControllerUnderTest,
    layout: { rerun: (w: string, p: string, n: number) => `/reruns/${p}/${n}` } as unknown as CampaignLayout,
    plans: results.map((r) => plan(r.plan)),
    results: [...results],
    runs: 3,
    log: () => undefined,
    limiter: new Limiter(2),
    withPool: (_n, stage) => stage(),
    rerun: (p, runDir): Promise<Rerun> => {
      rerunsOf.push(p.metadata.name);
      const n = Number(runDir.split('/').at(-1));
      const r = results.find((x) => x.plan === p.metadata.name)!;
      return Promise.resolve(
        (fails[p.metadata.name] ?? []).includes(n) ? { runDir, verdict: 'bug', signature: findingSignature(r) } : { runDir, verdict: 'pass' },
      );
    },
    faultFree: () => Promise.resolve({ runDir: '/confirm/recreate', alarms: [] }),
    save: () => undefined,
  };
  return { ctx, rerunsOf };
}

const plans = () => [
  result('short', { size: { faults: 1, steps: 5 } }),
  result('next', { size: { faults: 1, steps: 7 } }),
  result('third', { size: { faults: 2, steps: 7 } }),
  result('fourth', { size: { faults: 3, steps: 7 } }),
];

test('when the shortest reproducer does not fail again every time, the next plan is re-run, and the one that does becomes the reproducer', async (t) => {
  const { ctx, rerunsOf } = context(plans(), { short: [1], next: [1, 2, 3] });
  await confirmFindings(ctx);
  t.deepEqual([...new Set(rerunsOf)], ['short', 'next']);
  t.is(rerunsOf.length, 6);
  const [f] = groupFindings(ctx.results.filter((r): r is PlanResult => r !== undefined));
  t.is(f!.class, 'bug');
  t.is(f!.reproducer.plan, 'next');
});

test('a shortest reproducer that fails again every time is the only one re-run', async (t) => {
  const { ctx, rerunsOf } = context(plans(), { short: [1, 2, 3], next: [1, 2, 3] });
  await confirmFindings(ctx);
  t.deepEqual(rerunsOf, ['short', 'short', 'short']);
});

test(`at most ${REPRODUCERS_TRIED} plans are re-run before the finding is flaky`, async (t) => {
  const { ctx, rerunsOf } = context(plans(), { fourth: [1, 2, 3] });
  await confirmFindings(ctx);
  t.deepEqual([...new Set(rerunsOf)], ['short', 'next', 'third']);
  const [f] = groupFindings(ctx.results.filter((r): r is PlanResult => r !== undefined));
  t.is(f!.class, 'flaky');
  t.is(f!.reproducer.plan, 'short');
});
