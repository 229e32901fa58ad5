/**
 * Partial matching as KUTTL assert files and chainsaw assertion trees mean it: unnamed keys are
 * ignored, lists match item by item at the same length, scalars must be equal (a string is not a number).
 */
import test from 'ava';
import { partialMismatch } from '../../src/workload/partial-match.js';

const live = {
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name: 'web', namespace: 'default', labels: { app: 'web', tier: 'front' }, uid: 'u1' },
  spec: { replicas: 2, template: { spec: { containers: [{ name: 'c', image: 'nginx', ports: [{ containerPort: 80 }] }] } } },
  status: {
    readyReplicas: 2,
    conditions: [
      { type: 'Available', status: 'True' },
      { type: 'Progressing', status: 'True' },
    ],
  },
};

test('a subset of the live object matches; keys it does not name are ignored', (t) => {
  t.is(partialMismatch({ metadata: { name: 'web', labels: { app: 'web' } }, spec: { replicas: 2 } }, live), undefined);
  t.is(partialMismatch({}, live), undefined);
  t.is(partialMismatch({ spec: {} }, live), undefined);
});

test('a field the live object lacks, or a different value, does not match and the path says where', (t) => {
  t.is(partialMismatch({ status: { phase: 'Ready' } }, live), 'status.phase: missing');
  t.is(partialMismatch({ spec: { replicas: 3 } }, live), 'spec.replicas: expected 3, found 2');
  t.is(partialMismatch({ metadata: { labels: { tier: 'back' } } }, live), 'metadata.labels.tier: expected "back", found "front"');
});

test('lists match item by item (each item partially) and must have the same length', (t) => {
  t.is(partialMismatch({ spec: { template: { spec: { containers: [{ image: 'nginx' }] } } } }, live), undefined);
  t.is(partialMismatch({ status: { conditions: [{ type: 'Available' }, { status: 'True' }] } }, live), undefined);
  // One item where there are two: KUTTL's "slice length mismatch", kyverno-json's "lengths of slices don't match".
  t.is(partialMismatch({ status: { conditions: [{ type: 'Available', status: 'True' }] } }, live), 'status.conditions: expected a list of 1 item(s), found 2');
  // Order matters: the first item is Available, not Progressing.
  t.is(
    partialMismatch({ status: { conditions: [{ type: 'Progressing' }, { type: 'Available' }] } }, live),
    'status.conditions[0].type: expected "Progressing", found "Available"',
  );
});

test('scalars compare strictly: a quoted number is a string, numbers compare by value', (t) => {
  t.is(partialMismatch({ spec: { replicas: '2' } }, live), 'spec.replicas: expected "2", found 2');
  t.is(partialMismatch({ spec: { replicas: 2.0 } }, live), undefined);
  t.is(partialMismatch({ spec: { replicas: [2] } }, live), 'spec.replicas: expected a list, found 2');
  t.is(partialMismatch({ spec: { replicas: { n: 2 } } }, live), 'spec.replicas: expected a mapping, found 2');
  t.is(partialMismatch({ spec: { paused: null } }, { spec: { paused: null } }), undefined);
  t.is(partialMismatch({ spec: { paused: false } }, { spec: { paused: null } }), 'spec.paused: expected false, found null');
});
