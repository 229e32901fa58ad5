/**
 * A hostile but fair user's sweep of bad inputs over every command: each case must exit 2, print no
 * stack trace, and name what is wrong (the file, the path inside it or the option). Not part of
 * `npm test` (it starts the CLI about a hundred times); `npm run sweep:bad-input` prints one line per
 * case that is not answered precisely and the totals, and exits 1 when any is not.
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const CLI = fileURLToPath(new URL('../../../bin/kperturb.js', import.meta.url));
const root = mkdtempSync(join(tmpdir(), 'kperturb-sweep-'));

interface Case {
  name: string;
  args: string[];
  /** What stderr must name (a file, a path inside it, an option), besides the exit code. */
  names: RegExp;
  /** Environment variables for this case (on top of kperturb's own). */
  env?: Record<string, string>;
}

let fileCount = 0;
function file(text: string | Buffer, name = 'kperturb.yaml'): string {
  const dir = join(root, String(++fileCount));
  mkdirSync(dir, { recursive: true });
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
}

const HEAD = 'apiVersion: kperturb.dev/v1\nkind: ControllerUnderTest\nmetadata: { name: x }\n';
const GOOD_CONTROLLER = 'controller: { command: "true" }\n';
const GOOD_WORKLOADS = 'workloads: { w: { steps: [ { sleep: 0 } ] } }\n';

const cases: Case[] = [];

/** A config with one field wrong: `learn` and `plan` must name the file and `path`. */
function configCase(name: string, body: string, path: string, command: 'learn' | 'plan' | 'test' = 'plan'): void {
  const f = file(body);
  cases.push({
    name: `config: ${name}`,
    args: [command, '-c', f, '-o', join(root, 'out', String(fileCount))],
    names: path === 'kperturb.yaml' ? new RegExp(escape(f)) : new RegExp(`${escape(f)}[\\s\\S]*${escape(path)}`),
  });
}

