/**
 * Campaign benchmark (a script, not a test): where a plan's wall time goes. It learns and plans three
 * bundled examples (TypeScript: secret-marker, decommission; Go: stale-deletion), picks the first plan
 * of each pattern of each, and runs each example's picked plans ROUNDS times with one `kperturb test`
 * per round (a campaign, as a user runs one: `kperturb test` over a controller's plans). A plan's
 * time is its run's duration (run.json) plus an equal share of what the process spent besides the
 * runs (Node's start, reading the campaign, the oracles, writing results: the `rest` column). It
 * prints per plan and as medians per pattern where the time went: cluster start, setup, proxy,
 * controller start, workload, settle with the fault's restart/release counted apart, end state,
 * teardown. `--per-process` runs every plan in a `kperturb test` of its own instead (the whole
 * process's wall time is then the plan's).
 *
 * The same plans' times on a baseline commit (default: the previous one, HEAD~1), built in a
 * temporary git worktree, measured in the same run and the same way, give the ratios.
 *
 *   npm run bench:campaign
 *   npm run bench:campaign -- --rounds 3 --baseline main~5
 *   npm run bench:campaign -- --no-baseline --per-process
 *   npm run bench:campaign -- --real      (each run on a fresh real control plane)
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';
import { RUN_PHASES, type RunPhase, type RunRecord } from '../../src/model/results.js';
import { median } from './_stats.js';
import { buildBaseline } from './_baseline.js';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const arg = (name: string) => {
  const i = process.argv.indexOf(name);
  return i > 0 ? process.argv[i + 1] : undefined;
};
const ROUNDS = Number(arg('--rounds') ?? 2);
const BASELINE = process.argv.includes('--no-baseline') ? undefined : (arg('--baseline') ?? 'HEAD~1');
const EXAMPLES = ['secret-marker', 'decommission', 'stale-deletion'];
const PER_PROCESS = process.argv.includes('--per-process');
const CLUSTER_FLAGS = process.argv.includes('--real') ? ['--real'] : [];

interface Measured {
  example: string;
  pattern: string;
  plan: string;
  wallMs: number[];
  phases: Array<Partial<Record<RunPhase, number>>>;
}

function kperturb(root: string, args: string[]): { wallMs: number; status: number | null; out: string } {
  const t = process.hrtime.bigint();
  const r = spawnSync(process.execPath, [join(root, 'bin', 'kperturb.js'), ...args], { encoding: 'utf8' });
  return { wallMs: Number(process.hrtime.bigint() - t) / 1e6, status: r.status, out: r.stdout + r.stderr };
}

/** One example's picked plans, learned and planned with the kperturb of one checkout. */
interface Prepared {
  root: string;
  label: string;
  out: string;
  config: string;
  name: string;
  plansDir: string;
  picked: Measured[];
}

/** Learns and plans every example with the kperturb in `root` and picks the first plan of each pattern. */
function prepare(root: string, label: string): Prepared[] {
  const out = mkdtempSync(join(tmpdir(), `kperturb-bench-campaign-${label.replace(/[^\w.-]/g, '_')}-`));
  const prepared: Prepared[] = [];
  for (const example of EXAMPLES) {
    const config = join(root, 'fixtures', 'controllers', example, 'buggy', 'kperturb.yaml');
    if (!existsSync(config)) continue;
    for (const stage of ['learn', 'plan']) {
      const r = kperturb(root, [stage, '-c', config, '-o', out, ...(stage === 'learn' ? CLUSTER_FLAGS : [])]);
      if (r.status !== 0) throw new Error(`${label}: kperturb ${stage} ${example} failed: ${r.out}`);
    }
    const name = (parse(readFileSync(config, 'utf8')) as { metadata: { name: string } }).metadata.name;
    const plansDir = join(out, name, 'plans');
    const plans = readdirSync(plansDir, { recursive: true })
      .map(String)
      .filter((f) => f.endsWith('.yaml'))
      .sort();
    const firstOf = new Map<string, string>();
    for (const f of plans) {
      const pattern = (parse(readFileSync(join(plansDir, f), 'utf8')) as { spec: { pattern: string } }).spec.pattern;
      if (!firstOf.has(pattern)) firstOf.set(pattern, f);
    }
    const picked = [...firstOf].map(([pattern, f]): Measured => ({ example, pattern, plan: f.replace(/\.yaml$/, ''), wallMs: [], phases: [] }));
    prepared.push({ root, label, out, config, name, plansDir, picked });
  }
  return prepared;
}

