/**
 * Recovery (src/campaign/recovery.ts) on a run whose end state was already the references' before
 * any attempt: `time` only when the run showed the finding (judged as a re-run is); a run that never
 * showed it says nothing of recovery. The runs are hand-built: the recovery's own steps, not a cluster.
 */
import test from 'ava';
import { recoverFindings, type RecoverFindingsContext } from '../../src/campaign/recovery.js';
import { CampaignLayout } from '../../src/campaign/layout.js';
import { Limiter } from '../../src/campaign/limiter.js';
import type { ControllerUnderTest } from '../../src/config/config.js';
import type { TestPlan } from '../../src/model/plan.js';
import type { PlanResult, Rerun } from '../../src/model/results.js';
import type { SettledRun } from '../../src/coordinator/run.js';
import { findingSignature, groupFindings } from '../../oracles/findings.js';
import { configMap, runWith } from '../oracles/_runs.js';
import { result } from '../oracles/_results.js';

const references = [runWith([configMap('cfg', { v: '1' })]), runWith([configMap('cfg', { v: '1' })])];
const plan = (name: string): TestPlan => ({
  apiVersion: 'kperturb.dev/v1',
  kind: 'TestPlan',
  metadata: { name },
  spec: { controller: 'op', workload: 'recreate', pattern: 'stale-state', description: 'test', faults: [] },
});

/** Recovery of the one finding of plan `a`, on a run that settles on the references' end state and is judged `judged`. */
async function recoverOnHealedRun(judged: (found: PlanResult) => Rerun, injected = true, endV = '1'): Promise<PlanResult> {
  const found = result('a');
  const results: Array<PlanResult | undefined> = [found];
  const settled: SettledRun = {
    restartController: () => Promise.resolve(),
    runSteps: () => Promise.resolve({ ok: true }),
    settle: () => Promise.resolve(true),
    state: () => Promise.resolve(runWith([configMap('cfg', { v: endV })])),
    quietMs: 100,
    settleTimeoutMs: 1000,
    injected,
  };
  const ctx: RecoverFindingsContext = {
    config: { name: 'op', workloads: new Map([['recreate', { name: 'recreate', steps: [] }]]) } as unknown as ControllerUnderTest,
    layout: new CampaignLayout('/out', 'op'),
    plans: [plan('a')],
    results,
    log: () => undefined,
    limiter: new Limiter(1),
    withPool: (_n, stage) => stage(),
    references: () => Promise.resolve({ runs: references, options: {} }),
    faultFreeAlarms: () => Promise.resolve([]),
    run: async (_p, runDir, _label, afterSettle) => {
      await afterSettle(settled);
      return { ...(injected ? {} : { error: 'nothing was tested: its fault never fired' }), judged: { ...judged(found), runDir } };
    },
    faultFreeRun: () => Promise.resolve({ error: 'not used' }),
    save: () => undefined,
  };
  await recoverFindings(ctx);
  return results[0]!;
}

test('a recovery run that showed the finding and ended on the references’ state recovered by time', async (t) => {
  const r = await recoverOnHealedRun((found) => ({ runDir: '', verdict: 'bug', signature: findingSignature(found) }));
  t.is(r.recovery?.before, 0);
  t.is(r.recovery?.shown, true);
  t.is(groupFindings([r])[0]!.recovery, 'time');
});

test('a recovery run that never showed the finding leaves its recovery not known', async (t) => {
  const r = await recoverOnHealedRun(() => ({ runDir: '', verdict: 'pass' }));
  t.is(r.recovery?.shown, false);
  t.is(groupFindings([r])[0]!.recovery, undefined);
  // Another bug in the same run is not this finding either.
  const other = await recoverOnHealedRun(() => ({
    runDir: '',
    verdict: 'bug',
    signature: { oracle: 'end-state', divergence: { kind: 'extra', verb: 'delete', object: 'Service/default/other' } },
  }));
  t.is(other.recovery?.shown, false);
});

test('a recovery run whose fault did not fire tries nothing: its recovery is not known', async (t) => {
  // Its end state differs from the references' (v: 2), but not because of the fault.
  const r = await recoverOnHealedRun(() => ({ runDir: '', verdict: 'not-injected' }), false, '2');
  t.deepEqual(r.recovery?.attempts, []);
  t.is(r.recovery?.before, 0);
  t.regex(r.recovery?.error ?? '', /nothing was tested/);
  t.is(groupFindings([r])[0]!.recovery, undefined);
});
