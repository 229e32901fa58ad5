/** The stage engine: a lifecycle declared as a table (here a toy ConfigMap one) driven with fake effects. */
import test from 'ava';
import type { KubeObject } from '../../../src/model/object-key.js';
import { pathValue, StageEngine, type Lifecycle, type StageEffects } from '../../../src/cluster/sim/stages.js';

interface Ctx {
  readonly readyDelayMs: number;
}

/** A ConfigMap gets `data.state: pending` at once, then `ready` after a delay; a deleted one is removed. */
const LIFECYCLE: Lifecycle<Ctx> = {
  facts: { isPending: (obj) => (pathValue(obj, '.data.state') === 'pending' ? 'true' : undefined) },
  stages: [
    {
      name: 'remove',
      selector: { matchExpressions: [{ key: '.metadata.deletionTimestamp', operator: 'Exists' }] },
      steps: [{ log: (key) => `removing ${key}` }, { delete: true }],
    },
    {
      name: 'accept',
      selector: { matchExpressions: [{ key: '.data.state', operator: 'DoesNotExist' }] },
      steps: [{ mark: 'accepted' }, { status: () => ({ state: 'pending' }) }],
    },
    {
      name: 'ready',
      selector: { matchExpressions: [{ key: '$isPending', operator: 'Exists' }] },
      delay: { from: 'accepted', ms: (_obj, ctx) => ctx.readyDelayMs },
      steps: [{ remember: 'by', value: () => 'engine' }, { status: () => ({ state: 'ready' }) }],
    },
  ],
};

/** An in-memory store standing in for an informer and the API: `status` writes land in `data`. */
function fakeCluster(initial: KubeObject) {
  const objects = new Map<string, KubeObject>([['ns/cm', initial]]);
  const actions: string[] = [];
  const requeues: number[] = [];
  const effects: StageEffects = {
    get: (key) => objects.get(key),
    writeStatus: async (obj, status) => {
      actions.push(`write ${JSON.stringify(status)}`);
      objects.set('ns/cm', { ...obj, data: status });
    },
    delete: async () => {
      actions.push('delete');
      objects.delete('ns/cm');
    },
    requeue: (_key, ms) => requeues.push(ms),
    log: (line) => actions.push(`log ${line}`),
  };
  return { objects, actions, requeues, effects };
}

const cm = (extra: Partial<KubeObject> = {}): KubeObject => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { namespace: 'ns', name: 'cm', uid: 'u1' },
  ...extra,
});

test('with no delay the stages run one after another in one sync, each once', async (t) => {
  const c = fakeCluster(cm());
  const engine = new StageEngine(LIFECYCLE, c.effects, { readyDelayMs: 0 });
  await engine.sync('ns/cm', c.objects.get('ns/cm')!);
  t.deepEqual(c.actions, ['write {"state":"pending"}', 'write {"state":"ready"}']);
  t.deepEqual(c.requeues, []);
  t.deepEqual(engine.keysRemembering('by', 'engine'), ['ns/cm']);
});

test('a stage whose delay is not over requeues for the rest of it and does nothing', async (t) => {
  const c = fakeCluster(cm());
  const engine = new StageEngine(LIFECYCLE, c.effects, { readyDelayMs: 60_000 });
  await engine.sync('ns/cm', c.objects.get('ns/cm')!);
  t.deepEqual(c.actions, ['write {"state":"pending"}']);
  t.is(c.requeues.length, 1);
  t.true(c.requeues[0]! > 0 && c.requeues[0]! <= 60_000, `requeued in ${c.requeues[0]} ms`);
  // A second sync before the delay is over neither repeats the first stage nor runs the second.
  await engine.sync('ns/cm', c.objects.get('ns/cm')!);
  t.deepEqual(c.actions, ['write {"state":"pending"}']);
  t.is(c.requeues.length, 2);
});

