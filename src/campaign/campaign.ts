/** learn, plan and test: the three stages of a campaign against one controller. */
import { existsSync, mkdirSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { ControllerUnderTest, Workload } from '../config/config.js';
import { executeRun } from '../coordinator/run.js';
import { ControllerStandbys } from '../coordinator/standby.js';
import { serializePlan, type TestPlan } from '../model/plan.js';
import { loadPlanFile, rememberPlanFile } from '../io/plan-file.js';
import type { PlanResult } from '../model/results.js';
import { readTrace } from '../io/trace-io.js';
import { mergeTracesBySeq } from '../model/trace-merge.js';
import { InterruptedError, UserInputError } from '../model/errors.js';
import type { TraceEvent } from '../model/trace.js';
import { learnedQuietMs, MAX_REFERENCE_RUNS, planTestsStreaming, wantsMoreReferenceRuns, type PlannerOutput, type PruningStats } from '../../planner/index.js';
import { RUN_FILES } from '../io/run-files.js';
import { replaceDirectory } from '../io/atomic-files.js';
import { lockCampaignDir } from './campaign-lock.js';
import { CampaignLayout } from './layout.js';
import { useSecretHashKeyFile } from '../io/secret-hash-key.js';
import { softWaitWarnings } from './config-warnings.js';
import { checkServedKinds, checkWaitFields } from './preflight.js';
import { withControlPlanePool } from './control-plane-pool.js';
import { runSilence, runSilences, settleWindowWarning, SizedSettleWindow, withQuietMs, type RunSilence } from './quiet-window.js';
import { checkPlansFit, TestStage, type TestOptions } from './test-stage.js';
import type { CampaignOptions, Log } from './options.js';

export type { CampaignOptions, Log } from './options.js';
export type { TestOptions, TestProgress } from './test-stage.js';
export { effectiveParallel } from './test-stage.js';
export { campaignUntested, plannedWorkloads } from './campaign-results.js';

function selectWorkloads(config: ControllerUnderTest, names: string[] | undefined): Workload[] {
  if (!names || names.length === 0) return [...config.workloads.values()];
  return names.map((n) => {
    const w = config.workloads.get(n);
    if (!w) throw new UserInputError(config.file, 'workloads', `a workload named "${n}" (it has: ${[...config.workloads.keys()].join(', ')})`);
    return w;
  });
}

/**
 * Every run of a campaign hashes Secret values with the campaign's key, so the hashes compare. Plan
 * and test (`learned`) read the key the reference runs were recorded with: the learn folder without
 * the key file beside it is an error, not a new key.
 */
function useCampaignSecretHashKey(layout: CampaignLayout, learned = false): void {
  mkdirSync(layout.out, { recursive: true });
  useSecretHashKeyFile(layout.secretHashKeyFile, learned && hasEntries(layout.learnRoot) ? layout.learnRoot : undefined);
}

function hasEntries(dir: string): boolean {
  try {
    return readdirSync(dir).length > 0;
  } catch {
    return false;
  }
}

export interface LearnSummary {
  workload: string;
  /** `name`: `ref-<n>`, or `normal-<n>` for a normal-delivery run (see NORMAL_DELIVERY_RUNS). */
  runs: Array<{ name: string; dir: string; ok: boolean; durationMs: number; error?: string }>;
  /** The quiet window its runs settled on, when learn sized it from a run that showed the window too short (SizedSettleWindow). */
  sizedQuietMs?: number;
}

/**
 * With `--serialize`, learn also runs each workload this many times with normal delivery: plans are
 * tested with normal delivery, and the planner keeps only triggers that fire in these runs too (a
 * controller that batches events writes less often when it gets them together).
 */
export const NORMAL_DELIVERY_RUNS = 1;

/**
 * How many times learn runs a run again on a window sized from its silences (SizedSettleWindow): a
 * run that settled early shows only the part of a silence before it moved on (percona-server-mongodb-
 * operator: 2.4 s on the default window, 7.6 s on the window sized from that).
 */
const MAX_SIZING_RERUNS = 3;

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
  /** Record the cluster's Events in the runs' cluster traces (explore's sequences: RunOptions.recordEvents). */
  recordEvents?: boolean;
  /**
   * `false`: reference runs on a learned window do not wait, once settled, for a controller that let
   * its custom resource's spec changes go by without a request (SizedSettleWindow.awaitsAnswers;
   * explore's oracle runs, which start from the window the sequences' runs sized).
   */
  awaitAnswers?: boolean;
}

