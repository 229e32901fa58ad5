/**
 * pods/exec calls in a trace (a request, its 101, the `pod-exec` event in the controller trace and its
 * copy in the cluster trace) change no object: the planner must plan exactly as without them.
 */
import test from 'ava';
import { planTests } from '../../planner/index.js';
import { serializePlan } from '../../src/model/plan.js';
import type { TraceEvent } from '../../src/model/trace.js';
import { TraceBuilder } from './_trace-builder.js';
import { DB, STS } from './_helpers.js';

function run(withExec: boolean): TraceEvent[] {
  const events = new TraceBuilder()
    .external('ADDED', DB, { set: { 'spec.replicas': 1 }, deliver: true })
    .write('create', STS, { owner: DB, set: { 'spec.replicas': 1 }, deliver: true })
    .write('patch', DB, { subresource: 'status', set: { 'status.phase': 'Ready' }, deliver: true })
    .external('MODIFIED', DB, { set: { 'spec.replicas': 3 }, deliver: true })
    .write('patch', STS, { set: { 'spec.replicas': 3 }, deliver: true }).events;
  if (!withExec) return events;
  const at = events.findIndex((e) => e.type === 'request' && e.verb === 'patch');
  const ts = events[at]!.ts;
  const key = 'Pod/default/db-0';
  const exec: TraceEvent[] = [
    {
      seq: 0,
      ts,
      type: 'request',
      id: 9000,
      incarnation: 1,
      method: 'POST',
      path: '/api/v1/namespaces/default/pods/db-0/exec',
      query: { command: 'true' },
      verb: 'create',
      resource: { group: '', version: 'v1', resource: 'pods', subresource: 'exec', kind: 'Pod', namespaced: true },
      key,
      bodyBytes: 0,
    },
    { seq: 0, ts, type: 'response', id: 9000, status: 101, durationMs: 1 },
    {
      seq: 0,
      ts,
      type: 'pod-exec',
      id: 9000,
      subresource: 'exec',
      key,
      container: 'db',
      command: ['true'],
      status: 101,
      exitCode: 0,
      transport: 'spdy',
      protocol: 'v4.channel.k8s.io',
      delivered: true,
    },
    {
      seq: 0,
      ts,
      type: 'pod-exec',
      id: 9000,
      subresource: 'exec',
      key,
      container: 'db',
      command: ['true'],
      status: 101,
      exitCode: 0,
      transport: 'spdy',
      protocol: 'v4.channel.k8s.io',
      delivered: true,
    },
  ];
  const merged = [...events.slice(0, at), ...exec, ...events.slice(at)];
  return merged.map((e, i) => ({ ...e, seq: e.type === 'header' ? 0 : i + 1 }));
}

test('exec calls in the traces change no plan', (t) => {
  const plain = planTests({ controller: 'c', workload: 'w', references: [run(false), run(false)] });
  const withExec = planTests({ controller: 'c', workload: 'w', references: [run(true), run(true)] });
  t.true(plain.plans.length > 0);
  t.deepEqual(withExec.plans.map(serializePlan), plain.plans.map(serializePlan));
});
