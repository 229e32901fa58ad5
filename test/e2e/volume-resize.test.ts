/**
 * volume-resize (Go, controller-runtime at its defaults): an intermediate-state bug, rabbitmq-operator
 * 782's shape. The buggy operator records status.currentStorage before it expands the volume claims;
 * the crash between the two must be caught, with an alarm naming the claim left at the old size. The
 * fixed twin (level-triggered: it checks the claims themselves) must pass every plan.
 */
import { declareExampleTests } from './_campaign.js';

declareExampleTests({
  example: 'volume-resize',
  go: true,
  pattern: 'intermediate-state',
  damaged: ['PersistentVolumeClaim/default/persistence-b1-server-0'],
  catchingPlan: /updates Broker\/default\/b1 status/,
});
