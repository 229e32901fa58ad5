import test from 'ava';
import { compareRuns } from '../../oracles/index.js';
import { secret, runWith } from './_runs.js';

const tls = secret('db-tls');

test('a different number of creations raises an alarm', (t) => {
  const refs = [runWith([tls], [['ADDED', tls]]), runWith([tls], [['ADDED', tls]])];
  const alarms = compareRuns(refs, runWith([tls], []));
  t.deepEqual(alarms, [
    {
      oracle: 'update-summary',
      check: 'created',
      object: 'Secret/default/db-tls',
      reference: [1],
      test: 0,
      message: 'Secret/default/db-tls: created 1 time(s) in reference runs, but 0 time(s) in the test run',
    },
  ]);
});

test('an extra delete-and-recreate cycle raises alarms; modifications are not counted', (t) => {
  const refs = [
    runWith(
      [],
      [
        ['ADDED', tls],
        ['MODIFIED', tls],
      ],
    ),
  ];
  const alarms = compareRuns(
    refs,
    runWith(
      [],
      [
        ['ADDED', tls],
        ['DELETED', tls],
        ['ADDED', tls],
        ['MODIFIED', tls],
        ['MODIFIED', tls],
      ],
    ),
  );
  t.deepEqual(
    alarms.map((a) => a.message),
    [
      'Secret/default/db-tls: created 1 time(s) in reference runs, but 2 time(s) in the test run',
      'Secret/default/db-tls: deleted 0 time(s) in reference runs, but 1 time(s) in the test run',
    ],
  );
});

test('equal counts raise no alarm', (t) => {
  const changes: Array<['ADDED' | 'DELETED' | 'MODIFIED', typeof tls]> = [
    ['ADDED', tls],
    ['DELETED', tls],
    ['ADDED', tls],
  ];
  t.deepEqual(compareRuns([runWith([tls], changes), runWith([tls], changes)], runWith([tls], changes)), []);
});

test('no alarm when the reference runs disagree on the counts', (t) => {
  const refs = [
    runWith([tls], [['ADDED', tls]]),
    runWith(
      [tls],
      [
        ['ADDED', tls],
        ['DELETED', tls],
        ['ADDED', tls],
      ],
    ),
  ];
  t.deepEqual(
    compareRuns(
      refs,
      runWith(
        [tls],
        [
          ['ADDED', tls],
          ['DELETED', tls],
          ['ADDED', tls],
          ['DELETED', tls],
          ['ADDED', tls],
        ],
      ),
    ),
    [],
  );
});

test('a whole-object user mask also silences the update summary', (t) => {
  const refs = [runWith([tls], [['ADDED', tls]])];
  const tst = runWith(
    [tls],
    [
      ['ADDED', tls],
      ['DELETED', tls],
      ['ADDED', tls],
    ],
  );
  t.is(compareRuns(refs, tst).length, 2);
  t.deepEqual(compareRuns(refs, tst, { extraMasks: [{ keyGlob: 'Secret/*', paths: [] }] }), []);
  // A field mask does not.
  t.is(compareRuns(refs, tst, { extraMasks: [{ keyGlob: 'Secret/*', paths: ['data'] }] }).length, 2);
});

test('generated names are folded to their prefix', (t) => {
  const pod = (name: string) => ({ apiVersion: 'v1', kind: 'Pod', metadata: { name, generateName: 'job-', namespace: 'default' } });
  const refs = [runWith([], [['ADDED', pod('job-zzzzz')]]), runWith([], [['ADDED', pod('job-bbbbb')]])];
  t.deepEqual(compareRuns(refs, runWith([], [['ADDED', pod('job-ccccc')]])), []);
  t.deepEqual(
    compareRuns(
      refs,
      runWith(
        [],
        [
          ['ADDED', pod('job-ccccc')],
          ['ADDED', pod('job-ddddd')],
        ],
      ),
    ).map((a) => a.message),
    ['Pod/default/job-*: created 1 time(s) in reference runs, but 2 time(s) in the test run'],
  );
});

test('a different order of events with the same counts raises no alarm', (t) => {
  const cm = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c', namespace: 'default' } };
  const ref = runWith(
    [tls, cm],
    [
      ['ADDED', tls],
      ['ADDED', cm],
      ['MODIFIED', tls],
      ['DELETED', cm],
      ['ADDED', cm],
    ],
  );
  const tst = runWith(
    [tls, cm],
    [
      ['ADDED', cm],
      ['DELETED', cm],
      ['ADDED', tls],
      ['ADDED', cm],
      ['MODIFIED', tls],
      ['MODIFIED', cm],
    ],
  );
  t.deepEqual(compareRuns([ref], tst), []);
});

