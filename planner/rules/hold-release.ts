/**
 * Will a hold ever be released? An unobserved-state plan hides the controller's watch events of an
 * object from change N on, until the cancelling change N' has happened. If N' only happens once the
 * controller has acted on what is held, it never happens while the events are held: the proxy gives
 * up after its maximum hold, the controller relists, and the plan is reported not injected (it
 * tested nothing, so it can find no bug). The `releasable` stage drops such holds.
 *
 * A change X *needs the hold lifted* (cannot happen while the object's events from N on are held):
 * - X comes after N, and the controller made it (a successful, effective write W produced it; or X is
 *   the deletion the API server made once W removed the object's last finalizer), and every such W
 *   could only have been prompted by what is held: each watch event among W's causes is one the plan
 *   holds (the object's, from N on) or one of a change that itself needs the hold lifted, and none of
 *   W's causes is a read of the held object from N on (reads are not held); or
 * - ... or every such W is a write of the held object itself based on a held state (its body's
 *   resourceVersion is that of a change from N on): during the hold the controller's cached copy is
 *   older, and the API server refuses the write with 409 Conflict (a live read of that state does
 *   not help: controllers write the object they took from the cache, as component-toggle's 409s
 *   based on an old resourceVersion it had long read live show); or a create
 *   of the held object while its deletion is held: the controller's cache still shows the object,
 *   and a controller creates what is missing; or
 * - X is a write of the workload (a write step's object, at the resourceVersion its answer carried,
 *   or a delete step's deletion), and a wait step before it that ended after N was met by a change
 *   that needs the hold lifted (the workload would still be waiting), unless the wait's condition
 *   held when it began. A wait met by the controller's write to the held object or to its direct
 *   owner, after N, counts as such: an owner's status sums up its children (ready replicas, a
 *   component's phase), and the controller computes it from the held object in its cache.
 * - X was made by the cluster's own controllers (or nobody the trace names) after a workload write
 *   step that began after N and is gated as above: it answers what the workload did; or right after
 *   the controller's change of the held object (after N) by a write based on a held state (refused
 *   while held, as above): it answers that write (a resizer growing the claim whose request the
 *   controller raised); or
 * Anything else, the cluster's own controllers' changes included, may come anyway (lenient: the hold
 * counts as releasable). The latest states of related objects among W's causes count only when
 * shown after N. A controller write with no watch event among its causes (a timer) may come
 * anyway too. Traces without workload steps (recorded before steps said what they do) give the
 * workload no part in this.
 */
import type { ObjectKey } from '../../src/model/object-key.js';
import { isSuccess, type ChangeRecord, type RunAnalysis, type WorkloadStepRecord, type WriteRecord } from '../trace-analysis.js';

/** Work allowed per hold (changes and causes looked at); beyond it the hold counts as releasable. */
const BUDGET = 20_000;

/**
 * A predicate over holds: true when the hold from change `c` until change `until` (default: the
 * change that cancels `c`) is never released.
 */
export function neverReleasedHolds(main: RunAnalysis): (c: ChangeRecord, until?: number) => boolean {
  let index: ReleaseIndex | undefined;
  return (c, until = c.cancelledBy) => {
    if (until < 0) return false;
    index ??= new ReleaseIndex(main);
    return new HoldDependence(main, index, c).needsHoldLifted(until);
  };
}

/** What the dependence walk looks up: who made each change, and which workload step wrote it. */
class ReleaseIndex {
  /** change -> the controller's successful, effective writes that produced it. */
  private readonly producers = new Map<number, WriteRecord[]>();
  /** change -> the workload write step that made it. */
  readonly workloadWrite = new Map<number, number>();
  /** wait step (position in workloadSteps) -> the change that met it (-1: unknown). */
  readonly metBy = new Map<number, number>();

