import test from 'ava';
import { compareHealth, scanControllerLog, summarizeControllerTrace } from '../../oracles/index.js';
import { ControllerActivitySummarizer } from '../../oracles/controller-activity.js';
import type { TraceEvent } from '../../src/model/trace.js';
import { activity, runWithHealth } from './_health.js';

const GO_PANIC = `[1] I0101 reconciling db1
[2] panic: runtime error: invalid memory address or nil pointer dereference [recovered]
[2] [signal SIGSEGV: segmentation violation code=0x1 addr=0x18 pc=0x1b2c3d]
[2]
[2] goroutine 123 [running]:
[2] main.(*Reconciler).Reconcile(0xc000123456)
[2] 	/src/controller.go:42 +0x1d
`;

const NODE_UNCAUGHT = `[1] reconciling db1
[1] /app/dist/operator.js:88
[1]         throw new TypeError("Cannot read properties of undefined (reading 'spec')");
[1]         ^
[1]
[1] TypeError: Cannot read properties of undefined (reading 'spec')
[1]     at reconcile (/app/dist/operator.js:88:15)
[1]     at process.processTicksAndRejections (node:internal/process/task_queues:95:5)
[1]
[1] Node.js v20.11.1
`;

test('log scanner finds Go panics, Node uncaught exceptions, Python tracebacks, Java exceptions', (t) => {
  t.deepEqual(
    scanControllerLog(GO_PANIC).map((i) => [i.kind, i.incarnation, i.line, i.summary]),
    [['panic', 2, 2, 'panic: runtime error: invalid memory address or nil pointer dereference [recovered]']],
  );
  t.deepEqual(
    scanControllerLog(NODE_UNCAUGHT).map((i) => [i.kind, i.line, i.summary]),
    [['uncaught exception', 6, "TypeError: Cannot read properties of undefined (reading 'spec')"]],
  );
  const py = 'Traceback (most recent call last):\n  File "op.py", line 3, in <module>\n    main()\nKeyError: \'spec\'\n';
  t.deepEqual(
    scanControllerLog(py).map((i) => [i.kind, i.summary]),
    [['traceback', "KeyError: 'spec'"]],
  );
  const java = 'Exception in thread "main" java.lang.NullPointerException\n\tat Op.run(Op.java:10)\n';
  t.deepEqual(
    scanControllerLog(java).map((i) => i.kind),
    ['uncaught exception'],
  );
  const logged = 'error reconciling: Error: conflict\n    at update (/app/op.js:1:1)\n    at run (/app/op.js:2:2)\n';
  t.deepEqual(
    scanControllerLog(logged).map((i) => [i.kind, i.summary]),
    [['stack trace', 'error reconciling: Error: conflict']],
  );
  const recovered =
    '[1] {"level":"error","msg":"Observed a panic in reconciler","panic":"runtime error: index out of range [3] with length 3","stacktrace":"a\\nb"}';
  t.deepEqual(
    scanControllerLog(recovered).map((i) => [i.kind, i.summary]),
    [['panic', 'panic: runtime error: index out of range [3] with length 3']],
  );
  // controller-runtime's logged errors carry their stack inside one JSON line: not a crash.
  const zapError = '[1] {"level":"error","msg":"Reconciler error","error":"Conflict","stacktrace":"sigs.k8s.io/x.go:316\\n\\tsigs.k8s.io/y.go:263"}';
  t.deepEqual(scanControllerLog(zapError), []);
  t.deepEqual(scanControllerLog('[1] started\n[1] created ConfigMap default/x\n[1] terminating\n'), []);
});

test('a panic the reference runs never showed alarms, naming the line and the incarnation', (t) => {
  const alarms = compareHealth([runWithHealth(), runWithHealth()], runWithHealth({ controllerLog: GO_PANIC }));
  t.deepEqual(
    alarms.map((a) => [a.oracle, a.check, a.object, a.message]),
    [
      [
        'health',
        'crash-log',
        '(controller)',
        "the controller's log shows a panic that the reference runs never showed (controller.log line 2, incarnation 2): panic: runtime error: invalid memory address or nil pointer dereference [recovered]",
      ],
    ],
  );
  t.is(compareHealth([runWithHealth()], runWithHealth({ controllerLog: NODE_UNCAUGHT })).length, 1);
});

