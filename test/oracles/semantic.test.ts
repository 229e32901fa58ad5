import test from 'ava';
import { compareRuns, quantitiesEqual, semanticEqual } from '../../oracles/index.js';
import { formatPath, parseFieldPattern } from '../../src/model/field-path.js';
import { configMap, runWith } from './_runs.js';

const deployment = (spec: Record<string, unknown>, status: Record<string, unknown> = {}) => ({
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name: 'web', namespace: 'default' },
  spec: { template: { spec } },
  status,
});

const container = (name: string, extra: Record<string, unknown> = {}) => ({ name, image: `${name}:1`, ...extra });

test('equal quantities written differently are equal; different amounts and plain strings are not', (t) => {
  for (const [a, b] of [
    ['1Gi', '1073741824'],
    ['500m', '0.5'],
    ['1k', '1000'],
    ['1e3', '1000'],
    ['0.1', '100m'],
    ['2Mi', '2048Ki'],
    ['1', 1],
    ['1500m', 1.5],
  ] as const) {
    t.true(quantitiesEqual(a, b), `${a} = ${b}`);
    t.true(semanticEqual(a, b), `${a} = ${b}`);
  }
  for (const [a, b] of [
    ['1Gi', '1G'],
    ['500m', '0.05'],
    ['10', '10.0'], // two plain strings: not treated as quantities
    ['1Gi', 'abc'],
    [1, 2],
  ] as const) {
    t.false(quantitiesEqual(a, b), `${a} != ${b}`);
  }
});

test('resources written as equal quantities do not alarm; a different amount does', (t) => {
  const ref = deployment({ containers: [container('web', { resources: { limits: { memory: '1Gi', cpu: '500m' } } })] });
  const same = deployment({ containers: [container('web', { resources: { limits: { memory: '1073741824', cpu: '0.5' } } })] });
  t.deepEqual(compareRuns([runWith([ref]), runWith([ref])], runWith([same])), []);
  const more = deployment({ containers: [container('web', { resources: { limits: { memory: '2Gi', cpu: '0.5' } } })] });
  const alarms = compareRuns([runWith([ref])], runWith([more]));
  t.deepEqual(
    alarms.map((a) => [a.field, a.reference, a.test]),
    [['spec.template.spec.containers[name=web].resources.limits.memory', ['1Gi'], '2Gi']],
  );
});

test('named lists (containers, env, ports, volumes) in another order do not alarm', (t) => {
  const ref = deployment({
    containers: [
      container('web', {
        env: [
          { name: 'A', value: '1' },
          { name: 'B', value: '2' },
        ],
        ports: [
          { name: 'http', containerPort: 80 },
          { name: 'metrics', containerPort: 9090 },
        ],
      }),
      container('sidecar'),
    ],
    volumes: [
      { name: 'data', emptyDir: {} },
      { name: 'config', configMap: { name: 'c' } },
    ],
  });
  const reordered = deployment({
    containers: [
      container('sidecar'),
      container('web', {
        env: [
          { name: 'B', value: '2' },
          { name: 'A', value: '1' },
        ],
        ports: [
          { name: 'metrics', containerPort: 9090 },
          { name: 'http', containerPort: 80 },
        ],
      }),
    ],
    volumes: [
      { name: 'config', configMap: { name: 'c' } },
      { name: 'data', emptyDir: {} },
    ],
  });
  t.deepEqual(compareRuns([runWith([ref]), runWith([ref])], runWith([reordered])), []);
});

