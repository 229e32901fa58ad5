/** learn, plan and test: the three stages of a campaign against one controller. */
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import type { ControllerUnderTest, Workload } from '../config/config.js';
import { executeRun, type ClusterChoice, type RunOptions } from '../coordinator/run.js';
import { ControllerStandbys } from '../coordinator/standby.js';
import { ControlPlanePool } from '../realcluster/index.js';
import { serializePlan, type TestPlan } from '../model/plan.js';
import { loadPlanFile, planFileOf, rememberPlanFile } from '../io/plan-file.js';
import {
  RESULTS_FORMAT,
  type Alarm,
  type ContractMode,
  type NotRunPlan,
  type PlannedWorkload,
  type PlanResult,
  type ResultsFile,
  type RunArtifacts,
  type RunRecord,
  type UntestedWorkload,
} from '../model/results.js';
import { readTrace } from '../io/trace-io.js';
import { mergeTracesBySeq } from '../model/trace-merge.js';
import { InterruptedError, UserInputError } from '../model/errors.js';
import type { TraceEvent } from '../model/trace.js';
import { learnedQuietMs, planTestsStreaming, SilenceMeter, type PruningStats } from '../../planner/index.js';
import { applyConfirmation, judgeTestRun, runAlarms, type OracleOptions } from '../../oracles/index.js';
import { firstDivergence, groupFindings, stageThatEmptied, untestedWorkloads } from '../../oracles/findings.js';
import { confirmFindings, rerunOf, type FaultFreeRun } from './confirm-findings.js';
import { recoverFindings } from './recovery.js';
import { loadHealthInputs, loadRunDir, readJsonFile, readRunRecord, RUN_FILES } from '../io/run-dir.js';
import { validatePlanResult } from '../io/results-file.js';
import { recoverDirectory, replaceDirectory, writeFileAtomic } from '../io/atomic-files.js';
import { lockCampaignDir } from './campaign-lock.js';
import { redactAlarm } from '../model/redact.js';
import { CampaignLayout } from './layout.js';
import { useSecretHashKeyFile } from '../io/secret-hash-key.js';
import { Limiter } from './limiter.js';
import { softWaitWarnings } from './config-warnings.js';
import type { Shard } from './shard.js';

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
  /** Warnings (kept by `--quiet`, unlike `log`); default `log`. */
  warn?: Log;
}

function selectWorkloads(config: ControllerUnderTest, names: string[] | undefined): Workload[] {
  if (!names || names.length === 0) return [...config.workloads.values()];
  return names.map((n) => {
    const w = config.workloads.get(n);
    if (!w) throw new UserInputError(config.file, 'workloads', `a workload named "${n}" (it has: ${[...config.workloads.keys()].join(', ')})`);
    return w;
  });
}

/** Every run of a campaign hashes Secret values with the campaign's key, so the hashes compare. */
function useCampaignSecretHashKey(layout: CampaignLayout): void {
  mkdirSync(layout.out, { recursive: true });
  useSecretHashKeyFile(layout.secretHashKeyFile);
}

export interface LearnSummary {
  workload: string;
  /** `name`: `ref-<n>`, or `normal-<n>` for a normal-delivery run (see NORMAL_DELIVERY_RUNS). */
  runs: Array<{ name: string; dir: string; ok: boolean; durationMs: number; error?: string }>;
}

/**
 * With `--serialize`, learn also runs each workload this many times with normal delivery: plans are
 * tested with normal delivery, and the planner keeps only triggers that fire in these runs too (a
 * controller that batches events writes less often when it gets them together).
 */
export const NORMAL_DELIVERY_RUNS = 1;

/** Runs `fn` holding the campaign directory's lock (see campaign-lock.ts). */
async function withCampaignLock<T>(layout: CampaignLayout, log: Log, fn: () => Promise<T>): Promise<T> {
  const release = lockCampaignDir(layout.root, log);
  try {
    return await fn();
  } finally {
    release();
  }
}

export interface LearnOptions extends CampaignOptions {
  workloads?: string[];
  /** Causality learning: serialized watch delivery with this quiet window (see proxy/serialize.ts). */
  serialize?: { quietMs: number };
}

