/**
 * The xtradb operator keeps its custom resource's status.conditions as a history (an entry per
 * reconcile error and per change of state), so a conflict it retried leaves an `Error` entry the
 * fault-free runs lack. Its kperturb.yaml masks that history; the current state stays compared.
 */
import test from 'ava';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';
import { compareRuns } from '../../oracles/index.js';
import type { KubeObject } from '../../src/model/object-key.js';
import { runWith } from './_runs.js';

const CONFIG = fileURLToPath(new URL('../../../fixtures/operators/xtradb/kperturb.yaml', import.meta.url));

/** The config's masks, read from the file itself (loadConfig needs the operator's sources linked). */
function xtradbMasks(): Array<{ keyGlob: string; paths: string[] }> {
  const doc = parse(readFileSync(CONFIG, 'utf8')) as { masks?: Array<{ key: string; paths?: string[] }> };
  return (doc.masks ?? []).map((m) => ({ keyGlob: m.key, paths: m.paths ?? [] }));
}

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
