/** learn, plan and test: the three stages of a campaign against one controller. */
import { existsSync, mkdirSync, readFileSync, readdirSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { ControllerUnderTest, Workload } from '../config/config.js';
import { executeRun, type ClusterChoice } from '../coordinator/run.js';
import { loadPlanFile, serializePlan, type TestPlan } from '../model/plan.js';
import { RESULTS_FORMAT, type Alarm, type PlanResult, type ResultsFile, type RunArtifacts, type RunRecord } from '../model/results.js';
import { readTrace } from '../model/trace-io.js';
import { mergeTracesBySeq } from '../model/trace-merge.js';
import { InterruptedError, UserInputError } from '../model/errors.js';
import type { TraceEvent } from '../model/trace.js';
import { planTestsStreaming, type PruningStats } from '../../planner/index.js';
import { applyConfirmation, judgeTestRun, runAlarms, type OracleOptions } from '../../oracles/index.js';
import { loadHealthInputs, loadRunDir } from '../report/artifacts.js';
import { redactAlarm } from '../report/redact.js';
import { CampaignLayout } from './layout.js';
import { Limiter } from './limiter.js';

export type Log = (line: string) => void;

export interface CampaignOptions {
  out: string;
  log: Log;
  /** Where every run of the campaign runs; default a fresh embedded cluster per run (see ClusterChoice). */
  cluster?: ClusterChoice;
  /**
   * Stops the stage (SIGINT, SIGTERM: src/cli/signals.ts): no run starts after it aborts, running
   * runs end (src/coordinator/run.ts), and the stage throws InterruptedError saying what finished.
   */
  signal?: AbortSignal;
}

function selectWorkloads(config: ControllerUnderTest, names: string[] | undefined): Workload[] {
  if (!names || names.length === 0) return [...config.workloads.values()];
  return names.map((n) => {
    const w = config.workloads.get(n);
    if (!w) throw new UserInputError(config.file, 'workloads', `a workload named "${n}" (it has: ${[...config.workloads.keys()].join(', ')})`);
    return w;
  });
}

export interface LearnSummary {
  workload: string;
  runs: Array<{ dir: string; ok: boolean; durationMs: number; error?: string }>;
}

/** Runs every workload `config.referenceRuns` times without faults and keeps the runs. */
export async function learn(
  config: ControllerUnderTest,
  opts: CampaignOptions & {
    workloads?: string[];
    /** Causality learning: serialized watch delivery with this quiet window (see proxy/serialize.ts). */
    serialize?: { quietMs: number };
  },
): Promise<LearnSummary[]> {
  const layout = new CampaignLayout(opts.out, config.name);
  const summaries: LearnSummary[] = [];
  const workloads = selectWorkloads(config, opts.workloads);
  let finishedRuns = 0;
  const interrupted = (err: unknown) =>
    opts.signal?.aborted ? new InterruptedError(`${finishedRuns} of ${workloads.length * config.referenceRuns} reference runs finished; runs in ${join(layout.root, 'learn')}`) : err;
  for (const workload of workloads) {
    const summary: LearnSummary = { workload: workload.name, runs: [] };
    rmSync(join(layout.root, 'learn', workload.name), { recursive: true, force: true });
    for (let n = 1; n <= config.referenceRuns; n++) {
      const dir = layout.referenceRun(workload.name, n);
      opts.log(`learn ${config.name}/${workload.name}: reference run ${n}/${config.referenceRuns}`);
      const { record } = await executeRun({ config, workload, runDir: dir, log: opts.log, ...(opts.cluster ? { cluster: opts.cluster } : {}), ...(opts.serialize ? { serializeDelivery: opts.serialize } : {}), ...(opts.signal ? { signal: opts.signal } : {}) }).catch((err: unknown) => {
        throw interrupted(err);
      });
      const ok = !record.error && record.workloadOutcome.ok;
      const error = record.error ?? record.workloadOutcome.error;
      summary.runs.push({ dir, ok, durationMs: record.durationMs, ...(error ? { error } : {}) });
      finishedRuns++;
      if (!ok) opts.log(`  reference run ${n} failed: ${error}`);
    }
    summaries.push(summary);
  }
  return summaries;
}

export interface PlanSummary {
  workload: string;
  plans: TestPlan[];
  stats: PruningStats[];
  dir: string;
}

/** A reference run's controller and cluster traces as one stream in seq order (read, never loaded). */
function mergedTrace(runDir: string): AsyncIterable<TraceEvent> {
  return mergeTracesBySeq([readTrace(join(runDir, 'controller.trace.jsonl')), readTrace(join(runDir, 'cluster.trace.jsonl'))]);
}

function referenceDirs(layout: CampaignLayout, config: ControllerUnderTest, workload: string): string[] {
  const dirs: string[] = [];
  for (let n = 1; n <= config.referenceRuns; n++) {
    const dir = layout.referenceRun(workload, n);
    if (existsSync(join(dir, 'run.json'))) dirs.push(dir);
  }
  if (dirs.length === 0) {
    throw new UserInputError(layout.root, undefined, `reference runs of workload "${workload}" (none found: run \`kperturb learn\` first)`);
  }
  return dirs;
}

export const PRUNING_FORMAT = 'kperturb.dev/pruning/v1';

/**
 * Derives test plans from the reference runs of each workload (plans come from the last run, the
 * others tell which triggers are deterministic) and writes them as YAML, with the pruning table in
 * pruning.json. `prune: false` writes every plan the rules can express, unpruned.
 */
export async function plan(config: ControllerUnderTest, opts: CampaignOptions & { workloads?: string[]; prune?: boolean }): Promise<PlanSummary[]> {
  const layout = new CampaignLayout(opts.out, config.name);
  const summaries: PlanSummary[] = [];
  for (const workload of selectWorkloads(config, opts.workloads)) {
    const refs = referenceDirs(layout, config, workload.name);
    const masks = config.masks.filter((m) => !m.workload || m.workload === workload.name).map((m) => ({ key: m.key, paths: m.paths }));
    const output = await planTestsStreaming({
      controller: config.name,
      workload: workload.name,
      references: refs.map(mergedTrace),
      options: { prune: opts.prune ?? true, quietMs: config.settle.quietMs, masks },
    });
    const { plans, stats } = output;
    const dir = layout.plansDir(workload.name);
    rmSync(dir, { recursive: true, force: true });
    mkdirSync(dir, { recursive: true });
    for (const p of plans) writeFileSync(join(dir, `${p.metadata.name}.yaml`), serializePlan(p));
    const pruning = {
      format: PRUNING_FORMAT,
      controller: config.name,
      workload: workload.name,
      pruned: opts.prune ?? true,
      causality: output.causality,
      referenceRuns: refs.map((r, i) => ({ dir: r, events: output.events[i] })),
      patterns: stats,
    };
    writeFileSync(join(dir, 'pruning.json'), JSON.stringify(pruning, null, 2) + '\n');
    opts.log(`plan ${config.name}/${workload.name}: ${plans.length} plan(s) in ${dir}`);
    summaries.push({ workload: workload.name, plans, stats, dir });
  }
  return summaries;
}

/** Expands plan files and directories (recursively) into plan files, sorted. */
export function findPlanFiles(paths: string[]): string[] {
  const files: string[] = [];
  const visit = (p: string) => {
    if (!existsSync(p)) throw new UserInputError(p, undefined, 'an existing plan file or directory');
    if (statSync(p).isDirectory()) {
      for (const entry of readdirSync(p).sort()) {
        const child = join(p, entry);
        if (statSync(child).isDirectory() || /\.ya?ml$/.test(entry)) visit(child);
      }
    } else {
      files.push(resolve(p));
    }
  };
  for (const p of paths) visit(p);
  return files;
}

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
}

