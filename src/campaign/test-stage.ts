/**
 * The test stage of a campaign (`kperturb test`): runs plans, each on a fresh cluster, and judges
 * each against the reference runs. With `parallel` (or a shared `limiter`) several plans run at once;
 * results keep the plans' order. Its collaborators: the reference runs of each workload (loaded
 * once), the fault-free confirmation run of each workload (run once), the verdicts plans already
 * have (kept unless `rerun`), and results.json (./campaign-results.ts); after the plans, findings'
 * re-runs (./confirm-findings.ts) and recovery (./recovery.ts).
 */
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import type { ControllerUnderTest, Workload } from '../config/config.js';
import { executeRun, type RunOptions } from '../coordinator/run.js';
import { ControllerStandbys } from '../coordinator/standby.js';
import { faultOnManagedSystem, serializePlan, type TestPlan } from '../model/plan.js';
import { planFileOf } from '../io/plan-file.js';
import type { Alarm, ContractMode, PlanResult, RunArtifacts, RunRecord } from '../model/results.js';
import { InterruptedError, UserInputError } from '../model/errors.js';
import { applyConfirmation, judgeTestRun, runAlarms, type OracleOptions } from '../../oracles/index.js';
import { firstDivergence } from '../../oracles/findings.js';
import { refusalsAtEnd } from '../../oracles/input-refusal.js';
import { confirmFindings, rerunOf, type FaultFreeRun } from './confirm-findings.js';
import { recoverFindings } from './recovery.js';
import { loadHealthInputs, loadRunDir, readJsonFile, readRunRecord, RUN_FILES } from '../io/run-dir.js';
import { validatePlanResult } from '../io/results-file.js';
import { recoverDirectory, replaceDirectory, writeFileAtomic } from '../io/atomic-files.js';
import { redactAlarm } from '../model/redact.js';
import type { CampaignLayout } from './layout.js';
import { Limiter } from './limiter.js';
import type { Shard } from './shard.js';
import type { CampaignOptions, Log } from './options.js';
import { plannedWorkloads, ResultsFile } from './campaign-results.js';
import { withControlPlanePool } from './control-plane-pool.js';
import { settleConfig } from './quiet-window.js';

/** Progress hooks of `test` (src/report/progress.ts draws them). */
export interface TestProgress {
  begin(total: number): void;
  planStarted(label: string): void;
  planFinished(result: PlanResult): void;
}

export interface TestOptions extends CampaignOptions {
  onResult?: (result: PlanResult, index: number, total: number) => void;
  progress?: TestProgress;
  /**
   * Confirmation (as Acto does): when a plan alarms, run the unperturbed workload once more (once
   * per workload and campaign) and mark the alarms it reproduces as flaky.
   */
  confirm?: boolean;
  /**
   * How many plans run at once (default 1). Every run has its own cluster, proxy and controller
   * process, so runs do not see each other; they only share the machine.
   */
  parallel?: number;
  /** A limit shared with other test() calls (the demo's); overrides `parallel`. */
  limiter?: Limiter;
  /** `strict`: faults stay within the API contract (ControllerProxyOptions.contract). */
  contract?: ContractMode;
  /** Run every plan, also those that already have a verdict (by default those are kept: see finishedVerdict). */
  rerun?: boolean;
  /** The plans are this shard's share of the campaign (shard.ts); said in results.json for `report` to merge. */
  shard?: Shard;
  /**
   * Re-runs per finding of class `bug` (confirm-findings.ts): its shortest reproducer runs again this
   * many times on fresh clusters and must fail again every time, with the same signature, for the
   * finding to stay a bug. Default 0 here (library callers: tests, benches); `kperturb test` and
   * `kperturb demo` default to DEFAULT_CONFIRM_RUNS.
   */
  confirmRuns?: number;
  /**
   * Try recovery on each finding of class `bug` (recovery.ts: time, restart, re-apply, rollback).
   * Default false here (library callers); `kperturb test` and `kperturb demo` default to true.
   */
  recovery?: boolean;
}

