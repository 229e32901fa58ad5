/**
 * node-not-ready (the managed system fails): from `at` on, a node is out, as kube-controller-manager
 * handles it (src/cluster/sim/node-lifecycle.ts), until `until` fires or `forSeconds` have passed:
 * - `unreachable`: the kubelet stopped posting status: the node's conditions Unknown, the taints
 *   node.kubernetes.io/unreachable NoSchedule and NoExecute, its pods' Ready False; the kubelet does
 *   nothing meanwhile (a deleted pod stays terminating);
 * - `not-ready`: the kubelet posts Ready False: the not-ready taints, the pods' Ready False; the
 *   kubelet still finishes deletions.
 * Pods not tolerating the NoExecute taint are evicted (deleted) at once, the others after their
 * tolerationSeconds (300 s by default), or after `evictAfterSeconds` when that is shorter; a pod
 * tolerating it for ever stays. At the heal the taints go and the pods left are Ready again.
 *
 *   - type: node-not-ready
 *     node: Node/node-1
 *     mode: unreachable
 *     evictAfterSeconds: 2
 *     at: { change: { key: Ring/default/r1, change: update, occurrence: 1 } }
 *     forSeconds: 5
 */
import { describeTrigger } from '../trigger.js';
import { declareFault, field, optional, type FaultOf } from './declare.js';
import { clusterKeyField, enumField, optionalTriggerField, triggerField } from './fields.js';
import { checkWindowEnd, describeWindowEnd, WINDOW_END_SCHEMA, WINDOW_SECONDS_MAX, windowSecondsField } from './window.js';

export const NODE_OUTAGE_MODES = ['unreachable', 'not-ready'] as const;
export type NodeOutageMode = (typeof NODE_OUTAGE_MODES)[number];

export const nodeNotReady = declareFault({
  type: 'node-not-ready',
  simulated: 'the nodes',
  onManagedSystem: true,
  description: 'The managed system fails: a node goes NotReady (tainted, its pods unready, evicted after their toleration) for a window, then recovers',
  fields: {
    node: clusterKeyField('Node', 'The node: Node/name'),
    mode: enumField(NODE_OUTAGE_MODES, 'unreachable: the kubelet stopped posting status (conditions Unknown); not-ready: it posts Ready False'),
    evictAfterSeconds: optional(
      field(
        {
          type: 'number',
          minimum: 0,
          maximum: WINDOW_SECONDS_MAX,
          description: "Evict the node's pods after at most this many seconds (their tolerationSeconds otherwise: 300 by default)",
        },
        (v, raw, path) => v.number(raw, path, { min: 0, max: WINDOW_SECONDS_MAX }),
      ),
    ),
    at: triggerField(),
    until: optionalTriggerField('Heal when this fires (after the fault started)'),
    forSeconds: windowSecondsField(),
  },
  check: checkWindowEnd,
  checkSchema: WINDOW_END_SCHEMA,
  describe: (f) =>
    `make ${f.node} ${f.mode}${f.evictAfterSeconds !== undefined ? ` (its pods evicted after at most ${f.evictAfterSeconds} s)` : ''} when ${describeTrigger(f.at)}, ${describeWindowEnd(f)}`,
  extraMs: (f) => (f.forSeconds ?? 0) * 1000,
});

export type NodeNotReadyFault = FaultOf<typeof nodeNotReady>;