/** Runs every workload `config.referenceRuns` times without faults and keeps the runs. */
export async function learn(config: ControllerUnderTest, opts: LearnOptions): Promise<LearnSummary[]> {
  const layout = new CampaignLayout(opts.out, config.name);
  useCampaignSecretHashKey(layout);
  const selected = selectWorkloads(config, opts.workloads);
  for (const w of softWaitWarnings(config, selected)) (opts.warn ?? opts.log)(w);
  const runs = selected.length * (config.referenceRuns + (opts.serialize ? NORMAL_DELIVERY_RUNS : 0));
  return withCampaignLock(layout, opts.log, () =>
    withControlPlanePool(opts.cluster, runs, async (cluster) => {
      // Each run's controller starts loading while the run before it settles (src/coordinator/standby.ts).
      const standbys = runs > 1 ? new ControllerStandbys(config, runs, 'workload-done') : undefined;
      try {
        return await learnWorkloads(config, layout, { ...opts, ...cluster }, standbys);
      } finally {
        await standbys?.close();
      }
    }),
  );
}

async function learnWorkloads(
  config: ControllerUnderTest,
  layout: CampaignLayout,
  opts: LearnOptions,
  standbys: ControllerStandbys | undefined,
): Promise<LearnSummary[]> {
  const summaries: LearnSummary[] = [];
  const workloads = selectWorkloads(config, opts.workloads);
  const normalRuns = opts.serialize ? NORMAL_DELIVERY_RUNS : 0;
  let finishedRuns = 0;
  const interrupted = (err: unknown) =>
    opts.signal?.aborted
      ? new InterruptedError(
          `${finishedRuns} of ${workloads.length * (config.referenceRuns + normalRuns)} reference${normalRuns > 0 ? ' and normal-delivery' : ''} runs finished; runs in ${join(layout.root, 'learn')}`,
        )
      : err;
  for (const workload of workloads) {
    const summary: LearnSummary = { workload: workload.name, runs: [] };
    // The earlier reference runs stay until the new ones are all done.
    const replacement = replaceDirectory(layout.learnDir(workload.name));
    const runs = [
      ...Array.from({ length: config.referenceRuns }, (_, i) => ({ n: i + 1, normal: false })),
      ...Array.from({ length: normalRuns }, (_, i) => ({ n: i + 1, normal: true })),
    ];
    // The first run settles on the configured window; later ones on the window the runs before them
    // learned (as test runs will), unless kperturb.yaml sets settle.quietMs.
    const silences: number[] = [];
    for (const { n, normal } of runs) {
      const dir = normal ? layout.normalDeliveryRun(workload.name, n) : layout.referenceRun(workload.name, n);
      const runDir = normal ? layout.normalDeliveryRun(workload.name, n, replacement.path) : layout.referenceRun(workload.name, n, replacement.path);
      opts.log(
        normal
          ? `learn ${config.name}/${workload.name}: normal-delivery run ${n}/${normalRuns} (plans are tested with normal delivery: their triggers must fire in it)`
          : `learn ${config.name}/${workload.name}: reference run ${n}/${config.referenceRuns}`,
      );
      const serialize = opts.serialize && !normal ? { serializeDelivery: opts.serialize } : {};
      const quietMs = config.settle.quietMsGiven === false && silences.length > 0 ? learnedQuietMs(silences, config.settle.quietMs) : config.settle.quietMs;
      if (quietMs !== config.settle.quietMs) opts.log(`  it settles after ${quietMs} ms of quiet, learned from the runs before it`);
      const { record } = await executeRun({
        config: withQuietMs(config, quietMs),
        workload,
        runDir,
        log: opts.log,
        ...(standbys ? { standbys } : {}),
        ...(opts.cluster ? { cluster: opts.cluster } : {}),
        ...serialize,
        ...(opts.signal ? { signal: opts.signal } : {}),
      }).catch((err: unknown) => {
        throw interrupted(err);
      });
      const ok = !record.error && record.workloadOutcome.ok;
      const silence = ok ? await longestSilence(runDir, config) : undefined;
      if (silence !== undefined) silences.push(silence);
      const error = record.error ?? record.workloadOutcome.error;
      summary.runs.push({ name: `${normal ? 'normal' : 'ref'}-${n}`, dir, ok, durationMs: record.durationMs, ...(error ? { error } : {}) });
      finishedRuns++;
      if (!ok) opts.log(`  ${normal ? 'normal-delivery' : 'reference'} run ${n} failed: ${error}`);
    }
    replacement.commit();
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
  return mergeTracesBySeq([readTrace(join(runDir, RUN_FILES.controllerTrace)), readTrace(join(runDir, RUN_FILES.clusterTrace))]);
}

function referenceDirs(layout: CampaignLayout, config: ControllerUnderTest, workload: string): string[] {
  const dirs: string[] = [];
  for (let n = 1; n <= config.referenceRuns; n++) {
    const dir = layout.referenceRun(workload, n);
    if (existsSync(join(dir, RUN_FILES.record))) dirs.push(dir);
  }
  if (dirs.length === 0) {
    throw new UserInputError(layout.root, undefined, `reference runs of workload "${workload}" (none found: run \`kperturb learn\` first)`);
  }
  return dirs;
}

/** The normal-delivery runs `learn --serialize` made beside the reference runs (none for other learn directories). */
function normalDeliveryDirs(layout: CampaignLayout, workload: string): string[] {
  const dirs: string[] = [];
  for (let n = 1; existsSync(join(layout.normalDeliveryRun(workload, n), RUN_FILES.record)); n++) dirs.push(layout.normalDeliveryRun(workload, n));
  return dirs;
}

export const PRUNING_FORMAT = 'kperturb.dev/pruning/v1';

/**
 * Derives test plans from the reference runs of each workload (plans come from the last run, the
 * others and the normal-delivery runs, if any, tell which triggers are deterministic) and writes
 * them as YAML, with the pruning table in pruning.json. `prune: false` writes every plan the rules
 * can express, unpruned.
 */
export async function plan(config: ControllerUnderTest, opts: PlanOptions): Promise<PlanSummary[]> {
  const layout = new CampaignLayout(opts.out, config.name);
  useCampaignSecretHashKey(layout);
  return withCampaignLock(layout, opts.log, () => planWorkloads(config, layout, opts));
}

export interface PlanOptions extends CampaignOptions {
  workloads?: string[];
  prune?: boolean;
}

async function planWorkloads(config: ControllerUnderTest, layout: CampaignLayout, opts: PlanOptions): Promise<PlanSummary[]> {
  const summaries: PlanSummary[] = [];
  const selected = selectWorkloads(config, opts.workloads);
  for (const w of softWaitWarnings(config, selected)) (opts.warn ?? opts.log)(w);
  for (const workload of selected) {
    const refs = referenceDirs(layout, config, workload.name);
    const normal = normalDeliveryDirs(layout, workload.name);
    const masks = config.masks.filter((m) => !m.workload || m.workload === workload.name).map((m) => ({ key: m.key, paths: m.paths }));
    const output = await planTestsStreaming({
      controller: config.name,
      workload: workload.name,
      references: refs.map(mergedTrace),
      normalDelivery: normal.map(mergedTrace),
      options: { prune: opts.prune ?? true, quietMs: config.settle.quietMs, masks },
    });
    const { plans, stats } = output;
    if (output.causality === 'serialized-episodes' && normal.length === 0) {
      // A learn directory from before learn --serialize made normal-delivery runs.
      opts.log(
        `plan ${config.name}/${workload.name}: the reference runs are serialized and there is no normal-delivery run beside them; triggers are not checked against normal delivery, and plans whose trigger a normal run does not reproduce end not-injected (run \`kperturb learn --serialize\` again to record one)`,
      );
    }
    const dir = layout.plansDir(workload.name);
    const replacement = replaceDirectory(dir);
    for (const p of plans) {
      writeFileSync(join(replacement.path, `${p.metadata.name}.yaml`), serializePlan(p));
      rememberPlanFile(p, join(dir, `${p.metadata.name}.yaml`)); // where it is once the directory is in place
    }
    const pruning = {
      format: PRUNING_FORMAT,
      controller: config.name,
      workload: workload.name,
      pruned: opts.prune ?? true,
      causality: output.causality,
      referenceRuns: refs.map((r, i) => ({ dir: r, events: output.events[i] })),
      normalDeliveryRuns: normal.map((r, i) => ({ dir: r, events: output.normalDelivery.events[i] })),
      unreproducedTriggers: output.normalDelivery.unreproducedTriggers,
      patterns: stats,
    };
    writeFileSync(join(replacement.path, 'pruning.json'), JSON.stringify(pruning, null, 2) + '\n');
    replacement.commit();
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
        // Hidden entries: a plans directory being replaced (see `plan`), editors' files.
        if (entry.startsWith('.')) continue;
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

/** A run's artifacts with the health and liveness inputs read back from its directory. */
/**
 * The configuration a workload's test runs use: with no `settle.quietMs` in kperturb.yaml, the quiet
 * window learned from its reference runs' controller traces (planner/quiet-window.ts), so that a
 * controller that never stays silent long before acting again does not make every plan wait the
 * default second at each settle.
 */
async function settleConfig(config: ControllerUnderTest, workload: string, referenceDirs: readonly string[], log: Log): Promise<ControllerUnderTest> {
  if (config.settle.quietMsGiven !== false || referenceDirs.length === 0) return config;
  const silences: number[] = [];
  for (const dir of referenceDirs) {
    const silence = await longestSilence(dir, config);
    if (silence === undefined) return config;
    silences.push(silence);
  }
  const quietMs = learnedQuietMs(silences, config.settle.quietMs);
  if (quietMs === config.settle.quietMs) return config;
  log(
    `${config.name}/${workload}: runs settle after ${quietMs} ms of quiet (the reference runs' controller was never silent longer than ${Math.max(...silences)} ms before acting again; settle.quietMs in kperturb.yaml sets it)`,
  );
  return withQuietMs(config, quietMs);
}

/** The longest silence before a request in a run's controller trace (planner/quiet-window.ts); undefined without a trace. */
async function longestSilence(runDir: string, config: ControllerUnderTest): Promise<number | undefined> {
  const file = join(runDir, RUN_FILES.controllerTrace);
  if (!existsSync(file)) return undefined;
  const meter = new SilenceMeter(config.settle.quietMs);
  for await (const e of readTrace(file)) meter.add(e);
  return meter.result();
}

const withQuietMs = (config: ControllerUnderTest, quietMs: number): ControllerUnderTest => ({ ...config, settle: { ...config.settle, quietMs } });

async function fullArtifacts(runDir: string, record: RunRecord, artifacts: RunArtifacts): Promise<RunArtifacts> {
  return { ...artifacts, ...(await loadHealthInputs(runDir, record)) };
}

/** One entry per workload and plan in results.json. */
const resultKey = (r: { workload: string; plan: string }) => `${r.workload}/${r.plan}`;

/** The entries of an existing results.json; an unreadable file is replaced. */
function readResultEntries(file: string): PlanResult[] {
  if (!existsSync(file)) return [];
  try {
    const doc = JSON.parse(readFileSync(file, 'utf8')) as Partial<ResultsFile>;
    return doc.format === RESULTS_FORMAT && Array.isArray(doc.results) ? doc.results : [];
  } catch {
    return [];
  }
}

/**
 * Writes results.json: the latest verdict of every plan of the controller. `results` (this test's
 * finished and kept verdicts) replace their plans' entries; the other plans' entries stay (testing
 * one plan keeps the rest), except those of a tested workload that were judged against other
 * reference runs than `inputs` names (a new `learn`: they would mix two campaigns). The file is
 * read again before every write, so that test() calls running at once (the demo's) keep each
 * other's results. `planned`: this test's plans, counted with the other entries.
 */
function writeResults(
  file: string,
  results: PlanResult[],
  planned: readonly TestPlan[],
  inputs: ReadonlyMap<string, VerdictInputs['referenceRunsStartedAt']>,
  complete: boolean,
  workloads: readonly PlannedWorkload[],
  shard?: Shard,
): void {
  const fresh = new Map(results.map((r) => [resultKey(r), r]));
  const stillValid = (r: PlanResult) => {
    const references = inputs.get(r.workload);
    return references === undefined || isDeepStrictEqual(r.inputs?.referenceRunsStartedAt, references);
  };
  const merged: PlanResult[] = [];
  for (const r of readResultEntries(file)) {
    const replacement = fresh.get(resultKey(r));
    if (replacement) merged.push(replacement);
    else if (stillValid(r)) merged.push(r);
    fresh.delete(resultKey(r));
  }
  merged.push(...fresh.values());
  const keys = new Set([...merged.map(resultKey), ...planned.map((p) => resultKey({ workload: p.spec.workload, plan: p.metadata.name }))]);
  const have = new Set(merged.map(resultKey));
  const notRun: NotRunPlan[] = complete
    ? []
    : planned
        .filter((p) => !have.has(resultKey({ workload: p.spec.workload, plan: p.metadata.name })))
        .map((p) => ({
          controller: p.spec.controller,
          workload: p.spec.workload,
          plan: p.metadata.name,
          pattern: p.spec.pattern,
          description: p.spec.description,
        }));
  const doc: ResultsFile = {
    format: RESULTS_FORMAT,
    results: merged,
    complete,
    planned: keys.size,
    ...(notRun.length > 0 ? { notRun } : {}),
    ...(shard ? { shard: { index: shard.index, count: shard.count } } : {}),
    workloads: [...workloads],
    ...untestedAndFindings(workloads, merged),
  };
  // Written after every plan, through a rename, so an interrupted campaign leaves a readable file.
  writeFileAtomic(file, JSON.stringify(doc, null, 2) + '\n');
}

/** results.json's `untested` and `findings` (absent when empty): what `report` leads with, for scripts reading the file. */
function untestedAndFindings(workloads: readonly PlannedWorkload[], results: readonly PlanResult[]): Pick<ResultsFile, 'untested' | 'findings'> {
  const untested = untestedWorkloads(workloads, results);
  const findings = groupFindings(results);
  return { ...(untested.length > 0 ? { untested } : {}), ...(findings.length > 0 ? { findings } : {}) };
}

/**
 * The controller's workloads that have been planned (their plans directory holds pruning.json), with
 * how many plans the planner kept and, when it kept none, the stage that emptied every pattern.
 */
export function plannedWorkloads(config: ControllerUnderTest, layout: CampaignLayout): PlannedWorkload[] {
  const out: PlannedWorkload[] = [];
  for (const workload of config.workloads.keys()) {
    const dir = layout.plansDir(workload);
    const file = join(dir, 'pruning.json');
    if (!existsSync(file)) continue;
    let pruning: { patterns?: PruningStats[]; referenceRuns?: unknown[] };
    try {
      pruning = JSON.parse(readFileSync(file, 'utf8')) as typeof pruning;
    } catch {
      continue;
    }
    const plans = readdirSync(dir).filter((f) => /\.ya?ml$/.test(f)).length;
    const emptiedBy = plans === 0 ? stageThatEmptied(pruning.patterns ?? []) : undefined;
    out.push({
      controller: config.name,
      workload,
      plans,
      ...(emptiedBy ? { emptiedBy } : {}),
      ...(Array.isArray(pruning.referenceRuns) ? { referenceRuns: pruning.referenceRuns.length } : {}),
    });
  }
  return out;
}

/**
 * The workloads of the controller's campaign in `out` that tested nothing, from its results.json (so
 * plans tested earlier count) and its plans directories: what `kperturb test` reports and exits 3 for.
 */
export function campaignUntested(config: ControllerUnderTest, out: string): UntestedWorkload[] {
  const layout = new CampaignLayout(out, config.name);
  return untestedWorkloads(plannedWorkloads(config, layout), readResultEntries(layout.resultsFile));
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
  return withCampaignLock(layout, opts.log, () => testPlans(config, layout, plans, opts));
}

async function testPlans(config: ControllerUnderTest, layout: CampaignLayout, plans: TestPlan[], opts: TestOptions): Promise<PlanResult[]> {
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
  useCampaignSecretHashKey(layout);
  const parallel = effectiveParallel(config, opts.parallel ?? 1);
  if (!opts.limiter && parallel < (opts.parallel ?? 1))
    opts.log(`${config.name}: running at most ${parallel} plan(s) at once (controller.maxParallel in ${config.file})`);
  const limiter = opts.limiter ?? new Limiter(parallel);
  const concurrent = limiter.slots > 1;
  // Loaded once per workload, and the confirmation run made once per workload, even when several
  // plans ask at the same time: both are kept as promises.
  const references = new Map<string, Promise<{ dirs: string[]; runs: RunArtifacts[]; config: ControllerUnderTest }>>();
  const referencesOf = (workload: string) => {
    let refs = references.get(workload);
    if (!refs) {
      const dirs = referenceDirs(layout, config, workload);
      refs = Promise.all([Promise.all(dirs.map(async (d) => (await loadRunDir(d)).artifacts)), settleConfig(config, workload, dirs, opts.log)]).then(
        ([runs, settled]) => ({ dirs, runs, config: settled }),
      );
      references.set(workload, refs);
    }
    return refs;
  };
  const confirmations = new Map<string, Promise<FaultFreeRun>>();
  const confirmationOf = (workload: Workload, refs: RunArtifacts[], runConfig: ControllerUnderTest, options: OracleOptions) => {
    let confirmation = confirmations.get(workload.name);
    if (!confirmation) {
      confirmation = (async () => {
        const confirmDir = layout.confirmationRun(workload.name);
        const replacement = replaceDirectory(confirmDir);
        opts.log(`confirm ${config.name}/${workload.name}: re-running the workload without faults to check the alarmed fields are deterministic`);
        const c = await executeRun({
          config: runConfig,
          workload,
          runDir: replacement.path,
          log: opts.log,
          ...(opts.cluster ? { cluster: opts.cluster } : {}),
          ...(opts.signal ? { signal: opts.signal } : {}),
        });
        const cArtifacts = await fullArtifacts(replacement.path, c.record, c.artifacts);
        replacement.commit();
        if (c.record.error) {
          opts.log(`  the confirmation run failed (${c.record.error}); alarms stay unconfirmed`);
          return { runDir: confirmDir, alarms: [], error: c.record.error };
        }
        const alarms = runAlarms(refs, cArtifacts, c.record, options);
        const divergence = firstDivergence(refs, cArtifacts, alarms);
        return { runDir: confirmDir, alarms, ...(divergence ? { divergence } : {}) };
      })();
      confirmations.set(workload.name, confirmation);
    }
    return confirmation;
  };

  // What each verdict is judged from: kept verdicts must have been judged from the same.
  const referenceStarts = new Map<string, string[]>();
  for (const w of new Set(plans.map((p) => p.spec.workload))) {
    referenceStarts.set(
      w,
      referenceDirs(layout, config, w).map((d) => readRunRecord(join(d, RUN_FILES.record)).startedAt),
    );
  }
  const inputsOf = (p: TestPlan): VerdictInputs => ({
    planSha256: sha256(serializePlan(p)),
    referenceRunsStartedAt: referenceStarts.get(p.spec.workload)!,
    ...(opts.contract === 'strict' ? { contract: 'strict' as const } : {}),
  });
  const results: Array<PlanResult | undefined> = plans.map((p) =>
    opts.rerun ? undefined : finishedVerdict(layout.testRun(p.spec.workload, p.metadata.name), p, inputsOf(p)),
  );
  const toRun = plans.flatMap((_, i) => (results[i] ? [] : [i]));
  if (toRun.length < plans.length) {
    opts.log(`${config.name}: ${plans.length - toRun.length} of ${plans.length} plans already have verdicts; running ${toRun.length}; --rerun to run all`);
  }
  const finished = () => results.filter((r): r is PlanResult => r !== undefined);
  const workloads = plannedWorkloads(config, layout);
  writeResults(layout.resultsFile, finished(), plans, referenceStarts, toRun.length === 0, workloads, opts.shard);
  let started = 0;
  opts.progress?.begin(toRun.length);

  // Each plan's controller starts loading while an earlier plan's run goes on (src/coordinator/standby.ts).
  const standbys = toRun.length > 1 ? new ControllerStandbys(config, toRun.length) : undefined;
  /**
   * Runs plan `p` in `runDir` (filled aside, put in place when judged) and judges it: a plan's test
   * run, and each re-run of a finding's reproducer (confirmFindings), the same way. `planRun`: the
   * plan's own run, which takes a standby controller and writes verdict.json (re-runs have none:
   * `report` reads a directory's verdict.json files as plans' results).
   */
  const runAndJudge = async (p: TestPlan, runDir: string, log: Log, planRun: boolean, afterSettle?: RunOptions['afterSettle']): Promise<PlanResult> => {
    const workload = config.workloads.get(p.spec.workload)!;
    const refs = await referencesOf(workload.name);
    const options = oracleOptions(config, workload.name);
    // Run aside: an earlier run of the plan stays in place until this one has its verdict.
    const replacement = replaceDirectory(runDir);
    const run = await executeRun({
      config: refs.config,
      workload,
      runDir: replacement.path,
      plan: p,
      log,
      ...(standbys && planRun ? { standbys } : {}),
      ...(opts.cluster ? { cluster: opts.cluster } : {}),
      ...(opts.contract ? { contract: opts.contract } : {}),
      ...(opts.signal ? { signal: opts.signal } : {}),
      ...(afterSettle ? { afterSettle } : {}),
    });
    const artifacts = await fullArtifacts(replacement.path, run.record, run.artifacts);
    let decision = judgeTestRun(refs.runs, artifacts, run.record, options);
    let confirmation: { runDir: string; alarms: Alarm[] } | undefined;
    if (opts.confirm && decision.verdict === 'bug') {
      confirmation = await confirmationOf(workload, refs.runs, refs.config, options);
      decision = applyConfirmation(decision, confirmation.alarms);
    }
    // Where the run departed from the references: what its finding is grouped by (oracles/findings.ts).
    const divergence = decision.verdict === 'bug' || decision.verdict === 'flaky' ? firstDivergence(refs.runs, artifacts, decision.alarms) : undefined;
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
      inputs: inputsOf(p),
      ...(run.record.beyondContract ? { beyondContract: run.record.beyondContract } : {}),
      ...(divergence ? { divergence } : {}),
      size: { faults: p.spec.faults.length, steps: workload.steps.length },
    };
    if (planRun) writeFileAtomic(join(replacement.path, RUN_FILES.verdict), JSON.stringify(result, null, 2) + '\n');
    replacement.commit();
    return result;
  };
  // Lines of concurrent runs interleave: each says which run it belongs to.
  const runLog = (label: string): Log => (concurrent ? (line) => opts.log(`[${label}] ${line.trimStart()}`) : opts.log);

  const runPlan = async (p: TestPlan, i: number): Promise<void> => {
    if (opts.signal?.aborted) return;
    opts.log(`test ${config.name}/${p.spec.workload} [${++started}/${toRun.length}] ${p.metadata.name}: ${p.spec.description}`);
    opts.progress?.planStarted(`${p.metadata.name}: ${p.spec.description}`);
    const result = await runAndJudge(p, layout.testRun(p.spec.workload, p.metadata.name), runLog(p.metadata.name), true);
    results[i] = result;
    writeResults(layout.resultsFile, finished(), plans, referenceStarts, false, workloads, opts.shard);
    opts.progress?.planFinished(result);
    opts.onResult?.(result, i, plans.length);
  };

  let outcomes: Array<PromiseSettledResult<void>>;
  try {
    outcomes = await withControlPlanePool(opts.cluster, toRun.length, (cluster) => {
      // runPlan and the confirmation run read opts.cluster when they start: from here on, the pool's.
      opts = { ...opts, ...cluster };
      return Promise.allSettled(toRun.map((i) => limiter.run(() => runPlan(plans[i]!, i))));
    });
  } finally {
    await standbys?.close();
  }
  if (opts.signal?.aborted) throw new InterruptedError(`${finished().length} of ${plans.length} plans finished; results in ${layout.resultsFile}`);
  const failure = outcomes.find((o): o is PromiseRejectedResult => o.status === 'rejected');
  if (failure) throw failure.reason;
  // A result that got re-runs or recovery attempts: kept in its verdict.json and results.json.
  const saveResult = (i: number) => {
    writeFileAtomic(join(results[i]!.runDir, RUN_FILES.verdict), JSON.stringify(results[i], null, 2) + '\n');
    writeResults(layout.resultsFile, finished(), plans, referenceStarts, false, workloads, opts.shard);
  };
  const withPool = (n: number, stage: () => Promise<void>) =>
    withControlPlanePool(opts.cluster, n, (cluster) => {
      opts = { ...opts, ...cluster };
      return stage();
    });
  await confirmFindings({
    config,
    layout,
    plans,
    results,
    runs: opts.confirmRuns ?? 0,
    log: opts.log,
    limiter,
    ...(opts.signal ? { signal: opts.signal } : {}),
    withPool,
    rerun: async (p, runDir, label) => rerunOf(await runAndJudge(p, runDir, runLog(label), false), runDir),
    faultFree: async (workload) => {
      const refs = await referencesOf(workload);
      return confirmationOf(config.workloads.get(workload)!, refs.runs, refs.config, oracleOptions(config, workload));
    },
    save: saveResult,
  });
  if (opts.recovery) {
    await recoverFindings({
      config,
      layout,
      plans,
      results,
      log: opts.log,
      limiter,
      ...(opts.signal ? { signal: opts.signal } : {}),
      withPool,
      references: async (workload) => ({ runs: (await referencesOf(workload)).runs, options: oracleOptions(config, workload) }),
      faultFreeAlarms: async (workload) => {
        const refs = await referencesOf(workload);
        return (await confirmationOf(config.workloads.get(workload)!, refs.runs, refs.config, oracleOptions(config, workload))).alarms;
      },
      run: async (p, runDir, label, afterSettle) => (await runAndJudge(p, runDir, runLog(label), false, afterSettle)).error,
      faultFreeRun: async (workload, runDir, afterSettle) => {
        const refs = await referencesOf(workload);
        const replacement = replaceDirectory(runDir);
        const r = await executeRun({
          config: refs.config,
          workload: config.workloads.get(workload)!,
          runDir: replacement.path,
          log: runLog(`${workload} rollback reference`),
          afterSettle,
          ...(opts.cluster ? { cluster: opts.cluster } : {}),
          ...(opts.signal ? { signal: opts.signal } : {}),
        });
        replacement.commit();
        return r.record.error ? { error: r.record.error } : r.artifacts;
      },
      save: saveResult,
    });
  }
  if (opts.signal?.aborted)
    throw new InterruptedError(`${finished().length} of ${plans.length} plans finished, some findings unconfirmed; results in ${layout.resultsFile}`);
  writeResults(layout.resultsFile, finished(), plans, referenceStarts, true, workloads, opts.shard);
  return finished();
}

/**
 * On the real tier, the runs of a campaign stage take their control planes from a pool that starts
 * the next one while a run uses the current one (src/realcluster/pool.ts): every run still gets a
 * control plane nothing touched before. `cluster.pool: false` opts out; the pool is closed (its
 * unused control plane stopped) when the stage ends, however it ends.
 */
async function withControlPlanePool<T>(
  cluster: ClusterChoice | undefined,
  runs: number,
  stage: (choice: { cluster?: ClusterChoice }) => Promise<T>,
): Promise<T> {
  if (cluster?.kind !== 'real' || cluster.pool !== undefined || runs < 2) return stage(cluster ? { cluster } : {});
  const pool = new ControlPlanePool(cluster.binaries ? { binaries: cluster.binaries } : {}, runs);
  try {
    return await stage({ cluster: { ...cluster, pool } });
  } finally {
    await pool.close();
  }
}

export function loadPlans(paths: string[]): TestPlan[] {
  return findPlanFiles(paths).map(loadPlanFile);
}
