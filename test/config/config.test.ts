import test from 'ava';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadConfig } from '../../src/config/config.js';
import { UserInputError } from '../../src/model/errors.js';
import { sharedScratchDir } from '../_scratch-dir.js';

function write(text: string, extra: Record<string, string> = {}): string {
  const dir = sharedScratchDir('kperturb-config-');
  for (const [name, content] of Object.entries(extra)) writeFileSync(join(dir, name), content);
  const file = join(dir, 'kperturb.yaml');
  writeFileSync(file, text);
  return file;
}

const VALID = `apiVersion: kperturb.dev/v1
kind: ControllerUnderTest
metadata: { name: demo }
controller: { command: node, args: [c.js], env: { LEVEL: 3 } }
setup: [crd.yaml]
workloads:
  basic:
    steps:
      - apply: crd.yaml
      - waitFor: { key: ConfigMap/default/a, field: data.x, equals: "1", timeoutSeconds: 5 }
      - patch: { key: ConfigMap/default/a, patch: { data: { x: "2" } } }
      - delete: { key: ConfigMap/default/a }
      - sleep: 0.1
`;

test('a valid config loads with defaults filled in', (t) => {
  const file = write(VALID, { 'crd.yaml': 'kind: X' });
  const c = loadConfig(file);
  t.is(c.name, 'demo');
  t.deepEqual(c.controller.env, { LEVEL: '3' });
  t.is(c.referenceRuns, 2);
  t.is(c.workloads.get('basic')!.steps.length, 5);
  t.deepEqual(c.workloads.get('basic')!.steps[2], { patch: { key: 'ConfigMap/default/a', type: 'merge', patch: { data: { x: '2' } } } });
  t.true(c.setup[0]!.endsWith('crd.yaml'));
});

function expectInputError(
  t: import('ava').ExecutionContext,
  text: string,
  at: string,
  expected: RegExp,
  extra: Record<string, string> = { 'crd.yaml': 'kind: X' },
) {
  const file = write(text, extra);
  const err = t.throws(() => loadConfig(file), { instanceOf: UserInputError });
  t.true(err!.message.startsWith(file), err!.message);
  t.is(err!.at, at, err!.message);
  t.regex(err!.expected, expected);
}

test('a wrong timeout type names the path inside the file', (t) => {
  expectInputError(t, VALID.replace('timeoutSeconds: 5', 'timeoutSeconds: soon'), 'workloads.basic.steps[1].waitFor.timeoutSeconds', /a duration in seconds/);
});

test('a typo in a field name is rejected, not ignored', (t) => {
  expectInputError(t, VALID.replace('timeoutSeconds: 5', 'timeoutSecond: 5'), 'workloads.basic.steps[1].waitFor.timeoutSecond', /no such field/);
  expectInputError(
    t,
    VALID.replace('timeoutSeconds: 5', 'timeoutSeconds: 5, onTimeout: skip'),
    'workloads.basic.steps[1].waitFor.onTimeout',
    /one of "fail", "continue"/,
  );
});

test('a wait names its field in the syntax of masks and alarms, or a condition as kubectl wait does', (t) => {
  expectInputError(
    t,
    VALID.replace('field: data.x', 'field: "status.conditions[type=Ready.status"'),
    'workloads.basic.steps[1].waitFor.field',
    /a field path .*closing \]/,
  );
  expectInputError(t, VALID.replace('field: data.x', 'field: "status.conditions[*].status"'), 'workloads.basic.steps[1].waitFor.field', /without \*/);
  expectInputError(
    t,
    VALID.replace('field: data.x, equals: "1"', 'condition: Ready, field: data.x, equals: "1"'),
    'workloads.basic.steps[1].waitFor',
    /either condition or field/,
  );
  const ready = loadConfig(write(VALID.replace('field: data.x, equals: "1"', 'condition: Ready'), { 'crd.yaml': 'kind: X' }));
  const step = ready.workloads.get('basic')!.steps[1]!;
  t.deepEqual('waitFor' in step ? [step.waitFor.field, step.waitFor.equals] : [], ['status.conditions[type=Ready].status', 'True']);
});

