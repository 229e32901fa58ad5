/**
 * member-join (Go, controller-runtime at its defaults): an unobserved-state bug, cassandra-operator
 * 398's and rabbitmq-operator 758's shape. The buggy operator lets a pod join the ring (the members
 * ConfigMap) only when it sees the pod go from Pending to Running; a plan that hides the pod from
 * its creation until it is Running makes the relist show it Running first, the pod never joins, and
 * the alarm must name the members ConfigMap. Caught both with plain and with serialized learning.
 * The fixed twin (level-triggered: the members are the Running pods) must pass every plan.
 */
import { declareExampleTests } from './_campaign.js';

declareExampleTests({
  example: 'member-join',
  go: true,
  pattern: 'unobserved-state',
  damaged: ['ConfigMap/default/r1-members'],
  focus: ['Pod/default/r1-node-0', 'Pod/default/r1-node-1'],
  // Hiding a pod from its creation, so that the operator never sees it Pending.
  prefer: /hide every change of Pod\/default\/r1-node-\d from the controller from when Pod\/default\/r1-node-\d is created/,
  // The catch must come from a window that begins at the pod's creation (the operator never sees it Pending).
  catchingPlan: /from when Pod\/default\/r1-node-\d is created/,
  serializedToo: { quietMs: 100 },
});
