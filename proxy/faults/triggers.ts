/**
 * Armed triggers and change marks: what the controller's writes (completed upstream), the
 * cluster view's changes and the controller's calls to stub applications (fed by the run) are
 * matched against. The other faults (crash after write, watch-end,
 * hold-until) arm a trigger here and act when it fires; stale views read a change mark.
 */
import { describeChange, describeTrigger, type AppCallArrival, type ChangeTrigger, type Trigger } from '../../src/model/plan.js';
import type { ObjectKey } from '../../src/model/object-key.js';
import { WriteOccurrenceCounter } from '../../src/model/controller-write.js';
import { ChangeOccurrenceCounter, describeNearMiss, matchesChange } from '../../src/model/change-match.js';
import { TriggerEvaluator } from '../../src/model/trigger-eval.js';
import type { ClusterView, ObservedChange } from '../../src/recorder/cluster-recorder.js';
import type { Epoch } from '../epoch.js';
import { TriggerKeys, type CompletedWrite } from '../write-triggers.js';

/** What made a trigger fire. */
export interface TriggerFired {
  /** The controller request whose completion fired it (write triggers). */
  requestId?: number;
  /** The cluster change that fired it (change triggers): trace seq, key and resourceVersion. */
  changeSeq?: number;
  key?: ObjectKey;
  resourceVersion?: string;
}

export interface ArmedTrigger {
  readonly trigger: Trigger;
  readonly fired: boolean;
  /** Until it fires: why not, from what came closest ("never matched: ..."). */
  whyNotFired(): string | undefined;
  cancel(): void;
}

/** The moment a cluster change matched (the frozen point of a stale view). */
export interface ChangeMark {
  readonly trigger: ChangeTrigger;
  /** Set once the change matched. */
  readonly resourceVersion: string | undefined;
  readonly seq: number | undefined;
  /** Until the change matched: why not, from what came closest. */
  whyNotFired(): string | undefined;
}

/** Called when a trigger fires; `epoch` is the connection epoch of the write that fired it (write triggers). */
export type OnTriggerFired = (info: TriggerFired, epoch: Epoch | undefined) => void;

interface ArmedEntry {
  evaluator: TriggerEvaluator;
  onFire: OnTriggerFired;
  cancelled: boolean;
}

interface MarkEntry {
  trigger: ChangeTrigger;
  before: boolean;
  counter: ChangeOccurrenceCounter;
  resourceVersion: string | undefined;
  seq: number | undefined;
}

function setMark(m: MarkEntry, c: ObservedChange): void {
  m.resourceVersion = m.before ? String(Number(c.resourceVersion) - 1) : c.resourceVersion;
  m.seq = c.seq;
}

export class TriggerBoard {
  /** Keys as triggers name them (generated names folded to `<prefix>*#<n>`, as the planner does). */
  readonly keys = new TriggerKeys();
  private readonly writeCounter = new WriteOccurrenceCounter();
  private armed: ArmedEntry[] = [];
  private marks: MarkEntry[] = [];

  constructor(
    private readonly clusterView: ClusterView | undefined,
    private readonly log: (line: string) => void,
  ) {}

  /**
   * Arms a trigger (write, change or composite; see trigger-eval.ts). `onFire` runs synchronously at
   * the moment it fires: after the write's answer arrived but before the controller gets it, or
   * when the cluster view saw the change but before any controller stream delivers it. Write counts
   * run over the proxy's whole life; change counts over every change the cluster view has seen,
   * those before arming included (a trigger that matches one of those fires at once).
   */
  arm(trigger: Trigger, onFire: OnTriggerFired): ArmedTrigger {
    const evaluator = new TriggerEvaluator(trigger);
    if (evaluator.watchesChanges && !this.clusterView) {
      throw new Error(`the trigger "${describeTrigger(trigger)}" needs the proxy's cluster view (start the proxy with clusterView)`);
    }
    const entry: ArmedEntry = { evaluator, onFire, cancelled: false };
    this.armed.push(entry);
    // Changes before arming count too (the planner counts from the start of the cluster trace).
    if (evaluator.watchesChanges) {
      for (const c of this.clusterView!.pastChanges()) {
        if (evaluator.change(this.keys.fold(c.key), c.prev, c.next)) {
          this.fire(entry, { changeSeq: c.seq, key: c.key, resourceVersion: c.resourceVersion }, undefined);
          break;
        }
      }
    }
    return {
      trigger,
      get fired() {
        return evaluator.fired;
      },
      whyNotFired: () => evaluator.whyNotFired(),
      cancel: () => {
        entry.cancelled = true;
        this.armed = this.armed.filter((a) => a !== entry);
      },
    };
  }

