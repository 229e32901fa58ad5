import test from 'ava';
import { livenessAlarms, summarizeControllerTrace } from '../../oracles/index.js';
import type { TraceEvent } from '../../src/model/trace.js';
import { activity, record, runWithHealth } from './_health.js';

test('a workload wait that times out after the fault is a liveness alarm', (t) => {
  const error =
    'step 4 (wait for ConfigMap/default/db1-config data.version == "15" (30s)): timed out after 30s waiting for ConfigMap/default/db1-config: data.version is "14"';
  const alarms = livenessAlarms(record({ workloadOutcome: { ok: false, failedStep: 3, error } }));
  t.deepEqual(
    alarms.map((a) => [a.oracle, a.check, a.object, a.message]),
    [['liveness', 'workload-timeout', '(workload)', `the workload did not complete after the fault: ${error}`]],
  );
});

test('a controller that never goes quiet is a liveness alarm naming the object it kept writing', (t) => {
  const test1 = runWithHealth({ controllerActivity: activity({ writesAfterWorkload: [{ key: 'Database/default/db1', subresource: 'status', count: 240 }] }) });
  const alarms = livenessAlarms(record({ settled: false }), [runWithHealth()], test1);
  t.deepEqual(
    alarms.map((a) => [a.check, a.object, a.message]),
    [
      [
        'not-quiet',
        'Database/default/db1',
        'the controller never became quiet after the workload ended (endless writes or watch churn); it wrote Database/default/db1 status 240 time(s) after the workload ended',
      ],
    ],
  );
});

test('a controller that never goes quiet in the reference runs either raises no not-quiet alarm', (t) => {
  t.deepEqual(livenessAlarms(record({ settled: false }), [runWithHealth({ settled: false })], runWithHealth()), []);
});

test('endless writes to one object after the workload alarm even when the run settled late; the usual trickle does not', (t) => {
  const refs = [runWithHealth({ controllerActivity: activity({ writesAfterWorkload: [{ key: 'ConfigMap/default/a', count: 2 }] }) })];
  const busy = runWithHealth({
    controllerActivity: activity({
      writesAfterWorkload: [
        { key: 'ConfigMap/default/a', count: 40 },
        { key: 'ConfigMap/default/b', count: 3 },
      ],
    }),
  });
  t.deepEqual(
    livenessAlarms(record(), refs, busy).map((a) => [a.check, a.object, a.reference, a.test]),
    [['endless-writes', 'ConfigMap/default/a', [2], 40]],
  );
  const usual = runWithHealth({ controllerActivity: activity({ writesAfterWorkload: [{ key: 'ConfigMap/default/a', count: 4 }] }) });
  t.deepEqual(livenessAlarms(record(), refs, usual), []);
  // A reference that writes as much is just how the controller works.
  const refBusy = [runWithHealth({ controllerActivity: activity({ writesAfterWorkload: [{ key: 'ConfigMap/default/a', count: 30 }] }) })];
  t.deepEqual(livenessAlarms(record(), refBusy, busy), []);
});

test('a run that completed and settled raises no liveness alarm', (t) => {
  t.deepEqual(livenessAlarms(record(), [runWithHealth()], runWithHealth()), []);
});

test('a controller that keeps retrying a failing write after one injected error is a retry loop; one that backs off and converges is not', (t) => {
  let seq = 0;
  const ev = <E extends object>(e: E) => ({ seq: ++seq, ts: 0, ...e }) as unknown as TraceEvent;
  const resource = { group: '', version: 'v1', resource: 'configmaps', kind: 'ConfigMap' };
  let id = 0;
  const create = (status: number, faulted = false) => {
    const n = ++id;
    return [
      ev({ type: 'request', id: n, incarnation: 1, method: 'POST', path: '/x', query: {}, verb: 'create', key: 'ConfigMap/default/s1-data', resource }),
      ...(faulted ? [ev({ type: 'fault', fault: 'api-error', phase: 'triggered', requestId: n, detail: 'lost response' })] : []),
      ev({ type: 'response', id: n, status, durationMs: 1, object: { kind: 'Status', reason: status === 409 ? 'AlreadyExists' : undefined } }),
    ];
  };
  const start = () => [ev({ type: 'workload-step', index: 0, description: 'apply', phase: 'done' })];
  const reference = runWithHealth({ controllerActivity: summarizeControllerTrace([...start(), ...create(201)]) });
  // The lost answer's create was applied; the controller retries it forever, AlreadyExists every time.
  const hot = summarizeControllerTrace([...start(), ...create(201, true), ...Array.from({ length: 25 }, () => create(409)).flat()]);
  const alarms = livenessAlarms(record(), [reference], runWithHealth({ controllerActivity: hot }));
  t.deepEqual(
    alarms.map((a) => [a.check, a.object, a.reference, a.test]),
    [['retry-loop', 'ConfigMap/default/s1-data', [0], 25]],
  );
  t.regex(alarms[0]!.message, /kept retrying ConfigMap\/default\/s1-data .* failing with 409 25 time\(s\)/);
  // Backs off: one failed retry, then it reads, finds the object and stops.
  const converges = summarizeControllerTrace([...start(), ...create(201, true), ...create(409)]);
  t.deepEqual(livenessAlarms(record(), [reference], runWithHealth({ controllerActivity: converges })), []);
});

