/**
 * Triggers learned with serialized delivery must fire in a normal-delivery run, the way plans are
 * tested (`learn --serialize` records one such run beside the reference runs; docs/planner.md).
 *
 * The controller keeps a roster ConfigMap of its members and a status ConfigMap with their count.
 * Serialized, it sees one member at a time and writes the roster member by member; normally the
 * three members arrive together and it writes the roster once.
 */
import test from 'ava';
import { planTests, type PlannerOutput } from '../../planner/index.js';
import { staleViewMoment, type Trigger, type TestPlan } from '../../src/model/plan.js';
import type { KubeObject } from '../../src/model/object-key.js';
import type { ClusterChangeEvent, TraceEvent } from '../../src/model/trace.js';
import { TriggerEvaluator } from '../../src/model/trigger-eval.js';
import { countedWriteKey, isTriggerWriteVerb } from '../../src/model/controller-write.js';
import { TraceBuilder } from './_trace-builder.js';

const ROSTER = 'ConfigMap/default/roster';
const STATUS = 'ConfigMap/default/roster-status';
const MEMBERS = [
  ['ConfigMap/default/alice', 'alice', 'lead'],
  ['ConfigMap/default/bob', 'bob', 'dev'],
  ['ConfigMap/default/carol', 'carol', 'ops'],
] as const;

/** Serialized: an episode per member, each adding it to the roster and counting it. */
function serializedRun(): TraceEvent[] {
  const b = new TraceBuilder();
  MEMBERS.forEach(([key, name, role], i) => {
    b.external('ADDED', key, { set: { 'metadata.labels.member': 'true', 'data.role': role }, deliver: true }).episode();
    const verb = i === 0 ? 'create' : 'update';
    b.write(verb, ROSTER, { set: { [`data.${name}`]: role }, deliver: true });
    b.write(verb, STATUS, { set: { 'data.members': String(i + 1) }, deliver: true });
  });
  b.external('MODIFIED', MEMBERS[1][0], { set: { 'data.role': 'lead' }, deliver: true }).episode();
  b.write('update', ROSTER, { set: { 'data.bob': 'lead' }, deliver: true });
  return b.episode().events;
}

/** Normal delivery: the three members arrive together, and the roster is written once. */
function normalRun(): TraceEvent[] {
  const b = new TraceBuilder();
  for (const [key, , role] of MEMBERS) b.external('ADDED', key, { set: { 'metadata.labels.member': 'true', 'data.role': role }, deliver: true });
  b.write('create', ROSTER, { set: Object.fromEntries(MEMBERS.map(([, name, role]) => [`data.${name}`, role])), deliver: true });
  b.write('create', STATUS, { set: { 'data.members': '3' }, deliver: true });
  b.wait(5000);
  b.external('MODIFIED', MEMBERS[1][0], { set: { 'data.role': 'lead' }, deliver: true });
  b.write('update', ROSTER, { set: { 'data.bob': 'lead' }, deliver: true });
  return b.events;
}

/** Every leaf trigger of a plan: where it fires, where it restarts, the view it goes back to, what it holds. */
function triggersOf(p: TestPlan): Trigger[] {
  return p.spec.faults.flatMap((f): Trigger[] => {
    if (f.type === 'crash-after-write') return [{ write: f.after }];
    if (f.type === 'stale-restart') return [f.at, { change: staleViewMoment(f).change }];
    if (f.type === 'api-error') return [{ write: f.on }];
    if (f.type === 'watch-end') return [f.at];
    if (f.type === 'hold-until') return [{ change: f.from }, { change: f.until }];
    return 'until' in f && f.until ? [f.at, f.until] : [f.at];
  });
}

