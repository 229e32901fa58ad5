/**
 * Stale state (time travel): pairs (N, U) of a change N the controller was shown and a write U it
 * made in reaction, where re-issuing U later, from a view frozen right after N, would undo a newer
 * state N' of U's object:
 *   - U deletes the object and N' re-creates it, or updates it while it is not being deleted (as Sieve);
 *   - U updates or patches fields that N' changes again (or N' re-creates the object): Sieve covers
 *     deletes only; a stale spec turned into an update overwrites newer state just as well;
 *   - U creates the object and N' deletes it (re-issuing U resurrects it), or N' changes a field the
 *     create set (a level-triggered controller that finds the object already there re-asserts it);
 *   - U writes the status subresource (a report): N' changes a status field it sets and someone else
 *     made N' (the controller's own later reports are passed over, see conflictOf), or re-creates it.
 * Plan: when N' happens, restart the controller onto a view frozen right after N; release the view
 * (replay history to the present) after `releaseAfterSeconds`, so the staleness is transient, as from
 * a lagging API server.
 *
 * Plus one pair per effective write U: the controller undoing its own reaction. The view is frozen
 * right after B, the last delivery before the event U reacted to (the latest outside change among
 * its window's watch events, else the window's start), so the restarted controller sees the world
 * before what made it write U (U's object included: it must exist in the view), while U (and what
 * others did in response to it) is already in the cluster. The restart is
 * at U's conflict if it has one, else at the first later change of U's object (the world reacting to
 * U: a StatefulSet reporting the scale-down U asked for). The rule above never makes that plan: B is
 * no cause of U (serialized delivery), or U has no conflict and so no plan (bursts, whose windows
 * reach back past the event); the unpruned rule does, with the same restart point.
 *   baseline          every pair (delivery before U, write request U)
 *   causality         pairs where N may have caused U (see trace-analysis.ts), and (B, U)
 *   effective-writes  U succeeded and a later change N' of its object conflicts with it (a no-op U is kept:
 *                     re-issued after N' it is no longer a no-op); (B, U): U changed the cluster and a
 *                     later change of its object is the restart point, and the view shows U's object
 *   deterministic     N (B) and N' have triggers that fire in every reference run; U, N (B) not bookkeeping
 *   deduplicated      one plan per (state frozen in the view, state when the controller restarts): the view's
 *                     over the kinds the controller lists or watches (a stale view serves nothing else), the
 *                     restart's over all kinds
 *
 * A write whose event is an outside change X gets, beside the view right after B, a view right before
 * X itself (`viewBefore`: X's resourceVersion less one, whatever came just before it in that run)
 * when some reference run has a change between B and X: there "right after B" is another state, or
 * not before X at all. Counted at `deduplicated`, as a scoped twin; the selection prefers it.
 *
 * Plus, per owner the reference run deleted and created again, views from its previous life: the
 * controller restarts when the owner is created again, and right after each of its creates of the
 * owner's children in the new life but the last, onto a view frozen at the owner's latest state in
 * its previous life from before any of those children existed, or at its earliest state in which
 * all of them existed. From the first view the controller creates the missing children with the old
 * owner's uid; from the second it ensures them while the release replays their deletion, and may
 * create them again from the old owner halfway through a reconcile. The garbage collector then
 * deletes what it created. No pair above makes these plans: nothing in the new life undoes the
 * children's creates. See previousLifePlans.
 *
 * Each plan has a twin whose view is frozen for the kinds the workload writes only (its custom
 * resources, typically), every other kind live, as when kube-apiserver's watch cache of one resource
 * lags (Sieve pauses the view of one object). A whole frozen view can hide the bug: the restarted
 * controller's first write from it (an update of a child with its stale resourceVersion) fails with
 * 409 every reconcile and never reaches the stale decision; with its children current it does. The
 * twin is kept when those kinds' state differs between the view and the restart (else the view is
 * not stale at all), one per (what it shows: those kinds at the view and the rest at the restart,
 * state at the restart), shared with the whole-view plans: when nothing else changed in between, it
 * shows what its whole-view plan shows, and only the twin is kept. It counts at `deduplicated`.
 */
