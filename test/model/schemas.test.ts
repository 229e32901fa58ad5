/**
 * The JSON Schemas (schemas/, printed by `kperturb schema`) and the validators agree: every bundled
 * kperturb.yaml and every kind of plan is valid by the schema (checked with Ajv, a standard JSON
 * Schema validator), what the validators refuse for its shape the schema refuses too, and the
 * validators take their allowed fields from the schema.
 */
import test from 'ava';
import { Ajv } from 'ajv';
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';
import { validateConfig } from '../../src/config/config.js';
import { validatePlan } from '../../src/io/plan-file.js';
import { allowedKeys, allowedKeysOfBranch, schema } from '../../src/io/schemas.js';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const ajv = new Ajv({ allErrors: true, strict: false });
const configSchema = ajv.compile(schema('config'));
const planSchema = ajv.compile(schema('plan'));

function configFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((e) => {
    const p = join(dir, e);
    if (statSync(p).isDirectory()) return e === 'node_modules' || e === 'upstream' || e === 'bin' ? [] : configFiles(p);
    return /^kperturb.*\.yaml$/.test(e) ? [p] : [];
  });
}

test('every bundled kperturb.yaml (examples and Sieve operators) is valid by the schema', (t) => {
  const files = [...configFiles(join(ROOT, 'fixtures', 'controllers')), ...configFiles(join(ROOT, 'fixtures', 'operators'))];
  t.true(files.length >= 19, `found ${files.length}`);
  for (const file of files) {
    const ok = configSchema(parse(readFileSync(file, 'utf8')));
    t.true(ok, `${file}: ${ajv.errorsText(configSchema.errors)}`);
  }
});

const plan = (faults: unknown[]) => ({
  apiVersion: 'kperturb.dev/v1',
  kind: 'TestPlan',
  metadata: { name: 'p' },
  spec: { controller: 'c', workload: 'w', pattern: 'stale-state', description: 'd', faults },
});
const everyFault = plan([
  { type: 'crash-after-write', after: { verb: 'patch', key: 'Database/default/db1', subresource: 'status', occurrence: 2 } },
  {
    type: 'stale-restart',
    at: {
      sequence: [
        { change: { key: 'Database/default/db1', change: 'delete', occurrence: 1 } },
        {
          anyOf: [
            { write: { verb: 'create', key: 'StatefulSet/default/db1', occurrence: 1 } },
            { allOf: [{ change: { key: 'Database/default/db1', change: 'create', occurrence: 2 } }] },
          ],
        },
      ],
    },
    viewAfter: { key: 'Database/default/db1', change: 'update', fields: [{ path: 'metadata.deletionTimestamp', after: '<set>' }], occurrence: 1 },
    releaseAfterSeconds: 5,
    kinds: ['Database'],
  },
  { type: 'api-error', on: { verb: 'create', key: 'ConfigMap/default/s1-*#1', occurrence: 1 }, answer: 'lost-response' },
  { type: 'api-error', on: { verb: 'update', key: 'ConfigMap/default/s1', occurrence: 2 }, answer: 'slow', slowSeconds: 40 },
  { type: 'watch-end', kind: 'ConfigMap', at: { change: { key: 'ConfigMap/default/s1', change: 'create', occurrence: 1 } }, mode: 'reset', expire: true },
  {
    type: 'hold-until',
    key: 'Pod/default/web-0',
    from: { key: 'Pod/default/web-0', change: 'update', fields: [{ path: 'metadata.deletionTimestamp', before: null }], occurrence: 1 },
    until: { key: 'Pod/default/web-0', change: 'delete', occurrence: 1 },
  },
  {
    type: 'pod-crash',
    pod: 'Pod/default/web-0',
    mode: 'crash-loop',
    at: { change: { key: 'Pod/default/web-0', change: 'create', occurrence: 1 } },
    forSeconds: 2,
  },
  {
    type: 'app-unavailable',
    application: 'web',
    key: 'Service/default/web',
    answer: 'service-unavailable',
    at: { call: { application: 'web', key: 'Service/default/web', operation: 'GET', path: '/health', occurrence: 1 } },
    until: { call: { application: 'web', key: 'Service/default/web', occurrence: 2 } },
  },
]);

test('a plan with every fault type and trigger form is valid by the schema and the validator', (t) => {
  t.notThrows(() => validatePlan(everyFault, 'p.yaml'));
  t.true(planSchema(everyFault), ajv.errorsText(planSchema.errors));
});