  constructor(private readonly main: RunAnalysis) {
    for (const w of main.writes) {
      if (w.effectChange < 0 || w.effect !== 'effective' || !isSuccess(w)) continue;
      const list = this.producers.get(w.effectChange);
      if (list) list.push(w);
      else this.producers.set(w.effectChange, [w]);
    }
    main.workloadSteps.forEach((step, i) => {
      if (step.action === 'write') {
        for (const { key, resourceVersion } of step.wrote) {
          const c = this.changeAt(key, resourceVersion, step.startSeq);
          if (c >= 0) this.workloadWrite.set(c, i);
        }
        // A delete step's answer names no resourceVersion: its change is the object's next deletion (or deletionTimestamp).
        if (step.wrote.length === 0) {
          for (const key of step.keys) {
            const c = main.changesOf(key).find((x) => main.changes[x]!.seq > step.startSeq);
            if (c !== undefined && (main.changes[c]!.eventType === 'DELETED' || main.changes[c]!.terminating)) this.workloadWrite.set(c, i);
          }
        }
      } else if (step.action === 'wait' && step.endSeq !== Infinity && step.polls !== undefined && step.polls > 1) {
        const key = step.keys[0];
        if (key === undefined) return;
        // A wait for absence was met by the object's deletion after the wait began.
        const c =
          step.metAt !== undefined
            ? this.changeAt(key, step.metAt, -Infinity)
            : (main.changesOf(key).find((x) => main.changes[x]!.seq > step.startSeq && main.changes[x]!.eventType === 'DELETED') ?? -1);
        this.metBy.set(i, c);
      }
    });
  }

  /** The change of `rawKey` with this resourceVersion, recorded after `afterSeq` (-1: none). */
  private changeAt(rawKey: string, resourceVersion: string, afterSeq: number): number {
    return this.main.changesOf(rawKey).find((x) => this.main.changes[x]!.resourceVersion === resourceVersion && this.main.changes[x]!.seq > afterSeq) ?? -1;
  }

  /** The writes that produced change `x`, with the deletion the API server made after the last finalizer went. */
  producersOf(x: number): WriteRecord[] {
    const made = this.producers.get(x) ?? [];
    const change = this.main.changes[x]!;
    if (change.eventType !== 'DELETED') return made;
    const list = this.main.changesOf(change.rawKey);
    let lo = 0;
    let hi = list.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (list[mid]! < x) lo = mid + 1;
      else hi = mid;
    }
    const before = lo > 0 ? list[lo - 1]! : -1;
    return before >= 0 && this.main.changes[before]!.terminating ? [...made, ...(this.producers.get(before) ?? [])] : made;
  }
}

class HoldDependence {
  private readonly memo = new Map<number, boolean>();
  private budget = BUDGET;

  constructor(
    private readonly main: RunAnalysis,
    private readonly index: ReleaseIndex,
    private readonly held: ChangeRecord,
  ) {}

  /** Does change `x` need the hold lifted (see the file comment)? */
  needsHoldLifted(x: number): boolean {
    if (x <= this.held.index || x < 0) return false;
    const known = this.memo.get(x);
    if (known !== undefined) return known;
    if (--this.budget < 0) return false;
    this.memo.set(x, false); // a cycle proves nothing
    const made = this.index.producersOf(x);
    let needs: boolean;
    if (made.length > 0) needs = made.every((w) => this.basedOnHeldState(w) || this.writeNeedsHoldLifted(w));
    else {
      const step = this.index.workloadWrite.get(x);
      needs = step !== undefined ? this.workloadGated(step) : this.followsGatedWorkloadWrite(x) || this.answersGatedWrite(x);
    }
    this.memo.set(x, needs);
    return needs;
  }

  /** Could the controller only have been prompted to issue `w` by held events (or by changes that need the hold lifted)? */
  private writeNeedsHoldLifted(w: WriteRecord): boolean {
    let prompted = false;
    const onlyHeld = (d: number): boolean => {
      if (--this.budget < 0) return false;
      const delivery = this.main.deliveries[d]!;
      const ofHeld = delivery.rawKey === this.held.rawKey && delivery.change >= this.held.index;
      if (delivery.source === 'read') return !ofHeld; // a read does not start a reconcile, but shows the state
      if (ofHeld || this.needsHoldLifted(delivery.change)) {
        prompted = true;
        return true;
      }
      return false;
    };
    for (let d = w.causeFrom; d < w.causeTo; d++) if (!onlyHeld(d)) return false;
    // The deliveries of its window explain `w`: the latest states of related objects, shown earlier,
    // are the reconcile's context, not another prompt (counted, they would keep every hold of an
    // object with siblings: component-toggle deletes its held Service on a spec change it cannot
    // get while the workload waits for the held Service's owner).
    if (prompted) return true;
    // Otherwise `w` may be a delayed reaction to one of them; one shown before the hold began had its
    // chance to prompt a reconcile before it.
    for (const d of w.causeExtra) if (this.main.deliveries[d]!.seq >= this.held.seq && !onlyHeld(d)) return false;
    return prompted;
  }

