/**
 * The embedded cluster serves only clients with its bearer token (written into its kubeconfig), as
 * kube-apiserver would with anonymous access limited to system:public-info-viewer: /healthz, /livez,
 * /readyz and /version answer anyone without a token. `insecureNoAuth` serves everyone.
 */
import http from 'node:http';
import test from 'ava';
import * as k8s from '@kubernetes/client-node';
import { EmbeddedCluster } from '../../src/cluster/index.js';
import { KubeClient } from '../../src/kube/client.js';
import { raw, startCluster } from './helpers.js';

const UNAUTHORIZED = { kind: 'Status', apiVersion: 'v1', status: 'Failure', reason: 'Unauthorized', code: 401 };

test('without the token, or with a wrong one, every API request gets the 401 Status', async (t) => {
  const { cluster } = await startCluster(t);
  t.regex(cluster.token ?? '', /^[0-9a-f]{64}$/);
  for (const authorization of [undefined, 'Bearer wrong', `Bearer ${cluster.token}x`, `Basic ${cluster.token}`]) {
    for (const [method, path, body] of [
      ['GET', '/api/v1/namespaces/default/secrets'],
      ['POST', '/api/v1/namespaces/default/configmaps', '{"metadata":{"name":"x"}}'],
      ['GET', '/api'],
      ['GET', '/apis'],
      ['GET', '/openapi/v2'],
    ] as const) {
      const res = await fetch(cluster.url + path, {
        method,
        ...(body ? { body } : {}),
        headers: { 'content-type': 'application/json', ...(authorization ? { authorization } : {}) },
      });
      t.is(res.status, 401, `${method} ${path} with ${authorization ?? 'no token'}`);
      t.like(await res.json(), UNAUTHORIZED);
    }
  }
  t.is((await raw(cluster, 'GET', '/api/v1/namespaces/default/configmaps/x')).status, 404, 'the token passes; the refused POSTs created nothing');
});

test('/healthz, /livez, /readyz and /version answer without a token (but not with a wrong one)', async (t) => {
  const { cluster } = await startCluster(t);
  for (const path of ['/healthz', '/livez', '/readyz', '/version', '/version/']) {
    const res = await fetch(cluster.url + path);
    t.is(res.status, 200, path);
    t.is((await fetch(cluster.url + path, { headers: { authorization: 'Bearer wrong' } })).status, 401, `${path} with a wrong token`);
  }
});

test('upgrades (exec) without the token get 401 before anything is upgraded', async (t) => {
  const { cluster } = await startCluster(t);
  const u = new URL(cluster.url);
  const status = await new Promise<number>((resolve, reject) => {
    const req = http.request({
      hostname: u.hostname,
      port: u.port,
      method: 'POST',
      path: '/api/v1/namespaces/default/pods/p/exec?command=true&stdout=true',
      headers: { connection: 'Upgrade', upgrade: 'SPDY/3.1', 'x-stream-protocol-version': 'v4.channel.k8s.io' },
      agent: false,
    });
    req.on('upgrade', (_res, socket) => {
      socket.destroy();
      resolve(101);
    });
    req.on('response', (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.on('error', reject);
    req.end();
  });
  t.is(status, 401);
});

test("the kubeconfig and clientOptions() carry the token: client-node and kperturb's own client work", async (t) => {
  const { cluster, core } = await startCluster(t);
  await core.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'via-kubeconfig' } } });
  const client = new KubeClient(cluster.url, cluster.clientOptions());
  t.teardown(() => client.close());
  t.is((await client.request('GET', '/api/v1/namespaces/default/configmaps/via-kubeconfig')).status, 200);
  const anonymous = new KubeClient(cluster.url);
  t.teardown(() => anonymous.close());
  t.is((await anonymous.request('GET', '/api/v1/namespaces/default/configmaps/via-kubeconfig')).status, 401);
});

test('the simulated controllers (API clients of the cluster) get the token too', async (t) => {
  const cluster = await EmbeddedCluster.start();
  t.teardown(() => cluster.stop());
  const kc = new k8s.KubeConfig();
  kc.loadFromString(cluster.kubeconfigYaml());
  const core = kc.makeApiClient(k8s.CoreV1Api);
  // The simulated node lifecycle registers the nodes through the API.
  const deadline = Date.now() + 10_000;
  let nodes = 0;
  while (nodes === 0 && Date.now() < deadline) {
    nodes = (await core.listNode()).items.length;
    if (nodes === 0) await new Promise((r) => setTimeout(r, 20));
  }
  t.true(nodes > 0);
});

test('the token as the path prefix of the kubeconfig server URL (how client-go sends it over plain HTTP) passes, a wrong one does not', async (t) => {
  const { cluster } = await startCluster(t);
  const server = new k8s.KubeConfig();
  server.loadFromString(cluster.kubeconfigYaml());
  const url = server.getCurrentCluster()!.server;
  t.is(url, `${cluster.url}/kperturb-token/${cluster.token}`);
  t.is((await fetch(`${url}/api/v1/namespaces/default/configmaps?limit=1`)).status, 200);
  t.is((await fetch(`${url}/version`)).status, 200);
  t.is((await fetch(`${cluster.url}/kperturb-token/${'0'.repeat(64)}/api/v1/namespaces/default/configmaps`)).status, 401);
  t.is((await fetch(`${cluster.url}/kperturb-token/${cluster.token}x/api/v1/namespaces/default/configmaps`)).status, 401);
});

test('insecureNoAuth serves anyone, and its kubeconfig has no token', async (t) => {
  const { cluster } = await startCluster(t, { insecureNoAuth: true });
  t.is(cluster.token, undefined);
  t.deepEqual(cluster.clientOptions(), {});
  t.notRegex(cluster.kubeconfigYaml(), /token/);
  t.is((await fetch(cluster.url + '/api/v1/namespaces/default/secrets')).status, 200);
});
