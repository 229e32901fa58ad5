/**
 * A successful, non-dry-run controller write, as src/model/controller-write.ts defines the writes
 * that triggers count. The proxy counts them per (verb, key, subresource) over its whole life (all
 * incarnations) with the model's WriteOccurrenceCounter, in order of completion, and feeds them to
 * the armed triggers (src/model/trigger-eval.ts), so "the 2nd patch of X" means the same moment in
 * every run and in the planner.
 *
 * Keys are matched folded (src/model/generated-names.ts): an object created with `generateName` is
 * `Kind/namespace/<prefix>*#<n>` to triggers, the n-th object created with that prefix in this run,
 * as the planner named it from the reference trace. `TriggerKeys` does the folding for the proxy.
 */
import { isSuccessStatus, writeIdentity, type WriteIdentity } from '../src/model/controller-write.js';
import { GeneratedNameFolder } from '../src/model/generated-names.js';
import { isObject, type KubeObject, type ObjectKey } from '../src/model/object-key.js';
import type { RequestEvent } from '../src/model/trace.js';

export interface CompletedWrite extends WriteIdentity {
  requestId: number;
  /** A create whose answer carries `metadata.generateName`: the name and prefix of the object it made. */
  generated?: { name: string; generateName: string };
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
  if (!id) return undefined;
  const write: CompletedWrite = { requestId, ...id };
  if (req.verb === 'create' && !req.resource?.subresource && isObject(answer)) {
    const meta = (answer as KubeObject).metadata;
    if (typeof meta?.generateName === 'string' && typeof meta.name === 'string') write.generated = { name: meta.name, generateName: meta.generateName };
  }
  return write;
}

/**
 * Folds the keys the proxy matches triggers with. Every creation must be observed in the order the
 * run made them: the cluster view's ADDED changes (those before the proxy started included) and the
 * controller's own creates as their answers arrive, whichever of the two comes first (the answer
 * often reaches the proxy before the cluster view hears of the object; folding is per object, so the
 * second sighting changes nothing). The planner folds the same two sightings in trace order.
 */
export class TriggerKeys {
  private readonly folder = new GeneratedNameFolder();

  /** A change the cluster view saw; returns the key triggers know the object by. */
  observeChange(change: { type: 'ADDED' | 'MODIFIED' | 'DELETED'; key: ObjectKey; next: KubeObject | undefined }): ObjectKey {
    return change.type === 'ADDED' ? this.folder.observeCreate(change.key, change.next) : this.folder.fold(change.key);
  }

  /** A completed controller write; returns it under the key triggers know its object by. */
  observeWrite<W extends CompletedWrite>(write: W): W {
    const key = write.generated ? this.folder.observeCreate(write.key, { metadata: write.generated }) : this.folder.fold(write.key);
    return key === write.key ? write : { ...write, key };
  }

  fold(key: ObjectKey): ObjectKey {
    return this.folder.fold(key);
  }

  /** The object a plan's (possibly folded) key names in this run; undefined while it is not created yet. */
  resolve(key: ObjectKey): ObjectKey | undefined {
    return this.folder.resolve(key);
  }

  /** The key the next object created with this generateName family will be known by. */
  nextGenerated(family: ObjectKey): ObjectKey {
    return this.folder.nextInFamily(family);
  }
}
