/**
 * `--kubeconfig-out`: the kubeconfig of a server kperturb started is written 0600, and merged into a
 * kubeconfig that is there already (as kind does) instead of destroying its other contexts.
 */
import { chmodSync, readFileSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import test, { type ExecutionContext } from 'ava';
import { KubeConfig } from '@kubernetes/client-node';
import { parse } from 'yaml';
import { kubeconfigYaml, writeKubeconfigFile } from '../../src/kube/kubeconfig.js';
import { UserInputError } from '../../src/model/errors.js';
import { scratchDir } from '../_scratch-dir.js';

function tempDir(t: ExecutionContext): string {
  return scratchDir(t, 'kperturb-kubeconfig-');
}

const mode = (file: string) => statSync(file).mode & 0o777;

const OTHER = `# my clusters
apiVersion: v1
kind: Config
clusters:
  - name: prod
    cluster:
      server: https://prod.example:6443
users:
  - name: admin
    user:
      token: prod-token # keep me
contexts:
  - name: prod
    context:
      cluster: prod
      user: admin
current-context: prod
preferences: {}
`;

test('a new file is written 0600', (t) => {
  const file = join(tempDir(t), 'kc');
  writeKubeconfigFile(file, kubeconfigYaml('http://127.0.0.1:1', { name: 'kperturb-embedded', token: 't1' }));
  t.is(mode(file), 0o600);
  const kc = new KubeConfig();
  kc.loadFromFile(file);
  t.is(kc.getCurrentUser()?.token, 't1');
});

test('a file that exists with mode 0644 (a kubeconfig kperturb wrote before) ends up 0600 with the new server', (t) => {
  const dir = tempDir(t);
  const file = join(dir, 'kc');
  writeFileSync(file, kubeconfigYaml('http://127.0.0.1:1', { name: 'kperturb-embedded', token: 'old' }));
  chmodSync(file, 0o644);
  writeKubeconfigFile(file, kubeconfigYaml('http://127.0.0.1:2', { name: 'kperturb-embedded', token: 'new' }));
  t.is(mode(file), 0o600);
  const doc = parse(readFileSync(file, 'utf8')) as {
    clusters: Array<{ cluster: { server: string } }>;
    users: Array<{ user: { token: string } }>;
    contexts: unknown[];
  };
  t.deepEqual(
    doc.clusters.map((c) => c.cluster.server),
    ['http://127.0.0.1:2'],
    'replaced, not added',
  );
  t.deepEqual(
    doc.users.map((u) => u.user.token),
    ['new'],
  );
  t.is(doc.contexts.length, 1);
  t.deepEqual(readdirSync(dir), ['kc'], 'no temp file left');
});

test('another kubeconfig keeps its clusters, users, contexts and comments; ours is added and made current', (t) => {
  const file = join(tempDir(t), 'config');
  writeFileSync(file, OTHER);
  writeKubeconfigFile(file, kubeconfigYaml('http://127.0.0.1:3', { name: 'kperturb-embedded', token: 'mine' }));
  writeKubeconfigFile(file, kubeconfigYaml('http://127.0.0.1:4', { name: 'kperturb-embedded', token: 'mine2' }));
  const text = readFileSync(file, 'utf8');
  t.regex(text, /# my clusters/);
  t.regex(text, /prod-token # keep me/);
  const kc = new KubeConfig();
  kc.loadFromFile(file);
  t.deepEqual(
    kc.getContexts().map((c) => c.name),
    ['prod', 'kperturb-embedded'],
  );
  t.deepEqual(
    kc.getClusters().map((c) => c.server),
    ['https://prod.example:6443', 'http://127.0.0.1:4'],
  );
  t.deepEqual(
    kc.getUsers().map((u) => u.token),
    ['prod-token', 'mine2'],
  );
  t.is(kc.getCurrentContext(), 'kperturb-embedded');
  t.is(mode(file), 0o600);
});

test('a file that is not a kubeconfig is refused, named, and left as it was', (t) => {
  const dir = tempDir(t);
  const cases: Array<[string, string]> = [
    ['notes.txt', 'just some notes: [unclosed\n'],
    ['pod.yaml', 'apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\n'],
    ['list.yaml', '- a\n- b\n'],
    ['bad-clusters.yaml', 'apiVersion: v1\nkind: Config\nclusters: {}\n'],
  ];
  for (const [name, content] of cases) {
    const file = join(dir, name);
    writeFileSync(file, content);
    const err = t.throws(() => writeKubeconfigFile(file, kubeconfigYaml('http://127.0.0.1:5', { name: 'kperturb-embedded' })), { instanceOf: UserInputError });
    t.true(err!.message.startsWith(file), err!.message);
    t.regex(err!.message, /not changed/);
    t.is(readFileSync(file, 'utf8'), content);
  }
});
