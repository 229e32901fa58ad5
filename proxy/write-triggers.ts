/**
 * Counting the controller's successful writes and matching them against armed triggers.
 * Counts are per (verb, key, subresource), over the whole life of the proxy (all incarnations),
 * in order of completion, so "the 2nd patch of X" means the same moment in every run.
 */
import type { ObjectKey } from '../src/model/object-key.js';
import type { WriteTrigger } from '../src/model/plan.js';
import { WriteOccurrenceCounter, type WriteIdentity } from '../src/model/controller-write.js';

/** A successful, non-dry-run write as src/model/controller-write.ts defines it (the planner counts the same way). */
export interface CompletedWrite extends WriteIdentity {
  requestId: number;
}

interface ArmedTrigger<T> {
  trigger: WriteTrigger;
  payload: T;
}

/** `T` is whatever the caller wants back when a trigger fires (e.g. the fault to inject). */
export class WriteTriggers<T> {
  private readonly counter = new WriteOccurrenceCounter();
  private armed: Array<ArmedTrigger<T>> = [];

  /** Arms a trigger; it fires once, on the write that brings the count to `trigger.occurrence`. */
  arm(trigger: WriteTrigger, payload: T): void {
    this.armed.push({ trigger, payload });
  }

  /** How many successful writes with this verb, key and subresource have completed so far. */
  count(verb: WriteIdentity['verb'], key: ObjectKey, subresource?: string): number {
    return this.counter.count(subresource ? { verb, key, subresource } : { verb, key });
  }

  /** Records a successful, non-dry-run write; returns the triggers it completes (now disarmed). */
  record(write: CompletedWrite): Array<{ trigger: WriteTrigger; payload: T }> {
    const n = this.counter.record(write);
    const firing = this.armed.filter(
      ({ trigger }) =>
        trigger.verb === write.verb &&
        trigger.key === write.key &&
        (trigger.subresource ?? undefined) === write.subresource &&
        trigger.occurrence === n,
    );
    if (firing.length > 0) this.armed = this.armed.filter((a) => !firing.includes(a));
    return firing;
  }
}