test('a crash the reference runs show too (numbers aside) does not alarm', (t) => {
  const ref = runWithHealth({ controllerLog: 'error: Error: boom 17\n    at a (/x.js:1:1)\n    at b (/x.js:2:2)\n' });
  const tst = runWithHealth({ controllerLog: '[2] error: Error: boom 23\n[2]     at a (/x.js:1:1)\n[2]     at b (/x.js:2:2)\n' });
  t.deepEqual(compareHealth([ref], tst), []);
});

test('exits kperturb did not cause alarm; several are a crash loop; exits it caused do not', (t) => {
  const refs = [runWithHealth()];
  t.deepEqual(compareHealth(refs, runWithHealth()), []);
  const once = compareHealth(
    refs,
    runWithHealth({
      controllerExits: [
        { incarnation: 1, code: null, signal: 'SIGKILL', expected: true },
        { incarnation: 2, code: 2, signal: null, expected: false },
      ],
    }),
  );
  t.deepEqual(
    once.map((a) => [a.check, a.message]),
    [['unexpected-exit', 'the controller exited without kperturb stopping it: code 2 (incarnation 2); the reference runs never did']],
  );
  const loop = compareHealth(refs, runWithHealth({ controllerExits: [1, 2, 3].map((n) => ({ incarnation: n, code: 1, signal: null, expected: false })) }));
  t.regex(loop[0]!.message, /crashed 3 times .* crash loop/);
  // The same unexpected exit in a reference run is how this controller always ends.
  const refExit = runWithHealth({ controllerExits: [{ incarnation: 1, code: 2, signal: null, expected: false }] });
  t.deepEqual(compareHealth([refExit], runWithHealth({ controllerExits: [{ incarnation: 2, code: 2, signal: null, expected: false }] })), []);
});

const forbidden = {
  status: 403,
  reason: 'Forbidden',
  verb: 'patch',
  resource: 'Database/status',
  count: 2,
  example: { key: 'Database/default/db1', message: 'databases "db1" is forbidden', seq: 40 },
};

test('an API error the reference runs never got alarms; races (409, 404) and errors the references got do not', (t) => {
  const alarms = compareHealth([runWithHealth()], runWithHealth({ controllerActivity: activity({ apiErrors: [forbidden] }) }));
  t.deepEqual(
    alarms.map((a) => [a.check, a.object, a.test, a.message]),
    [
      [
        'api-error',
        'Database/default/db1',
        '403 Forbidden',
        'the controller got 403 Forbidden for patch Database/default/db1 status (2 times), which the reference runs never got: databases "db1" is forbidden',
      ],
    ],
  );
  const conflict = { ...forbidden, status: 409, reason: 'Conflict' };
  const notFound = { ...forbidden, status: 404, reason: 'NotFound', verb: 'get' };
  t.deepEqual(compareHealth([runWithHealth()], runWithHealth({ controllerActivity: activity({ apiErrors: [conflict, notFound] }) })), []);
  const refGotIt = runWithHealth({ controllerActivity: activity({ apiErrors: [{ ...forbidden, count: 1 }] }) });
  t.deepEqual(compareHealth([refGotIt], runWithHealth({ controllerActivity: activity({ apiErrors: [forbidden] }) })), []);
});

