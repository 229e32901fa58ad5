/**
 * The chainsaw and KUTTL importers: what each documented construct becomes, and for each one kperturb
 * cannot express, a refusal naming the file, the path inside it and why.
 */
import test from 'ava';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { importChainsaw } from '../../src/config/import/chainsaw.js';
import { importKuttl } from '../../src/config/import/kuttl.js';
import { UserInputError } from '../../src/model/errors.js';
import { scratchDir } from '../_scratch-dir.js';

function testDir(t: import('ava').ExecutionContext, files: Record<string, string>): string {
  const dir = scratchDir(t, 'kperturb-import-');
  for (const [name, content] of Object.entries(files)) {
    if (name.endsWith('/')) mkdirSync(join(dir, name), { recursive: true });
    else writeFileSync(join(dir, name), content);
  }
  return dir;
}

const CM = 'apiVersion: v1\nkind: ConfigMap\nmetadata: { name: cm }\ndata: { a: "1" }\n';
const chainsawTest = (tryOps: string, spec = ''): string =>
  `apiVersion: chainsaw.kyverno.io/v1alpha1\nkind: Test\nmetadata: { name: My_Test }\nspec:\n${spec}  steps:\n  - try:\n${tryOps}`;

test("chainsaw: each operation becomes its workload step, with chainsaw's timeouts and NAMESPACE", (t) => {
  const dir = testDir(t, {
    'cm.yaml': CM,
    'cm-1.yaml': CM,
    'cm-2.yaml': CM,
    'chainsaw-test.yaml': chainsawTest(
      [
        '    - apply: { file: cm.yaml }',
        '    - create: { file: "cm-*.yaml" }',
        '    - update: { resource: { apiVersion: v1, kind: ConfigMap, metadata: { name: cm }, data: { a: "2" } } }',
        '    - assert: { file: cm.yaml }',
        '    - error: { file: cm.yaml, timeout: 5s }',
        '    - delete: { ref: { apiVersion: v1, kind: ConfigMap, name: cm } }',
        '    - sleep: { duration: 1m30s }',
        '    - command: { entrypoint: kubectl, args: [get, cm], env: [{ name: A, value: b }] }',
        '    - command: { entrypoint: kubectl, args: [get, cm, -n, $NAMESPACE] }',
        '    - script: { content: "kubectl get cm | grep cm", timeout: 20s }',
        '    - wait: { apiVersion: v1, kind: Pod, name: p, timeout: 1m, for: { condition: { name: Ready, value: "true" } } }',
        '    - events: {}',
        '',
      ].join('\n'),
      '  timeouts: { assert: 45s }\n',
    ),
  });
  const { workloads, notes } = importChainsaw(dir);
  t.is(workloads.length, 1);
  t.is(workloads[0]!.name, 'my-test');
  const common = { workingDir: dir };
  t.deepEqual(workloads[0]!.steps, [
    { apply: join(dir, 'cm.yaml') },
    { apply: join(dir, 'cm-1.yaml') },
    { apply: join(dir, 'cm-2.yaml') },
    { apply: { resource: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'cm' }, data: { a: '2' } } } },
    { assert: { file: join(dir, 'cm.yaml'), timeoutSeconds: 45 } },
    { error: { file: join(dir, 'cm.yaml'), timeoutSeconds: 5 } },
    { delete: { key: 'ConfigMap/default/cm' } },
    { waitFor: { key: 'ConfigMap/default/cm', absent: true, timeoutSeconds: 15 } },
    { sleep: 90 },
    { command: { entrypoint: 'kubectl', args: ['get', 'cm'], env: { NAMESPACE: 'default', A: 'b' }, ...common, timeoutSeconds: 5 } },
    { script: { content: '"kubectl" "get" "cm" "-n" "$NAMESPACE"', env: { NAMESPACE: 'default' }, ...common, timeoutSeconds: 5 } },
    { script: { content: 'kubectl get cm | grep cm', env: { NAMESPACE: 'default' }, ...common, timeoutSeconds: 20 } },
    { waitFor: { key: 'Pod/default/p', condition: 'Ready', timeoutSeconds: 60 } },
  ]);
  t.true(notes.some((n) => /events left out \(it only prints\)/.test(n)));
});

