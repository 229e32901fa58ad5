/**
 * A successful, non-dry-run controller write, as src/model/controller-write.ts defines the writes
 * that triggers count. The proxy counts them per (verb, key, subresource) over its whole life (all
 * incarnations) with the model's WriteOccurrenceCounter, in order of completion, and feeds them to
 * the armed triggers (src/model/trigger-eval.ts), so "the 2nd patch of X" means the same moment in
 * every run and in the planner.
 */
import type { WriteIdentity } from '../src/model/controller-write.js';

export interface CompletedWrite extends WriteIdentity {
  requestId: number;
}
