/**
 * A test plan's faults in a run: each is armed by its kind's module (./faults/, one per fault kind,
 * on the proxy's primitives); this keeps the books. Each fault says whether it was injected; the
 * trace records when each phase happened, and a fault whose trigger never matched gets a
 * `not-injected` fault event at the end of the run. It also offers the modules the run's services:
 * restarting the controller (crash-after-write, stale-restart) and waiting for it to go quiet.
 */
import type { ControllerProxy } from '../../proxy/index.js';
import { describeFault, faultRestarts, type Fault, type TestPlan } from '../model/plan.js';
import type { TraceSink } from '../model/trace.js';
import type { ControllerProcess } from './controller-process.js';
import { Settle } from './settle.js';
import { armFault, type ArmedFault, type FaultRun, type ManagedSystem } from './faults/index.js';

export class PlanFaults {
  private readonly injected: boolean[];
  /** Each fault as armed (by fault index): what it says about itself at the end. */
  private readonly armed: ArmedFault[] = [];
  private readonly releaseViews: Array<() => void> = [];
  /** Why a fault did not take effect, when its trigger matched but it could not act (by fault index). */
  private readonly refused = new Map<number, string>();
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
    /** What faults on the managed system act on (none by default). */
    private readonly managed: ManagedSystem = { containers: undefined, applications: undefined, clusterTrace: trace },
  ) {
    this.injected = plan.spec.faults.map(() => false);
    this.settle = new Settle(proxy, proc, quietMs);
  }

  /** The run's one notion of quiet, which a stale view's release waits for. */
  private readonly settle: Settle;

  /** Does the plan restart the controller (a crash or a stale restart)? */
  get restarts(): boolean {
    return this.plan.spec.faults.some(faultRestarts);
  }

  arm(): void {
    this.plan.spec.faults.forEach((fault, i) => this.armOne(fault, i));
  }

  /** Did every fault take effect? */
  allInjected(): boolean {
    this.armed.forEach((a, i) => {
      if (a.injected) this.injected[i] = a.injected();
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
      if (this.injected[i] || this.armed[i]?.recordedItself?.()) return;
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
    const run: FaultRun = {
      primitives: this.proxy.primitives,
      trace: this.trace,
      index: i,
      log: this.log,
      fired: () => {
        this.injected[i] = true;
        this.onFired();
      },
      refuse: (detail) => {
        this.refused.set(i, detail);
        this.trace.append({ type: 'fault', fault: fault.type, phase: 'not-injected', faultIndex: i, detail });
      },
      restart: (requestId, beforeStart) => {
        this.pending = this.restart(i, fault.type, requestId, beforeStart);
      },
      releaseAtEnd: (release) => this.releaseViews.push(release),
      managed: this.managed,
      settleAfter: (done) => {
        const before = this.pending;
        this.pending = before ? Promise.all([before, done]).then(() => undefined) : done;
      },
      quietWithin: (boundMs, retrying) => this.settle.quietWithin(boundMs, retrying),
      quietMs: this.quietMs,
      workloadAt: this.workloadAt,
    };
    this.armed[i] = armFault(fault, run);
  }

  /**
   * Kill (the proxy already holds the controller), release its Leases, new epoch, restart.
   * `beforeStart` may set up the restarted controller's view and return what to await afterwards.
   */
  private async restart(i: number, fault: Fault['type'], requestId: number | undefined, beforeStart?: () => Promise<() => Promise<void>>): Promise<void> {
    const req = requestId !== undefined ? { requestId } : {};
    await killForRestart(this.proc, this.proxy, () =>
      this.trace.append({ type: 'fault', fault, phase: 'killed', faultIndex: i, ...req, detail: 'controller process killed (SIGKILL)' }),
    );
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
    const armed = this.armed[i];
    const why = armed?.whyNotFired();
    return `${armed?.describe?.() ?? describeFault(f)}${why ? `: ${why}` : ''}`;
  }
}

/** Kills the controller and readies the proxy for its next incarnation: its Leases released (taken over at once), a new epoch. */
async function killForRestart(proc: ControllerProcess, proxy: ControllerProxy, onKilled: () => void = () => {}): Promise<void> {
  await proc.kill();
  // In the trace the kill comes before the Lease release: the Lease goes only once the old process is gone.
  onKilled();
  await proxy.releaseLeaderElection();
  proxy.startNewEpoch();
  proxy.incarnation = proc.incarnation + 1;
}

/** Restarts the controller outside any fault (a recovery attempt, src/campaign/recovery.ts), as a crash fault does. */
export async function restartController(proc: ControllerProcess, proxy: ControllerProxy): Promise<void> {
  await killForRestart(proc, proxy);
  proc.start(() => proxy.admitSpare());
}
