/**
 * pods/exec, attach, log and portforward on the embedded cluster, with kubectl (WebSocket first, as
 * kubectl >= 1.30 does, and SPDY, its fallback and what older clients speak) and raw requests for the
 * refusals. The answers come from exec/log rules (src/model/exec-rules.ts).
 */
import test, { type ExecutionContext } from 'ava';
import http from 'node:http';
import { kubectlFor, ok, type Kubectl } from './kubectl-helper.js';
import { clusterAuth, raw } from './helpers.js';
import type { PodStreamingRules } from '../../src/model/exec-rules.js';

const RULES: PodStreamingRules = {
  exec: [
    { container: 'rabbitmq', command: ['rabbitmqctl', '*'], exitCode: 0, stdout: 'Status of node rabbit@server-0\n', stderr: 'a warning\n' },
    { pod: 'server-*', commandContains: 'rabbitmq-queues', exitCode: 69, stdout: 'partial\n', stderr: 'not ready\n' },
  ],
  logs: [{ pod: 'server-*', container: 'rabbitmq', text: 'one\ntwo\nthree\n' }],
};

const SPDY_ONLY = { KUBECTL_REMOTE_COMMAND_WEBSOCKETS: 'false' };

async function withPods(t: ExecutionContext, kubectl: Kubectl): Promise<void> {
  const pods = kubectl.file(
    'pods.yaml',
    `apiVersion: v1
kind: Pod
metadata: { name: server-0 }
spec:
  nodeName: node-1
  containers: [{ name: rabbitmq, image: rabbitmq }]
---
apiVersion: v1
kind: Pod
metadata: { name: two }
spec:
  nodeName: node-1
  initContainers: [{ name: setup, image: busybox }]
  containers: [{ name: a, image: busybox }, { name: b, image: busybox }]
---
apiVersion: v1
kind: Pod
metadata: { name: unscheduled }
spec:
  containers: [{ name: a, image: busybox }]
`,
  );
  await ok(t, kubectl, 'apply', '-f', pods);
}

test("kubectl exec gets the matching rule's output and exit code, over WebSocket and over SPDY", async (t) => {
  const kubectl = await kubectlFor(t, { podStreaming: RULES, simulation: false });
  await withPods(t, kubectl);
  for (const [transport, run] of [
    ['websocket', kubectl],
    ['spdy', kubectl.withEnv(SPDY_ONLY)],
  ] as const) {
    const status = await run('exec', 'server-0', '--', 'rabbitmqctl', 'status');
    t.deepEqual(status, { code: 0, stdout: 'Status of node rabbit@server-0\n', stderr: 'a warning\n' }, transport);
    const failing = await run('exec', 'server-0', '-c', 'rabbitmq', '--', 'sh', '-c', 'rabbitmq-queues check_if_node_is_quorum_critical');
    t.is(failing.code, 69, transport);
    t.is(failing.stdout, 'partial\n', transport);
    t.is(failing.stderr, 'not ready\ncommand terminated with exit code 69\n', transport);
    // No rule: success and no output, as a command that prints nothing.
    t.deepEqual(await run('exec', 'two', '-c', 'b', '--', 'true'), { code: 0, stdout: '', stderr: '' }, transport);
  }
});

test("kubectl exec gets kube-apiserver's refusals: missing pod, container to choose, no node", async (t) => {
  const kubectl = await kubectlFor(t, { podStreaming: RULES, simulation: false });
  await withPods(t, kubectl);
  const missing = await kubectl('exec', 'nope', '--', 'true');
  t.not(missing.code, 0);
  t.regex(missing.stderr, /NotFound.*pods "nope" not found/);
  // kubectl picks the first container itself unless told; with an unknown one the server says no.
  const wrong = await kubectl('exec', 'two', '-c', 'zzz', '--', 'true');
  t.not(wrong.code, 0);
  t.regex(wrong.stderr, /container zzz is not valid for pod two/);
  const unscheduled = await kubectl('exec', 'unscheduled', '--', 'true');
  t.not(unscheduled.code, 0);
  t.regex(unscheduled.stderr, /pod unscheduled does not have a host assigned/);
});

