/**
 * pod-evict (the managed system changes under the controller): when `at` fires, someone else
 * removes a pod, as `kubectl drain` does (`evict`: the eviction subresource, which a
 * PodDisruptionBudget may refuse with 429) or `kubectl delete pod` (`delete`). Its owner's
 * controller (a StatefulSet's, a ReplicaSet's) recreates it; the controller under test sees the pod
 * go and come back. One shot: nothing to heal.
 *
 *   - type: pod-evict
 *     pod: Pod/default/kv1-0
 *     how: evict
 *     at: { write: { verb: update, key: KVStore/default/kv1, occurrence: 1 } }
 */
import { describeTrigger } from '../trigger.js';
import { declareFault, type FaultOf } from './declare.js';
import { enumField, namespacedKeyField, triggerField } from './fields.js';

export const POD_EVICT_WAYS = ['evict', 'delete'] as const;
export type PodEvictWay = (typeof POD_EVICT_WAYS)[number];

export const podEvict = declareFault({
  type: 'pod-evict',
  simulated: 'the simulation',
  onManagedSystem: true,
  description: 'The managed system changes: a pod is evicted (the eviction subresource) or deleted by someone else, and its owner recreates it',
  fields: {
    pod: namespacedKeyField('Pod', 'The pod: Pod/namespace/name'),
    how: enumField(POD_EVICT_WAYS, 'evict: POST pods/eviction (a PodDisruptionBudget may refuse it); delete: DELETE the pod'),
    at: triggerField(),
  },
  describe: (f) => `${f.how === 'evict' ? 'evict' : 'delete'} ${f.pod} (someone else) when ${describeTrigger(f.at)}`,
  extraMs: () => 0,
});

export type PodEvictFault = FaultOf<typeof podEvict>;
