/** The loop a stale view ends early on (src/model/retry-loop.ts): repeated inert rounds, the cluster unchanged. */
import test from 'ava';
import { RetryLoopDetector, type AnsweredRequest } from '../../src/model/retry-loop.js';

const refused = (signature: string, clusterRevision = 7): AnsweredRequest => ({ signature, status: 409, inert: true, clusterRevision });
const read = (signature: string, clusterRevision = 7): AnsweredRequest => ({ signature, status: 200, inert: true, clusterRevision });

function feed(d: RetryLoopDetector, rs: AnsweredRequest[]): boolean[] {
  return rs.map((r) => d.add(r));
}

test('the same round of refused writes three times is a loop, found at the end of the third round', (t) => {
  const d = new RetryLoopDetector();
  const round = [refused('create Service/default/s'), refused('create ConfigMap/default/c'), refused('patch DataCenter/default/dc/status')];
  t.deepEqual(feed(d, [...round, ...round]), [false, false, false, false, false, false]);
  t.deepEqual(feed(d, round), [false, false, true]);
  t.is(d.round, 3);
});

test('reads that keep getting the same answer, the cluster unchanged, are a loop too', (t) => {
  const d = new RetryLoopDetector();
  t.deepEqual(feed(d, [read('get DataCenter/default/dc'), read('get DataCenter/default/dc'), read('get DataCenter/default/dc')]), [false, false, true]);
});

test('not a loop: a successful write, a cluster that changed, or rounds that differ', (t) => {
  const written = new RetryLoopDetector();
  const ok: AnsweredRequest = { signature: 'patch StatefulSet/default/s', status: 200, inert: false, clusterRevision: 7 };
  t.deepEqual(feed(written, [ok, ok, ok, ok]), [false, false, false, false]);

  const changed = new RetryLoopDetector();
  t.deepEqual(feed(changed, [refused('create A', 7), refused('create A', 8), refused('create A', 9)]), [false, false, false]);
  // Once the cluster stays put, three more rounds are a loop again.
  t.deepEqual(feed(changed, [refused('create A', 9), refused('create A', 9)]), [false, true]);

  const differ = new RetryLoopDetector();
  t.deepEqual(feed(differ, [refused('create A'), refused('create B'), refused('create A'), refused('create C'), refused('create A'), refused('create B')]), [
    false,
    false,
    false,
    false,
    false,
    false,
  ]);
  // The same write, answered differently, is another request.
  const answers = new RetryLoopDetector();
  t.deepEqual(feed(answers, [refused('create A'), { ...refused('create A'), status: 500 }, refused('create A')]), [false, false, false]);
});

const created = (signature: string, clusterRevision: number): AnsweredRequest => ({ signature, status: 201, inert: false, undoable: true, clusterRevision });

test('churn: creates that keep succeeding (what they made removed in between), in rounds that interleave, are a loop though the cluster moves', (t) => {
  const d = new RetryLoopDetector();
  // stale-deletion's requests on a view whose MongoCluster is gone, as traced: its children made
  // again and removed by the garbage collector, its status update refused, reconciles interleaved.
  const secret = (rv: number) => created('create Secret/default/mc1-users', rv);
  const service = (rv: number) => created('create Service/default/mc1-rs0', rv);
  const sts = (rv: number) => created('create StatefulSet/default/mc1-rs0', rv);
  const status = (rv: number) => refused('update MongoCluster/default/mc1', rv);
  const before = [read('list /api/v1/secrets', 16), read('list /apis/apps/v1/statefulsets', 16)];
  const loop = [secret(20), service(21), sts(22), status(26), secret(30), service(31), status(33), sts(34), secret(40), status(41), service(42), sts(43)];
  t.deepEqual(
    feed(d, [...before, ...loop]),
    [...before.map(() => false), ...loop.map((_, i) => i === loop.length - 1)],
    'found once every kind of request made since the last new one (the first refused update) was made three times: at the third StatefulSet create',
  );
  t.true(d.churn);
  t.is(d.round, 4, 'four kinds of request');

  const still = new RetryLoopDetector();
  feed(still, [refused('create A'), refused('create A'), refused('create A')]);
  t.false(still.churn, 'refused writes on a still cluster are the other loop');
});

test('not churn: a write that stays (an update, a create with generateName) starts the count again; reads and refused writes alone are not churn', (t) => {
  const updated = new RetryLoopDetector();
  const update = (rv: number): AnsweredRequest => ({ signature: 'update MongoCluster/default/mc1/status', status: 200, inert: false, clusterRevision: rv });
  const made = (rv: number) => created('create Secret/default/s', rv);
  t.deepEqual(feed(updated, [made(1), update(2), made(3), update(4), made(5), update(6), made(7)]), [false, false, false, false, false, false, false]);
  // What stale-views.ts feeds for a create with generateName: a successful write that is not undoable.
  const generated = new RetryLoopDetector();
  const event = (rv: number): AnsweredRequest => ({ signature: 'create Event/default/e-x', status: 201, inert: false, clusterRevision: rv });
  t.deepEqual(feed(generated, [made(1), event(2), made(3), event(4), made(5), event(6), made(7)]), [false, false, false, false, false, false, false]);
  // Refused writes while the cluster moves: no undone write among them, so neither loop.
  const moving = new RetryLoopDetector();
  t.deepEqual(feed(moving, [refused('create A', 1), refused('create A', 2), refused('create A', 3), refused('create A', 4)]), [false, false, false, false]);
  // A kind of request not yet made three times since the last new one holds the loop back.
  const newer = new RetryLoopDetector();
  t.deepEqual(feed(newer, [made(1), made(2), read('get B'), made(3), read('get B'), made(4)]), [false, false, false, false, false, false]);
  t.true(newer.add(read('get B')));
});