test('kubectl exec is refused, as by a kubelet, on a node that is not Ready and in a container that is not running', async (t) => {
  const kubectl = await kubectlFor(t, { podStreaming: RULES, simulation: false });
  const objects = kubectl.file(
    'kubelets.yaml',
    ['gone', 'down', 'up']
      .map(
        (node) =>
          `apiVersion: v1\nkind: Node\nmetadata: { name: ${node} }\n---\napiVersion: v1\nkind: Pod\nmetadata: { name: on-${node} }\nspec:\n  nodeName: ${node}\n  containers: [{ name: rabbitmq, image: rabbitmq }]\n`,
      )
      .join('---\n'),
  );
  await ok(t, kubectl, 'apply', '-f', objects);
  const ready = (node: string, status: string, message: string) =>
    ok(
      t,
      kubectl,
      'patch',
      'node',
      node,
      '--subresource=status',
      '--type=merge',
      '-p',
      JSON.stringify({ status: { conditions: [{ type: 'Ready', status, message }] } }),
    );
  await ready('gone', 'Unknown', 'Kubelet stopped posting node status.');
  await ready('down', 'False', 'container runtime is down');
  await ready('up', 'True', 'kubelet is posting ready status');
  const running = { name: 'rabbitmq', ready: true, restartCount: 0, image: 'rabbitmq', imageID: '', state: { running: { startedAt: '2024-05-01T10:00:00Z' } } };
  for (const pod of ['on-gone', 'on-down', 'on-up']) {
    await ok(
      t,
      kubectl,
      'patch',
      'pod',
      pod,
      '--subresource=status',
      '--type=merge',
      '-p',
      JSON.stringify({ status: { phase: 'Running', containerStatuses: [running] } }),
    );
  }
  const up = await kubectl('exec', 'on-up', '--', 'rabbitmqctl', 'status');
  t.is(up.code, 0, up.stderr);
  const unreachable = await kubectl('exec', 'on-gone', '--', 'rabbitmqctl', 'status');
  t.not(unreachable.code, 0);
  t.regex(unreachable.stderr, /error dialing backend/);
  const runtimeDown = await kubectl('exec', 'on-down', '--', 'rabbitmqctl', 'status');
  t.not(runtimeDown.code, 0);
  t.regex(runtimeDown.stderr, /container runtime is down/);
  const crashed = { ...running, ready: false, state: { waiting: { reason: 'CrashLoopBackOff' } } };
  await ok(t, kubectl, 'patch', 'pod', 'on-up', '--subresource=status', '--type=merge', '-p', JSON.stringify({ status: { containerStatuses: [crashed] } }));
  const notRunning = await kubectl('exec', 'on-up', '--', 'rabbitmqctl', 'status');
  t.not(notRunning.code, 0);
  t.regex(notRunning.stderr, /container not found \("rabbitmq"\)/);
});

test('kubectl logs gets the matching log rule, with --tail; no rule means an empty log', async (t) => {
  const kubectl = await kubectlFor(t, { podStreaming: RULES, simulation: false });
  await withPods(t, kubectl);
  t.is(await ok(t, kubectl, 'logs', 'server-0'), 'one\ntwo\nthree\n');
  t.is(await ok(t, kubectl, 'logs', 'server-0', '--tail', '2'), 'two\nthree\n');
  t.is(await ok(t, kubectl, 'logs', 'two', '-c', 'a'), '');
  // kubectl picks a container itself; a client that names none gets kube-apiserver's BadRequest.
  const choose = await fetch(`${kubectl.env.cluster.url}/api/v1/namespaces/default/pods/two/log`, { headers: clusterAuth(kubectl.env.cluster) });
  t.is(choose.status, 400);
  t.like(await choose.json(), {
    kind: 'Status',
    reason: 'BadRequest',
    message: 'a container name must be specified for pod two, choose one of: [a b] or one of the init containers: [setup]',
  });
});

