/**
 * The controller's pods/exec, attach and log calls, answered by the proxy from exec/log rules: with
 * client-go v0.20's SPDY executor (fixtures/clients/go-exec, what Sieve-era operators such as
 * rabbitmq's cluster-operator use) and kubectl (WebSocket, then SPDY), over TLS as in a run; and each
 * call in the controller trace (request, 101, pod-exec) and in `onPodExec` (the cluster trace's copy).
 */
import test from 'ava';
import { execFile, spawnSync } from 'node:child_process';
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { PodExecEvent, Unstamped } from '../../src/model/trace.js';
import type { PodStreamingRules } from '../../src/model/exec-rules.js';
import { startRecordedProxy, waitFor } from './helpers.js';
import { scratchDir } from '../_scratch-dir.js';

const GO_EXEC = fileURLToPath(new URL('../../../fixtures/clients/go-exec/bin/go-exec', import.meta.url));
const BUILD = fileURLToPath(new URL('../../../scripts/build-go-exec.sh', import.meta.url));
const KUBECTL = process.env.KUBECTL ?? '/usr/bin/kubectl';

/** Builds the client if needed (a no-op when up to date; nothing without `go`). */
function goExecUnavailable(): string | undefined {
  const r = spawnSync('sh', [BUILD], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`scripts/build-go-exec.sh failed (exit ${r.status}):\n${r.stderr}`);
  return existsSync(GO_EXEC) ? undefined : `${GO_EXEC} is not built (no \`go\` on PATH?)`;
}

const RULES: PodStreamingRules = {
  exec: [
    {
      pod: 'rabbitmq-cluster-server-*',
      container: 'rabbitmq',
      command: ['rabbitmqctl', '*'],
      exitCode: 0,
      stdout: 'Status of node rabbit@0\n',
      stderr: 'warning: x\n',
    },
    { commandContains: 'rabbitmq-queues', exitCode: 69, stdout: '', stderr: 'quorum critical\n' },
  ],
  logs: [{ container: 'rabbitmq', text: 'started\n' }],
};

async function setup(t: import('ava').ExecutionContext) {
  const podExecs: Array<Unstamped<PodExecEvent>> = [];
  const env = await startRecordedProxy(t, { tls: true, podStreaming: RULES, onPodExec: (e) => podExecs.push(e) });
  await env.client.apply({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'rabbitmq-cluster-server-0', namespace: 'default' },
    spec: { nodeName: 'node-1', containers: [{ name: 'rabbitmq', image: 'rabbitmq' }] },
  });
  // The simulated kubelet starts the container after the pod is bound, and an exec before that is
  // refused as a kubelet refuses it ('container not found'): the tests exec into a running container.
  await waitFor('the rabbitmq container to run', async () => {
    const status = (await env.client.get('Pod/default/rabbitmq-cluster-server-0'))?.status as
      { containerStatuses?: Array<{ name?: string; state?: { running?: unknown } }> } | undefined;
    return status?.containerStatuses?.some((c) => c.name === 'rabbitmq' && c.state?.running !== undefined) ?? false;
  });
  const dir = scratchDir(t, 'kperturb-exec-');
  const kubeconfig = join(dir, 'kubeconfig');
  writeFileSync(kubeconfig, env.proxy.kubeconfigYaml());
  const run = (cmd: string, args: string[], extraEnv: Record<string, string> = {}) =>
    new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
      execFile(cmd, args, { env: { ...process.env, HOME: dir, KUBECONFIG: kubeconfig, ...extraEnv }, timeout: 60_000 }, (err, stdout, stderr) => {
        resolve({ code: err ? (typeof err.code === 'number' ? err.code : 1) : 0, stdout, stderr });
      });
    });
  return { ...env, podExecs, kubeconfig, run };
}

interface GoExecResult {
  stdout: string;
  stderr: string;
  exitCode: number;
  error: string;
}