import { parseKey, type ObjectKey } from '../../src/model/object-key.js';
import { describeChange, describeStaleView, describeWrite, type ChangeTrigger, type Trigger } from '../../src/model/plan.js';
import { pathKey, pathsOverlap } from '../paths.js';
import { StageCounter } from '../pruning.js';
import { isSuccess, upperBound, type ChangeRecord, type RunAnalysis, type WriteRecord } from '../trace-analysis.js';
import type { Triggers } from '../triggers.js';
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

/** Per change: 1 when it is the effect of one of the controller's own writes. */
function ownChanges(main: RunAnalysis): Uint8Array {
  const own = new Uint8Array(main.changes.length);
  for (const w of main.writes) if (w.effectChange >= 0) own[w.effectChange] = 1;
  return own;
}

/**
 * The change re-issuing `w` would undo, for the stale pairs (-1: none). A status report (a write to
 * the status subresource) conflicts only with a change of the status someone else made, or with a
 * re-creation: re-issued over the controller's own later report, it reverts only what the controller
 * itself wrote, to a report it had made and been shown, from a view that already shows it an older
 * status than that report (the view is from before `w`). Every other write: its first conflict.
 */
function conflictOf(main: RunAnalysis, own: Uint8Array, w: WriteRecord): number {
  if (w.subresource !== 'status' || w.conflict < 0 || !own[w.conflict] || !w.rawKey) return w.conflict;
  const written = w.written ?? 'all';
  for (const ci of main.changesOf(w.rawKey)) {
    const c = main.changes[ci]!;
    if (ci <= w.conflict || !c.diff) continue;
    if (c.eventType === 'ADDED') return ci;
    if (c.eventType === 'MODIFIED' && !own[ci] && (written === 'all' || c.diffKeys.some((d) => written.some((p) => pathsOverlap(p, d))))) return ci;
  }
  return -1;
}

/**
 * For each delivery index i, the latest watch delivery at or before i of a change someone other than
 * the controller made (not the effect of one of its writes, no bookkeeping); -1: none. Those are the
 * events a write can be a reaction to that the controller did not bring about itself.
 */
function latestOutsideEvents(main: RunAnalysis, own: Uint8Array): Int32Array {
  const latest = new Int32Array(main.deliveries.length);
  let last = -1;
  main.deliveries.forEach((d, i) => {
    if (d.source === 'watch' && d.change >= 0 && !own[d.change] && !main.changes[d.change]!.bookkeeping) last = i;
    latest[i] = last;
  });
  return latest;
}

/**
 * The event `w` reacted to (a delivery index): the latest watch event of an outside change among w's
 * window causes (with serialized delivery, the episode's event when someone else made it; with
 * bursts, the window holds many and the latest is the one that started w's reconcile unless others
 * arrived during it), else the start of the window.
 */
function reactionEvent(outside: Int32Array, w: WriteRecord): { delivery: number; outside: boolean } {
  const latest = w.causeTo > w.causeFrom ? outside[w.causeTo - 1]! : -1;
  const isOutside = latest >= w.causeFrom && latest < w.deliveriesBefore;
  return { delivery: Math.min(isOutside ? latest : w.causeFrom, w.deliveriesBefore), outside: isOutside };
}

/**
 * The view from before the event `w` reacted to (reactionEvent): the last delivery, before that
 * event, whose change a plan can name and that is no bookkeeping (-1: none).
 */
function viewBeforeReaction(main: RunAnalysis, triggers: Triggers, memo: Map<number, number>, event: number): number {
  // Writes of one reconcile share the event: walk back once per event.
  let found = memo.get(event);
  if (found !== undefined) return found;
  found = -1;
  for (let d = event - 1; d >= 0; d--) {
    const n = main.deliveries[d]!.change;
    if (n >= 0 && !main.changes[n]!.bookkeeping && triggers.deterministicChange(n)) {
      found = d;
      break;
    }
  }
  memo.set(event, found);
  return found;
}

/**
 * A stale view: frozen right after the change `change` (an index into the main run's changes), or,
 * `before`, right before it (the state after change - 1 in the main run; in another run, whatever
 * came just before that change there).
 */
interface ViewAt {
  change: number;
  before: boolean;
}

/** The main run's change whose state the view shows (-1: the state before the first). */
const stateIndex = (v: ViewAt) => (v.before ? v.change - 1 : v.change);

