/**
 * secret-marker (TypeScript, client-node informers): an intermediate-state bug, the shape of
 * K8SPSMDB-578 / K8SPXC-896. The buggy operator writes its status.tlsIssued marker before creating the
 * Secret it describes; the crash right after the marker must be caught, with an alarm naming the Secret
 * the bug leaves missing. The fixed twin (it checks for the Secret itself) must pass every plan.
 */
import { declareExampleTests } from './_campaign.js';

declareExampleTests({
  example: 'secret-marker',
  pattern: 'intermediate-state',
  damaged: ['Secret/default/db1-tls'],
  catchingPlan: /patches Database\/default\/db1 status \(1st time\)/,
});
