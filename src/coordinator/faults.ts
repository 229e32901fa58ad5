/**
 * A test plan's faults, wired to the proxy's primitives and the controller process:
 *
 * - crash-after-write: the proxy holds the controller right after the write; the controller is
 *   killed (SIGKILL), the Leases it held are deleted (so its successor need not wait out the lease),
 *   a new connection epoch starts and the controller is restarted;
 * - stale-restart: from the start of the run the proxy marks the resourceVersion at which the
 *   cluster went through `viewAfter`; when `at` fires the controller is held, killed, its Leases
 *   deleted, and restarted onto a view frozen at that resourceVersion, released once the restarted
 *   controller, having read from it, has acted on it and gone quiet (`quietMs`, the quiet window
 *   that says a run has settled) or is going round in a loop of the same reads and refused
 *   writes, or of writes each round undoes (src/model/retry-loop.ts), and at the latest
 *   `releaseAfterSeconds` after that first read;
 * - hold-until: entirely in the proxy (hold from `from`, expire with 410 once `until` happened);
 * - api-error: entirely in the proxy (the n-th matching write request gets an error, a lost
 *   response or a slow answer; one-shot);
 * - watch-end: entirely in the proxy (when `at` fires, the kind's watches end; optionally 410 on resume).
 *
 * Each fault says whether it was injected; the trace records when each phase happened, and a fault
 * whose trigger never matched gets a `not-injected` fault event at the end of the run.
 */
import type { ControllerProxy, HoldUntilState } from '../../proxy/index.js';
import { describeApiError, describeChange, describeTrigger, describeWatchEnd, describeWrite, type Fault, type TestPlan } from '../model/plan.js';
import type { TraceSink } from '../model/trace.js';
import type { ControllerProcess } from './controller-process.js';
import { sleep } from '../workload/runner.js';
import { RETRY_LOOP_ROUNDS } from '../model/retry-loop.js';

/** How long a restarted controller may take to read from its stale view before the release timer starts anyway. */
const RESTART_READ_TIMEOUT_MS = 30_000;

export class PlanFaults {
  private readonly injected: boolean[];
  private readonly holdUntil = new Map<number, HoldUntilState>();
  /** Each fault's armed trigger (and stale restarts' marks), to say what came closest when it never fired. */
  private readonly pendingWhy = new Map<number, () => string | undefined>();
  private readonly releaseViews: Array<() => void> = [];
  /** Why a fault did not take effect, when its trigger matched but it could not act (by fault index). */
  private readonly refused = new Map<number, string>();
  /** Hold-until faults that timed out: what the workload was doing then (by fault index). */
  private readonly workloadAtTimeout = new Map<number, string | undefined>();
  private finished = false;
  /** The restart (and stale-view release) in progress, if any. */
  pending: Promise<void> | undefined;

  constructor(
    private readonly plan: TestPlan,
    private readonly proxy: ControllerProxy,
    private readonly proc: ControllerProcess,
    private readonly trace: TraceSink,
    private readonly log: (line: string) => void,
    /** Called when a fault first changes what the controller sees. */
    private readonly onFired: () => void,
    /** The workload step running now, described (undefined: the workload has ended). */
    private readonly workloadAt: () => string | undefined = () => undefined,
    /** A stale view is released once the controller has been quiet this long after reading it (0: only at releaseAfterSeconds). */
    private readonly quietMs = 0,
  ) {
    this.injected = plan.spec.faults.map(() => false);
  }

  /** Does the plan restart the controller (a crash or a stale restart)? */
  get restarts(): boolean {
    return this.plan.spec.faults.some((f) => f.type === 'crash-after-write' || f.type === 'stale-restart');
  }

  arm(): void {
    this.plan.spec.faults.forEach((fault, i) => this.armOne(fault, i));
  }

  /** Did every fault take effect? */
  allInjected(): boolean {
    this.plan.spec.faults.forEach((f, i) => {
      if (f.type === 'hold-until') this.injected[i] = this.holdUntil.get(i)?.injected ?? false;
    });
    return this.injected.every(Boolean);
  }

  /** For each fault that did not take effect (see allInjected), why not, in the plan's order. */
  whyNotInjected(): string[] {
    this.allInjected();
    return this.plan.spec.faults.flatMap((f, i) => (this.injected[i] ? [] : [this.refused.get(i) ?? this.describeNotInjected(f, i)]));
  }

