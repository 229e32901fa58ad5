/** learn, plan and test: the three stages of a campaign against one controller. */
import { existsSync, mkdirSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { ControllerUnderTest, Workload } from '../config/config.js';
import { executeRun, loadRunArtifacts } from '../coordinator/run.js';
import { loadPlanFile, serializePlan, type TestPlan } from '../model/plan.js';
import { RESULTS_FORMAT, type PlanResult, type ResultsFile, type RunArtifacts } from '../model/results.js';
import { readTraceAll } from '../model/trace-io.js';
import { UserInputError } from '../model/errors.js';
import type { TraceEvent } from '../model/trace.js';
import { planTests, type PruningStats } from '../../planner/index.js';
import { compareRuns } from '../../oracles/index.js';
import { decideVerdict } from '../../oracles/verdict.js';
import { CampaignLayout } from './layout.js';

export type Log = (line: string) => void;

export interface CampaignOptions {
  out: string;
  log: Log;
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
export async function learn(config: ControllerUnderTest, opts: CampaignOptions & { workloads?: string[] }): Promise<LearnSummary[]> {
  const layout = new CampaignLayout(opts.out, config.name);
  const summaries: LearnSummary[] = [];
  for (const workload of selectWorkloads(config, opts.workloads)) {
    const summary: LearnSummary = { workload: workload.name, runs: [] };
    rmSync(join(layout.root, 'learn', workload.name), { recursive: true, force: true });
    for (let n = 1; n <= config.referenceRuns; n++) {
      const dir = layout.referenceRun(workload.name, n);
      opts.log(`learn ${config.name}/${workload.name}: reference run ${n}/${config.referenceRuns}`);
      const { record } = await executeRun({ config, workload, runDir: dir, log: opts.log });
      const ok = !record.error && record.workloadOutcome.ok;
      const error = record.error ?? record.workloadOutcome.error;
      summary.runs.push({ dir, ok, durationMs: record.durationMs, ...(error ? { error } : {}) });
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

async function mergedTrace(runDir: string): Promise<TraceEvent[]> {
  const events = [
    ...(await readTraceAll(join(runDir, 'controller.trace.jsonl'))),
    ...(await readTraceAll(join(runDir, 'cluster.trace.jsonl'))),
  ];
  return events.filter((e) => e.type !== 'header').sort((a, b) => a.seq - b.seq);
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

/** Derives test plans from the last reference run of each workload and writes them as YAML. */
export async function plan(config: ControllerUnderTest, opts: CampaignOptions & { workloads?: string[] }): Promise<PlanSummary[]> {
  const layout = new CampaignLayout(opts.out, config.name);
  const summaries: PlanSummary[] = [];
  for (const workload of selectWorkloads(config, opts.workloads)) {
    const refs = referenceDirs(layout, config, workload.name);
    const trace = await mergedTrace(refs[refs.length - 1]!);
    const { plans, stats } = planTests({ controller: config.name, workload: workload.name, trace });
    const dir = layout.plansDir(workload.name);
    rmSync(dir, { recursive: true, force: true });
    mkdirSync(dir, { recursive: true });
    for (const p of plans) writeFileSync(join(dir, `${p.metadata.name}.yaml`), serializePlan(p));
    writeFileSync(join(dir, 'pruning.json'), JSON.stringify(stats, null, 2) + '\n');
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

export interface TestOptions extends CampaignOptions {
  onResult?: (result: PlanResult, index: number, total: number) => void;
}

/** Runs plans, each on a fresh cluster, and judges each against the reference runs. */
export async function test(config: ControllerUnderTest, plans: TestPlan[], opts: TestOptions): Promise<PlanResult[]> {
  const layout = new CampaignLayout(opts.out, config.name);
  const references = new Map<string, RunArtifacts[]>();
  const results: PlanResult[] = [];
  for (const p of plans) {
    if (p.spec.controller !== config.name) {
      throw new UserInputError(undefined, undefined, `plan ${p.metadata.name} is for controller "${p.spec.controller}", but the config is for "${config.name}"`);
    }
    if (!config.workloads.has(p.spec.workload)) {
      throw new UserInputError(undefined, undefined, `plan ${p.metadata.name} names workload "${p.spec.workload}", which ${config.file} does not define`);
    }
  }
  for (const [i, p] of plans.entries()) {
    const workload = config.workloads.get(p.spec.workload)!;
    let refs = references.get(workload.name);
    if (!refs) {
      refs = referenceDirs(layout, config, workload.name).map(loadRunArtifacts);
      references.set(workload.name, refs);
    }
    const runDir = layout.testRun(workload.name, p.metadata.name);
    rmSync(runDir, { recursive: true, force: true });
    opts.log(`test ${config.name}/${workload.name} [${i + 1}/${plans.length}] ${p.metadata.name}: ${p.spec.description}`);
    const { record, artifacts } = await executeRun({ config, workload, runDir, plan: p, log: opts.log });
    const masks = config.masks.filter((m) => !m.workload || m.workload === workload.name).map((m) => ({ keyGlob: m.key, paths: m.paths }));
    const stateAlarms = record.injected ? compareRuns(refs, artifacts, { extraMasks: masks }) : [];
    const decision = decideVerdict(record, stateAlarms);
    const result: PlanResult = {
      plan: p.metadata.name,
      controller: config.name,
      workload: workload.name,
      pattern: p.spec.pattern,
      description: p.spec.description,
      verdict: decision.verdict,
      injected: record.injected === true,
      alarms: decision.alarms,
      durationMs: record.durationMs,
      runDir,
      ...(decision.error ? { error: decision.error } : {}),
    };
    writeFileSync(join(runDir, 'verdict.json'), JSON.stringify(result, null, 2) + '\n');
    results.push(result);
    opts.onResult?.(result, i, plans.length);
  }
  const file: ResultsFile = { format: RESULTS_FORMAT, results };
  mkdirSync(layout.root, { recursive: true });
  writeFileSync(layout.resultsFile, JSON.stringify(file, null, 2) + '\n');
  return results;
}

export function loadPlans(paths: string[]): TestPlan[] {
  return findPlanFiles(paths).map(loadPlanFile);
}
