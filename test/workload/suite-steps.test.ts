/**
 * The workload steps that chainsaw and KUTTL suites need: `assert` and `error` wait on watches for a
 * partial match (or its absence), `command` and `script` run a process with the cluster's kubeconfig.
 * Run against the embedded cluster through runWorkload, as the coordinator runs them.
 */
import test from 'ava';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { KubeClient } from '../../src/kube/client.js';
import { runWorkload } from '../../src/workload/runner.js';
import type { ProcessStep, Workload, WorkloadStep } from '../../src/config/config.js';
import type { KubeObject } from '../../src/model/object-key.js';
import { MemoryTrace, startCluster } from '../proxy/helpers.js';
import { scratchDir } from '../_scratch-dir.js';

const KUBECTL = process.env.KUBECTL ?? '/usr/bin/kubectl';

async function setup(t: import('ava').ExecutionContext) {
  const cluster = await startCluster(t);
  const client = new KubeClient(cluster.url, cluster.clientOptions());
  t.teardown(() => client.close());
  const dir = scratchDir(t, 'kperturb-suite-steps-');
  const file = (name: string, content: string): string => {
    writeFileSync(join(dir, name), content);
    return join(dir, name);
  };
  const run = async (...steps: WorkloadStep[]) => {
    const trace = new MemoryTrace();
    const outcome = await runWorkload(client, { name: 'w', steps } satisfies Workload, trace);
    return { outcome, trace, events: trace.ofType('workload-step') };
  };
  return { client, dir, file, run };
}

const configMap = (name: string, data: Record<string, string>, labels: Record<string, string> = {}): KubeObject => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name, ...(Object.keys(labels).length > 0 ? { labels } : {}) },
  data,
});
const expect = (objects: KubeObject[], timeoutSeconds = 30) => ({ objects, timeoutSeconds });
const proc = (argv: string[], dir: string, timeoutSeconds = 30): ProcessStep => ({ argv, env: {}, workingDir: dir, timeoutSeconds });

test('an assert waits until the cluster makes the object match (a Deployment becomes available), and the trace calls it a wait', async (t) => {
  const { file, run } = await setup(t);
  const deployment = file(
    'deploy.yaml',
    'apiVersion: apps/v1\nkind: Deployment\nmetadata: { name: web }\nspec:\n  replicas: 1\n  selector: { matchLabels: { app: web } }\n  template:\n    metadata: { labels: { app: web } }\n    spec: { containers: [{ name: c, image: nginx }] }\n',
  );
  const expected: KubeObject = { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'web' }, status: { readyReplicas: 1, availableReplicas: 1 } };
  const { outcome, events } = await run({ apply: deployment }, { assert: expect([expected]) });
  t.deepEqual(outcome, { ok: true });
  const start = events.find((e) => e.index === 1 && e.phase === 'start')!;
  t.is(start.action, 'wait', 'an assert only reads: the planner must not take it for a workload write');
  t.deepEqual(start.keys, ['Deployment/default/web']);
  const done = events.find((e) => e.index === 1 && e.phase === 'done')!;
  t.true(done.polls! >= 1);
  t.truthy(done.metAt, 'the resourceVersion that met it, as a waitFor records');
});

test('an assert that never holds fails at its timeout and says which field differs', async (t) => {
  const { client, run } = await setup(t);
  await client.apply(configMap('settings', { mode: 'fast' }));
  const { outcome } = await run({ assert: expect([configMap('settings', { mode: 'safe' })], 0.3) });
  t.false(outcome.ok);
  t.is(outcome.failedStep, 0);
  t.regex(outcome.error!, /timed out after 0\.3s waiting for the objects to match: ConfigMap\/settings: data\.mode: expected "safe", found "fast"/);
});

