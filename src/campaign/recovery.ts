/**
 * Recovery (issue 36, item 6; Arsc's strategies): for each finding of class `bug`, its shortest
 * reproducer runs once more, and once that run has settled (its fault played out, the bug shown)
 * kperturb does what a user would do next, in order, reading the end state after each and stopping
 * at the first that brings it back to the reference runs' (oracles/recovery.ts judges):
 *   time      nothing: settle again with a quiet window RECOVERY_QUIET_FACTOR times the run's;
 *   restart   restart the controller (as a crash fault does), and settle;
 *   re-apply  apply the workload's last custom resource again as applied (with the patches of it
 *             that followed), and settle; an apply that changes nothing changes nothing, as with kubectl;
 *   rollback  apply the custom resource the workload applied before that one (when there is one),
 *             and settle; compared with a fault-free run of the workload given the same rollback
 *             (the reference runs never rolled back), made once per workload.
 * It is the reproducer's own run with steps after it (RunOptions.afterSettle), not a new kind of run.
 * The attempts are kept on the reproducer's result (`PlanResult.recovery`), the finding says which
 * strategy recovered (`Finding.recovery`).
 */
import type { ControllerUnderTest, WorkloadStep } from '../config/config.js';
import type { SettledRun } from '../coordinator/run.js';
import type { TestPlan } from '../model/plan.js';
import type { Alarm, PlanResult, RecoveryAttempt, RecoveryRun, Rerun, RunArtifacts } from '../model/results.js';
import type { KubeObject } from '../model/object-key.js';
import { groupFindings } from '../../oracles/findings.js';
import { recoveryOf, recoveryUnknown, shouldGoOn, stillBroken } from '../../oracles/recovery.js';
import { showsFinding } from '../../oracles/confirmation.js';
import type { OracleOptions } from '../../oracles/index.js';
import { manifestsOf } from '../workload/runner.js';
import type { CampaignLayout } from './layout.js';
import type { Limiter } from './limiter.js';

/** A settled run's state as the recovery judges it. */
type RunState = Awaited<ReturnType<SettledRun['state']>>;

/** `time` waits for this many times the run's quiet window (at least RECOVERY_QUIET_MIN_MS) of silence. */
export const RECOVERY_QUIET_FACTOR = 5;
const RECOVERY_QUIET_MIN_MS = 2000;

/** The steps the re-apply and rollback strategies run, from the workload's steps. */
export interface RecoverySteps {
  reapply?: WorkloadStep[];
  rollback?: WorkloadStep[];
}

const nameOf = (o: KubeObject) => `${o.kind}/${o.metadata?.name ?? ''}`;
/** `Kind/ns/name` or `Kind/name` to `Kind/name`, as nameOf names an applied object. */
const keyName = (key: string) => {
  const parts = key.split('/');
  return `${parts[0]}/${parts[parts.length - 1]}`;
};

/**
 * From the workload's steps, the writes of its custom resource: the objects of its last apply step,
 * written by that apply, by earlier applies of the same objects and by patches of them.
 *   reapply:  the last such write again (the desired state as last given; it changes nothing unless
 *             something else changed the resource since);
 *   rollback: the resource as it was before that write: the apply before it and the patches between
 *             (absent when the last write is the first apply: there is no earlier version).
 * `objectsOf` reads an apply step's objects (a manifest file, or the inline resource).
 */
export function recoverySteps(steps: readonly WorkloadStep[], objectsOf: (step: Extract<WorkloadStep, { apply: unknown }>) => KubeObject[]): RecoverySteps {
  const applied = steps.map((s) => ('apply' in s ? new Set(objectsOf(s).map(nameOf)) : undefined));
  const lastApply = lastIndexWhere(applied, (names) => names !== undefined);
  if (lastApply < 0) return {};
  const resource = applied[lastApply]!;
  const writes = steps.flatMap((s, i) =>
    ('apply' in s && [...applied[i]!].some((n) => resource.has(n))) || ('patch' in s && resource.has(keyName(s.patch.key))) ? [i] : [],
  );
  const last = writes[writes.length - 1]!;
  const before = writes.slice(0, -1);
  const at = lastIndexWhere(before, (i) => 'apply' in steps[i]!);
  const base = at < 0 ? undefined : before[at]!;
  return {
    reapply: [steps[last]!],
    ...(base !== undefined ? { rollback: before.filter((i) => i >= base).map((i) => steps[i]!) } : {}),
  };
}