function oracleOptions(config: ControllerUnderTest, workload: string): OracleOptions {
  const forWorkload = (rules: ControllerUnderTest['masks']) => rules.filter((m) => !m.workload || m.workload === workload).map((m) => ({ keyGlob: m.key, paths: m.paths }));
  return { extraMasks: forWorkload(config.masks), countUpdates: forWorkload(config.countUpdates ?? []) };
}

/** A run's artifacts with the health and liveness inputs read back from its directory. */
async function fullArtifacts(runDir: string, record: RunRecord, artifacts: RunArtifacts): Promise<RunArtifacts> {
  return { ...artifacts, ...(await loadHealthInputs(runDir, record)) };
}

/**
 * The latest results of other workloads in an existing results.json, so that testing one workload
 * (as the demo does, workload by workload) does not drop the others'. Unreadable files are replaced.
 */
function otherWorkloadsResults(file: string, tested: ReadonlySet<string>): PlanResult[] {
  if (!existsSync(file)) return [];
  try {
    const doc = JSON.parse(readFileSync(file, 'utf8')) as Partial<ResultsFile>;
    if (doc.format !== RESULTS_FORMAT || !Array.isArray(doc.results)) return [];
    return doc.results.filter((r) => !tested.has(r.workload));
  } catch {
    return [];
  }
}

