/**
 * What a user does by hand: `kperturb cluster`, `kperturb proxy` in front of it, and kubectl through
 * the proxy. Both commands must stop cleanly on SIGINT, and the trace must hold kubectl's requests.
 */
import test from 'ava';
import { spawn, spawnSync } from 'node:child_process';
import { readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { sharedScratchDir } from '../_scratch-dir.js';

const CLI = fileURLToPath(new URL('../../../bin/kperturb.js', import.meta.url));
const KUBECTL = process.env.KUBECTL ?? 'kubectl';

function start(args: string[]) {
  const child = spawn(process.execPath, [CLI, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  let err = '';
  child.stderr!.on('data', (c) => (err += c));
  // 'close', not 'exit': only then has all of stderr been read (a loaded machine shows the difference).
  const exited = new Promise<number | null>((r) => child.on('close', (code) => r(code)));
  return { child, stderr: () => err, exited };
}

/** Resolves when the child's stderr holds `marker` (or rejects when it exits first): no polling. */
function stderrHolds(proc: ReturnType<typeof start>, marker: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const check = () => {
      if (proc.stderr().includes(marker)) resolve();
    };
    proc.child.stderr!.on('data', check);
    check();
    void proc.exited.then((code) => reject(new Error(`exited (${code}) before "${marker}": ${proc.stderr()}`)));
  });
}

test('kubectl works through `kperturb proxy` in front of `kperturb cluster`, and both stop on SIGINT', async (t) => {
  const version = spawnSync(KUBECTL, ['version', '--client'], { encoding: 'utf8' });
  if (version.error) t.fail(`kubectl is needed for this test (set KUBECTL or install kubernetes-client): ${version.error.message}`);
  const dir = sharedScratchDir('kperturb-cli-');
  const clusterKc = join(dir, 'cluster.kubeconfig');
  const proxyKc = join(dir, 'proxy.kubeconfig');
  const trace = join(dir, 'trace.jsonl');

  // A kubeconfig of the user's is there already: kperturb adds its context and keeps the others.
  writeFileSync(
    clusterKc,
    'apiVersion: v1\nkind: Config\nclusters: [{name: prod, cluster: {server: "https://prod.example:6443"}}]\nusers: [{name: admin, user: {token: prod-token}}]\ncontexts: [{name: prod, context: {cluster: prod, user: admin}}]\ncurrent-context: prod\n',
    { mode: 0o644 },
  );

  const cluster = start(['cluster', '--kubeconfig-out', clusterKc]);
  t.teardown(() => cluster.child.kill('SIGKILL'));
  // The kubeconfig is written before the server says it listens: wait for that line, however long a loaded machine takes.
  await stderrHolds(cluster, 'listening');
  t.is(statSync(clusterKc).mode & 0o777, 0o600, 'the cluster kubeconfig holds its token: 0600');
  const contexts = spawnSync(KUBECTL, ['--kubeconfig', clusterKc, 'config', 'get-contexts', '-o', 'name'], { encoding: 'utf8' });
  t.deepEqual(contexts.stdout.trim().split('\n').sort(), ['kperturb-embedded', 'prod'], contexts.stderr);
  const server = /server: (http:\/\/127\.0\.0\.1:\d+)/.exec(readFileSync(clusterKc, 'utf8'))![1]!;
  t.is((await fetch(`${server}/api/v1/namespaces/default/secrets`)).status, 401, 'no token, no answer');
  const proxy = start(['proxy', '--upstream-kubeconfig', clusterKc, '--kubeconfig-out', proxyKc, '--trace', trace]);
  t.teardown(() => proxy.child.kill('SIGKILL'));
  await stderrHolds(proxy, 'proxy listening');
  t.is(statSync(proxyKc).mode & 0o777, 0o600, 'the proxy kubeconfig holds its token: 0600');

  const manifest = JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'through-proxy', namespace: 'default' }, data: { a: '1' } });
  const apply = spawnSync(KUBECTL, ['--kubeconfig', proxyKc, 'apply', '--validate=false', '-f', '-'], { input: manifest, encoding: 'utf8' });
  t.is(apply.status, 0, apply.stderr);
  const get = spawnSync(KUBECTL, ['--kubeconfig', clusterKc, 'get', 'configmap', 'through-proxy', '-o', 'jsonpath={.data.a}'], { encoding: 'utf8' });
  t.is(get.stdout, '1', get.stderr);

  proxy.child.kill('SIGINT');
  cluster.child.kill('SIGINT');
  t.is(await proxy.exited, 0, proxy.stderr());
  t.is(await cluster.exited, 0, cluster.stderr());
  const events = readFileSync(trace, 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as { type: string; verb?: string; key?: string });
  t.true(
    events.some((e) => e.type === 'request' && e.verb === 'create' && e.key === 'ConfigMap/default/through-proxy'),
    "the trace holds kubectl's create",
  );
});