  /**
   * Is `w` a write of the held object that cannot happen during the hold: based on a state only a
   * held event showed (refused with 409), or a re-creation while the deletion is held?
   */
  private basedOnHeldState(w: WriteRecord): boolean {
    if (w.rawKey !== this.held.rawKey) return false;
    if (w.verb === 'create') return this.held.eventType === 'DELETED';
    if (w.basedOn === undefined) return false;
    const basis = this.main.changesOf(this.held.rawKey).find((c) => this.main.changes[c]!.resourceVersion === w.basedOn);
    return basis !== undefined && basis >= this.held.index;
  }

  /** Is workload step `step` still waiting while the hold lasts: a wait before it, ended after N, met by a change that needs the hold lifted? */
  private workloadGated(step: number): boolean {
    const steps: readonly WorkloadStepRecord[] = this.main.workloadSteps;
    for (let j = step - 1; j >= 0; j--) {
      const wait = steps[j]!;
      if (wait.action !== 'wait') continue;
      if (wait.endSeq < this.held.seq) break; // it was over before the hold began, and so were the ones before it
      const met = this.index.metBy.get(j);
      if (met !== undefined && (this.summarisesHeld(met) || this.needsHoldLifted(met))) return true;
    }
    return false;
  }

  /**
   * Did the workload, after N and before change `x` (made by the cluster's own controllers, or by
   * nobody the trace names), write in a step it could not reach while the hold lasts? Such a change
   * answers the workload (decommission's StatefulSet scaled down after the workload shrinks the
   * DataCenter, which it does once the DataCenter reports the held StatefulSet ready).
   */
  private followsGatedWorkloadWrite(x: number): boolean {
    const seq = this.main.changes[x]!.seq;
    const steps = this.main.workloadSteps;
    for (let i = 0; i < steps.length; i++) {
      const step = steps[i]!;
      if (step.startSeq >= seq) break;
      if (step.action === 'write' && step.startSeq > this.held.seq && this.workloadGated(i)) return true;
    }
    return false;
  }

  /**
   * Is change `x` (made by the cluster's own controllers, or by nobody the trace names) their answer
   * to a write of the held object that is refused while it is held: the object's change right before
   * `x`, after N, made by the controller's writes based on a held state? volume-resize's resizer
   * grows a claim's capacity after the controller raised its request, a patch carrying the
   * resourceVersion of the held claim. (A cluster's change after the controller's write that was
   * only prompted by held events may come anyway: a restarting pod turns Running by itself.)
   */
  private answersGatedWrite(x: number): boolean {
    const list = this.main.changesOf(this.main.changes[x]!.rawKey);
    const before = list[list.indexOf(x) - 1];
    if (before === undefined || before <= this.held.index) return false;
    const made = this.index.producersOf(before);
    return made.length > 0 && made.every((w) => this.basedOnHeldState(w));
  }

  /** Is change `x` (after N) the controller's write to the held object or to one of its direct owners? */
  private summarisesHeld(x: number): boolean {
    if (x <= this.held.index || this.index.producersOf(x).length === 0) return false;
    this.ownersOfHeld ??= this.ownersOf(this.held.rawKey);
    return this.ownersOfHeld.has(this.main.changes[x]!.rawKey);
  }

  private ownersOfHeld: Set<ObjectKey> | undefined;

  /**
   * The object and its direct owners (from the owner references of its creations). Not their owners:
   * decommission's DataCenter reports its StatefulSet's readiness, not that of the StatefulSet's pods,
   * and holds of a pod are released while the workload waits for the DataCenter.
   */
  private ownersOf(rawKey: ObjectKey): Set<ObjectKey> {
    const owners = new Set<ObjectKey>([rawKey]);
    for (const c of this.main.changesOf(rawKey)) for (const o of this.main.changes[c]!.owners ?? []) owners.add(o);
    return owners;
  }
}
