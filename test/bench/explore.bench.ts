/**
 * Explore benchmark (a script, not a test): how fast `kperturb explore` runs generated operations on
 * this machine, and where the seconds go. For each config it runs one `kperturb explore` into a fresh
 * output directory (the same --seed and --steps for all), then reads its results.json and every
 * run's run.json (the sequences' runs and those of the rollback and differential oracles) and prints:
 *   - sequences, operations run (steps not `not-run`), wall time, operations per minute, and the
 *     whole exploration in machine-hours (Acto: 4.7 to 57.5 per operator on kind, its paper's table);
 *   - properties covered of the CRDs' total;
 *   - runs by kind (sequence, rollback, differential) and their time;
 *   - per run phase (cluster, setup, proxy, controllerStart, workload, settle, endState, teardown):
 *     median and total over the runs; `rest` is the process's time besides the runs (generation,
 *     judging, writing results).
 *
 *   npm run bench:explore                     (the bundled exporter-toggle example, fixed variant)
 *   npm run bench:explore -- --config fixtures/current/zookeeper-operator/upstream/kperturb.yaml
 *   npm run bench:explore -- --config A.yaml --config B.yaml --seed 2 --steps 3 --sequences 10 --differential
 *
 * --sequences N   only the first N sequences of the campaign (`explore --emit` names them), for a
 *                 quick rate; without it the whole exploration runs (every property once)
 * --baseline REF  also run the same explorations with the kperturb of REF (a commit, built in a
 *                 temporary git worktree), one after the other per config, and print the ratios
 * --out DIR       where the campaigns go (default a new directory under the system temp directory)
 * --confirm-runs K  re-run each bug finding's reproducer K times (explore's --confirm-runs; default 0
 *                 here, so that the exploration itself is measured and a baseline that predates the
 *                 option runs the same); the findings and their confirmation are printed either way
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';
import type { RunPhase, RunRecord } from '../../src/model/results.js';
import type { ExploreResults } from '../../src/campaign/explore.js';
import { parseRollbackName } from '../../planner/explore/rollback.js';
import { median } from './_stats.js';
import { buildBaseline } from './_baseline.js';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const args = process.argv.slice(2);
const values = (name: string) => args.flatMap((a, i) => (a === name && args[i + 1] !== undefined ? [args[i + 1]!] : []));
const arg = (name: string) => values(name).at(-1);
const CONFIGS = values('--config').map((c) => resolve(c));
if (CONFIGS.length === 0) CONFIGS.push(join(ROOT, 'fixtures', 'controllers', 'exporter-toggle', 'fixed', 'kperturb.yaml'));
const SEED = arg('--seed') ?? '1';
const STEPS = arg('--steps');
const SEQUENCES = arg('--sequences') !== undefined ? Number(arg('--sequences')) : undefined;
const DIFFERENTIAL = args.includes('--differential');
const OUT = arg('--out') ?? mkdtempSync(join(tmpdir(), 'kperturb-bench-explore-'));
const BASELINE = arg('--baseline');
const CONFIRM_RUNS = arg('--confirm-runs') ?? '0';
const PHASES: RunPhase[] = ['cluster', 'setup', 'proxy', 'controllerStart', 'workload', 'settle', 'endState', 'teardown'];

function kperturb(root: string, argv: string[]): { wallMs: number; status: number | null; out: string } {
  const t = process.hrtime.bigint();
  const r = spawnSync(process.execPath, [join(root, 'bin', 'kperturb.js'), ...argv], { encoding: 'utf8', maxBuffer: 1 << 28 });
  return { wallMs: Number(process.hrtime.bigint() - t) / 1e6, status: r.status, out: r.stdout + r.stderr };
}

/** The first `n` sequence names of the campaign `explore --emit` writes for `config`. */
function firstSequences(config: string, n: number): string[] {
  const dir = mkdtempSync(join(OUT, 'emit-'));
  const r = kperturb(ROOT, ['explore', '-c', config, '--emit', dir, '--seed', SEED, ...(STEPS ? ['--steps', STEPS] : [])]);
  if (r.status !== 0) throw new Error(`kperturb explore --emit failed:\n${r.out}`);
  const emitted = JSON.parse(readFileSync(join(dir, 'explore.json'), 'utf8')) as { sequences: Array<{ name: string }> };
  return emitted.sequences.slice(0, n).map((s) => s.name);
}

type RunKind = 'sequence' | 'rollback' | 'differential';
const kindOf = (workload: string): RunKind => (parseRollbackName(workload) ? 'rollback' : /-diff-\d+(-again)?$/.test(workload) ? 'differential' : 'sequence');

/** Every reference run explore made (learn/<workload>/ref-N/run.json), with its kind. */
function runsOf(campaign: string): Array<{ kind: RunKind; record: RunRecord }> {
  const learn = join(campaign, 'learn');
  if (!existsSync(learn)) return [];
  return readdirSync(learn).flatMap((workload) =>
    readdirSync(join(learn, workload))
      .map((ref) => join(learn, workload, ref, 'run.json'))
      .filter((f) => existsSync(f))
      .map((f) => ({ kind: kindOf(workload), record: JSON.parse(readFileSync(f, 'utf8')) as RunRecord })),
  );
}

