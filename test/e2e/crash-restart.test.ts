/**
 * crash-restart (Go, controller-runtime at its defaults): a managed-system bug of OAT's class, an
 * operator that restarts all pods at once when one crashed. OAT's schedule crash-loops one member's
 * pod while the operator acts on the spec change; the buggy operator then deletes every pod of the
 * group, and the update-summary oracle's alarm must name one of them (deleted, and created again by
 * the StatefulSet, which no reference run did). The fixed twin, which only sends the restarted
 * member its settings again, must pass every plan.
 */
import { declareExampleTests } from './_campaign.js';

const members = ['Pod/default/rg1-0', 'Pod/default/rg1-1', 'Pod/default/rg1-2'] as const;

declareExampleTests({
  example: 'crash-restart',
  go: true,
  pattern: 'managed-system',
  damaged: [...members],
  // The crashes of OAT's schedule first (one per member; the twin's test runs them all).
  prefer: /crash-loop the containers of/,
  catchingPlan: /crash-loop the containers of Pod\/default\/rg1-\d/,
});
