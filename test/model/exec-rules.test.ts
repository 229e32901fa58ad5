import test from 'ava';
import { answerExec, answerLog, commandMatches, globMatches, type ExecRule } from '../../src/model/exec-rules.js';

test('globs: * matches any run of characters, the rest is literal', (t) => {
  t.true(globMatches('rabbitmq-cluster-server-*', 'rabbitmq-cluster-server-0'));
  t.true(globMatches('*', ''));
  t.true(globMatches('a*b*c', 'abc'));
  t.true(globMatches('a*b*c', 'a-b-b-c'));
  t.false(globMatches('a*b*c', 'a-c'));
  t.false(globMatches('ab*ba', 'aba'), 'prefix and suffix may not overlap');
  t.false(globMatches('server', 'server-0'));
  t.true(globMatches('a.b', 'a.b'));
  t.false(globMatches('a.b', 'axb'), 'no regular expression syntax');
});

test('command patterns: one glob per argument, a lone * for any number of arguments', (t) => {
  t.true(commandMatches(['rabbitmqctl', '*'], ['rabbitmqctl']));
  t.true(commandMatches(['rabbitmqctl', '*'], ['rabbitmqctl', 'list_queues', '--quiet']));
  t.false(commandMatches(['rabbitmqctl', '*'], ['rabbitmq-queues', 'check']));
  t.true(commandMatches(['sh', '-c', 'rabbitmqctl *'], ['sh', '-c', 'rabbitmqctl enable_feature_flag all']));
  t.false(commandMatches(['sh', '-c', 'rabbitmqctl *'], ['sh', '-c', 'rabbitmqctl x', 'extra']));
  t.true(commandMatches(['*', 'status'], ['rabbitmqctl', '-n', 'node', 'status']));
  t.false(commandMatches(['ls'], ['ls', '-l']), 'exact argv without a wildcard');
  t.true(commandMatches(['ls', '-l'], ['ls', '-l']));
});

const RULES: ExecRule[] = [
  { container: 'rabbitmq', command: ['rabbitmqctl', '*'], exitCode: 0, stdout: 'ok\n', stderr: '' },
  { pod: 'rabbitmq-cluster-server-*', commandContains: 'rabbitmq-queues', exitCode: 69, stdout: '', stderr: 'not ready\n' },
  { namespace: 'kube-*', exitCode: 1, stdout: '', stderr: 'denied' },
];

test('the first matching exec rule answers; none means success with empty output', (t) => {
  const call = { namespace: 'default', pod: 'rabbitmq-cluster-server-0', container: 'rabbitmq', command: ['rabbitmqctl', 'status'] };
  t.deepEqual(answerExec(RULES, call), { exitCode: 0, stdout: 'ok\n', stderr: '', rule: 0 });
  t.deepEqual(answerExec(RULES, { ...call, command: ['sh', '-c', 'rabbitmq-queues check_if_node_is_quorum_critical'] }), {
    exitCode: 69,
    stdout: '',
    stderr: 'not ready\n',
    rule: 1,
  });
  t.deepEqual(answerExec(RULES, { ...call, pod: 'other', command: ['rabbitmq-queues'] }), { exitCode: 0, stdout: '', stderr: '' });
  t.is(answerExec(RULES, { ...call, namespace: 'kube-system', command: ['true'] }).rule, 2);
  t.deepEqual(answerExec([], call), { exitCode: 0, stdout: '', stderr: '' });
  // The substring is taken from the argv joined by single spaces.
  t.is(answerExec([{ commandContains: 'a b', exitCode: 2, stdout: '', stderr: '' }], { ...call, command: ['a', 'b'] }).exitCode, 2);
});

test('log rules match on namespace, pod and container; the default is an empty log', (t) => {
  const rules = [
    { pod: 'db-*', container: 'db', text: 'ready\n' },
    { namespace: 'x', text: 'x' },
  ];
  t.deepEqual(answerLog(rules, { namespace: 'default', pod: 'db-0', container: 'db' }), { text: 'ready\n', rule: 0 });
  t.deepEqual(answerLog(rules, { namespace: 'default', pod: 'db-0', container: 'sidecar' }), { text: '' });
  t.deepEqual(answerLog(rules, { namespace: 'x', pod: 'db-0', container: 'sidecar' }), { text: 'x', rule: 1 });
});
