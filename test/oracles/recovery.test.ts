/**
 * Recovery (oracles/recovery.ts, applied by groupFindings) from hand-built runs and results: what is
 * still broken after an attempt, which strategy recovered a finding, and when to stop trying.
 */
import test from 'ava';
import { recoveryOf, recoveryUnknown, shouldGoOn, stillBroken } from '../../oracles/recovery.js';
import { groupFindings } from '../../oracles/findings.js';
import type { Alarm, RecoveryRun } from '../../src/model/results.js';
import { configMap, runWith, secret } from './_runs.js';
import { result } from './_results.js';

const references = [runWith([configMap('cfg', { v: '1' }), secret('tls')]), runWith([configMap('cfg', { v: '1' }), secret('tls')])];
const run = (attempts: RecoveryRun['attempts'], before = 2): RecoveryRun => ({ runDir: '/recovery/a', before, attempts });

test('an end state the references share is not broken; a missing object or a differing field is', (t) => {
  t.deepEqual(stillBroken(references, runWith([configMap('cfg', { v: '1' }), secret('tls')]), []), []);
  const broken = stillBroken(references, runWith([configMap('cfg', { v: '2' })]), []);
  t.deepEqual(broken.map((a) => `${a.check} ${a.object}`).sort(), ['missing Secret/default/tls', 'value ConfigMap/default/cfg']);
});

test('what the fault-free run also shows is not counted as broken, and the update summaries (history) never are', (t) => {
  // References that created the Secret: a run whose history lacks the create would alarm in the update summary.
  const withHistory = [1, 2].map(() => runWith([configMap('cfg', { v: '1' }), secret('tls')], [['ADDED', secret('tls')]]));
  const faultFree: Alarm[] = stillBroken(withHistory, runWith([configMap('cfg', { v: '2' }), secret('tls')]), []);
  t.is(faultFree.length, 1);
  const broken = stillBroken(withHistory, runWith([configMap('cfg', { v: '2' })]), faultFree);
  t.deepEqual(
    broken.map((a) => `${a.check} ${a.object}`),
    ['missing Secret/default/tls'],
  );
  t.true(broken.every((a) => a.oracle === 'end-state'));
});

test("compared with one run of its own (the rollback reference), a field the workload's reference runs disagree on is not broken", (t) => {
  const cookie = (v: string) => ({ ...secret('cookie'), data: { '.erlang.cookie': v } });
  const refs = [runWith([cookie('a'), configMap('cfg', { v: '1' })]), runWith([cookie('b'), configMap('cfg', { v: '1' })])];
  const rollbackReference = runWith([cookie('c'), configMap('cfg', { v: '1' })]);
  const rolledBack = runWith([cookie('d'), configMap('cfg', { v: '2' })]);
  // Alone, the one reference calls every generated value broken.
  t.deepEqual(
    stillBroken([rollbackReference], rolledBack, []).map((a) => a.field),
    ['data.v', 'data[".erlang.cookie"]'],
  );
  t.deepEqual(
    stillBroken([rollbackReference], rolledBack, [], { varyingRuns: refs }).map((a) => a.field),
    ['data.v'],
  );
});

test('the first strategy after which nothing is broken recovered the finding; none did: none; nothing broken to begin with: time', (t) => {
  t.is(recoveryOf(run([{ strategy: 'time', alarms: 0 }])), 'time');
  t.is(
    recoveryOf(
      run([
        { strategy: 'time', alarms: 2 },
        { strategy: 'restart', alarms: 0 },
      ]),
    ),
    'restart',
  );
  t.is(
    recoveryOf(
      run([
        { strategy: 'time', alarms: 2 },
        { strategy: 'restart', alarms: 2 },
        { strategy: 're-apply', alarms: 1 },
        { strategy: 'rollback', alarms: 0, skipped: 'no earlier version' },
      ]),
    ),
    'none',
    'a skipped rollback recovers nothing',
  );
  t.is(recoveryOf(run([], 0)), 'time', 'the controller recovered on its own before any attempt');
  t.is(recoveryOf({ ...run([], 0), shown: true }), 'time', 'the run showed the finding and its end state was already right');
  t.is(recoveryOf({ ...run([], 0), shown: false }), undefined, 'the run never showed the finding: nothing known of recovery');
  t.is(recoveryUnknown({ ...run([], 0), shown: false }), 'the recovery run did not show the finding');
  t.is(recoveryOf({ ...run([]), error: 'the cluster did not start' }), undefined);
  t.is(recoveryOf(run([])), undefined, 'nothing tried');
});

test('attempts stop at the first that recovers', (t) => {
  t.true(shouldGoOn([]));
  t.true(shouldGoOn([{ strategy: 'time', alarms: 1 }]));
  t.false(
    shouldGoOn([
      { strategy: 'time', alarms: 1 },
      { strategy: 'restart', alarms: 0 },
    ]),
  );
  t.true(shouldGoOn([{ strategy: 're-apply', alarms: 0, skipped: 'the workload applies no resource' }]));
});

test('a bug finding carries the recovery of its plans; a finding that is not a bug does not', (t) => {
  const recovery = run([
    { strategy: 'time', alarms: 1 },
    { strategy: 'restart', alarms: 0 },
  ]);
  const [bug] = groupFindings([result('a', { recovery })]);
  t.is(bug!.recovery, 'restart');
  t.is(bug!.recoveryRun?.runDir, '/recovery/a');
  const [flaky] = groupFindings([result('b', { verdict: 'flaky', recovery })]);
  t.is(flaky!.class, 'flaky');
  t.is(flaky!.recovery, undefined);
});
