/**
 * The Percona operators (xtradb, mongodb) keep their custom resource's status.conditions as a history
 * (an entry per reconcile error and per change of state), so a conflict retried or a pod late for a
 * few seconds leaves an entry the fault-free runs lack. Their kperturb.yaml files mask that history;
 * the current state stays compared.
 */
import test from 'ava';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';
import { compareRuns } from '../../oracles/index.js';
import type { KubeObject } from '../../src/model/object-key.js';
import { runWith } from './_runs.js';

/** An operator config's masks, read from the file itself (loadConfig needs the operator's sources linked). */
function configMasks(operator: string): Array<{ keyGlob: string; paths: string[] }> {
  const file = fileURLToPath(new URL(`../../../fixtures/operators/${operator}/kperturb.yaml`, import.meta.url));
  const doc = parse(readFileSync(file, 'utf8')) as { masks?: Array<{ key: string; paths?: string[] }> };
  return (doc.masks ?? []).map((m) => ({ keyGlob: m.key, paths: m.paths ?? [] }));
}
const xtradbMasks = () => configMasks('xtradb');

function cluster(state: string, conditions: Array<Record<string, string>>): KubeObject {
  return {
    apiVersion: 'pxc.percona.com/v1',
    kind: 'PerconaXtraDBCluster',
    metadata: { name: 'xtradb-cluster', namespace: 'default' },
    spec: { pxc: { size: 3 } },
    status: { state, pxc: { size: 3, ready: 3, status: state }, conditions },
  };
}

const initializing = { type: 'Initializing', status: 'True', lastTransitionTime: '2026-11-29T23:26:15Z' };
const ready = { type: 'Ready', status: 'True', lastTransitionTime: '2026-11-29T23:26:16Z' };
const retriedConflict = {
  type: 'Error',
  status: 'True',
  reason: 'ErrorReconcile',
  message: 'update error: Operation cannot be fulfilled on statefulsets.apps "xtradb-cluster-pxc": the object has been modified',
  lastTransitionTime: '2026-11-29T23:42:09Z',
};

test('an error the operator recorded and recovered from is history, not a difference in the end state', (t) => {
  const refs = [runWith([cluster('ready', [initializing, ready])]), runWith([cluster('ready', [initializing, ready])])];
  const alarms = compareRuns(refs, runWith([cluster('ready', [initializing, retriedConflict, ready])]), { extraMasks: xtradbMasks() });
  t.deepEqual(
    alarms.map((a) => a.message),
    [],
  );
});

test('a cluster that ends in another state than the reference runs still alarms', (t) => {
  const refs = [runWith([cluster('ready', [initializing, ready])]), runWith([cluster('ready', [initializing, ready])])];
  const alarms = compareRuns(refs, runWith([cluster('error', [initializing, retriedConflict])]), { extraMasks: xtradbMasks() });
  t.deepEqual(
    alarms.map((a) => a.field),
    ['status.pxc.status', 'status.state'],
  );
});

function mongodb(state: string, rs0: string, conditions: Array<Record<string, string>>): KubeObject {
  return {
    apiVersion: 'psmdb.percona.com/v1-5-0',
    kind: 'PerconaServerMongoDB',
    metadata: { name: 'mongodb-cluster', namespace: 'default' },
    spec: { replsets: [{ name: 'rs0', size: 3 }] },
    status: { state, replsets: { rs0: { initialized: true, size: 3, ready: 3, status: rs0 } }, conditions },
  };
}

const condition = (type: string, message?: string) => ({ type, status: 'True', lastTransitionTime: '2026-11-30T02:59:15Z', ...(message ? { message } : {}) });
/** As both reference runs of mongodb's run-cert-manager ended. */
const mongodbHistory = [condition('ClusterInitializing'), condition('ReplsetInitialized', 'rs0'), condition('ClusterInitializing'), condition('Error')];

test('mongodb: a replica set ready for a moment is an entry of the history, not a difference in the end state', (t) => {
  const refs = [runWith([mongodb('error', 'ready', mongodbHistory)]), runWith([mongodb('error', 'ready', mongodbHistory)])];
  // run-cert-manager's managed-0002: rs0-1's claim held Pending 3 s.
  const withReady = [...mongodbHistory.slice(0, 2), condition('ReplsetReady'), ...mongodbHistory.slice(2)];
  t.deepEqual(
    compareRuns(refs, runWith([mongodb('error', 'ready', withReady)]), { extraMasks: configMasks('mongodb') }).map((a) => a.message),
    [],
  );
  // Its current state is still compared.
  t.deepEqual(
    compareRuns(refs, runWith([mongodb('initializing', 'initializing', withReady)]), { extraMasks: configMasks('mongodb') }).map((a) => a.field),
    ['status.replsets.rs0.status', 'status.state'],
  );
});