function oracleOptions(config: ControllerUnderTest, workload: string): OracleOptions {
  const forWorkload = (rules: ControllerUnderTest['masks']) =>
    rules.filter((m) => !m.workload || m.workload === workload).map((m) => ({ keyGlob: m.key, paths: m.paths }));
  return { extraMasks: forWorkload(config.masks), countUpdates: forWorkload(config.countUpdates ?? []) };
}

/**
 * The oracles' options for a run of plan `p`: its workload's masks and counted updates, and whether
 * every fault of the plan acts on the managed system (then the controller's view stayed true, and
 * the update summary counts a replacement it made in the fault's wake as an update). The workload's
 * fault-free confirmation run, shared by all its plans, takes `oracleOptions` alone.
 */
export function planOracleOptions(config: ControllerUnderTest, p: TestPlan): OracleOptions {
  return { ...oracleOptions(config, p.spec.workload), faultsOnManagedSystemOnly: p.spec.faults.every(faultOnManagedSystem) };
}

/** A run's artifacts with the health and liveness inputs read back from its directory. */
async function fullArtifacts(runDir: string, record: RunRecord, artifacts: RunArtifacts): Promise<RunArtifacts> {
  return { ...artifacts, ...(await loadHealthInputs(runDir, record)) };
}

type VerdictInputs = NonNullable<PlanResult['inputs']>;

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

/**
 * The verdict a plan already has, if it still holds: a verdict.json (a run directory is only put
 * in place complete, verdict included) judged from the same plan content and the same reference
 * runs. A run that could not be carried out (`error`) is run again.
 */
function finishedVerdict(runDir: string, p: TestPlan, inputs: VerdictInputs): PlanResult | undefined {
  recoverDirectory(runDir);
  const file = join(runDir, RUN_FILES.verdict);
  if (!existsSync(file)) return undefined;
  let r: PlanResult;
  try {
    r = validatePlanResult(readJsonFile(file), file, '(top level)');
  } catch {
    return undefined;
  }
  const holds = r.plan === p.metadata.name && r.workload === p.spec.workload && r.verdict !== 'error' && isDeepStrictEqual(r.inputs, inputs);
  return holds ? { ...r, runDir } : undefined;
}

/**
 * How many plans of this controller run at once when `requested` are asked for: a controller that
 * binds fixed ports (metrics, health probes) cannot run twice at once on one machine, and its
 * config says so with `controller.maxParallel`.
 */
export function effectiveParallel(config: Pick<ControllerUnderTest, 'controller'>, requested: number): number {
  return Math.max(1, Math.min(requested, config.controller.maxParallel ?? Infinity));
}

/** The reference runs of a workload, with the config its test runs use. */
interface References {
  dirs: string[];
  runs: RunArtifacts[];
  config: ControllerUnderTest;
}

/**
 * The reference runs of each workload, loaded once per workload even when several plans ask at the
 * same time (kept as promises), with the settle window learned from them (settleConfig).
 */
export class ReferenceCache {
  private readonly loads = new Map<string, Promise<References>>();

  constructor(
    private readonly config: ControllerUnderTest,
    /** The directories of a workload's reference runs (a UserInputError when there are none). */
    private readonly dirsOf: (workload: string) => string[],
    private readonly log: Log,
  ) {}

  of(workload: string): Promise<References> {
    let refs = this.loads.get(workload);
    if (!refs) {
      const dirs = this.dirsOf(workload);
      refs = Promise.all([Promise.all(dirs.map(async (d) => (await loadRunDir(d)).artifacts)), settleConfig(this.config, workload, dirs, this.log)]).then(
        ([runs, settled]) => ({ dirs, runs, config: settled }),
      );
      this.loads.set(workload, refs);
    }
    return refs;
  }
}

/**
 * The fault-free confirmation run of each workload (as Acto does: when a plan alarms, the
 * unperturbed workload runs once more, and the alarms it reproduces are flaky): made once per
 * workload and campaign, even when several plans ask at the same time (kept as promises).
 */
export class ConfirmationCache {
  private readonly runs = new Map<string, Promise<FaultFreeRun>>();

