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
  const all = new TriggerEvaluator({
    allOf: [
      { change: { key, change: 'update', fields: [{ path: 'data.v', before: '2', after: '3' }], occurrence: 1 } },
      { write: { verb: 'create', key, occurrence: 1 } },
    ],
  });
  t.true(all.watchesChanges);
  t.false(all.change(key, cm('2'), cm('3')));
  t.true(all.write({ verb: 'create', key }));
  const any = new TriggerEvaluator({ anyOf: [{ change: { key, change: 'delete', occurrence: 1 } }, { write: { verb: 'create', key, occurrence: 1 } }] });
  t.true(any.write({ verb: 'create', key }));
  t.false(any.change(key, cm('1'), undefined));
});

test('a sequence fires only when its children fire in order', (t) => {
  const seq = () =>
    new TriggerEvaluator({ sequence: [{ write: { verb: 'create', key, occurrence: 1 } }, { change: { key, change: 'update', occurrence: 1 } }] });
  const inOrder = seq();
  t.false(inOrder.write({ verb: 'create', key }));
  t.true(inOrder.change(key, cm('1'), cm('2')));
  const reversed = seq();
  t.false(reversed.change(key, cm('1'), cm('2')));
  t.false(reversed.write({ verb: 'create', key }));
  t.false(reversed.change(key, cm('2'), cm('3')), 'the update leaf already fired (1st occurrence): the sequence is spoiled');
  t.false(reversed.fired);
});

test('a trigger that never fired says what came closest: other writes of the object, the count, the nearest change', (t) => {
  const write = new TriggerEvaluator({ write: { verb: 'patch', key, subresource: 'status', occurrence: 2 } });
  t.is(write.whyNotFired(), `never matched: the controller never made a successful patch status of ${key}`);
  write.write({ verb: 'update', key });
  write.write({ verb: 'patch', key, subresource: 'status' });
  t.is(
    write.whyNotFired(),
    `never matched: the controller made a successful patch status of ${key} 1 time, the plan waits for the 2nd (its other writes of it: update 1 time)`,
  );
  write.write({ verb: 'patch', key, subresource: 'status' });
  t.is(write.whyNotFired(), undefined, 'fired');

  // Serialized learning saw data.v written alone; a normal run writes v and w in one update.
  const change = new TriggerEvaluator({ change: { key, change: 'update', fields: [{ path: 'data.v', before: '1', after: '2' }], occurrence: 1 } });
  t.is(change.whyNotFired(), `never matched: ${key} did not change during the run`);
  change.change(key, undefined, cm('1'));
  t.is(change.whyNotFired(), `never matched: ${key} was never updated (it was created 1 time)`);
  change.change(key, cm('1'), { ...cm('3'), data: { v: '3', w: 'x' } });
  t.is(change.whyNotFired(), `never matched: ${key} was updated 1 time, none with data.v: "1" -> "2"; closest: data.v: "1" -> "3", data.w: undefined -> "x"`);
});
