/**
 * stale-deletion (Go, controller-runtime at its defaults, 4 workers): a stale-state bug, the shape of
 * K8SPSMDB-430 and rabbitmq-operator 648. The buggy operator's finalizer deletes the StatefulSet and
 * data claims by name; restarted with a stale view after the MongoCluster was deleted and re-created,
 * it deletes the new cluster's, and the alarm must name what it destroyed. The fixed twin (quorum read
 * of the cluster, UID preconditions, optimistic-concurrency finalizer removal) must pass every plan.
 */
import { declareExampleTests } from './_campaign.js';

declareExampleTests({
  example: 'stale-deletion',
  go: true,
  pattern: 'stale-state',
  damaged: ['StatefulSet/default/mc1-rs0', 'PersistentVolumeClaim/default/mongod-data-mc1-rs0-0'],
  // The stale view that still shows the old cluster's deletionTimestamp.
  prefer: /view frozen right after MongoCluster\/default\/mc1 is updated \(metadata\.deletionGracePeriodSeconds: undefined -> 0, metadata\.deletionTimestamp/,
});