test('`--kubeconfig-out` onto a file that is not a kubeconfig exits 2 naming it and leaves it alone', async (t) => {
  const dir = sharedScratchDir('kperturb-cli-');
  const notes = join(dir, 'notes.txt');
  writeFileSync(notes, 'my notes: [not yaml\n');
  const cluster = start(['cluster', '--kubeconfig-out', notes]);
  t.teardown(() => cluster.child.kill('SIGKILL'));
  t.is(await cluster.exited, 2, cluster.stderr());
  t.true(cluster.stderr().includes(notes), cluster.stderr());
  t.notRegex(cluster.stderr(), /\n\s+at /, 'no stack trace');
  t.is(readFileSync(notes, 'utf8'), 'my notes: [not yaml\n');
});

test('`kperturb proxy` honours KUBECONFIG (a path list) and --context as kubectl does', async (t) => {
  const dir = sharedScratchDir('kperturb-cli-');
  const clusterKc = join(dir, 'cluster.kubeconfig');
  // The first file of the list sets the current context: a cluster nobody answers for.
  const first = join(dir, 'first.kubeconfig');
  writeFileSync(
    first,
    'apiVersion: v1\nkind: Config\nclusters: [{name: gone, cluster: {server: "http://127.0.0.1:9"}}]\nusers: [{name: gone, user: {token: x}}]\ncontexts: [{name: gone, context: {cluster: gone, user: gone}}]\ncurrent-context: gone\n',
  );
  const cluster = start(['cluster', '--kubeconfig-out', clusterKc]);
  t.teardown(() => cluster.child.kill('SIGKILL'));
  await stderrHolds(cluster, 'listening');
  const env = { ...process.env, KUBECONFIG: `${join(dir, 'missing')}:${first}:${clusterKc}` };
  const startWith = (args: string[]) => {
    const child = spawn(process.execPath, [CLI, 'proxy', ...args], { stdio: ['ignore', 'pipe', 'pipe'], env });
    let err = '';
    child.stderr!.on('data', (c) => (err += c));
    return { child, stderr: () => err, exited: new Promise<number | null>((r) => child.on('close', (code) => r(code))) };
  };

  const current = startWith([]);
  t.is(await current.exited, 2, "the current context of the merged list is the first file's, which does not answer");
  t.true(current.stderr().includes('KUBECONFIG ('), current.stderr());
  const unknown = startWith(['--context', 'nope']);
  t.is(await unknown.exited, 2);
  t.true(unknown.stderr().includes('a context named "nope" (--context); it has "gone", "kperturb-embedded"'), unknown.stderr());

  const proxyKc = join(dir, 'proxy.kubeconfig');
  const chosen = startWith(['--context', 'kperturb-embedded', '--kubeconfig-out', proxyKc]);
  t.teardown(() => chosen.child.kill('SIGKILL'));
  await stderrHolds(chosen, 'proxy listening');
  const manifest = JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'via-context', namespace: 'default' } });
  const apply = spawnSync(KUBECTL, ['--kubeconfig', proxyKc, 'apply', '--validate=false', '-f', '-'], { input: manifest, encoding: 'utf8' });
  t.is(apply.status, 0, apply.stderr);
  chosen.child.kill('SIGINT');
  cluster.child.kill('SIGINT');
  t.is(await chosen.exited, 0, chosen.stderr());
  t.is(await cluster.exited, 0, cluster.stderr());
});

test('`kperturb proxy --port` that another program listens on exits 2 naming the option', async (t) => {
  const dir = sharedScratchDir('kperturb-cli-');
  const clusterKc = join(dir, 'cluster.kubeconfig');
  const cluster = start(['cluster', '--kubeconfig-out', clusterKc]);
  t.teardown(() => cluster.child.kill('SIGKILL'));
  await stderrHolds(cluster, 'listening');
  // The cluster's own port: taken, and the upstream answers, so the proxy gets as far as listening.
  const port = /server: http:\/\/127\.0\.0\.1:(\d+)/.exec(readFileSync(clusterKc, 'utf8'))![1]!;
  const proxy = start(['proxy', '--upstream-kubeconfig', clusterKc, '--port', port]);
  t.teardown(() => proxy.child.kill('SIGKILL'));
  t.is(await proxy.exited, 2, proxy.stderr());
  t.is(
    proxy.stderr(),
    `kperturb: at --port: a port no other program listens on (127.0.0.1:${port} is in use: stop what listens there, or leave --port out for a free port) [KP_E_INPUT]\n`,
  );
});
