/**
 * A successful, non-dry-run controller write, as src/model/controller-write.ts defines the writes
 * that triggers count. The proxy counts them per (verb, key, subresource) over its whole life (all
 * incarnations) with the model's WriteOccurrenceCounter, in order of completion, and feeds them to
 * the armed triggers (src/model/trigger-eval.ts), so "the 2nd patch of X" means the same moment in
 * every run and in the planner.
 */
import { isSuccessStatus, writeIdentity, type WriteIdentity } from '../src/model/controller-write.js';
import type { RequestEvent } from '../src/model/trace.js';

export interface CompletedWrite extends WriteIdentity {
  requestId: number;
}

/**
 * The counted write an answer completes, or undefined when it counts for no trigger (a read, a dry
 * run, an error answer, an object neither the request nor the answer names). A create is counted
 * under the key of the object the answer returns, as the planner counts it (`countedWriteKey`).
 */
export function completedWrite(
  requestId: number,
  req: Pick<RequestEvent, 'verb' | 'key' | 'query' | 'resource'>,
  status: number,
  answer: unknown,
): CompletedWrite | undefined {
  if (!isSuccessStatus(status)) return undefined;
  const id = writeIdentity(req, answer);
  return id ? { requestId, ...id } : undefined;
}
