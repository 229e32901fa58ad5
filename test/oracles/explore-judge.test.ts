/** kperturb explore's oracles on hand-built traces: rejected input (the API server's and the controller's), traced consistency, path/value fallback, health, rollback. */
import test from 'ava';
import {
  differentialAlarms,
  judgeExploration,
  nondeterministicFields,
  rollbackAlarms,
  rollbackCrash,
  rollbackTargets,
  type SequenceRun,
} from '../../oracles/explore/index.js';
import { stateAfterStep, waitingOnApplication } from '../../oracles/explore/judge.js';
import type { ExploreSequence, ExploreStep } from '../../planner/explore/index.js';
import type { ClusterChangeEvent, TraceEvent } from '../../src/model/trace.js';
import type { KubeObject } from '../../src/model/object-key.js';

const CR = 'Cache/default/c1';
const STS = 'StatefulSet/default/c1';
const seedCr = { apiVersion: 'demo.kperturb.dev/v1', kind: 'Cache', metadata: { name: 'c1', namespace: 'default' }, spec: { image: 'cache:1', size: 2 } };

function sts(image: string, replicas = 2, labels: Record<string, string> = {}): KubeObject {
  return {
    apiVersion: 'apps/v1',
    kind: 'StatefulSet',
    metadata: { name: 'c1', namespace: 'default', labels },
    spec: { replicas, template: { spec: { containers: [{ name: 'c', image }] } } },
    status: { readyReplicas: replicas },
  };
}

function step(operation: string, path: string[], value: unknown, marker?: string, kind: ExploreStep['kind'] = 'primitive'): ExploreStep {
  return { operation, kind, property: path.join('.'), path, value, ...(marker ? { marker } : {}), patch: {}, cr: seedCr };
}

/**
 * A run: the seed, then per operation the CR change the API server took (or its refusal) and what the
 * controller wrote. The CR's metadata.generation grows with each change of its spec, as the API server's.
 */
class RunBuilder {
  private seq = 0;
  readonly events: TraceEvent[] = [];
  private cr: Record<string, unknown> = seedCr;
  private generation = 0;
  private e(event: Record<string, unknown>): void {
    this.events.push({ seq: ++this.seq, ts: 0, ...event } as unknown as TraceEvent);
  }
  private workloadStep(index: number, extra: Record<string, unknown> = {}): void {
    this.e({ type: 'workload-step', index, description: '', phase: 'start' });
    this.e({ type: 'workload-step', index, description: '', phase: 'done', ...extra });
  }
  /** Controller incarnation `incarnation` exits now. */
  exit(incarnation: number): this {
    this.e({ type: 'controller', action: 'exit', incarnation, code: 2, signal: null });
    return this;
  }
  change(key: string, object: KubeObject, eventType = 'MODIFIED'): void {
    this.e({ type: 'cluster-change', eventType, key, resourceVersion: String(this.seq), object });
  }
  controllerWrites(key: string, object: KubeObject): void {
    this.e({ type: 'request', id: this.seq, incarnation: 1, method: 'PUT', path: '/x', query: {}, verb: 'update', key });
    this.change(key, object);
  }
  /** A create of the controller, answered 201 with the object. */
  controllerCreates(key: string, object: KubeObject): void {
    const id = this.seq;
    this.e({ type: 'request', id, incarnation: 1, method: 'POST', path: '/x', query: {}, verb: 'create', key });
    this.e({ type: 'response', id, status: 201, object, durationMs: 1 });
    this.change(key, object, 'ADDED');
  }
  private generationCr(spec: Record<string, unknown>): Record<string, unknown> {
    if (JSON.stringify(spec) !== JSON.stringify(this.cr.spec) || this.generation === 0) this.generation++;
    return { ...this.cr, metadata: { ...seedCr.metadata, generation: this.generation }, spec };
  }
  seed(image = 'cache:1', spec: Record<string, unknown> = {}): this {
    this.workloadStep(0);
    this.cr = this.generationCr({ ...seedCr.spec, ...spec });
    this.change(CR, this.cr as KubeObject, 'ADDED');
    this.controllerWrites(STS, sts(image, (this.cr.spec as { size: number }).size));
    this.workloadStep(1);
    return this;
  }
  /** A write of the controller the API server refuses with `message` (422). */
  controllerWriteRefused(key: string, message: string): void {
    const id = this.seq;
    this.e({ type: 'request', id, incarnation: 1, method: 'PUT', path: '/x', query: {}, verb: 'update', key });
    this.e({ type: 'response', id, status: 422, object: { kind: 'Status', apiVersion: 'v1', status: 'Failure', message, code: 422 }, durationMs: 1 });
  }
  op(k: number, spec: Record<string, unknown> | 'rejected', writes: Array<[string, KubeObject | { refused: string }, 'create'?]> = []): this {
    if (spec === 'rejected') this.workloadStep(2 + 2 * k, { rejected: 422, error: 'spec.size: Invalid value: 0: must be at least 1' });
    else {
      this.workloadStep(2 + 2 * k);
      this.cr = this.generationCr({ ...(this.cr.spec as object), ...spec });
      this.change(CR, this.cr as KubeObject);
    }
    for (const [key, obj, verb] of writes) {
      if (typeof obj.refused === 'string') this.controllerWriteRefused(key, obj.refused);
      else if (verb === 'create') this.controllerCreates(key, obj as KubeObject);
      else this.controllerWrites(key, obj as KubeObject);
    }
    this.workloadStep(3 + 2 * k);
    return this;
  }
}

const sequence = (steps: ExploreStep[]): ExploreSequence => ({ name: 'explore-cache-c1-1', seed: seedCr, steps });
const run = (steps: ExploreStep[], b: RunBuilder): SequenceRun => ({ sequence: sequence(steps), crKey: CR, events: b.events });

test('a refused change is rejected, not a bug; a marker teaches where the field goes, and a later change that never gets there alarms', (t) => {
  const steps = [
    step('integer-down', ['spec', 'size'], 0),
    step('string-change', ['spec', 'image'], 'kpm-1', 'kpm-1'),
    step('string-change', ['spec', 'image'], 'kpm-2', 'kpm-2'),
  ];
  const b = new RunBuilder()
    .seed()
    .op(0, 'rejected')
    .op(1, { image: 'kpm-1' }, [[STS, sts('kpm-1')]])
    .op(2, { image: 'kpm-2' });
  const [j] = judgeExploration([run(steps, b)]);
  t.deepEqual(
    j!.steps.map((s) => s.verdict),
    ['rejected', 'ok', 'alarm'],
  );
  t.regex(j!.steps[0]!.rejection!, /must be at least 1/);
  t.deepEqual(j!.steps[1]!.traced, { via: 'marker', locations: [{ object: STS, field: 'spec.template.spec.containers[0].image', relation: 'exact' }] });
  t.is(j!.alarms.length, 1);
  t.like(j!.alarms[0], { oracle: 'consistency', step: 3, object: STS, matchedBy: 'marker' });
  t.regex(j!.alarms[0]!.message, /spec\.image no longer holds kpm-1, but StatefulSet\/default\/c1 .*image still does/);
});

test('the same changes reaching the StatefulSet give no alarm', (t) => {
  const steps = [step('string-change', ['spec', 'image'], 'kpm-1', 'kpm-1'), step('string-change', ['spec', 'image'], 'kpm-2', 'kpm-2')];
  const b = new RunBuilder()
    .seed()
    .op(0, { image: 'kpm-1' }, [[STS, sts('kpm-1')]])
    .op(1, { image: 'kpm-2' }, [[STS, sts('kpm-2')]]);
  const [j] = judgeExploration([run(steps, b)]);
  t.deepEqual(j!.alarms, []);
  t.deepEqual(
    j!.steps.map((s) => s.verdict),
    ['ok', 'ok'],
  );
});

test('a label added then removed from the CR but never from the child alarms on the removal (traced by its marker key)', (t) => {
  const steps = [
    step('label-add-then-remove', ['spec', 'labels'], { 'kperturb.dev/kpm-4': 'kpm-4' }, 'kpm-4', 'semantic'),
    step('label-add-then-remove', ['spec', 'labels'], {}, undefined, 'semantic'),
  ];
  const b = new RunBuilder()
    .seed()
    .op(0, { labels: { 'kperturb.dev/kpm-4': 'kpm-4' } }, [[STS, sts('cache:1', 2, { 'kperturb.dev/kpm-4': 'kpm-4' })]])
    .op(1, { labels: {} });
  const [j] = judgeExploration([run(steps, b)]);
  t.is(j!.alarms.length, 1);
  t.like(j!.alarms[0], { oracle: 'consistency', step: 2, field: 'metadata.labels["kperturb.dev/kpm-4"]' });
});

test('without a marker: a value traced into a written field must follow later changes; otherwise a same-named field that kept the old value alarms, and says it matched by name', (t) => {
  const steps = [step('integer-up', ['spec', 'size'], 3), step('integer-down', ['spec', 'size'], 1)];
  const traced = new RunBuilder()
    .seed()
    .op(0, { size: 3 }, [[STS, sts('cache:1', 3)]])
    .op(1, { size: 1 });
  const [j] = judgeExploration([run(steps, traced)]);
  t.deepEqual(j!.steps[0]!.traced, { via: 'value', locations: [{ object: STS, field: 'spec.replicas', relation: 'exact' }] });
  t.like(j!.alarms[0], { step: 2, field: 'spec.replicas', expected: 1, found: 3, matchedBy: 'value' });

  // A pattern sample (no marker fits): the StatefulSet's same-named field kept the old value.
  const image = [step('string-pattern', ['spec', 'image'], 'cache:2')];
  const [k] = judgeExploration([run(image, new RunBuilder().seed().op(0, { image: 'cache:2' }))]);
  t.like(k!.alarms[0], { matchedBy: 'path', field: 'spec.template.spec.containers[0].image', found: 'cache:1' });
  t.regex(k!.alarms[0]!.message, /matched by path name and value/);
});