/** One upgrade request; resolves with the status line's code, headers and body (non-101) or the head (101). */
function upgradeRequest(
  url: string,
  path: string,
  headers: Record<string, string>,
  method = 'POST',
): Promise<{ status: number; headers: http.IncomingHttpHeaders; body: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request(url + path, { method, headers: { Connection: 'Upgrade', ...headers } });
    req.on('upgrade', (res, socket) => {
      socket.destroy();
      resolve({ status: res.statusCode ?? 0, headers: res.headers, body: '' });
    });
    req.on('response', (res) => {
      let body = '';
      res.on('data', (c: Buffer) => (body += c.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

test('raw requests: port-forward is refused with a Status; protocols are negotiated as the kubelet does', async (t) => {
  const kubectl = await kubectlFor(t, { podStreaming: RULES, simulation: false });
  await withPods(t, kubectl);
  const url = kubectl.env.cluster.url;
  const base = '/api/v1/namespaces/default/pods/server-0';
  const auth = clusterAuth(kubectl.env.cluster);
  const spdy = { Upgrade: 'SPDY/3.1', ...auth };

  const pf = await upgradeRequest(url, `${base}/portforward?ports=80`, { ...spdy, 'X-Stream-Protocol-Version': 'portforward.k8s.io' });
  t.is(pf.status, 400);
  t.like(JSON.parse(pf.body), { kind: 'Status', status: 'Failure', reason: 'BadRequest' });
  t.regex(JSON.parse(pf.body).message, /pods\/portforward is not supported/);

  const noProtocol = await upgradeRequest(url, `${base}/exec?command=true&stdout=true`, { ...spdy, 'X-Stream-Protocol-Version': 'v9.channel.k8s.io' });
  t.is(noProtocol.status, 403);
  t.is(noProtocol.headers['x-accepted-stream-protocol-versions'], 'v5.channel.k8s.io, v4.channel.k8s.io, v3.channel.k8s.io, v2.channel.k8s.io, channel.k8s.io');

  const negotiated = await upgradeRequest(url, `${base}/exec?command=true&stdout=true`, {
    ...spdy,
    'X-Stream-Protocol-Version': 'v9.channel.k8s.io, v4.channel.k8s.io, v3.channel.k8s.io',
  });
  t.is(negotiated.status, 101);
  t.is(negotiated.headers['x-stream-protocol-version'], 'v4.channel.k8s.io');

  const noStreams = await upgradeRequest(url, `${base}/exec?command=true`, { ...spdy, 'X-Stream-Protocol-Version': 'v4.channel.k8s.io' });
  t.is(noStreams.status, 400);
  t.regex(JSON.parse(noStreams.body).message, /you must specify at least 1 of stdin, stdout, stderr/);

  const noCommand = await upgradeRequest(url, `${base}/exec?stdout=true`, { ...spdy, 'X-Stream-Protocol-Version': 'v4.channel.k8s.io' });
  t.is(noCommand.status, 400);

  // Without an upgrade, exec is a BadRequest, as kube-apiserver answers it.
  const plain = await fetch(`${url}${base}/exec?command=true&stdout=true`, { method: 'POST', headers: auth });
  t.is(plain.status, 400);
  t.like(await plain.json(), { kind: 'Status', message: 'Upgrade request required' });
});

test('discovery lists the pods streaming subresources with their verbs', async (t) => {
  const kubectl = await kubectlFor(t, { simulation: false });
  // Not `kubectl get --raw`: it drops the server URL's path, where client-go's token is over plain HTTP.
  const list = (await raw(kubectl.env.cluster, 'GET', '/api/v1')).json;
  const sub = (name: string) => (list.resources as Array<{ name: string; verbs: string[]; kind: string }>).find((r) => r.name === name);
  t.like(sub('pods/exec'), { kind: 'PodExecOptions', verbs: ['create', 'get'] });
  t.like(sub('pods/attach'), { kind: 'PodAttachOptions', verbs: ['create', 'get'] });
  t.like(sub('pods/log'), { kind: 'Pod', verbs: ['get'] });
  t.like(sub('pods/portforward'), { kind: 'PodPortForwardOptions', verbs: ['create', 'get'] });
});
