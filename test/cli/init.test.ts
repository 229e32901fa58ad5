/**
 * `kperturb init`: what it reads of an operator repository and the kperturb.yaml it writes, on the
 * two bundled repositories (fixtures/init/): a kubebuilder one that builds and runs
 * (memcached-operator) and an operator-sdk 0.x one that is only read (operator-sdk-legacy).
 */
import test from 'ava';
import { execFile, spawnSync } from 'node:child_process';
import { promisify } from 'node:util';
import { cpSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { scanOperatorRepo } from '../../src/config/init/repo-scan.js';
import { proposeConfig } from '../../src/config/init/propose.js';
import { loadConfig } from '../../src/config/config.js';
import { learn } from '../../src/campaign/campaign.js';
import { hangBound } from '../_hang-bound.js';
import { sharedScratchDir } from '../_scratch-dir.js';

const root = fileURLToPath(new URL('../../../', import.meta.url));
const CLI = join(root, 'bin', 'kperturb.js');
const fixture = (name: string) => join(root, 'fixtures', 'init', name);
/** A scratch copy of an init fixture, to edit. */
const copyFixture = (name: string) => {
  const dir = sharedScratchDir('kperturb-init-');
  cpSync(fixture(name), dir, { recursive: true });
  return dir;
};
/** Rewrites a file of such a copy in place. */
const editFile = (file: string, edit: (text: string) => string) => writeFileSync(file, edit(readFileSync(file, 'utf8')));
const run = (args: string[], timeout = 60_000) => spawnSync(process.execPath, [CLI, ...args], { encoding: 'utf8', timeout: hangBound(timeout) });
const hasGo = spawnSync('go', ['version']).status === 0;

/** init's proposal for the repository at `dir`. */
function proposeIn(dir: string) {
  return proposeConfig(scanOperatorRepo(dir), (p) => existsSync(join(dir, p)));
}

function propose(name: string) {
  return proposeIn(fixture(name));
}

test('operator-sdk 0.x: the manager package, fixed metrics ports, the env from deploy/operator.yaml, the release from go.mod', (t) => {
  const p = propose('operator-sdk-legacy');
  t.is(p.layout, 'operator-sdk-0.x');
  t.is(p.name, 'thing-operator');
  // cmd/exporter is a side tool; the manager is the package that starts a controller-runtime manager.
  t.is(p.main?.value, './cmd/manager');
  t.deepEqual(p.ports?.value, [8383, 8686]);
  t.deepEqual(
    p.env.map((e) => [e.name, e.value]),
    [
      ['WATCH_NAMESPACE', 'things'],
      ['POD_NAME', 'thing-operator'],
      ['OPERATOR_NAME', 'thing-operator'],
    ],
  );
  t.is(p.kubernetesVersion?.value, '1.18');
  t.regex(p.kubernetesVersion!.why, /client-go v0\.17\.4.*1\.18 is the oldest/);
  t.deepEqual(p.crdFiles.value, ['deploy/crds/app.example.com_things_crd.yaml']);
  t.deepEqual(p.seeds.value, ['deploy/crds/app.example.com_v1alpha1_thing_cr.yaml']);
  // The seed's namespace is created first.
  t.deepEqual(
    p.extraFiles.map((f) => [f.file, f.text]),
    [['kperturb-namespace.yaml', 'apiVersion: v1\nkind: Namespace\nmetadata:\n  name: things\n']],
  );
  t.deepEqual(p.unsetEnv, ['RELATED_IMAGE_SIDECAR']);
  t.deepEqual(p.questions, [
    'controller.env.DB_PASSWORD: deploy/operator.yaml takes it from a secretKeyRef; set a value if the operator needs one',
    'controller.ports: check that 8383, 8686 are ports the operator listens on (one plan at a time while they are fixed)',
    'controller.env.RELATED_IMAGE_SIDECAR: the operator reads it (an image name, most likely); set it if the operator refuses to start without it',
  ]);
  t.deepEqual(scanOperatorRepo(fixture('operator-sdk-legacy')).module?.vanityModules, ['vbom.ml/util']);
});

test('kubebuilder: listeners turned off, leader election kept, no release pinned for a current client-go', (t) => {
  const r = run(['init', fixture('memcached-operator'), '--stdout']);
  t.is(r.status, 0, r.stderr);
  const lines = r.stdout.split('\n').filter((l) => !/^\s*#/.test(l) && l.trim() !== '');
  t.deepEqual(lines, [
    'apiVersion: kperturb.dev/v1',
    'kind: ControllerUnderTest',
    'metadata:',
    '  name: memcached-operator',
    'controller:',
    '  command: .kperturb/bin/manager',
    '  args: [--leader-elect, --health-probe-bind-address=0, --metrics-bind-address=0]',
    '  env:',
    '    WATCH_NAMESPACE: default',
    'setup:',
    '  - config/crd/bases/cache.example.com_memcacheds.yaml',
    ...(/^seeds:/m.test(r.stdout) ? ['seeds:', '  - config/samples/cache_v1alpha1_memcached.yaml'] : []),
    'workloads:',
    '  create-seed:',
    '    steps:',
    '      - apply: config/samples/cache_v1alpha1_memcached.yaml',
  ]);
  t.regex(r.stdout, /# Built from \.\/cmd \(the Go main package that starts a controller-runtime manager\)/);
  t.regex(r.stdout, /# args from config\/manager\/manager\.yaml \(container manager\)/);
  t.is(r.stderr, '');
});

test("leader election: turned off when the code names no LeaderElectionNamespace (outside a pod controller-runtime finds none), or given the seeds' namespace by its flag", (t) => {
  const dir = copyFixture('memcached-operator');
  const main = join(dir, 'cmd', 'main.go');
  const source = readFileSync(main, 'utf8');
  writeFileSync(main, source.replace(/^\s*LeaderElectionNamespace:.*$/m, ''));
  const off = proposeConfig(scanOperatorRepo(dir), (p) => existsSync(join(dir, p)));
  t.false(off.leaderElection);
  t.false(off.args.value.includes('--leader-elect'));
  t.regex(off.args.why, /leader election off: \.\/cmd names no LeaderElectionNamespace/);
  writeFileSync(
    main,
    source
      .replace(/^\s*LeaderElectionNamespace:.*$/m, '\t\tLeaderElectionNamespace: leNamespace,')
      .replace('flag.Parse()', 'flag.StringVar(&leNamespace, "leader-election-namespace", "", "")\n\tflag.Parse()'),
  );
  const named = proposeConfig(scanOperatorRepo(dir), (p) => existsSync(join(dir, p)));
  t.true(named.leaderElection);
  t.deepEqual(
    named.args.value.filter((a) => a.startsWith('--leader')),
    ['--leader-elect', '--leader-election-namespace=default'],
  );
  // The code names the namespace itself (from WATCH_NAMESPACE): kept as the Deployment gives it.
  t.deepEqual(
    propose('memcached-operator').args.value.filter((a) => a.startsWith('--leader')),
    ['--leader-elect'],
  );
});

test('a thin main that runs a command of another package of the module: its flags and its manager are read there (OT redis-operator v0.26.0)', (t) => {
  const dir = copyFixture('memcached-operator');
  const module = /^module\s+(\S+)/m.exec(readFileSync(join(dir, 'go.mod'), 'utf8'))![1]!;
  const main = join(dir, 'cmd', 'main.go');
  const manager = readFileSync(main, 'utf8')
    .replace(/^package main$/m, 'package manager')
    .replace('func main() {', 'func Execute() {')
    .replace(/^\s*LeaderElectionNamespace:.*$/m, '');
  mkdirSync(join(dir, 'internal', 'cmd', 'manager'), { recursive: true });
  writeFileSync(join(dir, 'internal', 'cmd', 'manager', 'cmd.go'), manager);
  writeFileSync(main, `package main\n\nimport "${module}/internal/cmd/manager"\n\nfunc main() {\n\tmanager.Execute()\n}\n`);
  const proposed = proposeConfig(scanOperatorRepo(dir), (p) => existsSync(join(dir, p)));
  t.false(proposed.leaderElection);
  t.false(proposed.args.value.includes('--leader-elect'), 'the manager would exit outside a pod: no LeaderElectionNamespace');
  t.true(proposed.args.value.includes('--metrics-bind-address=0'), 'the listener flags of the command are turned off');
  t.regex(proposed.args.why, /leader election off: \.\/cmd names no LeaderElectionNamespace/);
});

test("the release comes from the client-go go.mod builds with: a replace directive's version wins over the required one", (t) => {
  const dir = copyFixture('operator-sdk-legacy');
  const mod = join(dir, 'go.mod');
  editFile(mod, (text) =>
    text
      .replace(/^replace k8s\.io\/client-go .*$/m, 'replace k8s.io/client-go v9.0.0+incompatible => k8s.io/client-go v0.20.2')
      .replace(/k8s\.io\/client-go v0\.17\.4/, 'k8s.io/client-go v9.0.0+incompatible'),
  );
  t.is(scanOperatorRepo(dir).module?.clientGo, 'v0.20.2');
  t.is(proposeConfig(scanOperatorRepo(dir), (p) => existsSync(join(dir, p))).kubernetesVersion?.value, '1.20');
});

test('a module that crashes when built with a current Go (modern-go/reflect2 before v1.0.2) is replaced by its fixed version in the build', (t) => {
  const dir = copyFixture('operator-sdk-legacy');
  const mod = join(dir, 'go.mod');
  const source = readFileSync(mod, 'utf8');
  t.deepEqual(scanOperatorRepo(dir).module?.toolchainFixes, []);
  writeFileSync(mod, source.replace(/^require \(/m, 'require (\n\tgithub.com/modern-go/reflect2 v1.0.1 // indirect'));
  t.deepEqual(scanOperatorRepo(dir).module?.toolchainFixes, ['github.com/modern-go/reflect2']);
  writeFileSync(mod, source.replace(/^require \(/m, 'require (\n\tgithub.com/modern-go/reflect2 v1.0.2 // indirect'));
  t.deepEqual(scanOperatorRepo(dir).module?.toolchainFixes, []);
});

test('init refuses to overwrite a kperturb.yaml without --force, and refuses a directory that is not there', (t) => {
  const dir = sharedScratchDir('kperturb-init-');
  writeFileSync(join(dir, 'kperturb.yaml'), 'mine\n');
  const r = run(['init', dir, '--no-build']);
  t.is(r.status, 2, r.stderr);
  t.is(r.stderr.trim(), `kperturb: ${join(dir, 'kperturb.yaml')}: no existing kperturb.yaml (give --force to overwrite it) [KP_E_INPUT]`);
  t.is(readFileSync(join(dir, 'kperturb.yaml'), 'utf8'), 'mine\n');
  const missing = run(['init', join(dir, 'nope'), '--no-build']);
  t.is(missing.status, 2);
  t.is(missing.stderr.trim(), `kperturb: at [dir]: an operator's repository directory (${join(dir, 'nope')} is not a directory) [KP_E_INPUT]`);
});

test('init --no-build writes a config kperturb loads, and the seed namespace file beside it', (t) => {
  const dir = copyFixture('operator-sdk-legacy');
  const r = run(['init', dir, '--no-build']);
  t.is(r.status, 0, r.stderr);
  const config = loadConfig(join(dir, 'kperturb.yaml'));
  t.deepEqual(config.setup, [join(dir, 'kperturb-namespace.yaml'), join(dir, 'deploy/crds/app.example.com_things_crd.yaml')]);
  t.is(config.cluster?.kubernetesVersion, '1.18');
  t.deepEqual(config.controller.ports, [8383, 8686]);
  t.regex(r.stderr, /question: controller\.env\.DB_PASSWORD/);
});

(hasGo ? test : test.skip)('init builds the operator and its first campaign learns: the seed becomes a Deployment of spec.size replicas', async (t) => {
  // A Go build: minutes on a loaded machine with cold caches.
  t.timeout(hangBound(1_200_000));
  const dir = copyFixture('memcached-operator');
  const r = await promisify(execFile)(process.execPath, [CLI, 'init', dir], { encoding: 'utf8' });
  t.regex(r.stderr, /kperturb: built \.kperturb\/bin\/manager in [\d.]+ s/);
  t.true(existsSync(join(dir, '.kperturb', 'bin', 'manager')));
  const config = loadConfig(join(dir, 'kperturb.yaml'));
  const out = join(dir, '.kperturb');
  const [learned] = await learn(config, { out, log: () => undefined });
  const failed = learned!.runs.filter((x) => !x.ok);
  t.deepEqual(failed, []);
  const endState = JSON.parse(readFileSync(join(learned!.runs[0]!.dir, 'end-state.json'), 'utf8')) as {
    objects?: Record<string, { spec?: { replicas?: number } }>;
  } & Record<string, unknown>;
  const text = JSON.stringify(endState);
  t.true(text.includes('Deployment/default/memcached-sample'), 'the operator created its Deployment');
  t.regex(text, /"replicas":2/);
});

test('kubebuilder v3 component config: --config points at a copy with listeners and webhooks off and container paths made repository paths', (t) => {
  // cass-operator's layout: the Deployment gets --config from config/default's patch, so manager.yaml has no such flag.
  const dir = copyFixture('memcached-operator');
  const main = join(dir, 'cmd', 'main.go');
  editFile(main, (text) => text.replace('func main() {', 'func main() {\n\tvar configFile string\n\tflag.StringVar(&configFile, "config", "", "")\n'));
  writeFileSync(
    join(dir, 'config', 'manager', 'controller_manager_config.yaml'),
    'apiVersion: config.example.com/v1beta1\nkind: OperatorConfig\nhealth:\n  healthProbeBindAddress: :8081\nmetrics:\n  bindAddress: 127.0.0.1:8080\n' +
      'leaderElection:\n  leaderElect: true\ndisableWebhooks: false\nimageConfigFile: /configs/image_config.yaml\nextraFile: /configs/missing.yaml\n',
  );
  writeFileSync(join(dir, 'config', 'manager', 'image_config.yaml'), 'images: {}\n');
  const p = proposeConfig(scanOperatorRepo(dir), (f) => existsSync(join(dir, f)));
  t.deepEqual(p.args.value.slice(-1), ['--config=kperturb-manager-config.yaml']);
  // The Deployment's --leader-elect is a flag this main no longer defines (the config file sets it): left out, or the manager exits 2 at start.
  const noLeaderFlag = join(dir, 'cmd', 'main.go');
  editFile(noLeaderFlag, (text) => text.replace(/\tflag\.BoolVar\(&enableLeaderElection, "leader-elect"[^\n]*\n/, ''));
  const q = proposeConfig(scanOperatorRepo(dir), (f) => existsSync(join(dir, f)));
  t.false(q.args.value.includes('--leader-elect'), q.args.value.join(' '));
  t.regex(q.args.why, /--leader-elect left out: \.\/cmd defines no such flag/);
  const file = p.extraFiles.find((f) => f.controller);
  t.is(file?.file, 'kperturb-manager-config.yaml');
  const body = file!.text.split('\n').filter((l) => !l.startsWith('#'));
  t.deepEqual(body, [
    'apiVersion: config.example.com/v1beta1',
    'kind: OperatorConfig',
    'health:',
    '  healthProbeBindAddress: "0"',
    'metrics:',
    '  bindAddress: "0"',
    'leaderElection:',
    '  leaderElect: true',
    '  resourceNamespace: default',
    'disableWebhooks: true',
    'imageConfigFile: config/manager/image_config.yaml',
    'extraFile: /configs/missing.yaml',
    '',
  ]);
  t.true(
    p.questions.includes(
      "kperturb-manager-config.yaml at extraFile: /configs/missing.yaml is a file inside the operator's container; give a path in this repository",
    ),
  );
  // Not applied in setup: it is the controller's file.
  const r = run(['init', dir, '--no-build']);
  t.is(r.status, 0, r.stderr);
  const config = loadConfig(join(dir, 'kperturb.yaml'));
  t.false(config.setup.some((f) => f.endsWith('kperturb-manager-config.yaml')));
  t.true(existsSync(join(dir, 'kperturb-manager-config.yaml')));
});

test("a CRD its config/crd kustomization patches (JSON 6902) is set up as kustomize builds it: a patched copy beside kperturb.yaml (cass-operator's spec.config)", (t) => {
  const dir = copyFixture('memcached-operator');
  mkdirSync(join(dir, 'config', 'crd', 'patches'));
  writeFileSync(
    join(dir, 'config', 'crd', 'kustomization.yaml'),
    'resources:\n- bases/cache.example.com_memcacheds.yaml\npatchesJson6902:\n- target:\n    group: apiextensions.k8s.io\n    version: v1\n' +
      '    kind: CustomResourceDefinition\n    name: memcacheds.cache.example.com\n  path: patches/size_removal.yaml\n',
  );
  writeFileSync(
    join(dir, 'config', 'crd', 'patches', 'size_removal.yaml'),
    '- op: remove\n  path: /spec/versions/0/schema/openAPIV3Schema/properties/spec/properties/size\n',
  );
  const p = proposeConfig(scanOperatorRepo(dir), (f) => existsSync(join(dir, f)));
  t.deepEqual(p.crdFiles.value, ['kperturb-crd-memcacheds.cache.example.com.yaml']);
  const copy = p.extraFiles.find((f) => f.file === 'kperturb-crd-memcacheds.cache.example.com.yaml');
  t.regex(
    copy!.why,
    /config\/crd\/bases\/cache\.example\.com_memcacheds\.yaml with config\/crd\/patches\/size_removal\.yaml applied, as config\/crd\/kustomization\.yaml does/,
  );
  t.false(copy!.text.includes('size:'), copy!.text);
  t.true(copy!.text.includes('kind: CustomResourceDefinition'));
  // A patch that does not apply leaves the CRD as its file gives it.
  writeFileSync(join(dir, 'config', 'crd', 'patches', 'size_removal.yaml'), '- op: remove\n  path: /spec/versions/0/schema/nothing/here\n');
  t.deepEqual(proposeConfig(scanOperatorRepo(dir), (f) => existsSync(join(dir, f))).crdFiles.value, ['config/crd/bases/cache.example.com_memcacheds.yaml']);
  writeFileSync(
    join(dir, 'config', 'crd', 'patches', 'size_removal.yaml'),
    '- op: remove\n  path: /spec/versions/0/schema/openAPIV3Schema/properties/spec/properties/size\n',
  );
  const r = run(['init', dir, '--no-build']);
  t.is(r.status, 0, r.stderr);
  const config = loadConfig(join(dir, 'kperturb.yaml'));
  t.is(config.setup.filter((f) => f.endsWith('kperturb-crd-memcacheds.cache.example.com.yaml')).length, 1);
  t.true(existsSync(join(dir, 'kperturb-crd-memcacheds.cache.example.com.yaml')));
});

test("code that reads the pod's namespace file and its pod's name (percona's operators look their own Pod up at start) runs with controller.podNamespaceFile, HOSTNAME and a stand-in Pod", (t) => {
  const dir = copyFixture('memcached-operator');
  const plain = proposeConfig(scanOperatorRepo(dir), (p) => existsSync(join(dir, p)));
  t.is(plain.podNamespaceFile, undefined);
  t.false(plain.extraFiles.some((f) => f.file === 'kperturb-operator-pod.yaml'));
  // percona-server-mongodb-operator 54950f7e, psmdb_controller.go getOperatorPodImage.
  writeFileSync(
    join(dir, 'internal', 'operator_pod.go'),
    'package internal\n\nimport "os"\n\nfunc operatorPod() (string, string, error) {\n' +
      '\tns, err := os.ReadFile("/var/run/secrets/kubernetes.io/serviceaccount/namespace")\n\treturn string(ns), os.Getenv("HOSTNAME"), err\n}\n',
  );
  const p = proposeConfig(scanOperatorRepo(dir), (q) => existsSync(join(dir, q)));
  t.is(p.podNamespaceFile?.value, 'default');
  t.regex(p.podNamespaceFile!.why, /internal\/operator_pod\.go reads \/var\/run\/secrets\/kubernetes\.io\/serviceaccount\/namespace/);
  t.false(
    p.questions.some((q) => q.includes('serviceaccount')),
    p.questions.join('\n'),
  );
  t.deepEqual(p.env.find((e) => e.name === 'HOSTNAME')?.value, 'memcached-operator');
  const pod = p.extraFiles.find((f) => f.file === 'kperturb-operator-pod.yaml');
  t.deepEqual(
    pod?.text.split('\n').filter((l) => !l.startsWith('#')),
    [
      'apiVersion: v1',
      'kind: Pod',
      'metadata:',
      '  name: memcached-operator',
      '  namespace: default',
      '  labels:',
      '    app.kubernetes.io/managed-by: kperturb',
      'spec:',
      '  containers:',
      '    - name: manager',
      '      image: controller:latest',
      '  tolerations:',
      '    - key: node.kubernetes.io/not-ready',
      '      operator: Exists',
      '      effect: NoExecute',
      '    - key: node.kubernetes.io/unreachable',
      '      operator: Exists',
      '      effect: NoExecute',
      '',
    ],
  );
  const r = run(['init', dir, '--no-build']);
  t.is(r.status, 0, r.stderr);
  const config = loadConfig(join(dir, 'kperturb.yaml'));
  t.true(config.controller.podNamespaceFile);
  t.is(config.controller.namespace, 'default');
  t.is(config.controller.env.HOSTNAME, 'memcached-operator');
  t.true(config.setup[0]!.endsWith('kperturb-operator-pod.yaml'), config.setup.join(' '));
});

test('an operator that is not controller-runtime (spotahome/redis-operator): its out-of-cluster switch and kubeconfig flag set, its metrics address on a free port', (t) => {
  const dir = copyFixture('memcached-operator');
  // spotahome/redis-operator 6e08a312 cmd/utils/flags.go, with a Deployment that gives no args.
  writeFileSync(
    join(dir, 'cmd', 'main.go'),
    'package main\n\nimport (\n\t"flag"\n\t"net/http"\n)\n\nfunc main() {\n\tvar kubeconfig, listen string\n\tvar development bool\n' +
      '\tflag.StringVar(&kubeconfig, "kubeconfig", kubehome, "kubernetes configuration path, only used when development mode enabled")\n' +
      '\tflag.BoolVar(&development, "development", false, "development flag will allow to run the operator outside a kubernetes cluster")\n' +
      '\tflag.BoolVar(&debug, "debug", false, "enable debug mode")\n' +
      '\tflag.StringVar(&listen, "listen-address", ":9710", "Address to listen on for metrics.")\n' +
      '\tflag.StringVar(&path, "metrics-path", "/metrics", "Path to serve the metrics.")\n\tflag.Parse()\n\thttp.ListenAndServe(listen, nil)\n}\n',
  );
  rmSync(join(dir, 'internal'), { recursive: true });
  const manager = join(dir, 'config', 'manager', 'manager.yaml');
  editFile(manager, (text) => text.replace(/ {10}args: .*\n/, ''));
  const p = proposeConfig(scanOperatorRepo(dir), (q) => existsSync(join(dir, q)));
  t.deepEqual(p.args.value, ['--listen-address=127.0.0.1:0', '--development=true', '--kubeconfig=$(KUBECONFIG)']);
  t.regex(p.args.why, /--development=true: "development flag will allow to run the operator outside a kubernetes cluster"/);
  t.is(p.ports, undefined);
  const r = run(['init', dir, '--no-build']);
  t.is(r.status, 0, r.stderr);
  t.deepEqual(loadConfig(join(dir, 'kperturb.yaml')).controller.args, ['--listen-address=127.0.0.1:0', '--development=true', '--kubeconfig=$(KUBECONFIG)']);
});

test("leader election on by default (percona's operators: leader-elect defaults to true, the Deployment gives no flag) is turned off by its flag when the code names no namespace for it", (t) => {
  const dir = copyFixture('memcached-operator');
  const main = join(dir, 'cmd', 'main.go');
  editFile(main, (text) => text.replace(/^\s*LeaderElectionNamespace:.*$/m, '').replace('"leader-elect", false,', '"leader-elect", true,'));
  const manager = join(dir, 'config', 'manager', 'manager.yaml');
  editFile(manager, (text) => text.replace('args: [--leader-elect, ', 'args: ['));
  const p = proposeConfig(scanOperatorRepo(dir), (q) => existsSync(join(dir, q)));
  t.false(p.leaderElection);
  t.deepEqual(p.args.value, ['--health-probe-bind-address=0', '--metrics-bind-address=0', '--leader-elect=false']);
  t.regex(p.args.why, /leader election off/);
});

test('of several samples of a kind in one folder, the plain one (basic.yaml) is the seed, not the shortest name (spotahome/redis-operator: pmem.yaml needs a pmem-CSI class)', (t) => {
  const dir = copyFixture('memcached-operator');
  const sample = readFileSync(join(dir, 'config', 'samples', 'cache_v1alpha1_memcached.yaml'), 'utf8');
  rmSync(join(dir, 'config', 'samples'), { recursive: true });
  mkdirSync(join(dir, 'examples'));
  for (const name of ['pmem', 'basic', 'tolerations']) writeFileSync(join(dir, 'examples', `${name}.yaml`), sample.replace(/name: .*/, `name: ${name}`));
  t.deepEqual(proposeConfig(scanOperatorRepo(dir), (q) => existsSync(join(dir, q))).seeds.value, ['examples/basic.yaml']);
});

test("an environment variable the code reads as its kubeconfig path gets the proxy's kubeconfig (rabbitmq/cluster-operator: KUBE_CONFIG, else in-cluster)", (t) => {
  const dir = copyFixture('memcached-operator');
  const main = join(dir, 'cmd', 'main.go');
  editFile(main, (text) =>
    text.replace(
      'func main() {',
      'func kubeConfig() (*rest.Config, error) {\n\tif p := os.Getenv("KUBE_CONFIG"); p != "" {\n\t\treturn clientcmd.BuildConfigFromFlags("", p)\n\t}\n\treturn rest.InClusterConfig()\n}\n\nfunc main() {',
    ),
  );
  const p = proposeConfig(scanOperatorRepo(dir), (q) => existsSync(join(dir, q)));
  t.deepEqual(
    p.env.filter((e) => e.name === 'KUBE_CONFIG').map((e) => e.value),
    ['$(KUBECONFIG)'],
  );
  // Read elsewhere, without clientcmd in the file, the same name is left unset.
  editFile(main, (text) => text.replace(/func kubeConfig\(\)[\s\S]*?\n}\n\n/, 'var kubeConfigName = os.Getenv("KUBE_CONFIG")\n\n'));
  t.deepEqual(
    proposeConfig(scanOperatorRepo(dir), (q) => existsSync(join(dir, q))).env.filter((e) => e.name === 'KUBE_CONFIG'),
    [],
  );
});

test("a manager whose options name no metrics address serves controller-runtime's default :8080: a fixed port (percona-xtradb-cluster-operator)", (t) => {
  const dir = copyFixture('memcached-operator');
  const main = join(dir, 'cmd', 'main.go');
  editFile(main, (text) =>
    text
      .replace(/\tflag\.StringVar\(&metricsAddr, "metrics-bind-address"[^\n]*\n/, '')
      .replace(/\tflag\.StringVar\(&probeAddr, "health-probe-bind-address"[^\n]*\n/, '')
      .replace(/\t\tMetrics: [^\n]*\n/, '')
      .replace(/\t\tHealthProbeBindAddress: [^\n]*\n/, ''),
  );
  const p = proposeConfig(scanOperatorRepo(dir), (q) => existsSync(join(dir, q)));
  t.deepEqual(p.ports?.value, [8080]);
  t.regex(p.ports?.why ?? '', /controller-runtime's metrics default/);
  // With the address named in its options, nothing is fixed.
  editFile(main, (text) => text.replace('\t\tLeaderElection: ', '\t\tMetricsBindAddress: "0",\n\t\tLeaderElection: '));
  t.is(proposeConfig(scanOperatorRepo(dir), (q) => existsSync(join(dir, q))).ports, undefined);
});

test('the seed is the sample of the kind with the largest schema, also for v1beta1 CRDs that list their versions beside one schema (instaclustr cassandra-operator: a CassandraDataCenter, not a CassandraBackup)', (t) => {
  const dir = copyFixture('operator-sdk-legacy');
  writeFileSync(
    join(dir, 'deploy', 'crds', 'app.example.com_backups_crd.yaml'),
    'apiVersion: apiextensions.k8s.io/v1beta1\nkind: CustomResourceDefinition\nmetadata:\n  name: backups.app.example.com\nspec:\n  group: app.example.com\n' +
      '  names: { kind: Backup, listKind: BackupList, plural: backups, singular: backup }\n  scope: Namespaced\n  validation:\n    openAPIV3Schema:\n      type: object\n' +
      '  version: v1alpha1\n  versions:\n  - { name: v1alpha1, served: true, storage: true }\n',
  );
  writeFileSync(
    join(dir, 'deploy', 'crds', 'app.example.com_v1alpha1_backup_cr.yaml'),
    'apiVersion: app.example.com/v1alpha1\nkind: Backup\nmetadata: { name: a }\n',
  );
  editFile(join(dir, 'deploy', 'crds', 'app.example.com_things_crd.yaml'), (text) =>
    text.replace('  version: v1alpha1\n', '  version: v1alpha1\n  versions:\n  - { name: v1alpha1, served: true, storage: true }\n'),
  );
  const p = proposeConfig(scanOperatorRepo(dir), (q) => existsSync(join(dir, q)));
  t.deepEqual(p.seeds.value, ['deploy/crds/app.example.com_v1alpha1_thing_cr.yaml']);
});

test("a third-party Deployment the repository ships for its test clusters is not the operator's, even where the operator's own is only under docs/ (datastax/cass-operator)", (t) => {
  const dir = copyFixture('memcached-operator');
  mkdirSync(join(dir, 'docs'));
  const ours = readFileSync(join(dir, 'config', 'manager', 'manager.yaml'), 'utf8');
  writeFileSync(join(dir, 'docs', 'install.yaml'), ours.replace('name: controller-manager\n', 'name: memcached-operator\n'));
  rmSync(join(dir, 'config', 'manager', 'manager.yaml'));
  mkdirSync(join(dir, 'k8s-flavors', 'kind'), { recursive: true });
  writeFileSync(
    join(dir, 'k8s-flavors', 'kind', 'local-path-storage.yaml'),
    'apiVersion: apps/v1\nkind: Deployment\nmetadata: { name: local-path-provisioner, namespace: local-path-storage }\nspec:\n  template:\n    spec:\n      containers:\n' +
      '        - name: local-path-provisioner\n          image: rancher/local-path-provisioner:v0.0.12\n          command: [local-path-provisioner, --debug, start, --config, /etc/config/config.json]\n',
  );
  const p = proposeConfig(scanOperatorRepo(dir), (q) => existsSync(join(dir, q)));
  t.regex(p.args.why, /^from docs\/install\.yaml \(container manager\)/);
  t.false(p.args.value.includes('--debug'));
  // With only the third-party one (elastic/cloud-on-k8s: its own is a Helm-templated StatefulSet), init asks.
  rmSync(join(dir, 'docs', 'install.yaml'));
  const none = proposeConfig(scanOperatorRepo(dir), (q) => existsSync(join(dir, q)));
  t.false(none.args.value.includes('--debug'));
  t.true(none.questions.some((q) => q.startsWith('controller.args: no manager Deployment found')));
});

test("code that imports a ZooKeeper client talks to ZooKeeper (pravega's zookeeper-operator): a stub on every pod and Service with port 2181, and cluster names", (t) => {
  const dir = copyFixture('operator-sdk-legacy');
  writeFileSync(
    join(dir, 'pkg', 'controller', 'znode.go'),
    'package controller\n\nimport "github.com/samuel/go-zookeeper/zk"\n\nfunc connect(addr string) (*zk.Conn, error) {\n\tc, _, err := zk.Connect([]string{addr}, 0)\n\treturn c, err\n}\n',
  );
  const r = run(['init', dir, '--no-build']);
  t.is(r.status, 0, r.stderr);
  const config = loadConfig(join(dir, 'kperturb.yaml'));
  t.deepEqual(config.applications, [{ name: 'zookeeper', protocol: 'zookeeper', port: 2181, namespace: 'things', services: [], matchPort: true }]);
  t.true(config.controller.clusterDNS);
  t.regex(readFileSync(join(dir, 'kperturb.yaml'), 'utf8'), /pkg\/controller\/znode\.go imports github\.com\/samuel\/go-zookeeper\/zk/);
  // A test that imports it is not the operator talking to ZooKeeper.
  rmSync(join(dir, 'pkg', 'controller', 'znode.go'));
  mkdirSync(join(dir, 'test', 'e2e'), { recursive: true });
  writeFileSync(join(dir, 'test', 'e2e', 'zk.go'), 'package e2e\n\nimport _ "github.com/samuel/go-zookeeper/zk"\n');
  t.deepEqual(proposeIn(dir).applications, []);
});

test('a cobra root that only dispatches (elastic/cloud-on-k8s: `elastic-operator manager`) runs its manager subcommand, with flags named by constants read through them', (t) => {
  const dir = copyFixture('memcached-operator');
  const module = /^module\s+(\S+)/m.exec(readFileSync(join(dir, 'go.mod'), 'utf8'))![1]!;
  const main = join(dir, 'cmd', 'main.go');
  mkdirSync(join(dir, 'cmd', 'manager'));
  mkdirSync(join(dir, 'pkg', 'flags'), { recursive: true });
  writeFileSync(
    join(dir, 'pkg', 'flags', 'flags.go'),
    'package flags\n\nconst (\n\tMetricsPortFlag       = "metrics-port"\n\tOperatorNamespaceFlag = "operator-namespace"\n)\n',
  );
  // The manager command: the fixture's main as a cobra command whose flags are named by the constants.
  const manager = readFileSync(main, 'utf8')
    .replace(/^package main$/m, 'package manager')
    .replace(
      'func main() {',
      `func Command() *cobra.Command {\n\tcmd := &cobra.Command{\n\t\tUse:  "manager",\n\t\tRunE: run,\n\t}\n\tcmd.Flags().Int(\n\t\tflags.MetricsPortFlag,\n\t\t8080,\n\t\t"Port to use for exposing metrics (set 0 to disable)",\n\t)\n\tcmd.Flags().String(flags.OperatorNamespaceFlag, "", "Kubernetes namespace the operator runs in")\n\treturn cmd\n}\n\nfunc run(_ *cobra.Command, _ []string) error {`,
    )
    .replace('import (', `import (\n\t"github.com/spf13/cobra"\n\t"${module}/pkg/flags"`);
  writeFileSync(join(dir, 'cmd', 'manager', 'main.go'), manager);
  writeFileSync(
    main,
    `package main\n\nimport (\n\t"github.com/spf13/cobra"\n\n\t"${module}/cmd/manager"\n)\n\nfunc main() {\n\trootCmd := &cobra.Command{\n\t\tUse:          "memcached-operator",\n\t\tSilenceUsage: true,\n\t}\n\trootCmd.AddCommand(manager.Command())\n\t_ = rootCmd.Execute()\n}\n`,
  );
  rmSync(join(dir, 'config', 'manager', 'manager.yaml'));
  const p = proposeConfig(scanOperatorRepo(dir), (q) => existsSync(join(dir, q)));
  t.is(p.main?.value, './cmd');
  t.is(p.args.value[0], 'manager', 'the root command alone prints its usage and exits 0');
  t.true(p.args.value.includes('--metrics-port=0'), 'a listener flag named by a constant is turned off');
  t.true(p.args.value.includes('--operator-namespace=default'), "the operator's own namespace, which a pod gets from the downward API");
  t.regex(p.args.why, /manager: the subcommand that runs the operator \(cmd\/manager\/main\.go\)/);
  // A root that runs something itself is run as it is.
  editFile(main, (text) => text.replace('SilenceUsage: true,', 'SilenceUsage: true,\n\t\tRun:          func(*cobra.Command, []string) {},'));
  t.not(proposeConfig(scanOperatorRepo(dir), (q) => existsSync(join(dir, q))).args.value[0], 'manager');
});

test("the manager's Deployment as its kustomization builds it: a strategic merge patch's env merged in by name (cockroach-operator's RELATED_IMAGE_COCKROACH_*)", (t) => {
  const dir = copyFixture('memcached-operator');
  mkdirSync(join(dir, 'config', 'manager', 'patches'));
  writeFileSync(join(dir, 'config', 'manager', 'kustomization.yaml'), 'resources:\n- manager.yaml\npatchesStrategicMerge:\n- patches/image.yaml\n');
  writeFileSync(
    join(dir, 'config', 'manager', 'patches', 'image.yaml'),
    'apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: controller-manager\nspec:\n  template:\n    spec:\n      containers:\n' +
      '        - name: manager\n          env:\n            - name: RELATED_IMAGE_THING_v1\n              value: example/thing:v1\n            - name: WATCH_NAMESPACE\n              value: patched\n',
  );
  const p = proposeIn(dir);
  const env = Object.fromEntries(p.env.map((e) => [e.name, e.value]));
  t.is(env.RELATED_IMAGE_THING_v1, 'example/thing:v1');
  // Merged by name: the patch's value replaces the Deployment's.
  t.is(env.WATCH_NAMESPACE, 'patched');
  t.regex(p.env.find((e) => e.name === 'RELATED_IMAGE_THING_v1')!.why, /with config\/manager\/patches\/image\.yaml merged in, as kustomize builds it/);
  // The patch is not a Deployment of its own: the args are still the manager's.
  t.true(p.args.value.includes('--health-probe-bind-address=0'), p.args.value.join(' '));
});

test('admission webhook configurations the code names (cockroach-operator patches their caBundle at start) are set up, named by the kustomization that prefixes them, failurePolicy Ignore', (t) => {
  const dir = copyFixture('memcached-operator');
  mkdirSync(join(dir, 'config', 'webhook'));
  mkdirSync(join(dir, 'config', 'default'));
  writeFileSync(
    join(dir, 'config', 'webhook', 'manifests.yaml'),
    'apiVersion: admissionregistration.k8s.io/v1\nkind: MutatingWebhookConfiguration\nmetadata:\n  name: mutating-webhook-configuration\nwebhooks:\n' +
      '- admissionReviewVersions: [v1]\n  clientConfig:\n    service: { name: webhook-service, namespace: system, path: /mutate }\n  failurePolicy: Fail\n  name: m.example.com\n  sideEffects: None\n',
  );
  writeFileSync(join(dir, 'config', 'webhook', 'kustomization.yaml'), 'resources:\n- manifests.yaml\n');
  writeFileSync(join(dir, 'config', 'default', 'kustomization.yaml'), 'namePrefix: memcached-operator-\nresources:\n- ../manager\n- ../webhook\n');
  t.false(
    proposeIn(dir).extraFiles.some((f) => f.file === 'kperturb-webhook-configurations.yaml'),
    'not named by the code: not set up',
  );
  writeFileSync(
    join(dir, 'internal', 'controller', 'webhook_tls.go'),
    'package controller\n\nconst mutatingHookConfig = "memcached-operator-mutating-webhook-configuration"\n',
  );
  const p = proposeIn(dir);
  const file = p.extraFiles.find((f) => f.file === 'kperturb-webhook-configurations.yaml');
  t.truthy(file);
  t.regex(
    file!.why,
    /memcached-operator-mutating-webhook-configuration \(config\/webhook\/manifests\.yaml, named by config\/default\/kustomization\.yaml's namePrefix; internal\/controller\/webhook_tls\.go\)/,
  );
  const body = file!.text.split('\n').filter((l) => !l.startsWith('#'));
  t.true(body.includes('  name: memcached-operator-mutating-webhook-configuration'), body.join('\n'));
  t.true(body.includes('    failurePolicy: Ignore'), body.join('\n'));
  t.true(body.includes('        namespace: default'), body.join('\n'));
  const r = run(['init', dir, '--no-build']);
  t.is(r.status, 0, r.stderr);
  t.true(loadConfig(join(dir, 'kperturb.yaml')).setup.some((f) => f.endsWith('kperturb-webhook-configurations.yaml')));
});

test("a sample whose fields the CRD's schema prunes is passed over for one it keeps whole (cass-operator's config/samples: a pod template's containers beside its spec)", (t) => {
  const dir = copyFixture('memcached-operator');
  writeFileSync(
    join(dir, 'config', 'samples', 'cache_v1alpha1_memcached.yaml'),
    'apiVersion: cache.example.com/v1alpha1\nkind: Memcached\nmetadata:\n  name: memcached-sample\nspec:\n  size: 2\n  containers: []\n',
  );
  mkdirSync(join(dir, 'examples'));
  writeFileSync(
    join(dir, 'examples', 'memcached-full.yaml'),
    'apiVersion: cache.example.com/v1alpha1\nkind: Memcached\nmetadata:\n  name: full\nspec:\n  size: 3\n',
  );
  const p = proposeIn(dir);
  t.deepEqual(p.seeds.value, ['examples/memcached-full.yaml']);
  t.regex(p.seeds.why, /not config\/samples\/cache_v1alpha1_memcached\.yaml \(the CRD's schema prunes spec\.containers: the API server drops it on create/);
  // With nothing pruned the canonical place wins again.
  editFile(join(dir, 'config', 'samples', 'cache_v1alpha1_memcached.yaml'), (text) => text.replace('  containers: []\n', ''));
  t.deepEqual(proposeIn(dir).seeds.value, ['config/samples/cache_v1alpha1_memcached.yaml']);
});

test('a ConfigMap the seed names, declared in a file of the repository, is set up before it (OT-CONTAINER-KIT/redis-operator: redis-external-config)', (t) => {
  const dir = copyFixture('memcached-operator');
  writeFileSync(
    join(dir, 'config', 'crd', 'bases', 'cache.example.com_memcacheds.yaml'),
    readFileSync(join(dir, 'config', 'crd', 'bases', 'cache.example.com_memcacheds.yaml'), 'utf8').replace(
      '                size:\n',
      '                configName:\n                  type: string\n                size:\n',
    ),
  );
  editFile(join(dir, 'config', 'samples', 'cache_v1alpha1_memcached.yaml'), (text) => `${text}  configName: memcached-extra-config\n`);
  mkdirSync(join(dir, 'examples', 'extra'), { recursive: true });
  writeFileSync(
    join(dir, 'examples', 'extra', 'configmap.yaml'),
    'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: memcached-extra-config\ndata: { a: b }\n',
  );
  // A file with other kinds beside it is not set up whole.
  writeFileSync(
    join(dir, 'examples', 'both.yaml'),
    'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: memcached-extra-config\n---\napiVersion: v1\nkind: Pod\nmetadata:\n  name: p\n',
  );
  const p = proposeIn(dir);
  const file = p.extraFiles.find((f) => f.file === 'examples/extra/configmap.yaml');
  t.regex(file?.why ?? '', /config\/samples\/cache_v1alpha1_memcached\.yaml names memcached-extra-config, which this file declares/);
  t.false(p.extraFiles.some((f) => f.file === 'examples/both.yaml'));
  const r = run(['init', dir, '--no-build']);
  t.is(r.status, 0, r.stderr);
  const config = loadConfig(join(dir, 'kperturb.yaml'));
  t.true(
    config.setup.some((f) => f.endsWith('examples/extra/configmap.yaml')),
    config.setup.join(' '),
  );
  // init does not rewrite the repository's own file.
  t.is(readFileSync(join(dir, 'examples', 'extra', 'configmap.yaml'), 'utf8').split('\n')[0], 'apiVersion: v1');
});

test("options read from the component config init passes (cass-operator: options.AndFrom(ctrl.ConfigFile())) bind no fixed metrics port: init's copy turns it off", (t) => {
  const dir = copyFixture('memcached-operator');
  const main = join(dir, 'cmd', 'main.go');
  editFile(main, (text) =>
    text
      .replace(/\tflag\.StringVar\(&metricsAddr, "metrics-bind-address"[^\n]*\n/, '\tvar configFile string\n\tflag.StringVar(&configFile, "config", "", "")\n')
      .replace(/\tflag\.StringVar\(&probeAddr, "health-probe-bind-address"[^\n]*\n/, '')
      .replace(/\t\tMetrics: [^\n]*\n/, '')
      .replace(/\t\tHealthProbeBindAddress: [^\n]*\n/, ''),
  );
  t.deepEqual(proposeIn(dir).ports?.value, [8080], 'without a component config, the default port');
  writeFileSync(
    join(dir, 'config', 'manager', 'controller_manager_config.yaml'),
    'apiVersion: config.example.com/v1beta1\nkind: OperatorConfig\nhealth:\n  healthProbeBindAddress: :8081\nmetrics:\n  bindAddress: 127.0.0.1:8080\n',
  );
  const p = proposeIn(dir);
  t.true(p.args.value.includes('--config=kperturb-manager-config.yaml'));
  t.is(p.ports, undefined);
});

test('validating webhooks the manager registers run (controller.webhookServer): the component config turns them on, the configurations are set up; a mutating one keeps them off', (t) => {
  // cass-operator's layout: webhook.port and disableWebhooks in the component config, the configurations in config/webhook/manifests.yaml.
  const dir = copyFixture('memcached-operator');
  const main = join(dir, 'cmd', 'main.go');
  editFile(main, (text) =>
    text
      .replace('func main() {', 'func main() {\n\tvar configFile string\n\tflag.StringVar(&configFile, "config", "", "")\n')
      .replace('\tmgr, err := ctrl.NewManager(', '\t_ = (&Thing{}).SetupWebhookWithManager(nil)\n\tmgr, err := ctrl.NewManager('),
  );
  writeFileSync(
    join(dir, 'config', 'manager', 'controller_manager_config.yaml'),
    'apiVersion: config.example.com/v1beta1\nkind: OperatorConfig\nmetrics:\n  bindAddress: 127.0.0.1:8080\nwebhook:\n  port: 9444\ndisableWebhooks: true\n',
  );
  mkdirSync(join(dir, 'config', 'webhook'));
  const validating =
    'apiVersion: admissionregistration.k8s.io/v1\nkind: ValidatingWebhookConfiguration\nmetadata:\n  name: validating-webhook-configuration\nwebhooks:\n' +
    '- admissionReviewVersions: [v1]\n  clientConfig:\n    service: { name: webhook-service, namespace: system, path: /validate }\n  failurePolicy: Fail\n  name: v.example.com\n  sideEffects: None\n';
  writeFileSync(join(dir, 'config', 'webhook', 'manifests.yaml'), validating);
  const p = proposeIn(dir);
  t.deepEqual(p.webhookServer?.value, { port: 9444 });
  t.regex(
    p.webhookServer!.why,
    /config\/webhook\/manifests\.yaml declares validating ones.*port 9444: config\/manager\/controller_manager_config\.yaml's webhook\.port/,
  );
  const copy = p.extraFiles
    .find((f) => f.controller)!
    .text.split('\n')
    .filter((l) => !l.startsWith('#'));
  t.true(copy.includes('disableWebhooks: false'), copy.join('\n'));
  t.true(copy.includes('  host: 127.0.0.1'), copy.join('\n'));
  const r = run(['init', dir, '--no-build']);
  t.is(r.status, 0, r.stderr);
  const config = loadConfig(join(dir, 'kperturb.yaml'));
  t.deepEqual(config.controller.webhookServer, { port: 9444 });
  t.true(config.controller.ports.includes(9444), 'the port is locked as controller.ports are');
  t.true(config.setup.some((f) => f.endsWith(join('config', 'webhook', 'manifests.yaml'))));

  // A manager that registers webhooks it makes itself (percona's: GetWebhookServer().Register) is left as before.
  editFile(main, (text) => text.replace('(&Thing{}).SetupWebhookWithManager(nil)', 'mgr.GetWebhookServer()'));
  t.is(proposeIn(dir).webhookServer, undefined);
  editFile(main, (text) => text.replace('mgr.GetWebhookServer()', '(&Thing{}).SetupWebhookWithManager(nil)'));
  // The embedded cluster calls no mutating webhook: with one, the webhooks stay off as before.
  writeFileSync(
    join(dir, 'config', 'webhook', 'manifests.yaml'),
    `${validating}---\n${validating.replace(/Validating/g, 'Mutating').replace('validating-', 'mutating-')}`,
  );
  const q = proposeIn(dir);
  t.is(q.webhookServer, undefined);
  t.true(q.extraFiles.find((f) => f.controller)!.text.includes('disableWebhooks: true'));
});

test("a manager that registers admission webhooks on a literal Port binds it at start (cockroach-operator's :9443): a fixed port, runs take turns", (t) => {
  const dir = copyFixture('memcached-operator');
  const main = join(dir, 'cmd', 'main.go');
  editFile(main, (text) => text.replace('\t\tLeaderElection: ', '\t\tPort:                    9443,\n\t\tLeaderElection: '));
  t.is(proposeIn(dir).ports, undefined, 'no webhook registered: the server never starts');
  editFile(main, (text) => text.replace('\tmgr, err := ctrl.NewManager(', '\t_ = (&Thing{}).SetupWebhookWithManager(nil)\n\tmgr, err := ctrl.NewManager('));
  const p = proposeIn(dir);
  t.deepEqual(p.ports?.value, [9443]);
  t.regex(p.ports!.why, /:9443 \(its admission webhook server: Port: 9443, and the package registers webhooks\)/);
});
