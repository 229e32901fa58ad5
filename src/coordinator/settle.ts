/**
 * When a run's controller is done: quiet at the proxy (nothing in flight, nothing delivered for the
 * run's quiet window, no hold in place), and not busy computing (its process used little CPU over
 * the quiet window); after start-up, also no change pending that the simulated managed system makes
 * by itself soon (a pod turning ready after its readiness probe's initial delay: the controller
 * reacts to it, and an end state taken before it would depend on the run's timing). The run waits for it at the controller's start, after each workload step that
 * settles, after the workload and after a fault's restart, and a stale view is released on it
 * (`quietWithin`). This is the run's one definition of quiet; the serializer's episode end
 * (proxy/serialize.ts) is the narrower notion of one event's reaction being over.
 */
import type { ControllerProxy, ProxyActivity } from '../../proxy/index.js';
import { SetupError } from '../model/errors.js';
import { sleep } from '../workload/runner.js';
import type { ControllerProcess } from './controller-process.js';
import type { CpuUse } from '../process/cpu.js';

/** How long a controller may take to open its watches and go quiet after it starts. */
export const STARTUP_TIMEOUT_MS = 30_000;

/**
 * A controller that used at least this share of one core over the quiet window, and at least
 * CPU_BUSY_MIN_MS, is still computing (cass-operator v1.32's first reconcile spends 3.5 s of CPU
 * building a keystore without a request, longer than a 1 s window). An idle Go or Python controller
 * uses well under 1% (timers, leader-election renewals).
 */
export const CPU_BUSY_SHARE = 0.05;
export const CPU_BUSY_MIN_MS = 20;
/**
 * So is one whose threads were on a CPU or waiting for one (run queue) for at least this share of the
 * window: on a loaded machine a computing controller gets a few percent of a core and waits the rest
 * (at load 12-16 on 2 cores, some 250 ms windows of a 1.5 s computation had under 20 ms of CPU), while
 * an idle one's wake-ups wait briefly each (a process waking every 10 ms, as Go's sysmon does at most,
 * at load 12 on 2 cores: 1% of the span on a CPU, 9.5% waiting).
 */
export const CPU_DEMAND_SHARE = 0.5;

/** Is a controller that used `usedMs` of CPU and waited `waitMs` for one over the last `spanMs` still computing? */
export function cpuBusy(cpu: CpuUse | undefined): boolean {
  if (cpu === undefined) return false;
  if (cpu.usedMs >= Math.max(CPU_BUSY_MIN_MS, CPU_BUSY_SHARE * cpu.spanMs)) return true;
  return cpu.waitMs !== undefined && cpu.usedMs + cpu.waitMs >= Math.max(CPU_BUSY_MIN_MS, CPU_DEMAND_SHARE * cpu.spanMs);
}

/**
 * Has the controller settled? Nothing in flight and nothing delivered for `quietMs` (since `since`),
 * a watch open (at start-up), no serialized event waiting, no stream a hold expired that the
 * controller has not watched again (it has not relisted yet), and no hold in place: a held
 * controller is silent, not done (the change that ends the hold may be the workload's last write,
 * not yet seen by the proxy, and after it the controller still relists). Nor is a controller busy
 * computing (`cpuBusy`).
 */
export function isQuiet(
  a: ProxyActivity,
  o: { now: number; quietMs: number; since: number; startup: boolean; serializedBacklog: number; cpuBusy?: boolean; transitionPending?: boolean },
): boolean {
  return (
    o.cpuBusy !== true &&
    o.transitionPending !== true &&
    a.inFlight === 0 &&
    o.now - Math.max(a.lastActivityAt, o.since) >= o.quietMs &&
    (!o.startup || a.openWatches > 0) &&
    o.serializedBacklog === 0 &&
    a.awaitingRelist === 0 &&
    a.holdsInPlace === 0
  );
}

/** Waiting for one run's controller (behind its proxy) to be quiet. */
export class Settle {
  constructor(
    private readonly proxy: ControllerProxy,
    private readonly proc: ControllerProcess,
    /** The run's quiet window. */
    readonly quietMs: number,
    /** Is the simulated managed system about to change by itself (RunCluster.transitionPending)? Not asked at start-up. */
    private readonly transitionPending: () => boolean = () => false,
  ) {}

  /** When a check last saw a change of the managed system pending (0: never). */
  private lastPendingAt = 0;

