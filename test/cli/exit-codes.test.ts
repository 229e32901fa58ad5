import test from 'ava';
import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { makeCampaign } from '../report/_fixture.js';
import { hangBound } from '../_hang-bound.js';
import { sharedScratchDir } from '../_scratch-dir.js';

const CLI = fileURLToPath(new URL('../../../bin/kperturb.js', import.meta.url));

/**
 * A bound for a CLI that hangs, not a timing assertion: at load 10 on 2 cores (npm test beside a
 * benchmark) a learn whose controller cannot start, 2 s when idle, ran past a bound of 30 s; scaled
 * by the load when set (test/_hang-bound.ts).
 */
const HUNG_MS = 90_000;

function run(args: string[], timeout = hangBound(HUNG_MS)) {
  return spawnSync(process.execPath, [CLI, ...args], { encoding: 'utf8', timeout });
}

/** Exit 2, no stack trace, and every pattern in stderr. */
function assertPrecise(t: import('ava').ExecutionContext, r: ReturnType<typeof run>, ...patterns: RegExp[]): void {
  t.is(r.status, 2, r.stderr);
  t.false(/\n\s+at /.test(r.stderr), `no stack trace expected:\n${r.stderr}`);
  for (const p of patterns) t.regex(r.stderr, p);
}

const HEAD = 'apiVersion: kperturb.dev/v1\nkind: ControllerUnderTest\nmetadata: { name: x }\n';

function tempConfig(text: string): { dir: string; file: string } {
  const dir = sharedScratchDir('kperturb-cli-');
  const file = join(dir, 'kperturb.yaml');
  writeFileSync(file, text);
  return { dir, file };
}