test('the trace summary groups error answers and counts writes after the last workload step', (t) => {
  let seq = 0;
  const ev = <E extends object>(e: E) => ({ seq: ++seq, ts: 0, ...e }) as unknown as TraceEvent;
  const req = (id: number, verb: string, key: string, sub?: string) =>
    ev({
      type: 'request',
      id,
      incarnation: 1,
      method: 'PATCH',
      path: '/x',
      query: {},
      verb,
      key,
      resource: { group: '', version: 'v1', resource: 'configmaps', kind: 'ConfigMap', ...(sub ? { subresource: sub } : {}) },
    });
  const res = (id: number, status: number, reason?: string) =>
    ev({ type: 'response', id, status, durationMs: 1, ...(reason ? { object: { kind: 'Status', reason, message: `it is ${reason}` } } : {}) });
  const trace = [
    req(1, 'update', 'ConfigMap/default/a'),
    res(1, 422, 'Invalid'),
    ev({ type: 'workload-step', index: 0, description: 'apply', phase: 'done' }),
    req(2, 'update', 'ConfigMap/default/a'),
    res(2, 422, 'Invalid'),
    req(3, 'get', 'ConfigMap/default/a'),
    res(3, 200),
    req(4, 'patch', 'ConfigMap/default/a', 'status'),
    res(4, 200),
    // Not counted as writes: a conflict retried, a lease renewal, a dry run.
    req(5, 'update', 'ConfigMap/default/a'),
    res(5, 409, 'Conflict'),
    req(6, 'update', 'Lease/default/leader'),
    res(6, 200),
    { ...req(7, 'patch', 'ConfigMap/default/a'), query: { dryRun: 'All' } } as TraceEvent,
    res(7, 200),
  ];
  const summary = summarizeControllerTrace(trace);
  t.deepEqual(summary.apiErrors, [
    {
      status: 422,
      reason: 'Invalid',
      verb: 'update',
      resource: 'ConfigMap',
      count: 2,
      example: { key: 'ConfigMap/default/a', message: 'it is Invalid', seq: 2 },
    },
    {
      status: 409,
      reason: 'Conflict',
      verb: 'update',
      resource: 'ConfigMap',
      count: 1,
      example: { key: 'ConfigMap/default/a', message: 'it is Conflict', seq: 11 },
    },
  ]);
  // The 422 after the workload failed: only the successful status patch counts.
  t.deepEqual(summary.writesAfterWorkload, [{ key: 'ConfigMap/default/a', subresource: 'status', count: 1 }]);
  t.is(summarizeControllerTrace(trace.filter((e) => e.type !== 'workload-step')).writesAfterWorkload, undefined);

  // Writes while a fault still shapes the view (before a stale view's release) are the fault's doing.
  const stale = [
    ev({ type: 'workload-step', index: 0, description: 'apply', phase: 'done' }),
    req(20, 'update', 'ConfigMap/default/b'),
    res(20, 200),
    ev({ type: 'fault', fault: 'stale-restart', phase: 'released', detail: 'stale view released' }),
    req(21, 'update', 'ConfigMap/default/c'),
    res(21, 200),
  ];
  t.deepEqual(summarizeControllerTrace(stale).writesAfterWorkload, [{ key: 'ConfigMap/default/c', count: 1 }]);
});

test('an error an api-error fault answered is the fault, not the controller: it is left out of the summary', (t) => {
  let seq = 0;
  const ev = <E extends object>(e: E) => ({ seq: ++seq, ts: 0, ...e }) as unknown as TraceEvent;
  const resource = { group: '', version: 'v1', resource: 'configmaps', kind: 'ConfigMap' };
  const trace = [
    ev({ type: 'request', id: 1, incarnation: 1, method: 'POST', path: '/x', query: {}, verb: 'create', key: 'ConfigMap/default/a', resource }),
    ev({ type: 'fault', fault: 'api-error', phase: 'triggered', requestId: 1, detail: 'answer a 500' }),
    ev({ type: 'response', id: 1, status: 500, durationMs: 1, object: { kind: 'Status', reason: 'InternalError', message: 'Internal error occurred' } }),
    ev({ type: 'request', id: 2, incarnation: 1, method: 'POST', path: '/x', query: {}, verb: 'create', key: 'ConfigMap/default/b', resource }),
    ev({ type: 'response', id: 2, status: 500, durationMs: 1, object: { kind: 'Status', reason: 'InternalError', message: 'Internal error occurred' } }),
  ];
  t.deepEqual(
    summarizeControllerTrace(trace).apiErrors.map((e) => e.example.key),
    ['ConfigMap/default/b'],
  );
});