test('health at the sequence end: a StatefulSet short of ready replicas alarms, unless the last step was a misoperation', (t) => {
  const short = { ...sts('cache:1', 24), status: { readyReplicas: 3 } };
  const b = () => new RunBuilder().seed().op(0, { size: 24 }, [[STS, short]]);
  const [bug] = judgeExploration([run([step('integer-up', ['spec', 'size'], 24)], b())]);
  t.true(bug!.alarms.some((a) => a.oracle === 'health' && a.object === STS));
  const [mis] = judgeExploration([run([step('replicas-beyond-nodes', ['spec', 'size'], 24, undefined, 'misoperation')], b())]);
  t.false(mis!.alarms.some((a) => a.oracle === 'health'));
  t.is(mis!.steps[0]!.verdict, 'misoperation');
});

const POD = 'Pod/default/c1-0';
/** Pod c1-0 of StatefulSet c1, with these placement fields, in this phase. */
const stsPod = (placement: Record<string, unknown>, phase: string): KubeObject => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: {
    name: 'c1-0',
    namespace: 'default',
    ownerReferences: [{ apiVersion: 'apps/v1', kind: 'StatefulSet', name: 'c1', uid: 'u1', controller: true }],
  },
  spec: { ...placement, containers: [{ name: 'c', image: 'cache:1' }] },
  status: { phase },
});

test("a pod a step's value cannot place (a node label no node has) is the input, a misoperation; a pod Pending without it alarms", (t) => {
  const pod = (nodeSelector: Record<string, string>, phase = 'Pending'): KubeObject => stsPod({ nodeSelector }, phase);
  const stuck = { ...sts('cache:1'), status: { readyReplicas: 1 } };
  const steps = [step('map-add-key', ['spec', 'nodeSelector'], { 'kpm-9': 'kpm-10' }, 'kpm-9'), step('string-change', ['spec', 'mode'], 'kpm-11', 'kpm-11')];
  const b = (p: KubeObject) =>
    new RunBuilder()
      .seed()
      .op(0, { nodeSelector: { 'kpm-9': 'kpm-10' } }, [
        [POD, p],
        [STS, stuck],
      ])
      .op(1, { mode: 'kpm-11' });
  const [placed] = judgeExploration([run(steps, b(pod({ 'kpm-9': 'kpm-10' })))]);
  t.deepEqual(
    placed!.alarms.filter((a) => a.oracle === 'health'),
    [],
  );
  t.is(placed!.steps[0]!.verdict, 'misoperation');
  t.true(
    placed!.steps[0]!.notes.some((n) => n.includes(`${POD} is Pending`) && n.includes(`placed by this step's value (${POD} spec.nodeSelector holds kpm-9)`)),
  );
  t.true(
    placed!.steps[0]!.notes.some((n) => n.includes(`${STS} has 1 of 2 replicas ready`)),
    'and its StatefulSet, through the pod',
  );
  t.is(placed!.steps[1]!.verdict, 'ok');

  const [other] = judgeExploration([run(steps, b(pod({ disk: 'ssd' })))]);
  t.deepEqual(
    other!.alarms.filter((a) => a.oracle === 'health').map((a) => a.object),
    [STS, POD],
    'a pod Pending for another reason still alarms',
  );
  const [running] = judgeExploration([run(steps, b(pod({ 'kpm-9': 'kpm-10' }, 'Running')))]);
  t.deepEqual(
    running!.alarms.filter((a) => a.oracle === 'health').map((a) => a.object),
    [STS],
    'a StatefulSet short of ready replicas whose pod runs is not explained by where the pod was placed',
  );
});

test("a pod whose scheduler a step named stays Pending: that step's misoperation, also when a later step's input is refused", (t) => {
  // rabbitmq-operator's whole explore, sequence 32: schedulerName kpm-114 on the pod template, then
  // 24 replicas and back to 1, which the operator refuses ("Cluster Scale down not supported"): 24
  // pods Pending for want of scheduler kpm-114 alarmed as if the controller had broken them.
  const pending = stsPod({ schedulerName: 'kpm-9' }, 'Pending');
  const stuck = { ...sts('cache:1'), status: { readyReplicas: 1 } };
  const steps = [step('string-change', ['spec', 'schedulerName'], 'kpm-9', 'kpm-9'), step('string-empty', ['spec', 'version'], '')];
  const b = new RunBuilder()
    .seed()
    .op(0, { schedulerName: 'kpm-9' }, [
      [POD, pending],
      [STS, stuck],
    ])
    .op(1, { version: '' }, [[CR, crWith({ schedulerName: 'kpm-9', version: '' }, { phase: 'Error', message: 'spec.version: invalid value ""' })]]);
  const [j] = judgeExploration([run(steps, b)]);
  t.deepEqual(
    j!.steps.map((s) => s.verdict),
    ['misoperation', 'rejected'],
  );
  t.deepEqual(
    j!.alarms.filter((a) => a.oracle === 'health'),
    [],
  );
  t.true(j!.steps[0]!.notes.some((n) => n.includes(`${POD} is Pending`) && n.includes(`placed by this step's value (${POD} spec.schedulerName holds kpm-9)`)));
  // Without the refused step: the same, through the end state.
  const [alone] = judgeExploration([
    run(
      steps.slice(0, 1),
      new RunBuilder().seed().op(0, { schedulerName: 'kpm-9' }, [
        [POD, pending],
        [STS, stuck],
      ]),
    ),
  ]);
  t.is(alone!.steps[0]!.verdict, 'misoperation');
  t.deepEqual(
    alone!.alarms.filter((a) => a.oracle === 'health'),
    [],
  );
});

test("a pod waiting for a ConfigMap or Secret a step named and no one made is that step's misoperation, not rolled back; one that exists, or another name, still alarms", (t) => {
  // redis-ot's whole explore, sequences 15 and 17: additionalRedisConfig kpm-27 (the ConfigMap the
  // operator mounts), TLS.secret.secretName kpm-33: pods -2 in ContainerCreating, health and rollback alarms.
  const stuck = { ...sts('cache:1'), status: { readyReplicas: 1 } };
  const judged = (spec: Record<string, unknown>, made?: KubeObject) => {
    const steps = [step('string-change', ['spec', 'extraConfig'], 'kpm-9', 'kpm-9'), step('string-change', ['spec', 'mode'], 'kpm-11', 'kpm-11')];
    const b = new RunBuilder().seed().op(0, { extraConfig: 'kpm-9' }, [
      [POD, stsPod(spec, 'Pending')],
      [STS, stuck],
    ]);
    if (made) b.change(`${made.kind}/default/${made.metadata!.name}`, made, 'ADDED');
    b.op(1, { mode: 'kpm-11' });
    const r = run(steps, b);
    const [j] = judgeExploration([r]);
    return { j: j!, targets: rollbackTargets(j!, r) };
  };
  const volume = { volumes: [{ name: 'external-config', configMap: { name: 'kpm-9' } }] };
  const mounted = judged(volume);
  t.deepEqual(
    mounted.j.alarms.filter((a) => a.oracle === 'health'),
    [],
  );
  t.is(mounted.j.steps[0]!.verdict, 'misoperation');
  t.true(
    mounted.j.steps[0]!.notes.some(
      (n) =>
        n.includes(`${POD} is Pending`) &&
        n.includes(`waits for ConfigMap/default/kpm-9, named by this step's value (${POD} spec.volumes[0].configMap.name holds kpm-9)`),
    ),
  );
  t.deepEqual(mounted.targets, [], 'no rollback of a misoperation');
  // A Secret by env var (of an init container: stsPod sets the containers), and one by a projected volume.
  const env = { initContainers: [{ name: 'i', image: 'cache:1', env: [{ name: 'P', valueFrom: { secretKeyRef: { name: 'kpm-9', key: 'p' } } }] }] };
  t.is(judged(env).j.steps[0]!.verdict, 'misoperation');
  const projected = { volumes: [{ name: 'tls', projected: { sources: [{ secret: { name: 'kpm-9' } }] } }] };
  t.is(judged(projected).j.steps[0]!.verdict, 'misoperation');
  // The ConfigMap exists: the pod waits for something else, and alarms.
  const cm: KubeObject = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'kpm-9', namespace: 'default' }, data: {} };
  const exists = judged(volume, cm);
  t.deepEqual(
    exists.j.alarms.filter((a) => a.oracle === 'health').map((a) => a.object),
    [STS, POD],
  );
  t.deepEqual(exists.targets, [{ step: 1, why: 'unhealthy' }]);
  // A missing ConfigMap whose name no step wrote is not the input's.
  t.deepEqual(
    judged({ volumes: [{ name: 'x', configMap: { name: 'settings' } }] })
      .j.alarms.filter((a) => a.oracle === 'health')
      .map((a) => a.object),
    [STS, POD],
  );
});

test('differential: the same CR created at once ends with another StatefulSet than the history reached: one alarm per object, status left out', (t) => {
  const chained = new Map([[STS, sts('cache:1')]]);
  const fresh = new RunBuilder();
  fresh.controllerWrites(STS, { ...sts('kpm-1'), status: { readyReplicas: 0 } });
  const alarms = differentialAlarms({ sequence: 's', step: 2, crKey: CR, chained, freshEvents: fresh.events, chainedEvents: new RunBuilder().seed().events });
  t.is(alarms.length, 1);
  t.like(alarms[0], { oracle: 'differential', object: STS, expected: 'cache:1', found: 'kpm-1' });
  t.regex(alarms[0]!.field!, /image/);
  const same = new RunBuilder();
  same.controllerWrites(STS, sts('cache:1'));
  t.deepEqual(differentialAlarms({ sequence: 's', step: 2, crKey: CR, chained, freshEvents: same.events, chainedEvents: [] }), []);
});