/** Does `trigger` fire in `run`, fed as the proxy feeds it at test time (trigger-eval.ts)? */
function firesIn(run: TraceEvent[], trigger: Trigger): boolean {
  const evaluator = new TriggerEvaluator(trigger);
  const state = new Map<string, KubeObject>();
  const requests = new Map<number, Extract<TraceEvent, { type: 'request' }>>();
  for (const e of run) {
    if (e.type === 'request') requests.set(e.id, e);
    if (e.type === 'response') {
      const req = requests.get(e.id);
      if (!req || !isTriggerWriteVerb(req.verb) || e.status >= 300) continue;
      const key = countedWriteKey(req, e.object);
      if (key && evaluator.write({ verb: req.verb, key, ...(req.resource?.subresource ? { subresource: req.resource.subresource } : {}) })) return true;
    }
    if (e.type !== 'cluster-change') continue;
    const c = e as ClusterChangeEvent;
    const prev = c.eventType === 'ADDED' ? undefined : state.get(c.key);
    const next = c.eventType === 'DELETED' ? undefined : c.object;
    if (next) state.set(c.key, next);
    else state.delete(c.key);
    if (evaluator.change(c.key, prev, next)) return true;
  }
  return false;
}

const notFiringNormally = (out: PlannerOutput) => out.plans.filter((p) => !triggersOf(p).every((t) => firesIn(normalRun(), t))).map((p) => p.spec.description);

test('the roster fixture: serialized learning alone plans triggers a normal run never reaches', (t) => {
  const out = planTests({ controller: 'roster', workload: 'join', references: [serializedRun(), serializedRun()] });
  // The 2nd update of the roster, the status going from 1 to 2 members: normal delivery has neither.
  t.true(notFiringNormally(out).length > 0);
  t.deepEqual(out.normalDelivery, { events: [], unreproducedTriggers: 0 });
});

test('with a normal-delivery run, every trigger of every plan fires in it', (t) => {
  const out = planTests({ controller: 'roster', workload: 'join', references: [serializedRun(), serializedRun()], normalDelivery: [normalRun()] });
  t.deepEqual(notFiringNormally(out), []);
  t.true(out.normalDelivery.unreproducedTriggers > 0);
  t.is(out.normalDelivery.events.length, 1);
  // Dropped at `deterministic`, counted there: the stages before it are the serialized run's.
  const alone = planTests({ controller: 'roster', workload: 'join', references: [serializedRun(), serializedRun()] });
  for (const [i, s] of out.stats.entries()) {
    const before = Object.fromEntries(alone.stats[i]!.stages.map((x) => [x.stage, x.plans]));
    const after = Object.fromEntries(s.stages.map((x) => [x.stage, x.plans]));
    t.is(after['effective-writes'], before['effective-writes'], s.pattern);
    t.true(after.deterministic! <= before.deterministic!, s.pattern);
  }
  t.true(out.plans.length > 0);
  t.true(out.plans.length < alone.plans.length);
});

test('a normal run that skips intermediate values does not make the fields it shares nondeterministic', (t) => {
  // data.bob goes undefined -> dev -> lead serialized, and straight to dev in the roster's create
  // normally: its update to lead still names the change (it is the same in both), so the plans
  // restarting when bob becomes lead stay.
  const out = planTests({ controller: 'roster', workload: 'join', references: [serializedRun(), serializedRun()], normalDelivery: [normalRun()] });
  const atBobLead = out.plans.filter((p) =>
    p.spec.faults.some((f) => f.type === 'stale-restart' && 'change' in f.at && f.at.change.fields?.some((x) => x.path === 'data.bob' && x.after === 'lead')),
  );
  t.true(atBobLead.length > 0, out.plans.map((p) => p.spec.description).join('\n'));
});

test('a trigger that fires in the serialized runs but not in a normal one: its plans go, the others stay', (t) => {
  const out = planTests({ controller: 'roster', workload: 'join', references: [serializedRun(), serializedRun()], normalDelivery: [normalRun()] });
  const intermediate = out.plans.filter((p) => p.spec.pattern === 'intermediate-state').map((p) => p.spec.description);
  // The roster is updated once normally: a crash after its 2nd update would never be injected.
  t.false(
    intermediate.some((d) => d.includes('updates ConfigMap/default/roster (2nd time)')),
    intermediate.join('\n'),
  );
  t.true(
    intermediate.some((d) => d.includes('creates ConfigMap/default/roster (1st time)')),
    intermediate.join('\n'),
  );
});
