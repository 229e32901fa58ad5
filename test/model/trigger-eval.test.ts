import test from 'ava';
import { TriggerEvaluator } from '../../src/model/trigger-eval.js';
import type { KubeObject } from '../../src/model/object-key.js';

const cm = (v: string): KubeObject => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'a', namespace: 'default', resourceVersion: v }, data: { v } });
const key = 'ConfigMap/default/a';

test('a write leaf fires on its n-th matching write only', (t) => {
  const e = new TriggerEvaluator({ write: { verb: 'patch', key, subresource: 'status', occurrence: 2 } });
  t.false(e.write({ verb: 'patch', key }));
  t.false(e.write({ verb: 'patch', key, subresource: 'status' }));
  t.false(e.change(key, cm('1'), cm('2')));
  t.true(e.write({ verb: 'patch', key, subresource: 'status' }));
  t.true(e.fired);
  t.false(e.write({ verb: 'patch', key, subresource: 'status' }), 'fires once');
  t.false(e.watchesChanges);
});

test('change leaves count from the start; allOf fires with its last child, anyOf with its first', (t) => {
  const all = new TriggerEvaluator({ allOf: [{ change: { key, change: 'update', fields: [{ path: 'data.v', before: '2', after: '3' }], occurrence: 1 } }, { write: { verb: 'create', key, occurrence: 1 } }] });
  t.true(all.watchesChanges);
  t.false(all.change(key, cm('2'), cm('3')));
  t.true(all.write({ verb: 'create', key }));
  const any = new TriggerEvaluator({ anyOf: [{ change: { key, change: 'delete', occurrence: 1 } }, { write: { verb: 'create', key, occurrence: 1 } }] });
  t.true(any.write({ verb: 'create', key }));
  t.false(any.change(key, cm('1'), undefined));
});

test('a sequence fires only when its children fire in order', (t) => {
  const seq = () => new TriggerEvaluator({ sequence: [{ write: { verb: 'create', key, occurrence: 1 } }, { change: { key, change: 'update', occurrence: 1 } }] });
  const inOrder = seq();
  t.false(inOrder.write({ verb: 'create', key }));
  t.true(inOrder.change(key, cm('1'), cm('2')));
  const reversed = seq();
  t.false(reversed.change(key, cm('1'), cm('2')));
  t.false(reversed.write({ verb: 'create', key }));
  t.false(reversed.change(key, cm('2'), cm('3')), 'the update leaf already fired (1st occurrence): the sequence is spoiled');
  t.false(reversed.fired);
});
