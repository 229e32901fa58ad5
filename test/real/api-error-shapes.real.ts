/**
 * The api-error fault's answers against the real kube-apiserver: the 409 Conflict a stale update
 * really gets (forwarded through the proxy) and the one the proxy makes up for an api-error fault
 * must be the same Status, byte for byte once parsed, for a core kind and a kind in a group
 * (`deployments.apps`: the qualified resource in the message, `details.group`).
 */
import test from 'ava';
import { ControllerProxy } from '../../proxy/index.js';
import { startRealControlPlane, type RealControlPlane } from '../../src/realcluster/index.js';
import { MemoryTrace, proxyAuth, rawRequest } from '../proxy/helpers.js';

let cp: RealControlPlane;
let proxy: ControllerProxy;

test.before(async () => {
  cp = await startRealControlPlane();
  proxy = await ControllerProxy.start({ upstream: cp.url, upstreamCaPem: cp.caPem, upstreamToken: cp.token, trace: new MemoryTrace(), log: () => {} });
});

test.after.always(async () => {
  await proxy?.stop();
  await cp?.stop();
});

const json = { 'content-type': 'application/json' };
const send = (method: string, path: string, body: unknown) =>
  rawRequest(proxy.url, { method, path, headers: { ...proxyAuth(proxy), ...json }, body: JSON.stringify(body) }).then((r) => ({
    status: r.status,
    body: JSON.parse(r.body.toString()) as Record<string, unknown>,
  }));

const CASES = [
  {
    kind: 'ConfigMap',
    collection: '/api/v1/namespaces/default/configmaps',
    object: (name: string, rv?: string) => ({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name, ...(rv ? { resourceVersion: rv } : {}) },
      data: { v: rv ?? '0' },
    }),
  },
  {
    kind: 'Deployment',
    collection: '/apis/apps/v1/namespaces/default/deployments',
    object: (name: string, rv?: string) => ({
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name, ...(rv ? { resourceVersion: rv } : {}) },
      spec: {
        replicas: rv ? 2 : 1,
        selector: { matchLabels: { app: name } },
        template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: 'c', image: 'nginx' }] } },
      },
    }),
  },
];

for (const c of CASES) {
  test(`conflict on a ${c.kind}: the proxy's Status is the one kube-apiserver writes`, async (t) => {
    const name = `shape-${c.kind.toLowerCase()}`;
    const created = await send('POST', c.collection, c.object(name));
    t.is(created.status, 201);
    const rv = (created.body.metadata as { resourceVersion: string }).resourceVersion;
    // An unconditional update (no resourceVersion): kube-controller-manager may already have written
    // the Deployment's status since the create, and a conditional one would then be refused first.
    // It changes the object (a no-op update would leave the resourceVersion as it was).
    t.is((await send('PUT', `${c.collection}/${name}`, { ...c.object(name, rv), metadata: { name } })).status, 200);
    // The creation's resourceVersion is stale now, whoever else wrote since: the real 409.
    const real = await send('PUT', `${c.collection}/${name}`, c.object(name, rv));
    t.is(real.status, 409);
    // Counted from arming: the next update, one the server would accept (no resourceVersion), gets the made-up 409.
    const armed = proxy.primitives.apiErrors.arm({
      type: 'api-error',
      on: { verb: 'update', key: `${c.kind}/default/${name}`, occurrence: 1 },
      answer: 'conflict',
    });
    const made = await send('PUT', `${c.collection}/${name}`, c.object(name));
    t.true(armed.fired);
    t.is(made.status, 409);
    t.deepEqual(made.body, real.body);
    t.is((await send('PUT', `${c.collection}/${name}`, c.object(name))).status, 200, 'without the fault the same update is accepted');
  });
}