function lastIndexWhere<T>(items: readonly T[], test: (item: T) => boolean): number {
  for (let i = items.length - 1; i >= 0; i--) if (test(items[i]!)) return i;
  return -1;
}

export interface RecoverFindingsContext {
  config: ControllerUnderTest;
  layout: CampaignLayout;
  plans: readonly TestPlan[];
  results: Array<PlanResult | undefined>;
  log: (line: string) => void;
  limiter: Limiter;
  signal?: AbortSignal;
  withPool: (runs: number, stage: () => Promise<void>) => Promise<void>;
  /** The reference runs of a workload and the oracle options for it. */
  references: (workload: string) => Promise<{ runs: RunArtifacts[]; options: OracleOptions }>;
  /** The alarms of the workload's fault-free run (the confirmation run): not counted as broken. */
  faultFreeAlarms: (workload: string) => Promise<Alarm[]>;
  /** Runs plan `p` in `runDir` with `afterSettle` and judges it as a re-run; its error, if it could not be carried out. */
  run: (p: TestPlan, runDir: string, label: string, afterSettle: (run: SettledRun) => Promise<void>) => Promise<{ error?: string; judged: Rerun }>;
  /** A fault-free run of the workload in `runDir` with `afterSettle`; its end state, or an error. */
  faultFreeRun: (workload: string, runDir: string, afterSettle: (run: SettledRun) => Promise<void>) => Promise<RunArtifacts | { error: string }>;
  save: (i: number) => void;
}

/** Runs one recovery strategy and reads what is still broken after it. */
async function attempt(
  strategy: RecoveryAttempt['strategy'],
  act: () => Promise<unknown>,
  run: SettledRun,
  broken: (state: RunState) => number,
): Promise<RecoveryAttempt> {
  await act();
  await run.settle(run.quietMs, run.settleTimeoutMs);
  return { strategy, alarms: broken(await run.state()) };
}

/** The fault-free rollback reference of a workload, made once when a finding gets that far. */
function rollbackReferences(ctx: RecoverFindingsContext): (workload: string, steps: WorkloadStep[]) => Promise<RunArtifacts | { error: string }> {
  const made = new Map<string, Promise<RunArtifacts | { error: string }>>();
  return (workload, steps) => {
    let ref = made.get(workload);
    if (!ref) {
      ctx.log(`recover ${ctx.config.name}/${workload}: a fault-free run of the workload rolled back the same way, to compare the rollback with`);
      ref = ctx.faultFreeRun(workload, ctx.layout.recoveryRun(workload, 'rollback-reference'), async (run) => {
        await run.runSteps(steps);
        await run.settle(run.quietMs, run.settleTimeoutMs);
      });
      made.set(workload, ref);
    }
    return ref;
  };
}

