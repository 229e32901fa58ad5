/**
 * How a controller's answered requests are compared when kperturb looks for it going round in a
 * loop (a stale view's early release, proxy/stale-view.ts; a serialized episode's early end,
 * proxy/serialize.ts).
 */
import type { KubeObject } from '../src/model/object-key.js';
import { isTriggerWriteVerb } from '../src/model/controller-write.js';
import { keyOfAnswer, type RequestFacts } from './classify.js';

/**
 * What the loop detector compares a request by (its verb and object), whether it is a write, and
 * whether, having succeeded, a later round could repeat it only if it was undone in between (a
 * create of a named object, a delete). A create's body may be unreadable here (client-go sends built-in kinds as
 * protobuf), so a successful create is named by its answer; one made with generateName makes a new
 * object each time and is never undone churn.
 */
export function loopSignature(f: RequestFacts, status: number, answer: KubeObject | undefined): { signature: string; write: boolean; undoable: boolean } {
  const write = isTriggerWriteVerb(f.verb) && !f.dryRun;
  const generated = answer?.metadata?.generateName !== undefined;
  const key = f.key ?? (f.verb === 'create' && status < 300 && !generated ? keyOfAnswer(answer, f.resource?.kind) : undefined);
  const signature = `${f.verb} ${key ?? f.pathname}${f.resource?.subresource ? '/' + f.resource.subresource : ''}`;
  const named = f.verb === 'create' ? key !== undefined && !generated : f.verb === 'delete';
  return { signature, write, undoable: write && named };
}