test('an assert without a name holds when any object of the kind with its labels matches', async (t) => {
  const { client, run } = await setup(t);
  await client.apply(configMap('a', { role: 'primary' }, { app: 'db' }));
  await client.apply(configMap('b', { role: 'replica' }, { app: 'db' }));
  await client.apply(configMap('c', { role: 'arbiter' }, { app: 'other' }));
  const unnamed = (role: string): KubeObject => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { labels: { app: 'db' } }, data: { role } });
  t.deepEqual((await run({ assert: expect([unnamed('replica')]) })).outcome, { ok: true });
  const miss = await run({ assert: expect([unnamed('arbiter')], 0.3) });
  t.regex(miss.outcome.error!, /none of 2 matches/, 'c has another label: it is no candidate');
});

test('an error step waits until no object matches: it holds once the object is deleted, and fails while it still matches', async (t) => {
  const { client, run } = await setup(t);
  await client.apply(configMap('doomed', { x: '1' }));
  const held = await run({ delete: { key: 'ConfigMap/default/doomed' } }, { error: expect([configMap('doomed', { x: '1' })]) });
  t.deepEqual(held.outcome, { ok: true });
  t.is(held.events.find((e) => e.index === 1 && e.phase === 'start')!.action, 'wait');

  await client.apply(configMap('stays', { x: '1' }));
  const failed = await run({ error: expect([configMap('stays', { x: '1' })], 0.3) });
  t.regex(failed.outcome.error!, /waiting for the objects to stop matching: ConfigMap\/stays: it exists and matches/);
  // A different value is not the error state.
  t.deepEqual((await run({ error: expect([configMap('stays', { x: '2' })]) })).outcome, { ok: true });
});

test('a command runs with KUBECONFIG reaching the cluster, its output goes into the trace, and it counts as a write', async (t) => {
  t.true(existsSync(KUBECTL), `kubectl not found at ${KUBECTL}: install it or set KUBECTL`);
  const { client, dir, run } = await setup(t);
  const { outcome, events } = await run({ command: proc([KUBECTL, 'create', 'configmap', 'from-kubectl', '--from-literal=k=v'], dir) });
  t.deepEqual(outcome, { ok: true });
  t.deepEqual((await client.get('ConfigMap/default/from-kubectl'))?.data, { k: 'v' });
  t.regex(events.find((e) => e.phase === 'done')!.output!, /configmap\/from-kubectl created/);
  t.is(events.find((e) => e.phase === 'start')!.action, 'write', 'a command may write anything');
});

test('a script that exits non-zero fails the workload with its exit code and what it printed', async (t) => {
  const { dir, run } = await setup(t);
  const { outcome, events } = await run({ script: proc(['sh', '-c', 'echo checking; echo "replicas wrong" >&2; exit 3'], dir) }, { sleep: 0 });
  t.false(outcome.ok);
  t.regex(outcome.error!, /sh exited with code 3; it printed: checking \| replicas wrong/);
  t.regex(events.find((e) => e.phase === 'failed')!.output!, /replicas wrong/);
  t.is(events.filter((e) => e.index === 1).length, 0, 'the step after it did not run');
});

test('a command that outlives its timeout is stopped with everything it started, and fails the step', async (t) => {
  const { dir, run } = await setup(t);
  const pidFile = join(dir, 'child.pid');
  // The shell starts a child (its output elsewhere, so the step ends when the shell does); the
  // timeout must end the child too, not only the shell.
  const { outcome } = await run({ script: proc(['sh', '-c', `sleep 60 >/dev/null 2>&1 & echo $! > ${pidFile}; wait`], dir, 0.5) });
  t.false(outcome.ok);
  t.regex(outcome.error!, /sh did not finish within 0\.5s/);
  const child = readFileSync(pidFile, 'utf8').trim();
  // Gone, or a zombie nobody reaps (PID 1 of a container may not): either way no longer running.
  const stat = existsSync(`/proc/${child}/stat`) ? readFileSync(`/proc/${child}/stat`, 'utf8') : '';
  t.true(stat === '' || / Z /.test(stat), `the script's child ${child} still runs: ${stat}`);
});