test('a run that failed before its first operation is an error of the set-up, not a crash of the controller; one that failed later still alarms', (t) => {
  const exits = [{ code: -2, expected: false }];
  const neverStarted = {
    sequence: sequence([step('integer-up', ['spec', 'size'], 3)]),
    crKey: CR,
    events: [],
    error: 'controller.command: ENOENT',
    controllerExits: exits,
  } as unknown as SequenceRun;
  const [none] = judgeExploration([neverStarted]);
  t.deepEqual(none!.alarms, []);
  t.is(none!.error, 'controller.command: ENOENT');
  const midway = {
    ...run([step('integer-up', ['spec', 'size'], 3)], new RunBuilder().seed().op(0, { size: 3 }, [[STS, sts('cache:1', 3)]])),
    error: 'timed out',
    controllerExits: [{ code: 2, expected: false }],
  } as unknown as SequenceRun;
  const [crashed] = judgeExploration([midway]);
  t.true(crashed!.alarms.some((a) => a.oracle === 'crash'));
});

test("a crash is the step's during which the controller exited: the exit and that incarnation's panic name it; a panic it survived names none", (t) => {
  const steps = [step('integer-up', ['spec', 'size'], 3), step('object-delete', ['spec', 'resources'], undefined)];
  const b = new RunBuilder()
    .seed()
    .op(0, { size: 3 }, [[STS, sts('cache:1', 3)]])
    .op(1, { resources: undefined });
  b.exit(1);
  const crashed = {
    ...run(steps, b),
    controllerExits: [
      { code: 2, signal: null, expected: false, incarnation: 1 },
      { code: 0, signal: null, expected: true, incarnation: 2 },
    ],
    controllerLog:
      '[1] starting\n[1] panic: runtime error: invalid memory address or nil pointer dereference\n[1] goroutine 1 [running]:\n[2] starting\n' +
      '[2] E1129 Observed a panic: "index out of range" (runtime error)\n',
  } as unknown as SequenceRun;
  const [judged] = judgeExploration([crashed]);
  t.deepEqual(
    judged!.alarms.filter((a) => a.oracle === 'crash').map((a) => [a.step, a.message.replace(/line \d+/, 'line N')]),
    [
      [2, 'the controller exited (code 2) during the sequence'],
      [2, 'controller.log line N: panic: runtime error: invalid memory address or nil pointer dereference'],
      [undefined, 'controller.log line N: panic: Observed a panic: "index out of range" (runtime error)'],
    ],
  );
});

/** The CR as the controller reports on it: the seed with `spec` over it and `status`. */
const crWith = (spec: Record<string, unknown>, status: Record<string, unknown>): KubeObject =>
  ({ ...seedCr, spec: { ...seedCr.spec, ...spec }, status }) as unknown as KubeObject;

test('input the controller reports as invalid (its status names the field) is rejected, not a bug; the steps after it ran on a CR it refuses and wait for the rollback', (t) => {
  const steps = [step('string-empty', ['spec', 'version'], ''), step('integer-up', ['spec', 'size'], 3)];
  const refusing = new RunBuilder()
    .seed()
    .op(0, { version: '' }, [[CR, crWith({ version: '' }, { phase: 'Error', message: 'spec.version: invalid value "": expected MAJOR.MINOR.PATCH' })]])
    .op(1, { size: 3 });
  const [j] = judgeExploration([run(steps, refusing)]);
  t.deepEqual(
    j!.steps.map((s) => s.verdict),
    ['rejected', 'not-run'],
  );
  t.like(j!.steps[0], { rejectedBy: 'controller', rejection: 'spec.version: invalid value "": expected MAJOR.MINOR.PATCH' });
  t.deepEqual(j!.alarms, []);
  // An Event about the CR naming the value says the same; a status that names the field without calling it invalid does not.
  const byEvent = new RunBuilder().seed().op(0, { version: '' });
  byEvent.change(
    'Event/default/c1.1',
    {
      apiVersion: 'v1',
      kind: 'Event',
      metadata: { name: 'c1.1', namespace: 'default' },
      involvedObject: { kind: 'Cache', name: 'c1', namespace: 'default' },
      message: 'version "" is not valid',
    } as unknown as KubeObject,
    'ADDED',
  );
  t.is(judgeExploration([run(steps.slice(0, 1), byEvent)])[0]!.steps[0]!.rejectedBy, 'controller');
  const plain = new RunBuilder().seed().op(0, { size: 3 }, [
    [CR, crWith({ size: 3 }, { message: 'spec.size scaled to 3' })],
    [STS, sts('cache:1', 3)],
  ]);
  t.is(judgeExploration([run([step('integer-up', ['spec', 'size'], 3)], plain)])[0]!.steps[0]!.verdict, 'ok');
});

test('rollback targets: the step whose input the controller refused, and the first that alarmed or left the system unhealthy; not a misoperation', (t) => {
  const refused = new RunBuilder()
    .seed()
    .op(0, { size: 3 }, [[STS, sts('cache:1', 3)]])
    .op(1, { version: 'x' }, [[CR, crWith({ size: 3, version: 'x' }, { message: 'spec.version: invalid value "x"' })]]);
  const steps = [step('integer-up', ['spec', 'size'], 3), step('string-change', ['spec', 'version'], 'x')];
  const r = run(steps, refused);
  t.deepEqual(rollbackTargets(judgeExploration([r])[0]!, r), [{ step: 2, why: 'refused' }]);
  const short = { ...sts('cache:1', 3), status: { readyReplicas: 1 } };
  const unhealthy = run([step('integer-up', ['spec', 'size'], 3)], new RunBuilder().seed().op(0, { size: 3 }, [[STS, short]]));
  t.deepEqual(rollbackTargets(judgeExploration([unhealthy])[0]!, unhealthy), [{ step: 1, why: 'unhealthy' }]);
  const mis = run([step('replicas-beyond-nodes', ['spec', 'size'], 3, undefined, 'misoperation')], new RunBuilder().seed().op(0, { size: 3 }, [[STS, short]]));
  t.deepEqual(rollbackTargets(judgeExploration([mis])[0]!, mis), []);
});

test('rollback targets: a misoperation whose input the controller refused is rolled back too, so the steps after it run on the CR before it', (t) => {
  // rabbitmq-operator: replicas far beyond the nodes, then back down, a scale-down it refuses by design.
  const refusedDown = new RunBuilder()
    .seed()
    .op(0, { size: 24 }, [[STS, sts('cache:1', 24)]])
    .op(1, { size: 2 }, [[CR, crWith({ size: 2 }, { message: 'spec.size: scale down not supported' })]])
    .op(2, { image: 'cache:2' }, [[STS, sts('cache:2', 24)]]);
  const steps = [
    step('replicas-beyond-nodes', ['spec', 'size'], 24, undefined, 'misoperation'),
    step('replicas-beyond-nodes', ['spec', 'size'], 2, undefined, 'misoperation'),
    step('image-change', ['spec', 'image'], 'cache:2'),
  ];
  const r = run(steps, refusedDown);
  const judged = judgeExploration([r])[0]!;
  t.like(judged.steps[1], { verdict: 'rejected', rejectedBy: 'controller' });
  t.is(judged.steps[2]!.verdict, 'not-run', 'judged after the rollback');
  t.deepEqual(rollbackTargets(judged, r), [{ step: 2, why: 'refused' }]);
});

/** A rollback run: the seed, a bad version the controller carries into the StatefulSet's annotation, then the version before it re-applied. */
function rollbackRun(annotationAfterRollback: string): TraceEvent[] {
  const annotated = (version: string): KubeObject => {
    const s = sts('cache:1') as unknown as { spec: { template: Record<string, unknown> } };
    return { ...s, spec: { ...s.spec, template: { ...s.spec.template, metadata: { annotations: { 'demo/version': version } } } } } as unknown as KubeObject;
  };
  const b = new RunBuilder().seed();
  b.controllerWrites(STS, annotated('1.0.0'));
  return b
    .op(0, { version: '1.0' }, [
      [STS, annotated('1.0')],
      [CR, crWith({ version: '1.0' }, { phase: 'Error', message: 'spec.version: invalid value "1.0"' })],
    ])
    .op(1, { version: '1.0.0' }, [[STS, annotated(annotationAfterRollback)]]).events;
}

test('rollback: re-applying the CR before a refused step must bring back the objects as they were before it', (t) => {
  const c = (events: TraceEvent[]) => ({ sequence: 'explore-cache-c1-1', step: 1, why: 'refused' as const, crKey: CR, events, steps: 2 });
  const stuck = rollbackAlarms(c(rollbackRun('1.0')));
  t.is(stuck!.length, 1);
  t.like(stuck![0], { oracle: 'rollback', sequence: 'explore-cache-c1-1', step: 1, object: STS, expected: '1.0.0', found: '1.0' });
  t.regex(
    stuck![0]!.message,
    /re-applying the CR before step 1 \(the controller refused its input\) did not bring back the state before it: .*"1\.0\.0" before the step, but "1\.0" after the rollback/,
  );
  t.deepEqual(rollbackAlarms(c(rollbackRun('1.0.0'))), []);
  // A rollback the API server refused judges nothing.
  const refusedRollback = new RunBuilder().seed().op(0, { version: '1.0' }).op(1, 'rejected').events;
  t.is(rollbackAlarms(c(refusedRollback)), undefined);
});

test('differential: an object the controller only created, with a body the proxy could not read (protobuf), is compared under the key its answer names', (t) => {
  const svc = (ports: string[]): KubeObject =>
    ({
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: 'c1', namespace: 'default' },
      spec: { ports: ports.map((name, i) => ({ name, port: 6379 + i })) },
    }) as unknown as KubeObject;
  const created = (b: RunBuilder, obj: KubeObject, id: number): TraceEvent[] =>
    [
      ...b.events,
      {
        seq: 900 + id,
        ts: 0,
        type: 'request',
        id,
        incarnation: 1,
        method: 'POST',
        path: '/api/v1/namespaces/default/services',
        query: {},
        verb: 'create',
        bodyBytes: 99,
        contentType: 'application/vnd.kubernetes.protobuf',
      },
      { seq: 901 + id, ts: 0, type: 'response', id, status: 201, object: obj, durationMs: 1 },
      { seq: 902 + id, ts: 0, type: 'cluster-change', eventType: 'ADDED', key: 'Service/default/c1', resourceVersion: '9', object: obj },
    ] as TraceEvent[];
  const chainedEvents = created(new RunBuilder().seed(), svc(['redis', 'metrics']), 50);
  const chained = new Map([
    [STS, sts('cache:1')],
    ['Service/default/c1', svc(['redis', 'metrics'])],
  ]);
  const fresh = new RunBuilder();
  fresh.controllerWrites(STS, sts('cache:1'));
  const alarms = differentialAlarms({ sequence: 's', step: 1, crKey: CR, chained, freshEvents: created(fresh, svc(['redis']), 60), chainedEvents });
  t.is(alarms.length, 1);
  t.like(alarms[0], { oracle: 'differential', object: 'Service/default/c1' });
});