test('chainsaw: every construct kperturb cannot express is refused at its file and path', (t) => {
  const cases: Array<{ files: Record<string, string>; file: string; at: string | undefined; why: RegExp }> = [
    {
      files: { 'chainsaw-test.yaml': 'apiVersion: chainsaw.kyverno.io/v1alpha2\nkind: Test\n' },
      file: 'chainsaw-test.yaml',
      at: undefined,
      why: /a chainsaw Test \(apiVersion chainsaw.kyverno.io\/v1alpha1/,
    },
    {
      files: {
        'chainsaw-test.yaml': chainsawTest(
          "    - assert:\n        resource:\n          apiVersion: v1\n          kind: Pod\n          metadata: { name: p }\n          status:\n            (conditions[?type == 'Ready']):\n            - status: 'True'\n",
        ),
      },
      file: 'chainsaw-test.yaml',
      at: "spec.steps[0].try[0].assert.resource.status.(conditions[?type == 'Ready'])",
      why: /a plain field name: chainsaw evaluates this key as a JMESPath expression/,
    },
    {
      files: {
        'a.yaml': 'apiVersion: v1\nkind: Pod\nmetadata: { name: p }\nspec:\n  ~.(containers):\n    image: x\n',
        'chainsaw-test.yaml': chainsawTest('    - assert: { file: a.yaml }\n'),
      },
      file: 'a.yaml',
      at: 'document 1: spec.~.(containers)',
      why: /a plain field name/,
    },
    {
      files: {
        'chainsaw-test.yaml': chainsawTest('    - apply: { resource: { apiVersion: v1, kind: ConfigMap, metadata: { name: cm, namespace: ($namespace) } } }\n'),
      },
      file: 'chainsaw-test.yaml',
      at: 'spec.steps[0].try[0].apply.resource.metadata.namespace',
      why: /a plain value: chainsaw evaluates "\(\$namespace\)" as an expression/,
    },
    {
      files: { 'chainsaw-test.yaml': chainsawTest('    - sleep: { duration: 1s }\n', '  bindings: [{ name: a, value: b }]\n') },
      file: 'chainsaw-test.yaml',
      at: 'spec.bindings',
      why: /no bindings: bindings are chainsaw variables/,
    },
    {
      files: { 'chainsaw-test.yaml': chainsawTest('    - sleep: { duration: 1s }\n', '  namespace: team-a\n') },
      file: 'chainsaw-test.yaml',
      at: 'spec.namespace',
      why: /no namespace or "default"/,
    },
    {
      files: { 'chainsaw-test.yaml': chainsawTest('    - continueOnError: true\n      sleep: { duration: 1s }\n') },
      file: 'chainsaw-test.yaml',
      at: 'spec.steps[0].try[0].continueOnError',
      why: /a failed workload step ends the workload/,
    },
    {
      files: { 'chainsaw-test.yaml': chainsawTest('    - sleep: { duration: 1s }\n      script: { content: ls }\n') },
      file: 'chainsaw-test.yaml',
      at: 'spec.steps[0].try[0]',
      why: /exactly one action .* \(got script, sleep\)|exactly one action .* \(got sleep, script\)/,
    },
    {
      files: { 'chainsaw-test.yaml': chainsawTest('    - delete: { ref: { apiVersion: v1, kind: Pod, labels: { app: x } } }\n') },
      file: 'chainsaw-test.yaml',
      at: 'spec.steps[0].try[0].delete.ref',
      why: /kperturb deletes one named object at a time/,
    },
    {
      files: { 'chainsaw-test.yaml': chainsawTest('    - wait: { apiVersion: v1, kind: Pod, selector: app=x, for: { condition: { name: Ready } } }\n') },
      file: 'chainsaw-test.yaml',
      at: 'spec.steps[0].try[0].wait.selector',
      why: /kperturb waits for one named object/,
    },
    {
      files: { 'chainsaw-test.yaml': chainsawTest('    - apply: { file: "https://example.com/cm.yaml" }\n') },
      file: 'chainsaw-test.yaml',
      at: 'spec.steps[0].try[0].apply.file',
      why: /kperturb does not fetch URLs/,
    },
    {
      files: { 'chainsaw-test.yaml': chainsawTest('    - apply: { file: missing.yaml }\n') },
      file: 'chainsaw-test.yaml',
      at: 'spec.steps[0].try[0].apply.file',
      why: /a file that exists/,
    },
    {
      files: {
        'chainsaw-test.yaml': chainsawTest('    - sleep: { duration: 1s }\n    finally:\n    - delete: { ref: { apiVersion: v1, kind: Pod, name: p } }\n'),
      },
      file: 'chainsaw-test.yaml',
      at: 'spec.steps[0].finally[0]',
      why: /no finally phase; move the operation into try/,
    },
    {
      files: { 'chainsaw-test.yaml': chainsawTest('    - patch: { subresource: status, resource: { apiVersion: v1, kind: Pod, metadata: { name: p } } }\n') },
      file: 'chainsaw-test.yaml',
      at: 'spec.steps[0].try[0].patch.subresource',
      why: /a kperturb patch step with subresource/,
    },
    {
      files: { 'chainsaw-test.yaml': chainsawTest('    - script: { content: ls, outputs: [{ name: x, value: y }] }\n') },
      file: 'chainsaw-test.yaml',
      at: 'spec.steps[0].try[0].script.outputs',
      why: /no outputs/,
    },
    {
      files: { 'chainsaw-test.yaml': chainsawTest('    - sleep: { duration: soon }\n') },
      file: 'chainsaw-test.yaml',
      at: 'spec.steps[0].try[0].sleep.duration',
      why: /a duration such as 30s/,
    },
    {
      files: {
        'chainsaw-test.yaml':
          'apiVersion: chainsaw.kyverno.io/v1alpha1\nkind: Test\nmetadata: { name: t }\nspec:\n  steps:\n  - use: { template: step.yaml }\n',
      },
      file: 'chainsaw-test.yaml',
      at: 'spec.steps[0].use',
      why: /step templates \(use\) are not supported/,
    },
  ];
  for (const c of cases) {
    const dir = testDir(t, c.files);
    const err = t.throws(() => importChainsaw(dir), { instanceOf: UserInputError }, c.at);
    t.is(err?.file, join(dir, c.file), c.at);
    t.is(err?.at, c.at);
    t.regex(err?.message ?? '', c.why, c.at);
  }
  const empty = testDir(t, { 'README.md': 'no tests' });
  t.regex(t.throws(() => importChainsaw(empty), { instanceOf: UserInputError })!.message, /chainsaw-test.yaml in it or in a directory below it \(none found\)/);
});

const TEST_STEP = 'apiVersion: kuttl.dev/v1beta1\nkind: TestStep\n';
const TEST_ASSERT = 'apiVersion: kuttl.dev/v1beta1\nkind: TestAssert\n';

test('KUTTL: a step runs its deletes, commands, applies, then asserts and errors with the TestAssert timeout', (t) => {
  const dir = testDir(t, {
    'README.md': 'ignored: no index',
    '00-install.yaml': CM,
    '00-assert.yaml': CM,
    '01-prepare.yaml': `${TEST_STEP}delete:\n- { apiVersion: v1, kind: ConfigMap, name: cm }\ncommands:\n- command: kubectl get cm "my cm"\n  namespaced: true\n- command: kubectl get cm -n $NAMESPACE\n- script: kubectl get cm | grep x\n  timeout: 10\n---\n${CM}`,
    '01-assert.yaml': `${TEST_ASSERT}timeout: 12\ncollectors:\n- type: pod\n  pod: p\n---\n${CM}`,
    '01-errors.yaml': 'apiVersion: v1\nkind: Pod\nmetadata: { labels: { app: crashing } }\nstatus: { phase: Failed }\n',
  });
  const { workloads, notes } = importKuttl(dir);
  const common = { env: { NAMESPACE: 'default' }, workingDir: dir };
  const cm = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'cm' }, data: { a: '1' } };
  t.deepEqual(workloads[0]!.steps, [
    { apply: join(dir, '00-install.yaml') },
    { assert: { file: join(dir, '00-assert.yaml'), timeoutSeconds: 30 } },
    { delete: { key: 'ConfigMap/default/cm' } },
    { waitFor: { key: 'ConfigMap/default/cm', absent: true, timeoutSeconds: 30 } },
    { command: { entrypoint: 'kubectl', args: ['get', 'cm', 'my cm', '--namespace', 'default'], ...common, timeoutSeconds: 30 } },
    { script: { content: 'kubectl get cm -n $NAMESPACE', ...common, timeoutSeconds: 30 } },
    { script: { content: 'kubectl get cm | grep x', ...common, timeoutSeconds: 10 } },
    { apply: { resource: cm } },
    { assert: { resources: [cm], timeoutSeconds: 12 } },
    { error: { file: join(dir, '01-errors.yaml'), timeoutSeconds: 12 } },
  ]);
  t.true(notes.some((n) => /01-assert.yaml collectors left out/.test(n)));
});

