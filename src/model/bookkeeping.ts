/**
 * Objects a controller writes for its own housekeeping rather than as its output: leader-election
 * records and Events. Their content and churn depend on timing, so the planner does not plan
 * crashes after writing them and the oracles do not compare them.
 */
import { isObject, type KubeObject, type ObjectKey } from './object-key.js';
import type { ResourceRef } from './trace.js';

export const BOOKKEEPING_KINDS: ReadonlySet<string> = new Set(['Lease', 'Event']);

/** Annotation of the older ConfigMap/Endpoints-based leader election. */
export const LEADER_ANNOTATION = 'control-plane.alpha.kubernetes.io/leader';

export function isBookkeepingKey(key: ObjectKey): boolean {
  // The kind is what precedes the first `/` (parseKey's too). The proxy asks this per watch event
  // and stream: compared in place, not sliced out.
  const slash = key.indexOf('/');
  const kindLength = slash < 0 ? key.length : slash;
  for (const kind of BOOKKEEPING_KINDS) if (kind.length === kindLength && key.startsWith(kind)) return true;
  return false;
}

export function isBookkeepingResource(ref: ResourceRef | undefined): boolean {
  if (!ref) return false;
  if (ref.group === 'coordination.k8s.io' && ref.resource === 'leases') return true;
  return (ref.group === '' || ref.group === 'events.k8s.io') && ref.resource === 'events';
}

export function isLeaderElectionRecord(obj: unknown): boolean {
  if (!isObject(obj)) return false;
  const annotations = (obj as KubeObject).metadata?.annotations;
  return isObject(annotations) && LEADER_ANNOTATION in annotations;
}

/**
 * Which requests are the controller's housekeeping rather than its work, for deciding when it is
 * quiet (settle) and where its bursts end (the planner): leader election renews every 2 s with
 * controller-runtime's defaults (a GET and an update of a Lease, and of a ConfigMap with the older
 * `configmapsleases` lock), and a controller that is done must still count as quiet while it does.
 * A GET cannot say what it reads: the keys of objects once seen as leader-election records are
 * remembered, so every read of them after the first is housekeeping too.
 */
export class HousekeepingRequests {
  private readonly leaderRecords = new Set<ObjectKey>();

  /** Is this request housekeeping (from what the request says)? */
  isHousekeeping(ref: ResourceRef | undefined, key: ObjectKey | undefined, body: unknown): boolean {
    if (isBookkeepingResource(ref) || (key !== undefined && isBookkeepingKey(key))) return true;
    if (isLeaderElectionRecord(body)) {
      if (key !== undefined) this.leaderRecords.add(key);
      return true;
    }
    return key !== undefined && this.leaderRecords.has(key);
  }

  /** Is a watch event of `object` (under `key`) housekeeping: a Lease, an Event, a leader-election record? */
  isHousekeepingObject(key: ObjectKey | undefined, object: unknown): boolean {
    if (key !== undefined && isBookkeepingKey(key)) return true;
    return this.noteAnswer(key, object);
  }

  /** An answer showed `object` under `key`: a leader-election record makes the request housekeeping. */
  noteAnswer(key: ObjectKey | undefined, object: unknown): boolean {
    if (key === undefined || !isLeaderElectionRecord(object)) return false;
    this.leaderRecords.add(key);
    return true;
  }
}