  /**
   * Remembers the resourceVersion at which the cluster view first sees a change matching `trigger`,
   * or, with `before`, the one right before it (the change's own less one: resourceVersions are the
   * store's revisions, which the cluster view's `stateAt` reads as numbers too), so that a view at it
   * shows every change before this one, whatever they were in this run.
   */
  markChange(trigger: ChangeTrigger, options: { before?: boolean } = {}): ChangeMark {
    if (!this.clusterView) throw new Error("markChange needs the proxy's cluster view");
    const entry: MarkEntry = { trigger, before: options.before ?? false, counter: new ChangeOccurrenceCounter(), resourceVersion: undefined, seq: undefined };
    this.marks.push(entry);
    for (const c of this.clusterView.pastChanges()) {
      if (matchesChange(trigger, c.prev, c.next, entry.counter, this.keys.fold(c.key))) {
        setMark(entry, c);
        break;
      }
    }
    return {
      trigger,
      get resourceVersion() {
        return entry.resourceVersion;
      },
      get seq() {
        return entry.seq;
      },
      whyNotFired: () =>
        entry.resourceVersion !== undefined ? undefined : (describeNearMiss(trigger, entry.counter) ?? `never matched: ${describeChange(trigger)}`),
    };
  }

  /** Whether watch delivery must wait for the cluster view (a change trigger or mark is still waiting). */
  needsClusterSync(): boolean {
    return this.armed.some((a) => a.evaluator.watchesChanges) || this.marks.some((m) => m.resourceVersion === undefined);
  }

  onClusterChange(c: ObservedChange): void {
    const key = this.keys.observeChange(c);
    for (const m of this.marks) {
      if (m.resourceVersion !== undefined) continue;
      if (matchesChange(m.trigger, c.prev, c.next, m.counter, key)) setMark(m, c);
    }
    for (const a of [...this.armed]) {
      if (a.cancelled || !a.evaluator.watchesChanges) continue;
      if (a.evaluator.change(key, c.prev, c.next)) this.fire(a, { changeSeq: c.seq, key: c.key, resourceVersion: c.resourceVersion }, undefined);
    }
  }

  /** A call of the controller arrived at a stub application (fed by the run: the proxy does not see those calls). */
  onAppCall(arrival: AppCallArrival): void {
    for (const a of [...this.armed]) {
      if (a.cancelled || !a.evaluator.watchesCalls) continue;
      if (a.evaluator.call(arrival)) this.fire(a, { key: arrival.key }, undefined);
    }
  }

  onCompletedWrite(completed: CompletedWrite, epoch: Epoch): void {
    const write = this.keys.observeWrite(completed);
    const n = this.writeCounter.record(write);
    for (const a of [...this.armed]) {
      if (a.cancelled) continue;
      if (a.evaluator.write(write, n)) this.fire(a, { requestId: write.requestId, key: completed.key }, epoch);
    }
  }

  private fire(entry: ArmedEntry, info: TriggerFired, epoch: Epoch | undefined): void {
    this.armed = this.armed.filter((a) => a !== entry);
    try {
      entry.onFire(info, epoch);
    } catch (err) {
      this.log(`a fault callback failed: ${(err as Error).message}`);
    }
  }
}
