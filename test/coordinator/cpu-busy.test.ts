/**
 * Settle's CPU side (src/process/cpu.ts, src/coordinator/settle.ts): a controller that computes
 * without a request is not quiet. Measured in CPU time, never wall-clock time: the child below spins
 * until its own CPU clock has advanced, however loaded the machine is.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import test from 'ava';
import { CpuMeter, processCpuMs, processRunDelayMs } from '../../src/process/cpu.js';
import { cpuBusy, isQuiet, CPU_BUSY_MIN_MS } from '../../src/coordinator/settle.js';
import type { ProxyActivity } from '../../proxy/index.js';

const SPIN_CPU_MS = 300;

test('processCpuMs reads a live process and knows nothing of a gone one', async (t) => {
  const own = processCpuMs(process.pid);
  t.true(own !== undefined && own >= 0);
  const child = spawn(process.execPath, ['-e', '0']);
  const pid = child.pid!;
  await once(child, 'exit');
  // The exited child is reaped by Node: /proc/<pid> is gone.
  t.is(processCpuMs(pid), undefined);
  t.is(processRunDelayMs(pid), undefined);
  const waited = processRunDelayMs(process.pid);
  t.true(waited !== undefined && waited >= 0, `${waited}`);
});

test("the meter's wait over a window is the threads' run-queue time in it, never below 0 (a thread that ended takes its wait along)", (t) => {
  // Scripted readings, one per sample: the constructor's, then one per usedWithin (no timer sample:
  // its interval is longer than the test).
  const cpu = [0, 10, 20, 30];
  const wait = [0, 200, 400, 100];
  let i = 0;
  let j = 0;
  const t0 = Date.now();
  const meter = new CpuMeter(
    1,
    30_000,
    1e9,
    () => cpu[i++],
    () => wait[j++],
  );
  t.teardown(() => meter.stop());
  const use = (windowMs: number, at: number) => {
    const u = meter.usedWithin(windowMs, t0 + at)!;
    return { usedMs: u.usedMs, waitMs: u.waitMs };
  };
  t.deepEqual(use(5000, 5000), { usedMs: 10, waitMs: 200 });
  t.deepEqual(use(5000, 6000), { usedMs: 20, waitMs: 400 });
  // Over the last 1.5 s: from the sample at 5 s; the threads' total wait went down (one ended).
  t.deepEqual(use(1500, 7000), { usedMs: 20, waitMs: 0 });
  // Without schedstat, no wait: settle goes by the CPU used alone.
  const bare = new CpuMeter(
    1,
    30_000,
    1e9,
    () => 0,
    () => undefined,
  );
  t.teardown(() => bare.stop());
  t.is(bare.usedWithin(1000)!.waitMs, undefined);
});

test('a process that spins is busy over the window its spinning falls in', async (t) => {
  // Spins, when told, until its own CPU clock has advanced SPIN_CPU_MS, then says so and idles.
  const script = `
    const rl = require('node:readline').createInterface({ input: process.stdin });
    console.log('ready');
    rl.on('line', () => {
      const start = process.cpuUsage();
      while ((process.cpuUsage(start).user + process.cpuUsage(start).system) / 1000 < ${SPIN_CPU_MS}) {}
      console.log('spun');
    });`;
  const child = spawn(process.execPath, ['-e', script], { stdio: ['pipe', 'pipe', 'inherit'] });
  t.teardown(() => child.kill('SIGKILL'));
  const lines = createInterface({ input: child.stdout! })[Symbol.asyncIterator]();
  t.is((await lines.next()).value, 'ready');
  const meter = new CpuMeter(child.pid!);
  t.teardown(() => meter.stop());
  const before = meter.usedWithin(60_000)!;
  child.stdin!.write('go\n');
  t.is((await lines.next()).value, 'spun');
  const used = meter.usedWithin(60_000)!;
  // /proc counts in 10 ms ticks.
  t.true(used.usedMs - before.usedMs >= SPIN_CPU_MS - 20, `used ${used.usedMs - before.usedMs} ms`);
  t.true(cpuBusy(used));
});

test('busy: at least CPU_BUSY_MIN_MS and 5% of a core over the span, or on a CPU and waiting for one half the span; a busy controller is not quiet', (t) => {
  t.false(cpuBusy(undefined));
  t.false(cpuBusy({ usedMs: 3, spanMs: 1000 }));
  t.false(cpuBusy({ usedMs: CPU_BUSY_MIN_MS - 1, spanMs: 100 }));
  t.true(cpuBusy({ usedMs: CPU_BUSY_MIN_MS, spanMs: 300 }));
  t.false(cpuBusy({ usedMs: 40, spanMs: 1000 }));
  t.true(cpuBusy({ usedMs: 110, spanMs: 1000 }));
  // On a loaded machine: computing but mostly waiting for a CPU is busy; an idle controller's
  // wake-ups, waiting a little each, are not.
  t.true(cpuBusy({ usedMs: 10, waitMs: 200, spanMs: 250 }));
  t.false(cpuBusy({ usedMs: 10, spanMs: 250 }));
  t.false(cpuBusy({ usedMs: 2, waitMs: 25, spanMs: 250 }));
  t.false(cpuBusy({ usedMs: 10, waitMs: 400, spanMs: 1000 }));
  const idle: ProxyActivity = { inFlight: 0, openWatches: 2, lastActivityAt: 0, lastRequestAt: 0, requestsStarted: 10, awaitingRelist: 0, holdsInPlace: 0 };
  const after = { now: 10_000, quietMs: 1000, since: 0, startup: false, serializedBacklog: 0 };
  t.true(isQuiet(idle, { ...after, cpuBusy: false }));
  t.false(isQuiet(idle, { ...after, cpuBusy: true }));
  // A change the managed system makes by itself soon (a pod about to turn ready): not settled yet.
  t.false(isQuiet(idle, { ...after, transitionPending: true }));
  t.true(isQuiet(idle, { ...after, transitionPending: false }));
});
