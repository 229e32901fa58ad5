/**
 * Faults on the managed system in a whole run (src/coordinator/faults/pod-crash.ts, window.ts): a
 * pod-crash plan crash-loops the pod when its trigger fires and heals after its window; the cluster
 * trace shows the start and the heal (fault events) around the pod's status changes, and the run
 * waits for the heal before it settles. A fault whose window ends before it starts is not injected.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import test from 'ava';
import type { ControllerUnderTest, Workload } from '../../src/config/config.js';
import { executeRun } from '../../src/coordinator/run.js';
import { readTraceAll } from '../../src/io/trace-io.js';
import type { Fault, TestPlan } from '../../src/model/plan.js';
import { isObject } from '../../src/model/object-key.js';
import { scratchDir } from '../_scratch-dir.js';

function setUp(t: import('ava').ExecutionContext): { config: ControllerUnderTest; workload: Workload; dir: string } {
  const dir = scratchDir(t, 'kperturb-managed-faults-');
  const pod = join(dir, 'pod.yaml');
  writeFileSync(pod, 'apiVersion: v1\nkind: Pod\nmetadata: {name: web-0, namespace: default}\nspec: {containers: [{name: web, image: nginx}]}\n');
  const workload: Workload = {
    name: 'pod',
    steps: [{ apply: pod }, { waitFor: { key: 'Pod/default/web-0', field: 'status.phase', equals: 'Running', timeoutSeconds: 20 } }],
  };
  const config: ControllerUnderTest = {
    file: join(dir, 'kperturb.yaml'),
    dir,
    name: 'mirror',
    controller: {
      command: process.execPath,
      args: [fileURLToPath(new URL('../proxy/fixtures/mirror-controller.js', import.meta.url))],
      env: {},
      workingDir: dir,
      hostAliases: [],
      clusterDNS: false,
      ports: [],
    },
    setup: [],
    workloads: new Map([[workload.name, workload]]),
    referenceRuns: 1,
    settle: { quietMs: 200, timeoutSeconds: 20 },
    masks: [],
    countUpdates: [],
    exec: [],
    logs: [],
    applications: [],
  };
  return { config, workload, dir };
}

const plan = (faults: Fault[]): TestPlan => ({
  apiVersion: 'kperturb.dev/v1',
  kind: 'TestPlan',
  metadata: { name: 'managed-0001' },
  spec: { controller: 'mirror', workload: 'pod', pattern: 'managed-system', description: 'd', faults },
});

/** Runs the workload with `faults`; the run must end without error and with every fault injected. Returns its directory. */
async function injectedRun(t: import('ava').ExecutionContext, faults: Fault[]): Promise<string> {
  const { config, workload, dir } = setUp(t);
  const runDir = join(dir, 'run');
  const { record } = await executeRun({ config, workload, runDir, plan: plan(faults) });
  t.is(record.error, undefined);
  t.true(record.injected, JSON.stringify(record.notInjected));
  return runDir;
}

const running = {
  change: { key: 'Pod/default/web-0', change: 'update' as const, fields: [{ path: 'status.phase', before: 'Pending', after: 'Running' }], occurrence: 1 },
};

test('a pod-crash plan crash-loops the pod from its trigger for its window; the cluster trace shows the start, the crash, the heal and the recovery', async (t) => {
  // The window ends on the first crash the kubelet reports, not after a second (which a loaded machine
  // may not fit it in); forSeconds bounds it and keeps the run from settling before (as for node-not-ready).
  const crashed1 = {
    key: 'Pod/default/web-0',
    change: 'update' as const,
    fields: [{ path: 'status.containerStatuses[0].restartCount', before: 0, after: 1 }],
    occurrence: 1,
  };
  const runDir = await injectedRun(t, [
    { type: 'pod-crash', pod: 'Pod/default/web-0', mode: 'crash-loop', at: running, until: { change: crashed1 }, forSeconds: 30 },
  ]);
  const trace = await readTraceAll(join(runDir, 'cluster.trace.jsonl'));
  const story = trace.flatMap((e) => {
    if (e.type === 'fault') return [`fault ${e.fault} ${e.phase}`];
    if (e.type !== 'cluster-change' || e.key !== 'Pod/default/web-0' || !isObject(e.object.status)) return [];
    const st = e.object.status;
    const ready = Array.isArray(st.conditions) ? st.conditions.find((c) => isObject(c) && c.type === 'Ready') : undefined;
    const restarts = Array.isArray(st.containerStatuses) && isObject(st.containerStatuses[0]) ? st.containerStatuses[0].restartCount : undefined;
    return [`pod ready=${isObject(ready) ? String(ready.status) : '-'} restarts=${String(restarts)}`];
  });
  const at = (line: string | RegExp) => story.findIndex((l) => (typeof line === 'string' ? l === line : line.test(l)));
  const applied = at('fault pod-crash applied');
  const healed = at('fault pod-crash healed');
  t.true(applied >= 0 && healed > applied, story.join('\n'));
  const crashed = story.findIndex((l, i) => i > applied && l === 'pod ready=False restarts=1');
  t.true(crashed > applied && crashed < healed, story.join('\n'));
  const recovered = story.findIndex((l, i) => i > healed && /^pod ready=True restarts=\d+$/.test(l));
  t.true(recovered > healed, `the pod recovers after the heal, before the run ends:\n${story.join('\n')}`);
  // The simulated controllers' log is kept with the run.
  t.regex(readFileSync(join(runDir, 'cluster.log'), 'utf8'), /^scheduler: binding default\/web-0 to node-1$/m);
});

