/**
 * Workload steps against the embedded cluster: a wait whose condition never holds fails the workload,
 * unless it says `onTimeout: continue` (Sieve's soft timeouts), when the next steps still run.
 */
import test from 'ava';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { KubeClient } from '../../src/kube/client.js';
import { runWorkload } from '../../src/workload/runner.js';
import type { Workload } from '../../src/config/config.js';
import { MemoryTrace, startCluster } from '../proxy/helpers.js';
import { scratchDir } from '../_scratch-dir.js';

async function setup(t: import('ava').ExecutionContext) {
  const cluster = await startCluster(t);
  const client = new KubeClient(cluster.url, cluster.clientOptions());
  t.teardown(() => client.close());
  const dir = scratchDir(t, 'kperturb-workload-');
  const manifest = join(dir, 'cm.yaml');
  writeFileSync(manifest, 'apiVersion: v1\nkind: ConfigMap\nmetadata: { name: after, namespace: default }\n');
  return { client, manifest };
}

const waitForMissing = (onTimeout?: 'fail' | 'continue') => ({
  waitFor: { key: 'ConfigMap/default/never', timeoutSeconds: 0.2, ...(onTimeout ? { onTimeout } : {}) },
});

test('a wait with onTimeout: continue that never holds lets the workload go on, and the trace says it timed out', async (t) => {
  const { client, manifest } = await setup(t);
  const trace = new MemoryTrace();
  const workload: Workload = { name: 'w', steps: [waitForMissing('continue'), { apply: manifest }] };
  t.deepEqual(await runWorkload(client, workload, trace), { ok: true });
  t.truthy(await client.get('ConfigMap/default/after'), 'the step after the wait ran');
  const waitDone = trace.ofType('workload-step').find((e) => e.index === 0 && e.phase === 'done');
  t.is(waitDone?.timedOut, true);
  t.regex(waitDone!.description, /\(0\.2s, then go on\)$/);
});

test('by default a wait that never holds fails the workload at that step', async (t) => {
  const { client, manifest } = await setup(t);
  const workload: Workload = { name: 'w', steps: [waitForMissing(), { apply: manifest }] };
  const outcome = await runWorkload(client, workload, new MemoryTrace());
  t.false(outcome.ok);
  t.is(outcome.failedStep, 0);
  t.regex(outcome.error!, /timed out after 0\.2s waiting for ConfigMap\/default\/never: it does not exist/);
  t.is(await client.get('ConfigMap/default/after'), undefined);
});

test('a wait on a kind the cluster does not serve fails at once, naming the kind, instead of waiting out its timeout', async (t) => {
  const { client } = await setup(t);
  const workload: Workload = { name: 'w', steps: [{ waitFor: { key: 'Widget/default/a', timeoutSeconds: 3600 } }] };
  const outcome = await runWorkload(client, workload, new MemoryTrace());
  t.is(outcome.failedStep, 0);
  t.is(outcome.error, 'step 1 (wait for Widget/default/a exists (3600s)): the cluster serves no kind Widget');
});

test('a wait reads keyed list items as masks and alarms write them, and condition: Ready waits as kubectl wait does', async (t) => {
  const { client } = await setup(t);
  const dir = scratchDir(t, 'kperturb-workload-');
  const pod = join(dir, 'pod.yaml');
  writeFileSync(pod, 'apiVersion: v1\nkind: Pod\nmetadata: { name: p, namespace: default }\nspec: { containers: [{ name: c, image: x }] }\n');
  // The embedded kubelet makes the pod Running and Ready; both waits hold only once the condition
  // of type Ready says "True", which a numeric-index-only reader never sees.
  const workload: Workload = {
    name: 'w',
    steps: [
      { apply: pod },
      { waitFor: { key: 'Pod/default/p', field: 'status.conditions[type=Ready].status', equals: 'True', timeoutSeconds: 30 } },
      { waitFor: { key: 'Pod/default/p', condition: 'Ready', field: 'status.conditions[type=Ready].status', equals: 'True', timeoutSeconds: 30 } },
    ],
  };
  const trace = new MemoryTrace();
  t.deepEqual(await runWorkload(client, workload, trace), { ok: true });
  const conditions = ((await client.get('Pod/default/p'))?.status as { conditions?: Array<{ type: string; status: string }> }).conditions;
  t.is(conditions?.find((c) => c.type === 'Ready')?.status, 'True');
  t.regex(trace.ofType('workload-step').find((e) => e.index === 2 && e.phase === 'done')!.description, /condition Ready/);
});

test('a patch with onError: continue that the API server refuses is recorded as rejected and the workload goes on; without it the workload fails', async (t) => {
  const { client, manifest } = await setup(t);
  // A JSON patch that tests a value the object does not hold: kube-apiserver answers 422.
  const refused = { key: 'ConfigMap/default/after', type: 'json' as const, patch: [{ op: 'test', path: '/metadata/name', value: 'other' }] };
  const trace = new MemoryTrace();
  const workload: Workload = {
    name: 'w',
    steps: [{ apply: manifest }, { patch: { ...refused, onError: 'continue' } }, { delete: { key: 'ConfigMap/default/after' } }],
  };
  t.deepEqual(await runWorkload(client, workload, trace), { ok: true });
  const done = trace.ofType('workload-step').find((e) => e.index === 1 && e.phase === 'done')!;
  t.true(done.rejected! >= 400 && done.rejected! < 500);
  t.truthy(done.error);
  t.is(await client.get('ConfigMap/default/after'), undefined, 'the step after the refused patch ran');
  const failing = await runWorkload(client, { name: 'w', steps: [{ apply: manifest }, { patch: refused }] }, new MemoryTrace());
  t.is(failing.failedStep, 1);
});

test('a settle step needs the coordinator to wait for the controller', async (t) => {
  const { client } = await setup(t);
  const outcome = await runWorkload(client, { name: 'w', steps: [{ settle: { timeoutSeconds: 1 } }] }, new MemoryTrace());
  t.regex(outcome.error!, /settle step needs a controller/);
  let asked = 0;
  const settled = await runWorkload(client, { name: 'w', steps: [{ settle: { timeoutSeconds: 1 } }] }, new MemoryTrace(), {
    settle: (ms) => {
      asked = ms;
      return Promise.resolve(false);
    },
  });
  t.deepEqual(settled, { ok: true });
  t.is(asked, 1000);
});