  constructor(
    private readonly config: ControllerUnderTest,
    private readonly layout: CampaignLayout,
    private readonly references: ReferenceCache,
    /** Where runs go and what stops them, read when a run starts (the stage's pool may have replaced the cluster). */
    private readonly placement: () => Pick<RunOptions, 'cluster' | 'signal'>,
    private readonly log: Log,
  ) {}

  /** The confirmation run of `workload` (its alarms against the reference runs, or why it failed). */
  async of(workload: string): Promise<FaultFreeRun> {
    const refs = await this.references.of(workload);
    return this.ofRefs(this.config.workloads.get(workload)!, refs.runs, refs.config, oracleOptions(this.config, workload));
  }

  ofRefs(workload: Workload, refs: RunArtifacts[], runConfig: ControllerUnderTest, options: OracleOptions): Promise<FaultFreeRun> {
    let confirmation = this.runs.get(workload.name);
    if (!confirmation) {
      confirmation = this.run(workload, refs, runConfig, options);
      this.runs.set(workload.name, confirmation);
    }
    return confirmation;
  }

  private async run(workload: Workload, refs: RunArtifacts[], runConfig: ControllerUnderTest, options: OracleOptions): Promise<FaultFreeRun> {
    const confirmDir = this.layout.confirmationRun(workload.name);
    const replacement = replaceDirectory(confirmDir);
    this.log(`confirm ${this.config.name}/${workload.name}: re-running the workload without faults to check the alarmed fields are deterministic`);
    const { cluster, signal } = this.placement();
    const c = await executeRun({
      config: runConfig,
      workload,
      runDir: replacement.path,
      log: this.log,
      ...(cluster ? { cluster } : {}),
      ...(signal ? { signal } : {}),
    });
    const cArtifacts = await fullArtifacts(replacement.path, c.record, c.artifacts);
    replacement.commit();
    if (c.record.error) {
      this.log(`  the confirmation run failed (${c.record.error}); alarms stay unconfirmed`);
      return { runDir: confirmDir, alarms: [], error: c.record.error };
    }
    const alarms = runAlarms(refs, cArtifacts, c.record, options);
    const divergence = firstDivergence(refs, cArtifacts, alarms);
    return { runDir: confirmDir, alarms, ...(divergence ? { divergence } : {}) };
  }
}

/**
 * What each verdict is judged from (the plan's content, the reference runs, the contract), and the
 * verdicts plans already have that still hold: kept verdicts must have been judged from the same.
 */
export class VerdictCache {
  /** The start times of each workload's reference runs, by workload. */
  readonly referenceStarts = new Map<string, string[]>();

  constructor(
    plans: readonly TestPlan[],
    referenceDirs: (workload: string) => string[],
    private readonly contract: ContractMode | undefined,
  ) {
    for (const w of new Set(plans.map((p) => p.spec.workload))) {
      this.referenceStarts.set(
        w,
        referenceDirs(w).map((d) => readRunRecord(join(d, RUN_FILES.record)).startedAt),
      );
    }
  }

  inputsOf(p: TestPlan): VerdictInputs {
    return {
      planSha256: sha256(serializePlan(p)),
      referenceRunsStartedAt: this.referenceStarts.get(p.spec.workload)!,
      ...(this.contract === 'strict' ? { contract: 'strict' as const } : {}),
    };
  }

  /** The verdict plan `p` already has in `runDir`, if it still holds (finishedVerdict). */
  kept(p: TestPlan, runDir: string): PlanResult | undefined {
    return finishedVerdict(runDir, p, this.inputsOf(p));
  }
}

/** Refuses plans of another controller or of a workload the config does not define. */
export function checkPlansFit(config: ControllerUnderTest, plans: readonly TestPlan[]): void {
  for (const p of plans) {
    if (p.spec.controller !== config.name) {
      throw new UserInputError(
        undefined,
        undefined,
        `plan ${p.metadata.name} is for controller "${p.spec.controller}", but the config is for "${config.name}"`,
      );
    }
    if (!config.workloads.has(p.spec.workload)) {
      throw new UserInputError(undefined, undefined, `plan ${p.metadata.name} names workload "${p.spec.workload}", which ${config.file} does not define`);
    }
  }
}

