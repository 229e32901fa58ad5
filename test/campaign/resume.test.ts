/**
 * Results are never lost or mixed: `kperturb test` keeps the verdicts it already has (unless
 * --rerun), testing some plans keeps the other plans' results, an interrupted re-run leaves the
 * earlier runs in place, and two kperturb on one campaign directory do not run at once. Whole CLI
 * runs of a small controller (test/proxy/fixtures/mirror-controller.ts) with plans that never fire,
 * so that each run is short; a plan's run is told apart from an earlier one by its run.json's startedAt.
 * The controller starts through gate.sh, which holds p2's controller while the file hold-p2 exists,
 * so that a test can interrupt a re-run in the middle of p2 without racing it.
 */
import test from 'ava';
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';
import type { ResultsFile } from '../../src/model/results.js';
import { hangBound } from '../_hang-bound.js';
import { sharedScratchDir } from '../_scratch-dir.js';

const CLI = fileURLToPath(new URL('../../../bin/kperturb.js', import.meta.url));
const controllerScript = fileURLToPath(new URL('../proxy/fixtures/mirror-controller.js', import.meta.url));
const PLANS = ['p1', 'p2', 'p3'];

// Kept when a test (or a before hook) fails, and with KEEP set.
const dir = process.env.KEEP ? mkdtempSync(join(tmpdir(), 'kperturb-resume-')) : sharedScratchDir('kperturb-resume-');
const config = join(dir, 'kperturb.yaml');
const plansDir = join(dir, 'plans');
const out = join(dir, 'out');
const root = join(out, 'mirror');
const runDir = (plan: string) => join(root, 'test', 'w', plan);

const HOLD_P2 = join(dir, 'hold-p2');

function writeCampaign(): void {
  writeFileSync(
    join(dir, 'gate.sh'),
    `case "$KUBECONFIG" in */p2/*|*/.p2.partial/*) if [ -e hold-p2 ]; then echo held; while [ -e hold-p2 ]; do sleep 0.05; done; fi ;; esac
exec ${JSON.stringify(process.execPath)} ${JSON.stringify(controllerScript)}
`,
  );
  writeFileSync(join(dir, 'src.yaml'), 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: src-a, namespace: default}\ndata: {v: "1"}\n');
  writeFileSync(
    config,
    `apiVersion: kperturb.dev/v1
kind: ControllerUnderTest
metadata: { name: mirror }
# The gate tells p2's controller by its KUBECONFIG's path, in the run directory: a process started
# ahead of its run (a standby) has one of its own and could be any plan's.
controller: { command: sh, args: [gate.sh], warmSpare: false }
workloads:
  w:
    steps:
      - apply: src.yaml
      - waitFor: { key: ConfigMap/default/mirror-src-a, field: data.v, equals: "1", timeoutSeconds: 30 }
referenceRuns: 1
settle: { quietMs: 300, timeoutSeconds: 20 }
`,
  );
  mkdirSync(plansDir, { recursive: true });
  for (const p of PLANS) writePlan(p, `plan ${p}`);
}

/** A plan whose trigger never matches: its run is short and its verdict `not-injected`. */
function writePlan(name: string, description: string): void {
  writeFileSync(
    join(plansDir, `${name}.yaml`),
    `apiVersion: kperturb.dev/v1
kind: TestPlan
metadata: { name: ${name} }
spec:
  controller: mirror
  workload: w
  pattern: intermediate-state
  description: ${description}
  faults:
    - type: crash-after-write
      after: { verb: create, key: ConfigMap/default/never, occurrence: 1 }
`,
  );
}

interface Exit {
  status: number | null;
  stdout: string;
  stderr: string;
}