  /** At the end of the run: records faults that never took effect, releases what is still held. */
  finish(): void {
    if (this.finished) return;
    this.finished = true;
    const all = this.allInjected();
    for (const release of this.releaseViews.splice(0)) release();
    if (all) return;
    this.plan.spec.faults.forEach((f, i) => {
      // A hold-until that timed out recorded why already.
      if (this.injected[i] || this.holdUntil.get(i)?.timedOut) return;
      this.trace.append({
        type: 'fault',
        fault: f.type,
        phase: 'not-injected',
        faultIndex: i,
        detail: `the run ended before this fault took effect: ${this.describeNotInjected(f, i)}`,
      });
    });
  }

  private armOne(fault: Fault, i: number): void {
    switch (fault.type) {
      case 'crash-after-write': {
        const armed = this.proxy.armCrashAfterWrite(
          fault.after,
          (info) => {
            this.injected[i] = true;
            this.onFired();
            this.log(`  fault fired: the controller ${describeWrite(fault.after)}; killing and restarting it`);
            this.pending = this.restart(i, 'crash-after-write', info.requestId);
          },
          i,
        );
        this.pendingWhy.set(i, () => armed.whyNotFired());
        return;
      }
      case 'stale-restart': {
        const mark = this.proxy.markChange(fault.viewAfter);
        const armed = this.proxy.armTrigger(fault.at, (info) => {
          const rv = mark.resourceVersion;
          if (rv === undefined) {
            const detail = `${describeTrigger(fault.at)} happened before ${describeChange(fault.viewAfter)}: no view to go back to`;
            this.refused.set(i, detail);
            this.trace.append({ type: 'fault', fault: 'stale-restart', phase: 'not-injected', faultIndex: i, detail });
            return;
          }
          this.proxy.holdController();
          this.injected[i] = true;
          this.onFired();
          this.trace.append({
            type: 'fault',
            fault: 'stale-restart',
            phase: 'triggered',
            faultIndex: i,
            resourceVersion: rv,
            ...(info.requestId !== undefined ? { requestId: info.requestId } : {}),
            detail: `${describeTrigger(fault.at)}: holding the controller, to restart it onto the view after ${describeChange(fault.viewAfter)} (resourceVersion ${rv})`,
          });
          this.log(`  fault fired: ${describeTrigger(fault.at)}; restarting the controller onto the view at resourceVersion ${rv}`);
          this.pending = this.restart(i, 'stale-restart', info.requestId, async () => {
            const view = this.proxy.serveStaleView(rv, i, fault.kinds);
            this.releaseViews.push(() => view.release());
            return async () => {
              // The stale window starts when the restarted controller first reads from the view.
              await Promise.race([view.firstServed, sleep(RESTART_READ_TIMEOUT_MS)]);
              let churn = false;
              const retrying = view.retrying.then((loop) => (churn = loop.churn));
              const why = await this.quietWithin(fault.releaseAfterSeconds * 1000, retrying);
              this.log(
                `  stale view released ${
                  why === 'quiet'
                    ? `once the controller had acted on it and been quiet for ${this.quietMs} ms`
                    : why === 'retrying'
                      ? `once the controller, on it, had made the same round of requests ${RETRY_LOOP_ROUNDS} times, ${
                          churn ? 'each round remaking what was removed after the one before' : 'the cluster unchanged'
                        }`
                      : `after ${fault.releaseAfterSeconds} s`
                }`,
              );
              view.release();
            };
          });
        });
        this.pendingWhy.set(i, () => armed.whyNotFired() ?? mark.whyNotFired());
        return;
      }
      case 'api-error': {
        const armed = this.proxy.armApiError(fault, i, () => {
          this.injected[i] = true;
          this.onFired();
          this.log(`  fault fired: ${describeApiError(fault)}`);
        });
        this.pendingWhy.set(i, () => armed.whyNotFired());
        return;
      }
      case 'watch-end': {
        const armed = this.proxy.armWatchEnd(fault, i, (streams) => {
          if (streams.length === 0) {
            const detail = `${describeTrigger(fault.at)} happened while the controller had no open ${fault.kind} watch`;
            this.refused.set(i, detail);
            this.trace.append({ type: 'fault', fault: 'watch-end', phase: 'not-injected', faultIndex: i, detail });
            return;
          }
          this.injected[i] = true;
          this.onFired();
          this.log(`  fault fired: ${describeWatchEnd(fault)} (${streams.length} stream(s))`);
        });
        this.pendingWhy.set(i, () => armed.whyNotFired());
        return;
      }
      case 'hold-until':
        this.holdUntil.set(
          i,
          this.proxy.armHoldUntil(fault, i, {
            onHeld: () => this.onFired(),
            onExpired: (streams) => this.log(`  fault fired: ${describeChange(fault.until)}; ended ${streams.length} held stream(s) with 410 Expired`),
            onTimedOut: () => this.workloadAtTimeout.set(i, this.workloadAt()),
          }),
        );
        return;
    }
  }

