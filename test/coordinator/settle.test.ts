/**
 * When a run has settled (coordinator/run.ts isQuiet): a held controller is silent, not done. Found
 * on rabbitmq-operator #758, whose workload's last write is the change that ends the hold: the
 * controller had been quiet (held) for longer than the quiet window when that write returned, the
 * proxy had not yet seen the write, and the run ended before the hold's end and the relist, so
 * Sieve's plan was reported not injected in 3 of 4 runs.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import test, { type ExecutionContext } from 'ava';
import type { Workload } from '../../src/config/config.js';
import { executeRun } from '../../src/coordinator/run.js';
import { isQuiet, Settle } from '../../src/coordinator/settle.js';
import type { ControllerProcess } from '../../src/coordinator/controller-process.js';
import { mirrorControllerConfig } from '../proxy/fixtures/mirror-config.js';
import type { ControllerProxy, ProxyActivity } from '../../proxy/index.js';
import { scratchDir } from '../_scratch-dir.js';

const idle: ProxyActivity = { inFlight: 0, openWatches: 2, lastActivityAt: 0, lastRequestAt: 0, requestsStarted: 10, awaitingRelist: 0, holdsInPlace: 0 };
const after = { now: 10_000, quietMs: 1000, since: 0, startup: false, serializedBacklog: 0 };

test('quiet: nothing in flight, nothing delivered for the quiet window, no hold, no relist pending', (t) => {
  t.true(isQuiet(idle, after));
});

test('a hold still in place is not quiet, however long the held controller has been silent', (t) => {
  t.false(isQuiet({ ...idle, holdsInPlace: 1 }, after));
  t.false(isQuiet({ ...idle, holdsInPlace: 1 }, { ...after, now: 1e9 }));
});

test('a stream a hold expired, not yet watched again, is not quiet (the controller has not relisted)', (t) => {
  t.false(isQuiet({ ...idle, awaitingRelist: 1 }, after));
});

test('activity within the quiet window, a request in flight, a serialized event waiting, or no watch at start-up is not quiet', (t) => {
  t.false(isQuiet({ ...idle, lastActivityAt: 9_500 }, after));
  t.false(isQuiet(idle, { ...after, since: 9_500 }));
  t.false(isQuiet({ ...idle, inFlight: 1 }, after));
  t.false(isQuiet(idle, { ...after, serializedBacklog: 1 }));
  t.false(isQuiet({ ...idle, openWatches: 0 }, { ...after, startup: true }));
  t.true(isQuiet({ ...idle, openWatches: 0 }, after));
});

/** A whole run of the mirror controller whose workload is one apply of ConfigMap src-a. */
async function applyOneSource(t: ExecutionContext, options: Parameters<typeof mirrorControllerConfig>[2]) {
  const dir = scratchDir(t, 'kperturb-settle-');
  const source = join(dir, 'src.yaml');
  writeFileSync(source, 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: src-a, namespace: default}\ndata: {v: "1"}\n');
  const workload: Workload = { name: 'mirror', steps: [{ apply: source }] };
  const runDir = join(dir, 'run');
  const { record } = await executeRun({ config: mirrorControllerConfig(dir, workload, options), workload, runDir });
  return { record, runDir };
}

test("a run whose workload ends with a write settles only after the controller has acted on it (quiet counts from the workload's end)", async (t) => {
  // Found on the getting-started operator: its workload is one apply; the controller had been idle
  // for longer than the quiet window since start-up, so the run ended the moment the apply
  // returned, before the controller had seen it, and every plan was reported not injected.
  const { record, runDir } = await applyOneSource(t, { settle: { quietMs: 1000, timeoutSeconds: 20 } });
  t.is(record.error, undefined);
  t.true(record.settled);
  const endState = readFileSync(join(runDir, 'end-state.json'), 'utf8');
  t.true(endState.includes('mirror-src-a'), "the controller's answer to the workload's last write is in the end state");
});

test('a controller that computes without a request after the workload is not quiet: the run settles once it has written', async (t) => {
  // cass-operator v1.32's first reconcile spends 3.5 s of CPU building a keystore without a request,
  // longer than its quiet window: the run ended mid-reconcile (4 false rollback alarms in explore).
  // Here each reconcile computes for 1.5 s of CPU (at least as long in wall time) before it writes,
  // against a quiet window of 250 ms.
  const { record, runDir } = await applyOneSource(t, { settle: { quietMs: 250, timeoutSeconds: 60 }, env: { MIRROR_COMPUTE_CPU_MS: '1500' } });
  t.is(record.error, undefined);
  t.true(record.settled);
  const endState = readFileSync(join(runDir, 'end-state.json'), 'utf8');
  t.true(endState.includes('mirror-src-a'), "the controller's write after its computation is in the end state");
});