test('client-go v0.20 SPDY executor through the proxy: stdout, stderr and exit code from the rules', async (t) => {
  const why = goExecUnavailable();
  if (why) {
    t.log(`skipped: ${why}`);
    t.pass();
    return;
  }
  const { run, kubeconfig, trace, podExecs } = await setup(t);
  const goExec = async (...args: string[]): Promise<GoExecResult> => {
    const r = await run(GO_EXEC, [kubeconfig, 'default', 'rabbitmq-cluster-server-0', 'rabbitmq', ...args]);
    t.is(r.code, 0, r.stderr);
    return JSON.parse(r.stdout) as GoExecResult;
  };

  t.deepEqual(await goExec('rabbitmqctl', 'status'), { stdout: 'Status of node rabbit@0\n', stderr: 'warning: x\n', exitCode: 0, error: '' });
  t.deepEqual(await goExec('sh', '-c', 'rabbitmq-queues check_if_node_is_quorum_critical'), {
    stdout: '',
    stderr: 'quorum critical\n',
    exitCode: 69,
    error: 'command terminated with exit code 69',
  });
  t.deepEqual(await goExec('true'), { stdout: '', stderr: '', exitCode: 0, error: '' });

  // A pod the API server does not have: its 404, before any upgrade.
  const missing = await run(GO_EXEC, [kubeconfig, 'default', 'nope', 'rabbitmq', 'true']);
  const missingResult = JSON.parse(missing.stdout) as GoExecResult;
  t.is(missingResult.exitCode, -1);
  t.regex(missingResult.error, /pods "nope" not found/);

  // The controller trace: each call is a request, a 101 and a pod-exec event naming what ran.
  const execs = trace.ofType('pod-exec');
  t.is(execs.length, 4);
  t.like(execs[3], { key: 'Pod/default/nope', status: 404, delivered: false, message: 'pods "nope" not found' });
  t.like(
    trace.ofType('response').find((r) => r.id === execs[3]!.id),
    { status: 404 },
  );
  const first = execs[0]!;
  t.like(first, {
    subresource: 'exec',
    key: 'Pod/default/rabbitmq-cluster-server-0',
    container: 'rabbitmq',
    command: ['rabbitmqctl', 'status'],
    status: 101,
    exitCode: 0,
    rule: 0,
    transport: 'spdy',
    protocol: 'v4.channel.k8s.io',
    delivered: true,
    stdoutBytes: 24,
    stderrBytes: 11,
  });
  const request = trace.ofType('request').find((r) => r.id === first.id)!;
  t.like(request, { method: 'POST', verb: 'create', key: 'Pod/default/rabbitmq-cluster-server-0', resource: { resource: 'pods', subresource: 'exec' } });
  t.like(
    trace.ofType('response').find((r) => r.id === first.id),
    { status: 101 },
  );
  t.like(execs[1], { command: ['sh', '-c', 'rabbitmq-queues check_if_node_is_quorum_critical'], exitCode: 69, rule: 1 });
  t.like(execs[2], { command: ['true'], exitCode: 0, delivered: true });
  t.false('rule' in execs[2]!, 'the default answer names no rule');
  // The same events for the cluster trace.
  t.deepEqual(
    podExecs.map((e) => [e.id, e.command, e.exitCode, e.status]),
    execs.map((e) => [e.id, e.command, e.exitCode, e.status]),
  );
});

test('kubectl exec and logs through the proxy (WebSocket, SPDY, HTTP/2), and a missing pod', async (t) => {
  if (!existsSync(KUBECTL)) {
    t.fail(`kubectl not found at ${KUBECTL}`);
    return;
  }
  const { run, trace, podExecs } = await setup(t);
  const ws = await run(KUBECTL, ['exec', 'rabbitmq-cluster-server-0', '--', 'rabbitmqctl', 'status']);
  t.deepEqual(ws, { code: 0, stdout: 'Status of node rabbit@0\n', stderr: 'warning: x\n' });
  const spdy = await run(KUBECTL, ['exec', 'rabbitmq-cluster-server-0', '--', 'rabbitmq-queues', 'x'], { KUBECTL_REMOTE_COMMAND_WEBSOCKETS: 'false' });
  t.deepEqual(spdy, { code: 69, stdout: '', stderr: 'quorum critical\ncommand terminated with exit code 69\n' });
  t.deepEqual(await run(KUBECTL, ['logs', 'rabbitmq-cluster-server-0']), { code: 0, stdout: 'started\n', stderr: '' });
  const missing = await run(KUBECTL, ['exec', 'nope', '--', 'true']);
  t.not(missing.code, 0);
  t.regex(missing.stderr, /NotFound.*pods "nope" not found/);

  const execs = trace.ofType('pod-exec');
  t.like(execs[0], { subresource: 'exec', transport: 'websocket', protocol: 'v5.channel.k8s.io', exitCode: 0, delivered: true });
  t.like(execs[1], { subresource: 'exec', transport: 'spdy', exitCode: 69, delivered: true });
  t.like(execs[2], { subresource: 'log', transport: 'http', status: 200, rule: 0, container: 'rabbitmq', stdoutBytes: 8 });
  t.true(podExecs.some((e) => e.subresource === 'log'));
  // kubectl GETs the pod first (it needs its containers), then the call is refused with the server's 404.
  t.false(
    execs.some((e) => e.key === 'Pod/default/nope'),
    'kubectl stops at its own GET',
  );
});

test("an exec on a pod of a node whose kubelet stopped posting status is refused through the proxy, as kube-apiserver can't dial it", async (t) => {
  if (!existsSync(KUBECTL)) {
    t.fail(`kubectl not found at ${KUBECTL}`);
    return;
  }
  const { run, client, trace } = await setup(t);
  await client.apply({ apiVersion: 'v1', kind: 'Node', metadata: { name: 'node-1' } });
  const conditions = [{ type: 'Ready', status: 'Unknown', reason: 'NodeStatusUnknown', message: 'Kubelet stopped posting node status.' }];
  await client.patch('Node/node-1', 'merge', { status: { conditions } }, 'status');
  const refused = await run(KUBECTL, ['exec', 'rabbitmq-cluster-server-0', '--', 'rabbitmqctl', 'status']);
  t.not(refused.code, 0);
  t.regex(refused.stderr, /error dialing backend/);
  t.like(trace.ofType('pod-exec')[0], { subresource: 'exec', status: 500, delivered: false });
});
