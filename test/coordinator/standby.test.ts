/**
 * Controllers started ahead of their runs (src/coordinator/standby.ts, proxy/standby-door.ts): a
 * standby has sent nothing anywhere until its run's proxy takes its connections; a campaign's next
 * run takes the standby the run before it started, as its first incarnation; stale or dead standbys
 * are not used.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import test, { type ExecutionContext } from 'ava';
import { CoreV1Api } from '@kubernetes/client-node';
import { StandbyDoor } from '../../proxy/standby-door.js';
import { sharedProxyCertificates } from '../../proxy/tls.js';
import type { ControllerUnderTest } from '../../src/config/config.js';
import { executeRun } from '../../src/coordinator/run.js';
import { ControllerStandbys, standbysAllowed } from '../../src/coordinator/standby.js';
import { kubeconfigYaml } from '../../src/kube/kubeconfig.js';
import type { TraceEvent } from '../../src/model/trace.js';
import { kubeConfigOf, mirrorFollowOnce, startCluster, startProxy, waitFor } from '../proxy/helpers.js';

test("a standby's connections wait unread at its door, and nothing reaches the cluster, until its run's proxy takes them", async (t) => {
  const cluster = await startCluster(t);
  const door = await StandbyDoor.open();
  t.teardown(() => door.close());
  const { proxy, trace } = await startProxy(t, cluster, { tls: true, standbyDoor: door });
  const certs = await sharedProxyCertificates();
  const standby = kubeConfigOf(kubeconfigYaml(`https://127.0.0.1:${door.port}`, { caPem: certs.caPem, token: door.token })).makeApiClient(CoreV1Api);
  let answered = false;
  const list = standby.listNamespacedConfigMap({ namespace: 'kube-system' }).then((l) => {
    answered = true;
    return l;
  });
  await waitFor('the standby to connect to its door', () => door.connectionsWaiting === 1);

  // The proxy serves its own port meanwhile; the standby's request has not even been sent.
  const direct = kubeConfigOf(proxy.kubeconfigYaml()).makeApiClient(CoreV1Api);
  await direct.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'meanwhile' } } });
  t.false(answered);
  t.false(
    trace.ofType('request').some((r) => r.path?.includes('kube-system')),
    'nothing of the standby in the trace',
  );

  proxy.admitStandby();
  t.true(Array.isArray((await list).items));
  t.is(door.connectionsWaiting, 0);
  t.is(trace.ofType('request').find((r) => r.path?.includes('kube-system'))?.incarnation, 1, 'served as the controller');
  // The door's token is the proxy's: the standby's later requests pass as any other.
  await standby.readNamespacedConfigMap({ name: 'meanwhile', namespace: 'default' });
});

const setup = (t: ExecutionContext) => mirrorFollowOnce(t, { quietMs: 300, timeoutSeconds: 20 });

const startEvents = (runDir: string) =>
  readFileSync(join(runDir, 'controller.trace.jsonl'), 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as TraceEvent)
    .filter((e) => e.type === 'controller' && e.action === 'start');

for (const preparesAt of ['controller-started', 'workload-done'] as const) {
  test(`the next run takes the standby the run before it started (${preparesAt}), as its first incarnation`, async (t) => {
    const { config, workload, dir } = setup(t);
    // No age limit here: a standby older than STANDBY_MAX_AGE_MS (5 s of wall-clock time) is not
    // used, and on a loaded machine the first run's workload, settling and teardown and the second
    // run's cluster start take longer than that, so the second run would rightly start its own
    // controller. The limit has its own test below (a limit of 0).
    const standbys = new ControllerStandbys(config, 2, preparesAt, Number.POSITIVE_INFINITY);
    t.teardown(() => standbys.close());

    const first = await executeRun({ config, workload, runDir: join(dir, 'run-1'), standbys });
    t.is(first.record.error, undefined);
    t.is(first.record.controllerStartedAheadMs, undefined, 'nothing was ready for the first run');
    await standbys.prepared();
    t.is(standbys.readyCount, 1, 'the first run started one for the second');

    const second = await executeRun({ config, workload, runDir: join(dir, 'run-2'), standbys });
    t.is(second.record.error, undefined);
    t.true(second.record.workloadOutcome.ok, second.record.workloadOutcome.error);
    t.true((second.record.controllerStartedAheadMs ?? -1) >= 0, 'the second run took it');
    t.is(startEvents(join(dir, 'run-2')).length, 1);
    // Its output, from before its run too, is in the run's log as incarnation 1's.
    t.regex(readFileSync(join(dir, 'run-2', 'controller.log'), 'utf8'), /^\[1\] .*leader$/m);
    await standbys.prepared();
    t.is(standbys.readyCount, 0, 'no run is left to take another');
  });
}

test('a standby older than the limit, or one that exited, is not used: the run starts the controller itself', async (t) => {
  const { config, workload, dir } = setup(t);
  const stale = new ControllerStandbys(config, 3, 'controller-started', 0);
  t.teardown(() => stale.close());
  stale.prepare();
  await stale.prepared();
  t.is(stale.readyCount, 1);
  t.is(stale.usableCount, 0);
  const run = await executeRun({ config, workload, runDir: join(dir, 'run-stale'), standbys: stale });
  t.is(run.record.error, undefined);
  t.is(run.record.controllerStartedAheadMs, undefined);
  t.is(stale.readyCount, 1, 'the stale one was dropped; the run started one for the next');

  const exited: ControllerUnderTest = { ...config, controller: { ...config.controller, args: ['-e', 'process.exit(3)'] } };
  const dead = new ControllerStandbys(exited, 2);
  t.teardown(() => dead.close());
  dead.prepare();
  await dead.prepared();
  t.is(dead.readyCount, 1);
  await waitFor('the standby to exit', () => dead.usableCount === 0);
  t.is(dead.take(), undefined, 'a standby that exited is not handed out');
  t.is(dead.readyCount, 0);
});

test('standbys are off for a controller that must not run twice or starts through a per-run wrapper, and without TLS', (t) => {
  const { config } = setup(t);
  t.true(standbysAllowed(config, true));
  t.false(standbysAllowed(config, false));
  t.false(standbysAllowed({ ...config, controller: { ...config.controller, warmSpare: false } }, true));
  t.false(standbysAllowed({ ...config, controller: { ...config.controller, ports: [9443] } }, true));
  t.false(standbysAllowed({ ...config, controller: { ...config.controller, clusterDNS: true } }, true));
  // The pod's namespace file comes through the same per-run wrapper.
  t.false(standbysAllowed({ ...config, controller: { ...config.controller, podNamespaceFile: true } }, true));
});
