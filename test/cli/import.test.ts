/**
 * `kperturb import chainsaw|kuttl` end to end: secret-marker's create-and-upgrade scenario, kept as a
 * team would keep it in chainsaw and in KUTTL (test/workload/suites/secret-marker), is imported,
 * learned (its asserts are waits in the trace), planned, and the plan that catches the buggy
 * operator's intermediate-state bug finds it, as the hand-written workload's plan does
 * (test/e2e/secret-marker.test.ts).
 */
import test from 'ava';
import { execFile } from 'node:child_process';
import { appendFileSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { hangBound } from '../_hang-bound.js';
import { scratchDir } from '../_scratch-dir.js';

const repoRoot = fileURLToPath(new URL('../../../', import.meta.url));
const CLI = join(repoRoot, 'bin', 'kperturb.js');
const SUITES = join(repoRoot, 'test', 'workload', 'suites', 'secret-marker');

function kperturb(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [CLI, ...args], { encoding: 'utf8', timeout: hangBound(110_000) }, (err, stdout, stderr) => {
      const code = err ? (typeof (err as { code?: unknown }).code === 'number' ? (err as { code: number }).code : -1) : 0;
      resolve({ code, stdout, stderr });
    });
  });
}

for (const format of ['chainsaw', 'kuttl'] as const) {
  test(`an imported ${format} suite runs as a workload: learn, plan, and its catching plan finds secret-marker's bug`, async (t) => {
    const dir = scratchDir(t, `kperturb-import-${format}-`);
    const config = join(dir, 'kperturb.yaml');
    writeFileSync(
      config,
      [
        'apiVersion: kperturb.dev/v1',
        'kind: ControllerUnderTest',
        `metadata: { name: secret-marker-${format} }`,
        `controller: { command: node, args: [${join(repoRoot, 'dist', 'fixtures', 'controllers', 'secret-marker', 'buggy.js')}] }`,
        `setup: [${join(repoRoot, 'fixtures', 'controllers', 'secret-marker', 'manifests', 'crd.yaml')}]`,
        'settle: { quietMs: 750, timeoutSeconds: 30 }',
        '',
      ].join('\n'),
    );
    const imported = await kperturb('import', format, join(SUITES, format), '-o', join(dir, 'workloads.yaml'));
    t.is(imported.code, 0, imported.stderr);
    t.regex(imported.stderr, /imported 1 test\(s\) as workloads/);
    appendFileSync(config, readFileSync(join(dir, 'workloads.yaml'), 'utf8'));

    const out = join(dir, 'out');
    const learned = await kperturb('learn', '-c', config, '-o', out);
    t.is(learned.code, 0, learned.stdout + learned.stderr);
    const runDir = join(out, `secret-marker-${format}`, 'learn', 'create-and-upgrade', 'ref-1');
    const steps = readFileSync(join(runDir, 'controller.trace.jsonl'), 'utf8')
      .split('\n')
      .filter((l) => l.includes('"workload-step"'))
      .map((l) => JSON.parse(l) as { index: number; phase: string; action?: string; description: string; output?: string });
    const asserts = steps.filter((s) => s.phase === 'start' && /^assert /.test(s.description));
    t.true(asserts.length >= 2, 'both asserts ran');
    t.true(
      asserts.every((s) => s.action === 'wait'),
      'asserts are waits, not workload writes',
    );
    t.true(
      steps.some((s) => s.phase === 'done' && s.output !== undefined && /db1|15/.test(s.output)),
      'a command reached the cluster with the kubeconfig it was given',
    );

    const planned = await kperturb('plan', '-c', config, '-o', out);
    t.is(planned.code, 0, planned.stderr);
    const plansDir = join(out, `secret-marker-${format}`, 'plans', 'create-and-upgrade');
    const catching = readdirSync(plansDir).find(
      (f) =>
        /patches Database\/default\/db1 status \(1st time\)/.test(readFileSync(join(plansDir, f), 'utf8')) &&
        /pattern: intermediate-state/.test(readFileSync(join(plansDir, f), 'utf8')),
    );
    t.truthy(catching, `an intermediate-state plan after the status patch among ${readdirSync(plansDir).join(', ')}`);

    const tested = await kperturb('test', join(plansDir, catching!), '-c', config, '-o', out);
    t.is(tested.code, 1, tested.stdout + tested.stderr);
    t.regex(tested.stdout, /Secret\/default\/db1-tls/);
  });
}

test('import names the file and the path of what it cannot express, exits 2 without a stack trace, and writes nothing', async (t) => {
  const dir = scratchDir(t, 'kperturb-import-refused-');
  const testFile = join(dir, 'chainsaw-test.yaml');
  writeFileSync(
    testFile,
    'apiVersion: chainsaw.kyverno.io/v1alpha1\nkind: Test\nmetadata: { name: t }\nspec:\n  steps:\n  - try:\n    - command: { entrypoint: "true", check: { ($error): null } }\n',
  );
  const out = join(dir, 'w.yaml');
  const r = await kperturb('import', 'chainsaw', dir, '-o', out);
  t.is(r.code, 2, r.stderr);
  t.false(/\n\s+at /.test(r.stderr), r.stderr);
  t.true(r.stderr.includes(`${testFile} at spec.steps[0].try[0].command.check: no check`), r.stderr);
  t.throws(() => readFileSync(out), { code: 'ENOENT' });
  const badFormat = await kperturb('import', 'ginkgo', dir);
  t.is(badFormat.code, 2);
  t.regex(badFormat.stderr, /chainsaw or kuttl \(got "ginkgo"\)/);
});