test('changes of chosen fields are counted when configured, and only then', (t) => {
  const sts = (replicas: number, image = 'db:1') => ({
    apiVersion: 'apps/v1',
    kind: 'StatefulSet',
    metadata: { name: 'db', namespace: 'default' },
    spec: { replicas, image },
  });
  const ref = runWith(
    [sts(3)],
    [
      ['ADDED', sts(1)],
      ['MODIFIED', sts(3)],
      ['MODIFIED', sts(3, 'db:2')],
    ],
  );
  // Same end state, but the test run scaled down and up again on the way.
  const tst = runWith(
    [sts(3)],
    [
      ['ADDED', sts(1)],
      ['MODIFIED', sts(3)],
      ['MODIFIED', sts(0)],
      ['MODIFIED', sts(3, 'db:2')],
    ],
  );
  t.deepEqual(compareRuns([ref, ref], tst), []);
  const countUpdates = [{ keyGlob: 'StatefulSet/default/*', paths: ['spec.replicas', 'spec.image'] }];
  const alarms = compareRuns([ref, ref], tst, { countUpdates });
  t.deepEqual(
    alarms.map((a) => [a.check, a.field, a.reference, a.test, a.message]),
    [['updated', 'spec.replicas', [1], 3, 'StatefulSet/default/db: spec.replicas changed 1 time(s) in reference runs, but 3 time(s) in the test run']],
  );
  // Writes that leave the field alone (here: only the image changes) do not count as changes of it.
  const sameReplicas = runWith(
    [sts(3)],
    [
      ['ADDED', sts(1)],
      ['MODIFIED', sts(3)],
      ['MODIFIED', sts(3, 'db:2')],
      ['MODIFIED', sts(3, 'db:2')],
    ],
  );
  t.deepEqual(compareRuns([ref], sameReplicas, { countUpdates }), []);
});

test('a delete-and-recreate cycle the test run skipped (same balance) raises no alarm; a missing deletion does', (t) => {
  // References: the component is switched off (deleted) and on again (recreated).
  const refs = [
    runWith(
      [tls],
      [
        ['ADDED', tls],
        ['DELETED', tls],
        ['ADDED', tls],
      ],
    ),
    runWith(
      [tls],
      [
        ['ADDED', tls],
        ['DELETED', tls],
        ['ADDED', tls],
      ],
    ),
  ];
  // The restarted controller found it wanted again before it got to delete it.
  t.deepEqual(compareRuns(refs, runWith([tls], [['ADDED', tls]])), []);
  // Deleted but never recreated: the balance differs.
  t.deepEqual(
    compareRuns(
      refs,
      runWith(
        [],
        [
          ['ADDED', tls],
          ['DELETED', tls],
        ],
      ),
    ).map((a) => [a.oracle, a.check]),
    [
      ['end-state', 'missing'],
      ['update-summary', 'created'],
    ],
  );
});

