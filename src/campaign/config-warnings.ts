/**
 * Warnings about a kperturb.yaml that loads but will not test what its author expects, said at
 * `learn` and `plan` time rather than discovered as `not-injected` plans after a long `test`.
 */
import type { ControllerUnderTest, Workload } from '../config/config.js';
import { DEFAULT_MAX_HOLD_MS } from '../../proxy/index.js';

/**
 * A soft wait (`onTimeout: continue`) longer than the proxy holds a watch stream: an unobserved-state
 * plan holds the controller's view from one change until a later one, and when the later change
 * only comes after the soft wait times out (the wait is there because the hold can keep its
 * condition from ever holding), the hold expires first and the plan ends not-injected.
 */
export function softWaitWarnings(config: ControllerUnderTest, workloads: readonly Workload[], maxHoldMs = DEFAULT_MAX_HOLD_MS): string[] {
  const limit = maxHoldMs / 1000;
  const warnings: string[] = [];
  for (const w of workloads) {
    w.steps.forEach((step, i) => {
      if (!('waitFor' in step) || step.waitFor.onTimeout !== 'continue' || step.waitFor.timeoutSeconds <= limit) return;
      warnings.push(
        `kperturb: warning: ${config.file} at workloads.${w.name}.steps[${i}].waitFor.timeoutSeconds: a soft wait (onTimeout: continue) of at most ${limit} s (got ${step.waitFor.timeoutSeconds} s): the proxy ends a hold after ${limit} s, so an unobserved-state plan that holds the controller's view across this wait ends not-injected`,
      );
    });
  }
  return warnings;
}
