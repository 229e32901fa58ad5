/**
 * app-upgrade (Go, controller-runtime at its defaults): a managed-system bug of OAT's class, an
 * operator that ignores an application error and marks the change done. The buggy operator
 * records the upgrade to v2 although its store answered 503 to the upgrade call; the plan that
 * fails that call (until the operator calls the store again) leaves the store at v1, and the alarm
 * must name the KVStore (status.appVersion). The fixed twin, which retries the failed upgrade, must
 * pass every plan.
 */
import { declareExampleTests } from './_campaign.js';

declareExampleTests({
  example: 'app-upgrade',
  go: true,
  pattern: 'managed-system',
  damaged: ['KVStore/default/kv1'],
  focus: ['Pod/default/kv1-0'],
  // The upgrade calls, and the crash of OAT's schedule, first (the twin's test runs four of the five plans).
  prefer: /\(POST \/upgrade\)|OAT's schedule/,
  // The upgrade call to v2 (the 2nd), whose failure the buggy operator ignores.
  catchingPlan: /when the controller calls kvstore on Pod\/default\/kv1-0 \(POST \/upgrade\) \(2nd time\)/,
});