/** One round of one example's picked plans: one `kperturb test` over them (or one per plan with --per-process). */
function runRound(p: Prepared): void {
  const test = (files: string[]) => {
    const r = kperturb(p.root, ['test', ...files.map((f) => join(p.plansDir, f)), '-c', p.config, '-o', p.out, '--rerun', ...CLUSTER_FLAGS]);
    if (r.status !== 0 && r.status !== 1) throw new Error(`${p.label}: kperturb test ${files.join(' ')} failed: ${r.out}`);
    return r.wallMs;
  };
  const walls = PER_PROCESS ? p.picked.map((m) => test([m.plan + '.yaml'])) : [test(p.picked.map((m) => m.plan + '.yaml'))];
  const records = p.picked.map((m) => JSON.parse(readFileSync(findRunJson(join(p.out, p.name, 'test'), m.plan.split('/').at(-1)!)!, 'utf8')) as RunRecord);
  // Campaign: each plan's run, plus its share of the process's time besides the runs.
  const share = PER_PROCESS ? 0 : (walls[0]! - records.reduce((sum, r) => sum + r.durationMs, 0)) / p.picked.length;
  p.picked.forEach((m, i) => {
    m.wallMs.push(PER_PROCESS ? walls[i]! : records[i]!.durationMs + share);
    m.phases.push(records[i]!.phasesMs ?? {});
  });
}

function findRunJson(testDir: string, plan: string): string | undefined {
  for (const workload of existsSync(testDir) ? readdirSync(testDir) : []) {
    const f = join(testDir, workload, plan, 'run.json');
    if (existsSync(f)) return f;
  }
  return undefined;
}

const s = (ms: number) => (Number.isNaN(ms) ? '-' : (ms / 1000).toFixed(2));
const sides: Prepared[][] = [prepare(ROOT, 'this commit')];
const b = BASELINE ? buildBaseline(ROOT, BASELINE) : undefined;
try {
  if (b && BASELINE) sides.push(prepare(b.root, BASELINE));
  // Rounds alternate between the sides, example by example, so that a change in the machine's load
  // during the run weighs on both alike.
  for (let round = 0; round < ROUNDS; round++) {
    for (let e = 0; e < sides[0]!.length; e++) {
      for (const side of sides) {
        const p = side[e];
        if (!p) continue;
        runRound(p);
        for (const m of p.picked)
          process.stderr.write(`${p.label} round ${round + 1}: ${m.example} ${m.plan} (${m.pattern}) ${(m.wallMs.at(-1)! / 1000).toFixed(2)} s\n`);
      }
    }
  }
} finally {
  b?.remove();
  for (const side of sides) for (const p of side) rmSync(p.out, { recursive: true, force: true });
}
const current = sides[0]!.flatMap((p) => p.picked);
const baseline = sides[1]?.flatMap((p) => p.picked) ?? [];

const shown = RUN_PHASES;
console.log(
  `\nTime per plan (${PER_PROCESS ? 'a kperturb test process each' : 'in a campaign: its run plus a share of the process'}; median of ${ROUNDS} rounds, seconds) and where it went in this commit:`,
);
const header = ['example', 'plan', 'pattern', 'time', ...(BASELINE ? ['base', 'ratio'] : []), ...shown, 'rest'];
const rows: string[][] = [];
for (const m of current) {
  const base = baseline.find((b) => b.example === m.example && b.pattern === m.pattern);
  const wall = median(m.wallMs);
  const phase = (p: RunPhase) => median(m.phases.map((x) => x[p] ?? 0));
  const inRun = RUN_PHASES.filter((p) => p !== 'fault').reduce((sum, p) => sum + phase(p), 0);
  rows.push([
    m.example,
    m.plan.split('/').at(-1)!,
    m.pattern,
    s(wall),
    ...(BASELINE ? [s(base ? median(base.wallMs) : NaN), base ? (wall / median(base.wallMs)).toFixed(2) : '-'] : []),
    ...shown.map((p) => s(phase(p))),
    s(wall - inRun),
  ]);
}
const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
const line = (r: string[]) => r.map((c, i) => c.padEnd(widths[i]!)).join('  ');
console.log(line(header));
for (const r of rows) console.log(line(r));

console.log('\nMedian wall time per pattern (seconds):');
for (const pattern of [...new Set(current.map((m) => m.pattern))]) {
  const now = median(current.filter((m) => m.pattern === pattern).flatMap((m) => m.wallMs));
  const before = median(baseline.filter((m) => m.pattern === pattern).flatMap((m) => m.wallMs));
  console.log(`  ${pattern.padEnd(20)} ${s(now)}${baseline.length > 0 ? `   baseline ${s(before)}   ratio ${(now / before).toFixed(2)}` : ''}`);
}
