/**
 * A whole campaign of one controller, as a user runs it (a script, not a test): every workload of its
 * kperturb.yaml learned, planned (`--select` by default: one plan per group, docs/planner.md) and
 * tested with confirmation and recovery, each stage a `kperturb` process of its own. It prints what a
 * campaign costs and where a plan's seconds go:
 *
 * - per stage (learn, plan, test): wall time, and the 1-minute load average sampled every 30 s (the
 *   figures are upper bounds when other work shared the machine);
 * - plans, verdicts, findings by class;
 * - for every run the campaign made (reference runs, plan runs, each workload's fault-free run,
 *   each finding's confirmation re-runs, recovery runs: their run.json), how many and their seconds, and per phase (run.json `phasesMs`,
 *   src/model/results.ts RUN_PHASES) the total, the share and the median per run: what the time is
 *   spent waiting for (controller start-up, settle windows, another campaign's port) and what is
 *   kperturb's own (cluster, proxy, teardown).
 *
 *   npm run build && node dist/test/bench/operator-campaign.bench.js --config fixtures/operators/zookeeper/kperturb.yaml
 *     [--out DIR] [-j N] [--all] [--confirm-runs K] [--no-recovery]
 *   node dist/test/bench/operator-campaign.bench.js --read DIR      (only the breakdown of a campaign made before)
 *
 * --out           the campaign directory (default a new one under the system temp directory; kept)
 * -j              plans at once in `kperturb test` (default 1)
 * --all           every plan pruning leaves, not `plan --select`'s one per group
 * --confirm-runs  passed to `kperturb test` (default its own, 3)
 * --no-recovery   passed to `kperturb test`
 * --read DIR      no campaign: the breakdown of the campaign in DIR (every controller directory in it)
 *
 * A machine-hour here is an hour of this machine: the campaign's wall time (one `kperturb test` with
 * `-j N` uses the machine, not N machines).
 */