/**
 * Do changes `b` and `x` (of the main run, b before x) follow each other in every reference run,
 * with only bookkeeping between? Then a view right after b is a view right before x in every run.
 */
function adjacentEverywhere(main: RunAnalysis, triggers: Triggers, b: number, x: number): boolean {
  return [main, ...triggers.others].every((run) => {
    const from = triggers.changeIn(run, b);
    const to = triggers.changeIn(run, x);
    if (from < 0 || to <= from) return false;
    for (let i = from + 1; i < to; i++) if (!run.changes[i]!.bookkeeping) return false;
    return true;
  });
}

/** The kinds the workload's steps write, sorted (none for traces without workload steps). */
export function workloadKinds(main: RunAnalysis): string[] {
  const kinds = new Set<string>();
  for (const step of main.workloadSteps) {
    if (step.action !== 'write') continue;
    for (const key of step.keys) {
      const kind = parseKey(key)?.kind;
      if (kind) kinds.add(kind);
    }
  }
  return [...kinds].sort();
}

function pruned({ main, triggers, staleReleaseSeconds }: RuleContext) {
  const stages = new StageCounter();
  const candidates: PlanCandidate[] = [];
  const seen = new Set<string>();
  const own = ownChanges(main);
  const outside = latestOutsideEvents(main, own);
  const memo = new Map<number, number>();
  const kinds = workloadKinds(main);
  const scoped = new Set(kinds);
  const rankOf = selectionRanker(main, triggers, scoped);
  const inScope = (c: ChangeRecord) => scoped.has(parseKey(c.rawKey)?.kind ?? '');
  // The cluster's state, split into the workload's kinds and the others: a scoped twin's view combines
  // the first at the view with the second at the restart.
  const reader = (include: (c: ChangeRecord) => boolean) => {
    const read = main.stateReader(include);
    return (change: number) => read(change) ?? `change ${change}`;
  };
  const scopedState = reader(inScope);
  const otherState = reader((c) => !inScope(c));
  // What a view shows: the kinds the controller lists or watches only (a stale view serves nothing
  // else, GETs are live), so two views that differ in other kinds only are one.
  const listed = main.listedKinds;
  const shown = (c: ChangeRecord) => listed === undefined || listed.has(parseKey(c.rawKey)?.kind ?? '');
  const scopedView = reader((c) => inScope(c) && shown(c));
  const otherView = reader((c) => !inScope(c) && shown(c));
  // One plan per (state frozen in the view, state at the restart), whichever kind of pair comes first. The scoped twin's view is the workload kinds' state at the view and everything else
  // at the restart: kept when the workload kinds differ there (else the view is not stale at all) and
  // no plan already shows the same; when it shows the same as its whole-view plan (nothing else
  // changed in between), the twin is the one kept (a whole view also serves every other kind's list
  // at the view's resourceVersion, which writes based on it may find outdated; the twin's are live).
  // A view right before a change is kept beside a view right after another that shows the same state
  // in this run: in another run, other changes may come between the two.
  const keep = (w: WriteRecord, viewAt: ViewAt, restart: number, candidate: () => PlanCandidate) => {
    const view = stateIndex(viewAt);
    const atRestart = `${scopedState(restart)}|${otherState(restart)}`;
    const moment = viewAt.before ? 'before|' : '';
    const state = `${moment}${scopedView(view)}|${otherView(view)}||${atRestart}`;
    const twinState = `${moment}${scopedView(view)}|${otherView(restart)}||${atRestart}`;
    const twin = kinds.length > 0 && scopedView(view) !== scopedView(restart) && !seen.has(twinState);
    const whole = !seen.has(state) && !(twin && twinState === state);
    if (!whole && !twin) return;
    const made = candidate();
    const rank = rankOf(viewAt, restart);
    if (whole) {
      seen.add(state);
      stages.add('deduplicated');
      candidates.push({ ...made, group: selectionGroup(w, 'whole'), rank });
    }
    if (twin) {
      seen.add(twinState);
      stages.add('deduplicated');
      candidates.push({ ...scopedTwin(made, kinds), group: selectionGroup(w, 'scoped'), rank });
    }
  };
  const plan = (w: WriteRecord, view: ViewAt, restart: number, undo: boolean) => {
    stages.add('deterministic');
    const at = { change: triggers.change(restart)! };
    keep(w, view, restart, () =>
      candidateFor(w, { trigger: triggers.change(view.change)!, before: view.before }, at, staleReleaseSeconds, undo ? 'undo' : 'conflict'),
    );
  };
  for (const w of main.writes) {
    stages.add('baseline', w.deliveriesBefore);
    const causes = causesOf(w);
    const event = reactionEvent(outside, w);
    const before = viewBeforeReaction(main, triggers, memo, event.delivery);
    // (before, w) is a plan of its own unless the causal pair (before, w) makes the same one: when w
    // has a conflict, both restart there.
    const conflict = conflictOf(main, own, w);
    const undo = before >= 0 && (conflict < 0 || !causes.includes(before));
    // Counted once per pair: a (B, w) that is also a causal pair is among `causes` already.
    stages.add('causality', causes.length + (undo && !causes.includes(before) ? 1 : 0));
    if (!isSuccess(w)) continue;
    // A no-op stays: re-issued after a later change, it is no longer a no-op.
    if (conflict >= 0) {
      stages.add('effective-writes', causes.length);
      if (!w.bookkeeping && triggers.deterministicChange(conflict)) {
        for (const d of causes) {
          const n = main.deliveries[d]!.change;
          if (n >= 0 && triggers.deterministicChange(n)) plan(w, { change: n, before: false }, conflict, false);
        }
      }
    }
    // Undoing its own reaction: only a write that changed something has a reaction to undo, and only
    // on an object the view shows (from a view without it, the controller would create it: the
    // create's own pairs cover that).
    const restart = conflict >= 0 ? conflict : w.firstLater;
    if (w.effect !== 'effective' || restart < 0 || !w.rawKey) continue;
    const b = before >= 0 ? main.deliveries[before]!.change : -1;
    if (undo && main.existsAfter(w.rawKey, b)) {
      stages.add('effective-writes');
      if (!w.bookkeeping && triggers.deterministicChange(restart)) plan(w, { change: b, before: false }, restart, true);
    }
    // The same from right before the outside event itself, when a reference run has more between B
    // and it: "after B" names the moment by what came before the event in this run, and in that run
    // the view misses what came between (a status report of the controller's, which the restarted
    // one would rewrite from the view, with its stale resourceVersion, every reconcile, before it
    // reaches the decision the view is for). Whether (B, w) is a causal pair or an undo pair, this is
    // a second view of it, counted at `deduplicated` (as a scoped twin is); without a B (the event is
    // the first the controller was shown) there is no view to name otherwise.
    const x = event.outside ? main.deliveries[event.delivery]!.change : -1;
    if (x < 0 || w.bookkeeping || main.changes[x]!.bookkeeping || !main.existsAfter(w.rawKey, x - 1)) continue;
    if (b < 0 || !triggers.deterministicChange(restart) || !triggers.deterministicChange(x) || adjacentEverywhere(main, triggers, b, x)) continue;
    const at = { change: triggers.change(restart)! };
    keep(w, { change: x, before: true }, restart, () => candidateFor(w, { trigger: triggers.change(x)!, before: true }, at, staleReleaseSeconds, 'undo'));
  }
  previousLifePlans(main, triggers, stages, (w, view, restart, at) =>
    keep(w, { change: view, before: false }, restart, () =>
      candidateFor(w, { trigger: triggers.change(view)!, before: false }, at, staleReleaseSeconds, 'previous-life'),
    ),
  );
  return { candidates, stages: stages.result() };
}