function writeResults(file: string, results: PlanResult[], planned: number, complete: boolean): void {
  const doc: ResultsFile = { format: RESULTS_FORMAT, results, complete, planned };
  // Written after every plan, through a rename, so an interrupted campaign leaves a readable file.
  writeFileSync(file + '.tmp', JSON.stringify(doc, null, 2) + '\n');
  renameSync(file + '.tmp', file);
}

/**
 * Runs plans, each on a fresh cluster, and judges each against the reference runs. With `parallel`
 * (or a shared `limiter`) several plans run at once; results keep the plans' order.
 */
/**
 * How many plans of this controller run at once when `requested` are asked for: a controller that
 * binds fixed ports (metrics, health probes) cannot run twice at once on one machine, and its
 * config says so with `controller.maxParallel`.
 */
export function effectiveParallel(config: Pick<ControllerUnderTest, 'controller'>, requested: number): number {
  return Math.max(1, Math.min(requested, config.controller.maxParallel ?? Infinity));
}

export async function test(config: ControllerUnderTest, plans: TestPlan[], opts: TestOptions): Promise<PlanResult[]> {
  const layout = new CampaignLayout(opts.out, config.name);
  for (const p of plans) {
    if (p.spec.controller !== config.name) {
      throw new UserInputError(undefined, undefined, `plan ${p.metadata.name} is for controller "${p.spec.controller}", but the config is for "${config.name}"`);
    }
    if (!config.workloads.has(p.spec.workload)) {
      throw new UserInputError(undefined, undefined, `plan ${p.metadata.name} names workload "${p.spec.workload}", which ${config.file} does not define`);
    }
  }
  const parallel = effectiveParallel(config, opts.parallel ?? 1);
  if (!opts.limiter && parallel < (opts.parallel ?? 1)) opts.log(`${config.name}: running at most ${parallel} plan(s) at once (controller.maxParallel in ${config.file})`);
  const limiter = opts.limiter ?? new Limiter(parallel);
  const concurrent = limiter.slots > 1;
  // Loaded once per workload, and the confirmation run made once per workload, even when several
  // plans ask at the same time: both are kept as promises.
  const references = new Map<string, Promise<{ dirs: string[]; runs: RunArtifacts[] }>>();
  const referencesOf = (workload: string) => {
    let refs = references.get(workload);
    if (!refs) {
      const dirs = referenceDirs(layout, config, workload);
      refs = Promise.all(dirs.map(async (d) => (await loadRunDir(d)).artifacts)).then((runs) => ({ dirs, runs }));
      references.set(workload, refs);
    }
    return refs;
  };
  const confirmations = new Map<string, Promise<{ runDir: string; alarms: Alarm[] }>>();
  const confirmationOf = (workload: Workload, refs: RunArtifacts[], options: OracleOptions) => {
    let confirmation = confirmations.get(workload.name);
    if (!confirmation) {
      confirmation = (async () => {
        const confirmDir = layout.confirmationRun(workload.name);
        rmSync(confirmDir, { recursive: true, force: true });
        opts.log(`confirm ${config.name}/${workload.name}: re-running the workload without faults to check the alarmed fields are deterministic`);
        const c = await executeRun({ config, workload, runDir: confirmDir, log: opts.log, ...(opts.cluster ? { cluster: opts.cluster } : {}), ...(opts.signal ? { signal: opts.signal } : {}) });
        const cArtifacts = await fullArtifacts(confirmDir, c.record, c.artifacts);
        if (c.record.error) opts.log(`  the confirmation run failed (${c.record.error}); alarms stay unconfirmed`);
        return { runDir: confirmDir, alarms: c.record.error ? [] : runAlarms(refs, cArtifacts, c.record, options) };
      })();
      confirmations.set(workload.name, confirmation);
    }
    return confirmation;
  };

  mkdirSync(layout.root, { recursive: true });
  const earlier = otherWorkloadsResults(layout.resultsFile, new Set(plans.map((p) => p.spec.workload)));
  const results: Array<PlanResult | undefined> = new Array(plans.length);
  const finished = () => results.filter((r): r is PlanResult => r !== undefined);
  let started = 0;
  opts.progress?.begin(plans.length);

  const runPlan = async (p: TestPlan, i: number): Promise<void> => {
    if (opts.signal?.aborted) return;
    const workload = config.workloads.get(p.spec.workload)!;
    const refs = await referencesOf(workload.name);
    const options = oracleOptions(config, workload.name);
    const runDir = layout.testRun(workload.name, p.metadata.name);
    rmSync(runDir, { recursive: true, force: true });
    opts.log(`test ${config.name}/${workload.name} [${++started}/${plans.length}] ${p.metadata.name}: ${p.spec.description}`);
    opts.progress?.planStarted(`${p.metadata.name}: ${p.spec.description}`);
    // Lines of concurrent runs interleave: each says which plan it belongs to.
    const log: Log = concurrent ? (line) => opts.log(`[${p.metadata.name}] ${line.trimStart()}`) : opts.log;
    const run = await executeRun({ config, workload, runDir, plan: p, log, ...(opts.cluster ? { cluster: opts.cluster } : {}), ...(opts.signal ? { signal: opts.signal } : {}) });
    const artifacts = await fullArtifacts(runDir, run.record, run.artifacts);
    let decision = judgeTestRun(refs.runs, artifacts, run.record, options);
    let confirmation: { runDir: string; alarms: Alarm[] } | undefined;
    if (opts.confirm && decision.verdict === 'bug') {
      confirmation = await confirmationOf(workload, refs.runs, options);
      decision = applyConfirmation(decision, confirmation.alarms);
    }
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
      ...(decision.error ? { error: decision.error } : {}),
      referenceRunDirs: refs.dirs,
      ...(confirmation ? { confirmationRunDir: confirmation.runDir } : {}),
    };
    writeFileSync(join(runDir, 'verdict.json'), JSON.stringify(result, null, 2) + '\n');
    results[i] = result;
    writeResults(layout.resultsFile, [...earlier, ...finished()], earlier.length + plans.length, false);
    opts.progress?.planFinished(result);
    opts.onResult?.(result, i, plans.length);
  };

  const outcomes = await Promise.allSettled(plans.map((p, i) => limiter.run(() => runPlan(p, i))));
  if (opts.signal?.aborted) throw new InterruptedError(`${finished().length} of ${plans.length} plans finished; results in ${layout.resultsFile}`);
  const failure = outcomes.find((o): o is PromiseRejectedResult => o.status === 'rejected');
  if (failure) throw failure.reason;
  writeResults(layout.resultsFile, [...earlier, ...finished()], earlier.length + plans.length, true);
  return finished();
}

export function loadPlans(paths: string[]): TestPlan[] {
  return findPlanFiles(paths).map(loadPlanFile);
}
