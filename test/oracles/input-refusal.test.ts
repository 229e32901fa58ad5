/** The controller's refusals of its input that every reference run ends with (oracles/input-refusal.ts), from hand-built end states. */
import test from 'ava';
import { refusalsAtEnd } from '../../oracles/input-refusal.js';
import type { KubeObject } from '../../src/model/object-key.js';
import { runWith } from './_runs.js';

const cluster = (conditions: object[]): KubeObject => ({
  apiVersion: 'rabbitmq.com/v1beta1',
  kind: 'RabbitmqCluster',
  metadata: { name: 'r', namespace: 'default' },
  status: { conditions },
});
const refused = { type: 'ReconcileSuccess', status: 'False', reason: 'UnsupportedOperation', message: 'Cluster Scale down not supported' };
const ready = { type: 'AllReplicasReady', status: 'True', reason: 'AllPodsAreReady' };

test('a False condition whose reason or message says the input is unsupported or invalid, in every run, is a refusal', (t) => {
  t.deepEqual(refusalsAtEnd([runWith([cluster([ready, refused])]), runWith([cluster([refused, ready])])]), [
    'RabbitmqCluster/default/r: ReconcileSuccess False (UnsupportedOperation: Cluster Scale down not supported)',
  ]);
  // The reason alone says it (one CamelCase word).
  t.is(refusalsAtEnd([runWith([cluster([{ type: 'Valid', status: 'False', reason: 'InvalidSpec' }])])]).length, 1);
});

test('no refusal: in one run only, a True condition, or a False one that does not say the input is wrong', (t) => {
  t.deepEqual(refusalsAtEnd([runWith([cluster([refused])]), runWith([cluster([ready])])]), []);
  t.deepEqual(refusalsAtEnd([runWith([cluster([{ ...refused, status: 'True' }])])]), []);
  t.deepEqual(refusalsAtEnd([runWith([cluster([{ type: 'Ready', status: 'False', reason: 'PodsNotReady', message: '1 of 3 pods ready' }])])]), []);
  t.deepEqual(refusalsAtEnd([]), []);
});