/** Starts the CLI in its own process group (so that a test can kill it with its controller). */
function start(args: string[]): { pid: number; exited: Promise<Exit> } {
  const child = spawn(process.execPath, [CLI, ...args], { detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const exited = new Promise<Exit>((resolve) => child.on('close', (status) => resolve({ status, stdout, stderr })));
  return { pid: child.pid!, exited };
}

const kperturb = (...args: string[]) => start([...args, '-c', config, '-o', out]).exited;

/** When each plan's run started (run.json): a plan run again gets a new one. */
function runStarts(): Record<string, string> {
  const startedAt = (file: string) => (existsSync(file) ? (JSON.parse(readFileSync(file, 'utf8')) as { startedAt: string }).startedAt : 'no run.json');
  return Object.fromEntries(PLANS.map((p) => [p, startedAt(join(runDir(p), 'run.json'))]));
}

function readResults(): ResultsFile {
  return JSON.parse(readFileSync(join(root, 'results.json'), 'utf8')) as ResultsFile;
}

/** Every entry of results.json is the verdict.json of its run directory, and every plan has one. */
function assertConsistent(t: import('ava').ExecutionContext): void {
  const results = readResults();
  t.deepEqual(results.results.map((r) => r.plan).sort(), PLANS);
  for (const r of results.results) {
    const verdict = join(r.runDir, 'verdict.json');
    t.true(existsSync(verdict), `${verdict} is gone`);
    if (existsSync(verdict)) t.deepEqual(JSON.parse(readFileSync(verdict, 'utf8')), r);
  }
}

async function waitFor(what: string, condition: () => boolean, timeoutMs = 90_000): Promise<void> {
  const deadline = Date.now() + hangBound(timeoutMs);
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(50);
  }
}

test.before(async () => {
  writeCampaign();
  const learned = await kperturb('learn');
  if (learned.status !== 0) throw new Error(`learn failed: ${learned.stderr}`);
  const tested = await kperturb('test', plansDir);
  if (tested.status !== 0) throw new Error(`test failed: ${tested.stderr}`);
});

test.serial('test again keeps every verdict and runs only a plan whose file changed', async (t) => {
  const before = runStarts();
  const again = await kperturb('test', plansDir);
  t.is(again.status, 0, again.stderr);
  t.true(again.stderr.includes('3 of 3 plans already have verdicts; running 0; --rerun to run all'), again.stderr);
  t.deepEqual(runStarts(), before, 'no plan ran again');
  t.true(again.stdout.includes('p2'), 'the kept verdicts are reported');

  writePlan('p2', 'plan p2, edited');
  const edited = await kperturb('test', plansDir);
  t.is(edited.status, 0, edited.stderr);
  t.true(edited.stderr.includes('2 of 3 plans already have verdicts; running 1'), edited.stderr);
  const after = runStarts();
  t.is(after.p1, before.p1);
  t.not(after.p2, before.p2, 'the edited plan ran again');
  t.is(after.p3, before.p3);
  t.like(readResults(), { complete: true, planned: 3 });
  assertConsistent(t);
});

test.serial("re-running one plan keeps the other plans' results", async (t) => {
  const before = runStarts();
  const one = await kperturb('test', join(plansDir, 'p3.yaml'), '--rerun');
  t.is(one.status, 0, one.stderr);
  const after = runStarts();
  t.not(after.p3, before.p3, '--rerun ran it again');
  t.is(after.p1, before.p1);
  t.like(readResults(), { complete: true, planned: 3 });
  assertConsistent(t);
});

test.serial(
  'an interrupted re-run leaves the earlier runs in place; the lock keeps a second kperturb out meanwhile; resuming runs nothing again',
  async (t) => {
    const before = runStarts();
    writeFileSync(HOLD_P2, '');
    t.teardown(() => rmSync(HOLD_P2, { force: true }));
    const rerun = start(['test', plansDir, '--rerun', '-c', config, '-o', out]);
    // p1 has run again and p2's controller is held at its start (wherever p2's run directory is).
    const held = (d: string) => existsSync(join(d, 'controller.log')) && readFileSync(join(d, 'controller.log'), 'utf8').includes('held');
    await waitFor("p2's controller to start", () => held(join(root, 'test', 'w', '.p2.partial')) || held(runDir('p2')));

    const second = await kperturb('test', plansDir);
    t.is(second.status, 2, second.stderr);
    t.true(second.stderr.includes(`in use by another kperturb (pid ${rerun.pid}`), second.stderr);
    t.true(second.stderr.includes(join(root, 'kperturb.lock')), second.stderr);
    t.false(/\n\s+at /.test(second.stderr), 'no stack trace');

    process.kill(-rerun.pid, 'SIGKILL');
    await rerun.exited;
    rmSync(HOLD_P2);
    const interrupted = runStarts();
    t.not(interrupted.p1, before.p1, 'p1 had finished its re-run');
    t.is(interrupted.p2, before.p2, "p2's earlier run is still in place");
    t.is(interrupted.p3, before.p3);
    t.like(readResults(), { complete: false, planned: 3 });
    assertConsistent(t);

    const resumed = await kperturb('test', plansDir);
    t.is(resumed.status, 0, resumed.stderr);
    t.true(resumed.stderr.includes(`taking over ${join(root, 'kperturb.lock')}: its holder (pid ${rerun.pid}`), resumed.stderr);
    t.true(resumed.stderr.includes('3 of 3 plans already have verdicts; running 0'), resumed.stderr);
    t.deepEqual(runStarts(), interrupted, 'no plan ran again after the interrupt');
    t.like(readResults(), { complete: true, planned: 3 });
    assertConsistent(t);
    t.deepEqual(readdirSync(join(root, 'test', 'w')).sort(), PLANS, 'the interrupted run was cleared away');
    t.false(existsSync(join(root, 'kperturb.lock')), 'released');
  },
);
