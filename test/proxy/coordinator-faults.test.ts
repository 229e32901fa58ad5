/**
 * The coordinator wires each plan fault to the proxy and the controller process: whole runs
 * (executeRun) of a small mirroring controller with leader election (fixtures/mirror-controller.ts).
 */
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test, { type ExecutionContext } from 'ava';
import type { ControllerUnderTest, Workload } from '../../src/config/config.js';
import { executeRun } from '../../src/coordinator/run.js';
import type { Fault, TestPlan } from '../../src/model/plan.js';
import { mirrorControllerConfig } from './helpers.js';
import type { ClusterChangeEvent, FaultEvent, RequestEvent, ResponseEvent, TraceEvent, WorkloadStepEvent } from '../../src/model/trace.js';
import { removeIfPassed } from '../_scratch-dir.js';

function setup(t: ExecutionContext): { config: ControllerUnderTest; workload: Workload; dir: string } {
  const dir = mkdtempSync(join(tmpdir(), 'kperturb-coordinator-'));
  t.teardown(() => (process.env.KEEP ? undefined : removeIfPassed(t, dir)));
  const manifest = join(dir, 'src-a.yaml');
  writeFileSync(manifest, 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: src-a, namespace: default}\ndata: {v: "1"}\n');
  const key = 'ConfigMap/default/src-a';
  const workload: Workload = {
    name: 'follow',
    steps: [
      { apply: manifest },
      { waitFor: { key: 'ConfigMap/default/mirror-src-a', field: 'data.v', equals: '1', timeoutSeconds: 30 } },
      { patch: { key, type: 'merge', patch: { data: { v: '2' } } } },
      { waitFor: { key: 'ConfigMap/default/mirror-src-a', field: 'data.v', equals: '2', timeoutSeconds: 60 } },
      { patch: { key, type: 'merge', patch: { data: { v: '3' } } } },
      { waitFor: { key: 'ConfigMap/default/mirror-src-a', field: 'data.v', equals: '3', timeoutSeconds: 30 } },
    ],
  };
  const config = mirrorControllerConfig(dir, workload);
  return { config, workload, dir };
}

function planOf(faults: Fault[], pattern: TestPlan['spec']['pattern']): TestPlan {
  return {
    apiVersion: 'kperturb.dev/v1',
    kind: 'TestPlan',
    metadata: { name: 'p' },
    spec: { controller: 'mirror', workload: 'follow', pattern, description: 'test', faults },
  };
}

function readTrace(runDir: string): TraceEvent[] {
  const lines = [
    ...readFileSync(join(runDir, 'controller.trace.jsonl'), 'utf8').split('\n'),
    ...readFileSync(join(runDir, 'cluster.trace.jsonl'), 'utf8').split('\n'),
  ].filter(Boolean);
  return lines.map((l) => JSON.parse(l) as TraceEvent).sort((a, b) => a.seq - b.seq);
}

const faultPhases = (events: TraceEvent[], fault: string) => events.filter((e): e is FaultEvent => e.type === 'fault' && e.fault === fault).map((e) => e.phase);

for (const warmSpare of [true, false]) {
  test(`crash-after-write: the controller is killed right after the write, its Lease is deleted, and the successor leads at once (${warmSpare ? 'a warm spare takes over' : 'warmSpare: false, started anew'})`, async (t) => {
    const { config, workload, dir } = setup(t);
    if (!warmSpare) config.controller.warmSpare = false;
    const runDir = join(dir, 'run');
    const plan = planOf([{ type: 'crash-after-write', after: { verb: 'create', key: 'ConfigMap/default/mirror-src-a', occurrence: 1 } }], 'intermediate-state');
    const { record, artifacts } = await executeRun({ config, workload, runDir, plan });
    t.is(record.error, undefined);
    t.is(record.restartsFromSpare, warmSpare ? 1 : undefined);
    t.true(record.injected);
    t.true(record.workloadOutcome.ok, record.workloadOutcome.error);
    const events = readTrace(runDir);
    t.deepEqual(faultPhases(events, 'crash-after-write'), ['triggered', 'killed', 'restarted']);
    const release = events.find((e): e is FaultEvent => e.type === 'fault' && e.fault === 'lease-release')!;
    t.like(release, { phase: 'applied', key: 'Lease/default/mirror-leader' });
    const killed = events.find((e) => e.type === 'fault' && e.phase === 'killed')!;
    t.true(release.seq > killed.seq, 'the Lease goes only once the old process is gone');
    // Without the release the successor would find the Lease held and renewed within 15 s, and wait
    // it out. With it, its first look finds none and it creates one: it leads at once, however long a
    // loaded machine took to start it (the events say so, not the clock).
    const leaseCalls = events.filter((e): e is RequestEvent => e.type === 'request' && e.incarnation === 2 && e.key === 'Lease/default/mirror-leader');
    const statusOf = (r: RequestEvent) => events.find((e): e is ResponseEvent => e.type === 'response' && e.id === r.id)?.status;
    t.deepEqual(
      leaseCalls.slice(0, 2).map((r) => `${r.verb} ${statusOf(r)}`),
      ['get 404', 'create 201'],
      'the successor found no Lease and took it',
    );
    t.is(artifacts.endState['ConfigMap/default/mirror-src-a']?.data !== undefined, true);
    // The successor's output is in the log under its incarnation, whenever it was started.
    t.regex(readFileSync(join(runDir, 'controller.log'), 'utf8'), /^\[2\] .*leader$/m);
  });
}