test("differential: an imagePullPolicy the API server defaulted from the image at creation is no difference (history keeps the first image's policy)", (t) => {
  const withPolicy = (image: string, imagePullPolicy: string): KubeObject => {
    const s = sts(image) as unknown as { spec: { template: { spec: { containers: Array<Record<string, unknown>> } } } };
    s.spec.template.spec.containers = [{ ...s.spec.template.spec.containers[0], imagePullPolicy }];
    return s as unknown as KubeObject;
  };
  const chained = new Map([[STS, withPolicy('kpm-3', 'IfNotPresent')]]);
  const fresh = new RunBuilder();
  fresh.controllerWrites(STS, withPolicy('kpm-3', 'Always'));
  t.deepEqual(differentialAlarms({ sequence: 's', step: 1, crKey: CR, chained, freshEvents: fresh.events, chainedEvents: fresh.events }), []);
  const otherImage = new RunBuilder();
  otherImage.controllerWrites(STS, withPolicy('kpm-4', 'Always'));
  t.is(differentialAlarms({ sequence: 's', step: 1, crKey: CR, chained, freshEvents: otherImage.events, chainedEvents: otherImage.events }).length, 1);
});

function probed(live: Record<string, number>, ready: Record<string, number>): KubeObject {
  const o = sts('cache:1');
  const c = (o.spec as { template: { spec: { containers: Array<Record<string, unknown>> } } }).template.spec.containers[0]!;
  c.livenessProbe = live;
  c.readinessProbe = ready;
  return o;
}

test('without a marker: 0 is not judged by value (Go cannot tell it from unset; the API server defaults it), and a same-named field under a parent of another name is not the field', (t) => {
  const seeded = { ...seedCr, spec: { ...seedCr.spec, probes: { readinessProbe: { periodSeconds: 10 }, livenessProbe: { periodSeconds: 10 } } } };
  const zero = [step('integer-down', ['spec', 'probes', 'readinessProbe', 'periodSeconds'], 0)];
  const b = new RunBuilder()
    .seed()
    .op(0, { probes: { readinessProbe: { periodSeconds: 0 }, livenessProbe: { periodSeconds: 10 } } }, [
      [STS, probed({ periodSeconds: 10 }, { periodSeconds: 10 })],
    ]);
  const [z] = judgeExploration([{ ...run(zero, b), sequence: { ...sequence(zero), seed: seeded } }]);
  t.deepEqual(z!.alarms, []);
  t.regex(z!.steps[0]!.notes.join(' '), /0 is not traced by value/);

  // 10 -> 11 never reaches the readiness probe: the alarm names it, not the liveness probe's field of the same name and value.
  const probes = (ready: number) => ({ probes: { readinessProbe: { periodSeconds: ready }, livenessProbe: { periodSeconds: 10 } } });
  const up = [step('object-change', ['spec', 'probes'], probes(10).probes), step('integer-up', ['spec', 'probes', 'readinessProbe', 'periodSeconds'], 11)];
  const u = new RunBuilder()
    .seed()
    .op(0, probes(10), [[STS, probed({ periodSeconds: 10 }, { periodSeconds: 10 })]])
    .op(1, probes(11));
  const [j] = judgeExploration([run(up, u)]);
  t.deepEqual(
    j!.alarms.map((a) => a.field),
    ['spec.template.spec.containers[0].readinessProbe.periodSeconds'],
  );
});

test('a refusal that gives both numbers of the change (from 2 to 1), whatever it calls the field, is the controller rejecting the step', (t) => {
  const steps = [step('integer-down', ['spec', 'size'], 1)];
  const b = new RunBuilder().seed().op(0, { size: 1 }, [
    [
      CR,
      crWith(
        { size: 1 },
        {
          conditions: [
            { type: 'ReconcileSuccess', status: 'False', message: 'Cluster Scale down not supported; tried to scale cluster from 2 nodes to 1 nodes' },
          ],
        },
      ),
    ],
  ]);
  const [j] = judgeExploration([run(steps, b)]);
  t.like(j!.steps[0], { verdict: 'rejected', rejectedBy: 'controller' });
  t.deepEqual(j!.alarms, []);
  // The numbers alone, without a word of refusal, are no refusal; nor a message with one of them only.
  const said = (message: string) =>
    judgeExploration([run(steps, new RunBuilder().seed().op(0, { size: 1 }, [[CR, crWith({ size: 1 }, { message })]]))])[0]!.steps[0]!.rejectedBy;
  t.is(said('scaled from 2 nodes to 1 nodes'), undefined);
  t.is(said('scale down to 1 not supported'), undefined);
});

test('a value that reaches no object alarms only when the `enabled` flag around it is on (a gated field with its gate on); otherwise it is a note', (t) => {
  const minAvailable = (gate?: string[]): ExploreStep => ({ ...step('integer-up', ['spec', 'pdb', 'minAvailable'], 1), ...(gate ? { gate } : {}) });
  const gatedRun = (s: ExploreStep) => run([s], new RunBuilder().seed().op(0, { pdb: { enabled: true, minAvailable: 1 } }));
  const [on] = judgeExploration([gatedRun(minAvailable(['spec', 'pdb', 'enabled']))]);
  t.is(on!.alarms.length, 1);
  t.like(on!.alarms[0], { oracle: 'consistency', step: 1, field: 'spec.pdb.minAvailable', matchedBy: 'value' });
  t.regex(on!.alarms[0]!.message, /with spec\.pdb\.enabled true, but 1 reached no object the controller writes/);
  const [off] = judgeExploration([gatedRun(minAvailable())]);
  t.deepEqual(off!.alarms, []);
  t.regex(off!.steps[0]!.notes.join(' '), /reached no object/);
  // A boolean under the gate chooses behaviour, it is not copied anywhere: no alarm.
  const [flag] = judgeExploration([gatedRun({ ...step('boolean-toggle', ['spec', 'pdb', 'strict'], true), gate: ['spec', 'pdb', 'enabled'] })]);
  t.deepEqual(flag!.alarms, []);
  // Reaching an object is fine, gate or not.
  const pdb: KubeObject = { apiVersion: 'policy/v1', kind: 'PodDisruptionBudget', metadata: { name: 'c1', namespace: 'default' }, spec: { minAvailable: 1 } };
  const [reached] = judgeExploration([
    run(
      [minAvailable(['spec', 'pdb', 'enabled'])],
      new RunBuilder().seed().op(0, { pdb: { enabled: true, minAvailable: 1 } }, [['PodDisruptionBudget/default/c1', pdb]]),
    ),
  ]);
  t.deepEqual(reached!.alarms, []);
});

test("rollback and differential: a client's last-applied annotation (an encoding of the object it last applied) is no difference; the object's own fields are compared", (t) => {
  const c = (events: TraceEvent[]) => ({ sequence: 'explore-cache-c1-1', step: 1, why: 'refused' as const, crKey: CR, events, steps: 2 });
  const withLastApplied = (image: string, applied: string): KubeObject => {
    const s = sts(image);
    return { ...s, metadata: { ...s.metadata, annotations: { 'banzaicloud.com/last-applied': applied } } };
  };
  const run = (imageAfter: string) => {
    const b = new RunBuilder().seed();
    b.controllerWrites(STS, withLastApplied('cache:1', 'UEsDBAone'));
    return b
      .op(0, { image: 'kpm-1' }, [[STS, withLastApplied('kpm-1', 'UEsDBAtwo')]])
      .op(1, { image: 'cache:1' }, [[STS, withLastApplied(imageAfter, 'UEsDBAthree')]]).events;
  };
  t.deepEqual(rollbackAlarms(c(run('cache:1'))), []);
  const stuck = rollbackAlarms(c(run('kpm-1')))!;
  t.is(stuck.length, 1);
  t.like(stuck[0], { field: 'spec.template.spec.containers[name=c].image', found: 'kpm-1' });
});

test("rollback and differential: the Deployment controller's rollout revision (a count of the history) is no difference; the template is compared", (t) => {
  const DEP = 'Deployment/default/c1';
  // Step 1 creates the Deployment, step 2 changes its image (a rollout), then step 2 is rolled back (another);
  // its revision is never the CR's generation (which a copy of that counter would be).
  const c = (events: TraceEvent[]) => ({ sequence: 'explore-cache-c1-1', step: 2, why: 'refused' as const, crKey: CR, events, steps: 3 });
  const deployment = (image: string, revision: string): KubeObject => ({
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'c1', namespace: 'default', annotations: { 'deployment.kubernetes.io/revision': revision } },
    spec: { replicas: 1, template: { spec: { containers: [{ name: 'c', image }] } } },
    status: { replicas: 1, readyReplicas: 1, availableReplicas: 1, updatedReplicas: 1 },
  });
  const run = (imageAfter: string) => {
    return new RunBuilder()
      .seed()
      .op(0, { size: 3 }, [[DEP, deployment('cache:1', '1')]])
      .op(1, { image: 'kpm-1' }, [[DEP, deployment('kpm-1', '2')]])
      .op(2, { image: 'cache:1' }, [[DEP, deployment(imageAfter, '3')]]).events;
  };
  t.deepEqual(rollbackAlarms(c(run('cache:1'))), []);
  const stuck = rollbackAlarms(c(run('kpm-1')))!;
  t.is(stuck.length, 1);
  t.like(stuck[0], { object: DEP, field: 'spec.template.spec.containers[name=c].image', found: 'kpm-1' });
});