const seconds = (ms: number) => (ms / 1000).toFixed(1);

interface Explored {
  wallMs: number;
  operations: number;
}

/** One exploration of `config` with the kperturb at `root`, its figures printed; undefined when it failed. */
function exploreOnce(root: string, label: string, config: string, only: string[]): Explored | undefined {
  const name = (parse(readFileSync(config, 'utf8')) as { metadata: { name: string } }).metadata.name;
  const out = mkdtempSync(join(OUT, `${label.replace(/[^\w.-]/g, '_')}-`));
  const r = kperturb(root, [
    'explore',
    '-c',
    config,
    '-o',
    out,
    '--seed',
    SEED,
    ...(STEPS ? ['--steps', STEPS] : []),
    ...(DIFFERENTIAL ? ['--differential'] : []),
    ...(only.length > 0 ? ['--sequence', ...only] : []),
    // A build before findings has no such option; 0 is its behaviour.
    ...(CONFIRM_RUNS !== '0' || root === ROOT ? ['--confirm-runs', CONFIRM_RUNS] : []),
  ]);
  const resultsFile = join(out, name, 'explore', 'results.json');
  if (r.status === 2 || !existsSync(resultsFile)) {
    process.stderr.write(`${name} (${label}): kperturb explore failed (exit ${r.status}):\n${r.out.slice(-4000)}\n`);
    process.exitCode = 1;
    return undefined;
  }
  const results = JSON.parse(readFileSync(resultsFile, 'utf8')) as ExploreResults;
  const operations = results.sequences.reduce((n, s) => n + s.steps.filter((st) => st.verdict !== 'not-run').length, 0);
  const runs = runsOf(join(out, name));
  const inRuns = runs.reduce((sum, x) => sum + x.record.durationMs, 0);

  console.log(`\n${name}, ${label} (${config}; ${out})`);
  console.log(
    `  ${results.sequences.length} sequence(s), ${operations} operation(s) run, ${results.alarms.length} alarm(s); wall ${seconds(r.wallMs)} s = ${(r.wallMs / 3_600_000).toFixed(2)} machine-hours; ${((operations / r.wallMs) * 60_000).toFixed(1)} operations per minute`,
  );
  const findings = results.findings ?? [];
  if (results.alarms.length > 0)
    console.log(
      `  ${results.alarms.length} alarm(s) -> ${findings.length} finding(s): ${findings
        .map((f) => `${f.class} ${f.summary}${f.confirmation ? ` (shown again ${f.confirmation.failedAgain} of ${f.confirmation.runs})` : ''}`)
        .join('; ')}`,
    );
  console.log(`  coverage: ${results.coverage.covered} of ${results.coverage.total} properties changed by an accepted step`);
  for (const kind of ['sequence', 'rollback', 'differential'] as const) {
    const of = runs.filter((x) => x.kind === kind);
    if (of.length > 0) console.log(`  ${kind} runs: ${of.length}, ${seconds(of.reduce((sum, x) => sum + x.record.durationMs, 0))} s`);
  }
  console.log('  per run (seconds):  phase            median  total');
  for (const phase of PHASES) {
    const xs = runs.map((x) => x.record.phasesMs?.[phase] ?? 0);
    console.log(`                      ${phase.padEnd(16)} ${seconds(median(xs)).padStart(6)}  ${seconds(xs.reduce((a, b) => a + b, 0)).padStart(6)}`);
  }
  console.log(`                      ${'rest'.padEnd(16)} ${''.padStart(6)}  ${seconds(r.wallMs - inRuns).padStart(6)}  (generation, judging, results)`);
  return { wallMs: r.wallMs, operations };
}

/** The baseline's copy of a config of this checkout (the same file when it has none: an operator's git-ignored upstream link). */
function inBaseline(root: string, config: string): string {
  const rel = relative(ROOT, config);
  const there = join(root, rel);
  return !rel.startsWith('..') && existsSync(there) ? there : config;
}

const baseline = BASELINE ? buildBaseline(ROOT, BASELINE) : undefined;
try {
  for (const config of CONFIGS) {
    const only = SEQUENCES !== undefined ? firstSequences(config, SEQUENCES) : [];
    const mine = exploreOnce(ROOT, 'this commit', config, only);
    if (!baseline || !BASELINE) continue;
    const base = exploreOnce(baseline.root, BASELINE, inBaseline(baseline.root, config), only);
    if (mine && base)
      console.log(
        `  ratio, this commit / ${BASELINE}: wall ${(mine.wallMs / base.wallMs).toFixed(2)}, operations per minute ${(mine.operations / mine.wallMs / (base.operations / base.wallMs)).toFixed(2)} (operations ${mine.operations} vs ${base.operations})`,
      );
  }
} finally {
  baseline?.remove();
}
console.log(`\ncampaigns in ${OUT}`);
