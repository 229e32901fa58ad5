/**
 * decommission (TypeScript, client-node informers): an unobserved-state bug, cassandra-operator 398's
 * shape. The buggy operator deletes a removed node's claim only when it sees the node's pod
 * terminating; if it only learns that the pod is gone, the claim leaks, and the alarm must name it.
 * The fixed twin (level-triggered cleanup) must pass every plan.
 */
import { declareExampleTests } from './_campaign.js';

declareExampleTests({
  example: 'decommission',
  pattern: 'unobserved-state',
  damaged: ['PersistentVolumeClaim/default/data-dc1-1'],
  focus: ['Pod/default/dc1-1'],
  // Hiding the removed node's pod, whose termination the buggy operator must see.
  prefer: /hide every change of Pod\/default\/dc1-1/,
});