test("with podReadiness 'probe' a run settles only once its pods' readiness is due, not on the controller's quiet before it", async (t) => {
  // Found on rabbitmq resize-pvc: reference runs ended on the operator's quiet before its pod's
  // readiness probe (10 s) was due, slower test runs after it: ~30 false end-state alarms a plan.
  // Here the workload creates a pod ready 2 s after it starts, against a quiet window of 250 ms.
  const dir = scratchDir(t, 'kperturb-settle-');
  const pod = join(dir, 'pod.yaml');
  writeFileSync(
    pod,
    'apiVersion: v1\nkind: Pod\nmetadata: {name: probed, namespace: default}\n' +
      'spec: {containers: [{name: c, image: x, readinessProbe: {tcpSocket: {port: 8080}, initialDelaySeconds: 2}}]}\n',
  );
  const workload: Workload = { name: 'probed', steps: [{ apply: pod }] };
  const runDir = join(dir, 'run');
  const config = mirrorControllerConfig(dir, workload, { settle: { quietMs: 250, timeoutSeconds: 30 }, cluster: { podReadiness: 'probe' } });
  const { record } = await executeRun({ config, workload, runDir });
  t.is(record.error, undefined);
  t.true(record.settled);
  const endState = JSON.parse(readFileSync(join(runDir, 'end-state.json'), 'utf8')) as {
    objects: Record<string, { status?: { conditions?: { type: string; status: string }[] } }>;
  };
  const ready = endState.objects['Pod/default/probed']?.status?.conditions?.find((c) => c.type === 'Ready');
  t.is(ready?.status, 'True', 'the end state has the pod ready, as every run of it ends');
});

/** A Settle over a proxy and a process whose activity and CPU the test sets. */
function settleOver(activity: ProxyActivity, cpu: { usedMs: number; spanMs: number } | undefined, quietMs = 40, transitionPending?: () => boolean) {
  const proxy = { activity: () => ({ ...activity, lastActivityAt: 0 }), serializedBacklog: () => 0 };
  const proc = { cpuUsedWithin: () => cpu };
  return new Settle(proxy as unknown as ControllerProxy, proc as unknown as ControllerProcess, quietMs, transitionPending);
}

test('a change of the managed system pending is activity: the quiet window counts from the last check that saw it', async (t) => {
  let checks = 0;
  let lastSeenAt = 0;
  // Pending for the first 5 checks, then made.
  const pending = () => {
    if (++checks > 5) return false;
    lastSeenAt = Date.now();
    return true;
  };
  t.true(await settleOver(idle, undefined, 200, pending).untilQuiet(60_000, 0));
  t.true(checks > 5);
  t.true(Date.now() - lastSeenAt >= 200, `settled ${Date.now() - lastSeenAt} ms after a check last saw it pending, against a quiet window of 200 ms`);
});

const never = new Promise<never>(() => undefined);

test("a stale view's release waits for the run's quiet: a hold in place, a relist pending or a computing controller is not quiet", async (t) => {
  t.is(await settleOver(idle, { usedMs: 0, spanMs: 40 }).quietWithin(5_000, never), 'quiet');
  // Bounded by 200 ms of the test's own clock: each of these stays not quiet until the bound.
  t.is(await settleOver({ ...idle, holdsInPlace: 1 }, undefined).quietWithin(200, never), 'timeout');
  t.is(await settleOver({ ...idle, awaitingRelist: 1 }, undefined).quietWithin(200, never), 'timeout');
  t.is(await settleOver(idle, { usedMs: 40, spanMs: 40 }).quietWithin(200, never), 'timeout');
  t.is(await settleOver({ ...idle, openWatches: 0 }, undefined).quietWithin(200, never), 'timeout', 'a restarted controller with no watch open yet');
});

test("a stale view's release: a controller going round a loop of refused writes ends the wait; a quiet window of 0 never does", async (t) => {
  t.is(await settleOver({ ...idle, inFlight: 1 }, undefined).quietWithin(60_000, Promise.resolve()), 'retrying');
  t.is(await settleOver(idle, undefined, 0).quietWithin(100, never), 'timeout');
});
