/**
 * Unobserved state (Sieve's third pattern): states of an object that a controller may never see,
 * because its watch skipped them (a relist after 410 Expired shows only the present). Plan: from a
 * change on, hold the controller's watch events for the object; once a later change has happened,
 * end the stream with 410 Expired so the controller relists and sees the state after it (within the
 * API's contract: watches may expire). Two sources of windows:
 *   cancelled  a change N that a later change N' of the same object cancels (one is a deletion and the
 *              other not, or N' changes again a field N changed): hide N until N';
 *   reacted    a state M the controller reacted to, hidden with what came before it: from the object's
 *              creation (the controller first sees it in state M), or from the state after the one it
 *              last reacted to (it never sees the transitions between); see unobserved-windows.ts.
 * Stages (each window counts once per stage it passes):
 *   baseline          cancelled: every change a watch of the controller showed that a later change
 *                     cancels; reacted: both windows of every update a watch showed (a hold hides
 *                     watch events: an object the controller only reads cannot be hidden)
 *   causality         a delivery of a hidden state, or of the state the relist shows, may have caused
 *                     a controller write. The state shown after the window counts: an edge-triggered
 *                     controller keeps what it saw (an informer's old object, a flag) without writing,
 *                     and reacts to the later state differently when it missed the earlier one
 *   releasable        the end of the window does not wait for the controller to act on what the plan
 *                     holds (hold-release.ts; such a hold is never released, the plan tests nothing)
 *   effective-writes  ... a successful write that changed the cluster (for reacted windows: a reaction
 *                     to the end state, the one that could differ)
 *   deterministic     the window's two triggers fire in every reference run; not bookkeeping objects
 *   deduplicated      one plan per (object, hidden interval), over both sources
 */
import { parseKey } from '../../src/model/object-key.js';
import { describeChange, type HoldUntilFault } from '../../src/model/plan.js';
import { StageCounter, UNOBSERVED_STAGES } from '../pruning.js';
import type { ChangeRecord } from '../trace-analysis.js';
import { neverReleasedHolds } from './hold-release.js';
import type { PlanCandidate, PlanningRule } from './rule.js';
import { reactedStateWindows } from './unobserved-windows.js';

/** One hold: from change `from` until change `until`; `reacted` when the window ends in a state the controller reacted to. */
interface Window {
  from: ChangeRecord;
  until: ChangeRecord;
  reacted: boolean;
}

export const unobservedStateRule: PlanningRule = {
  pattern: 'unobserved-state',
  namePrefix: 'unobserved',
  plan({ main, triggers, prune }) {
    const windows: Window[] = main.changes
      .filter((c) => c.watched && c.cancelledBy >= 0)
      .map((c) => ({ from: c, until: main.changes[c.cancelledBy]!, reacted: false }));
    for (const w of reactedStateWindows(main)) windows.push({ from: w.from, until: w.until, reacted: true });
    // Plans are named in trace order of the first hidden change.
    windows.sort((a, b) => a.from.index - b.from.index || a.until.index - b.until.index);
    const candidate = (w: Window): PlanCandidate | undefined => {
      const from = triggers.change(w.from.index);
      const until = triggers.change(w.until.index);
      if (!from || !until) return undefined;
      const fault: HoldUntilFault = { type: 'hold-until', key: w.from.key, from, until };
      const shown =
        w.from.eventType === 'ADDED' && w.reacted ? ': it first sees the object in that later state, as a controller restarting or relisting then would' : '';
      return {
        description: `hide every change of ${w.from.key} from the controller from when ${describeChange(from)} until ${describeChange(until)}, then make it relist${shown}`,
        faults: [fault],
        // Selection: one hold per kind of object, first one that hides a change of its spec (a
        // desired state the controller never sees), else the first.
        group: parseKey(w.from.key)?.kind ?? w.from.key,
        rank: [w.from.diffKeys.some((k) => k === 'spec' || k.startsWith('spec\u0000')) ? 0 : 1],
      };
    };
    const seen = new Set<string>();
    const unique = (plan: PlanCandidate): boolean => {
      const identity = JSON.stringify(plan.faults);
      if (seen.has(identity)) return false;
      seen.add(identity);
      return true;
    };
    if (!prune) {
      const stages = new StageCounter(['baseline', 'expressible']);
      stages.add('baseline', windows.length);
      const candidates = windows.map(candidate).filter((x): x is PlanCandidate => x !== undefined && unique(x));
      stages.add('expressible', candidates.length);
      return { candidates, stages: stages.result() };
    }
    const stages = new StageCounter(UNOBSERVED_STAGES);
    const candidates: PlanCandidate[] = [];
    const neverReleased = neverReleasedHolds(main);
    stages.add('baseline', windows.length);
    for (const w of windows) {
      // A reacted window exists for the reaction to its end; a cancelled one for the reaction to what
      // it hides, or to the state the relist shows.
      const reaction = w.reacted ? w.until.causal : w.from.causal | w.until.causal;
      if (!(reaction & 1)) continue;
      stages.add('causality');
      if (neverReleased(w.from, w.until.index)) continue;
      stages.add('releasable');
      if (!(reaction & 2)) continue;
      stages.add('effective-writes');
      if (!triggers.deterministicChange(w.from.index) || !triggers.deterministicChange(w.until.index)) continue;
      stages.add('deterministic');
      const plan = candidate(w)!;
      if (!unique(plan)) continue;
      stages.add('deduplicated');
      candidates.push(plan);
    }
    return { candidates, stages: stages.result() };
  },
};