test('an awaited stage counts as pending while its delay runs, and no longer once it ran or the object is forgotten', async (t) => {
  const awaited: Lifecycle<Ctx> = { ...LIFECYCLE, stages: LIFECYCLE.stages.map((s) => (s.name === 'ready' ? { ...s, awaited: true } : s)) };
  const plain = new StageEngine(LIFECYCLE, fakeCluster(cm()).effects, { readyDelayMs: 60_000 });
  await plain.sync('ns/cm', cm());
  t.is(plain.pendingUntil(), undefined, 'a stage not declared awaited is not counted');
  const c = fakeCluster(cm());
  const before = Date.now();
  const engine = new StageEngine(awaited, c.effects, { readyDelayMs: 60_000 });
  await engine.sync('ns/cm', c.objects.get('ns/cm')!);
  const due = engine.pendingUntil();
  t.true(due !== undefined && due >= before + 60_000 && due <= Date.now() + 60_000, `due at ${due}`);
  engine.forget('ns/cm', 'u1');
  t.is(engine.pendingUntil(), undefined, 'forgotten (deleted): nothing pending');
  const done = fakeCluster(cm());
  const fast = new StageEngine(awaited, done.effects, { readyDelayMs: 0 });
  await fast.sync('ns/cm', done.objects.get('ns/cm')!);
  t.is(fast.pendingUntil(), undefined, 'ran: nothing pending');
});

test('an awaited stage stays pending until its steps are written, not only until it is due', async (t) => {
  // A run that settled between the two would end before the change it waited for.
  const awaited: Lifecycle<Ctx> = { ...LIFECYCLE, stages: LIFECYCLE.stages.map((s) => (s.name === 'ready' ? { ...s, awaited: true } : s)) };
  const c = fakeCluster(cm());
  const ctx = { readyDelayMs: 60_000 };
  let engine: StageEngine<Ctx> | undefined;
  const pendingDuringWrites: (number | undefined)[] = [];
  const effects = {
    ...c.effects,
    writeStatus: async (obj: KubeObject, status: Record<string, unknown>) => {
      pendingDuringWrites.push(engine!.pendingUntil());
      await c.effects.writeStatus(obj, status);
    },
  };
  engine = new StageEngine(awaited, effects, ctx);
  await engine.sync('ns/cm', c.objects.get('ns/cm')!);
  t.not(engine.pendingUntil(), undefined, 'waiting for its delay');
  ctx.readyDelayMs = 0; // now due
  await engine.sync('ns/cm', c.objects.get('ns/cm')!);
  t.deepEqual(c.actions, ['write {"state":"pending"}', 'write {"state":"ready"}']);
  t.is(pendingDuringWrites.length, 2);
  t.not(pendingDuringWrites[1], undefined, "still pending while the awaited stage's status is written");
  t.is(engine.pendingUntil(), undefined, 'written: nothing pending');
});

test('the first matching stage decides: a deleted object is removed, not advanced', async (t) => {
  const c = fakeCluster(cm({ metadata: { namespace: 'ns', name: 'cm', uid: 'u1', deletionTimestamp: '2026-01-01T00:00:00Z' } }));
  const engine = new StageEngine(LIFECYCLE, c.effects, { readyDelayMs: 0 });
  await engine.sync('ns/cm', c.objects.get('ns/cm')!);
  t.deepEqual(c.actions, ['log removing ns/cm', 'delete']);
});

test('memory is per uid: an object re-created under the same name starts afresh, and forget drops it', async (t) => {
  const c = fakeCluster(cm());
  const engine = new StageEngine(LIFECYCLE, c.effects, { readyDelayMs: 0 });
  await engine.sync('ns/cm', c.objects.get('ns/cm')!);
  engine.forget('ns/cm', 'other-uid');
  t.deepEqual(engine.keysRemembering('by', 'engine'), ['ns/cm'], 'forgetting another uid keeps the memory');
  engine.forget('ns/cm', 'u1');
  t.deepEqual(engine.keysRemembering('by', 'engine'), []);
});

test('selector paths pick list elements by field', (t) => {
  const pod = {
    metadata: {},
    status: {
      conditions: [
        { type: 'PodScheduled', status: 'True' },
        { type: 'Ready', status: 'False' },
      ],
    },
  } as KubeObject;
  t.is(pathValue(pod, '.status.conditions[type=Ready].status'), 'False');
  t.is(pathValue(pod, '.status.conditions[type=Missing].status'), undefined);
  t.is(pathValue(pod, '.spec.nodeName'), undefined);
});