test('hold-until: the controller never mirrors the intermediate value, and the run reports it injected', async (t) => {
  const { config, workload, dir } = setup(t);
  // The run's own wait for v=2 would time out without the controller seeing it: drop that step.
  const wl: Workload = { ...workload, steps: workload.steps.filter((s) => !('waitFor' in s && s.waitFor.equals === '2')) };
  const key = 'ConfigMap/default/src-a';
  const plan = planOf(
    [
      {
        type: 'hold-until',
        key,
        from: { key, change: 'update', fields: [{ path: 'data.v', before: '1', after: '2' }], occurrence: 1 },
        until: { key, change: 'update', fields: [{ path: 'data.v', before: '2', after: '3' }], occurrence: 1 },
      },
    ],
    'unobserved-state',
  );
  const runDir = join(dir, 'run');
  const { record, artifacts } = await executeRun({ config, workload: wl, runDir, plan });
  t.is(record.error, undefined);
  t.true(record.workloadOutcome.ok, record.workloadOutcome.error);
  t.true(record.injected);
  t.is((artifacts.endState['ConfigMap/default/mirror-src-a']?.data as { history?: string } | undefined)?.history, '1,3', 'v=2 was never seen');
  t.deepEqual(faultPhases(readTrace(runDir), 'hold-until'), ['triggered', 'held', 'expired']);
});

test('stale-restart: the restarted controller lists the cluster as it was and its stale write is refused; the view is released', async (t) => {
  const { config, workload, dir } = setup(t);
  const plan = planOf(
    [
      {
        type: 'stale-restart',
        at: { write: { verb: 'update', key: 'ConfigMap/default/mirror-src-a', occurrence: 2 } },
        viewAfter: { key: 'ConfigMap/default/src-a', change: 'create', occurrence: 1 },
        releaseAfterSeconds: 1,
      },
    ],
    'stale-state',
  );
  const runDir = join(dir, 'run');
  const { record, artifacts } = await executeRun({ config, workload, runDir, plan });
  t.is(record.error, undefined);
  t.true(record.injected);
  t.truthy(artifacts.endState['ConfigMap/default/mirror-src-a']);
  const events = readTrace(runDir);
  t.deepEqual(
    faultPhases(events, 'stale-restart').filter((p) => p !== 'applied'),
    ['triggered', 'killed', 'held', 'restarted', 'released'],
  );
  const frozen = events.find((e): e is FaultEvent => e.type === 'fault' && e.phase === 'triggered')!.resourceVersion!;
  // The restarted controller's list: src-a at v=1 and no mirror yet, at the frozen resourceVersion.
  const list = events.find(
    (e): e is RequestEvent => e.type === 'request' && e.incarnation === 2 && e.verb === 'list' && e.resource?.resource === 'configmaps',
  )!;
  t.truthy(list, 'the restarted controller listed');
  const answer = events.find((e): e is ResponseEvent => e.type === 'response' && e.id === list.id)!;
  const items = (answer.object?.items ?? []) as Array<{ metadata: { name: string }; data?: { v?: string } }>;
  t.is(answer.object?.metadata?.resourceVersion, frozen);
  t.deepEqual(
    items.map((i) => `${i.metadata.name}=${i.data?.v}`),
    ['src-a=1'],
  );
  // Acting on that view, it tries to create the mirror again: the real server refuses (it exists).
  const create = events.find(
    (e): e is RequestEvent => e.type === 'request' && e.incarnation === 2 && e.verb === 'create' && e.key === 'ConfigMap/default/mirror-src-a',
  );
  t.truthy(create, 'a stale write');
  t.is(events.find((e): e is ResponseEvent => e.type === 'response' && e.id === create!.id)?.status, 409);
});

/** A stale restart onto the view right after src-a's create, with a bound no test could wait out: the release must come from the controller. */
async function runStaleOneHour(t: ExecutionContext, config: ControllerUnderTest, workload: Workload, dir: string) {
  const plan = planOf(
    [
      {
        type: 'stale-restart',
        at: { write: { verb: 'update', key: 'ConfigMap/default/mirror-src-a', occurrence: 2 } },
        viewAfter: { key: 'ConfigMap/default/src-a', change: 'create', occurrence: 1 },
        releaseAfterSeconds: 3600,
      },
    ],
    'stale-state',
  );
  const runDir = join(dir, 'run');
  const logs: string[] = [];
  const { record } = await executeRun({ config, workload, runDir, plan, log: (l) => logs.push(l) });
  t.is(record.error, undefined);
  t.true(record.injected);
  t.true(record.workloadOutcome.ok, record.workloadOutcome.error);
  return { record, runDir, logs };
}

