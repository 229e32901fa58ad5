/**
 * What CI does to a campaign that takes too long: SIGINT, SIGTERM or SIGKILL to kperturb's pid. No
 * controller process (nor a child it started) may outlive kperturb, whichever the signal, even one
 * that ignores SIGTERM; after SIGINT and SIGTERM kperturb says what finished and where, leaves no
 * half-written run directory, and exits 130 or 143. Serial: each test runs a campaign, and they
 * would only compete for the machine.
 */
import test, { type ExecutionContext } from 'ava';
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { ResultsFile } from '../../src/model/results.js';
import { processExists } from '../../src/process/groups.js';
import { hangBound } from '../_hang-bound.js';
import { sharedScratchDir } from '../_scratch-dir.js';

const CLI = fileURLToPath(new URL('../../../bin/kperturb.js', import.meta.url));
const CONTROLLER = fileURLToPath(new URL('./_stubborn-controller.js', import.meta.url));

/** A campaign directory whose controller ignores SIGTERM and writes its pids (see _stubborn-controller.ts). */
function campaign(referenceRuns: number) {
  const dir = sharedScratchDir('kperturb-interrupt-');
  const pidFile = join(dir, 'pids');
  writeFileSync(join(dir, 'in.yaml'), 'apiVersion: v1\nkind: ConfigMap\nmetadata: { name: in, namespace: default }\ndata: { a: "1" }\n');
  writeFileSync(
    join(dir, 'kperturb.yaml'),
    `apiVersion: kperturb.dev/v1
kind: ControllerUnderTest
metadata: { name: stubborn }
controller: { command: ${JSON.stringify(process.execPath)}, args: [${JSON.stringify(CONTROLLER)}, ${JSON.stringify(pidFile)}] }
workloads:
  copy:
    steps:
      - apply: in.yaml
      - waitFor: { key: ConfigMap/default/out, field: data.a, equals: "1", timeoutSeconds: 10 }
      - patch: { key: ConfigMap/default/in, type: merge, patch: { data: { a: "2" } } }
      - waitFor: { key: ConfigMap/default/out, field: data.a, equals: "2", timeoutSeconds: 10 }
referenceRuns: ${referenceRuns}
settle: { quietMs: 300, timeoutSeconds: 10 }
`,
  );
  return { dir, pidFile, out: join(dir, 'out'), args: ['-c', join(dir, 'kperturb.yaml'), '-o', join(dir, 'out')] };
}

function startCli(args: string[]) {
  const child = spawn(process.execPath, [CLI, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (c: string) => (stderr += c));
  child.stdout.resume();
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.on('exit', (code, signal) => resolve({ code, signal })),
  );
  return { child, stderr: () => stderr, exited };
}

