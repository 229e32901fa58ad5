/**
 * The steps recovery's re-apply and rollback strategies run (src/campaign/recovery.ts,
 * `recoverySteps`), from hand-built workloads: the last write of the workload's custom resource, and
 * the resource as it was before that write.
 */
import test from 'ava';
import { recoverySteps } from '../../src/campaign/recovery.js';
import type { WorkloadStep } from '../../src/config/config.js';
import type { KubeObject } from '../../src/model/object-key.js';

const db = (version: string): KubeObject => ({ apiVersion: 'example.com/v1', kind: 'Database', metadata: { name: 'db1' }, spec: { version } });
const files: Record<string, KubeObject[]> = {
  'v14.yaml': [db('14')],
  'v15.yaml': [db('15')],
  'other.yaml': [{ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'x' } }],
};
const objectsOf = (s: { apply: unknown }) => files[s.apply as string] ?? [];
const apply = (file: string): WorkloadStep => ({ apply: file });
const patch = (version: string): WorkloadStep => ({ patch: { key: 'Database/default/db1', type: 'merge', patch: { spec: { version } } } }) as WorkloadStep;
const wait: WorkloadStep = { waitFor: { key: 'Database/default/db1', field: 'status.phase', equals: 'Ready', timeoutSeconds: 30 } } as WorkloadStep;

test('re-apply is the last write of the resource; rollback is the resource as it was before it (the apply and the patches after it)', (t) => {
  t.deepEqual(recoverySteps([apply('v14.yaml'), wait, patch('15'), wait], objectsOf), { reapply: [patch('15')], rollback: [apply('v14.yaml')] });
  t.deepEqual(recoverySteps([apply('v14.yaml'), patch('15'), wait, patch('16')], objectsOf), {
    reapply: [patch('16')],
    rollback: [apply('v14.yaml'), patch('15')],
  });
  t.deepEqual(recoverySteps([apply('v14.yaml'), wait, apply('other.yaml'), apply('v15.yaml'), wait], objectsOf), {
    reapply: [apply('v15.yaml')],
    rollback: [apply('v14.yaml')],
  });
});

test('a resource applied once and never changed has nothing to roll back to; a workload that applies nothing has neither', (t) => {
  t.deepEqual(recoverySteps([apply('v14.yaml'), wait], objectsOf), { reapply: [apply('v14.yaml')] });
  t.deepEqual(recoverySteps([wait], objectsOf), {});
});