/** Tries recovery on every finding of class `bug` among `ctx.results` that has not had it tried. */
export async function recoverFindings(ctx: RecoverFindingsContext): Promise<void> {
  const done = ctx.results.filter((r): r is PlanResult => r !== undefined);
  const toRecover = groupFindings(done).filter((f) => f.class === 'bug' && f.recoveryRun === undefined);
  if (toRecover.length === 0) return;
  ctx.log(
    `recover ${ctx.config.name}: ${toRecover.length} finding${toRecover.length === 1 ? '' : 's'} of class bug; running each one's shortest reproducer once more and trying, in order: time, restart, re-apply, rollback`,
  );
  const rollbackReference = rollbackReferences(ctx);
  await ctx.withPool(toRecover.length, async () => {
    await Promise.all(
      toRecover.map(async (f, n) => {
        const i = ctx.results.findIndex((r) => r?.controller === f.controller && r.workload === f.reproducer.workload && r.plan === f.reproducer.plan);
        const p = ctx.plans[i];
        if (i < 0 || !p || ctx.signal?.aborted) return;
        const workload = ctx.config.workloads.get(p.spec.workload)!;
        const { runs: references, options } = await ctx.references(workload.name);
        const faultFree = await ctx.faultFreeAlarms(workload.name);
        const steps = recoverySteps(workload.steps, (s) => manifestsOf(s.apply));
        const runDir = ctx.layout.recoveryRun(workload.name, p.metadata.name);
        const recovery: RecoveryRun = { runDir, before: 0, attempts: [] };
        // The state after the rollback, judged once this run has ended: its reference is a run of its
        // own, which cannot start while this one holds the controller's fixed ports (port-locks.ts)
        // or the pool's last control plane.
        let rolledBack: { attempt: RecoveryAttempt; state: RunState } | undefined;
        const done = await ctx.limiter.run(() => {
          ctx.log(`recover ${ctx.config.name}/${workload.name} finding ${n + 1}/${toRecover.length} ${p.metadata.name}: ${f.summary}`);
          return ctx.run(p, runDir, `${p.metadata.name} recovery`, async (run) => {
            // A fault that missed its moment shows nothing to recover from: no attempt (the run's
            // error says why, and the recovery is not known).
            if (!run.injected) return;
            const broken = (state: RunState) => stillBroken(references, state, faultFree, options).length;
            recovery.before = broken(await run.state());
            if (recovery.before === 0) return;
            const tries: Array<[RecoveryAttempt['strategy'], () => Promise<RecoveryAttempt>]> = [
              [
                'time',
                () => attempt('time', () => run.settle(Math.max(run.quietMs * RECOVERY_QUIET_FACTOR, RECOVERY_QUIET_MIN_MS), run.settleTimeoutMs), run, broken),
              ],
              ['restart', () => attempt('restart', () => run.restartController(), run, broken)],
              [
                're-apply',
                async () =>
                  steps.reapply
                    ? attempt('re-apply', () => run.runSteps(steps.reapply!), run, broken)
                    : { strategy: 're-apply', alarms: recovery.before, skipped: 'the workload applies no resource' },
              ],
              [
                'rollback',
                async () => {
                  if (!steps.rollback)
                    return { strategy: 'rollback', alarms: recovery.before, skipped: 'the workload applied no earlier version of its last resource' };
                  await run.runSteps(steps.rollback);
                  await run.settle(run.quietMs, run.settleTimeoutMs);
                  // Its alarms are counted below, against the rollback reference; the last attempt.
                  rolledBack = { attempt: { strategy: 'rollback', alarms: recovery.before }, state: await run.state() };
                  return rolledBack.attempt;
                },
              ],
            ];
            for (const [, tryIt] of tries) {
              if (!shouldGoOn(recovery.attempts) || ctx.signal?.aborted) break;
              recovery.attempts.push(await tryIt());
            }
          });
        }, 1);
        if (ctx.signal?.aborted) return;
        // A run whose end state was already the references' either recovered in its own settle or
        // never showed the finding (a fault that missed its moment): only the first is `time`.
        if (recovery.before === 0 && !done.error) recovery.shown = showsFinding(f.controller, [f.signature, ...(f.variants ?? [])])(done.judged);
        if (done.error) recovery.error = done.error;
        else if (rolledBack && steps.rollback) {
          const ref = await rollbackReference(workload.name, steps.rollback);
          if ('error' in ref) rolledBack.attempt.skipped = `the fault-free rollback run failed: ${ref.error}`;
          // One rollback reference cannot tell which fields vary from run to run (a generated
          // password); the workload's reference runs can.
          else rolledBack.attempt.alarms = stillBroken([ref], rolledBack.state, [], { ...options, varyingRuns: references }).length;
        }
        ctx.results[i] = { ...ctx.results[i]!, recovery };
        ctx.save(i);
        const by = recoveryOf(recovery);
        ctx.log(
          `recover ${ctx.config.name}/${workload.name}: finding "${f.summary}": ${by ? `recovered by ${by}` : `recovery not known: ${recoveryUnknown(recovery)}`}`,
        );
      }),
    );
  });
}