/** Polls `check` until it returns a value (bounded): for files another process writes. */
async function waitFor<T>(what: string, timeoutMs: number, check: () => T | undefined): Promise<T> {
  const bound = hangBound(timeoutMs);
  const deadline = Date.now() + bound;
  for (;;) {
    const value = check();
    if (value !== undefined) return value;
    if (Date.now() >= deadline) throw new Error(`${what}: not within ${bound / 1000} s`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** Every controller pid and helper pid the controller's incarnations wrote. */
function pidsIn(file: string): number[] {
  if (!existsSync(file)) return [];
  return readFileSync(file, 'utf8').split(/\s+/).filter(Boolean).map(Number);
}

/** Kills what is left of these processes once the test is over, failed or not, for the next tests. */
function killAfterwards(t: ExecutionContext, pids: () => number[]): void {
  t.teardown(() =>
    pids()
      .filter(processExists)
      .forEach((pid) => process.kill(pid, 'SIGKILL')),
  );
}

/** The pids still running once they have had `timeoutMs` to end. */
async function survivors(t: ExecutionContext, pids: number[], timeoutMs = 10_000): Promise<number[]> {
  killAfterwards(t, () => pids);
  return waitFor('', timeoutMs, () => (pids.some(processExists) ? undefined : [])).catch(() => pids.filter(processExists));
}

/** Starts `learn`, waits until the controller runs, and sends `signal` to kperturb (or calls `interrupt`). */
async function interruptLearn(
  t: ExecutionContext,
  signal: NodeJS.Signals,
  interrupt = async (cli: ReturnType<typeof startCli>, _pidFile: string) => void cli.child.kill(signal),
) {
  const c = campaign(1);
  const cli = startCli(['learn', ...c.args]);
  t.teardown(() => cli.child.kill('SIGKILL'));
  killAfterwards(t, () => pidsIn(c.pidFile));
  await waitFor('the controller started', 30_000, () =>
    pidsIn(c.pidFile).length >= 2 ? true : cli.child.exitCode !== null ? t.fail(cli.stderr()) : undefined,
  );
  await interrupt(cli, c.pidFile);
  const exit = await cli.exited;
  return { c, exit, stderr: cli.stderr(), pids: pidsIn(c.pidFile) };
}

for (const [signal, code] of [
  ['SIGINT', 130],
  ['SIGTERM', 143],
] as const) {
  test.serial(`${signal}: the controller and its child end, kperturb says what finished and exits ${code}`, async (t) => {
    const { c, exit, stderr, pids } = await interruptLearn(t, signal);
    t.deepEqual(await survivors(t, pids), [], `processes left behind of ${pids.join(', ')}`);
    t.is(exit.code, code, stderr);
    t.true(
      stderr.includes(`interrupted: 0 of 1 reference runs finished; runs in ${join(c.out, 'stubborn', 'learn')}; rerun the same command to continue`),
      stderr,
    );
    t.false(/\n\s+at /.test(stderr), `no stack trace expected:\n${stderr}`);
    t.false(existsSync(join(c.out, 'stubborn', 'learn', 'copy', 'ref-1')), 'the interrupted run leaves no directory');
  });
}

/** The pids of the watchdogs (src/process/groups.ts) of these process groups (Linux: from /proc). */
function watchdogsOf(pgids: number[]): number[] {
  const marks = pgids.map((pgid) => `kperturb-watchdog\0${pgid}\0`);
  return readdirSync('/proc')
    .filter((d) => /^\d+$/.test(d))
    .filter((d) => {
      try {
        const cmdline = readFileSync(`/proc/${d}/cmdline`, 'utf8');
        return marks.some((m) => cmdline.includes(m));
      } catch {
        return false;
      }
    })
    .map(Number);
}

test.serial('SIGKILL: the controller and its child end with kperturb, and so does the watchdog that ended them', async (t) => {
  let watchdogs: number[] = [];
  const { exit, pids } = await interruptLearn(t, 'SIGKILL', async (cli, pidFile) => {
    watchdogs = watchdogsOf(pidsIn(pidFile));
    cli.child.kill('SIGKILL');
  });
  t.is(exit.signal, 'SIGKILL');
  t.deepEqual(await survivors(t, pids), [], `processes left behind of ${pids.join(', ')}`);
  t.is(watchdogs.length, 1, 'one watchdog watched the controller');
  t.deepEqual(await survivors(t, watchdogs), []);
});

test.serial('a second SIGINT stops at once, and still leaves no controller behind', async (t) => {
  const { exit, stderr, pids } = await interruptLearn(t, 'SIGINT', async (cli) => {
    cli.child.kill('SIGINT');
    await waitFor('kperturb said it is stopping', 10_000, () => (cli.stderr().includes('SIGINT again to stop at once') ? true : undefined));
    cli.child.kill('SIGINT');
  });
  t.deepEqual(await survivors(t, pids), [], `processes left behind of ${pids.join(', ')}`);
  t.is(exit.code, 130, stderr);
  t.true(stderr.includes('kperturb: SIGINT again: stopping at once'), stderr);
});

test.serial('SIGINT during `test`: finished plans keep their results, the running one leaves no directory', async (t) => {
  const c = campaign(1);
  for (const stage of ['learn', 'plan']) {
    const r = startCli([stage, ...c.args]);
    t.is((await r.exited).code, 0, `${stage}: ${r.stderr()}`);
  }
  // Plans still to run when the first one finishes, however many the planner made: at load 12-16 it
  // made one (from a reference run that showed fewer steps), the campaign ended with its result, and
  // there was nothing left to interrupt. Two plans whose trigger never comes each take a whole
  // workload run.
  for (const name of ['zz-never-1', 'zz-never-2'])
    writeFileSync(
      join(c.out, 'stubborn', 'plans', 'copy', `${name}.yaml`),
      `apiVersion: kperturb.dev/v1\nkind: TestPlan\nmetadata: { name: ${name} }\nspec:\n  controller: stubborn\n  workload: copy\n  pattern: intermediate-state\n  description: ${name}\n  faults:\n    - type: crash-after-write\n      after: { verb: create, key: ConfigMap/default/${name}, occurrence: 1 }\n`,
    );
  const resultsFile = join(c.out, 'stubborn', 'results.json');
  const cli = startCli(['test', ...c.args]);
  t.teardown(() => cli.child.kill('SIGKILL'));
  killAfterwards(t, () => pidsIn(c.pidFile));
  // results.json is written as soon as the campaign starts (complete: false); a plan finished once it holds a result.
  const resultCount = () => {
    try {
      return (JSON.parse(readFileSync(resultsFile, 'utf8')) as ResultsFile).results.length;
    } catch {
      return 0;
    }
  };
  await waitFor('the first plan finished', 90_000, () => (resultCount() >= 1 ? true : cli.child.exitCode !== null ? t.fail(cli.stderr()) : undefined));
  cli.child.kill('SIGINT');
  const exit = await cli.exited;
  const stderr = cli.stderr();
  const pids = pidsIn(c.pidFile);
  t.deepEqual(await survivors(t, pids), [], `processes left behind of ${pids.join(', ')}`);
  t.is(exit.code, 130, stderr);
  const said = /interrupted: (\d+) of (\d+) plans finished; results in (\S+); rerun the same command to continue/.exec(stderr);
  if (!said) return t.fail(stderr);
  const [finished, total] = [Number(said[1]), Number(said[2])];
  t.true(finished >= 1 && finished < total, stderr);
  t.is(said[3], resultsFile);
  const results = JSON.parse(readFileSync(resultsFile, 'utf8')) as ResultsFile;
  t.is(results.results.length, finished);
  t.false(results.complete);
  // The plans it did not get to are named, and CI sees them as skipped rather than not at all.
  t.is(results.notRun?.length, total - finished);
  const junit = join(c.out, 'junit.xml');
  const report = spawnSync(process.execPath, [CLI, 'report', resultsFile, '--junit', junit], { encoding: 'utf8' });
  t.true(report.stdout.includes(`not run (${total - finished}, the campaign was interrupted`), report.stdout);
  const xml = readFileSync(junit, 'utf8');
  t.is(xml.match(/<testcase /g)?.length, total, 'a test case for every plan of the campaign');
  t.is(xml.match(/<skipped>not run: the campaign was interrupted/g)?.length, total - finished);
  const runDirs = readdirSync(join(c.out, 'stubborn', 'test', 'copy'));
  t.deepEqual(
    runDirs.filter((d) => !existsSync(join(c.out, 'stubborn', 'test', 'copy', d, 'verdict.json'))),
    [],
    'every run directory left has its verdict',
  );
});
