/**
 * Which controller requests count as writes for `crash-after-write` triggers, and how they are
 * counted. The planner (reading a reference trace) and the proxy (firing the fault in a test run)
 * must agree on this exactly, or a plan's `occurrence` points at a different write than the one it
 * was planned for; so the definition lives here, once.
 *
 * A counted write: a request with verb create/update/patch/delete that is not a dry run and got a
 * 2xx answer, counted under `countedWriteKey`: the request's key, except for the create of a whole
 * object, which is counted under the key of the object the answer returns (the request may not name
 * it: `generateName`, or a body the proxy cannot read such as protobuf or YAML; the answer is what
 * the cluster did). Each (verb, key, subresource) has its own counter over the whole run (all
 * controller incarnations), advanced when the answer arrives. Counted writes include no-op writes
 * (the API server answered 2xx but changed nothing). proxy/write-triggers.ts uses this at test time.
 */
import { isObject, keyOf, type KubeObject, type ObjectKey } from './object-key.js';
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

/** The key of the object in an answer (its own kind, else `fallbackKind`); undefined for a Status or a non-object. */
export function answerObjectKey(answer: unknown, fallbackKind: string | undefined): ObjectKey | undefined {
  if (!isObject(answer)) return undefined;
  const obj = answer as KubeObject;
  if (obj.kind === 'Status') return undefined;
  const kind = typeof obj.kind === 'string' && obj.kind ? obj.kind : fallbackKind;
  return kind ? keyOf(obj, kind) : undefined;
}

/**
 * The key a successful write is counted under. A create of a whole object (no subresource) counts
 * under the key of the object the answer returns, when it returns one; every other write, and a
 * create whose answer names nothing, under the request's key.
 */
export function countedWriteKey(req: Pick<RequestEvent, 'verb' | 'key' | 'resource'>, answer: unknown): ObjectKey | undefined {
  if (req.verb === 'create' && !req.resource?.subresource) return answerObjectKey(answer, req.resource?.kind) ?? req.key;
  return req.key;
}

/**
 * The identity a successful answer to this request is counted under, or undefined when the request
 * can never be a trigger (reads, deletecollection, dry runs, writes whose object neither the request
 * nor the answer names).
 */
export function writeIdentity(req: Pick<RequestEvent, 'verb' | 'key' | 'query' | 'resource'>, answer?: unknown): WriteIdentity | undefined {
  if (!isTriggerWriteVerb(req.verb) || isDryRun(req.query)) return undefined;
  const key = countedWriteKey(req, answer);
  if (!key) return undefined;
  const id: WriteIdentity = { verb: req.verb, key };
  if (req.resource?.subresource) id.subresource = req.resource.subresource;
  return id;
}

/** One string per write identity (verb, key, subresource), for maps keyed by it. */
export function writeIdentityKey(id: WriteIdentity): string {
  return `${id.verb} ${id.key} ${id.subresource ?? ''}`;
}

/** Counts successful writes per (verb, key, subresource); `record` returns the 1-based occurrence. */
export class WriteOccurrenceCounter {
  private readonly counts = new Map<string, number>();

  count(id: WriteIdentity): number {
    return this.counts.get(writeIdentityKey(id)) ?? 0;
  }

  record(id: WriteIdentity): number {
    const k = writeIdentityKey(id);
    const n = (this.counts.get(k) ?? 0) + 1;
    this.counts.set(k, n);
    return n;
  }
}

export function triggerFor(id: WriteIdentity, occurrence: number): WriteTrigger {
  // Fixed property order: plans are serialized as-is and must be byte-stable.
  return id.subresource !== undefined ? { verb: id.verb, key: id.key, subresource: id.subresource, occurrence } : { verb: id.verb, key: id.key, occurrence };
}