/** One test stage: its plans, their results as they come, and the collaborators above. */
export class TestStage {
  private readonly references: ReferenceCache;
  private readonly confirmations: ConfirmationCache;
  private readonly verdicts: VerdictCache;
  private readonly resultsFile: ResultsFile;
  private readonly limiter: Limiter;
  /** Each plan's result, in the plans' order (undefined until it has one). */
  private readonly results: Array<PlanResult | undefined>;
  /** The plans to run (indexes into `plans`): those without a verdict that still holds. */
  private readonly toRun: number[];
  /** Each plan's controller starts loading while an earlier plan's run goes on (src/coordinator/standby.ts). */
  private readonly standbys: ControllerStandbys | undefined;
  private started = 0;

  constructor(
    private readonly config: ControllerUnderTest,
    private readonly layout: CampaignLayout,
    private readonly plans: TestPlan[],
    /** Replaced with the pool's cluster while a stage runs on one (withControlPlanePool). */
    private opts: TestOptions,
    referenceDirs: (workload: string) => string[],
  ) {
    const parallel = effectiveParallel(config, opts.parallel ?? 1);
    if (!opts.limiter && parallel < (opts.parallel ?? 1))
      opts.log(`${config.name}: running at most ${parallel} plan(s) at once (controller.maxParallel in ${config.file})`);
    this.limiter = opts.limiter ?? new Limiter(parallel);
    this.references = new ReferenceCache(config, referenceDirs, opts.log);
    this.confirmations = new ConfirmationCache(config, layout, this.references, () => this.opts, opts.log);
    this.verdicts = new VerdictCache(plans, referenceDirs, opts.contract);
    this.results = plans.map((p) => (opts.rerun ? undefined : this.verdicts.kept(p, layout.testRun(p.spec.workload, p.metadata.name))));
    this.toRun = plans.flatMap((_, i) => (this.results[i] ? [] : [i]));
    if (this.toRun.length < plans.length) {
      opts.log(
        `${config.name}: ${plans.length - this.toRun.length} of ${plans.length} plans already have verdicts; running ${this.toRun.length}; --rerun to run all`,
      );
    }
    this.resultsFile = new ResultsFile(layout.resultsFile, plans, this.verdicts.referenceStarts, plannedWorkloads(config, layout), opts.shard);
    this.standbys = this.toRun.length > 1 ? new ControllerStandbys(config, this.toRun.length) : undefined;
  }

  async run(): Promise<PlanResult[]> {
    const { plans, opts, layout } = this;
    this.resultsFile.write(this.finished(), this.toRun.length === 0);
    opts.progress?.begin(this.toRun.length);
    await this.runPlans();
    await this.confirmFindings();
    if (this.opts.recovery) await this.recoverFindings();
    if (opts.signal?.aborted)
      throw new InterruptedError(`${this.finished().length} of ${plans.length} plans finished, some findings unconfirmed; results in ${layout.resultsFile}`);
    this.resultsFile.write(this.finished(), true);
    return this.finished();
  }

  private finished(): PlanResult[] {
    return this.results.filter((r): r is PlanResult => r !== undefined);
  }

  /** Runs the plans without a verdict, as many at once as the limiter lets. */
  private async runPlans(): Promise<void> {
    const { plans, toRun } = this;
    let outcomes: Array<PromiseSettledResult<void>>;
    try {
      outcomes = await this.withPool(toRun.length, () => Promise.allSettled(toRun.map((i) => this.limiter.run(() => this.runPlan(plans[i]!, i)))));
    } finally {
      await this.standbys?.close();
    }
    if (this.opts.signal?.aborted)
      throw new InterruptedError(`${this.finished().length} of ${plans.length} plans finished; results in ${this.layout.resultsFile}`);
    const failure = outcomes.find((o): o is PromiseRejectedResult => o.status === 'rejected');
    if (failure) throw failure.reason;
  }

