/**
 * Evaluating a plan trigger (plan.ts `Trigger`) against the events of a run, in order: the
 * controller's completed writes (counted as controller-write.ts defines), the cluster's changes
 * (matched as change-match.ts defines) and the controller's calls to its stub applications. Pure; the proxy feeds it at test time, and a planner may
 * feed it a reference trace to check that a trigger fires where it was planned.
 *
 * Every leaf counts its matches from the start of the run, whatever its position in a composite, so
 * an occurrence means the same as when the planner counted it over a whole reference trace. A leaf
 * fires at the event that brings its count to `occurrence`. `allOf` fires when its last child fires,
 * `anyOf` when its first does, and `sequence` when its children have fired in the given order (a child
 * that fired before its predecessor spoils the sequence: it never fires).
 */
import type { KubeObject, ObjectKey } from './object-key.js';
import type { AppCallArrival, CallTrigger, Trigger, WriteTrigger } from './plan.js';
import type { WriteIdentity } from './controller-write.js';
import { ChangeOccurrenceCounter, describeNearMiss, matchesChange } from './change-match.js';
import { describeCall, describeTrigger, matchesCall, ordinal } from './plan.js';

interface Node {
  /** Tick at which this node fired, if it has. */
  firedAt?: number;
  /** Sequence nodes that can no longer fire. */
  spoiled?: boolean;
  leaf?:
    | { write: WriteTrigger; count: number; ofKey: Map<string, number> }
    | { change: Extract<Trigger, { change: unknown }>['change']; counter: ChangeOccurrenceCounter }
    | { call: CallTrigger; count: number };
  form?: 'allOf' | 'anyOf' | 'sequence';
  children?: Node[];
}

function build(t: Trigger): Node {
  if ('write' in t) return { leaf: { write: t.write, count: 0, ofKey: new Map() } };
  if ('change' in t) return { leaf: { change: t.change, counter: new ChangeOccurrenceCounter() } };
  if ('call' in t) return { leaf: { call: t.call, count: 0 } };
  if ('allOf' in t) return { form: 'allOf', children: t.allOf.map(build) };
  if ('anyOf' in t) return { form: 'anyOf', children: t.anyOf.map(build) };
  return { form: 'sequence', children: t.sequence.map(build) };
}

export class TriggerEvaluator {
  private readonly root: Node;
  private tick = 0;

  constructor(readonly trigger: Trigger) {
    this.root = build(trigger);
  }

  get fired(): boolean {
    return this.root.firedAt !== undefined;
  }

  /** Does the trigger name any cluster change (and so need the cluster's changes fed in)? */
  get watchesChanges(): boolean {
    const visit = (n: Node): boolean => (n.leaf ? 'change' in n.leaf : (n.children ?? []).some(visit));
    return visit(this.root);
  }

  /**
   * A successful, non-dry-run controller write completed. True when this makes the whole trigger fire.
   * `occurrence`: the write's count from a run-wide `WriteOccurrenceCounter`, when the caller keeps
   * one (so a trigger armed mid-run still counts from the start); otherwise the leaf counts itself.
   */
  write(write: WriteIdentity, occurrence?: number): boolean {
    return this.step((leaf) => {
      if (!('write' in leaf)) return false;
      const w = leaf.write;
      if (w.key === write.key) {
        const what = `${write.verb}${write.subresource ? ` ${write.subresource}` : ''}`;
        leaf.ofKey.set(what, (leaf.ofKey.get(what) ?? 0) + 1);
      }
      if (w.verb !== write.verb || w.key !== write.key || (w.subresource ?? undefined) !== (write.subresource ?? undefined)) return false;
      leaf.count = occurrence ?? leaf.count + 1;
      return leaf.count === w.occurrence;
    });
  }

  /** The cluster changed object `key` from `prev` to `next` (undefined: absent). True when the whole trigger fires. */
  change(key: ObjectKey, prev: KubeObject | undefined, next: KubeObject | undefined): boolean {
    return this.step((leaf) => 'change' in leaf && matchesChange(leaf.change, prev, next, leaf.counter, key));
  }

