import test from 'ava';
import { planTests, type PlannerOutput } from '../../planner/index.js';
import type { ApiErrorFault, WatchEndFault, WriteTrigger } from '../../src/model/plan.js';
import type { TraceEvent } from '../../src/model/trace.js';
import { TraceBuilder } from './_trace-builder.js';
import { CM, DB, SECRET, STS, faultsOf, plan, plansOf, stages } from './_helpers.js';

function apiErrors(out: PlannerOutput): ApiErrorFault[] {
  return faultsOf(out, 'error-path').filter((f): f is ApiErrorFault => f.type === 'api-error');
}

test('each write the intermediate-state rule keeps gets the answers that can change its outcome', (t) => {
  const trace = new TraceBuilder({ setup: { 'ConfigMap/default/old': {} } })
    .write('create', SECRET)
    .write('create', DB)
    .write('patch', DB, { subresource: 'status' })
    .write('delete', 'ConfigMap/default/old')
    .write('update', DB).events;
  const out = plan(trace);
  t.deepEqual(
    apiErrors(out).map((f) => `${f.on.verb} ${f.on.key}${f.on.subresource ? ` ${f.on.subresource}` : ''} #${f.on.occurrence}: ${f.answer}`),
    [
      `create ${SECRET} #1: lost-response`,
      `create ${SECRET} #1: internal-error`,
      `create ${DB} #1: lost-response`,
      `create ${DB} #1: internal-error`,
      `patch ${DB} status #1: conflict`,
      `patch ${DB} status #1: internal-error`,
      'delete ConfigMap/default/old #1: lost-response',
      'delete ConfigMap/default/old #1: internal-error',
    ],
  );
  t.is(plansOf(out, 'error-path')[0]!.metadata.name, 'error-0001');
  t.is(
    plansOf(out, 'error-path')[0]!.spec.description,
    `answer a lost response (applied, then the connection reset) when the controller creates ${SECRET} (1st request)`,
  );
  // The same writes and pruning as intermediate-state; every stage counts plans (two per write).
  t.is(faultsOf(out, 'intermediate-state').length, 4);
  const doubled = Object.fromEntries(Object.entries(stages(out, 'intermediate-state')).map(([stage, n]) => [stage, n * 2]));
  t.deepEqual(stages(out, 'error-path'), doubled);
});

test('the fault counts requests, failed ones included: the occurrence is recounted from the successful write', (t) => {
  const trace = new TraceBuilder().write('update', DB, { status: 409 }).write('update', DB).write('create', SECRET).events;
  const [conflict] = apiErrors(plan(trace));
  // The 2nd update request is the 1st successful update.
  t.deepEqual(conflict!.on, { verb: 'update', key: DB, occurrence: 2 });
});

/**
 * Learned serialized, the controller's cache lags its own writes and its status updates meet 409
 * before each succeeds; with normal delivery they succeed at once (decommission's 3rd status patch
 * was its 43rd request serialized and its 5th normally: 38 plans of `demo --all` waited for a
 * request that never came).
 */
function statusUpdates(conflictsBeforeEach: number): TraceEvent[] {
  const b = new TraceBuilder().write('create', DB, { deliver: true });
  for (let i = 0; i < 3; i++) {
    for (let c = 0; c < conflictsBeforeEach; c++) b.write('update', DB, { subresource: 'status', status: 409 });
    b.write('update', DB, { subresource: 'status', set: { 'status.step': String(i + 1) } });
  }
  return b.events;
}

/** The request the api-error fault answers (it counts every request of the write, failed ones too): its status, or undefined when fewer came. */
function answeredRequest(run: TraceEvent[], on: WriteTrigger): number | undefined {
  const matching = run.filter(
    (e): e is Extract<TraceEvent, { type: 'request' }> =>
      e.type === 'request' && e.verb === on.verb && e.key === on.key && e.resource?.subresource === on.subresource,
  );
  const req = matching[on.occurrence - 1];
  const res = req && run.find((e): e is Extract<TraceEvent, { type: 'response' }> => e.type === 'response' && e.id === req.id);
  return res?.status;
}

test('learned serialized, the occurrence is the request a normal-delivery run makes the write with', (t) => {
  const serialized = [statusUpdates(4), statusUpdates(5)];
  const normal = statusUpdates(0);
  const out = planTests({ controller: 'db-operator', workload: 'status', references: serialized, normalDelivery: [normal] });
  const onStatus = apiErrors(out).filter((f) => f.on.subresource === 'status');
  t.true(onStatus.length > 0);
  for (const f of onStatus) t.is(answeredRequest(normal, f.on), 200, `${f.on.key} status #${f.on.occurrence}`);
  // Without the normal run, the main reference run's count: its k-th success, 5 requests a write.
  const alone = apiErrors(planTests({ controller: 'db-operator', workload: 'status', references: serialized })).filter((f) => f.on.subresource === 'status');
  for (const f of alone) t.is(answeredRequest(serialized[1]!, f.on), 200);
  t.true(alone.some((f) => answeredRequest(normal, f.on) === undefined));
});

function watchEnds(out: PlannerOutput): WatchEndFault[] {
  return faultsOf(out, 'error-path').filter((f): f is WatchEndFault => f.type === 'watch-end');
}

test('a kind whose writes the controller saw echoed gets its watches ended after the first (reset, 410) and the last (clean close) of them', (t) => {
  const trace = new TraceBuilder()
    .write('create', SECRET, { deliver: true })
    .write('create', DB, { deliver: true })
    .write('create', CM)
    .write('update', DB, { deliver: true })
    .write('patch', DB, { deliver: true })
    .write('create', STS).events;
  const out = plan(trace);
  t.deepEqual(
    watchEnds(out).map(
      (f) =>
        `${f.kind} ${f.mode}${f.expire ? ' expire' : ''} after ${'write' in f.at ? `${f.at.write.verb} ${f.at.write.key} #${f.at.write.occurrence}` : '?'}`,
    ),
    [`Secret reset expire after create ${SECRET} #1`, `Database reset expire after create ${DB} #1`, `Database close after patch ${DB} #1`],
  );
  // A kind the controller does not watch (ConfigMap here) gets none; the api-error plans keep their names.
  const apiErrorPlans = faultsOf(out, 'intermediate-state').length * 2;
  t.deepEqual(
    faultsOf(out, 'error-path')
      .slice(0, apiErrorPlans)
      .map((f) => f.type),
    Array<string>(apiErrorPlans).fill('api-error'),
  );
  const watchEndPlan = plansOf(out, 'error-path')[apiErrorPlans]!;
  t.is(watchEndPlan.metadata.name, `error-${String(apiErrorPlans + 1).padStart(4, '0')}`);
  t.is(
    watchEndPlan.spec.description,
    `reset the controller's Secret watches (then 410 Expired on the re-watch) when the controller creates ${SECRET} (1st time)`,
  );
  const intermediate = stages(out, 'intermediate-state');
  t.deepEqual(stages(out, 'error-path'), Object.fromEntries(Object.entries(intermediate).map(([stage, n]) => [stage, n * 2 + 3])));
});