import { spawn } from 'node:child_process';
import { createWriteStream, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { RUN_PHASES, type ResultsFile, type RunPhase, type RunRecord } from '../../src/model/results.js';
import { median } from './_stats.js';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const argv = process.argv.slice(2);
const arg = (name: string) => {
  const i = argv.indexOf(name);
  return i >= 0 ? argv[i + 1] : undefined;
};
const has = (name: string) => argv.includes(name);

/** The kinds of runs a campaign makes, by the folder of the controller directory they are kept in. */
const RUN_FOLDERS = ['learn', 'test', 'confirm', 'reruns', 'recovery'] as const;
type RunFolder = (typeof RUN_FOLDERS)[number];
const FOLDER_TEXT: Record<RunFolder, string> = {
  learn: 'reference runs (learn)',
  test: 'plan runs (test)',
  confirm: 'fault-free runs (--confirm)',
  reruns: 'confirmation re-runs',
  recovery: 'recovery runs',
};

interface StageTime {
  stage: string;
  wallMs: number;
  exit: number | null;
  load: number[];
}

/** One `kperturb` command, its output appended to `log`, with the load sampled while it runs. */
function kperturb(stage: string, args: string[], log: string): Promise<StageTime> {
  return new Promise((done) => {
    const started = process.hrtime.bigint();
    const load: number[] = [loadavg()[0]!];
    const sampler = setInterval(() => load.push(loadavg()[0]!), 30_000);
    const out = createWriteStream(log, { flags: 'a' });
    out.write(`\n$ kperturb ${args.join(' ')}\n`);
    const child = spawn(process.execPath, [join(ROOT, 'bin', 'kperturb.js'), ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    child.stdout.pipe(out, { end: false });
    child.stderr.pipe(out, { end: false });
    let lastLine = '';
    child.stderr.on('data', (chunk: Buffer) => {
      const lines = chunk
        .toString('utf8')
        .split('\n')
        .filter((l) => l.trim() !== '');
      const last = lines[lines.length - 1];
      if (last && last !== lastLine) {
        lastLine = last;
        process.stderr.write(`\r[${stage}] ${last.slice(0, 110).padEnd(110)}`);
      }
    });
    child.on('close', (code) => {
      clearInterval(sampler);
      out.end();
      process.stderr.write('\n');
      done({ stage, wallMs: Number(process.hrtime.bigint() - started) / 1e6, exit: code, load });
    });
  });
}

/** Every run directory (one holding a run.json) under `dir`, however deep. */
function runDirs(dir: string): string[] {
  if (!existsSync(dir)) return [];
  if (existsSync(join(dir, 'run.json'))) return [dir];
  return readdirSync(dir)
    .map((name) => join(dir, name))
    .filter((p) => statSync(p).isDirectory())
    .flatMap(runDirs);
}

interface Breakdown {
  runs: number;
  totalMs: number;
  phases: Record<RunPhase, number[]>;
}

function breakdownOf(dirs: string[]): Breakdown {
  const phases = Object.fromEntries(RUN_PHASES.map((p) => [p, [] as number[]])) as Record<RunPhase, number[]>;
  let totalMs = 0;
  for (const d of dirs) {
    const record = JSON.parse(readFileSync(join(d, 'run.json'), 'utf8')) as RunRecord;
    totalMs += record.durationMs ?? 0;
    for (const p of RUN_PHASES) phases[p].push(record.phasesMs?.[p] ?? 0);
  }
  return { runs: dirs.length, totalMs, phases };
}

const seconds = (ms: number) => (ms / 1000).toFixed(ms < 10_000 ? 1 : 0);
const minutes = (ms: number) => `${(ms / 60_000).toFixed(1)} min`;

function printBreakdown(controllerDir: string): void {
  const name = controllerDir.split('/').pop()!;
  const resultsFile = join(controllerDir, 'results.json');
  console.log(`\n## ${name}`);
  if (existsSync(resultsFile)) {
    const results = JSON.parse(readFileSync(resultsFile, 'utf8')) as ResultsFile;
    const verdicts = new Map<string, number>();
    for (const r of results.results) verdicts.set(r.verdict, (verdicts.get(r.verdict) ?? 0) + 1);
    const classes = new Map<string, number>();
    for (const f of results.findings ?? []) classes.set(f.class, (classes.get(f.class) ?? 0) + 1);
    const list = (m: Map<string, number>) => [...m].map(([k, n]) => `${n} ${k}`).join(', ') || 'none';
    console.log(`plans: ${results.results.length}; verdicts: ${list(verdicts)}`);
    console.log(`findings: ${(results.findings ?? []).length} (${list(classes)})`);
    for (const f of results.findings ?? []) {
      const c = f.confirmation ? `, confirmed ${f.confirmation.failedAgain} of ${f.confirmation.runs}` : '';
      console.log(`  [${f.class}] ${f.summary} (${f.plans.length} plan${f.plans.length === 1 ? '' : 's'}${c}; recovery: ${f.recovery ?? 'not tried'})`);
    }
  }
  const all: Breakdown[] = [];
  console.log('\nruns                              count   seconds   median s');
  for (const folder of RUN_FOLDERS) {
    const b = breakdownOf(runDirs(join(controllerDir, folder)));
    if (b.runs === 0) continue;
    all.push(b);
    const perRun = b.totalMs / b.runs;
    console.log(`${FOLDER_TEXT[folder].padEnd(33)} ${String(b.runs).padStart(5)} ${seconds(b.totalMs).padStart(9)} ${seconds(perRun).padStart(10)}`);
  }
  const runs = all.reduce((n, b) => n + b.runs, 0);
  const totalMs = all.reduce((n, b) => n + b.totalMs, 0);
  console.log(`${'all runs'.padEnd(33)} ${String(runs).padStart(5)} ${seconds(totalMs).padStart(9)}`);
  console.log("\nwhere the runs' time went (run.json phasesMs; `fault`, the restarts and releases, is part of `settle`)");
  console.log('phase              total s   share   median per run s');
  for (const p of RUN_PHASES) {
    const xs = all.flatMap((b) => b.phases[p]);
    const total = xs.reduce((a, b) => a + b, 0);
    const share = p === 'fault' ? '' : `${((100 * total) / Math.max(1, totalMs)).toFixed(1)}%`;
    console.log(`${p.padEnd(16)} ${seconds(total).padStart(9)} ${share.padStart(7)} ${seconds(median(xs)).padStart(12)}`);
  }
}

/** The breakdown of every controller directory of a campaign directory (one holding runs). */
function printCampaign(dir: string): void {
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    if (statSync(p).isDirectory() && RUN_FOLDERS.some((f) => existsSync(join(p, f)))) printBreakdown(p);
  }
}

async function main(): Promise<void> {
  const read = arg('--read');
  if (read) {
    printCampaign(resolve(read));
    return;
  }
  const config = arg('--config');
  if (!config) throw new Error('--config FILE is needed (or --read DIR)');
  const out = resolve(arg('--out') ?? mkdtempSync(join(tmpdir(), 'kperturb-bench-operator-')));
  mkdirSync(out, { recursive: true });
  const log = join(out, 'bench.log');
  const jobs = arg('-j') ?? '1';
  const testArgs = ['test', '--confirm', '-j', jobs, '-c', config, '-o', out];
  if (arg('--confirm-runs')) testArgs.push('--confirm-runs', arg('--confirm-runs')!);
  if (has('--no-recovery')) testArgs.push('--no-recovery');
  console.log(`campaign of ${config} in ${out} (log: ${log}), kperturb test -j ${jobs}`);
  const stages: StageTime[] = [];
  for (const [stage, args] of [
    ['learn', ['learn', '-c', config, '-o', out]],
    ['plan', ['plan', ...(has('--all') ? [] : ['--select']), '-c', config, '-o', out]],
    ['test', testArgs],
  ] as const) {
    const t = await kperturb(stage, [...args], log);
    stages.push(t);
    // test exits 1 for a bug found, 3 for an untested workload: the campaign went on either way.
    if (t.exit !== 0 && !(stage === 'test' && (t.exit === 1 || t.exit === 3))) {
      console.log(`${stage} exited ${String(t.exit)}: see ${log}`);
      process.exitCode = 1;
      break;
    }
  }
  console.log('\nstage    wall         load (1-min) min / median / max');
  for (const s of stages) {
    console.log(
      `${s.stage.padEnd(8)} ${minutes(s.wallMs).padEnd(12)} ${Math.min(...s.load).toFixed(1)} / ${median(s.load).toFixed(1)} / ${Math.max(...s.load).toFixed(1)}`,
    );
  }
  const wall = stages.reduce((n, s) => n + s.wallMs, 0);
  console.log(`campaign ${minutes(wall)}: ${(wall / 3_600_000).toFixed(2)} machine-hours`);
  printCampaign(out);
}

await main();
