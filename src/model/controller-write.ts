/**
 * Which controller requests count as writes for `crash-after-write` triggers, and how they are
 * counted. The planner (reading a reference trace) and the proxy (firing the fault in a test run)
 * must agree on this exactly, or a plan's `occurrence` points at a different write than the one it
 * was planned for; so the definition lives here, once.
 *
 * A counted write: a request with verb create/update/patch/delete that names its object (`key`),
 * is not a dry run, and got a 2xx answer. Each (verb, key, subresource) has its own counter over
 * the whole run (all controller incarnations), advanced when the answer arrives.
 * Counted writes include no-op writes (the API server answered 2xx but changed nothing).
 * proxy/write-triggers.ts uses this counter at test time.
 */
import type { ObjectKey } from './object-key.js';
import { TRIGGER_WRITE_VERBS, type TriggerWriteVerb, type WriteTrigger } from './plan.js';
import type { RequestEvent } from './trace.js';

export interface WriteIdentity {
  verb: TriggerWriteVerb;
  key: ObjectKey;
  subresource?: string;
}

export function isTriggerWriteVerb(verb: string): verb is TriggerWriteVerb {
  return (TRIGGER_WRITE_VERBS as readonly string[]).includes(verb);
}

/** `?dryRun=All` (any non-empty value): the API server validates the write but stores nothing. */
export function isDryRun(query: Record<string, string> | undefined): boolean {
  const v = query?.dryRun;
  return v !== undefined && v !== '';
}

export function isSuccessStatus(status: number): boolean {
  return status >= 200 && status < 300;
}

/**
 * The identity a trigger would match for this request, or undefined when the request can never be
 * a trigger (reads, deletecollection, dry runs, writes whose object is not named, e.g. generateName).
 */
export function writeIdentity(req: Pick<RequestEvent, 'verb' | 'key' | 'query' | 'resource'>): WriteIdentity | undefined {
  if (!isTriggerWriteVerb(req.verb) || !req.key || isDryRun(req.query)) return undefined;
  const id: WriteIdentity = { verb: req.verb, key: req.key };
  if (req.resource?.subresource) id.subresource = req.resource.subresource;
  return id;
}

function counterKey(id: WriteIdentity): string {
  return `${id.verb} ${id.key} ${id.subresource ?? ''}`;
}

/** Counts successful writes per (verb, key, subresource); `record` returns the 1-based occurrence. */
export class WriteOccurrenceCounter {
  private readonly counts = new Map<string, number>();

  count(id: WriteIdentity): number {
    return this.counts.get(counterKey(id)) ?? 0;
  }

  record(id: WriteIdentity): number {
    const k = counterKey(id);
    const n = (this.counts.get(k) ?? 0) + 1;
    this.counts.set(k, n);
    return n;
  }
}

export function triggerFor(id: WriteIdentity, occurrence: number): WriteTrigger {
  // Fixed property order: plans are serialized as-is and must be byte-stable.
  return id.subresource !== undefined
    ? { verb: id.verb, key: id.key, subresource: id.subresource, occurrence }
    : { verb: id.verb, key: id.key, occurrence };
}
