import test from 'ava';
import { Limiter } from '../../src/campaign/limiter.js';

const tick = () => new Promise<void>((r) => setImmediate(r));

test('never more than `slots` tasks at once, started in the order they asked', async (t) => {
  const limiter = new Limiter(2);
  let active = 0;
  let peak = 0;
  const startOrder: number[] = [];
  const gates = Array.from({ length: 6 }, () => {
    let open!: () => void;
    const opened = new Promise<void>((r) => (open = r));
    return { open, opened };
  });
  const runs = gates.map((g, i) =>
    limiter.run(async () => {
      startOrder.push(i);
      active++;
      peak = Math.max(peak, active);
      await g.opened;
      active--;
      return i * 10;
    }),
  );
  await tick();
  t.deepEqual(startOrder, [0, 1]);
  // Finishing the second task lets exactly one more start: the next in line.
  gates[1]!.open();
  await tick();
  await tick();
  t.deepEqual(startOrder, [0, 1, 2]);
  for (const g of gates) g.open();
  t.deepEqual(await Promise.all(runs), [0, 10, 20, 30, 40, 50]);
  t.is(peak, 2);
  t.deepEqual(startOrder, [0, 1, 2, 3, 4, 5]);
});

test('a failing task frees its slot and its error reaches only its caller', async (t) => {
  const limiter = new Limiter(1);
  const failed = limiter.run(async () => {
    throw new Error('boom');
  });
  const next = limiter.run(async () => 'ran');
  await t.throwsAsync(failed, { message: 'boom' });
  t.is(await next, 'ran');
});

test('a limiter needs a whole number of slots, at least one', (t) => {
  t.throws(() => new Limiter(0), { instanceOf: RangeError });
  t.throws(() => new Limiter(1.5), { instanceOf: RangeError });
});

test('a waiter of a higher priority goes before those of lower ones that came earlier; FIFO within a priority', async (t) => {
  const limiter = new Limiter(1);
  let open!: () => void;
  const first = limiter.run(() => new Promise<void>((r) => (open = r)));
  const order: string[] = [];
  const waiters = [
    limiter.run(async () => void order.push('ts-1')),
    limiter.run(async () => void order.push('ts-2')),
    limiter.run(async () => void order.push('go-1'), 1),
    limiter.run(async () => void order.push('go-2'), 1),
  ];
  await tick();
  open();
  await first;
  await Promise.all(waiters);
  t.deepEqual(order, ['go-1', 'go-2', 'ts-1', 'ts-2']);
});
