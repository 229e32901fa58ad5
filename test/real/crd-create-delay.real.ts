/**
 * kube-apiserver's 2 s hold on creates of a just-established CRD's custom resources
 * (src/realcluster/crd-create-delay.ts): the end of the window is read from the CRD itself, and the
 * wait does not return before it.
 */
import test from 'ava';
import { fileURLToPath } from 'node:url';
import { KubeClient } from '../../src/kube/client.js';
import { CRD_CREATE_DELAY_MS, crdCreateDelayEnd, startRealControlPlane, waitOutCrdCreateDelay } from '../../src/realcluster/index.js';
import { readManifests } from '../../src/workload/runner.js';
import { eventually } from './_helpers.js';

const CRD_FILE = fileURLToPath(new URL('../../../fixtures/controllers/decommission/manifests/crd.yaml', import.meta.url));

test('the wait ends where the API server stops holding creates: 2 s after the CRD became Established', async (t) => {
  const cp = await startRealControlPlane({ controllerManager: false });
  t.teardown(() => cp.stop());
  const client = new KubeClient(cp.url, cp.clientOptions());
  t.teardown(() => client.close());
  const crds = readManifests(CRD_FILE);
  t.is(await crdCreateDelayEnd(client, crds), 0, 'no CRD yet: nothing held');
  for (const crd of crds) await client.apply(crd);

  const establishedAt = await eventually('the CRD is Established', 30_000, async () => {
    const res = await client.request('GET', `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${crds[0]!.metadata!.name!}`);
    const conditions = (res.body as { status?: { conditions?: Array<{ type: string; status: string; lastTransitionTime: string }> } }).status?.conditions;
    const established = conditions?.find((c) => c.type === 'Established' && c.status === 'True');
    return established ? Date.parse(established.lastTransitionTime) : undefined;
  });
  const end = await crdCreateDelayEnd(client, crds);
  t.is(end, establishedAt + CRD_CREATE_DELAY_MS);
  await waitOutCrdCreateDelay(client, crds);
  t.true(Date.now() >= end, 'the wait does not return while creates are still held');
});