test("failed writes while a watch-end fault leaves the controller blind (until it watches that resource again) are the fault's; after it, a retry loop is the controller's", (t) => {
  let seq = 0;
  const ev = <E extends object>(e: E) => ({ seq: ++seq, ts: 0, ...e }) as unknown as TraceEvent;
  const resource = { group: '', version: 'v1', resource: 'configmaps', kind: 'ConfigMap' };
  let id = 0;
  const watch = () => {
    const n = ++id;
    return {
      id: n,
      events: [
        ev({ type: 'request', id: n, incarnation: 1, method: 'GET', path: '/api/v1/configmaps', query: { watch: 'true' }, verb: 'watch', resource }),
        ev({ type: 'response', id: n, status: 200, durationMs: 1 }),
      ],
    };
  };
  const patch = (status: number) => {
    const n = ++id;
    return [
      ev({ type: 'request', id: n, incarnation: 1, method: 'PATCH', path: '/x', query: {}, verb: 'patch', key: 'ConfigMap/default/r1-members', resource }),
      ev({ type: 'response', id: n, status, durationMs: 1, object: { kind: 'Status', reason: 'Conflict' } }),
    ];
  };
  const conflicts = (n: number) => Array.from({ length: n }, () => patch(409)).flat();
  const first = watch();
  const start = [ev({ type: 'workload-step', index: 0, description: 'apply', phase: 'done' }), ...first.events];
  // The fault resets the ConfigMap watch; the re-watch is answered 410; the controller relists and watches again.
  const reset = ev({ type: 'fault', fault: 'disconnect', phase: 'applied', streams: [first.id], detail: 'reset watches of kind ConfigMap' });
  const rewatch = watch();
  const expired = ev({ type: 'fault', fault: 'watch-end', phase: 'expired', requestId: rewatch.id, detail: '410' });
  const blind = [...start, reset, ...conflicts(3), ...rewatch.events, expired, ...conflicts(12)];
  const reference = runWithHealth({ controllerActivity: summarizeControllerTrace(start) });
  // Twelve 409s while its cache missed its own writes, then a fresh watch and nothing more: it recovered.
  const recovered = summarizeControllerTrace([...blind, ...watch().events]);
  t.deepEqual(livenessAlarms(record(), [reference], runWithHealth({ controllerActivity: recovered })), []);
  // The 410's fault event may be traced before the re-watch's request event (the proxy answers as it plans).
  const first2 = watch();
  const start2 = [ev({ type: 'workload-step', index: 0, description: 'apply', phase: 'done' }), ...first2.events];
  const reset2 = ev({ type: 'fault', fault: 'disconnect', phase: 'applied', streams: [first2.id], detail: 'reset watches of kind ConfigMap' });
  const before = conflicts(3);
  const expiredFirst = ev({ type: 'fault', fault: 'watch-end', phase: 'expired', requestId: id + 1, detail: '410' });
  const rewatch2 = watch();
  const faultFirst = [...start2, reset2, ...before, expiredFirst, ...rewatch2.events, ...conflicts(12), ...watch().events];
  t.deepEqual(livenessAlarms(record(), [reference], runWithHealth({ controllerActivity: summarizeControllerTrace(faultFirst) })), []);
  // The same, but it goes on failing once it watches again: a retry loop.
  const hot = summarizeControllerTrace([...blind, ...watch().events, ...conflicts(12)]);
  t.deepEqual(
    livenessAlarms(record(), [reference], runWithHealth({ controllerActivity: hot })).map((a) => [a.check, a.test]),
    [['retry-loop', 12]],
  );
});

test('writes that change nothing (answered with the resourceVersion they were sent with, or the last one) are not endless writes; writes that change the object are', (t) => {
  let seq = 0;
  const ev = <E extends object>(e: E) => ({ seq: ++seq, ts: 0, ...e }) as unknown as TraceEvent;
  const resource = { group: 'apps', version: 'v1', resource: 'statefulsets', kind: 'StatefulSet' };
  const key = 'StatefulSet/default/zk';
  let id = 0;
  let version = 100;
  /** An update of the set with the version it read; the server bumps it only when something changed. */
  const update = (changes: boolean, verb: 'update' | 'patch' = 'update') => {
    const n = ++id;
    const sent = String(version);
    if (changes) version++;
    return [
      ev({
        type: 'request',
        id: n,
        incarnation: 1,
        method: verb === 'update' ? 'PUT' : 'PATCH',
        path: '/x',
        query: {},
        verb,
        key,
        resource,
        ...(verb === 'update' ? { body: { metadata: { name: 'zk', resourceVersion: sent } } } : {}),
      }),
      ev({ type: 'response', id: n, status: 200, durationMs: 1, object: { kind: 'StatefulSet', metadata: { name: 'zk', resourceVersion: String(version) } } }),
    ];
  };
  const start = () => [ev({ type: 'workload-step', index: 0, description: 'apply', phase: 'done' })];
  const reference = runWithHealth({ controllerActivity: summarizeControllerTrace([...start(), ...update(true), ...update(false), ...update(true)]) });
  // zookeeper-operator updates its StatefulSet on every reconcile, without a change check.
  const noOps = summarizeControllerTrace([
    ...start(),
    ...update(true),
    ...Array.from({ length: 15 }, () => [...update(false), ...update(false, 'patch')]).flat(),
  ]);
  t.deepEqual(noOps.writesAfterWorkload, [{ key, count: 1 }]);
  t.deepEqual(livenessAlarms(record(), [reference], runWithHealth({ controllerActivity: noOps })), []);
  // The same number of writes, each changing the set: endless.
  const changes = summarizeControllerTrace([...start(), ...Array.from({ length: 15 }, () => [...update(true), ...update(true, 'patch')]).flat()]);
  t.deepEqual(
    livenessAlarms(record(), [reference], runWithHealth({ controllerActivity: changes })).map((a) => [a.check, a.object, a.reference, a.test]),
    [['endless-writes', key, [2], 30]],
  );
});
