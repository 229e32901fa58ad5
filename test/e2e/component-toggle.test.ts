/**
 * component-toggle (Go, controller-runtime at its defaults): a stale-state bug, K8SPXC-725's shape.
 * The buggy operator trusts a stale `haproxy.enabled: false` from its cache and deletes the HAProxy
 * StatefulSet and Service that the current spec wants; the alarm must name one of them. The fixed
 * twin (quorum read before deleting or re-creating the component, UID preconditions) must pass
 * every plan.
 */
import { declareExampleTests } from './_campaign.js';

declareExampleTests({
  example: 'component-toggle',
  go: true,
  pattern: 'stale-state',
  damaged: ['StatefulSet/default/c1-haproxy', 'Service/default/c1-haproxy'],
  // The stale view that still shows `haproxy.enabled: false`.
  prefer: /view frozen right after SQLCluster\/default\/c1 is updated \(spec\.haproxy\.enabled: true -> false\)/,
});
