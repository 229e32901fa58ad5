/**
 * kperturb.yaml's assert, error, command and script steps: what they load to, and the message naming
 * the file, the path inside it and what was expected for each kind of mistake.
 */
import test from 'ava';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadConfig } from '../../src/config/config.js';
import { UserInputError } from '../../src/model/errors.js';
import { scratchDir } from '../_scratch-dir.js';

const HEAD = 'apiVersion: kperturb.dev/v1\nkind: ControllerUnderTest\nmetadata: { name: demo }\ncontroller: { command: node }\n';

function configWith(t: import('ava').ExecutionContext, steps: string, files: Record<string, string> = {}): string {
  const dir = scratchDir(t, 'kperturb-suite-config-');
  for (const [name, content] of Object.entries(files)) writeFileSync(join(dir, name), content);
  writeFileSync(join(dir, 'kperturb.yaml'), `${HEAD}workloads:\n  w:\n    steps:\n${steps}`);
  return join(dir, 'kperturb.yaml');
}

function inputError(t: import('ava').ExecutionContext, file: string): UserInputError {
  return t.throws(() => loadConfig(file), { instanceOf: UserInputError })!;
}

test('the new steps load: assert and error read their objects, command and script become argv with defaults', (t) => {
  const file = configWith(
    t,
    [
      '      - assert: 00-assert.yaml',
      '      - error: { file: 00-errors.yaml, timeoutSeconds: 5 }',
      '      - assert: { resource: { apiVersion: v1, kind: ConfigMap, metadata: { name: inline }, data: { a: "1" } } }',
      '      - apply: { resource: { apiVersion: v1, kind: ConfigMap, metadata: { name: inline } } }',
      '      - command: { entrypoint: kubectl, args: [get, pods], env: { NAMESPACE: default } }',
      '      - script: { content: "kubectl get pods | grep web", timeoutSeconds: 10 }',
      '',
    ].join('\n'),
    {
      '00-assert.yaml': 'apiVersion: v1\nkind: ConfigMap\nmetadata: { name: a }\n---\napiVersion: v1\nkind: Secret\nmetadata: { labels: { app: x } }\n',
      '00-errors.yaml': 'apiVersion: v1\nkind: Pod\nmetadata: { name: gone }\n',
    },
  );
  const steps = loadConfig(file).workloads.get('w')!.steps;
  const dir = join(file, '..');
  t.like(steps[0], { assert: { file: join(dir, '00-assert.yaml'), timeoutSeconds: 30 } });
  t.is((steps[0] as { assert: { objects: unknown[] } }).assert.objects.length, 2);
  t.like(steps[1], { error: { timeoutSeconds: 5, objects: [{ kind: 'Pod' }] } });
  t.like(steps[2], { assert: { objects: [{ metadata: { name: 'inline' } }] } });
  t.like(steps[3], { apply: { resource: { kind: 'ConfigMap' } } });
  t.deepEqual(steps[4], { command: { argv: ['kubectl', 'get', 'pods'], env: { NAMESPACE: 'default' }, workingDir: dir, timeoutSeconds: 60 } });
  t.deepEqual(steps[5], { script: { argv: ['sh', '-c', 'kubectl get pods | grep web'], env: {}, workingDir: dir, timeoutSeconds: 10 } });
});

test('each mistake in the new steps is named by its path and what was expected', (t) => {
  const cases: Array<[string, Record<string, string>, string, RegExp]> = [
    ['      - assert: missing.yaml\n', {}, 'workloads.w.steps[0].assert', /a manifest file that exists/],
    [
      '      - assert: { file: a.yaml, resource: { apiVersion: v1, kind: X } }\n',
      { 'a.yaml': 'kind: X' },
      'workloads.w.steps[0].assert',
      /one of file .*, resource .* or resources .* \(got file, resource\)/,
    ],
    ['      - error: { resource: { kind: ConfigMap } }\n', {}, 'workloads.w.steps[0].error.resource.apiVersion', /a non-empty string/],
    ['      - assert: { file: a.yaml, timeoutSecond: 3 }\n', { 'a.yaml': 'kind: X' }, 'workloads.w.steps[0].assert.timeoutSecond', /no such field/],
    ['      - command: { args: [get] }\n', {}, 'workloads.w.steps[0].command.entrypoint', /a non-empty string/],
    ['      - command: { entrypoint: kubectl, env: { "A-B": x } }\n', {}, 'workloads.w.steps[0].command.env.A-B', /environment variable name/],
    ['      - script: { content: ls, workingDir: nowhere }\n', {}, 'workloads.w.steps[0].script.workingDir', /a directory that exists/],
    ['      - script: { content: ls, timeoutSeconds: 0 }\n', {}, 'workloads.w.steps[0].script.timeoutSeconds', /a duration in seconds from 0.1/],
  ];
  for (const [steps, files, at, expected] of cases) {
    const err = inputError(t, configWith(t, steps, files));
    t.is(err.at, at, steps);
    t.regex(err.message, expected, steps);
  }
});

test('an object in an assert file without a kind is named by the file and its document number', (t) => {
  const file = configWith(t, '      - assert: 01-assert.yaml\n', {
    '01-assert.yaml': 'apiVersion: v1\nkind: ConfigMap\nmetadata: { name: a }\n---\napiVersion: v1\nmetadata: { name: b }\n',
  });
  const err = inputError(t, file);
  t.true(err.file!.endsWith('01-assert.yaml'));
  t.is(err.at, 'document 2.kind');
});

test('a workload can name a chainsaw or KUTTL test directory instead of steps; a refusal names the test file', (t) => {
  const suites = fileURLToPath(new URL('../../../test/workload/suites/secret-marker', import.meta.url));
  const file = configWith(t, '');
  const config = (workloads: string): string => {
    writeFileSync(file, `${HEAD}workloads:\n${workloads}`);
    return file;
  };
  const loaded = loadConfig(
    config(`  a: { chainsaw: ${join(suites, 'chainsaw', 'create-and-upgrade')} }\n  b: { kuttl: ${join(suites, 'kuttl', 'create-and-upgrade')} }\n`),
  );
  t.like(loaded.workloads.get('a')!.steps[1], { assert: { timeoutSeconds: 30 } });
  t.like(loaded.workloads.get('b')!.steps[4], { error: { timeoutSeconds: 30 } });
  t.is(inputError(t, config(`  a: { chainsaw: ${join(suites, 'chainsaw')}, steps: [] }\n`)).at, 'workloads.a');
  const refused = join(file, '..', 'refused');
  mkdirSync(refused);
  writeFileSync(
    join(refused, 'chainsaw-test.yaml'),
    'apiVersion: chainsaw.kyverno.io/v1alpha1\nkind: Test\nmetadata: { name: t }\nspec:\n  steps:\n  - try:\n    - sleep: { duration: forever }\n',
  );
  const err = inputError(t, config('  a: { chainsaw: refused }\n'));
  t.is(err.file, join(refused, 'chainsaw-test.yaml'));
  t.is(err.at, 'spec.steps[0].try[0].sleep.duration');
});
