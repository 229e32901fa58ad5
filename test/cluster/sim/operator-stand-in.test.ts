/**
 * An operator's own Pod, as the operator fixtures create it (the operator runs outside the cluster
 * and reads the Pod named by its HOSTNAME), survives a node-not-ready fault that evicts the pods
 * around it: the process it stands for is not on the failing node.
 */
import test from 'ava';
import type * as k8s from '@kubernetes/client-node';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';
import { container, eventually, startSimCluster } from './helpers.js';

const STAND_IN = fileURLToPath(new URL('../../../../fixtures/operators/xtradb/manifests/operator-pod.yaml', import.meta.url));

test("xtradb's operator Pod is not evicted by a not-ready node, the pods beside it are", async (t) => {
  const sim = await startSimCluster(t, { nodes: ['node-1'] });
  const operator = parse(readFileSync(STAND_IN, 'utf8')) as k8s.V1Pod;
  await sim.core.createNamespacedPod({ namespace: 'default', body: operator });
  await sim.core.createNamespacedPod({ namespace: 'default', body: { metadata: { name: 'beside' }, spec: { containers: [container()] } } });
  const read = (name: string) => sim.core.readNamespacedPod({ name, namespace: 'default' }).catch(() => undefined);
  await eventually(
    'both pods running',
    async () => (await read('beside'))?.status?.phase === 'Running' && (await read(operator.metadata!.name!))?.status?.phase === 'Running',
  );
  t.is(sim.cluster.containerFaults!.setNodeOutage('node-1', { mode: 'not-ready', evictAfterSeconds: 0 }), undefined);
  await eventually('the pod beside evicted', async () => {
    const p = await read('beside');
    return !p || p.metadata?.deletionTimestamp !== undefined;
  });
  const after = await read(operator.metadata!.name!);
  t.truthy(after, 'the operator Pod is still there');
  t.is(after?.metadata?.deletionTimestamp, undefined);
});
