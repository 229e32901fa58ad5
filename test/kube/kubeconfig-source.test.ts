import test from 'ava';
import { writeFileSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import { kubeconfigSource, loadKubeconfig } from '../../src/kube/kubeconfig-source.js';
import { UserInputError } from '../../src/model/errors.js';
import { sharedScratchDir } from '../_scratch-dir.js';

const kubeconfig = (contexts: Array<{ name: string; server: string }>, current?: string) =>
  [
    'apiVersion: v1',
    'kind: Config',
    `clusters: [${contexts.map((c) => `{name: ${c.name}, cluster: {server: "${c.server}"}}`).join(', ')}]`,
    `users: [${contexts.map((c) => `{name: ${c.name}, user: {token: t-${c.name}}}`).join(', ')}]`,
    `contexts: [${contexts.map((c) => `{name: ${c.name}, context: {cluster: ${c.name}, user: ${c.name}}}`).join(', ')}]`,
    ...(current ? [`current-context: ${current}`] : []),
  ].join('\n') + '\n';

function files() {
  const dir = sharedScratchDir('kperturb-kcsrc-');
  const a = join(dir, 'a');
  const b = join(dir, 'b');
  writeFileSync(
    a,
    kubeconfig([
      { name: 'shared', server: 'https://a.example' },
      { name: 'only-a', server: 'https://only-a.example' },
    ]),
  );
  writeFileSync(
    b,
    kubeconfig(
      [
        { name: 'shared', server: 'https://b.example' },
        { name: 'only-b', server: 'https://only-b.example' },
      ],
      'only-b',
    ),
  );
  return { dir, a, b };
}

test("kubectl's precedence: --kubeconfig, else $KUBECONFIG (a path list), else ~/.kube/config", (t) => {
  const { a, b } = files();
  t.deepEqual(kubeconfigSource({ kubeconfig: a }, { KUBECONFIG: b }, '/home/u').files, [a]);
  t.deepEqual(kubeconfigSource({}, { KUBECONFIG: `${a}${delimiter}${delimiter}${b}` }, '/home/u').files, [a, b], 'empty entries are ignored');
  t.deepEqual(kubeconfigSource({}, {}, '/home/u').files, ['/home/u/.kube/config']);
  t.is(kubeconfigSource({ context: 'x' }, {}, '/home/u').context, 'x');
});

test('a KUBECONFIG list merges: the first file to set a name or the current context wins; missing files are skipped', async (t) => {
  const { dir, a, b } = files();
  const kc = await loadKubeconfig(kubeconfigSource({}, { KUBECONFIG: [join(dir, 'missing'), a, b].join(delimiter) }));
  t.is(kc.getCluster('shared')!.server, 'https://a.example', 'a (first) sets "shared"');
  t.truthy(kc.getCluster('only-b'), 'b adds its own names');
  t.is(kc.currentContext, 'only-b', 'a sets no current context, b does');
  t.is(kc.getCurrentCluster()!.server, 'https://only-b.example');
});

test('--context picks a context of the merged files; an unknown one is bad input naming the source and the known contexts', async (t) => {
  const { a, b } = files();
  const env = { KUBECONFIG: `${a}${delimiter}${b}` };
  t.is((await loadKubeconfig(kubeconfigSource({ context: 'only-a' }, env))).getCurrentCluster()!.server, 'https://only-a.example');
  const err = await t.throwsAsync(() => loadKubeconfig(kubeconfigSource({ context: 'nope' }, env)));
  t.true(err instanceof UserInputError);
  t.true(
    err!.message.includes(`KUBECONFIG (${a}${delimiter}${b}) at contexts: a context named "nope" (--context); it has "shared", "only-a", "only-b"`),
    err!.message,
  );
});

test('a list none of whose files exist, and a single --kubeconfig that does not exist, are bad input', async (t) => {
  const { dir } = files();
  t.true(
    (await t.throwsAsync(() => loadKubeconfig(kubeconfigSource({}, { KUBECONFIG: `${join(dir, 'x')}${delimiter}${join(dir, 'y')}` }))))!.message.includes(
      'none of the list exists',
    ),
  );
  t.true(
    (await t.throwsAsync(() => loadKubeconfig(kubeconfigSource({ kubeconfig: join(dir, 'x') }, {}))))!.message.includes(
      `${join(dir, 'x')}: a readable kubeconfig`,
    ),
  );
});
