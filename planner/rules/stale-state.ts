/**
 * Stale state (time travel): pairs (N, U) of a change N the controller was shown and a write U it
 * made in reaction, where re-issuing U later, from a view frozen right after N, would undo a newer
 * state N' of U's object:
 *   - U deletes the object and N' re-creates it, or updates it while it is not being deleted (as Sieve);
 *   - U updates or patches fields that N' changes again (or N' re-creates the object): Sieve covers
 *     deletes only; a stale spec turned into an update overwrites newer state just as well;
 *   - U creates the object and N' deletes it (re-issuing U resurrects it), or N' changes a field the
 *     create set (a level-triggered controller that finds the object already there re-asserts it).
 * Plan: when N' happens, restart the controller onto a view frozen right after N; release the view
 * (replay history to the present) after `releaseAfterSeconds`, so the staleness is transient, as from
 * a lagging API server.
 *   baseline          every pair (delivery before U, write request U)
 *   causality         pairs where N may have caused U (see trace-analysis.ts)
 *   effective-writes  U succeeded and a later change N' of its object conflicts with it (a no-op U is kept:
 *                     re-issued after N' it is no longer a no-op)
 *   deterministic     N and N' have triggers that fire in every reference run; U, N not bookkeeping
 *   deduplicated      one plan per (state frozen in the view, state when the controller restarts)
 */
import { describeChange, describeWrite, type ChangeTrigger, type Trigger } from '../../src/model/plan.js';
import { StageCounter } from '../pruning.js';
import { isSuccess, type WriteRecord } from '../trace-analysis.js';
import type { PlanCandidate, PlanningRule, RuleContext } from './rule.js';

export const staleStateRule: PlanningRule = {
  pattern: 'stale-state',
  namePrefix: 'stale',
  plan(context) {
    return context.prune ? pruned(context) : unpruned(context);
  },
};

function causesOf(w: WriteRecord): number[] {
  const out = [...w.causeExtra];
  for (let d = w.causeFrom; d < w.causeTo; d++) out.push(d);
  return out;
}

function pruned({ main, triggers, staleReleaseSeconds }: RuleContext) {
  const stages = new StageCounter();
  const candidates: PlanCandidate[] = [];
  const seen = new Set<string>();
  for (const w of main.writes) {
    stages.add('baseline', w.deliveriesBefore);
    const causes = w.causeTo - w.causeFrom + w.causeExtra.length;
    stages.add('causality', causes);
    // A no-op stays: re-issued after a later change, it is no longer a no-op.
    if (!isSuccess(w) || w.conflict < 0) continue;
    stages.add('effective-writes', causes);
    if (w.bookkeeping || !triggers.deterministicChange(w.conflict)) continue;
    const at = triggers.change(w.conflict)!;
    for (const d of causesOf(w)) {
      const n = main.deliveries[d]!.change;
      if (n < 0 || !triggers.deterministicChange(n)) continue;
      stages.add('deterministic');
      const state = `${main.stateAfter(n) ?? `change ${n}`}|${main.stateAfter(w.conflict) ?? `change ${w.conflict}`}`;
      if (seen.has(state)) continue;
      seen.add(state);
      stages.add('deduplicated');
      candidates.push(candidateFor(w, triggers.change(n)!, { change: at }, staleReleaseSeconds));
    }
  }
  return { candidates, stages: stages.result() };
}

/** Every pair (delivered change, successful write after it) a plan can name; restart at the conflict, else at the next change of U's object, else right after U. */
function unpruned({ main, triggers, staleReleaseSeconds }: RuleContext) {
  const stages = new StageCounter(['baseline', 'expressible']);
  const candidates: PlanCandidate[] = [];
  for (const w of main.writes) {
    stages.add('baseline', w.deliveriesBefore);
    if (!isSuccess(w)) continue;
    const laterChange = w.conflict >= 0 ? w.conflict : w.firstLater;
    const atChange = laterChange >= 0 ? triggers.change(laterChange) : undefined;
    const at: Trigger | undefined = atChange ? { change: atChange } : w.trigger ? { write: w.trigger } : undefined;
    if (!at) continue;
    for (let d = 0; d < w.deliveriesBefore; d++) {
      const n = main.deliveries[d]!.change;
      const view = n >= 0 ? triggers.change(n) : undefined;
      if (!view) continue;
      stages.add('expressible');
      candidates.push(candidateFor(w, view, at, staleReleaseSeconds));
    }
  }
  return { candidates, stages: stages.result() };
}

function describeU(w: WriteRecord): string {
  if (w.trigger) return describeWrite(w.trigger);
  return `${w.verb}s ${w.key ?? 'objects'}${w.subresource ? ` ${w.subresource}` : ''}`;
}

function candidateFor(w: WriteRecord, viewAfter: ChangeTrigger, at: Trigger, releaseAfterSeconds: number): PlanCandidate {
  const when = 'change' in at ? `when ${describeChange(at.change)}` : `right after it ${describeWrite((at as { write: NonNullable<WriteRecord['trigger']> }).write)}`;
  return {
    description: `${when}, restart the controller onto a view frozen right after ${describeChange(viewAfter)}, released after ${releaseAfterSeconds} s (from that view it once ${describeU(w)})`,
    faults: [{ type: 'stale-restart', at, viewAfter, releaseAfterSeconds }],
  };
}