/**
 * Selection (docs/planner.md): a stale-state bug is a write the controller makes again from an old
 * view, so the plans that may make the same kind of write again (verb, kind of object, subresource)
 * from the same scope of view (whole, or the workload's kinds only) are one group.
 */
function selectionGroup(w: WriteRecord, scope: 'whole' | 'scoped'): string {
  const kind = parseKey(w.key ?? w.rawKey ?? '')?.kind ?? '';
  return `${w.verb} ${kind} ${w.subresource ?? ''} ${scope}`;
}

const DELETION_TIMESTAMP = pathKey('metadata.deletionTimestamp');

/**
 * The kept plan of a group (lowest rank first):
 * - a view frozen right after a deletion (an object deleted or given its deletionTimestamp: Sieve's
 *   stale views), the earliest such (the one that set off what followed);
 * - else a view older than a change of the workload kinds' spec that comes before the restart, in
 *   every reference run (the view shows an old desired state, and comes before the restart however
 *   the run's timing goes); the latest such, so a view right before such a change (Sieve's pause)
 *   when there is one: the old desired state with everything else as recent as it was then;
 * - else the latest view;
 * then a restart point before the workload's last step ended (a later one may come after a test run
 * has settled), the latest such (when most of the state the old view contradicts exists).
 */
function selectionRanker(main: RunAnalysis, triggers: Triggers, workloadKinds: ReadonlySet<string>): (view: ViewAt, restart: number) => number[] {
  const runs = [main, ...triggers.others];
  const specChanges = runs.map((run) =>
    run.changes
      .filter(
        (c) =>
          workloadKinds.has(parseKey(c.rawKey)?.kind ?? '') &&
          (c.eventType !== 'MODIFIED' || c.diffKeys.some((k) => k === 'spec' || k.startsWith('spec\u0000'))),
      )
      .map((c) => c.index),
  );
  const workloadEnd = main.workloadSteps.at(-1)?.endSeq ?? Infinity;
  // A spec change at or after the view's moment (after the change, or the change itself for a view
  // right before it) and at or before the restart, in every run.
  const oldSpecEverywhere = (view: ViewAt, restart: number) =>
    runs.every((run, r) => {
      const v = triggers.changeIn(run, view.change);
      const at = triggers.changeIn(run, restart);
      if (v < 0 || at < 0) return false;
      const i = upperBound(specChanges[r]!, view.before ? v - 1 : v);
      return i < specChanges[r]!.length && specChanges[r]![i]! <= at;
    });
  return (view, restart) => {
    const c = main.changes[view.change]!;
    const late = main.changes[restart]!.seq > workloadEnd ? 1 : 0;
    if (!view.before && (c.eventType === 'DELETED' || c.diffKeys.includes(DELETION_TIMESTAMP))) return [0, view.change, late, -restart];
    // A view right before change x is later than every view right after an earlier change.
    return [1, oldSpecEverywhere(view, restart) ? 0 : 1, -(view.before ? view.change - 0.5 : view.change), late, -restart];
  };
}

