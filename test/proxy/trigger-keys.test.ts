/**
 * TriggerKeys (proxy/write-triggers.ts): a plan names an object with a generated name by its folded
 * key (`<prefix>*#<n>`); a fault on such an object finds this run's object through `resolve`.
 */
import test from 'ava';
import { TriggerKeys } from '../../proxy/write-triggers.js';

test('a folded key resolves to the object this run created in its place, once it is created; other keys are themselves', (t) => {
  const keys = new TriggerKeys();
  t.is(keys.resolve('Pod/default/web-*#1'), undefined, 'not created yet');
  const folded = keys.observeChange({ type: 'ADDED', key: 'Pod/default/web-x7k2p', next: { metadata: { name: 'web-x7k2p', generateName: 'web-' } } });
  t.is(folded, 'Pod/default/web-*#1');
  keys.observeChange({ type: 'ADDED', key: 'Pod/default/web-b4q9z', next: { metadata: { name: 'web-b4q9z', generateName: 'web-' } } });
  t.is(keys.resolve('Pod/default/web-*#1'), 'Pod/default/web-x7k2p');
  t.is(keys.resolve('Pod/default/web-*#2'), 'Pod/default/web-b4q9z');
  t.is(keys.resolve('Pod/default/db-0'), 'Pod/default/db-0');
});
