/** The exit code of test, demo and report from results (src/cli/common.ts `exitCodeFor`): a bug found is 1, a finding that is not a bug is not. */
import test from 'ava';
import { exitCodeFor } from '../../src/cli/common.js';
import type { Alarm, RecoveryRun } from '../../src/model/results.js';
import { refusedScaleDown, result, rolledBack } from '../oracles/_results.js';

const condition: Alarm = {
  oracle: 'end-state',
  check: 'value',
  object: 'RabbitmqCluster/default/r',
  field: 'status.x',
  reference: ['True'],
  test: 'False',
  message: '',
};
const healed: RecoveryRun = { runDir: '/recovery/a', before: 0, attempts: [] };

test('a bug verdict of a transient finding (end state only, healed with time alone) does not make the exit code 1; of a bug finding it does', (t) => {
  t.is(exitCodeFor([result('a', { alarms: [condition], recovery: healed })]), 0);
  t.is(exitCodeFor([result('a', { alarms: [condition] })]), 1);
  t.is(exitCodeFor([result('a', { alarms: [condition], recovery: { ...healed, before: 1, attempts: [{ strategy: 'time', alarms: 1 }] } })]), 1);
});

test('a bug verdict of a misoperation finding (work a refused input held up, healed by rolling it back) does not make the exit code 1', (t) => {
  t.is(exitCodeFor([result('a', { alarms: [condition], recovery: rolledBack, refusedInput: refusedScaleDown })]), 0);
  t.is(exitCodeFor([result('a', { alarms: [condition], recovery: rolledBack })]), 1);
});
