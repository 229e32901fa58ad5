import test from 'ava';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const CLI = fileURLToPath(new URL('../../../bin/kperturb.js', import.meta.url));

function run(args: string[]) {
  return spawnSync(process.execPath, [CLI, ...args], { encoding: 'utf8', timeout: 30_000 });
}

test('a malformed config exits 2 with the file and the path, and no stack trace', (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'kperturb-cli-'));
  const file = join(dir, 'kperturb.yaml');
  writeFileSync(file, 'apiVersion: kperturb.dev/v1\nkind: ControllerUnderTest\nmetadata: { name: x }\ncontroller: { command: 7 }\nworkloads: {}\n');
  const r = run(['learn', '--config', file]);
  t.is(r.status, 2, r.stderr);
  t.true(r.stderr.includes(file), r.stderr);
  t.true(r.stderr.includes('controller.command'), r.stderr);
  t.false(/\n\s+at /.test(r.stderr), `no stack trace expected:\n${r.stderr}`);
});

test('an unknown command or option exits 2', (t) => {
  t.is(run(['frobnicate']).status, 2);
  t.is(run(['learn', '--no-such-flag']).status, 2);
});

test('--help exits 0 and lists every command', (t) => {
  const r = run(['--help']);
  t.is(r.status, 0);
  for (const cmd of ['learn', 'plan', 'test', 'demo', 'proxy', 'cluster']) t.true(r.stdout.includes(cmd), cmd);
});

test('a malformed plan file exits 2 naming the path inside it', (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'kperturb-cli-'));
  const cfg = join(dir, 'kperturb.yaml');
  writeFileSync(cfg, 'apiVersion: kperturb.dev/v1\nkind: ControllerUnderTest\nmetadata: { name: x }\ncontroller: { command: "true" }\nworkloads: { w: { steps: [ { sleep: 0 } ] } }\n');
  const plan = join(dir, 'p.yaml');
  writeFileSync(plan, 'apiVersion: kperturb.dev/v1\nkind: TestPlan\nmetadata: { name: p }\nspec:\n  controller: x\n  workload: w\n  pattern: intermediate-state\n  description: d\n  faults:\n    - type: crash-after-write\n      after: { verb: create, key: ConfigMap/default/a, occurrence: 0 }\n');
  const r = run(['test', plan, '--config', cfg]);
  t.is(r.status, 2, r.stderr);
  t.true(r.stderr.includes('spec.faults[0].after.occurrence'), r.stderr);
});

test('cluster --kubernetes-version out of range, or with --real, exits 2 naming the option', (t) => {
  const r = run(['cluster', '--kubernetes-version', '1.16']);
  t.is(r.status, 2, r.stderr);
  t.regex(r.stderr, /--kubernetes-version.*"1\.18" to "1\.32".*got "1\.16"/s);
  const real = run(['cluster', '--real', '--kubernetes-version', '1.18']);
  t.is(real.status, 2, real.stderr);
  t.regex(real.stderr, /--kubernetes-version.*a real control plane serves its own release/s);
});