  private async runPlan(p: TestPlan, i: number): Promise<void> {
    const { opts, config } = this;
    if (opts.signal?.aborted) return;
    opts.log(`test ${config.name}/${p.spec.workload} [${++this.started}/${this.toRun.length}] ${p.metadata.name}: ${p.spec.description}`);
    opts.progress?.planStarted(`${p.metadata.name}: ${p.spec.description}`);
    const result = await this.runAndJudge(p, this.layout.testRun(p.spec.workload, p.metadata.name), this.runLog(p.metadata.name), true);
    this.results[i] = result;
    this.resultsFile.write(this.finished(), false);
    opts.progress?.planFinished(result);
    opts.onResult?.(result, i, this.plans.length);
  }

  /** Lines of concurrent runs interleave: each says which run it belongs to. */
  private runLog(label: string): Log {
    const { opts } = this;
    return this.limiter.slots > 1 ? (line) => opts.log(`[${label}] ${line.trimStart()}`) : opts.log;
  }

  /**
   * Runs plan `p` in `runDir` (filled aside, put in place when judged) and judges it: a plan's test
   * run, and each re-run of a finding's reproducer (confirmFindings), the same way. `planRun`: the
   * plan's own run, which takes a standby controller and writes verdict.json (re-runs have none:
   * `report` reads a directory's verdict.json files as plans' results).
   */
  private async runAndJudge(p: TestPlan, runDir: string, log: Log, planRun: boolean, afterSettle?: RunOptions['afterSettle']): Promise<PlanResult> {
    const { config, opts } = this;
    const workload = config.workloads.get(p.spec.workload)!;
    const refs = await this.references.of(workload.name);
    const workloadOptions = oracleOptions(config, workload.name);
    const options = planOracleOptions(config, p);
    // Run aside: an earlier run of the plan stays in place until this one has its verdict.
    const replacement = replaceDirectory(runDir);
    const run = await executeRun({
      config: refs.config,
      workload,
      runDir: replacement.path,
      plan: p,
      log,
      ...(this.standbys && planRun ? { standbys: this.standbys } : {}),
      ...(opts.cluster ? { cluster: opts.cluster } : {}),
      ...(opts.contract ? { contract: opts.contract } : {}),
      ...(opts.signal ? { signal: opts.signal } : {}),
      ...(afterSettle ? { afterSettle } : {}),
    });
    const artifacts = await fullArtifacts(replacement.path, run.record, run.artifacts);
    let decision = judgeTestRun(refs.runs, artifacts, run.record, options);
    let confirmation: { runDir: string; alarms: Alarm[] } | undefined;
    if (opts.confirm && decision.verdict === 'bug') {
      confirmation = await this.confirmations.ofRefs(workload, refs.runs, refs.config, workloadOptions);
      decision = applyConfirmation(decision, confirmation.alarms);
    }
    // Where the run departed from the references: what its finding is grouped by (oracles/findings.ts).
    const divergence = decision.verdict === 'bug' || decision.verdict === 'flaky' ? firstDivergence(refs.runs, artifacts, decision.alarms) : undefined;
    const refused = decision.verdict === 'bug' ? refusalsAtEnd(refs.runs) : [];
    const result: PlanResult = {
      plan: p.metadata.name,
      controller: config.name,
      workload: workload.name,
      pattern: p.spec.pattern,
      description: p.spec.description,
      verdict: decision.verdict,
      injected: run.record.injected === true,
      alarms: decision.alarms.map(redactAlarm),
      durationMs: run.record.durationMs,
      runDir,
      ...(planFileOf(p) ? { planFile: resolve(planFileOf(p)!) } : {}),
      configFile: resolve(config.file),
      ...(decision.error ? { error: decision.error } : {}),
      referenceRunDirs: refs.dirs,
      ...(confirmation ? { confirmationRunDir: confirmation.runDir } : {}),
      inputs: this.verdicts.inputsOf(p),
      ...(run.record.beyondContract ? { beyondContract: run.record.beyondContract } : {}),
      ...(refused.length > 0 ? { refusedInput: refused } : {}),
      ...(divergence ? { divergence } : {}),
      size: { faults: p.spec.faults.length, steps: workload.steps.length },
    };
    if (planRun) writeFileAtomic(join(replacement.path, RUN_FILES.verdict), JSON.stringify(result, null, 2) + '\n');
    replacement.commit();
    return result;
  }