/**
 * The previous-life plans (see the header). `emit(w, view, restart, at)`: w is the owner's first
 * child create of its new life, `view` the owner's change frozen in the view, `restart` the change the
 * restart follows (the owner's re-creation, or a child create's effect) and `at` its trigger. Each
 * pair counts at causality and effective-writes (kept by the ownership relation, all child creates
 * being effective) and at deterministic when both triggers fire in every reference run.
 */
function previousLifePlans(
  main: RunAnalysis,
  triggers: Triggers,
  stages: StageCounter,
  emit: (w: WriteRecord, view: number, restart: number, at: Trigger) => void,
): void {
  // The controller's effective creates of owned objects, per owner (in write order).
  const childCreates = new Map<ObjectKey, WriteRecord[]>();
  for (const w of main.writes) {
    if (!isSuccess(w) || w.effect !== 'effective' || w.effectChange < 0 || !w.rawKey || w.bookkeeping) continue;
    const c = main.changes[w.effectChange]!;
    if (c.eventType !== 'ADDED') continue;
    for (const owner of c.owners ?? []) {
      const list = childCreates.get(owner);
      if (list) list.push(w);
      else childCreates.set(owner, [w]);
    }
  }
  for (const [owner, creates] of [...childCreates].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
    const ownerChanges = main.changesOf(owner);
    // The owner's lives: [creation, deletion) change positions in ownerChanges.
    const lives: Array<{ from: number; to: number }> = [];
    ownerChanges.forEach((ci, pos) => {
      const c = main.changes[ci]!;
      if (c.eventType === 'ADDED') lives.push({ from: pos, to: ownerChanges.length });
      else if (c.eventType === 'DELETED' && lives.length > 0 && lives.at(-1)!.to === ownerChanges.length) lives.at(-1)!.to = pos;
    });
    for (let k = 1; k < lives.length; k++) {
      const previous = lives[k - 1]!;
      const life = lives[k]!;
      if (previous.to >= life.from) continue; // not deleted in between (should not happen)
      const born = ownerChanges[life.from]!;
      const end = life.to < ownerChanges.length ? main.changes[ownerChanges[life.to]!]!.seq : Infinity;
      const inLife = creates.filter((w) => {
        const seq = main.changes[w.effectChange]!.seq;
        return seq > main.changes[born]!.seq && seq < end;
      });
      if (inLife.length === 0) continue;
      const children = inLife.map((w) => w.rawKey!);
      // Two views of the previous life, each a state of the owner shown to the controller: the latest
      // before any of the children existed (the controller creates them), and the earliest in which
      // all of them existed (it ensures them while the view's release replays their deletion).
      const usable = (n: number) => {
        const c = main.changes[n]!;
        return c.delivered && !c.terminating && !c.bookkeeping && triggers.deterministicChange(n);
      };
      let before = -1;
      for (let pos = previous.to - 1; pos >= previous.from && before < 0; pos--) {
        const n = ownerChanges[pos]!;
        if (usable(n) && children.every((key) => !main.existsAfter(key, n))) before = n;
      }
      let built = -1;
      for (let pos = previous.from; pos < previous.to && built < 0; pos++) {
        const n = ownerChanges[pos]!;
        if (usable(n) && children.every((key) => main.existsAfter(key, n))) built = n;
      }
      const views = [before, built].filter((n) => n >= 0);
      if (views.length === 0) continue;
      const restarts: Array<{ restart: number; at: Trigger | undefined }> = [
        { restart: born, at: triggers.deterministicChange(born) ? { change: triggers.change(born)! } : undefined },
      ];
      for (const w of inLife.slice(0, -1))
        restarts.push({ restart: w.effectChange, at: w.trigger && triggers.deterministicWrite(w.trigger) ? { write: w.trigger } : undefined });
      stages.add('causality', restarts.length * views.length);
      stages.add('effective-writes', restarts.length * views.length);
      for (const view of views) {
        for (const { restart, at } of restarts) {
          if (!at) continue;
          stages.add('deterministic');
          emit(inLife[0]!, view, restart, at);
        }
      }
    }
  }
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
      candidates.push(candidateFor(w, { trigger: view, before: false }, at, staleReleaseSeconds));
    }
  }
  return { candidates, stages: stages.result() };
}

