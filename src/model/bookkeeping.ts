/**
 * Objects a controller writes for its own housekeeping rather than as its output: leader-election
 * records and Events. Their content and churn depend on timing, so the planner does not plan
 * crashes after writing them and the oracles do not compare them.
 */
import { isObject, parseKey, type KubeObject, type ObjectKey } from './object-key.js';
import type { ResourceRef } from './trace.js';

export const BOOKKEEPING_KINDS: ReadonlySet<string> = new Set(['Lease', 'Event']);

/** Annotation of the older ConfigMap/Endpoints-based leader election. */
export const LEADER_ANNOTATION = 'control-plane.alpha.kubernetes.io/leader';

export function isBookkeepingKey(key: ObjectKey): boolean {
  const kind = parseKey(key)?.kind ?? key.split('/')[0];
  return kind !== undefined && BOOKKEEPING_KINDS.has(kind);
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