function escape(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

// The config file itself.
cases.push({ name: 'config: missing file', args: ['plan', '-c', join(root, 'nope.yaml')], names: /nope\.yaml/ });
cases.push({ name: 'config: a directory', args: ['plan', '-c', root], names: new RegExp(escape(root)) });
configCase('empty file', '', 'kperturb.yaml');
configCase('YAML syntax error', HEAD + 'controller: { command: "true"\n', 'kperturb.yaml');
configCase('binary garbage', Buffer.from(Array.from({ length: 4096 }, (_, i) => (i * 7919) % 256)).toString('latin1'), 'kperturb.yaml');
configCase(
  'a YAML alias bomb',
  'a: &a ["x","x","x","x","x","x","x","x","x"]\nb: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]\nc: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]\nd: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]\ne: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d]\nf: &f [*e,*e,*e,*e,*e,*e,*e,*e,*e]\ng: &g [*f,*f,*f,*f,*f,*f,*f,*f,*f]\n',
  'kperturb.yaml',
);
configCase('a list at the top', '- a\n- b\n', 'kperturb.yaml');
configCase('wrong apiVersion', 'apiVersion: v2\nkind: ControllerUnderTest\nmetadata: { name: x }\n' + GOOD_CONTROLLER + GOOD_WORKLOADS, 'apiVersion');
configCase('wrong kind', 'apiVersion: kperturb.dev/v1\nkind: Pod\nmetadata: { name: x }\n' + GOOD_CONTROLLER + GOOD_WORKLOADS, 'kind');
configCase('no metadata.name', 'apiVersion: kperturb.dev/v1\nkind: ControllerUnderTest\nmetadata: {}\n' + GOOD_CONTROLLER + GOOD_WORKLOADS, 'metadata.name');
configCase(
  'metadata.name not a DNS label',
  'apiVersion: kperturb.dev/v1\nkind: ControllerUnderTest\nmetadata: { name: "A B/c" }\n' + GOOD_CONTROLLER + GOOD_WORKLOADS,
  'metadata.name',
);
configCase('no controller', HEAD + GOOD_WORKLOADS, 'controller');
configCase('controller.command a number', HEAD + 'controller: { command: 7 }\n' + GOOD_WORKLOADS, 'controller.command');
configCase('controller.command empty', HEAD + 'controller: { command: "" }\n' + GOOD_WORKLOADS, 'controller.command');
configCase('controller.args not a list', HEAD + 'controller: { command: "true", args: "x" }\n' + GOOD_WORKLOADS, 'controller.args');
configCase('controller.env a list', HEAD + 'controller: { command: "true", env: [a] }\n' + GOOD_WORKLOADS, 'controller.env');
configCase('controller.env value a map', HEAD + 'controller: { command: "true", env: { A: { b: 1 } } }\n' + GOOD_WORKLOADS, 'controller.env');
configCase('controller.workingDir missing', HEAD + 'controller: { command: "true", workingDir: /nonexistent/dir }\n' + GOOD_WORKLOADS, 'controller.workingDir');
configCase('controller.ports not numbers', HEAD + 'controller: { command: "true", ports: [http] }\n' + GOOD_WORKLOADS, 'controller.ports');
configCase('controller.ports out of range', HEAD + 'controller: { command: "true", ports: [70000] }\n' + GOOD_WORKLOADS, 'controller.ports');
configCase('unknown controller field', HEAD + 'controller: { command: "true", comand: x }\n' + GOOD_WORKLOADS, 'controller.comand');
configCase('no workloads', HEAD + GOOD_CONTROLLER, 'workloads');
configCase('workloads a list', HEAD + GOOD_CONTROLLER + 'workloads: [a]\n', 'workloads');
configCase('workloads empty', HEAD + GOOD_CONTROLLER + 'workloads: {}\n', 'workloads');
configCase('workload without steps', HEAD + GOOD_CONTROLLER + 'workloads: { w: {} }\n', 'workloads.w.steps');
configCase('steps not a list', HEAD + GOOD_CONTROLLER + 'workloads: { w: { steps: 3 } }\n', 'workloads.w.steps');
configCase('a step of no known kind', HEAD + GOOD_CONTROLLER + 'workloads: { w: { steps: [ { frobnicate: 1 } ] } }\n', 'workloads.w.steps[0]');
configCase('a step of two kinds', HEAD + GOOD_CONTROLLER + 'workloads: { w: { steps: [ { sleep: 1, apply: x.yaml } ] } }\n', 'workloads.w.steps[0]');
configCase('sleep negative', HEAD + GOOD_CONTROLLER + 'workloads: { w: { steps: [ { sleep: -1 } ] } }\n', 'workloads.w.steps[0].sleep');
configCase('sleep 1e7', HEAD + GOOD_CONTROLLER + 'workloads: { w: { steps: [ { sleep: 1e7 } ] } }\n', 'workloads.w.steps[0].sleep');
configCase('sleep a word', HEAD + GOOD_CONTROLLER + 'workloads: { w: { steps: [ { sleep: soon } ] } }\n', 'workloads.w.steps[0].sleep');
configCase('sleep NaN', HEAD + GOOD_CONTROLLER + 'workloads: { w: { steps: [ { sleep: .nan } ] } }\n', 'workloads.w.steps[0].sleep');
configCase('sleep Infinity', HEAD + GOOD_CONTROLLER + 'workloads: { w: { steps: [ { sleep: .inf } ] } }\n', 'workloads.w.steps[0].sleep');
configCase('apply a missing file', HEAD + GOOD_CONTROLLER + 'workloads: { w: { steps: [ { apply: missing.yaml } ] } }\n', 'workloads.w.steps[0].apply');
configCase('apply a directory', HEAD + GOOD_CONTROLLER + `workloads: { w: { steps: [ { apply: ${root} } ] } }\n`, 'workloads.w.steps[0].apply');
configCase('apply a number', HEAD + GOOD_CONTROLLER + 'workloads: { w: { steps: [ { apply: 5 } ] } }\n', 'workloads.w.steps[0].apply');
configCase('wait without a key', HEAD + GOOD_CONTROLLER + 'workloads: { w: { steps: [ { waitFor: {} } ] } }\n', 'workloads.w.steps[0].waitFor');
configCase(
  'wait on a malformed key',
  HEAD + GOOD_CONTROLLER + 'workloads: { w: { steps: [ { waitFor: { key: "no slashes" } } ] } }\n',
  'workloads.w.steps[0].waitFor',
);
configCase(
  'wait timeout negative',
  HEAD + GOOD_CONTROLLER + 'workloads: { w: { steps: [ { waitFor: { key: ConfigMap/default/a, timeout: -5 } } ] } }\n',
  'workloads.w.steps[0].waitFor',
);
configCase(
  'wait timeout huge',
  HEAD + GOOD_CONTROLLER + 'workloads: { w: { steps: [ { waitFor: { key: ConfigMap/default/a, timeout: 1e9 } } ] } }\n',
  'workloads.w.steps[0].waitFor',
);
configCase(
  'wait onTimeout unknown',
  HEAD + GOOD_CONTROLLER + 'workloads: { w: { steps: [ { waitFor: { key: ConfigMap/default/a, onTimeout: shrug } } ] } }\n',
  'workloads.w.steps[0].waitFor',
);
configCase('delete a malformed key', HEAD + GOOD_CONTROLLER + 'workloads: { w: { steps: [ { delete: "x" } ] } }\n', 'workloads.w.steps[0].delete');
configCase(
  'patch without a patch',
  HEAD + GOOD_CONTROLLER + 'workloads: { w: { steps: [ { patch: { key: ConfigMap/default/a } } ] } }\n',
  'workloads.w.steps[0].patch',
);
configCase('assert a missing file', HEAD + GOOD_CONTROLLER + 'workloads: { w: { steps: [ { assert: missing.yaml } ] } }\n', 'workloads.w.steps[0].assert');
configCase(
  'assert file and resource',
  HEAD + GOOD_CONTROLLER + `workloads: { w: { steps: [ { assert: { file: ${file('kind: X', 'x.yaml')}, resource: { apiVersion: v1, kind: X } } } ] } }\n`,
  'workloads.w.steps[0].assert',
);
configCase(
  'error timeout huge',
  HEAD + GOOD_CONTROLLER + 'workloads: { w: { steps: [ { error: { resource: { apiVersion: v1, kind: X }, timeoutSeconds: 1e9 } } ] } }\n',
  'workloads.w.steps[0].error.timeoutSeconds',
);
configCase(
  'command without an entrypoint',
  HEAD + GOOD_CONTROLLER + 'workloads: { w: { steps: [ { command: { args: [x] } } ] } }\n',
  'workloads.w.steps[0].command.entrypoint',
);
configCase(
  'script content a number',
  HEAD + GOOD_CONTROLLER + 'workloads: { w: { steps: [ { script: { content: 5 } } ] } }\n',
  'workloads.w.steps[0].script.content',
);
configCase('chainsaw directory missing', HEAD + GOOD_CONTROLLER + 'workloads: { w: { chainsaw: /nonexistent/tests } }\n', 'workloads.w.chainsaw');
configCase('setup a directory', HEAD + GOOD_CONTROLLER + `setup: [ ${root} ]\n` + GOOD_WORKLOADS, 'setup[0]');
configCase('setup a missing file', HEAD + GOOD_CONTROLLER + 'setup: [ missing.yaml ]\n' + GOOD_WORKLOADS, 'setup[0]');
configCase('setup not a list', HEAD + GOOD_CONTROLLER + 'setup: 12\n' + GOOD_WORKLOADS, 'setup');
configCase('referenceRuns 0', HEAD + GOOD_CONTROLLER + GOOD_WORKLOADS + 'referenceRuns: 0\n', 'referenceRuns');
configCase('referenceRuns a word', HEAD + GOOD_CONTROLLER + GOOD_WORKLOADS + 'referenceRuns: many\n', 'referenceRuns');
configCase('referenceRuns 1.5', HEAD + GOOD_CONTROLLER + GOOD_WORKLOADS + 'referenceRuns: 1.5\n', 'referenceRuns');
configCase('referenceRuns 1e6', HEAD + GOOD_CONTROLLER + GOOD_WORKLOADS + 'referenceRuns: 1000000\n', 'referenceRuns');
configCase('masks not a list', HEAD + GOOD_CONTROLLER + GOOD_WORKLOADS + 'masks: { a: 1 }\n', 'masks');
configCase('a mask without a key', HEAD + GOOD_CONTROLLER + GOOD_WORKLOADS + 'masks: [ { paths: [a] } ]\n', 'masks[0]');
configCase('a mask path of bad syntax', HEAD + GOOD_CONTROLLER + GOOD_WORKLOADS + 'masks: [ { key: "*", paths: ["spec.x[name=]"] } ]\n', 'masks[0]');
configCase('countUpdates without paths', HEAD + GOOD_CONTROLLER + GOOD_WORKLOADS + 'countUpdates: [ { key: "StatefulSet/default/*" } ]\n', 'countUpdates[0]');
configCase('settle a word', HEAD + GOOD_CONTROLLER + GOOD_WORKLOADS + 'settle: later\n', 'settle');
configCase('an unknown top-level field', HEAD + GOOD_CONTROLLER + GOOD_WORKLOADS + 'wrokloads: {}\n', 'wrokloads');
configCase('learn with the same bad config', HEAD + 'controller: { command: 7 }\n' + GOOD_WORKLOADS, 'controller.command', 'learn');
// A warning, not an error: plan (which then fails for want of reference runs) names the step and the 10 s hold limit.
configCase(
  'a soft wait longer than the proxy holds a watch',
  HEAD + GOOD_CONTROLLER + 'workloads: { w: { steps: [ { waitFor: { key: ConfigMap/default/a, timeoutSeconds: 20, onTimeout: continue } } ] } }\n',
  'workloads.w.steps[0].waitFor.timeoutSeconds: a soft wait (onTimeout: continue) of at most 10 s',
);
// A warning, not an error: plan names settle.quietMs when a reference run shows a pause as long as the
// window before a write (plan then fails on the hand-written run.json).
{
  const out = join(root, 'out', 'settle-window');
  const refDir = join(out, 'x', 'learn', 'w', 'ref-1');
  mkdirSync(refDir, { recursive: true });
  const events = [
    { type: 'header', seq: 0, ts: 1000, format: 'kperturb.dev/trace/v1', source: 'controller' },
    { type: 'request', seq: 1, ts: 1000, id: 1, incarnation: 1, method: 'GET', path: '/api/v1/configmaps', query: {}, verb: 'list' },
    { type: 'response', seq: 2, ts: 1010, id: 1, status: 200, durationMs: 10 },
    {
      type: 'request',
      seq: 3,
      ts: 3010,
      id: 2,
      incarnation: 1,
      method: 'PATCH',
      path: '/api/v1/namespaces/default/configmaps/o',
      query: {},
      verb: 'patch',
      key: 'ConfigMap/default/o',
    },
  ];
  writeFileSync(join(refDir, 'controller.trace.jsonl'), events.map((e) => JSON.stringify(e)).join('\n') + '\n');
  writeFileSync(join(refDir, 'run.json'), '{}');
  // As learn leaves it: the key the runs' Secret values are hashed with, beside them.
  writeFileSync(join(out, 'secret-hash.key'), randomBytes(32), { mode: 0o600 });
  const f = file(HEAD + GOOD_CONTROLLER + GOOD_WORKLOADS + 'settle: { quietMs: 500 }\n');
  cases.push({
    name: 'config: a quiet window the reference runs show too short',
    args: ['plan', '-c', f, '-o', out],
    names: new RegExp(`${escape(f)} at settle\\.quietMs: a quiet window longer than the controller's pauses \\(got 500 ms\\)`),
  });
}
// A controller that exits at start: learn shows what it printed and the likely cause in kperturb.yaml's terms.
for (const [what, printed, names] of [
  [
    'panics for want of an environment variable',
    'panic: WATCH_NAMESPACE must be set',
    /panic: WATCH_NAMESPACE must be set[\s\S]*set controller\.env\.WATCH_NAMESPACE/,
  ],
  [
    'finds its port taken',
    'listen tcp :8080: bind: address already in use',
    /port 8080 is taken[\s\S]*controller\.ports: \[8080\] and controller\.maxParallel: 1/,
  ],
] as const) {
  const script = file(`echo '${printed}' >&2\nexit 2\n`, 'manager.sh');
  cases.push({
    name: `a controller that ${what}`,
    args: [
      'learn',
      '-c',
      file(HEAD + `controller: { command: sh, args: [${JSON.stringify(script)}] }\n` + GOOD_WORKLOADS + 'referenceRuns: 1\n'),
      '-o',
      join(root, 'out', String(fileCount)),
    ],
    names,
  });
}
// A manifest the emulated release does not serve: learn names it before any run, and the release that serves it.
{
  const crd = file(
    'apiVersion: apiextensions.k8s.io/v1beta1\nkind: CustomResourceDefinition\nmetadata: { name: widgets.x.dev }\nspec: { group: x.dev, names: { kind: Widget, plural: widgets }, scope: Namespaced, version: v1 }\n',
    'crd.yaml',
  );
  configCase(
    'a setup CRD of a version the emulated release does not serve',
    HEAD + GOOD_CONTROLLER + `setup: [${crd}]\n` + GOOD_WORKLOADS,
    "setup[0]: a kind the embedded cluster's Kubernetes 1.32 serves",
    'learn',
  );
}
configCase(
  'a wait on a field the kind does not have',
  HEAD + GOOD_CONTROLLER + 'workloads: { w: { steps: [ { waitFor: { key: ConfigMap/default/a, field: spec.replicas, equals: 3 } } ] } }\n',
  'workloads.w.steps[0].waitFor.field: a field ConfigMap has',
  'learn',
);
configCase('test with the same bad config', HEAD + 'controller: { command: 7 }\n' + GOOD_WORKLOADS, 'controller.command', 'test');

// Options.
const good = file(HEAD + GOOD_CONTROLLER + GOOD_WORKLOADS);
cases.push({ name: 'unknown command', args: ['frobnicate'], names: /frobnicate/ });
cases.push({
  name: 'init in a directory that does not exist',
  args: ['init', join(root, 'no-such-repo'), '--no-build'],
  names: /no-such-repo is not a directory/,
});
{
  const existing = file('mine\n');
  cases.push({ name: 'init over an existing kperturb.yaml', args: ['init', join(existing, '..'), '--no-build'], names: new RegExp(escape(existing)) });
}
cases.push({ name: 'build with a main package that is not there', args: ['build', root, '--main', './cmd/nothing'], names: /cmd\/nothing|no `go` command/ });
cases.push({ name: 'import an unknown format', args: ['import', 'ginkgo', root], names: /ginkgo/ });
cases.push({ name: 'import a directory without tests', args: ['import', 'kuttl', root], names: new RegExp(escape(root)) });
cases.push({
  name: 'import a chainsaw test kperturb cannot express',
  args: [
    'import',
    'chainsaw',
    file(
      'apiVersion: chainsaw.kyverno.io/v1alpha1\nkind: Test\nmetadata: { name: t }\nspec:\n  steps:\n  - try:\n    - sleep: { duration: 1s }\n  bindings: [{ name: a, value: b }]\n',
      'chainsaw-test.yaml',
    ),
  ],
  names: /chainsaw-test\.yaml at spec\.bindings/,
});
cases.push({ name: 'unknown option', args: ['learn', '--no-such-flag'], names: /--no-such-flag/ });
cases.push({ name: 'learn -w an unknown workload', args: ['learn', '-c', good, '-o', join(root, 'o1'), '-w', 'nope'], names: /nope/ });
cases.push({ name: 'learn --serialize 0', args: ['learn', '-c', good, '-o', join(root, 'o2'), '--serialize', '0'], names: /--serialize/ });
cases.push({ name: 'learn --serialize a word', args: ['learn', '-c', good, '-o', join(root, 'o3'), '--serialize', 'fast'], names: /--serialize/ });
cases.push({
  name: 'learn --real with --kubeconfig',
  args: ['learn', '-c', good, '-o', join(root, 'o4'), '--real', '--kubeconfig', good],
  names: /--real|--kubeconfig/,
});
cases.push({ name: 'learn --kubeconfig missing', args: ['learn', '-c', good, '-o', join(root, 'o5'), '--kubeconfig', join(root, 'nokube')], names: /nokube/ });
cases.push({ name: 'plan before learn', args: ['plan', '-c', good, '-o', join(root, 'o6')], names: /learn/ });
cases.push({ name: 'test -j 0', args: ['test', '-c', good, '-o', join(root, 'o7'), '-j', '0'], names: /-j|--parallel/ });
cases.push({ name: 'test -j a word', args: ['test', '-c', good, '-o', join(root, 'o8'), '-j', 'many'], names: /-j|--parallel/ });
cases.push({ name: 'test -j 1e9', args: ['test', '-c', good, '-o', join(root, 'o9'), '-j', '1000000000'], names: /-j|--parallel/ });
cases.push({ name: 'test --confirm-runs -1', args: ['test', '-c', good, '-o', join(root, 'o7b'), '--confirm-runs=-1'], names: /--confirm-runs/ });
cases.push({ name: 'test --confirm-runs a word', args: ['test', '-c', good, '-o', join(root, 'o7c'), '--confirm-runs', 'all'], names: /--confirm-runs/ });
cases.push({ name: 'test --contract unknown', args: ['test', '-c', good, '-o', join(root, 'o10'), '--contract', 'loose'], names: /--contract/ });
cases.push({ name: 'test a missing plan file', args: ['test', join(root, 'noplan.yaml'), '-c', good, '-o', join(root, 'o11')], names: /noplan\.yaml/ });
cases.push({ name: 'test with no plans at all', args: ['test', '-c', good, '-o', join(root, 'o12')], names: /plan/ });
// kperturb explore: its options, and configs with nothing to explore.
cases.push({ name: 'explore --seed a word', args: ['explore', '-c', good, '--emit', join(root, 'e1'), '--seed', 'lucky'], names: /--seed/ });
cases.push({ name: 'explore --steps 0', args: ['explore', '-c', good, '--emit', join(root, 'e2'), '--steps', '0'], names: /--steps/ });
cases.push({ name: 'explore --perturb 0', args: ['explore', '-c', good, '--emit', join(root, 'e5'), '--perturb', '0'], names: /--perturb/ });
cases.push({ name: 'explore with no CRD', args: ['explore', '-c', good, '--emit', join(root, 'e3')], names: new RegExp(`${escape(good)}[\\s\\S]*crds`) });
{
  const crd = file(
    'apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata: { name: as.x.dev }\nspec: { group: x.dev, names: { kind: A, plural: as }, scope: Namespaced, versions: [{ name: v1, served: true, storage: true, schema: { openAPIV3Schema: { type: object } } }] }\n',
    'crd.yaml',
  );
  const seed = file('apiVersion: y.dev/v1\nkind: B\nmetadata: { name: b }\n', 'seed.yaml');
  const cfg = file(HEAD + GOOD_CONTROLLER + `setup: [${crd}]\nseeds: [${seed}]\n`);
  cases.push({
    name: 'explore a seed no CRD serves',
    args: ['explore', '-c', cfg, '--emit', join(root, 'e4')],
    names: new RegExp(`${escape(seed)}[\\s\\S]*apiVersion`),
  });
  configCase('crds names a file of something else', HEAD + GOOD_CONTROLLER + GOOD_WORKLOADS + `crds: [${seed}]\n`, 'crds[0]');
  configCase('seeds names a missing file', HEAD + GOOD_CONTROLLER + `seeds: [${join(root, 'noseed.yaml')}]\n`, 'seeds[0]');
}
cases.push({ name: 'cluster --port a word', args: ['cluster', '--port', 'http'], names: /--port/ });
// kperturb's own port, held by another program (this sweep).
const heldPort = createServer();
await new Promise<void>((resolve) => heldPort.listen(0, '127.0.0.1', resolve));
cases.push({
  name: 'cluster --port that another program listens on',
  args: ['cluster', '--port', String((heldPort.address() as AddressInfo).port)],
  names: /--port: a port no other program listens on/,
});
cases.push({ name: 'cluster --port 99999', args: ['cluster', '--port', '99999'], names: /--port/ });
cases.push({ name: 'cluster --kubernetes-version 1.16', args: ['cluster', '--kubernetes-version', '1.16'], names: /--kubernetes-version/ });
cases.push({ name: 'cluster --kubernetes-version a word', args: ['cluster', '--kubernetes-version', 'latest'], names: /--kubernetes-version/ });
cases.push({
  name: 'cluster --kubeconfig-out into a missing dir',
  args: ['cluster', '--kubeconfig-out', join(root, 'no', 'such', 'kc')],
  names: /--kubeconfig-out|no\/such/,
});
cases.push({
  name: 'cluster --kubeconfig-out over a non-kubeconfig',
  args: ['cluster', '--kubeconfig-out', file('just some notes\n', 'notes.txt')],
  names: /notes\.txt/,
});
// No kubeconfig anywhere (no KUBECONFIG, a home without ~/.kube/config): the option that names one is said.
cases.push({ name: 'proxy without an upstream', args: ['proxy'], names: /--upstream-kubeconfig/, env: { HOME: join(root, 'empty-home'), KUBECONFIG: '' } });
cases.push({ name: 'proxy upstream missing', args: ['proxy', '--upstream-kubeconfig', join(root, 'nokube')], names: /nokube/ });
cases.push({ name: 'proxy upstream garbage', args: ['proxy', '--upstream-kubeconfig', file('{{{', 'kc')], names: /kc/ });
cases.push({
  name: 'proxy upstream with an invalid CA',
  args: [
    'proxy',
    '--upstream-kubeconfig',
    file(
      'apiVersion: v1\nkind: Config\nclusters: [ { name: c, cluster: { server: "https://127.0.0.1:1", certificate-authority-data: bm90IGEgY2VydA== } } ]\ncontexts: [ { name: c, context: { cluster: c, user: u } } ]\ncurrent-context: c\nusers: [ { name: u, user: { token: t } } ]\n',
      'kc',
    ),
  ],
  names: /certificate|CA|kc/,
});
cases.push({
  name: 'proxy upstream unreachable',
  args: [
    'proxy',
    '--upstream-kubeconfig',
    file(
      'apiVersion: v1\nkind: Config\nclusters: [ { name: c, cluster: { server: "http://127.0.0.1:1" } } ]\ncontexts: [ { name: c, context: { cluster: c, user: u } } ]\ncurrent-context: c\nusers: [ { name: u, user: { token: t } } ]\n',
      'kc',
    ),
  ],
  names: /127\.0\.0\.1:1|reach|connect|kc/,
});
const kubeconfig = file(
  'apiVersion: v1\nkind: Config\nclusters: [ { name: c, cluster: { server: "https://127.0.0.1:1", insecure-skip-tls-verify: true } } ]\ncontexts: [ { name: c, context: { cluster: c, user: u } } ]\ncurrent-context: c\nusers: [ { name: u, user: { token: t } } ]\n',
  'kc',
);
cases.push({ name: 'proxy --context unknown', args: ['proxy', '--upstream-kubeconfig', kubeconfig, '--context', 'nope'], names: /"nope"/ });
cases.push({
  name: 'test --context unknown',
  args: ['learn', '--context', 'nope', '-c', good, '-o', join(root, 'ctx')],
  names: /"nope"/,
  env: { KUBECONFIG: kubeconfig },
});
cases.push({ name: 'proxy --port a word', args: ['proxy', '--upstream-kubeconfig', kubeconfig, '--port', 'x'], names: /--port/ });
{
  const out = mkdtempSync(join(root, 'keyed-'));
  writeFileSync(join(out, 'secret-hash.key'), 'short');
  cases.push({ name: 'a campaign secret-hash.key of the wrong size', args: ['plan', '-c', good, '-o', out], names: /secret-hash\.key/ });
}
cases.push({ name: 'report a missing path', args: ['report', join(root, 'nothing-here')], names: /nothing-here/ });
cases.push({ name: 'report an empty directory', args: ['report', mkdtempSync(join(root, 'empty-'))], names: /empty-/ });
cases.push({ name: 'report a results.json of garbage', args: ['report', file('{"format": 3', 'results.json')], names: /results\.json/ });
cases.push({
  name: 'report a results.json of another format',
  args: ['report', file('{"format":"something/else","results":[]}', 'results.json')],
  names: /results\.json/,
});
cases.push({ name: 'report a verdict.json of garbage', args: ['report', file('[]', 'verdict.json')], names: /verdict\.json/ });
cases.push({
  name: 'report --html into a missing dir',
  args: ['report', file('{"format": 3', 'results.json'), '--html', join(root, 'no', 'such', 'r.html')],
  names: /--html|results\.json/,
});
cases.push({ name: 'diff missing runs', args: ['diff', join(root, 'a'), join(root, 'b')], names: /[/]a\b/ });
cases.push({ name: 'diff a file, not a run directory', args: ['diff', good, good], names: /kperturb\.yaml/ });
const runDir = (trace: string) => {
  const dir = mkdtempSync(join(root, 'run-'));
  writeFileSync(join(dir, 'run.json'), '{}');
  writeFileSync(join(dir, 'controller.trace.jsonl'), trace);
  writeFileSync(join(dir, 'cluster.trace.jsonl'), trace);
  return dir;
};
cases.push({ name: 'diff runs whose run.json is empty', args: ['diff', runDir(''), runDir('')], names: /run\.json|end-state/ });
cases.push({
  name: 'diff a trace line of an unknown type',
  args: ['diff', runDir('{"type":"mystery","seq":1}\n'), runDir('{"type":"mystery","seq":1}\n')],
  names: /mystery|trace|run\.json/,
});
cases.push({ name: 'demo --only an unknown example', args: ['demo', '--only', 'nope', '-o', join(root, 'd1')], names: /nope/ });
cases.push({ name: 'demo --confirm-runs 1.5', args: ['demo', '--confirm-runs', '1.5', '-o', join(root, 'd3')], names: /--confirm-runs/ });
cases.push({ name: 'demo -j 0', args: ['demo', '-j', '0', '-o', join(root, 'd2')], names: /-j|--parallel/ });

// Plan files.
function planCase(name: string, spec: string, path: string): void {
  const p = file(`apiVersion: kperturb.dev/v1\nkind: TestPlan\nmetadata: { name: p }\nspec:\n  controller: x\n  workload: w\n${spec}`, 'p.yaml');
  cases.push({
    name: `plan file: ${name}`,
    args: ['test', p, '-c', good, '-o', join(root, 'po', String(fileCount))],
    names: new RegExp(path === 'p.yaml' ? 'p\\.yaml' : `p\\.yaml[\\s\\S]*${escape(path)}`),
  });
}
planCase(
  'no pattern',
  '  description: d\n  faults: [ { type: crash-after-write, after: { verb: create, key: ConfigMap/default/a, occurrence: 1 } } ]\n',
  'spec.pattern',
);
planCase(
  'unknown pattern',
  '  pattern: chaos\n  description: d\n  faults: [ { type: crash-after-write, after: { verb: create, key: ConfigMap/default/a, occurrence: 1 } } ]\n',
  'spec.pattern',
);
planCase('faults not a list', '  pattern: intermediate-state\n  description: d\n  faults: 3\n', 'spec.faults');
planCase('unknown fault type', '  pattern: intermediate-state\n  description: d\n  faults: [ { type: meteor } ]\n', 'spec.faults[0].type');
planCase(
  'occurrence 0',
  '  pattern: intermediate-state\n  description: d\n  faults: [ { type: crash-after-write, after: { verb: create, key: ConfigMap/default/a, occurrence: 0 } } ]\n',
  'spec.faults[0].after.occurrence',
);
planCase(
  'unknown verb',
  '  pattern: intermediate-state\n  description: d\n  faults: [ { type: crash-after-write, after: { verb: yeet, key: ConfigMap/default/a, occurrence: 1 } } ]\n',
  'spec.faults[0].after.verb',
);
planCase(
  'malformed key',
  '  pattern: intermediate-state\n  description: d\n  faults: [ { type: crash-after-write, after: { verb: create, key: a, occurrence: 1 } } ]\n',
  'spec.faults[0].after.key',
);
planCase(
  'a managed-system fault that never heals',
  '  pattern: managed-system\n  description: d\n  faults: [ { type: app-unavailable, application: kv, answer: refuse, at: { call: { application: kv, key: Pod/default/kv-0, occurrence: 1 } } } ]\n',
  'spec.faults[0]',
);
planCase(
  'a node given as Node/namespace/name',
  '  pattern: managed-system\n  description: d\n  faults: [ { type: node-not-ready, node: Node/default/n1, mode: unreachable, forSeconds: 1, at: { change: { key: ConfigMap/default/a, change: create, occurrence: 1 } } } ]\n',
  'spec.faults[0].node',
);
planCase(
  'a pod-evict of an unknown way',
  '  pattern: managed-system\n  description: d\n  faults: [ { type: pod-evict, pod: Pod/default/kv-0, how: drain, at: { change: { key: ConfigMap/default/a, change: create, occurrence: 1 } } } ]\n',
  'spec.faults[0].how',
);
planCase(
  'a pvc-fault on a pod',
  '  pattern: managed-system\n  description: d\n  faults: [ { type: pvc-fault, claim: Pod/default/kv-0, mode: lost, forSeconds: 1, at: { change: { key: ConfigMap/default/a, change: create, occurrence: 1 } } } ]\n',
  'spec.faults[0].claim',
);
planCase(
  'a call trigger on a ConfigMap',
  '  pattern: managed-system\n  description: d\n  faults: [ { type: pod-crash, pod: Pod/default/kv-0, mode: unready, forSeconds: 1, at: { call: { application: kv, key: ConfigMap/default/a, occurrence: 1 } } } ]\n',
  'spec.faults[0].at.call.key',
);
{
  const p = file(
    'apiVersion: kperturb.dev/v1\nkind: TestPlan\nmetadata: { name: p }\nspec:\n  controller: someone-else\n  workload: w\n  pattern: intermediate-state\n  description: d\n  faults: [ { type: crash-after-write, after: { verb: create, key: ConfigMap/default/a, occurrence: 1 } } ]\n',
    'p.yaml',
  );
  cases.push({ name: 'plan file: of another controller', args: ['test', p, '-c', good, '-o', join(root, 'po-other')], names: /someone-else/ });
}
{
  const p = file(
    'apiVersion: kperturb.dev/v1\nkind: TestPlan\nmetadata: { name: p }\nspec:\n  controller: x\n  workload: no-such-workload\n  pattern: intermediate-state\n  description: d\n  faults: [ { type: crash-after-write, after: { verb: create, key: ConfigMap/default/a, occurrence: 1 } } ]\n',
    'p.yaml',
  );
  cases.push({ name: 'plan file: of an unknown workload', args: ['test', p, '-c', good, '-o', join(root, 'po-wl')], names: /no-such-workload/ });
}
planCase('YAML garbage', '  pattern: [\n', 'p.yaml');

async function runCase(c: Case): Promise<{ c: Case; code: number | null; stderr: string; problems: string[] }> {
  const child = spawn(process.execPath, [CLI, ...c.args], { stdio: ['ignore', 'ignore', 'pipe'], env: { ...process.env, KPERTURB_DEBUG: '', ...c.env } });
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
  const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
  const code = await new Promise<number | null>((res) => child.on('close', (n) => res(n)));
  clearTimeout(timer);
  const problems: string[] = [];
  if (code !== 2) problems.push(`exit ${code}`);
  if (/\n\s+at /.test(stderr)) problems.push('stack trace');
  if (!c.names.test(stderr)) problems.push(`does not name ${c.names}`);
  if (stderr.length > 4000) problems.push(`${stderr.length} characters of stderr`);
  return { c, code, stderr, problems };
}

const PARALLEL = 2;
const results: Awaited<ReturnType<typeof runCase>>[] = [];
let next = 0;
await Promise.all(
  Array.from({ length: PARALLEL }, async () => {
    while (next < cases.length) results.push(await runCase(cases[next++]!));
  }),
);
heldPort.close();
const bad = results.filter((r) => r.problems.length > 0);
for (const r of bad)
  console.log(
    `NOT PRECISE  ${r.c.name}: ${r.problems.join('; ')}\n  kperturb ${r.c.args.join(' ')}\n  ${r.stderr.trim().split('\n').slice(0, 4).join('\n  ')}`,
  );
console.log(
  `${results.length} bad inputs tried: ${results.length - bad.length} answered precisely (exit 2, no stack trace, naming what is wrong), ${bad.length} not`,
);
process.exitCode = bad.length > 0 ? 1 : 0;