test('a step must be exactly one kind', (t) => {
  expectInputError(t, VALID.replace('- sleep: 0.1', '- snooze: 0.1'), 'workloads.basic.steps[4]', /exactly one of apply, patch/);
});

test('a malformed object key is rejected', (t) => {
  expectInputError(t, VALID.replace('delete: { key: ConfigMap/default/a }', 'delete: { key: "a/b/c/d" }'), 'workloads.basic.steps[3].delete.key', /object key/);
});

test('a missing manifest file is named', (t) => {
  expectInputError(t, VALID, 'setup[0]', /exists/, {});
});

test('YAML syntax errors give line and column', (t) => {
  const file = write('apiVersion: [unclosed\n');
  const err = t.throws(() => loadConfig(file), { instanceOf: UserInputError });
  t.regex(err!.message, /line \d+, column \d+/);
});

test('a missing file says so', (t) => {
  const err = t.throws(() => loadConfig('/nonexistent/kperturb.yaml'), { instanceOf: UserInputError });
  t.regex(err!.message, /not found/);
});

const WITH_EXEC = `${VALID}exec:
  - { container: rabbitmq, command: [rabbitmqctl, "*"], exitCode: 0, stdout: "ok\\n" }
  - { pod: "rabbitmq-server-*", commandContains: rabbitmq-queues, exitCode: 69, stderr: "not ready" }
  - { namespace: "ops-*" }
logs:
  - { pod: "db-*", container: db, text: "ready\\n" }
  - { text: "" }
`;

test('exec and logs rules load in order, with default exit code 0 and empty output', (t) => {
  const c = loadConfig(write(WITH_EXEC, { 'crd.yaml': 'kind: X' }));
  t.deepEqual(c.exec, [
    { container: 'rabbitmq', command: ['rabbitmqctl', '*'], exitCode: 0, stdout: 'ok\n', stderr: '' },
    { pod: 'rabbitmq-server-*', commandContains: 'rabbitmq-queues', exitCode: 69, stdout: '', stderr: 'not ready' },
    { namespace: 'ops-*', exitCode: 0, stdout: '', stderr: '' },
  ]);
  t.deepEqual(c.logs, [{ pod: 'db-*', container: 'db', text: 'ready\n' }, { text: '' }]);
  t.deepEqual(loadConfig(write(VALID, { 'crd.yaml': 'kind: X' })).exec, []);
});