test('KUTTL: a directory of test cases imports one workload per case', (t) => {
  const dir = testDir(t, { 'a-case/': '', 'b_case/': '', 'notes/': '' });
  writeFileSync(join(dir, 'a-case', '00-install.yaml'), CM);
  writeFileSync(join(dir, 'b_case', '00-install.yaml'), CM);
  t.deepEqual(
    importKuttl(dir).workloads.map((w) => w.name),
    ['a-case', 'b-case'],
  );
});

test('KUTTL: every construct kperturb cannot express is refused at its file and path', (t) => {
  const cases: Array<{ files: Record<string, string>; file: string; at: string | undefined; why: RegExp }> = [
    { files: { '00-install.gotmpl.yaml': CM }, file: '00-install.gotmpl.yaml', at: undefined, why: /KUTTL templates \(.gotmpl.yaml\) are not expanded/ },
    { files: { '00-install.yaml': CM, '01-step/': '' }, file: '01-step', at: undefined, why: /step directories are not supported/ },
    {
      files: { '00-assert.yaml': `${TEST_ASSERT}assertAll:\n- celExpr: "true"\n` },
      file: '00-assert.yaml',
      at: 'document 1.assertAll',
      why: /CEL expressions .* are not evaluated by kperturb/,
    },
    {
      files: { '00-assert.yaml': `${TEST_ASSERT}commands:\n- command: kubectl get cm\n` },
      file: '00-assert.yaml',
      at: 'document 1.commands',
      why: /assert commands are retried until the timeout/,
    },
    {
      files: { '00-step.yaml': `${TEST_STEP}kubeconfig: other.kubeconfig\n` },
      file: '00-step.yaml',
      at: 'document 1.kubeconfig',
      why: /against the run's cluster/,
    },
    {
      files: { '00-step.yaml': `${TEST_STEP}delete:\n- { apiVersion: v1, kind: Pod, labels: { app: x } }\n` },
      file: '00-step.yaml',
      at: 'document 1.delete[0]',
      why: /one named object at a time/,
    },
    {
      files: { '00-step.yaml': `${TEST_STEP}commands:\n- command: kubectl get cm\n  ignoreFailure: true\n` },
      file: '00-step.yaml',
      at: 'document 1.commands[0].ignoreFailure',
      why: /a workload command must exit 0/,
    },
    {
      files: { '00-step.yaml': `${TEST_STEP}commands:\n- command: kubectl proxy\n  background: true\n` },
      file: '00-step.yaml',
      at: 'document 1.commands[0].background',
      why: /background commands only run in a TestSuite/,
    },
    {
      files: { '00-step.yaml': `${TEST_STEP}commands:\n- command: echo "unterminated\n` },
      file: '00-step.yaml',
      at: 'document 1.commands[0].command',
      why: /balanced quotes/,
    },
    {
      files: { '00-step.yaml': `${TEST_ASSERT}timeout: 5\n` },
      file: '00-step.yaml',
      at: 'document 1.kind',
      why: /TestStep in a step file \(got "TestAssert": it belongs in the assert file\)/,
    },
    { files: { '00-assert.yaml': `${TEST_ASSERT}timeout: soon\n` }, file: '00-assert.yaml', at: 'document 1.timeout', why: /a whole number of seconds/ },
    { files: { '00-install.yaml': 'kind: ConfigMap\n' }, file: '00-install.yaml', at: 'document 1', why: /a Kubernetes object with apiVersion and kind/ },
  ];
  for (const c of cases) {
    const dir = testDir(t, c.files);
    const err = t.throws(() => importKuttl(dir), { instanceOf: UserInputError }, c.file);
    t.is(err?.file, join(dir, c.file), c.file);
    t.is(err?.at, c.at, c.file);
    t.regex(err?.message ?? '', c.why, c.file);
  }
});