  /** Does the trigger name a call to a stub application (and so need the stubs' calls fed in)? */
  get watchesCalls(): boolean {
    const visit = (n: Node): boolean => (n.leaf ? 'call' in n.leaf : (n.children ?? []).some(visit));
    return visit(this.root);
  }

  /** A call of the controller arrived at a stub application, not answered yet. True when the whole trigger fires. */
  call(arrival: AppCallArrival): boolean {
    return this.step((leaf) => {
      if (!('call' in leaf) || !matchesCall(leaf.call, arrival)) return false;
      leaf.count++;
      return leaf.count === leaf.call.occurrence;
    });
  }

  /**
   * Why the trigger has not fired, from what came closest (for not-injected verdicts): for each leaf
   * that has not fired, what the run did with its object instead. Undefined once it fired.
   */
  whyNotFired(): string | undefined {
    if (this.fired) return undefined;
    const reasons: string[] = [];
    const visit = (n: Node): void => {
      if (n.spoiled) reasons.push('its parts fired out of order');
      if (n.leaf && n.firedAt === undefined) reasons.push(leafNearMiss(n.leaf));
      for (const c of n.children ?? []) visit(c);
    };
    visit(this.root);
    return reasons.length > 0 ? reasons.join('; ') : `never matched: ${describeTrigger(this.trigger)}`;
  }

  private step(leafFires: (leaf: NonNullable<Node['leaf']>) => boolean): boolean {
    if (this.fired) return false;
    const tick = ++this.tick;
    const visitLeaves = (n: Node): void => {
      if (n.leaf) {
        if (n.firedAt === undefined && leafFires(n.leaf)) n.firedAt = tick;
        return;
      }
      for (const c of n.children ?? []) visitLeaves(c);
    };
    visitLeaves(this.root);
    settle(this.root, tick);
    return this.root.firedAt === tick;
  }
}

function settle(n: Node, tick: number): void {
  if (n.leaf || n.firedAt !== undefined || n.spoiled) return;
  const children = n.children ?? [];
  for (const c of children) settle(c, tick);
  if (n.form === 'allOf') {
    if (children.every((c) => c.firedAt !== undefined)) n.firedAt = tick;
  } else if (n.form === 'anyOf') {
    if (children.some((c) => c.firedAt !== undefined)) n.firedAt = tick;
  } else {
    let last = 0;
    for (const c of children) {
      if (c.spoiled) {
        n.spoiled = true;
        return;
      }
      if (c.firedAt === undefined) return;
      // Children that fire on the same event count as in order only if the earlier one fired strictly earlier.
      if (c.firedAt <= last) {
        n.spoiled = true;
        return;
      }
      last = c.firedAt;
    }
    n.firedAt = tick;
  }
}

function leafNearMiss(leaf: NonNullable<Node['leaf']>): string {
  if ('change' in leaf) return describeNearMiss(leaf.change, leaf.counter) ?? '';
  if ('call' in leaf) {
    const n = leaf.count;
    return n === 0
      ? `never matched: ${describeCall(leaf.call)} never came (no such call)`
      : `never matched: ${n} such call${n === 1 ? '' : 's'} came, the plan waits for the ${ordinal(leaf.call.occurrence)}`;
  }
  const w = leaf.write;
  const what = `${w.verb}${w.subresource ? ` ${w.subresource}` : ''}`;
  const times = (n: number) => `${n} time${n === 1 ? '' : 's'}`;
  const others = [...leaf.ofKey].filter(([k]) => k !== what).map(([k, n]) => `${k} ${times(n)}`);
  const also = others.length > 0 ? ` (its other writes of it: ${others.join(', ')})` : '';
  const mine = leaf.ofKey.get(what) ?? 0;
  if (mine === 0) return `never matched: the controller never made a successful ${what} of ${w.key}${also}`;
  return `never matched: the controller made a successful ${what} of ${w.key} ${times(mine)}, the plan waits for the ${ordinal(w.occurrence)}${also}`;
}