test('a pod the controller only execs into is not an object it writes: its fields are not judged as copies of the CR', (t) => {
  const pod = (image: string): KubeObject => ({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'c1-0', namespace: 'default' },
    spec: { containers: [{ name: 'c', image }] },
    status: { phase: 'Running' },
  });
  const exec = (seq: number): TraceEvent =>
    ({
      seq,
      ts: 0,
      type: 'request',
      id: seq,
      incarnation: 1,
      method: 'POST',
      path: '/api/v1/namespaces/default/pods/c1-0/exec',
      query: {},
      verb: 'create',
      resource: { group: '', version: 'v1', resource: 'pods', subresource: 'exec' },
      key: POD,
    }) as TraceEvent;
  const steps = [step('string-change', ['spec', 'image'], 'kpm-1', 'kpm-1'), step('string-change', ['spec', 'image'], 'kpm-2', 'kpm-2')];
  // The StatefulSet controller rolls the pod to the first image (no request of the controller), not yet to the second;
  // the controller only execs into it.
  const b = new RunBuilder().seed().op(0, { image: 'kpm-1' }, [[STS, sts('kpm-1')]]);
  b.change(POD, pod('kpm-1'), 'ADDED');
  b.events.push(exec(b.events.length + 1000));
  b.op(1, { image: 'kpm-2' }, [[STS, sts('kpm-2')]]);
  b.events.sort((x, y) => x.seq - y.seq);
  const [j] = judgeExploration([run(steps, b)]);
  t.deepEqual(j!.alarms, []);
  t.deepEqual(
    j!.steps.map((s) => s.traced?.locations.map((l) => l.object)),
    [[STS], [STS]],
  );
});

test('an emptied string is not judged by value or path name: Go drops "" and the API server fills in its default (imagePullPolicy "" is stored as IfNotPresent)', (t) => {
  const withPolicy = (policy: string): KubeObject => {
    const o = sts('cache:1');
    (o.spec as { template: { spec: { containers: Array<Record<string, unknown>> } } }).template.spec.containers[0]!.imagePullPolicy = policy;
    return o;
  };
  const seeded = { ...seedCr, spec: { ...seedCr.spec, imagePullPolicy: 'IfNotPresent' } };
  const steps = [step('string-empty', ['spec', 'imagePullPolicy'], '')];
  const b = new RunBuilder().seed().op(0, { imagePullPolicy: '' }, [[STS, withPolicy('IfNotPresent')]]);
  const [j] = judgeExploration([{ ...run(steps, b), sequence: { ...sequence(steps), seed: seeded } }]);
  t.deepEqual(j!.alarms, []);
  t.regex(j!.steps[0]!.notes.join(' '), /"" is not traced by value/);
});

const SVC = 'Service/default/c1';
const SECRET = 'Secret/default/c1-password';
const service = (nodePort: number, annotations: Record<string, string> = {}): KubeObject => ({
  apiVersion: 'v1',
  kind: 'Service',
  metadata: { name: 'c1', namespace: 'default', annotations },
  spec: { type: 'NodePort', clusterIP: `10.0.0.${nodePort % 250}`, clusterIPs: [`10.0.0.${nodePort % 250}`], ports: [{ name: 'db', port: 5432, nodePort }] },
});
const secret = (password: string): KubeObject => ({
  apiVersion: 'v1',
  kind: 'Secret',
  metadata: { name: 'c1-password', namespace: 'default' },
  data: { password },
});

test("differential: what the API server allocates at creation (a Service's node ports and cluster IPs) is no difference between history and scratch", (t) => {
  const chained = new Map([[SVC, service(30000)]]);
  const fresh = new RunBuilder();
  fresh.controllerWrites(SVC, service(30002));
  t.deepEqual(differentialAlarms({ sequence: 's', step: 1, crKey: CR, chained, freshEvents: fresh.events, chainedEvents: fresh.events }), []);
  const kept = new RunBuilder();
  kept.controllerWrites(SVC, service(30002, { 'kperturb.dev/kpm-7': 'kpm-7' }));
  t.is(differentialAlarms({ sequence: 's', step: 1, crKey: CR, chained, freshEvents: kept.events, chainedEvents: kept.events }).length, 1);
});

test('differential: a run whose controller exited when kperturb did not stop it is not compared (the crash oracle speaks for it)', (t) => {
  const chained = new Map<string, KubeObject>();
  const fresh = new RunBuilder();
  fresh.controllerWrites(STS, sts('cache:1'));
  const c = { sequence: 's', step: 1, crKey: CR, chained, freshEvents: fresh.events, chainedEvents: [] };
  t.is(differentialAlarms(c).length, 1);
  t.deepEqual(differentialAlarms({ ...c, chainedExits: [{ expected: false }] }), []);
  t.deepEqual(differentialAlarms({ ...c, freshExits: [{ expected: false }] }), []);
  t.is(differentialAlarms({ ...c, chainedExits: [{ expected: true }] }).length, 1);
});

test('differential: a state the sequence reached before its controller exited (the exit traced after the next operation began) is compared; a state after the exit is not', (t) => {
  const b = new RunBuilder().seed().op(0, { size: 3 });
  const last = b.events.at(-1)!.seq;
  b.events.push(
    { seq: last + 1, ts: 0, type: 'workload-step', index: 4, description: '', phase: 'start' } as TraceEvent,
    { seq: last + 2, ts: 0, type: 'controller', action: 'exit', incarnation: 1, code: 2, signal: null } as TraceEvent,
  );
  const fresh = new RunBuilder();
  fresh.controllerWrites(STS, sts('cache:1'));
  const c = { sequence: 's', step: 1, crKey: CR, chained: new Map<string, KubeObject>(), freshEvents: fresh.events, chainedEvents: b.events };
  t.is(differentialAlarms({ ...c, chainedExits: [{ expected: false, incarnation: 1 }] }).length, 1);
  // The state after step 2 is the trace's end, after the exit.
  t.deepEqual(differentialAlarms({ ...c, step: 2, chainedExits: [{ expected: false, incarnation: 1 }] }), []);
  // An exit the trace does not place (no incarnation) is not compared.
  t.deepEqual(differentialAlarms({ ...c, chainedExits: [{ expected: false }] }), []);
});

test('differential: fields that differ between two fresh runs of the same CR (a generated password) are learned as nondeterministic and not compared; the others still are', (t) => {
  const chained = new Map([
    [SECRET, secret('aaaa')],
    [STS, sts('cache:1')],
  ]);
  const fresh = new RunBuilder();
  fresh.controllerWrites(SECRET, secret('bbbb'));
  fresh.controllerWrites(STS, sts('kpm-1'));
  const again = new RunBuilder();
  again.controllerWrites(SECRET, secret('cccc'));
  // A uid differs too, as between any two runs: the built-in masks leave it out already, so it is not learned.
  const withUid = sts('kpm-1');
  again.controllerWrites(STS, { ...withUid, metadata: { ...withUid.metadata, uid: 'u-2' } } as KubeObject);
  const c = { sequence: 's', step: 1, crKey: CR, chained, freshEvents: fresh.events, chainedEvents: fresh.events };
  t.deepEqual(
    differentialAlarms(c).map((a) => a.object),
    [SECRET, STS],
  );
  const learned = nondeterministicFields([fresh.events, again.events], CR);
  t.deepEqual([...learned.keys()], [SECRET]);
  t.deepEqual(
    differentialAlarms(c, [], learned).map((a) => a.object),
    [STS],
  );
});

test("input the API server refuses one level down (the StatefulSet controller's FailedCreate of the pod names the field) is rejected, not a bug", (t) => {
  const event = (reason: string, type: string, message: string, about = STS): KubeObject => {
    const [kind, namespace, name] = about.split('/');
    return {
      apiVersion: 'v1',
      kind: 'Event',
      metadata: { name: `${name}.1`, namespace },
      involvedObject: { kind, namespace, name },
      reason,
      type,
      message,
    } as unknown as KubeObject;
  };
  const refusal =
    'create Pod c1-0 in StatefulSet c1 failed error: Pod "c1-0" is invalid: spec.tolerations[0].operator: Invalid value: "": operator must be Exists when `key` is empty, which means "match all values and all keys"';
  const steps = [step('array-push', ['spec', 'tolerations'], [{}])];
  // The set takes the toleration; its controller's pod create is refused (an Event about the set, after the step).
  const judged = (events: KubeObject[]) => {
    const r = new RunBuilder().seed().op(0, { tolerations: [{}] }, [[STS, { ...sts('cache:1'), status: { readyReplicas: 0 } }]]);
    for (const e of events) r.change(`Event/default/${e.metadata!.name}`, e, 'ADDED');
    return judgeExploration([run(steps, r)])[0]!;
  };
  const j = judged([event('FailedCreate', 'Warning', refusal)]);
  t.like(j.steps[0], { verdict: 'rejected', rejectedBy: 'controller', rejection: refusal });
  // A Normal event, or one about an object the controller does not write, is not a refusal.
  t.not(judged([event('SuccessfulCreate', 'Normal', refusal)]).steps[0]!.verdict, 'rejected');
  t.not(judged([event('FailedCreate', 'Warning', refusal, 'StatefulSet/default/other')]).steps[0]!.verdict, 'rejected');
});

