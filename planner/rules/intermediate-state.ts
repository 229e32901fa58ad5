/**
 * Intermediate state: restart the controller right after one of its writes, so that the new
 * process starts from a state the old one was only half-way through building (Sieve's first
 * pattern). One candidate per successful write that changed the cluster.
 */
import { isBookkeepingKey, isBookkeepingResource, isLeaderElectionRecord } from '../../src/model/bookkeeping.js';
import { describeWrite, type WriteTrigger } from '../../src/model/plan.js';
import { Pruning } from '../pruning.js';
import type { ControllerWrite } from '../trace-analysis.js';
import type { PlanCandidate, PlanningRule } from './rule.js';

export const intermediateStateRule: PlanningRule = {
  pattern: 'intermediate-state',
  namePrefix: 'intermediate',
  plan(trace) {
    const pruning = new Pruning('baseline', trace.writes)
      .keep('controller-bookkeeping', (w) => !isBookkeeping(w))
      // A write the proxy cannot name at test time (generateName) cannot be a trigger.
      .keep('identifiable-writes', (w) => w.trigger !== undefined)
      .keep('effective-writes', (w) => w.effective);
    const candidates = pruning.remaining.map((w) => candidateFor(w.trigger!));
    return { candidates, stages: pruning.stages };
  },
};

function isBookkeeping(w: ControllerWrite): boolean {
  if (isBookkeepingResource(w.request.resource)) return true;
  if (w.request.key !== undefined && isBookkeepingKey(w.request.key)) return true;
  return isLeaderElectionRecord(w.request.body) || isLeaderElectionRecord(w.response.object);
}

function candidateFor(trigger: WriteTrigger): PlanCandidate {
  return {
    description: `restart the controller right after it ${describeWrite(trigger)}`,
    faults: [{ type: 'crash-after-write', after: trigger }],
  };
}
