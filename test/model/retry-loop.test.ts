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