  /**
   * At start-up: until the controller has a watch open and has been quiet; fails (SetupError) if it
   * exits, if `neverQuiet` says why it never will (it lists in a loop), or after `timeoutMs`.
   */
  async startup(timeoutMs: number, neverQuiet?: () => string | undefined): Promise<void> {
    await this.waitUntilQuiet(this.quietMs, timeoutMs, true, 0, neverQuiet);
  }

  /** Until the controller has been quiet for `quietMs`, counted from `since` at the earliest; false after `timeoutMs`. */
  untilQuiet(timeoutMs: number, since = Date.now(), quietMs = this.quietMs): Promise<boolean> {
    return this.waitUntilQuiet(quietMs, timeoutMs, false, since);
  }

  /**
   * Until the controller has been quiet (as at start-up: a watch open) counted from now, `retrying`
   * resolves (it goes round a loop of the same reads and refused writes) or `boundMs` has passed;
   * says which came first. A stale view is released on it. A quiet window of 0 is never quiet here:
   * only the loop or the bound end the wait.
   */
  async quietWithin(boundMs: number, retrying: Promise<unknown>): Promise<'quiet' | 'retrying' | 'timeout'> {
    const since = Date.now();
    const deadline = since + boundMs;
    let looping = false;
    void retrying.then(() => (looping = true));
    for (;;) {
      if (looping) return 'retrying';
      const now = Date.now();
      if (this.quietMs > 0 && this.quietNow(now, this.quietMs, since, true)) return 'quiet';
      if (now >= deadline) return 'timeout';
      await sleep(Math.min(50, this.quietMs > 0 ? this.quietMs / 4 : 50, deadline - now));
    }
  }

  /** What keeps the controller from being quiet now, for a run's log. */
  describe(now = Date.now()): string {
    const a = this.proxy.activity();
    const inFlight = a.inFlight > 0 ? ` (${this.proxy.describeInFlight(now).join('; ')})` : '';
    const cpu = this.proc.cpuUsedWithin(this.quietMs, now);
    const waited = cpu?.waitMs !== undefined ? ` (and ${Math.round(cpu.waitMs)} ms waiting for one)` : '';
    const busy = cpu ? `, ${Math.round(cpu.usedMs)} ms of CPU${waited} in the last ${Math.round(cpu.spanMs)} ms${cpuBusy(cpu) ? ' (busy)' : ''}` : '';
    const pending = this.transitionPending()
      ? ', a change of the managed system pending (its simulated controllers at work, a pod about to start or turn ready)'
      : '';
    return `${a.inFlight} request(s) in flight${inFlight}, ${a.openWatches} watch(es) open, last activity ${now - a.lastActivityAt} ms ago, ${a.awaitingRelist} stream(s) awaiting a relist, ${a.holdsInPlace} hold(s) in place${busy}${pending}`;
  }

  /** Waits (bounded, never failing) until the controller has a watch open or has exited. */
  async forWatches(timeoutMs = STARTUP_TIMEOUT_MS): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (Date.now() < deadline && this.proc.running && this.proxy.activity().openWatches === 0) await sleep(20);
  }

  private async waitUntilQuiet(quietMs: number, timeoutMs: number, startup: boolean, since: number, neverQuiet?: () => string | undefined): Promise<boolean> {
    const { proc } = this;
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      if (startup && !proc.running && proc.exitedUnexpectedly) {
        throw new SetupError(proc.startFailure ?? proc.startupExitMessage());
      }
      const never = neverQuiet?.();
      if (never) throw new SetupError(never);
      if (this.quietNow(Date.now(), quietMs, since, startup)) return true;
      if (Date.now() >= deadline) {
        if (startup) throw new SetupError(`the controller did not open a watch and go quiet within ${timeoutMs / 1000}s of starting (see controller.log)`);
        return false;
      }
      await sleep(Math.min(50, quietMs / 4));
    }
  }

  /** Is the controller quiet now (isQuiet, with its proxy's activity and its process's CPU)? */
  private quietNow(now: number, quietMs: number, since: number, startup: boolean): boolean {
    const busy = cpuBusy(this.proc.cpuUsedWithin(quietMs, now));
    const transitionPending = !startup && this.transitionPending();
    // A pending change is activity: the quiet window counts from the last check that saw one, so the
    // controller has the window to react to the change once it is made.
    if (transitionPending) this.lastPendingAt = now;
    return isQuiet(this.proxy.activity(), {
      now,
      quietMs,
      since: startup ? since : Math.max(since, this.lastPendingAt),
      startup,
      serializedBacklog: this.proxy.serializedBacklog(),
      cpuBusy: busy,
      transitionPending,
    });
  }
}
