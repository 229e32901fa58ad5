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
      object: 'Secret/default/db-tls',
      reference: [1],
      test: 0,
      message: 'Secret/default/db-tls: created 1 time(s) in reference runs, but 0 time(s) in the test run',
    },
  ]);
});

test('a different number of deletions raises an alarm; modifications are not counted', (t) => {
  const refs = [runWith([], [['ADDED', tls], ['MODIFIED', tls]])];
  const alarms = compareRuns(refs, runWith([], [['ADDED', tls], ['DELETED', tls], ['ADDED', tls], ['MODIFIED', tls], ['MODIFIED', tls]]));
  t.deepEqual(
    alarms.map((a) => a.message),
    [
      'Secret/default/db-tls: created 1 time(s) in reference runs, but 2 time(s) in the test run',
      'Secret/default/db-tls: deleted 0 time(s) in reference runs, but 1 time(s) in the test run',
    ],
  );
});

test('equal counts raise no alarm', (t) => {
  const changes: Array<['ADDED' | 'DELETED' | 'MODIFIED', typeof tls]> = [['ADDED', tls], ['DELETED', tls], ['ADDED', tls]];
  t.deepEqual(compareRuns([runWith([tls], changes), runWith([tls], changes)], runWith([tls], changes)), []);
});

test('no alarm when the reference runs disagree on the counts', (t) => {
  const refs = [runWith([tls], [['ADDED', tls]]), runWith([tls], [['ADDED', tls], ['DELETED', tls], ['ADDED', tls]])];
  t.deepEqual(compareRuns(refs, runWith([tls], [['ADDED', tls], ['DELETED', tls], ['ADDED', tls], ['DELETED', tls], ['ADDED', tls]])), []);
});

test('a whole-object user mask also silences the update summary', (t) => {
  const refs = [runWith([tls], [['ADDED', tls]])];
  const tst = runWith([tls], [['ADDED', tls], ['DELETED', tls], ['ADDED', tls]]);
  t.is(compareRuns(refs, tst).length, 2);
  t.deepEqual(compareRuns(refs, tst, { extraMasks: [{ keyGlob: 'Secret/*', paths: [] }] }), []);
  // A field mask does not.
  t.is(compareRuns(refs, tst, { extraMasks: [{ keyGlob: 'Secret/*', paths: ['data'] }] }).length, 2);
});

test('generated names are folded to their prefix', (t) => {
  const pod = (name: string) => ({ apiVersion: 'v1', kind: 'Pod', metadata: { name, generateName: 'job-', namespace: 'default' } });
  const refs = [runWith([], [['ADDED', pod('job-aaaaa')]]), runWith([], [['ADDED', pod('job-bbbbb')]])];
  t.deepEqual(compareRuns(refs, runWith([], [['ADDED', pod('job-ccccc')]])), []);
  t.deepEqual(
    compareRuns(refs, runWith([], [['ADDED', pod('job-ccccc')], ['ADDED', pod('job-ddddd')]])).map((a) => a.message),
    ['Pod/default/job-*: created 1 time(s) in reference runs, but 2 time(s) in the test run'],
  );
});