/** Runs every workload `config.referenceRuns` times without faults and keeps the runs. */
export async function learn(config: ControllerUnderTest, opts: LearnOptions): Promise<LearnSummary[]> {
  const layout = new CampaignLayout(opts.out, config.name);
  useCampaignSecretHashKey(layout);
  const selected = selectWorkloads(config, opts.workloads);
  // The embedded cluster only: --real and --kubeconfig serve their own release.
  if (!opts.cluster) {
    checkServedKinds(config, selected);
    checkWaitFields(config, selected);
  }
  for (const w of softWaitWarnings(config, selected)) (opts.warn ?? opts.log)(w);
  const runs = selected.length * (config.referenceRuns + (opts.serialize ? NORMAL_DELIVERY_RUNS : 0));
  const summaries = await withCampaignLock(layout, opts.log, () =>
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
  for (const s of summaries) {
    if (!s.runs.every((r) => r.ok)) continue;
    const warning = settleWindowWarning(
      s.sizedQuietMs !== undefined ? withQuietMs(config, s.sizedQuietMs) : config,
      s.referenceSilences,
      s.sizedQuietMs !== undefined,
    );
    if (warning) (opts.warn ?? opts.log)(warning);
  }
  return summaries.map(({ referenceSilences: _, ...summary }) => summary);
}

async function learnWorkloads(
  config: ControllerUnderTest,
  layout: CampaignLayout,
  opts: LearnOptions,
  standbys: ControllerStandbys | undefined,
): Promise<Array<LearnSummary & { referenceSilences: RunSilence[] }>> {
  const summaries: Array<LearnSummary & { referenceSilences: RunSilence[] }> = [];
  const workloads = selectWorkloads(config, opts.workloads);
  const normalRuns = opts.serialize ? NORMAL_DELIVERY_RUNS : 0;
  // A window the runs show too short is sized from what they show, for the rest of this learn.
  const sized = new SizedSettleWindow(config);
  let finishedRuns = 0;
  const interrupted = (err: unknown) =>
    opts.signal?.aborted
      ? new InterruptedError(
          `${finishedRuns} of ${workloads.length * (config.referenceRuns + normalRuns)} reference${normalRuns > 0 ? ' and normal-delivery' : ''} runs finished; runs in ${join(layout.root, 'learn')}`,
        )
      : err;
  for (const workload of workloads) {
    // Each run's trace is read once, after it: for the window later runs settle on and for the warning after learn.
    const summary: LearnSummary & { referenceSilences: RunSilence[] } = { workload: workload.name, runs: [], referenceSilences: [] };
    // The earlier reference runs stay until the new ones are all done.
    const replacement = replaceDirectory(layout.learnDir(workload.name));
    const runs = [
      ...Array.from({ length: config.referenceRuns }, (_, i) => ({ n: i + 1, normal: false })),
      ...Array.from({ length: normalRuns }, (_, i) => ({ n: i + 1, normal: true })),
    ];
    // The first run settles on the configured window; later ones on the window the runs before them
    // learned (as test runs will), unless kperturb.yaml sets settle.quietMs.
    const silences: number[] = [];
    const runOne = async (n: number, normal: boolean, of: number, reruns = 0): Promise<boolean> => {
      const dir = normal ? layout.normalDeliveryRun(workload.name, n) : layout.referenceRun(workload.name, n);
      const runDir = normal ? layout.normalDeliveryRun(workload.name, n, replacement.path) : layout.referenceRun(workload.name, n, replacement.path);
      opts.log(
        normal
          ? `learn ${config.name}/${workload.name}: normal-delivery run ${n}/${normalRuns} (plans are tested with normal delivery: their triggers must fire in it)`
          : `learn ${config.name}/${workload.name}: reference run ${n}/${of}`,
      );
      const serialize = opts.serialize && !normal ? { serializeDelivery: opts.serialize } : {};
      const quietMs = sized.window(
        config.settle.quietMsGiven === false && silences.length > 0 ? learnedQuietMs(silences, config.settle.quietMs) : config.settle.quietMs,
      );
      if (quietMs !== config.settle.quietMs)
        opts.log(`  it settles after ${quietMs} ms of quiet, ${sized.ms === undefined ? 'learned' : 'sized'} from the runs before it`);
      const { record } = await executeRun({
        config: withQuietMs(config, quietMs),
        workload,
        runDir,
        log: opts.log,
        ...(standbys ? { standbys } : {}),
        ...(opts.cluster ? { cluster: opts.cluster } : {}),
        ...serialize,
        ...(opts.recordEvents ? { recordEvents: true } : {}),
        ...(!normal && sized.awaitsAnswers && opts.awaitAnswers !== false ? { awaitAnswer: true } : {}),
        ...(opts.signal ? { signal: opts.signal } : {}),
      }).then(sized.awaited(dir, opts.log), (err: unknown) => {
        throw interrupted(err);
      });
      const ok = !record.error && record.workloadOutcome.ok;
      const silence = ok ? await runSilence(runDir, withQuietMs(config, quietMs), dir) : undefined;
      // A run on a short window moves on early, so it shows only part of a long silence: sized again while it grows.
      if (reruns < MAX_SIZING_RERUNS && !normal && sized.grow(silence, quietMs, opts.log)) {
        rmSync(runDir, { recursive: true, force: true });
        return runOne(n, normal, of, reruns + 1);
      }
      if (silence !== undefined) silences.push(silence.longest);
      if (silence !== undefined && !normal) summary.referenceSilences.push(silence);
      const error = record.error ?? record.workloadOutcome.error;
      summary.runs.push({ name: `${normal ? 'normal' : 'ref'}-${n}`, dir, ok, durationMs: record.durationMs, ...(error ? { error } : {}) });
      finishedRuns++;
      if (!ok) opts.log(`  ${normal ? 'normal-delivery' : 'reference'} run ${n} failed: ${error}`);
      return ok;
    };
    let allOk = true;
    for (const { n, normal } of runs) allOk = (await runOne(n, normal, config.referenceRuns)) && allOk;
    // Runs that disagree so much that the planner would keep fewer than half of its candidates: one
    // more run at a time, until a majority of them agree (planner/triggers.ts) or MAX_REFERENCE_RUNS.
    for (let n = config.referenceRuns + 1; allOk && !opts.serialize && config.referenceRuns >= 2 && n <= MAX_REFERENCE_RUNS; n++) {
      const dirs = Array.from({ length: n - 1 }, (_, i) => layout.referenceRun(workload.name, i + 1, replacement.path));
      if (!wantsMoreReferenceRuns((await planReferences(config, workload.name, dirs, [], true, false)).stats)) break;
      opts.log(`learn ${config.name}/${workload.name}: the ${n - 1} reference runs disagree on most triggers; one more run, for a majority`);
      allOk = await runOne(n, false, n);
    }
    replacement.commit();
    summaries.push(sized.ms !== undefined ? { ...summary, sizedQuietMs: sized.ms } : summary);
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

/** The plans of one workload from its reference runs (and normal-delivery runs), with the user's masks. */
function planReferences(
  config: ControllerUnderTest,
  workload: string,
  refs: readonly string[],
  normal: readonly string[],
  prune: boolean,
  select: boolean,
): Promise<PlannerOutput> {
  const masks = config.masks.filter((m) => !m.workload || m.workload === workload).map((m) => ({ key: m.key, paths: m.paths }));
  return planTestsStreaming({
    controller: config.name,
    workload,
    references: refs.map(mergedTrace),
    normalDelivery: normal.map(mergedTrace),
    options: { prune, select, quietMs: config.settle.quietMs, masks },
  });
}

/** The reference runs of a workload: the configured number, and those learn added for a majority (MAX_REFERENCE_RUNS). */
function referenceDirs(layout: CampaignLayout, config: ControllerUnderTest, workload: string): string[] {
  const dirs: string[] = [];
  for (let n = 1; n <= Math.max(config.referenceRuns, MAX_REFERENCE_RUNS); n++) {
    const dir = layout.referenceRun(workload, n);
    if (existsSync(join(dir, RUN_FILES.record))) dirs.push(dir);
    else if (n > config.referenceRuns) break;
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
  useCampaignSecretHashKey(layout, true);
  return withCampaignLock(layout, opts.log, () => planWorkloads(config, layout, opts));
}

export interface PlanOptions extends CampaignOptions {
  workloads?: string[];
  prune?: boolean;
  /**
   * Keep one plan per group of plans that exercise the same step of the controller (docs/planner.md,
   * "Selection"): `kperturb plan --select`. Default false, as for the CLI.
   */
  select?: boolean;
}

async function planWorkloads(config: ControllerUnderTest, layout: CampaignLayout, opts: PlanOptions): Promise<PlanSummary[]> {
  const summaries: PlanSummary[] = [];
  const selected = selectWorkloads(config, opts.workloads);
  for (const w of softWaitWarnings(config, selected)) (opts.warn ?? opts.log)(w);
  for (const workload of selected) {
    const refs = referenceDirs(layout, config, workload.name);
    const normal = normalDeliveryDirs(layout, workload.name);
    const settleWarning = settleWindowWarning(config, await runSilences(config, refs));
    if (settleWarning) (opts.warn ?? opts.log)(settleWarning);
    const select = (opts.select ?? false) && (opts.prune ?? true);
    const output = await planReferences(config, workload.name, refs, normal, opts.prune ?? true, select);
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
      selected: select,
      causality: output.causality,
      referenceRuns: refs.map((r, i) => ({ dir: r, events: output.events[i] })),
      normalDeliveryRuns: normal.map((r, i) => ({ dir: r, events: output.normalDelivery.events[i] })),
      unreproducedTriggers: output.normalDelivery.unreproducedTriggers,
      patterns: stats,
    };
    writeFileSync(join(replacement.path, 'pruning.json'), JSON.stringify(pruning, null, 2) + '\n');
    replacement.commit();
    const leftOut = select ? leftOutBySelection(stats) : 0;
    opts.log(
      `plan ${config.name}/${workload.name}: ${plans.length} plan(s) in ${dir}${leftOut > 0 ? ` (${leftOut} more left out, one kept per group of plans that exercise the same step: \`kperturb plan\` without --select writes every plan)` : ''}`,
    );
    summaries.push({ workload: workload.name, plans, stats, dir });
  }
  return summaries;
}

/** How many plans the `selected` stage left out, over all patterns. */
function leftOutBySelection(stats: readonly PruningStats[]): number {
  let out = 0;
  for (const { stages } of stats) {
    const i = stages.findIndex((s) => s.stage === 'selected');
    if (i > 0) out += stages[i - 1]!.plans - stages[i]!.plans;
  }
  return out;
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

/**
 * Runs plans, each on a fresh cluster, and judges each against the reference runs (./test-stage.ts).
 * With `parallel` (or a shared `limiter`) several plans run at once; results keep the plans' order.
 */
export async function test(config: ControllerUnderTest, plans: TestPlan[], opts: TestOptions): Promise<PlanResult[]> {
  const layout = new CampaignLayout(opts.out, config.name);
  return withCampaignLock(layout, opts.log, () => {
    checkPlansFit(config, plans);
    useCampaignSecretHashKey(layout, true);
    return new TestStage(config, layout, plans, opts, (workload) => referenceDirs(layout, config, workload)).run();
  });
}

export function loadPlans(paths: string[]): TestPlan[] {
  return findPlanFiles(paths).map(loadPlanFile);
}