  /** A result that got re-runs or recovery attempts: kept in its verdict.json and results.json. */
  private saveResult(i: number): void {
    writeFileAtomic(join(this.results[i]!.runDir, RUN_FILES.verdict), JSON.stringify(this.results[i], null, 2) + '\n');
    this.resultsFile.write(this.finished(), false);
  }

  /**
   * Runs a stage of runs (the plans, re-runs, recovery) on the campaign's cluster, from a pool of its
   * own on the real tier. Runs read opts.cluster when they start: the pool's while the stage runs,
   * the campaign's again after it (a later stage with the closed pool's choice would take from it).
   */
  private async withPool<T>(n: number, stage: () => Promise<T>): Promise<T> {
    const own = this.opts.cluster;
    try {
      return await withControlPlanePool(own, n, (cluster) => {
        this.opts = { ...this.opts, ...cluster };
        return stage();
      });
    } finally {
      const { cluster: _pooled, ...rest } = this.opts;
      this.opts = own ? { ...rest, cluster: own } : rest;
    }
  }

  /** Re-runs each finding's shortest reproducer `confirmRuns` times (./confirm-findings.ts). */
  private async confirmFindings(): Promise<void> {
    const { opts } = this;
    await confirmFindings({
      config: this.config,
      layout: this.layout,
      plans: this.plans,
      results: this.results,
      runs: opts.confirmRuns ?? 0,
      log: opts.log,
      limiter: this.limiter,
      ...(opts.signal ? { signal: opts.signal } : {}),
      withPool: (n, stage) => this.withPool(n, stage),
      rerun: async (p, runDir, label) => rerunOf(await this.runAndJudge(p, runDir, this.runLog(label), false), runDir),
      faultFree: (workload) => this.confirmations.of(workload),
      save: (i) => this.saveResult(i),
    });
  }

  /** Tries recovery on each finding of class `bug` (./recovery.ts). */
  private async recoverFindings(): Promise<void> {
    const { opts, config } = this;
    await recoverFindings({
      config,
      layout: this.layout,
      plans: this.plans,
      results: this.results,
      log: opts.log,
      limiter: this.limiter,
      ...(opts.signal ? { signal: opts.signal } : {}),
      withPool: (n, stage) => this.withPool(n, stage),
      references: async (workload) => ({ runs: (await this.references.of(workload)).runs, options: oracleOptions(config, workload) }),
      faultFreeAlarms: async (workload) => (await this.confirmations.of(workload)).alarms,
      run: async (p, runDir, label, afterSettle) => {
        const r = await this.runAndJudge(p, runDir, this.runLog(label), false, afterSettle);
        return { ...(r.error !== undefined ? { error: r.error } : {}), judged: rerunOf(r, runDir) };
      },
      faultFreeRun: (workload, runDir, afterSettle) => this.faultFreeRun(workload, runDir, afterSettle),
      save: (i) => this.saveResult(i),
    });
  }

  /** A fault-free run of `workload` with `afterSettle` (recovery's rollback reference). */
  private async faultFreeRun(workload: string, runDir: string, afterSettle: NonNullable<RunOptions['afterSettle']>) {
    const refs = await this.references.of(workload);
    const replacement = replaceDirectory(runDir);
    const r = await executeRun({
      config: refs.config,
      workload: this.config.workloads.get(workload)!,
      runDir: replacement.path,
      log: this.runLog(`${workload} rollback reference`),
      afterSettle,
      ...(this.opts.cluster ? { cluster: this.opts.cluster } : {}),
      ...(this.opts.signal ? { signal: this.opts.signal } : {}),
    });
    replacement.commit();
    return r.record.error ? { error: r.record.error } : r.artifacts;
  }
}
