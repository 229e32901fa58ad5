import test from 'ava';
import { compareRuns } from '../../oracles/index.js';
import type { KubeObject } from '../../src/model/object-key.js';
import { configMap, runWith } from './_runs.js';

/** A copy named by the API server from generateName `s1-` (5 characters of its alphabet), owned by `owner`. */
function copy(suffix: string, owner = 's1'): KubeObject {
  return configMap(
    `s1-${suffix}`,
    { mode: 'production' },
    {
      metadata: {
        name: `s1-${suffix}`,
        generateName: 's1-',
        namespace: 'default',
        ownerReferences: [{ apiVersion: 'demo.kperturb.dev/v1', kind: 'Snapshot', name: owner, uid: `u-${owner}`, controller: true }],
      },
    },
  );
}

test('two generated children of one owner where the references have one is the named duplicate-children alarm', (t) => {
  const alarms = compareRuns([runWith([copy('bcdfg')]), runWith([copy('hjklm')])], runWith([copy('npqrs'), copy('tvwxz')]));
  const duplicate = alarms.find((a) => a.check === 'duplicate-children');
  t.like(duplicate, { oracle: 'end-state', object: 'ConfigMap/default/s1-*', reference: [1], test: 2 });
  t.regex(duplicate!.message, /2 children of Snapshot s1 created with generateName "s1-".*duplicate children/);
  t.false(
    alarms.some((a) => a.check === 'generated-count'),
    'the named alarm replaces the bare count',
  );
});

test('no duplicate-children alarm when the references also make several, when owners differ, or when nothing is owned', (t) => {
  const two = [copy('bcdfg'), copy('hjklm')];
  t.false(
    compareRuns([runWith(two)], runWith([copy('npqrs'), copy('tvwxz')])).some((a) => a.check === 'duplicate-children'),
    'references make two as well',
  );
  t.false(
    compareRuns([runWith([copy('bcdfg'), copy('hjklm', 's2')])], runWith([copy('npqrs'), copy('tvwxz', 's2')])).some((a) => a.check === 'duplicate-children'),
    'one per owner',
  );
  const unowned = (s: string) => configMap(`s1-${s}`, {}, { metadata: { name: `s1-${s}`, generateName: 's1-', namespace: 'default' } });
  const alarms = compareRuns([runWith([unowned('bcdfg')])], runWith([unowned('npqrs'), unowned('tvwxz')]));
  t.false(alarms.some((a) => a.check === 'duplicate-children'));
  t.true(
    alarms.some((a) => a.check === 'generated-count'),
    'the end-state count still alarms',
  );
});