test('stale-restart: the view is released once the restarted controller has acted on it and gone quiet, not at the bound', async (t) => {
  const { config, workload, dir } = setup(t);
  const { record, runDir, logs } = await runStaleOneHour(t, config, workload, dir);
  t.true(
    logs.some((l) => l.includes(`stale view released once the controller had acted on it and been quiet for ${config.settle.quietMs} ms`)),
    logs.join('\n'),
  );
  const events = readTrace(runDir);
  const released = events.find((e): e is FaultEvent => e.type === 'fault' && e.fault === 'stale-restart' && e.phase === 'released')!;
  const staleCreate = events.find(
    (e): e is RequestEvent => e.type === 'request' && e.incarnation === 2 && e.verb === 'create' && e.key === 'ConfigMap/default/mirror-src-a',
  )!;
  t.true(staleCreate.seq < released.seq, 'it acted on the stale view before the release');
  t.true(record.settled, 'and settled on the present afterwards');
});

test('stale-restart: a controller going round the same failed write on the view gets the present then, neither quiet nor at the bound', async (t) => {
  const { config, workload, dir } = setup(t);
  // It retries its refused create every 50 ms. With a quiet window of 0 the quiet rule is off
  // (Settle.quietWithin), so only the loop, or the hour's bound, can release the view: on a loaded
  // machine a 50 ms timer can fire later than any window, and the quiet rule would then win the race.
  config.settle = { ...config.settle, quietMs: 0 };
  config.controller.env = { MIRROR_REQUEUE_MS: '50' };
  const { record, runDir, logs } = await runStaleOneHour(t, config, workload, dir);
  t.true(
    logs.some((l) => l.includes('stale view released once the controller, on it, had made the same round of requests 3 times, the cluster unchanged')),
    logs.join('\n'),
  );
  const events = readTrace(runDir);
  const released = events.find((e): e is FaultEvent => e.type === 'fault' && e.fault === 'stale-restart' && e.phase === 'released')!;
  const refused = events.filter(
    (e): e is RequestEvent =>
      e.type === 'request' && e.incarnation === 2 && e.verb === 'create' && e.key === 'ConfigMap/default/mirror-src-a' && e.seq < released.seq,
  );
  t.true(refused.length >= 3, `three refused creates before the release, got ${refused.length}`);
  t.true(record.settled, 'and settled on the present afterwards');
});

test('a fault whose trigger never matches: the run is not injected and its record says which fault and why', async (t) => {
  const { config, workload, dir } = setup(t);
  const runDir = join(dir, 'run');
  const plan = planOf([{ type: 'crash-after-write', after: { verb: 'delete', key: 'ConfigMap/default/mirror-src-a', occurrence: 1 } }], 'intermediate-state');
  const { record } = await executeRun({ config, workload, runDir, plan });
  t.is(record.error, undefined);
  t.false(record.injected);
  t.is(record.notInjected?.length, 1);
  // What came closest: the controller wrote the object, but never deleted it.
  t.regex(
    record.notInjected![0]!,
    /^crash after the controller deletes ConfigMap\/default\/mirror-src-a \(1st time\): never matched: the controller never made a successful delete of ConfigMap\/default\/mirror-src-a \(its other writes of it: create 1 time/,
  );
  const events = readTrace(runDir);
  t.deepEqual(faultPhases(events, 'crash-after-write'), ['not-injected']);
  // The workload's steps say what they did, for the planner (planner/rules/hold-release.ts).
  const steps = events.filter((e): e is WorkloadStepEvent => e.type === 'workload-step');
  const changes = events.filter((e): e is ClusterChangeEvent => e.type === 'cluster-change');
  const [applyStart, applyDone, waitStart, waitDone] = steps;
  t.like(applyStart, { index: 0, phase: 'start', action: 'write', keys: ['ConfigMap/default/src-a'] });
  const created = changes.find((c) => c.key === 'ConfigMap/default/src-a' && c.eventType === 'ADDED')!;
  t.deepEqual(applyDone!.wrote, [{ key: 'ConfigMap/default/src-a', resourceVersion: created.resourceVersion }]);
  t.like(waitStart, { index: 1, phase: 'start', action: 'wait', keys: ['ConfigMap/default/mirror-src-a'] });
  const mirrored = changes.find((c) => c.key === 'ConfigMap/default/mirror-src-a' && c.eventType === 'ADDED')!;
  t.is(waitDone!.metAt, mirrored.resourceVersion);
  t.true(waitDone!.polls! >= 1);
});
