/**
 * The real control plane itself: it starts, serves the version it was built from, authenticates,
 * runs kube-controller-manager, stops every process it started, and every start is a fresh cluster
 * (the isolation between plans on the real tier).
 */
import test from 'ava';
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { KubeClient } from '../../src/kube/client.js';
import { SetupError } from '../../src/model/errors.js';
import { startRealControlPlane, type RealControlPlane } from '../../src/realcluster/index.js';
import { eventually, processExists } from './_helpers.js';

const KUBE_GO_MOD = fileURLToPath(new URL('../../../realcp/kube/go.mod', import.meta.url));
const builtVersion = /^\s*(?:require\s+)?k8s\.io\/kubernetes (v\S+)/m.exec(readFileSync(KUBE_GO_MOD, 'utf8'))?.[1];

function describeStart(cp: RealControlPlane): string {
  const s = cp.startTimes;
  return `started in ${s.total} ms (credentials ${s.credentials}, etcd ${s.etcd}, kube-apiserver ${s.apiserver}, kube-controller-manager ${s.controllerManager})`;
}

test.serial('starts on loopback with TLS and token auth, runs kube-controller-manager, and stop() ends every process', async (t) => {
  const cp = await startRealControlPlane();
  t.teardown(() => cp.stop());
  t.log(describeStart(cp));
  t.regex(cp.url, /^https:\/\/127\.0\.0\.1:\d+$/);

  const client = new KubeClient(cp.url, cp.clientOptions());
  t.teardown(() => client.close());
  const version = await client.request('GET', '/version');
  t.is(version.status, 200);
  t.regex(builtVersion ?? '', /^v1\.\d+\.\d+$/, `the version required in ${KUBE_GO_MOD}`);
  t.like(version.body, { gitVersion: builtVersion, major: '1' });
  t.is((await client.request('GET', '/readyz')).body, 'ok');

  // A wrong token is rejected: authentication is on.
  const stranger = new KubeClient(cp.url, { caPem: cp.caPem, token: 'not-the-token' });
  t.teardown(() => stranger.close());
  t.is((await stranger.request('GET', '/api/v1/namespaces')).status, 401);

  // kube-controller-manager's root-ca-cert-publisher and serviceaccount controllers ran.
  const rootCa = await eventually('the root-ca-cert-publisher creates default/kube-root-ca.crt', 30_000, async () => {
    const res = await client.request('GET', '/api/v1/namespaces/default/configmaps/kube-root-ca.crt');
    return res.status === 200 ? (res.body as { data: Record<string, string> }) : undefined;
  });
  t.is(rootCa.data['ca.crt'], cp.caPem);
  await eventually('the serviceaccount controller creates kube-system/default', 30_000, async () =>
    (await client.request('GET', '/api/v1/namespaces/kube-system/serviceaccounts/default')).status === 200 ? true : undefined,
  );

  const pids = [cp.pids.etcd, cp.pids.apiserver, cp.pids.controllerManager];
  t.true(pids.every((pid) => pid !== undefined && processExists(pid)));
  t.true(existsSync(cp.workDir));
  await cp.stop();
  t.deepEqual(
    pids.filter((pid) => processExists(pid!)),
    [],
    'every component process has ended',
  );
  t.false(existsSync(cp.workDir), 'the working directory (etcd data, credentials) is deleted');
  await cp.stop(); // idempotent
});

test.serial('every start is a fresh cluster: nothing written before survives into the next control plane', async (t) => {
  const first = await startRealControlPlane();
  t.teardown(() => first.stop());
  t.log(`first: ${describeStart(first)}`);
  const client1 = new KubeClient(first.url, first.clientOptions());
  const created = await client1.request('POST', '/api/v1/namespaces/default/configmaps', { body: { metadata: { name: 'left-behind' }, data: { a: '1' } } });
  t.is(created.status, 201);
  const defaultNs1 = (await client1.request('GET', '/api/v1/namespaces/default')).body as { metadata: { uid: string } };
  client1.close();
  await first.stop();

  const second = await startRealControlPlane();
  t.teardown(() => second.stop());
  t.log(`second: ${describeStart(second)}`);
  const client2 = new KubeClient(second.url, second.clientOptions());
  t.teardown(() => client2.close());
  t.is((await client2.request('GET', '/api/v1/namespaces/default/configmaps/left-behind')).status, 404);
  const defaultNs2 = (await client2.request('GET', '/api/v1/namespaces/default')).body as { metadata: { uid: string } };
  t.not(defaultNs2.metadata.uid, defaultNs1.metadata.uid, 'the default namespace is a new object');
  t.not(second.caPem, first.caPem, 'new credentials');
  t.not(second.workDir, first.workDir);
});

test.serial('a component that fails to start is reported with its log, and the others are stopped', async (t) => {
  let etcdPid: number | undefined;
  const err = await t.throwsAsync(
    startRealControlPlane({
      controllerManager: false,
      extraArgs: { apiserver: ['--no-such-flag=1'] },
      log: (line) => {
        const m = /etcd ready .*pid (\d+)/.exec(line);
        if (m) etcdPid = Number(m[1]);
      },
    }),
    { instanceOf: SetupError },
  );
  t.regex(err!.message, /kube-apiserver exited with code \d+ during start-up/);
  t.regex(err!.message, /unknown flag: --no-such-flag/);
  t.truthy(etcdPid);
  t.false(processExists(etcdPid!), 'etcd, started before the failure, has been stopped');
});