test("the API server's refusal of a write to an object a managed-system fault holds is the fault's until its heal", (t) => {
  let seq = 0;
  const ev = <E extends object>(e: E) => ({ seq: ++seq, ts: 0, ...e }) as unknown as TraceEvent;
  const claim = 'PersistentVolumeClaim/default/data-0';
  const resource = { group: '', version: 'v1', resource: 'persistentvolumeclaims', kind: 'PersistentVolumeClaim' };
  const resize = (id: number) => [
    ev({ type: 'request', id, incarnation: 1, method: 'PATCH', path: '/x', query: {}, verb: 'patch', key: claim, resource }),
    ev({ type: 'response', id, status: 422, durationMs: 1, object: { kind: 'Status', reason: 'Invalid', message: 'spec is immutable' } }),
  ];
  const summarizer = new ControllerActivitySummarizer();
  summarizer.addClusterEvent(ev({ type: 'fault', fault: 'pvc-fault', phase: 'applied', key: claim, detail: 'kept Pending' }));
  for (const e of resize(1)) summarizer.add(e);
  t.deepEqual(summarizer.result().apiErrors, [], 'refused while the claim was held Pending');
  summarizer.addClusterEvent(ev({ type: 'fault', fault: 'pvc-fault', phase: 'healed', key: claim, detail: 'bound' }));
  for (const e of resize(2)) summarizer.add(e);
  t.deepEqual(
    summarizer.result().apiErrors.map((e) => [e.status, e.example.key]),
    [[422, claim]],
  );
});

test("a kubelet call refused while the pod's node is out is the node fault's; on another node, or after the heal, it is the controller's", (t) => {
  let seq = 0;
  const ev = <E extends object>(e: E) => ({ seq: ++seq, ts: 0, ...e }) as unknown as TraceEvent;
  const node = 'Node/node-1';
  const resource = { group: '', version: 'v1', resource: 'pods', kind: 'Pod', subresource: 'exec' };
  const scheduled = (pod: string, nodeName: string) =>
    ev({ type: 'cluster-change', eventType: 'MODIFIED', key: `Pod/default/${pod}`, resourceVersion: String(seq), object: { kind: 'Pod', spec: { nodeName } } });
  const exec = (id: number, pod: string) => [
    ev({
      type: 'request',
      id,
      incarnation: 1,
      method: 'POST',
      path: `/api/v1/namespaces/default/pods/${pod}/exec`,
      query: {},
      verb: 'create',
      key: `Pod/default/${pod}`,
      resource,
    }),
    ev({ type: 'response', id, status: 500, durationMs: 1, object: null }),
  ];
  const summarizer = new ControllerActivitySummarizer();
  summarizer.addClusterEvent(scheduled('server-0', 'node-1'));
  summarizer.addClusterEvent(scheduled('server-1', 'node-2'));
  summarizer.addClusterEvent(ev({ type: 'fault', fault: 'node-not-ready', phase: 'applied', key: node, detail: 'Node/node-1 is not-ready' }));
  for (const e of exec(1, 'server-0')) summarizer.add(e);
  t.deepEqual(summarizer.result().apiErrors, [], 'refused while its node was out');
  for (const e of exec(2, 'server-1')) summarizer.add(e);
  summarizer.addClusterEvent(ev({ type: 'fault', fault: 'node-not-ready', phase: 'healed', key: node, detail: 'healed' }));
  for (const e of exec(3, 'server-0')) summarizer.add(e);
  t.deepEqual(
    summarizer.result().apiErrors.map((e) => [e.status, e.example.key, e.count]),
    [[500, 'Pod/default/server-1', 2]],
  );
});
