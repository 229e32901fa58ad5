import test from 'ava';
import { ShortLivedSet } from '../../proxy/short-lived-set.js';
import { Epoch, type EpochMember } from '../../proxy/epoch.js';

test('a ShortLivedSet keeps its members in the order they were added, whatever leaves in between', (t) => {
  const set = new ShortLivedSet<{ n: number }>();
  const a = { n: 1 };
  const b = { n: 2 };
  const c = { n: 3 };
  const ea = set.add(a);
  const eb = set.add(b);
  set.add(c);
  t.deepEqual(set.values(), [a, b, c]);
  set.delete(eb);
  t.deepEqual(set.values(), [a, c]);
  t.is(set.size, 2);
  // Leaving twice changes nothing.
  set.delete(eb);
  t.is(set.size, 2);
  set.delete(ea);
  const d = { n: 4 };
  set.add(d);
  t.deepEqual(set.values(), [c, d]);
  set.clear();
  t.deepEqual(set.values(), []);
  t.is(set.size, 0);
  set.add(a);
  t.deepEqual(set.values(), [a]);
});

test('a member that left is not reachable from its entry any more (no dead entry keeps a young object alive)', (t) => {
  const set = new ShortLivedSet<{ n: number }>();
  const first = set.add({ n: 1 });
  const middle = set.add({ n: 2 });
  const last = set.add({ n: 3 });
  set.delete(middle);
  t.deepEqual([middle.value, middle.prev, middle.next], [undefined, undefined, undefined]);
  set.clear();
  for (const e of [first, last]) t.deepEqual([e.value, e.prev, e.next], [undefined, undefined, undefined]);
});

test('deleting members while going through values() visits each member once', (t) => {
  const set = new ShortLivedSet<{ n: number }>();
  const entries = [1, 2, 3, 4].map((n) => set.add({ n }));
  const seen: number[] = [];
  for (const v of set.values()) {
    seen.push(v.n);
    for (const e of entries) set.delete(e);
  }
  t.deepEqual(seen, [1, 2, 3, 4]);
  t.is(set.size, 0);
});

test('an epoch terminates its members in the order they joined, once each, and refuses members after it ended', (t) => {
  const epoch = new Epoch(1);
  const terminated: string[] = [];
  const member = (name: string): EpochMember & { membership?: ReturnType<Epoch['join']> } => {
    const m: EpochMember & { membership?: ReturnType<Epoch['join']> } = {
      terminate: (reason) => {
        terminated.push(`${name}: ${reason}`);
        epoch.leave(m.membership);
      },
    };
    return m;
  };
  const a = member('a');
  const b = member('b');
  const c = member('c');
  for (const m of [a, b, c]) m.membership = epoch.join(m);
  epoch.leave(b.membership);
  t.deepEqual(epoch.activeMembers(), [a, c]);
  epoch.end('stop');
  t.deepEqual(terminated, ['a: stop', 'c: stop']);
  t.deepEqual(epoch.activeMembers(), []);
  const late = member('late');
  t.is(epoch.join(late), undefined);
  t.deepEqual(terminated.slice(2), ['late: connection epoch already ended']);
});