test('a bad exec or logs rule names the file, the path and what was expected', (t) => {
  expectInputError(t, WITH_EXEC.replace('exitCode: 69', 'exitCode: 256'), 'exec[1].exitCode', /an exit code from 0 to 255 \(got 256\)/);
  expectInputError(t, WITH_EXEC.replace('exitCode: 69', 'exitCode: -1'), 'exec[1].exitCode', /a number >= 0/);
  expectInputError(t, WITH_EXEC.replace('exitCode: 69', 'exitCode: 1.5'), 'exec[1].exitCode', /a whole number/);
  expectInputError(t, WITH_EXEC.replace('command: [rabbitmqctl, "*"]', 'command: rabbitmqctl'), 'exec[0].command', /a list/);
  expectInputError(t, WITH_EXEC.replace('command: [rabbitmqctl, "*"]', 'command: []'), 'exec[0].command', /a non-empty argv pattern/);
  expectInputError(t, WITH_EXEC.replace('stdout: "ok\\n"', 'stdout: 3'), 'exec[0].stdout', /a string \(got/);
  expectInputError(
    t,
    WITH_EXEC.replace('commandContains:', 'commandContain:'),
    'exec[1].commandContain',
    /no such field here \(allowed: namespace, pod, container, command, commandContains/,
  );
  expectInputError(t, WITH_EXEC.replace('{ text: "" }', '{ pod: x }'), 'logs[1].text', /the log text/);
  expectInputError(t, WITH_EXEC.replace('pod: "db-*"', 'pod: ""'), 'logs[0].pod', /a non-empty string/);
  expectInputError(t, `${VALID}exec: { container: x }\n`, 'exec', /a list/);
});

test('cluster.kubernetesVersion selects the emulated release; absent means the default', (t) => {
  const file = write(`${VALID}cluster: { kubernetesVersion: "v1.18" }\n`, { 'crd.yaml': 'kind: X' });
  t.deepEqual(loadConfig(file).cluster, { kubernetesVersion: '1.18' });
  t.deepEqual(loadConfig(write(VALID, { 'crd.yaml': 'kind: X' })).cluster, {});
});

test('cluster.kubernetesVersion: an unquoted number, a release out of range and an unknown key name the path', (t) => {
  expectInputError(t, `${VALID}cluster: { kubernetesVersion: 1.20 }\n`, 'cluster.kubernetesVersion', /quote it, YAML reads 1\.2 as a number/);
  expectInputError(t, `${VALID}cluster: { kubernetesVersion: "1.16" }\n`, 'cluster.kubernetesVersion', /from "1\.18" to "1\.32".*got "1\.16"/);
  expectInputError(t, `${VALID}cluster: { kubernetesVersion: "1.18", simulation: false }\n`, 'cluster.simulation', /no such field/);
  expectInputError(t, `${VALID}cluster: "1.18"\n`, 'cluster', /a mapping/);
});

test('cluster.podReadiness: immediate or probe, anything else named with the path', (t) => {
  t.deepEqual(loadConfig(write(`${VALID}cluster: { podReadiness: probe }\n`, { 'crd.yaml': 'kind: X' })).cluster, { podReadiness: 'probe' });
  expectInputError(t, `${VALID}cluster: { podReadiness: slow }\n`, 'cluster.podReadiness', /immediate.*probe/);
});

test('controller.maxParallel caps how many runs of the controller test starts at once', async (t) => {
  const { effectiveParallel } = await import('../../src/campaign/campaign.js');
  const capped = loadConfig(write(VALID.replace('env: { LEVEL: 3 } }', 'env: { LEVEL: 3 }, maxParallel: 1 }'), { 'crd.yaml': 'kind: X' }));
  t.is(capped.controller.maxParallel, 1);
  t.is(effectiveParallel(capped, 3), 1);
  const free = loadConfig(write(VALID, { 'crd.yaml': 'kind: X' }));
  t.is(free.controller.maxParallel, undefined);
  t.is(effectiveParallel(free, 3), 3);
  expectInputError(t, VALID.replace('env: { LEVEL: 3 } }', 'env: { LEVEL: 3 }, maxParallel: 0 }'), 'controller.maxParallel', /a number >= 1/);
});

test('controller.ports: the fixed ports a controller binds, whole numbers of a TCP port', (t) => {
  const config = loadConfig(write(VALID.replace('env: { LEVEL: 3 } }', 'env: { LEVEL: 3 }, ports: [8080, 8383] }'), { 'crd.yaml': 'kind: X' }));
  t.deepEqual(config.controller.ports, [8080, 8383]);
  t.deepEqual(loadConfig(write(VALID, { 'crd.yaml': 'kind: X' })).controller.ports, []);
  expectInputError(t, VALID.replace('env: { LEVEL: 3 } }', 'env: { LEVEL: 3 }, ports: [8080, 70000] }'), 'controller.ports[1]', /a number <= 65535/);
  expectInputError(t, VALID.replace('env: { LEVEL: 3 } }', 'env: { LEVEL: 3 }, ports: 8080 }'), 'controller.ports', /a list/);
});

const WITH_STUBS = `${VALID.replace('controller: { command: node, args: [c.js], env: { LEVEL: 3 } }', 'controller: { command: node, clusterDNS: true, hostAliases: [{ ip: 127.0.0.5, hostnames: [db.example, cache] }] }')}applications:
  - name: zk
    protocol: zookeeper
    port: 2181
    pods: { matchLabels: { app: zk } }
    services: [zk-client]
  - name: es
    protocol: http
    port: 9200
    namespace: search
    pods: { matchExpressions: [{ key: app, operator: In, values: [es] }] }
    http:
      rules:
        - { method: get, path: "/_cluster/health*", json: { status: green } }
        - { path: "/text", status: 503, text: "busy", headers: { Retry-After: "1" } }
      default: { status: 404 }
`;

test('controller.hostAliases, controller.clusterDNS and applications load with their defaults', (t) => {
  const c = loadConfig(write(WITH_STUBS, { 'crd.yaml': 'kind: X' }));
  t.true(c.controller.clusterDNS);
  t.deepEqual(c.controller.hostAliases, [{ ip: '127.0.0.5', hostnames: ['db.example', 'cache'] }]);
  t.deepEqual(c.applications, [
    { name: 'zk', protocol: 'zookeeper', port: 2181, namespace: 'default', pods: { matchLabels: { app: 'zk' } }, services: ['zk-client'] },
    {
      name: 'es',
      protocol: 'http',
      port: 9200,
      namespace: 'search',
      pods: { matchExpressions: [{ key: 'app', operator: 'In', values: ['es'] }] },
      services: [],
      http: {
        rules: [
          { method: 'GET', path: '/_cluster/health*', status: 200, json: { status: 'green' }, headers: {} },
          { path: '/text', status: 503, text: 'busy', headers: { 'Retry-After': '1' } },
        ],
        default: { status: 404, json: {}, headers: {} },
      },
    },
  ]);
  const plain = loadConfig(write(VALID, { 'crd.yaml': 'kind: X' }));
  t.false(plain.controller.clusterDNS);
  t.deepEqual(plain.controller.hostAliases, []);
  t.deepEqual(plain.applications, []);
});

test("controller.namespace and the HTTP rules' body and state matches load", (t) => {
  const c = loadConfig(
    write(
      WITH_STUBS.replace('clusterDNS: true', 'clusterDNS: true, namespace: default').replace(
        '- { path: "/text", status: 503',
        '- { path: "/jolokia/", bodyContains: decommission, state: a, setState: b }\n        - { path: "/text", status: 503',
      ),
      { 'crd.yaml': 'kind: X' },
    ),
  );
  t.is(c.controller.namespace, 'default');
  t.deepEqual(c.applications[1]!.http!.rules[1], {
    path: '/jolokia/',
    bodyContains: 'decommission',
    state: 'a',
    setState: 'b',
    status: 200,
    json: {},
    headers: {},
  });
  t.is(loadConfig(write(WITH_STUBS, { 'crd.yaml': 'kind: X' })).controller.namespace, undefined);
  expectInputError(t, WITH_STUBS.replace('clusterDNS: true', 'clusterDNS: true, namespace: Default'), 'controller.namespace', /a namespace name/);
  expectInputError(
    t,
    WITH_STUBS.replace('clusterDNS: true', 'clusterDNS: false, namespace: default'),
    'controller.namespace',
    /clusterDNS: true or podNamespaceFile: true as well/,
  );
  // The pod's namespace file holds it: no clusterDNS needed.
  const podFile = loadConfig(
    write(WITH_STUBS.replace('clusterDNS: true', 'clusterDNS: false, namespace: psmdb, podNamespaceFile: true'), { 'crd.yaml': 'kind: X' }),
  );
  t.is(podFile.controller.namespace, 'psmdb');
  t.true(podFile.controller.podNamespaceFile);
  expectInputError(t, WITH_STUBS.replace('clusterDNS: true', 'podNamespaceFile: "yes"'), 'controller.podNamespaceFile', /true or false/);
  expectInputError(
    t,
    WITH_STUBS.replace('path: "/text",', 'path: "/text", bodyContains: 3,'),
    'applications[1].http.rules[1].bodyContains',
    /a non-empty string/,
  );
});

test('a bad hostAlias or application names the file, the path and what was expected', (t) => {
  expectInputError(t, WITH_STUBS.replace('clusterDNS: true', 'clusterDNS: yes-please'), 'controller.clusterDNS', /true or false/);
  expectInputError(t, WITH_STUBS.replace('ip: 127.0.0.5', 'ip: db.local'), 'controller.hostAliases[0].ip', /an IPv4 or IPv6 address \(got "db.local"\)/);
  expectInputError(t, WITH_STUBS.replace('hostnames: [db.example, cache]', 'hostnames: []'), 'controller.hostAliases[0].hostnames', /at least one host name/);
  expectInputError(
    t,
    WITH_STUBS.replace('hostnames: [db.example, cache]', 'hostnames: [db.example, "bad name"]'),
    'controller.hostAliases[0].hostnames[1]',
    /a host name/,
  );
  expectInputError(
    t,
    WITH_STUBS.replace('protocol: zookeeper', 'protocol: redis'),
    'applications[0].protocol',
    /one of "zookeeper", "http" \(got a string|one of "zookeeper", "http"/,
  );
  expectInputError(t, WITH_STUBS.replace('port: 2181', 'port: 70000'), 'applications[0].port', /a TCP port from 1 to 65535 \(got 70000\)/);
  expectInputError(t, WITH_STUBS.replace('port: 2181', 'port: "2181"'), 'applications[0].port', /a number/);
  expectInputError(
    t,
    WITH_STUBS.replace('    pods: { matchLabels: { app: zk } }\n    services: [zk-client]\n', ''),
    'applications[0]',
    /pods \(a label selector\), services \(Service names\) and\/or matchPort: true \(every pod and Service with that port\): where the stub listens/,
  );
  expectInputError(
    t,
    WITH_STUBS.replace('    pods: { matchLabels: { app: zk } }\n    services: [zk-client]\n', '    matchPort: "yes"\n'),
    'applications[0].matchPort',
    /true or false/,
  );
  const byPort = loadConfig(
    write(WITH_STUBS.replace('    pods: { matchLabels: { app: zk } }\n    services: [zk-client]\n', '    matchPort: true\n'), { 'crd.yaml': 'kind: X' }),
  );
  t.like(byPort.applications[0], { name: 'zk', matchPort: true, services: [] });
  expectInputError(
    t,
    WITH_STUBS.replace('pods: { matchLabels: { app: zk } }', 'pods: { app: zk }'),
    'applications[0].pods.app',
    /no such field here \(allowed: matchLabels, matchExpressions\)/,
  );
  expectInputError(
    t,
    WITH_STUBS.replace('operator: In, values: [es]', 'operator: In'),
    'applications[1].pods.matchExpressions[0].values',
    /at least one value for operator In/,
  );
  expectInputError(t, WITH_STUBS.replace('name: es', 'name: zk'), 'applications[1].name', /a name no other application has/);
  expectInputError(
    t,
    WITH_STUBS.replace('path: "/text", status: 503', 'path: "/text", status: 700'),
    'applications[1].http.rules[1].status',
    /an HTTP status from 100 to 599/,
  );
  expectInputError(t, WITH_STUBS.replace('text: "busy"', 'text: "busy", json: {}'), 'applications[1].http.rules[1]', /either json or text/);
  expectInputError(t, WITH_STUBS.replace('path: "/text"', 'path: "text"'), 'applications[1].http.rules[1].path', /a path glob starting with \//);
  expectInputError(
    t,
    WITH_STUBS.replace('services: [zk-client]', 'services: [zk-client]\n    http: { rules: [] }'),
    'applications[0].http',
    /no http section for protocol zookeeper/,
  );
  expectInputError(t, `${VALID}applications: { name: zk }\n`, 'applications', /a list/);
});

test('every duration is bounded: beyond 24 h, negative or infinite, the path is named (Node timers overflow past 2^31-1 ms)', (t) => {
  const cases: Array<[string, string, string]> = [
    ['- sleep: 0.1', '- sleep: 1e7', 'workloads.basic.steps[4].sleep'],
    ['- sleep: 0.1', '- sleep: .inf', 'workloads.basic.steps[4].sleep'],
    ['- sleep: 0.1', '- sleep: -1', 'workloads.basic.steps[4].sleep'],
    ['timeoutSeconds: 5', 'timeoutSeconds: 1e9', 'workloads.basic.steps[1].waitFor.timeoutSeconds'],
    ['- sleep: 0.1', '- sleep: 0.1\nsettle: { quietMs: 1e12 }', 'settle.quietMs'],
    ['- sleep: 0.1', '- sleep: 0.1\nsettle: { timeoutSeconds: 86401 }', 'settle.timeoutSeconds'],
  ];
  for (const [from, to, at] of cases) expectInputError(t, VALID.replace(from, to), at, /a duration in (milli)?seconds from [\d.]+ to \d+ \(24 h\)/);
  const file = write(
    VALID.replace('- sleep: 0.1', '- sleep: 86400').replace('timeoutSeconds: 5', 'timeoutSeconds: 86400') +
      'settle: { quietMs: 86400000, timeoutSeconds: 86400 }\n',
    { 'crd.yaml': 'kind: X' },
  );
  t.deepEqual(loadConfig(file).workloads.get('basic')!.steps[4], { sleep: 86400 });
});

test('a directory where a manifest file belongs names the config, the path and that a file was expected', (t) => {
  const dir = sharedScratchDir('kperturb-config-');
  mkdirSync(join(dir, 'manifests'));
  writeFileSync(join(dir, 'crd.yaml'), 'kind: X');
  const file = join(dir, 'kperturb.yaml');
  writeFileSync(file, VALID.replace('setup: [crd.yaml]', 'setup: [crd.yaml, crd.yaml, manifests]'));
  const err = t.throws(() => loadConfig(file), { instanceOf: UserInputError });
  t.is(err!.at, 'setup[2]');
  t.regex(err!.message, /kperturb\.yaml at setup\[2\]: a manifest file \(.*manifests is a directory/);
  writeFileSync(file, VALID.replace('- apply: crd.yaml', '- apply: manifests'));
  t.is(t.throws(() => loadConfig(file), { instanceOf: UserInputError })!.at, 'workloads.basic.steps[0].apply');
});

test('controller.workingDir must be an existing directory', (t) => {
  expectInputError(
    t,
    VALID.replace('env: { LEVEL: 3 } }', 'env: { LEVEL: 3 }, workingDir: nowhere }'),
    'controller.workingDir',
    /a directory that exists \(.*nowhere not found\)/,
  );
});

test('a YAML alias bomb is refused with the file named', (t) => {
  const levels = 'abcdefghi'.split('');
  const bomb = levels
    .map((c, i) =>
      i === 0
        ? `a: &a ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]`
        : `${c}: &${c} [${Array(9)
            .fill('*' + levels[i - 1])
            .join(', ')}]`,
    )
    .join('\n');
  const file = write(bomb + '\n');
  const err = t.throws(() => loadConfig(file), { instanceOf: UserInputError });
  t.is(err!.file, file);
  t.regex(err!.message, /aliases .* bounded size .*Excessive alias count/);
});

test('echoed input is cut and its control characters escaped: a binary file is not printed whole', (t) => {
  const garbage = Buffer.from(Array.from({ length: 5000 }, (_, i) => (i * 7919 + 13) % 256)).toString('latin1');
  const file = write(garbage);
  const err = t.throws(() => loadConfig(file), { instanceOf: UserInputError });
  t.true(err!.message.length < file.length + 400, `${err!.message.length} characters`);
  t.regex(err!.message, /more characters\)\)$/);
  t.false(/[\u0000-\u001f\u007f-\u009f]/.test(err!.message), 'no raw control characters');
});

test('a plan or manifest given as a config is told which kind was expected', (t) => {
  expectInputError(t, VALID.replace('kind: ControllerUnderTest', 'kind: TestPlan\nspec: {}'), 'kind', /"ControllerUnderTest" \(got "TestPlan"\)/);
});

test('a mask or countUpdates path of bad syntax is refused when the config loads, not when an oracle first reads it', (t) => {
  const masked = VALID + 'masks: [ { key: "ConfigMap/default/*", paths: [data.ok, "spec.x[name=]"] } ]\n';
  expectInputError(t, masked, 'masks[0].paths[1]', /a field path such as .*a value after = at character 7/);
  const counted = VALID + 'countUpdates: [ { key: "StatefulSet/default/*", paths: ["spec..replicas"] } ]\n';
  expectInputError(t, counted, 'countUpdates[0].paths[0]', /a field path/);
  const file = write(VALID + 'masks: [ { key: "*", paths: ["spec.containers[*].image", "status.conditions[type=Ready]"] } ]\n', { 'crd.yaml': 'kind: X' });
  t.is(loadConfig(file).masks[0]!.paths.length, 2);
});

test('referenceRuns is bounded: each is a whole run of the workload', (t) => {
  expectInputError(t, VALID + 'referenceRuns: 1000000\n', 'referenceRuns', /a number <= 100 \(got 1000000\)/);
  t.is(loadConfig(write(VALID + 'referenceRuns: 100\n', { 'crd.yaml': 'kind: X' })).referenceRuns, 100);
});

const CRD = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: { name: caches.demo.kperturb.dev }
spec: { group: demo.kperturb.dev, names: { kind: Cache, plural: caches }, scope: Namespaced, versions: [] }
`;
const SEED = `apiVersion: demo.kperturb.dev/v1
kind: Cache
metadata: { name: c1 }
spec: { replicas: 1 }
`;
const EXPLORE_ONLY = `apiVersion: kperturb.dev/v1
kind: ControllerUnderTest
metadata: { name: demo }
controller: { command: node }
setup: [crd.yaml]
`;

test('explore: crds and seeds are manifest files; with seeds the workloads may be left out', (t) => {
  const c = loadConfig(write(EXPLORE_ONLY + 'crds: [crd.yaml]\nseeds: [seed.yaml]\n', { 'crd.yaml': CRD, 'seed.yaml': SEED }));
  t.true(c.crds![0]!.endsWith('crd.yaml'));
  t.true(c.seeds![0]!.endsWith('seed.yaml'));
  t.is(c.workloads.size, 0);
});

test('explore: a crds file that is not CustomResourceDefinitions, a missing seed, or neither workloads nor seeds are refused with the path', (t) => {
  const notCrd = t.throws(() => loadConfig(write(EXPLORE_ONLY + 'crds: [seed.yaml]\nseeds: [seed.yaml]\n', { 'crd.yaml': CRD, 'seed.yaml': SEED })), {
    instanceOf: UserInputError,
  });
  t.regex(notCrd.message, /at crds\[0\]: a file of CustomResourceDefinitions \(.*seed\.yaml document 1 is a Cache\)/);
  const missing = t.throws(() => loadConfig(write(EXPLORE_ONLY + 'seeds: [nope.yaml]\n', { 'crd.yaml': CRD })), { instanceOf: UserInputError });
  t.regex(missing.message, /at seeds\[0\]: a manifest file that exists/);
  const neither = t.throws(() => loadConfig(write(EXPLORE_ONLY, { 'crd.yaml': CRD })), { instanceOf: UserInputError });
  t.regex(neither.message, /at workloads: .*or seeds, for kperturb explore/);
  const empty = t.throws(() => loadConfig(write(EXPLORE_ONLY + 'seeds: []\n', { 'crd.yaml': CRD })), { instanceOf: UserInputError });
  t.regex(empty.message, /at seeds: at least one manifest file/);
});

test('settle steps and patches that go on when refused', (t) => {
  const c = loadConfig(
    write(
      EXPLORE_ONLY +
        `workloads:
  w:
    steps:
      - settle: {}
      - settle: { timeoutSeconds: 5 }
      - patch: { key: Cache/default/c1, patch: { spec: { replicas: 0 } }, onError: continue }
`,
      { 'crd.yaml': CRD },
    ),
  );
  t.deepEqual(c.workloads.get('w')!.steps, [
    { settle: { timeoutSeconds: 30 } },
    { settle: { timeoutSeconds: 5 } },
    { patch: { key: 'Cache/default/c1', type: 'merge', patch: { spec: { replicas: 0 } }, onError: 'continue' } },
  ]);
  const bad = t.throws(
    () => loadConfig(write(EXPLORE_ONLY + 'workloads: { w: { steps: [ { patch: { key: A/b, patch: {}, onError: skip } } ] } }\n', { 'crd.yaml': CRD })),
    {
      instanceOf: UserInputError,
    },
  );
  t.regex(bad.message, /onError/);
});