test("a pod refused over a property explore filled into an object the step created (a container without an image) is the step's input refused, not a bug", (t) => {
  // rabbitmq-operator's shape: a step under spec.override.statefulSet.spec.template.spec on a seed with no
  // override creates the template with the `containers: [{name: kperturb}]` the CRD requires; the operator
  // merges it into its pod template by name, and kube-apiserver refuses the pod whose `kperturb` has no image.
  const path = ['spec', 'override', 'template', 'spec', 'preemptionPolicy'];
  const withFiller = { spec: { override: { template: { spec: { preemptionPolicy: 'kpm-23', containers: [{ name: 'kperturb' }] } } } } };
  const refusal = 'create Pod c1-0 in StatefulSet c1 failed error: Pod "c1-0" is invalid: spec.containers[0].image: Required value';
  const judged = (patch: Record<string, unknown>) => {
    const steps = [{ ...step('string-change', path, 'kpm-23', 'kpm-23'), patch }];
    const r = new RunBuilder().seed().op(0, (patch as { spec: Record<string, unknown> }).spec, [[STS, { ...sts('cache:1'), status: { readyReplicas: 0 } }]]);
    r.change('Event/default/c1.1', {
      apiVersion: 'v1',
      kind: 'Event',
      metadata: { name: 'c1.1', namespace: 'default' },
      involvedObject: { kind: 'StatefulSet', namespace: 'default', name: 'c1' },
      reason: 'FailedCreate',
      type: 'Warning',
      message: refusal,
    } as unknown as KubeObject);
    return judgeExploration([run(steps, r)])[0]!;
  };
  const j = judged(withFiller);
  t.like(j.steps[0], { verdict: 'rejected', rejectedBy: 'controller', rejection: refusal });
  t.deepEqual(j.alarms, []);
  // The same refusal after a step that filled nothing names no input of it: the health alarm stays.
  const plain = judged({ spec: { override: { template: { spec: { preemptionPolicy: 'kpm-23' } } } } });
  t.is(plain.steps[0]!.verdict, 'ok');
  t.deepEqual(
    plain.alarms.map((a) => [a.oracle, a.object]),
    [['health', STS]],
  );
});

test('a field of the CR the controller writes back within the step is input it did not take, not an inconsistency of its objects', (t) => {
  // rabbitmq-operator with CONTROL_RABBITMQ_IMAGE=true sets spec.image to its default on every reconcile.
  const steps = [step('image-change', ['spec', 'image'], 'registry.example/kpm-1:1.0', 'kpm-1')];
  const judged = (writeBack: boolean) => {
    const b = new RunBuilder().seed();
    const rewritten = { ...seedCr, metadata: { ...seedCr.metadata, generation: 3 }, spec: { ...seedCr.spec, image: 'cache:1' } } as KubeObject;
    return judgeExploration([run(steps, b.op(0, { image: 'registry.example/kpm-1:1.0' }, writeBack ? [[CR, rewritten]] : []))])[0]!;
  };
  const j = judged(true);
  t.like(j.steps[0], { verdict: 'rejected', rejectedBy: 'controller' });
  t.regex(j.steps[0]!.rejection!, /wrote spec\.image of the CR back to "cache:1"/);
  t.deepEqual(j.alarms, []);
  // The CR left as the step wrote it, and the StatefulSet still on the old image: the alarm stays.
  t.deepEqual(
    judged(false).alarms.map((a) => [a.oracle, a.object]),
    [['consistency', STS]],
  );
});

test("a traced field that an override in the CR holds (override.statefulSet.spec.replicas for the StatefulSet's spec.replicas) follows the override: a note, not an alarm", (t) => {
  // rabbitmq-operator: spec.replicas 2 -> 1 while spec.override.statefulSet.spec.replicas is 2 leaves the StatefulSet at 2 by design.
  const judged = (override: boolean) => {
    const steps = [step('integer-up', ['spec', 'size'], 3), step('integer-down', ['spec', 'size'], 2)];
    const b = new RunBuilder().seed().op(0, { size: 3 }, [[STS, sts('cache:1', 3)]]);
    b.op(1, { size: 2, ...(override ? { override: { statefulSet: { spec: { replicas: 3 } } } } : {}) }, [[STS, sts('cache:1', 3)]]);
    return judgeExploration([run(steps, b)])[0]!;
  };
  const j = judged(true);
  t.deepEqual(j.alarms, []);
  t.true(
    j.steps[1]!.notes.some((n) => n.includes('follows spec.override.statefulSet.spec.replicas')),
    j.steps[1]!.notes.join('; '),
  );
  t.deepEqual(
    judged(false).alarms.map((a) => [a.oracle, a.object, a.field]),
    [['consistency', STS, 'spec.replicas']],
  );
});

test('another CR field the map traced to the same object and field, holding the value the object has, is an override: a note; a field of another name traced there by a colliding value is not', (t) => {
  // redis-ot's whole explore, sequence 18: spec.redisFollower.replicas 1 sets the follower
  // StatefulSet's replicas over spec.clusterSize (GetReplicaCounts); clusterSize 3 -> 4 leaves it at 1.
  const judged = (other: string[], holds: number) => {
    const steps = [step('integer-up', ['spec', 'size'], 3), step('integer-down', other, 2), step('integer-up', ['spec', 'size'], 4)];
    const b = new RunBuilder()
      .seed()
      .op(0, { size: 3 }, [[STS, sts('cache:1', 3)]])
      .op(1, { [other[1]!]: { [other[2]!]: 2 } }, [[STS, sts('cache:1', 2)]])
      .op(2, { size: 4 }, [[STS, sts('cache:2', holds)]]);
    return judgeExploration([run(steps, b)])[0]!;
  };
  const j = judged(['spec', 'follower', 'replicas'], 2);
  t.deepEqual(j.steps[1]!.traced, { via: 'value', locations: [{ object: STS, field: 'spec.replicas', relation: 'exact' }] });
  t.deepEqual(j.alarms, []);
  t.true(
    j.steps[2]!.notes.some((n) => n.includes('follows spec.follower.replicas, which holds 2')),
    j.steps[2]!.notes.join('; '),
  );
  // The object holds another value than the override: the step's change did not reach it.
  t.deepEqual(
    judged(['spec', 'follower', 'replicas'], 3).alarms.map((a) => [a.oracle, a.object, a.field]),
    [['consistency', STS, 'spec.replicas']],
  );
  // A field of another name that a colliding 2 traced there is no override.
  t.deepEqual(
    judged(['spec', 'cache', 'threads'], 2).alarms.map((a) => [a.oracle, a.object, a.field]),
    [['consistency', STS, 'spec.replicas']],
  );
});

test('a location the map learned in another sequence, of an object absent from this run and never written in it, is a note; an object of this run the marker missed still alarms', (t) => {
  // cass-operator's whole explore, sequence 27: a Service named after the clusterName sequence 19 set
  // (kpm-48-...), learned there, alarmed as "(object absent)" where the cluster is cluster1.
  const OTHER = 'StatefulSet/default/kpm-0-c1';
  const steps = (marker: string) => [step('string-change', ['spec', 'image'], marker, marker)];
  const judged = (present: boolean) => {
    const map = new Map() as Parameters<typeof judgeExploration>[1];
    const first = new RunBuilder().seed().op(0, { image: 'kpm-1' }, [[OTHER, { ...sts('kpm-1'), metadata: { name: 'kpm-0-c1', namespace: 'default' } }]]);
    const second = new RunBuilder().seed();
    if (present) second.change(OTHER, { ...sts('cache:1'), metadata: { name: 'kpm-0-c1', namespace: 'default' } }, 'ADDED');
    second.op(0, { image: 'kpm-2' }, [[STS, sts('kpm-2')]]);
    const [, j] = judgeExploration(
      [run(steps('kpm-1'), first), { ...run(steps('kpm-2'), second), sequence: { ...sequence(steps('kpm-2')), name: 'explore-cache-c1-2' } }],
      map,
    );
    return j!;
  };
  const absent = judged(false);
  t.deepEqual(absent.alarms, []);
  t.true(absent.steps[0]!.notes.some((n) => n.includes(`${OTHER} (where an earlier marker of spec.image went) does not exist in this run`)));
  t.deepEqual(
    judged(true).alarms.map((a) => [a.oracle, a.object]),
    [['consistency', OTHER]],
  );
});

test("differential: a label that copies the CR's resourceVersion (zookeeper-operator's owner-rv) counts the CR's writes and is no difference; another label still is", (t) => {
  const labelled = (labels: Record<string, string>) => sts('cache:1', 2, labels);
  // The CR's versions in each run are its cluster-change events' resourceVersions (the builder's seq).
  const lastVersion = (events: readonly TraceEvent[]) =>
    [...events].reverse().find((e): e is ClusterChangeEvent => e.type === 'cluster-change' && e.key === CR)!.resourceVersion;
  const chainedRun = new RunBuilder().seed().op(0, { size: 3 });
  const chained = new Map([[STS, labelled({ 'owner-rv': lastVersion(chainedRun.events) })]]);
  const fresh = new RunBuilder().seed();
  fresh.controllerWrites(STS, labelled({ 'owner-rv': lastVersion(fresh.events) }));
  t.not(lastVersion(chainedRun.events), lastVersion(fresh.events));
  const c = { sequence: 's', step: 1, crKey: CR, chained, freshEvents: fresh.events, chainedEvents: chainedRun.events };
  t.deepEqual(differentialAlarms(c), []);
  const other = new RunBuilder().seed();
  other.controllerWrites(STS, labelled({ 'owner-rv': 'x' }));
  t.is(differentialAlarms({ ...c, freshEvents: other.events }).length, 1);
});

test('an object the controller did not write after a step, while its log says it could not reach its application (a Service of the cluster), is an environment alarm; one it wrote after is not', (t) => {
  const log =
    '[1] {"level":"error","ts":0,"msg":"Reconciler error","error":"Error creating cluster metaroot. Connect to zk failed Failed to connect to zookeeper: zookeeper-client.default.svc.cluster.local:2181, Reason: lookup zookeeper-client.default.svc.cluster.local on 10.255.255.53:53: no such host"}\n';
  // spec.size 2 -> 3 never reaches the StatefulSet's replicas (it was traced there by value first).
  const steps = [step('integer-up', ['spec', 'size'], 3), step('integer-up', ['spec', 'size'], 4)];
  const waiting = new RunBuilder()
    .seed()
    .op(0, { size: 3 }, [[STS, sts('cache:1', 3)]])
    .op(1, { size: 4 });
  const [j] = judgeExploration([{ ...run(steps, waiting), controllerLog: log }]);
  t.is(j!.alarms.length, 1);
  t.like(j!.alarms[0], { oracle: 'consistency', step: 2, class: 'environment' });
  t.regex(j!.alarms[0]!.why!, /could not reach its application: zookeeper-client\.default\.svc\.cluster\.local:2181.*no such host/);
  // The controller wrote its StatefulSet after the step (and still left the field): judged as usual.
  const wrote = new RunBuilder()
    .seed()
    .op(0, { size: 3 }, [[STS, sts('cache:1', 3)]])
    .op(1, { size: 4 }, [[STS, sts('cache:2', 3)]]);
  const [w] = judgeExploration([{ ...run(steps, wrote), controllerLog: log }]);
  t.is(w!.alarms.length, 1);
  t.is(w!.alarms[0]!.class, undefined);
  // Without the log line, no environment either.
  t.is(judgeExploration([run(steps, waiting)])[0]!.alarms[0]!.class, undefined);
});

