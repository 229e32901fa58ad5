/**
 * app-settings (Go, controller-runtime at its defaults): a managed-system bug of OAT's class, an
 * operator that never retries after its application was unreachable. The buggy operator records the
 * index Unreachable when its search engine answers 503 to the settings call and never sends them
 * again for that generation; the plan that fails the call after the spec change (until the operator
 * calls the engine again, which it never does) leaves the old setting, and the alarm must name the
 * SearchIndex (status.phase, status.refreshInterval). The fixed twin, which returns the error and
 * is requeued with back-off, must pass every plan.
 */
import { declareExampleTests } from './_campaign.js';

declareExampleTests({
  example: 'app-settings',
  go: true,
  pattern: 'managed-system',
  damaged: ['SearchIndex/default/idx1'],
  focus: ['Pod/default/idx1-0'],
  // The settings calls, and the crash of OAT's schedule, first.
  prefer: /\(PUT \/idx1\/_settings\)|OAT's schedule/,
  // The settings call after the spec change (the 2nd): the failure the buggy operator never retries.
  catchingPlan: /when the controller calls search on Pod\/default\/idx1-0 \(PUT \/idx1\/_settings\) \(2nd time\)/,
});