test('a changed item of a named list is named by its key, not its position', (t) => {
  const ref = deployment({
    containers: [
      container('web', {
        env: [
          { name: 'A', value: '1' },
          { name: 'B', value: '2' },
        ],
      }),
    ],
  });
  const tst = deployment({
    containers: [
      container('web', {
        env: [
          { name: 'B', value: '3' },
          { name: 'A', value: '1' },
        ],
      }),
    ],
  });
  const alarms = compareRuns([runWith([ref])], runWith([tst]));
  t.deepEqual(
    alarms.map((a) => a.message),
    ['Deployment/default/web: spec.template.spec.containers[name=web].env[name=B].value is "2" after reference runs, but "3" after the test run'],
  );
  // An item only one side has is reported against absent.
  const missing = deployment({ containers: [container('web', { env: [{ name: 'A', value: '1' }] })] });
  t.deepEqual(
    compareRuns([runWith([ref])], runWith([missing])).map((a) => [a.field, a.test]),
    [
      ['spec.template.spec.containers[name=web].env[name=B].name', '<absent>'],
      ['spec.template.spec.containers[name=web].env[name=B].value', '<absent>'],
    ],
  );
});

test('conditions are keyed by type; their order does not alarm but a status does', (t) => {
  const cond = (type: string, status: string) => ({ type, status, lastTransitionTime: '2024-01-01T00:00:00Z' });
  const ref = configMap('x', {}, { status: { conditions: [cond('Ready', 'True'), cond('Progressing', 'False')] } });
  const swapped = configMap('x', {}, { status: { conditions: [cond('Progressing', 'False'), cond('Ready', 'True')] } });
  t.deepEqual(compareRuns([runWith([ref])], runWith([swapped])), []);
  const notReady = configMap('x', {}, { status: { conditions: [cond('Progressing', 'False'), cond('Ready', 'False')] } });
  t.deepEqual(
    compareRuns([runWith([ref])], runWith([notReady])).map((a) => a.field),
    ['status.conditions[type=Ready].status'],
  );
});

test('lists without a unique key are still compared in order', (t) => {
  const ref = configMap(
    'x',
    {},
    {
      spec: {
        args: ['--a', '--b'],
        tolerations: [
          { key: 'k', effect: 'NoSchedule' },
          { key: 'k', effect: 'NoExecute' },
        ],
      },
    },
  );
  const tst = configMap(
    'x',
    {},
    {
      spec: {
        args: ['--b', '--a'],
        tolerations: [
          { key: 'k', effect: 'NoExecute' },
          { key: 'k', effect: 'NoSchedule' },
        ],
      },
    },
  );
  t.deepEqual(
    compareRuns([runWith([ref])], runWith([tst])).map((a) => a.field),
    ['spec.args[0]', 'spec.args[1]', 'spec.tolerations[0].effect', 'spec.tolerations[1].effect'],
  );
});

test('keyed item paths round-trip and can be masked by key or with *', (t) => {
  const path = ['spec', 'containers', { key: 'name', value: 'web' }, 'env', { key: 'name', value: 'odd name]' }, 'value'];
  const text = formatPath(path);
  t.is(text, 'spec.containers[name=web].env[name="odd name]"].value');
  t.deepEqual(parseFieldPattern(text), path);
  const ref = deployment({ containers: [container('web', { image: 'web:1' }), container('db', { image: 'db:1' })] });
  const tst = deployment({ containers: [container('web', { image: 'web:2' }), container('db', { image: 'db:2' })] });
  const masked = (paths: string[]) => compareRuns([runWith([ref])], runWith([tst]), { extraMasks: [{ keyGlob: 'Deployment/*', paths }] }).map((a) => a.field);
  t.deepEqual(masked(['spec.template.spec.containers[name=web].image']), ['spec.template.spec.containers[name=db].image']);
  t.deepEqual(masked(['spec.template.spec.containers[*].image']), []);
});

test('learned masks see keyed lists the same way: a reordered list in the references masks nothing', (t) => {
  const refA = deployment({ containers: [container('web'), container('db')] }, { token: 'a' });
  const refB = deployment({ containers: [container('db'), container('web')] }, { token: 'b' });
  const tst = deployment({ containers: [container('web', { image: 'web:2' }), container('db')] }, { token: 'c' });
  // status.token differs between references (masked); the containers only in order (not masked).
  t.deepEqual(
    compareRuns([runWith([refA]), runWith([refB])], runWith([tst])).map((a) => a.field),
    ['spec.template.spec.containers[name=web].image'],
  );
});