test("a field the controller set by creating the object after its application was already away is judged as usual (percona's exposed Services keep a removed annotation: mgoptwo-742)", (t) => {
  const svc = 'Service/default/c1-0';
  const annotated: KubeObject = {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name: 'c1-0', namespace: 'default', annotations: { 'kperturb.dev/kpm-4': 'kpm-4' } },
    spec: { ports: [{ port: 27017 }] },
  };
  const steps = [
    step('annotation-add-then-remove', ['spec', 'serviceAnnotations'], { 'kperturb.dev/kpm-4': 'kpm-4' }, 'kpm-4', 'semantic'),
    step('annotation-add-then-remove', ['spec', 'serviceAnnotations'], {}, undefined, 'semantic'),
  ];
  const b = new RunBuilder()
    .seed()
    .op(0, { serviceAnnotations: { 'kperturb.dev/kpm-4': 'kpm-4' } }, [[svc, annotated, 'create']])
    .op(1, { serviceAnnotations: {} });
  // Each event a second apart, from the builder's seq: the log's times say where a line falls.
  for (const e of b.events) (e as { ts: number }).ts = e.seq * 1000;
  const at = (phase: 'start' | 'done', index: number) => b.events.find((e) => e.type === 'workload-step' && e.index === index && e.phase === phase)!.ts / 1000;
  const line = (seconds: number) =>
    `[1] {"level":"error","ts":${seconds},"msg":"failed to reconcile cluster","error":"ping mongo: server selection error: { Addr: c1-0.c1.default.svc.cluster.local:27017, Last error: dial tcp: lookup c1-0.c1.default.svc.cluster.local on 10.0.0.53:53: no such host }"}\n`;
  const judged = (log: string) => judgeExploration([{ ...run(steps, b), controllerLog: log }])[0]!;
  // Its dials failed before the step that created the Service, and after the removal: the removal
  // that never reached the Service is the controller's.
  const before = judged(line(at('done', 1) - 0.5) + line(at('start', 4) + 0.5));
  t.is(before.alarms.length, 1);
  t.like(before.alarms[0], { oracle: 'consistency', step: 2, object: svc, field: 'metadata.annotations["kperturb.dev/kpm-4"]' });
  t.is(before.alarms[0]!.class, undefined);
  // First said after the creation (and the Service not written since): the controller may be waiting.
  t.is(judged(line(at('start', 4) + 0.5)).alarms[0]!.class, 'environment');
});

test("an object the controller did not write while its log says the application on a pod is not running (cass-operator's management API) is an environment alarm, for that pod's replicas and template only", (t) => {
  // cass-operator's whole explore: every reconcile stops in CheckPodsReady ("management api is not
  // running on pod"), before a scale-down or a pod template change reaches the StatefulSet.
  const steps = [step('integer-up', ['spec', 'size'], 3), step('integer-down', ['spec', 'size'], 1)];
  const build = (wrote: boolean) => {
    const b = new RunBuilder().seed();
    b.change(POD, stsPod({}, 'Running'), 'ADDED');
    b.op(0, { size: 3 }, [[STS, sts('cache:1', 3)]]).op(
      1,
      { size: 1 },
      wrote ? [[STS, { ...sts('cache:1', 3), metadata: { name: 'c1', namespace: 'default', labels: { a: 'b' } } }]] : [],
    );
    // Each event a second apart, from the builder's seq: the log's times say which step a line is in.
    for (const e of b.events) (e as { ts: number }).ts = e.seq * 1000;
    return b;
  };
  const op1 = (b: RunBuilder) => b.events.find((e) => e.type === 'workload-step' && e.index === 4 && e.phase === 'start')!.ts / 1000;
  const line = (seconds: number) => `[1] {"level":"info","ts":${seconds},"msg":"management api is not running on pod","name":"c1","pod":"c1-0"}\n`;
  const judged = (b: RunBuilder, log: string) => judgeExploration([{ ...run(steps, b), controllerLog: log }])[0]!;
  const waiting = build(false);
  const j = judged(waiting, line(op1(waiting) + 0.5));
  t.is(j.alarms.length, 1);
  t.like(j.alarms[0], { oracle: 'consistency', step: 2, object: STS, field: 'spec.replicas', class: 'environment' });
  t.regex(j.alarms[0]!.why!, /did not write StatefulSet\/default\/c1 after this step and said its application is not up: api is not running on pod c1-0/);
  // zap's console encoder, its time in epoch seconds (redis-ot's log), the pod in its fields.
  const plain = `[1] ${(op1(waiting) + 0.5).toExponential()}\tINFO\tcontroller\tmanagement api is not running on pod\t{"pod": "c1-0"}\n`;
  t.is(judged(waiting, plain).alarms[0]!.class, 'environment');
  // Said before the step, and the StatefulSet not written since: the same.
  t.is(judged(waiting, line(op1(waiting) - 0.5)).alarms[0]!.class, 'environment');
  // Said before a write of the StatefulSet: that write is after the word, no environment.
  const early = `[1] {"level":"info","ts":1,"msg":"management api is not running on pod","pod":"c1-0"}\n`;
  t.is(judged(waiting, early).alarms[0]!.class, undefined);
  // The controller wrote its StatefulSet after the step: judged as usual.
  const wrote = build(true);
  t.is(judged(wrote, line(op1(wrote) + 0.5)).alarms[0]!.class, undefined);
  // Without the line, or for a field the operator changes without the application (a label), no environment.
  t.is(judged(waiting, '').alarms[0]!.class, undefined);
  const r = { ...run(steps, waiting), controllerLog: line(op1(waiting) + 0.5) };
  const after = stateAfterStep(r.events, 1, 2)!;
  t.truthy(waitingOnApplication(r, 1, STS, 'spec.template.spec.dnsPolicy', after));
  t.is(waitingOnApplication(r, 1, STS, 'metadata.labels["kpm-1"]', after), undefined);
  t.is(waitingOnApplication(r, 1, 'Service/default/c1', 'spec.ports[0].port', after), undefined);
});

test("a panic over a program of the controller's image missing on this machine is an environment crash alarm; another panic is not", (t) => {
  const steps = [step('string-change', ['spec', 'image'], 'kpm-1', 'kpm-1')];
  const b = new RunBuilder().seed().op(0, { image: 'kpm-1' }, [[STS, sts('kpm-1')]]);
  const missing =
    'panic: error: [cert create-ca --certs-dir=/tmp/c --ca-key=/tmp/k/ca.key]: exec: "cockroach": executable file not found in $PATH\n\ngoroutine 1 [running]:\nmain.main()\n';
  const [j] = judgeExploration([{ ...run(steps, b), controllerLog: missing }]);
  t.like(j!.alarms[0], { oracle: 'crash', class: 'environment' });
  t.regex(j!.alarms[0]!.why!, /exec: "cockroach": executable file not found/);
  const nilPointer = 'panic: runtime error: invalid memory address or nil pointer dereference\n\ngoroutine 1 [running]:\nmain.main()\n';
  const [k] = judgeExploration([{ ...run(steps, b), controllerLog: nilPointer }]);
  t.like(k!.alarms[0], { oracle: 'crash' });
  t.is(k!.alarms[0]!.class, undefined);
});