function describeU(w: WriteRecord): string {
  if (w.trigger) return describeWrite(w.trigger);
  return `${w.verb}s ${w.key ?? 'objects'}${w.subresource ? ` ${w.subresource}` : ''}`;
}

/** The plan with its view frozen for `kinds` only. */
function scopedTwin(whole: PlanCandidate, kinds: string[]): PlanCandidate {
  return {
    description: whole.description.replace('onto a view frozen', `onto a view of ${kinds.join(', ')} frozen (every other kind live)`),
    faults: whole.faults.map((f) => (f.type === 'stale-restart' ? { ...f, kinds } : f)),
  };
}

type StaleKind = 'conflict' | 'undo' | 'previous-life';

function candidateFor(
  w: WriteRecord,
  view: { trigger: ChangeTrigger; before: boolean },
  at: Trigger,
  releaseAfterSeconds: number,
  kind: StaleKind = 'conflict',
): PlanCandidate {
  const when =
    'change' in at ? `when ${describeChange(at.change)}` : `right after it ${describeWrite((at as { write: NonNullable<WriteRecord['trigger']> }).write)}`;
  const why =
    kind === 'undo'
      ? `a view from before what made it ${describeU(w)}: it may undo that`
      : kind === 'previous-life'
        ? `a view from ${view.trigger.key}'s previous life: it may create its children again with the old owner`
        : `from that view it once ${describeU(w)}`;
  const moment = view.before ? { viewBefore: view.trigger } : { viewAfter: view.trigger };
  return {
    description: `${when}, restart the controller onto a view frozen ${describeStaleView({ change: view.trigger, before: view.before })}, released once it has acted on it and gone quiet or round in a loop, at most ${releaseAfterSeconds} s (${why})`,
    faults: [{ type: 'stale-restart', at, ...moment, releaseAfterSeconds }],
  };
}
