import test from 'ava';
import { HousekeepingRequests, isBookkeepingKey, LEADER_ANNOTATION } from '../../src/model/bookkeeping.js';

test('a bookkeeping key is one whose kind is Lease or Event, compared whole', (t) => {
  for (const key of ['Lease/kube-system/op', 'Event/default/x.1', 'Lease', 'Event']) t.true(isBookkeepingKey(key), key);
  for (const key of ['ConfigMap/default/lease', 'Leases/default/x', 'Leas/default/x', 'EventRecord/default/x', 'Even', '', '/Lease'])
    t.false(isBookkeepingKey(key), key);
});

test('a watched leader-election record is housekeeping, and so are later reads of its key', (t) => {
  const h = new HousekeepingRequests();
  const record = { kind: 'ConfigMap', metadata: { name: 'op-lock', annotations: { [LEADER_ANNOTATION]: '{}' } } };
  t.false(h.isHousekeepingObject('ConfigMap/default/cm', { kind: 'ConfigMap', metadata: { name: 'cm' } }));
  t.true(h.isHousekeepingObject('Lease/default/op', { kind: 'Lease' }));
  t.true(h.isHousekeepingObject('ConfigMap/default/op-lock', record));
  t.true(h.isHousekeeping(undefined, 'ConfigMap/default/op-lock', undefined), 'a GET of the record after it was seen');
  t.false(h.isHousekeeping(undefined, 'ConfigMap/default/cm', undefined));
});