test('what the plan validator refuses for its shape, the schema refuses too', (t) => {
  const bad: Array<[string, unknown]> = [
    ['an unknown fault type', plan([{ type: 'crash', after: { verb: 'create', key: 'A/b', occurrence: 1 } }])],
    ['a field the fault does not have', plan([{ type: 'crash-after-write', after: { verb: 'create', key: 'A/b', occurrence: 1 }, extra: 1 }])],
    ['occurrence 0', plan([{ type: 'crash-after-write', after: { verb: 'create', key: 'A/b', occurrence: 0 } }])],
    [
      'two trigger forms',
      plan([
        {
          type: 'stale-restart',
          at: { write: { verb: 'create', key: 'A/b', occurrence: 1 }, change: { key: 'A/b', change: 'create', occurrence: 1 } },
          viewAfter: { key: 'A/b', change: 'create', occurrence: 1 },
          releaseAfterSeconds: 5,
        },
      ]),
    ],
    ['no faults', plan([])],
    ['an api-error answer it does not know', plan([{ type: 'api-error', on: { verb: 'update', key: 'A/b', occurrence: 1 }, answer: 'teapot' }])],
    [
      'a pod-crash of a ConfigMap',
      plan([{ type: 'pod-crash', pod: 'ConfigMap/a/b', mode: 'unready', at: { call: { application: 'a', key: 'Pod/a/b', occurrence: 1 } }, forSeconds: 1 }]),
    ],
    [
      'a pod-crash that never heals',
      plan([{ type: 'pod-crash', pod: 'Pod/a/b', mode: 'unready', at: { call: { application: 'a', key: 'Pod/a/b', occurrence: 1 } } }]),
    ],
    [
      'a call trigger on a Node',
      plan([{ type: 'pod-crash', pod: 'Pod/a/b', mode: 'unready', at: { call: { application: 'a', key: 'Node/n', occurrence: 1 } }, forSeconds: 1 }]),
    ],
    [
      'an app-unavailable answer it does not know',
      plan([{ type: 'app-unavailable', application: 'a', answer: 'teapot', at: { call: { application: 'a', key: 'Pod/a/b', occurrence: 1 } }, forSeconds: 1 }]),
    ],
    ['a watch-end without a mode', plan([{ type: 'watch-end', kind: 'ConfigMap', at: { change: { key: 'A/b', change: 'create', occurrence: 1 } } }])],
  ];
  for (const [what, doc] of bad) {
    t.throws(() => validatePlan(doc, 'p.yaml'), undefined, `validator: ${what}`);
    t.false(planSchema(doc), `schema: ${what}`);
  }
});

const config = (extra: Record<string, unknown> = {}, step: unknown = { sleep: 1 }) => ({
  apiVersion: 'kperturb.dev/v1',
  kind: 'ControllerUnderTest',
  metadata: { name: 'c' },
  controller: { command: 'true' },
  workloads: { w: { steps: [step] } },
  ...extra,
});

test('what the config validator refuses for its shape, the schema refuses too', (t) => {
  const file = join(ROOT, 'kperturb.yaml');
  t.notThrows(() => validateConfig(config(), file));
  t.true(configSchema(config()), ajv.errorsText(configSchema.errors));
  const bad: Array<[string, unknown]> = [
    ['an unknown top-level field', config({ extras: 1 })],
    ['an unknown controller field', { ...config(), controller: { command: 'true', cmd: 'x' } }],
    ['an unknown step kind', config({}, { wait: 1 })],
    ['two kinds in one step', config({}, { sleep: 1, delete: { key: 'A/b' } })],
    ['a waitFor field it does not have', config({}, { waitFor: { key: 'A/b', timeoutSecond: 3 } })],
    ['a patch type it does not know', config({}, { patch: { key: 'A/b', type: 'xml', patch: {} } })],
    ['a settle field it does not have', config({ settle: { quiet: 3 } })],
    ['no workloads', { ...config(), workloads: {} }],
    ['a workload name in capitals', { ...config(), workloads: { W: { steps: [{ sleep: 1 }] } } }],
    ['referenceRuns 0', config({ referenceRuns: 0 })],
  ];
  for (const [what, doc] of bad) {
    t.throws(() => validateConfig(doc, file), undefined, `validator: ${what}`);
    t.false(configSchema(doc), `schema: ${what}`);
  }
});

test('the validators take their allowed fields from the schema', (t) => {
  t.deepEqual(allowedKeys('config', 'definitions/step/waitFor'), ['key', 'absent', 'field', 'equals', 'condition', 'timeoutSeconds', 'onTimeout']);
  const err = t.throws(() => validateConfig(config({}, { waitFor: { key: 'A/b', timeoutSecond: 3 } }), join(ROOT, 'kperturb.yaml')));
  t.true(err!.message.includes(`no such field here (allowed: ${allowedKeys('config', 'definitions/step/waitFor').join(', ')})`), err!.message);
  t.throws(() => allowedKeys('config', 'definitions/nope'), undefined, 'a walk that leads nowhere is a programming error, not an empty list');
  t.deepEqual(allowedKeysOfBranch('plan', 'definitions/fault', 'type', 'api-error'), ['type', 'on', 'answer', 'slowSeconds']);
  const planErr = t.throws(() =>
    validatePlan(
      plan([{ type: 'watch-end', kind: 'ConfigMap', at: { change: { key: 'A/b', change: 'create', occurrence: 1 } }, mode: 'close', expires: true }]),
      'p.yaml',
    ),
  );
  t.true(planErr!.message.includes('no such field here (allowed: type, kind, at, mode, expire)'), planErr!.message);
});

test('kperturb schema prints each schema (and --path its file); an unknown name is bad input', (t) => {
  const cli = (args: string[]) => spawnSync(process.execPath, [join(ROOT, 'bin', 'kperturb.js'), 'schema', ...args], { encoding: 'utf8' });
  t.deepEqual(JSON.parse(cli([]).stdout), schema('config'));
  t.deepEqual(JSON.parse(cli(['plan']).stdout), schema('plan'));
  // The TestPlan schema is made from the fault registry; the file is its copy for editors.
  t.is(
    readFileSync(join(ROOT, 'schemas', 'testplan.schema.json'), 'utf8'),
    cli(['plan']).stdout,
    'schemas/testplan.schema.json is behind the fault registry: node bin/kperturb.js schema plan > schemas/testplan.schema.json',
  );
  t.is(cli(['plan', '--path']).stdout.trim(), join(ROOT, 'schemas', 'testplan.schema.json'));
  const bad = cli(['nope']);
  t.is(bad.status, 2);
  t.is(bad.stderr, 'kperturb: at schema: one of config, plan (got "nope") [KP_E_INPUT]\n');
});
