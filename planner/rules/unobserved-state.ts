/**
 * Unobserved state: a change N of an object that a later change N' of the same object cancels (one is
 * a deletion and the other not, or N' changes again a field N changed), so that a controller that does
 * not see N before N' never sees the state N made (Sieve's third pattern). Plan: from N on, hold the
 * controller's watch events for the object; once N' has happened, end the stream with 410 Expired so
 * the controller relists and sees the state after N' (within the API's contract: watches may expire).
 *   baseline          every change a watch of the controller showed that a later change cancels (a hold
 *                     hides watch events: an object the controller only reads cannot be hidden)
 *   causality         N may have caused a controller write (a controller that reacts to nothing in N
 *                     cannot behave differently for missing it)
 *   releasable        N' does not wait for the controller to act on what the plan holds: neither a
 *                     controller write that only held events can have prompted, nor a workload write
 *                     that waited for such a reaction (hold-release.ts; such a hold is never released)
 *   effective-writes  ... a successful write that changed the cluster
 *   deterministic     N and N' have triggers that fire in every reference run; not bookkeeping objects
 *   deduplicated      one plan per (object, hidden interval)
 */
import { describeChange } from '../../src/model/plan.js';
import { StageCounter, UNOBSERVED_STAGES } from '../pruning.js';
import type { ChangeRecord } from '../trace-analysis.js';
import { neverReleasedHolds } from './hold-release.js';
import type { PlanCandidate, PlanningRule } from './rule.js';

export const unobservedStateRule: PlanningRule = {
  pattern: 'unobserved-state',
  namePrefix: 'unobserved',
  plan({ main, triggers, prune }) {
    const cancelled = main.changes.filter((c) => c.watched && c.cancelledBy >= 0);
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
    const neverReleased = neverReleasedHolds(main);
    stages.add('baseline', cancelled.length);
    for (const c of cancelled) {
      if (!(c.causal & 1)) continue;
      stages.add('causality');
      if (neverReleased(c)) continue;
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