test('a malformed config exits 2 with the file and the path, and no stack trace', (t) => {
  const dir = sharedScratchDir('kperturb-cli-');
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
  const dir = sharedScratchDir('kperturb-cli-');
  const cfg = join(dir, 'kperturb.yaml');
  writeFileSync(
    cfg,
    'apiVersion: kperturb.dev/v1\nkind: ControllerUnderTest\nmetadata: { name: x }\ncontroller: { command: "true" }\nworkloads: { w: { steps: [ { sleep: 0 } ] } }\n',
  );
  const plan = join(dir, 'p.yaml');
  writeFileSync(
    plan,
    'apiVersion: kperturb.dev/v1\nkind: TestPlan\nmetadata: { name: p }\nspec:\n  controller: x\n  workload: w\n  pattern: intermediate-state\n  description: d\n  faults:\n    - type: crash-after-write\n      after: { verb: create, key: ConfigMap/default/a, occurrence: 0 }\n',
  );
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

test('cluster --port that another program listens on exits 2 naming the option, not as an internal error', async (t) => {
  const held = createServer();
  const port = await new Promise<number>((resolve) => held.listen(0, '127.0.0.1', () => resolve((held.address() as { port: number }).port)));
  t.teardown(() => held.close());
  // Asynchronous: the port is held by this process, whose event loop must stay free to hold it.
  const r = await new Promise<{ status: number | null; stderr: string }>((resolve) => {
    const child = spawn(process.execPath, [CLI, 'cluster', '--port', String(port)], { stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    const bound = setTimeout(() => child.kill('SIGKILL'), hangBound(HUNG_MS));
    child.on('close', (status) => {
      clearTimeout(bound);
      resolve({ status, stderr });
    });
  });
  t.is(r.status, 2, r.stderr);
  t.is(
    r.stderr,
    `kperturb: at --port: a port no other program listens on (127.0.0.1:${port} is in use: stop what listens there, or leave --port out for a free port) [KP_E_INPUT]\n`,
  );
});

test('a manifest of a kind the emulated release does not serve is refused before a run, naming the file, the path and the release', (t) => {
  const { dir, file } = tempConfig(
    HEAD + 'controller: { command: "true" }\nsetup: [crd.yaml]\nworkloads: { w: { steps: [ { sleep: 0 } ] } }\nreferenceRuns: 1\n',
  );
  writeFileSync(
    join(dir, 'crd.yaml'),
    'apiVersion: apiextensions.k8s.io/v1beta1\nkind: CustomResourceDefinition\nmetadata: { name: widgets.x.dev }\nspec: { group: x.dev, names: { kind: Widget, plural: widgets }, scope: Namespaced, version: v1 }\n',
  );
  const r = run(['learn', '--config', file, '-o', join(dir, 'out')]);
  t.is(r.status, 2, r.stderr);
  t.is(
    r.stderr,
    `kperturb: ${file} at setup[0]: a kind the embedded cluster's Kubernetes 1.32 serves: crd.yaml is a CustomResourceDefinition of apiextensions.k8s.io/v1beta1, which Kubernetes 1.18-1.21 serve; set cluster.kubernetesVersion: "1.21" (or move the manifest to a version 1.32 serves) [KP_E_CONFIG]\n`,
  );
  // An inline object of a workload, on an older release than its version's first.
  const old = tempConfig(
    HEAD +
      'controller: { command: "true" }\ncluster: { kubernetesVersion: "1.18" }\nworkloads: { w: { steps: [ { sleep: 0 }, { apply: { resource: { apiVersion: policy/v1, kind: PodDisruptionBudget, metadata: { name: p } } } } ] } }\n',
  );
  const r2 = run(['learn', '--config', old.file, '-o', join(old.dir, 'out')]);
  t.is(r2.status, 2, r2.stderr);
  t.is(
    r2.stderr,
    `kperturb: ${old.file} at workloads.w.steps[1].apply.resource: a kind the embedded cluster's Kubernetes 1.18 serves: the inline resource is a PodDisruptionBudget of policy/v1, which Kubernetes 1.21-1.32 serve; set cluster.kubernetesVersion: "1.32" (or move the manifest to a version 1.18 serves) [KP_E_CONFIG]\n`,
  );
});

test('a wait on a field the kind does not have is refused before a run, not waited out (60 s by default)', (t) => {
  const { dir, file } = tempConfig(
    HEAD +
      'controller: { command: "true" }\nworkloads:\n  w:\n    steps:\n      - apply: { resource: { apiVersion: v1, kind: ConfigMap, metadata: { name: a } } }\n      - waitFor: { key: ConfigMap/default/a, field: spec.replicas, equals: 3 }\n',
  );
  const r = run(['learn', '--config', file, '-o', join(dir, 'out')]);
  t.is(r.status, 2, r.stderr);
  t.is(
    r.stderr,
    `kperturb: ${file} at workloads.w.steps[1].waitFor.field: a field ConfigMap has: ConfigMap (v1) has no field spec, so the wait for spec.replicas to equal 3 could only time out [KP_E_CONFIG]\n`,
  );
  // A condition is a field too; an item of a list is named without its index.
  const pod = tempConfig(
    HEAD +
      'controller: { command: "true" }\nworkloads:\n  w:\n    steps:\n      - waitFor: { key: Pod/default/p, field: "spec.containers[0].imag", equals: web }\n',
  );
  const r2 = run(['learn', '--config', pod.file, '-o', join(pod.dir, 'out')]);
  t.is(
    r2.stderr,
    `kperturb: ${pod.file} at workloads.w.steps[0].waitFor.field: a field Pod has: Pod (v1) has no field spec.containers[].imag, so the wait for spec.containers[0].imag to equal "web" could only time out [KP_E_CONFIG]\n`,
  );
  const secret = tempConfig(
    HEAD + 'controller: { command: "true" }\nworkloads: { w: { steps: [ { waitFor: { key: Secret/default/s, condition: Ready } } ] } }\n',
  );
  t.is(
    run(['learn', '--config', secret.file, '-o', join(secret.dir, 'out')]).stderr,
    `kperturb: ${secret.file} at workloads.w.steps[0].waitFor.condition: a field Secret has: Secret (v1) has no field status, so the wait for status.conditions[type=Ready].status to equal "True" could only time out [KP_E_CONFIG]\n`,
  );
});

test('sleep: 1e7 is refused before anything runs (Node timers overflow past 2^31-1 ms and would sleep 1 ms)', (t) => {
  const { dir, file } = tempConfig(HEAD + 'controller: { command: "true" }\nworkloads: { w: { steps: [ { sleep: 1e7 } ] } }\n');
  assertPrecise(
    t,
    run(['plan', '--config', file, '-o', join(dir, 'out')]),
    /kperturb\.yaml at workloads\.w\.steps\[0\]\.sleep: a duration in seconds from 0 to 86400/,
  );
});

test('a controller command that cannot be started: the spawn error and controller.command in the message', (t) => {
  const { dir, file } = tempConfig(
    HEAD + 'controller: { command: /nonexistent/controller }\nworkloads: { w: { steps: [ { sleep: 0 } ] } }\nreferenceRuns: 1\n',
  );
  const r = run(['learn', '--config', file, '-o', join(dir, 'out')]);
  assertPrecise(t, r, /kperturb\.yaml at controller\.command: a program kperturb can start \("\/nonexistent\/controller": ENOENT, not found\)/);
});

test('a YAML alias bomb names the file; a binary config is not echoed whole', (t) => {
  const levels = 'abcdefghi'.split('');
  const bomb = levels
    .map((c, i) =>
      i === 0
        ? 'a: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol]'
        : `${c}: &${c} [${Array(9)
            .fill('*' + levels[i - 1])
            .join(', ')}]`,
    )
    .join('\n');
  const { dir, file } = tempConfig(bomb + '\n');
  assertPrecise(t, run(['plan', '--config', file, '-o', join(dir, 'out')]), new RegExp(`${file}: YAML whose aliases`));
  const garbage = Buffer.from(Array.from({ length: 5000 }, (_, i) => (i * 7919 + 13) % 256)).toString('latin1');
  writeFileSync(file, garbage);
  const r = run(['plan', '--config', file, '-o', join(dir, 'out')]);
  assertPrecise(t, r, new RegExp(`${file} at \\(top level\\): a mapping`));
  t.true(r.stderr.length < 600, `${r.stderr.length} characters on stderr`);
});

test('report --html and --junit into a path that cannot be written name the option and the path', (t) => {
  const { out, resultsFile } = makeCampaign();
  const dir = join(out, 'a-directory');
  mkdirSync(dir);
  assertPrecise(t, run(['report', resultsFile, '--html', dir]), new RegExp(`at --html: a file path kperturb can write \\(${dir}: is a directory, EISDIR\\)`));
  assertPrecise(t, run(['report', resultsFile, '--junit', dir]), /at --junit: .*is a directory, EISDIR/);
  const underFile = join(resultsFile, 'junit.xml');
  assertPrecise(
    t,
    run(['report', resultsFile, '--junit', underFile]),
    new RegExp(`at --junit: a file path kperturb can write \\(${underFile}: ${resultsFile}: is not a directory`),
  );
});

test('a trace line of an unknown type is refused by diff with the file, the line and the known types', (t) => {
  const { root } = makeCampaign();
  const ref = join(root, 'learn', 'create', 'ref-1');
  const other = join(root, 'learn', 'create', 'ref-2');
  const trace = join(other, 'cluster.trace.jsonl');
  const lines = readFileSync(trace, 'utf8').split('\n');
  lines.splice(1, 0, JSON.stringify({ seq: 1, ts: 1, type: 'teleport' }));
  writeFileSync(trace, lines.join('\n'));
  assertPrecise(
    t,
    run(['diff', ref, other]),
    new RegExp(`${trace} at line 2: an event of a known type \\(header, request, .*cluster-change.*; got "teleport"\\)`),
  );
});

test('proxy: an upstream CA that is not a certificate, or a server that does not answer, exits 2 before listening', async (t) => {
  const dir = sharedScratchDir('kperturb-cli-');
  const kubeconfig = (cluster: string) =>
    `apiVersion: v1\nkind: Config\nclusters: [{ name: c, cluster: ${cluster} }]\nusers: [{ name: u, user: { token: t } }]\ncontexts: [{ name: x, context: { cluster: c, user: u } }]\ncurrent-context: x\n`;
  const notPem = join(dir, 'not-pem.kubeconfig');
  writeFileSync(notPem, kubeconfig(`{ server: "https://127.0.0.1:1", certificate-authority-data: ${Buffer.from('not a certificate').toString('base64')} }`));
  assertPrecise(
    t,
    run(['proxy', '--upstream-kubeconfig', notPem]),
    /not-pem\.kubeconfig at clusters\[c\]\.certificate-authority-data: PEM CA certificates \(found no -----BEGIN CERTIFICATE----- block\)/,
  );
  const broken = join(dir, 'broken.kubeconfig');
  const pem = `-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n`;
  writeFileSync(broken, kubeconfig(`{ server: "https://127.0.0.1:1", certificate-authority-data: ${Buffer.from(pem).toString('base64')} }`));
  assertPrecise(
    t,
    run(['proxy', '--upstream-kubeconfig', broken]),
    /broken\.kubeconfig at clusters\[c\]\.certificate-authority-data: valid PEM CA certificates \(certificate 1 of 1 does not parse/,
  );
  // A port that was free a moment ago: nothing answers there.
  const port = await new Promise<number>((resolve) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
  const unreachable = join(dir, 'unreachable.kubeconfig');
  writeFileSync(unreachable, kubeconfig(`{ server: "http://127.0.0.1:${port}", insecure-skip-tls-verify: true }`));
  assertPrecise(
    t,
    run(['proxy', '--upstream-kubeconfig', unreachable]),
    new RegExp(`unreachable\\.kubeconfig: could not reach the API server at http://127\\.0\\.0\\.1:${port}: .*ECONNREFUSED`),
  );
});

test('a config given as a plan is told the kind a plan has', (t) => {
  const { dir, file } = tempConfig(HEAD + 'controller: { command: "true" }\nworkloads: { w: { steps: [ { sleep: 0 } ] } }\n');
  assertPrecise(t, run(['test', file, '--config', file, '-o', join(dir, 'out')]), new RegExp(`${file} at kind: "TestPlan" \\(got "ControllerUnderTest"\\)`));
});

test('demo --only with a name no bundled example has exits 2 and lists the names (it ran nothing and exited 0 before)', (t) => {
  const out = sharedScratchDir('kperturb-cli-');
  assertPrecise(
    t,
    run(['demo', '--only', 'decommission-buggy', 'no-such-example', '-o', out]),
    /--only: names of bundled examples \(.*decommission-buggy.*\); got "no-such-example"/,
  );
});

test('--version prints the package version and exits 0', (t) => {
  const r = run(['--version']);
  t.is(r.status, 0, r.stderr);
  const { version } = JSON.parse(readFileSync(fileURLToPath(new URL('../../../package.json', import.meta.url)), 'utf8')) as { version: string };
  t.is(r.stdout.trim(), version);
});

test('every error carries its stable code: in the message, and as error.code in --json output', (t) => {
  const { file: config } = tempConfig(HEAD + 'controller: { command: 7 }\nworkloads: {}\n');
  t.regex(run(['learn', '-c', config]).stderr, /controller\.command: .* \[KP_E_CONFIG\]\n$/);
  const { dir } = tempConfig(HEAD);
  const planFile = join(dir, 'p.yaml');
  writeFileSync(planFile, 'apiVersion: kperturb.dev/v1\nkind: TestPlan\nmetadata: { name: p }\nspec: { faults: [] }\n');
  const { file: good } = tempConfig(HEAD + 'controller: { command: "true" }\nworkloads: { w: { steps: [ { sleep: 0 } ] } }\n');
  t.regex(run(['test', planFile, '-c', good, '-o', join(dir, 'out')]).stderr, /p\.yaml at spec\.faults: .* \[KP_E_PLAN\]\n$/);
  const kubeconfig = join(dir, 'kc');
  writeFileSync(kubeconfig, '{{{');
  t.regex(run(['proxy', '--upstream-kubeconfig', kubeconfig]).stderr, /\[KP_E_KUBECONFIG\]\n$/);
  t.regex(run(['test', '-c', good, '-j', '0']).stderr, /--parallel: .* \[KP_E_INPUT\]\n$/);
  t.regex(run(['schema', 'nope']).stderr, /\[KP_E_INPUT\]\n$/);

  const { resultsFile } = makeCampaign();
  writeFileSync(resultsFile, '{"format": "kperturb.dev/results/v1", "results": [ {');
  const text = run(['report', resultsFile]);
  t.regex(text.stderr, /\[KP_E_RESULTS\]\n$/);
  const json = run(['report', resultsFile, '--json']);
  t.is(json.status, 2);
  const { error } = JSON.parse(json.stdout) as { error: { code: string; message: string; file?: string } };
  t.is(error.code, 'KP_E_RESULTS');
  t.is(error.file, resultsFile);
  t.true(json.stderr.includes(error.message), 'the same message on stderr');
});
