/**
 * Counting the controller's successful writes and matching them against armed triggers.
 * Counts are per (verb, key, subresource), over the whole life of the proxy (all incarnations),
 * in order of completion, so "the 2nd patch of X" means the same moment in every run.
 */
import type { RequestVerb } from '../src/model/api-path.js';
import type { ObjectKey } from '../src/model/object-key.js';
import type { WriteTrigger } from '../src/model/plan.js';

export interface CompletedWrite {
  requestId: number;
  verb: RequestVerb;
  key: ObjectKey;
  subresource?: string;
}

interface ArmedTrigger<T> {
  trigger: WriteTrigger;
  payload: T;
}

function countKey(verb: string, key: ObjectKey, subresource: string | undefined): string {
  return `${verb} ${key} ${subresource ?? ''}`;
}

/** `T` is whatever the caller wants back when a trigger fires (e.g. the fault to inject). */
export class WriteTriggers<T> {
  private readonly counts = new Map<string, number>();
  private armed: Array<ArmedTrigger<T>> = [];

  /** Arms a trigger; it fires once, on the write that brings the count to `trigger.occurrence`. */
  arm(trigger: WriteTrigger, payload: T): void {
    this.armed.push({ trigger, payload });
  }

  /** How many successful writes with this verb, key and subresource have completed so far. */
  count(verb: string, key: ObjectKey, subresource?: string): number {
    return this.counts.get(countKey(verb, key, subresource)) ?? 0;
  }

  /** Records a successful, non-dry-run write; returns the triggers it completes (now disarmed). */
  record(write: CompletedWrite): Array<{ trigger: WriteTrigger; payload: T }> {
    const k = countKey(write.verb, write.key, write.subresource);
    const n = (this.counts.get(k) ?? 0) + 1;
    this.counts.set(k, n);
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
