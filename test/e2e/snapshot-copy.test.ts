/**
 * snapshot-copy (Go, controller-runtime at its defaults): an error-path bug. The buggy operator
 * creates its copy with generateName and trusts its status record; a generated error-path plan that
 * loses the create's answer (applied upstream, connection reset) makes it create a second copy, and
 * the alarm must be the named duplicate-children one on the copies' family. The fixed twin (it lists
 * its copies from the API server before creating) must pass every plan.
 */
import { declareExampleTests } from './_campaign.js';

declareExampleTests({
  example: 'snapshot-copy',
  go: true,
  pattern: 'error-path',
  damaged: ['ConfigMap/default/s1-*'],
  prefer: /lost response/,
  catchingPlan: /lost response .* creates ConfigMap\/default\/s1-\*#1/,
});
