/**
 * Settle's CPU side (src/process/cpu.ts, src/coordinator/settle.ts): a controller that computes
 * without a request is not quiet. Measured in CPU time, never wall-clock time: the child below spins
 * until its own CPU clock has advanced, however loaded the machine is.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import test from 'ava';
import { CpuMeter, processCpuMs } from '../../src/process/cpu.js';
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

test('busy: at least CPU_BUSY_MIN_MS and 5% of a core over the span; a busy controller is not quiet', (t) => {
  t.false(cpuBusy(undefined));
  t.false(cpuBusy({ usedMs: 3, spanMs: 1000 }));
  t.false(cpuBusy({ usedMs: CPU_BUSY_MIN_MS - 1, spanMs: 100 }));
  t.true(cpuBusy({ usedMs: CPU_BUSY_MIN_MS, spanMs: 300 }));
  t.false(cpuBusy({ usedMs: 40, spanMs: 1000 }));
  t.true(cpuBusy({ usedMs: 110, spanMs: 1000 }));
  const idle: ProxyActivity = { inFlight: 0, openWatches: 2, lastActivityAt: 0, lastRequestAt: 0, requestsStarted: 10, awaitingRelist: 0, holdsInPlace: 0 };
  const after = { now: 10_000, quietMs: 1000, since: 0, startup: false, serializedBacklog: 0 };
  t.true(isQuiet(idle, { ...after, cpuBusy: false }));
  t.false(isQuiet(idle, { ...after, cpuBusy: true }));
});