test("rollback run: a panic the sequence's own run did not show is a crash alarm of the step rolled back, and a rollback whose controller died is not compared", (t) => {
  const events = rollbackRun('1.0');
  const last = events.at(-1)!.seq;
  const exited = [...events, { seq: last + 1, ts: 0, type: 'controller', action: 'exit', incarnation: 1, code: 2, signal: null } as TraceEvent];
  const log = 'x\npanic: runtime error: index out of range [-1]\n\ngoroutine 1 [running]:\nmain.main()\n';
  const c = { sequence: 'explore-cache-c1-1', step: 1, rollbackRun: 'explore-cache-c1-1-rollback-1' };
  const crash = rollbackCrash({ events: exited, controllerLog: log, controllerExits: [{ code: 2, signal: null, expected: false, incarnation: 1 }] }, c, []);
  t.false(crash.compared);
  t.is(crash.alarms.length, 2);
  t.like(crash.alarms[1], { oracle: 'crash', sequence: 'explore-cache-c1-1', step: 1 });
  t.regex(
    crash.alarms[1]!.message,
    /^controller\.log line 2: panic: runtime error: index out of range \[-1\] \(in explore-cache-c1-1-rollback-1: the sequence replayed up to step 1/,
  );
  // The same panic in the sequence's own run (on another line) is not news.
  const known = [{ oracle: 'crash' as const, sequence: c.sequence, message: 'controller.log line 9: panic: runtime error: index out of range [-1]' }];
  t.is(rollbackCrash({ events, controllerLog: log }, c, known).alarms.length, 0);
  // A controller alive to the end: compared, no alarm.
  t.deepEqual(rollbackCrash({ events, controllerLog: 'ok\n' }, c, []), { alarms: [], compared: true });
});

// ---- bookkeeping: a child's copy of the CR's generation --------------------------------------------

const GENERATION = 'demo.kperturb.dev/generation';
/**
 * The StatefulSet of a controller that records on it the generation of the CR it acted on (as many
 * operators do), in an annotation and in its container's environment (a keyed list item, which the
 * rollback's comparison names `containers[name=c].env[name=GENERATION]`).
 */
const stamped = (image: string, replicas: number, generation: number): KubeObject => {
  const env = [{ name: 'GENERATION', value: String(generation) }];
  return {
    ...sts(image, replicas),
    metadata: { name: 'c1', namespace: 'default', annotations: { [GENERATION]: String(generation) } },
    spec: { replicas, template: { spec: { containers: [{ name: 'c', image, env }] } } },
  };
};

/**
 * The seed (generation 1), a marker into the image (2), spec.size 3 in the step that makes generation
 * 3 (so the StatefulSet's replicas and its generation annotation both change to 3), then `last`: the
 * size back to 2 (generation 4) and what the controller wrote for it.
 */
function generationRun(last: KubeObject): RunBuilder {
  const b = new RunBuilder().seed();
  b.controllerWrites(STS, stamped('cache:1', 2, 1));
  return b
    .op(0, { image: 'kpm-1' }, [[STS, stamped('kpm-1', 2, 2)]])
    .op(1, { size: 3 }, [[STS, stamped('kpm-1', 3, 3)]])
    .op(2, { size: 2 }, [[STS, last]]);
}
const generationSteps = (third: ExploreStep) => [step('string-change', ['spec', 'image'], 'kpm-1', 'kpm-1'), step('integer-up', ['spec', 'size'], 3), third];
const rolledBack = (b: RunBuilder) => rollbackAlarms({ sequence: 'explore-cache-c1-1', step: 2, why: 'inconsistent', crKey: CR, events: b.events, steps: 3 });

test("a child's copy of the CR's generation is bookkeeping: a step value equal to it is not traced there, and a rollback need not restore it", (t) => {
  const b = generationRun(stamped('kpm-1', 2, 4));
  const [j] = judgeExploration([run(generationSteps(step('integer-down', ['spec', 'size'], 2)), b)]);
  t.deepEqual(j!.steps[1]!.traced, { via: 'value', locations: [{ object: STS, field: 'spec.replicas', relation: 'exact' }] });
  t.deepEqual(j!.alarms, []);
  // The same run as a rollback of step 2: the annotation holds the generation of the rollback's write, 4, not 2.
  t.deepEqual(rolledBack(b), []);
});

test("a child field that carries the CR's value is still traced and must still be restored, even where it equalled the generation at every write", (t) => {
  // The controller never scales down: spec.replicas keeps 3.
  const stuck = generationRun(stamped('kpm-1', 3, 4));
  const [j] = judgeExploration([run(generationSteps(step('integer-down', ['spec', 'size'], 2)), stuck)]);
  t.deepEqual(
    j!.alarms.map((a) => [a.step, a.object, a.field, a.expected, a.found]),
    [[3, STS, 'spec.replicas', 2, 3]],
  );
  const back = rolledBack(stuck);
  t.deepEqual(
    back!.map((a) => [a.object, a.field, a.expected, a.found]),
    [[STS, 'spec.replicas', 2, 3]],
  );
  t.notRegex(back![0]!.message, /annotations|env/);

  // From a seed of size 1, integer-up makes replicas 1, 2 at generations 1, 2: the spec explains it as well, so it is the spec's.
  const b = new RunBuilder().seed('cache:1', { size: 1 });
  b.controllerWrites(STS, stamped('cache:1', 1, 1));
  b.op(0, { size: 2 }, [[STS, stamped('cache:1', 2, 2)]]).op(1, { size: 1 }, [[STS, stamped('cache:1', 2, 3)]]);
  const alarms = rollbackAlarms({ sequence: 'explore-cache-c1-1', step: 1, why: 'inconsistent', crKey: CR, events: b.events, steps: 2 });
  t.deepEqual(
    alarms!.map((a) => [a.object, a.field, a.expected, a.found]),
    [[STS, 'spec.replicas', 1, 2]],
  );
  t.notRegex(alarms![0]!.message, /annotations|env/);
});

test("differential: a child's copy of the CR's generation differs between history and scratch by nature; a field that carries the CR's value still alarms", (t) => {
  const chained = generationRun(stamped('kpm-1', 2, 4));
  const chainedState = new Map([[STS, stamped('kpm-1', 2, 4)]]);
  // From scratch: the CR created with the sequence's last spec (generation 1), written once.
  const fresh = (replicas: number) => {
    const b = new RunBuilder().seed('kpm-1');
    b.controllerWrites(STS, stamped('kpm-1', replicas, 1));
    return b.events;
  };
  const differential = (freshEvents: TraceEvent[]) =>
    differentialAlarms({ sequence: 's', step: 3, crKey: CR, chained: chainedState, freshEvents, chainedEvents: chained.events });
  t.deepEqual(differential(fresh(2)), []);
  const alarms = differential(fresh(3));
  t.deepEqual(
    alarms.map((a) => [a.object, a.field, a.expected, a.found]),
    [[STS, 'spec.replicas', 2, 3]],
  );
  t.notRegex(alarms[0]!.message, /annotations|env/);
});

test('what an input the controller refused broke is its doing, judged by its rollback; an object unhealthy before it still alarms', (t) => {
  const steps = [step('string-empty', ['spec', 'version'], '')];
  const refused = (unhealthyBefore: boolean) => {
    const b = new RunBuilder().seed();
    if (unhealthyBefore) b.controllerWrites(STS, { ...sts('cache:1'), status: { readyReplicas: 1 } });
    // zookeeper-operator's shape: the StatefulSet takes the input, its pod is refused (FailedCreate), none is ready.
    return b.op(0, { version: '' }, [
      [CR, crWith({ version: '' }, { phase: 'Error', message: 'spec.version: invalid value "": expected MAJOR.MINOR.PATCH' })],
      [STS, { ...sts('cache:1'), status: { readyReplicas: 0 } }],
    ]);
  };
  const [j] = judgeExploration([run(steps, refused(false))]);
  t.like(j!.steps[0], { verdict: 'rejected', rejectedBy: 'controller' });
  t.deepEqual(j!.alarms, []);
  t.true(
    j!.steps[0]!.notes.some((n) => /StatefulSet\/default\/c1 has 0 of 2 replicas ready/.test(n)),
    j!.steps[0]!.notes.join('\n'),
  );
  const [before] = judgeExploration([run(steps, refused(true))]);
  t.deepEqual(
    before!.alarms.map((a) => [a.oracle, a.object]),
    [['health', STS]],
  );
});

test('a write of the controller the API server refuses, naming the field of the step, is input refused: the steps after it wait for the rollback', (t) => {
  // rabbitmq-operator copies the override's clusterIP into its Service; each reconcile then stops at that Service.
  const refused = 'Service "c1" is invalid: spec.clusterIPs[0]: Invalid value: ["10.96.0.10"]: may not change once set';
  const SVC = 'Service/default/c1';
  const b = new RunBuilder().seed();
  b.controllerWrites(SVC, { apiVersion: 'v1', kind: 'Service', metadata: { name: 'c1', namespace: 'default' }, spec: { clusterIP: '10.96.0.10' } });
  b.op(0, { clusterIP: 'kpm-1' }, [[SVC, { refused }]]).op(1, { size: 3 }, [[SVC, { refused }]]);
  const steps = [step('string-change', ['spec', 'clusterIP'], 'kpm-1', 'kpm-1'), step('integer-up', ['spec', 'size'], 3)];
  const r = run(steps, b);
  const [j] = judgeExploration([r]);
  t.like(j!.steps[0], { verdict: 'rejected', rejectedBy: 'controller' });
  t.regex(j!.steps[0]!.rejection!, /may not change once set/);
  t.is(j!.steps[1]!.verdict, 'not-run', 'judged after the rollback');
  t.deepEqual(j!.alarms, []);
  t.deepEqual(rollbackTargets(j!, r), [{ step: 1, why: 'refused' }]);
  // The same refusal at a step of another field is not that step's input.
  const other = new RunBuilder().seed();
  other.controllerWrites(SVC, { apiVersion: 'v1', kind: 'Service', metadata: { name: 'c1', namespace: 'default' }, spec: { clusterIP: '10.96.0.10' } });
  other.op(0, { size: 3 }, [
    [SVC, { refused }],
    [STS, sts('cache:1', 3)],
  ]);
  t.is(judgeExploration([run([step('integer-up', ['spec', 'size'], 3)], other)])[0]!.steps[0]!.verdict, 'ok');
});

test('the controller citing the whole path of the step and its marker is input refused when it says something failed; the path or marker alone is not', (t) => {
  // rabbitmq-operator: "failed to append spec.rabbitmq.additionalConfig: key-value delimiter not found: kpm-60".
  const judge = (message: string) => {
    const b = new RunBuilder().seed().op(0, { config: 'kpm-1' }, [[CR, crWith({ config: 'kpm-1' }, { message })]]);
    return judgeExploration([run([step('string-change', ['spec', 'config'], 'kpm-1', 'kpm-1')], b)])[0]!.steps[0]!;
  };
  t.like(judge('failed to append spec.config: key-value delimiter not found: kpm-1'), { verdict: 'rejected', rejectedBy: 'controller' });
  t.is(judge('applied spec.config').verdict, 'ok');
  t.is(judge('applied spec.config: kpm-1').verdict, 'ok', 'an echo of the input is no refusal');
  t.is(judge('reconciled kpm-1').verdict, 'ok');
});

test('an update of a spec field the object cannot change after creation, refused by the API server, is the input of the step that wrote that field', (t) => {
  const refused =
    "StatefulSet.apps \"c1\" is invalid: spec: Forbidden: updates to statefulset spec for fields other than 'replicas', 'ordinals', 'template', 'updateStrategy', 'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' are forbidden";
  const judge = (field: string) => {
    const b = new RunBuilder().seed().op(0, { x: 1 }, [[STS, { refused }]]);
    return judgeExploration([run([step('enum-Parallel', ['spec', 'override', 'statefulSet', 'spec', field], 'Parallel')], b)])[0]!.steps[0]!;
  };
  t.like(judge('podManagementPolicy'), { verdict: 'rejected', rejectedBy: 'controller' });
  t.not(judge('replicas').verdict, 'rejected', 'a field the StatefulSet may change');
});
