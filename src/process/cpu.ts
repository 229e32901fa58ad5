/**
 * How much CPU a process has used, and how long its threads waited for one, for settle's notion of
 * quiet: a controller that computes without a request (building a keystore, rendering templates, a
 * tight retry loop around its own cache) is not done, however long the proxy has seen nothing from
 * it, and on a loaded machine it spends most of that computing waiting in the run queue. Read from
 * /proc/<pid>/stat and /proc/<pid>/task/<tid>/schedstat (Linux); elsewhere, or once the process is
 * gone, nothing is known and settle goes by the proxy alone.
 */
import { readdirSync, readFileSync } from 'node:fs';

/**
 * USER_HZ, the unit of /proc/<pid>/stat's times: 100 on every Linux architecture Node runs on (the
 * kernel exports it as a constant to user space; `getconf CLK_TCK`).
 */
const CLOCK_TICKS_PER_SECOND = 100;

/** The CPU time (user and system, its reaped children's included) the process has used, in ms. */
export function processCpuMs(pid: number): number | undefined {
  let text: string;
  try {
    text = readFileSync(`/proc/${pid}/stat`, 'latin1');
  } catch {
    return undefined;
  }
  // Field 2, the command name, is in parentheses and may hold spaces and parentheses itself: the
  // fields that follow start after the last ')'. Field 3 is then index 0; utime, stime, cutime and
  // cstime are fields 14-17.
  const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
  let ticks = 0;
  for (const i of [11, 12, 13, 14]) ticks += Number(fields[i]);
  return Number.isFinite(ticks) ? (ticks * 1000) / CLOCK_TICKS_PER_SECOND : undefined;
}

/**
 * How long the process's threads have waited, runnable, for a CPU (the run queue), in ms: the sum
 * of each live thread's schedstat run_delay. Undefined when the kernel does not say (no schedstat).
 */
export function processRunDelayMs(pid: number): number | undefined {
  let ns = 0;
  try {
    for (const tid of readdirSync(`/proc/${pid}/task`)) {
      // "<time on a CPU> <time waiting on a run queue> <timeslices>", in ns; a thread may be gone.
      let text: string;
      try {
        text = readFileSync(`/proc/${pid}/task/${tid}/schedstat`, 'latin1');
      } catch {
        continue;
      }
      ns += Number(text.split(' ')[1]);
    }
  } catch {
    return undefined;
  }
  return Number.isFinite(ns) ? ns / 1e6 : undefined;
}

interface Sample {
  at: number;
  cpuMs: number;
  waitMs: number | undefined;
}

/** What a process did over a span: CPU used and, when known, time its threads waited for a CPU. */
export interface CpuUse {
  usedMs: number;
  spanMs: number;
  waitMs?: number;
}

/**
 * Samples one process's CPU time every `everyMs` while it runs (an unref'd timer: it keeps nothing
 * alive) and keeps `keepMs` of history, so that a wait that starts long after the process's last
 * request still knows what it did just before.
 */
export class CpuMeter {
  private readonly samples: Sample[] = [];
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly pid: number,
    private readonly keepMs = 30_000,
    everyMs = 100,
    private readonly read: (pid: number) => number | undefined = processCpuMs,
    private readonly readWait: (pid: number) => number | undefined = processRunDelayMs,
  ) {
    this.sample();
    this.timer = setInterval(() => this.sample(), everyMs);
    this.timer.unref();
  }

  /**
   * The CPU the process used over (at most) the last `windowMs`, how long its threads waited for a
   * CPU then (when known; a thread that ended takes its wait with it, so never below 0), and the
   * span the samples cover (shorter while the meter is younger than the window); undefined when it
   * cannot be read.
   */
  usedWithin(windowMs: number, now = Date.now()): CpuUse | undefined {
    const latest = this.sample(now);
    if (!latest) return undefined;
    let from = latest;
    for (let i = this.samples.length - 1; i >= 0; i--) {
      const s = this.samples[i]!;
      from = s;
      if (s.at <= now - windowMs) break;
    }
    const use: CpuUse = { usedMs: latest.cpuMs - from.cpuMs, spanMs: latest.at - from.at };
    if (latest.waitMs !== undefined && from.waitMs !== undefined) use.waitMs = Math.max(0, latest.waitMs - from.waitMs);
    return use;
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }

  private sample(now = Date.now()): Sample | undefined {
    const cpuMs = this.read(this.pid);
    if (cpuMs === undefined) {
      this.stop();
      return undefined;
    }
    const s = { at: now, cpuMs, waitMs: this.readWait(this.pid) };
    this.samples.push(s);
    // Keep one sample older than keepMs, so that a window of keepMs is still covered.
    while (this.samples.length > 2 && this.samples[1]!.at < now - this.keepMs) this.samples.shift();
    return s;
  }
}
