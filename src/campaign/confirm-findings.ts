/**
 * Confirmed by default (issue 36, item 2): after a `test` has judged its plans, each finding of
 * class `bug` has its shortest reproducer run again K times on fresh clusters (then its next plans,
 * while none failed again every time: a timing-dependent fault can miss in the shortest), and its workload once
 * without faults (the confirmation run `--confirm` makes, shared). What they showed is kept on the
 * reproducer's result (`PlanResult.reruns`, in its verdict.json and results.json), and
 * oracles/confirmation.ts decides from it whether the finding is a bug or flaky, wherever findings
 * are grouped (test, demo, report).
 */
import type { ControllerUnderTest } from '../config/config.js';
import type { TestPlan } from '../model/plan.js';
import type { Alarm, Divergence, Finding, FindingSignature, PlanResult, Rerun, Reruns } from '../model/results.js';
import { findingSignature, groupFindings, inReproducerOrder, stateAlarmObjects } from '../../oracles/findings.js';
import { decideConfirmation, describeConfirmation } from '../../oracles/confirmation.js';
import type { CampaignLayout } from './layout.js';
import type { Limiter } from './limiter.js';

/** The workload run without faults (the confirmation run): its alarms against the reference runs. */
export interface FaultFreeRun {
  runDir: string;
  alarms: Alarm[];
  divergence?: Divergence;
  error?: string;
}

/** Re-runs go ahead of the plans still waiting (the demo's limiter is shared): a finding is confirmed while later plans run. */
const RERUN_PRIORITY = 1;

/** Plans of one finding re-run in turn, at most, before it is called flaky (docs/findings.md). */
export const REPRODUCERS_TRIED = 3;

export interface ConfirmFindingsContext {
  config: ControllerUnderTest;
  layout: CampaignLayout;
  /** The test's plans and their results, index for index (undefined: not run). */
  plans: readonly TestPlan[];
  results: Array<PlanResult | undefined>;
  /** K: re-runs per finding; 0 confirms nothing. */
  runs: number;
  log: (line: string) => void;
  limiter: Limiter;
  signal?: AbortSignal;
  /** Runs `stage` with a control-plane pool sized for `runs` runs (the real tier's; campaign.ts). */
  withPool: (runs: number, stage: () => Promise<void>) => Promise<void>;
  /** Runs plan `p` in `runDir` on a fresh cluster and judges it as a test run. */
  rerun: (p: TestPlan, runDir: string, label: string) => Promise<Rerun>;
  /** The workload's fault-free run (made once per workload and test). */
  faultFree: (workload: string) => Promise<FaultFreeRun>;
  /** Keeps results[i] (its verdict.json and results.json) after its `reruns` were set. */
  save: (i: number) => void;
}

/** A re-run's verdict and signature, as oracles/confirmation.ts compares them. */
export function rerunOf(r: PlanResult, runDir: string): Rerun {
  if (r.verdict !== 'bug' && r.verdict !== 'flaky') return { runDir, verdict: r.verdict };
  const objects = stateAlarmObjects(r.alarms);
  return { runDir, verdict: r.verdict, signature: findingSignature(r), ...(objects.length > 0 ? { stateAlarmObjects: objects } : {}) };
}

function faultFreeOf(run: FaultFreeRun): NonNullable<Reruns['faultFree']> {
  const signature: FindingSignature | undefined = run.alarms.length > 0 ? findingSignature(run) : undefined;
  return { runDir: run.runDir, alarms: run.alarms.length, ...(signature ? { signature } : {}), ...(run.error ? { error: run.error } : {}) };
}

/**
 * Re-runs the shortest reproducer of every finding of class `bug` among `ctx.results` that has not
 * been re-run K times yet (a kept verdict keeps its re-runs), and the next ones while none failed
 * again every time (`confirmFinding`), and the fault-free run of its workload.
 */
export async function confirmFindings(ctx: ConfirmFindingsContext): Promise<void> {
  const k = ctx.runs;
  if (k <= 0) return;
  const done = ctx.results.filter((r): r is PlanResult => r !== undefined);
  const toConfirm = groupFindings(done).filter((f) => (f.class === 'bug' && !f.confirmation) || (f.confirmation !== undefined && f.confirmation.runs !== k));
  if (toConfirm.length === 0) return;
  const faultFreeRuns = new Set(toConfirm.map((f) => f.reproducer.workload)).size;
  ctx.log(
    `confirm ${ctx.config.name}: ${toConfirm.length} finding${toConfirm.length === 1 ? '' : 's'} of class bug; re-running each one's shortest reproducer ${k} time${k === 1 ? '' : 's'} on fresh clusters (--confirm-runs), and its workload once without faults`,
  );
  await ctx.withPool(toConfirm.length * k + faultFreeRuns, async () => {
    await Promise.all(toConfirm.map((f, n) => confirmFinding(ctx, f, `finding ${n + 1}/${toConfirm.length}`)));
  });
}

/**
 * Re-runs a finding's plans K times each, its shortest reproducer first, until one failed again
 * every time (oracles/findings.ts then makes that plan the reproducer), at most REPRODUCERS_TRIED
 * plans. A plan that already has K re-runs (a kept verdict) is judged from them.
 */
async function confirmFinding(ctx: ConfirmFindingsContext, f: Finding, label: string): Promise<void> {
  const k = ctx.runs;
  const ofFinding = ctx.results.filter(
    (r): r is PlanResult => r !== undefined && r.controller === f.controller && f.plans.some((q) => q.workload === r.workload && q.plan === r.plan),
  );
  const candidates = inReproducerOrder(ofFinding).slice(0, REPRODUCERS_TRIED);
  for (const [n, candidate] of candidates.entries()) {
    const i = ctx.results.indexOf(candidate);
    const p = ctx.plans[i];
    if (!p) return;
    let reruns = candidate.reruns?.runs.length === k ? candidate.reruns : undefined;
    if (!reruns) {
      const name = p.metadata.name;
      const runs = await Promise.all(
        Array.from({ length: k }, (_, j) =>
          ctx.limiter.run(async (): Promise<Rerun | undefined> => {
            if (ctx.signal?.aborted) return undefined;
            ctx.log(`confirm ${ctx.config.name}/${p.spec.workload} ${label} [re-run ${j + 1}/${k}] ${name}: ${f.summary}`);
            return ctx.rerun(p, ctx.layout.rerun(p.spec.workload, name, j + 1), `${name} re-run ${j + 1}`);
          }, RERUN_PRIORITY),
        ),
      );
      const faultFree = await ctx.limiter.run(() => ctx.faultFree(p.spec.workload), RERUN_PRIORITY);
      if (ctx.signal?.aborted || runs.some((r) => r === undefined)) return;
      reruns = { runs: runs as Rerun[], faultFree: faultFreeOf(faultFree) };
      ctx.results[i] = { ...candidate, reruns };
      ctx.save(i);
    }
    const c = decideConfirmation(f.controller, [f.signature, ...(f.variants ?? [])], reruns);
    const next = !c.confirmed && n + 1 < candidates.length ? `; trying its next reproducer, ${candidates[n + 1]!.plan}` : '';
    ctx.log(
      `confirm ${ctx.config.name}/${p.spec.workload}: finding "${f.summary}" ${c.confirmed ? 'confirmed' : 'not confirmed'} by ${p.metadata.name}: ${describeConfirmation(c)}${next}`,
    );
    if (c.confirmed) return;
  }
}
