/**
 * Workload steps against the embedded cluster: a wait whose condition never holds fails the workload,
 * unless it says `onTimeout: continue` (Sieve's soft timeouts), when the next steps still run.
 */
import test from 'ava';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { KubeClient } from '../../src/kube/client.js';
import { runWorkload } from '../../src/workload/runner.js';
import type { Workload } from '../../src/config/config.js';
import { MemoryTrace, startCluster } from '../proxy/helpers.js';

async function setup(t: import('ava').ExecutionContext) {
  const cluster = await startCluster(t);
  const client = new KubeClient(cluster.url, cluster.clientOptions());
  t.teardown(() => client.close());
  const dir = mkdtempSync(join(tmpdir(), 'kperturb-workload-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
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