test("an Endpoints life begun after its Service was deleted and ended in the run is the endpoints controller's race, not counted", (t) => {
  const svc = { apiVersion: 'v1', kind: 'Service', metadata: { name: 'web', namespace: 'default' } };
  const ep = { apiVersion: 'v1', kind: 'Endpoints', metadata: { name: 'web', namespace: 'default' } };
  const slice = {
    apiVersion: 'discovery.k8s.io/v1',
    kind: 'EndpointSlice',
    metadata: { name: 'web-x7k2p', namespace: 'default', labels: { 'kubernetes.io/service-name': 'web' } },
  };
  type Change = ['ADDED' | 'DELETED' | 'MODIFIED', typeof svc];
  // References: the component is switched off (Service and Endpoints deleted) and on again.
  const cycle: Change[] = [
    ['ADDED', svc],
    ['ADDED', ep],
    ['DELETED', svc],
    ['DELETED', ep],
    ['ADDED', svc],
    ['ADDED', ep],
  ];
  const refs = [runWith([svc, ep], cycle), runWith([svc, ep], cycle)];
  // The real endpoints controller synced the deleted Service from its cache: Endpoints created
  // again, and deleted on its next sync (as seen on a real control plane).
  const flicker: Change[] = [
    ['ADDED', svc],
    ['ADDED', ep],
    ['DELETED', svc],
    ['DELETED', ep],
    ['ADDED', ep],
    ['DELETED', ep],
    ['ADDED', svc],
    ['ADDED', ep],
  ];
  t.deepEqual(compareRuns(refs, runWith([svc, ep], flicker)), []);
  // The same for an EndpointSlice of the Service (by its service-name label).
  const sliceFlicker: Change[] = [
    ['ADDED', svc],
    ['DELETED', svc],
    ['ADDED', slice],
    ['DELETED', slice],
    ['ADDED', svc],
  ];
  t.deepEqual(
    compareRuns(
      [
        runWith(
          [svc],
          [
            ['ADDED', svc],
            ['DELETED', svc],
            ['ADDED', svc],
          ],
        ),
      ],
      runWith([svc], sliceFlicker),
    ),
    [],
  );
  // An extra cycle while the Service exists is counted (something deleted the Endpoints).
  const whileServiceExists: Change[] = [...cycle, ['DELETED', ep], ['ADDED', ep]];
  t.deepEqual(
    compareRuns(refs, runWith([svc, ep], whileServiceExists)).map((a) => a.message),
    [
      'Endpoints/default/web: created 2 time(s) in reference runs, but 3 time(s) in the test run',
      'Endpoints/default/web: deleted 1 time(s) in reference runs, but 2 time(s) in the test run',
    ],
  );
  // An orphan that is never deleted is counted: it is still there at the end.
  const leftOrphan: Change[] = [
    ['ADDED', svc],
    ['ADDED', ep],
    ['DELETED', svc],
    ['DELETED', ep],
    ['ADDED', ep],
  ];
  const twoLives: Change[] = [
    ['ADDED', svc],
    ['ADDED', ep],
    ['DELETED', svc],
    ['DELETED', ep],
  ];
  t.deepEqual(
    compareRuns([runWith([], twoLives)], runWith([ep], leftOrphan))
      .filter((a) => a.oracle === 'update-summary')
      .map((a) => a.message),
    ['Endpoints/default/web: created 1 time(s) in reference runs, but 2 time(s) in the test run'],
  );
});

/** A running pod of `default` with these status conditions. */
function pod(name: string, conditions: unknown[] = []) {
  return { apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace: 'default' }, status: { phase: 'Running', conditions } };
}

test("a pod the cluster disrupted (DisruptionTarget: evicted, the taint manager) and its owner's recreation are not counted; an undisrupted extra cycle still is", (t) => {
  const running = pod('db-0', [{ type: 'Ready', status: 'True' }]);
  const evicted = pod('db-0', [{ type: 'DisruptionTarget', status: 'True', reason: 'EvictionByEvictionAPI' }]);
  const refs = [runWith([running], [['ADDED', running]])];
  t.deepEqual(
    compareRuns(
      refs,
      runWith(
        [running],
        [
          ['ADDED', running],
          ['MODIFIED', evicted],
          ['DELETED', evicted],
          ['ADDED', running],
        ],
      ),
    ),
    [],
  );
  t.deepEqual(
    compareRuns(
      refs,
      runWith(
        [running],
        [
          ['ADDED', running],
          ['DELETED', running],
          ['ADDED', running],
        ],
      ),
    ).map((a) => a.check),
    ['created', 'deleted'],
  );
});

test('a disrupted deletion that nothing recreated counts as the deletion it stands for (a pod a scale-down deletes, evicted first)', (t) => {
  // decommission's managed-system plan: node-1 goes not-ready while the data center scales 2 -> 1; its
  // pod dc1-1 is evicted, and the StatefulSet, already at 1 replica, does not recreate it.
  type Change = ['ADDED' | 'DELETED' | 'MODIFIED', ReturnType<typeof pod>];
  const running = pod('dc1-1', [{ type: 'Ready', status: 'True' }]);
  const evicted = pod('dc1-1', [{ type: 'DisruptionTarget', status: 'True', reason: 'DeletionByTaintManager' }]);
  const scaledDown: Change[] = [
    ['ADDED', running],
    ['DELETED', running],
  ];
  const evictedFirst: Change[] = [
    ['ADDED', running],
    ['MODIFIED', evicted],
    ['DELETED', evicted],
  ];
  t.deepEqual(compareRuns([runWith([], scaledDown)], runWith([], evictedFirst)), []);
  // Where the references kept the pod, an eviction nothing undid is a deletion.
  t.deepEqual(
    compareRuns([runWith([running], [['ADDED', running]])], runWith([], evictedFirst))
      .filter((a) => a.oracle === 'update-summary')
      .map((a) => a.message),
    ['Pod/default/dc1-1: deleted 0 time(s) in reference runs, but 1 time(s) in the test run'],
  );
});
