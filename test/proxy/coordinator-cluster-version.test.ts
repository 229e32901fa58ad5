/**
 * The config's `cluster.kubernetesVersion` reaches the embedded cluster a run starts: a v1beta1 CRD
 * (with only `spec.version`) in the setup and a policy/v1beta1 PodDisruptionBudget in the workload
 * are served, as on a 1.18 cluster.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import test from 'ava';
import type { Workload } from '../../src/config/config.js';
import { CLUSTER_RECORD_FILE, executeRun } from '../../src/coordinator/run.js';
import { mirrorControllerConfig } from './fixtures/mirror-config.js';
import { scratchDir } from '../_scratch-dir.js';

test('a run on an embedded 1.18 cluster serves the v1beta1 APIs the setup and workload use', async (t) => {
  const dir = scratchDir(t, 'kperturb-release-');
  const crd = join(dir, 'crd.yaml');
  writeFileSync(
    crd,
    'apiVersion: apiextensions.k8s.io/v1beta1\nkind: CustomResourceDefinition\nmetadata: {name: zoos.example.com}\nspec: {group: example.com, version: v1beta1, scope: Namespaced, names: {plural: zoos, kind: Zoo}}\n',
  );
  const pdb = join(dir, 'pdb.yaml');
  writeFileSync(
    pdb,
    'apiVersion: policy/v1beta1\nkind: PodDisruptionBudget\nmetadata: {name: zk, namespace: default}\nspec: {maxUnavailable: 1, selector: {matchLabels: {app: zk}}}\n',
  );
  const zoo = join(dir, 'zoo.yaml');
  writeFileSync(zoo, 'apiVersion: example.com/v1beta1\nkind: Zoo\nmetadata: {name: z1, namespace: default}\nspec: {replicas: 3}\n');
  const workload: Workload = {
    name: 'create',
    steps: [{ apply: zoo }, { apply: pdb }, { waitFor: { key: 'PodDisruptionBudget/default/zk', timeoutSeconds: 10 } }],
  };
  // Any controller will do (this one mirrors ConfigMaps): the run is about the cluster it is given.
  const config = { ...mirrorControllerConfig(dir, workload, { setup: [crd] }), cluster: { kubernetesVersion: '1.18' } };

  const runDir = join(dir, 'run');
  const { record } = await executeRun({ config, workload, runDir });
  t.is(record.error, undefined);
  t.true(record.workloadOutcome.ok, record.workloadOutcome.error);
  const clusterRecord = JSON.parse(readFileSync(join(runDir, CLUSTER_RECORD_FILE), 'utf8')) as { kind: string; kubernetesVersion?: string };
  t.like(clusterRecord, { kind: 'embedded', kubernetesVersion: '1.18' });
});
