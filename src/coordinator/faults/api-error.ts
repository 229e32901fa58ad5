/**
 * api-error in a run: entirely in the proxy (the n-th matching write request gets an error, a lost
 * response or a slow answer; one-shot).
 */
import { describeApiError, type ApiErrorFault } from '../../model/plan.js';
import type { ArmFault } from './arming.js';

export const armApiError: ArmFault<ApiErrorFault> = (fault, run) => {
  const armed = run.primitives.apiErrors.arm(fault, run.index, () => {
    run.fired();
    run.log(`  fault fired: ${describeApiError(fault)}`);
  });
  return { whyNotFired: () => armed.whyNotFired() };
};
