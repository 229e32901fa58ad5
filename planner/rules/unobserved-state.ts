/**
 * Unobserved state: a change N of an object that a later change N' of the same object cancels (one is
 * a deletion and the other not, or N' changes again a field N changed), so that a controller that does
 * not see N before N' never sees the state N made (Sieve's third pattern). Plan: from N on, hold the
 * controller's watch events for the object; once N' has happened, end the stream with 410 Expired so
 * the controller relists and sees the state after N' (within the API's contract: watches may expire).
 *   baseline          every change shown to the controller that a later change cancels
 *   causality         N may have caused a controller write (a controller that reacts to nothing in N
 *                     cannot behave differently for missing it)
 *   releasable        N' is not the controller's own reaction to what the plan holds: N' was not made
 *                     by a controller write to the object that can only have reacted to held watch
 *                     events (holding them, the controller never makes N': the hold is never released)
 *   effective-writes  ... a successful write that changed the cluster
 *   deterministic     N and N' have triggers that fire in every reference run; not bookkeeping objects
 *   deduplicated      one plan per (object, hidden interval)
 */
import { describeChange } from '../../src/model/plan.js';
import { StageCounter, UNOBSERVED_STAGES } from '../pruning.js';
import { isSuccess, type ChangeRecord, type RunAnalysis, type WriteRecord } from '../trace-analysis.js';
import type { PlanCandidate, PlanningRule } from './rule.js';

export const unobservedStateRule: PlanningRule = {
  pattern: 'unobserved-state',
  namePrefix: 'unobserved',
  plan({ main, triggers, prune }) {
    const cancelled = main.changes.filter((c) => c.delivered && c.cancelledBy >= 0);
    const candidate = (c: ChangeRecord): PlanCandidate | undefined => {
      const from = triggers.change(c.index);
      const until = triggers.change(c.cancelledBy);
      if (!from || !until) return undefined;
      return {
        description: `hide every change of ${c.key} from the controller from when ${describeChange(from)} until ${describeChange(until)}, then make it relist`,
        faults: [{ type: 'hold-until', key: c.key, from, until }],
      };
    };
    if (!prune) {
      const stages = new StageCounter(['baseline', 'expressible']);
      stages.add('baseline', cancelled.length);
      const candidates = cancelled.map(candidate).filter((x): x is PlanCandidate => x !== undefined);
      stages.add('expressible', candidates.length);
      return { candidates, stages: stages.result() };
    }
    const stages = new StageCounter(UNOBSERVED_STAGES);
    const candidates: PlanCandidate[] = [];
    const seen = new Set<string>();
    const selfReleased = selfReleasedHolds(main);
    stages.add('baseline', cancelled.length);
    for (const c of cancelled) {
      if (!(c.causal & 1)) continue;
      stages.add('causality');
      if (selfReleased(c)) continue;
      stages.add('releasable');
      if (!(c.causal & 2)) continue;
      stages.add('effective-writes');
      if (!triggers.deterministicChange(c.index) || !triggers.deterministicChange(c.cancelledBy)) continue;
      stages.add('deterministic');
      const plan = candidate(c)!;
      const identity = JSON.stringify(plan.faults);
      if (seen.has(identity)) continue;
      seen.add(identity);
      stages.add('deduplicated');
      candidates.push(plan);
    }
    return { candidates, stages: stages.result() };
  },
};

/**
 * Is the hold of `c` released only by the controller's own reaction to what it holds? True when the
 * cancelling change N' was made by a successful controller write W to the held object (N' is W's
 * change, or the deletion right after it: the API server deletes a terminating object once W removed
 * its last finalizer), and W can only have reacted to held events: every watch event among W's causes
 * is one the plan holds (the object's, from N on), and none of its causes is a read of the object
 * from N on (reads are not held). Holding those events, the controller is never told to issue W, N'
 * never happens and the proxy gives up after its maximum hold (the plan is reported not injected).
 * A W with no watch event among its causes (a timer) may come anyway: the hold counts as releasable.
 */
export function selfReleasedHolds(main: RunAnalysis): (c: ChangeRecord) => boolean {
  let producers: Map<number, WriteRecord[]> | undefined;
  let previousOfKey: Int32Array | undefined;
  const index = () => {
    producers = new Map();
    for (const w of main.writes) {
      if (w.effectChange < 0 || w.effect !== 'effective' || !isSuccess(w)) continue;
      const list = producers.get(w.effectChange);
      if (list) list.push(w);
      else producers.set(w.effectChange, [w]);
    }
    previousOfKey = new Int32Array(main.changes.length).fill(-1);
    const last = new Map<string, number>();
    for (const ch of main.changes) {
      previousOfKey[ch.index] = last.get(ch.rawKey) ?? -1;
      last.set(ch.rawKey, ch.index);
    }
  };
  return (c) => {
    if (c.cancelledBy < 0) return false;
    if (!producers) index();
    const until = main.changes[c.cancelledBy]!;
    const made = [...(producers!.get(until.index) ?? [])];
    const before = previousOfKey![until.index]!;
    if (until.eventType === 'DELETED' && before >= 0 && main.changes[before]!.terminating) made.push(...(producers!.get(before) ?? []));
    return made.some((w) => w.rawKey === c.rawKey && reactsOnlyToHeldEvents(main, w, c));
  };
}

function reactsOnlyToHeldEvents(main: RunAnalysis, w: WriteRecord, held: ChangeRecord): boolean {
  let watched = false;
  /** False when this cause could make the controller issue `w` without the held events. */
  const heldOrData = (d: number): boolean => {
    const delivery = main.deliveries[d]!;
    const ofHeld = delivery.rawKey === held.rawKey && delivery.change >= held.index;
    if (delivery.source === 'read') return !ofHeld; // a read does not start a reconcile, but shows the state
    if (!ofHeld) return false;
    watched = true;
    return true;
  };
  for (let d = w.causeFrom; d < w.causeTo; d++) if (!heldOrData(d)) return false;
  for (const d of w.causeExtra) if (!heldOrData(d)) return false;
  return watched;
}