test('a window whose end comes before its start leaves the fault not injected, and says so', async (t) => {
  const { config, workload, dir } = setUp(t);
  const { record } = await executeRun({
    config,
    workload,
    runDir: join(dir, 'run'),
    plan: plan([
      {
        type: 'pod-crash',
        pod: 'Pod/default/web-0',
        mode: 'unready',
        at: running,
        until: { change: { key: 'Pod/default/web-0', change: 'create', occurrence: 1 } },
      },
    ]),
  });
  t.false(record.injected);
  t.regex(record.notInjected?.join('\n') ?? '', /its window's end \(Pod\/default\/web-0 is created \(1st time\)\) came before its start/);
});

/** The run's story in the cluster trace: fault events and the pod's Ready condition, deletion and recreation. */
async function podStory(runDir: string): Promise<string[]> {
  const trace = await readTraceAll(join(runDir, 'cluster.trace.jsonl'));
  return trace.flatMap((e) => {
    if (e.type === 'fault') return [`fault ${e.fault} ${e.phase}`];
    if (e.type !== 'cluster-change') return [];
    if (e.key === 'Node/node-1' && isObject(e.object.spec)) return [`node taints=${Array.isArray(e.object.spec.taints) ? e.object.spec.taints.length : 0}`];
    if (e.key !== 'Pod/default/web-0') return [];
    if (e.eventType === 'DELETED') return ['pod deleted'];
    const st = isObject(e.object.status) ? e.object.status : {};
    const ready = Array.isArray(st.conditions) ? st.conditions.find((c) => isObject(c) && c.type === 'Ready') : undefined;
    return [`pod ready=${isObject(ready) ? String(ready.status) : '-'}${e.object.metadata?.deletionTimestamp ? ' terminating' : ''}`];
  });
}

test("a node-not-ready plan takes the pod's node out for its window: taints, the pod unready, then the heal: untainted, the pod ready again", async (t) => {
  // The window ends on the outage's last effect (the pod marked unready, after the node's taints),
  // not after a second: on a loaded machine the simulated node lifecycle can take longer than that.
  // Its forSeconds is only the bound that keeps the run from settling before the window ends (a
  // window that ends on a trigger alone ends with the run at the latest, and this controller is
  // quiet long before the pod is marked).
  const podUnready = {
    key: 'Pod/default/web-0',
    change: 'update' as const,
    fields: [{ path: 'status.conditions[type=Ready].status', before: 'True', after: 'False' }],
    occurrence: 1,
  };
  const runDir = await injectedRun(t, [
    { type: 'node-not-ready', node: 'Node/node-1', mode: 'unreachable', at: running, until: { change: podUnready }, forSeconds: 30 },
  ]);
  const story = await podStory(runDir);
  const at = (line: string, from = 0) => story.findIndex((l, i) => i >= from && l === line);
  const applied = at('fault node-not-ready applied');
  const healed = at('fault node-not-ready healed');
  t.true(applied >= 0 && healed > applied, story.join('\n'));
  const tainted = at('node taints=2', applied);
  const unready = at('pod ready=False', applied);
  t.true(tainted > applied && tainted < healed && unready > applied && unready < healed, story.join('\n'));
  t.true(at('node taints=0', healed) > healed, story.join('\n'));
  t.true(at('pod ready=True', healed) > healed, `the pod is ready again after the heal:\n${story.join('\n')}`);
  t.is(at('pod deleted'), -1, 'a 300 s toleration outlasts a 1 s outage: nothing evicted');
});

test('a pod-evict plan deletes the pod through someone else when its trigger fires; the trace has the fault before the deletion', async (t) => {
  const runDir = await injectedRun(t, [{ type: 'pod-evict', pod: 'Pod/default/web-0', how: 'delete', at: running }]);
  const story = await podStory(runDir);
  const applied = story.indexOf('fault pod-evict applied');
  t.true(applied >= 0 && story.indexOf('pod deleted') > applied, story.join('\n'));
});

test('a pvc-fault on a claim that is not there is not injected, and says why', async (t) => {
  const { config, workload, dir } = setUp(t);
  const { record } = await executeRun({
    config,
    workload,
    runDir: join(dir, 'run'),
    plan: plan([{ type: 'pvc-fault', claim: 'PersistentVolumeClaim/default/data', mode: 'lost', at: running, forSeconds: 1 }]),
  });
  t.false(record.injected);
  t.regex(record.notInjected?.join('\n') ?? '', /PersistentVolumeClaim default\/data does not exist when the fault starts/);
});
