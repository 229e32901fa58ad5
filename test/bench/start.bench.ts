/**
 * CLI start-up benchmark (a script, not a test): the CPU time (user + system) of short kperturb
 * invocations, as the median of several runs, against a bare `node -e ''` measured in the same run
 * (the floor no Node.js CLI can go under). A command that runs no campaign (`--help`, `--version`,
 * `job`, bad input) should cost little more than that floor; `learn --help` shows that a command's
 * heavy modules load only when it runs.
 *
 *   npm run bench:start
 *   npm run bench:start -- --runs 15
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const CLI = fileURLToPath(new URL('../../../bin/kperturb.js', import.meta.url));
const runsArg = process.argv.indexOf('--runs');
const RUNS = runsArg > 0 ? Number(process.argv[runsArg + 1]) : 9;

const dir = mkdtempSync(join(tmpdir(), 'kperturb-start-'));
const config = join(dir, 'kperturb.yaml');
writeFileSync(
  config,
  'apiVersion: kperturb.dev/v1\nkind: ControllerUnderTest\nmetadata: { name: x }\ncontroller: { command: "true" }\nworkloads: { w: { steps: [ { sleep: 0 } ] } }\n',
);

/** CPU milliseconds of one child process, from /usr/bin/time-free accounting: the child reports its own usage at exit. */
function cpuMs(args: string[]): number {
  // `--import` a tiny module that prints process.cpuUsage() at exit: the child's own user + system time.
  const probe = join(dir, 'cpu-probe.mjs');
  writeFileSync(probe, "process.on('exit', () => { const u = process.cpuUsage(); process.stderr.write(`\\ncpu-us ${u.user + u.system}\\n`); });\n");
  const r = spawnSync(process.execPath, ['--import', probe, ...args], { encoding: 'utf8' });
  const m = /cpu-us (\d+)/.exec(r.stderr);
  if (!m) throw new Error(`no CPU figure from ${args.join(' ')}: ${r.stderr}`);
  return Number(m[1]) / 1000;
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)]!;
}

const cases: Array<[string, string[]]> = [
  ["node -e ''", ['-e', '']],
  ['kperturb --help', [CLI, '--help']],
  ['kperturb --version', [CLI, '--version']],
  ['kperturb learn --help', [CLI, 'learn', '--help']],
  ['kperturb job (a manifest)', [CLI, 'job', '--shards', '4', '--image', 'x', '-c', config]],
  ['kperturb plan (bad input)', [CLI, 'plan', '-c', join(dir, 'missing.yaml')]],
];

const rows: Array<[string, number]> = [];
for (const [name, args] of cases) rows.push([name, median(Array.from({ length: RUNS }, () => cpuMs(args)))]);
const floor = rows[0]![1];
console.log(`CPU time of a start, median of ${RUNS} runs (user + system), against bare node in the same run:`);
for (const [name, ms] of rows) console.log(`  ${name.padEnd(28)} ${ms.toFixed(0).padStart(5)} ms   ${(ms / floor).toFixed(2)} x node`);
