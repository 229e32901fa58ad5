/**
 * Intermediate state: restart the controller right after one of its writes, so that the new process
 * starts from a state the old one was only half-way through building (Sieve's first pattern).
 *
 * A write leaves an intermediate state only if the controller went on writing: a crash right after
 * the last write of a reconcile shows the restarted controller the state it had settled on anyway. A
 * reconcile is told apart from the proxy (trace-analysis.ts): bursts of activity (episodes under
 * serialized delivery) joined while the controller was shown nothing but echoes of its own writes,
 * so a controller that waits on its cache between two dependent writes (rabbitmq-operator #782)
 * still has the first one planned. So:
 *   baseline          every controller write request
 *   causality         writes followed by another (non-bookkeeping) write in the same reconcile
 *   effective-writes  successful writes that changed the cluster, followed by another such write in the reconcile
 *   deterministic     named, not bookkeeping (Lease, Event, leader-election records), firing in every reference run
 *   deduplicated      one plan per cluster state the crash exposes (the last write leading to it is kept)
 */
import { describeWrite, type WriteTrigger } from '../../src/model/plan.js';
import { StageCounter, type StageCount } from '../pruning.js';
import { isSuccess, type WriteRecord } from '../trace-analysis.js';
import type { PlanCandidate, PlanningRule, RuleContext } from './rule.js';

export const intermediateStateRule: PlanningRule = {
  pattern: 'intermediate-state',
  namePrefix: 'intermediate',
  plan(context) {
    const { writes, stages } = intermediateWrites(context);
    // Selection: the first crash after a write of one object (verb, object, subresource); later ones
    // repeat the step (the object created again in a later life, another status report).
    return {
      candidates: writes.map((w) => ({ ...candidateFor(w.trigger!), group: `${w.trigger!.verb} ${w.trigger!.key} ${w.trigger!.subresource ?? ''}` })),
      stages,
    };
  },
};

/**
 * The writes this pattern plans a crash after, in trace order, and the count after each stage (with
 * pruning off: every successful write a trigger can name). The error-path rule fails the same writes.
 */
export function intermediateWrites({ main, triggers, prune }: RuleContext): { writes: WriteRecord[]; stages: StageCount[] } {
  const writes = main.writes;
  if (!prune) {
    const stages = new StageCounter(['baseline', 'expressible']);
    stages.add('baseline', writes.length);
    const expressible = writes.filter((w) => w.trigger && isSuccess(w));
    stages.add('expressible', expressible.length);
    return { writes: expressible, stages: stages.result() };
  }
  const effective = (w: WriteRecord) => isSuccess(w) && w.effect === 'effective';
  // The last (effective) non-bookkeeping write of each reconcile.
  const lastWrite = new Map<number, number>();
  const lastEffective = new Map<number, number>();
  for (const w of writes) {
    if (w.bookkeeping) continue;
    lastWrite.set(w.reconcile, w.index);
    if (effective(w)) lastEffective.set(w.reconcile, w.index);
  }
  const stages = new StageCounter();
  stages.add('baseline', writes.length);
  const kept: WriteRecord[] = [];
  for (const w of writes) {
    if ((lastWrite.get(w.reconcile) ?? -1) <= w.index) continue;
    stages.add('causality');
    if (!effective(w) || (lastEffective.get(w.reconcile) ?? -1) <= w.index) continue;
    stages.add('effective-writes');
    if (!w.trigger || w.bookkeeping || !triggers.deterministicWrite(w.trigger)) continue;
    stages.add('deterministic');
    kept.push(w);
  }
  // Same exposed state, same test: keep the last write that leads to it (less of the workload is left
  // to paper over what the restarted controller does).
  const seen = new Set<string>();
  const unique: WriteRecord[] = [];
  for (let i = kept.length - 1; i >= 0; i--) {
    const w = kept[i]!;
    const state = main.stateAfter(w.effectChange);
    if (state !== undefined) {
      if (seen.has(state)) continue;
      seen.add(state);
    }
    unique.push(w);
  }
  unique.reverse();
  stages.add('deduplicated', unique.length);
  return { writes: unique, stages: stages.result() };
}

function candidateFor(trigger: WriteTrigger): PlanCandidate {
  return {
    description: `restart the controller right after it ${describeWrite(trigger)}`,
    faults: [{ type: 'crash-after-write', after: trigger }],
  };
}
