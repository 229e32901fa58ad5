import test from 'ava';
import { learnedQuietMs, QUIET_WINDOW_FLOOR_MS, SilenceMeter } from '../../planner/index.js';
import type { TraceEvent } from '../../src/model/trace.js';

let seq = 0;
const at = <E extends object>(ts: number, e: E) => ({ seq: ++seq, ts, ...e }) as unknown as TraceEvent;
const request = (ts: number, id: number, opts: { incarnation?: number; key?: string } = {}) =>
  at(ts, {
    type: 'request',
    id,
    incarnation: opts.incarnation ?? 1,
    method: 'PUT',
    path: '/x',
    query: {},
    verb: 'update',
    ...(opts.key ? { key: opts.key } : {}),
  });
const response = (ts: number, id: number) => at(ts, { type: 'response', id, status: 200, durationMs: 1 });
const event = (ts: number, stream: number, eventType = 'MODIFIED') =>
  at(ts, { type: 'watch-event', id: stream, eventType, key: 'ConfigMap/default/a', object: {} });

function longest(events: TraceEvent[], capMs = 1000): number {
  const meter = new SilenceMeter(capMs);
  for (const e of events) meter.add(e);
  return meter.result();
}

test('the longest silence before a request counts from the last request, answer or event of the same process', (t) => {
  const watch = at(0, { type: 'request', id: 1, incarnation: 1, method: 'GET', path: '/w', query: { watch: 'true' }, verb: 'watch' });
  t.is(longest([watch, event(1000, 1), request(1010, 2), response(1020, 2), request(1150, 3), response(1160, 3)]), 130);
});

test('a silence a watch event ends is not the controller acting on its own; bookmarks and leases are not activity', (t) => {
  const watch = at(0, { type: 'request', id: 1, incarnation: 1, method: 'GET', path: '/w', query: { watch: 'true' }, verb: 'watch' });
  // 900 ms idle, then an event wakes it: only the 20 ms after the event count.
  t.is(longest([watch, response(5, 1), event(905, 1), request(925, 2)]), 20);
  // A bookmark and a lease renewal in the middle of a 600 ms silence do not split it.
  t.is(
    longest([
      watch,
      response(5, 1),
      request(100, 2),
      response(110, 2),
      event(300, 1, 'BOOKMARK'),
      request(400, 3, { key: 'Lease/default/leader' }),
      response(405, 3),
      request(710, 4),
    ]),
    600,
  );
});

test('silences across a restart, or as long as the configured window, are not measured', (t) => {
  t.is(longest([request(0, 1), response(10, 1), request(800, 2, { incarnation: 2 })]), 0);
  t.is(longest([request(0, 1), response(10, 1), request(1500, 2)], 1000), 0);
});

test('the window is three times the longest silence of any reference run, between the floor and the configured window', (t) => {
  t.is(learnedQuietMs([40, 120], 1000), 360);
  t.is(learnedQuietMs([10], 1000), QUIET_WINDOW_FLOOR_MS);
  t.is(learnedQuietMs([900], 1000), 1000);
  t.is(learnedQuietMs([], 1000), QUIET_WINDOW_FLOOR_MS);
});

/** A watch event of custom resource `key` at `generation` (its spec's version). */
const crEvent = (ts: number, generation: number, key = 'Db/default/d1') =>
  at(ts, {
    type: 'watch-event',
    id: 1,
    eventType: 'MODIFIED',
    key,
    object: { apiVersion: 'example.com/v1', kind: 'Db', metadata: { name: 'd1', generation } },
  });

test("a run that ends while the controller lets spec changes of its custom resource go by without a request ends in an unfinished silence (percona-server-mongodb-operator's mongod dial)", (t) => {
  const unfinished = (events: TraceEvent[]) => {
    const meter = new SilenceMeter(1000);
    for (const e of events) meter.add(e);
    return meter.unfinished();
  };
  const start = [crEvent(0, 1), request(100, 1), response(110, 1)];
  // Two spec changes after its last request, none answered, to the trace's end 9.9 s later.
  t.deepEqual(unfinished([...start, crEvent(1000, 2), crEvent(2000, 3), at(10_000, { type: 'controller', action: 'exit', incarnation: 1 })]), {
    ms: 9900,
    changes: 2,
  });
  // One change unanswered (a field the controller ignores), or each answered: none.
  t.is(unfinished([...start, crEvent(1000, 2), at(10_000, { type: 'controller', action: 'exit', incarnation: 1 })]), undefined);
  t.is(unfinished([...start, crEvent(1000, 2), request(1100, 2), crEvent(2000, 3), request(2100, 3)]), undefined);
  // Events that change no spec (status, the same generation), or of a built-in kind, are not changes.
  t.is(unfinished([...start, crEvent(1000, 1), crEvent(2000, 1)]), undefined);
  const sts = (ts: number, generation: number) =>
    at(ts, { type: 'watch-event', id: 1, eventType: 'MODIFIED', key: 'StatefulSet/default/s', object: { apiVersion: 'apps/v1', metadata: { generation } } });
  t.is(unfinished([...start, sts(500, 1), sts(1000, 2), sts(2000, 3)]), undefined);
  // A restart starts over.
  t.is(unfinished([...start, crEvent(1000, 2), crEvent(2000, 3), at(3000, { type: 'controller', action: 'start', incarnation: 2 })]), undefined);
});

test('a silence in which the controller let spec changes of its custom resource go by runs from the first of them: the later ones woke nothing', (t) => {
  const meter = (events: TraceEvent[]) => {
    const m = new SilenceMeter(5000);
    for (const e of events) m.add(e);
    return { longest: m.result(), past: m.pastWindow()?.ms };
  };
  const start = [crEvent(0, 1), request(100, 1), response(110, 1)];
  // Idle 1.9 s, then busy 8 s (a dial) from the first patch, shown a second one meanwhile, then a
  // write: 8 s, not 3 s from the second patch, nor 9.9 s from its request (its idle time).
  t.deepEqual(meter([...start, crEvent(2000, 2), crEvent(7000, 3), request(10_000, 2)]), { longest: 0, past: 8000 });
  // Shown one patch only (a field it may ignore): the silence runs from that event, as before.
  t.deepEqual(meter([...start, crEvent(7000, 2), request(10_000, 2)]), { longest: 3000, past: undefined });
  // Below the window, the learned window's silence too.
  t.deepEqual(meter([...start, crEvent(1000, 2), crEvent(2000, 3), request(3000, 2)]), { longest: 2000, past: undefined });
});