  /**
   * Waits until the controller has been quiet for quietMs (nothing in flight, nothing started,
   * finished or delivered; a watch open), `retrying` resolves (it is going round in a loop of the
   * same reads and refused writes) or `boundMs` has passed, and says which came first.
   */
  private async quietWithin(boundMs: number, retrying: Promise<unknown>): Promise<'quiet' | 'retrying' | 'timeout'> {
    const deadline = Date.now() + boundMs;
    const since = Date.now();
    let looping = false;
    void retrying.then(() => (looping = true));
    for (;;) {
      if (looping) return 'retrying';
      const a = this.proxy.activity();
      const now = Date.now();
      if (this.quietMs > 0 && a.inFlight === 0 && a.openWatches > 0 && now - Math.max(a.lastActivityAt, since) >= this.quietMs) return 'quiet';
      if (now >= deadline) return 'timeout';
      await sleep(Math.min(50, this.quietMs > 0 ? this.quietMs / 4 : 50, deadline - now));
    }
  }

  /**
   * Kill (the proxy already holds the controller), release its Leases, new epoch, restart.
   * `beforeStart` may set up the restarted controller's view and return what to await afterwards.
   */
  private async restart(
    i: number,
    fault: 'crash-after-write' | 'stale-restart',
    requestId: number | undefined,
    beforeStart?: () => Promise<() => Promise<void>>,
  ): Promise<void> {
    const req = requestId !== undefined ? { requestId } : {};
    await this.proc.kill();
    this.trace.append({ type: 'fault', fault, phase: 'killed', faultIndex: i, ...req, detail: 'controller process killed (SIGKILL)' });
    await this.proxy.releaseLeaderElection();
    this.proxy.startNewEpoch();
    this.proxy.incarnation = this.proc.incarnation + 1;
    const after = beforeStart ? await beforeStart() : undefined;
    this.proc.start(() => {
      this.trace.append({
        type: 'fault',
        fault,
        phase: 'restarted',
        faultIndex: i,
        ...req,
        detail: `controller restarted (incarnation ${this.proc.incarnation}${this.proc.startedFromSpare ? ', a warm spare' : ''})`,
      });
      // A warm spare's requests, waiting at the proxy, come after the restart in the trace.
      this.proxy.admitSpare();
    });
    if (after) await after();
  }

  /** The fault, and why it did not take effect, from what its trigger came closest to. */
  private describeNotInjected(f: Fault, i: number): string {
    const why = this.holdUntil.get(i)?.whyNotFired() ?? this.pendingWhy.get(i)?.();
    return `${describeFault(f, this.holdUntil.get(i), this.workloadAtTimeout.get(i))}${why ? `: ${why}` : ''}`;
  }
}

function describeFault(f: Fault, holdUntil: HoldUntilState | undefined, workloadAtTimeout?: string): string {
  switch (f.type) {
    case 'crash-after-write':
      return `crash after the controller ${describeWrite(f.after)}`;
    case 'stale-restart':
      return `stale restart when ${describeTrigger(f.at)}`;
    case 'hold-until': {
      const where =
        holdUntil?.state === 'holding'
          ? ' (holding: the cancelling change never came)'
          : holdUntil?.state === 'expired' && holdUntil.expiredStreams.length === 0
            ? ' (no controller stream had an event of it to hold)'
            : holdUntil?.state === 'expired'
              ? // The planner drops the holds it can tell are waiting for the controller (planner/rules/hold-release.ts); say what this one waited on.
                ` (the cancelling change did not come in time${workloadAtTimeout ? `, the workload still at ${workloadAtTimeout}` : ', after the workload had ended'}: it waits for the controller to act on what was held; the hold was expired anyway)`
              : ' (the change to hold from never happened)';
      return `hold ${f.key} from ${describeChange(f.from)} until ${describeChange(f.until)}${where}`;
    }
    case 'api-error':
      return describeApiError(f);
    case 'watch-end':
      return describeWatchEnd(f);
  }
}
