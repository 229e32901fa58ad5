/**
 * watch-end in a run: entirely in the proxy (when `at` fires, the kind's watches end; optionally
 * 410 on resume). It did not take effect if the controller had no open watch of the kind then.
 */
import { describeTrigger, describeWatchEnd, type WatchEndFault } from '../../model/plan.js';
import type { ArmFault } from './arming.js';

export const armWatchEnd: ArmFault<WatchEndFault> = (fault, run) => {
  const armed = run.primitives.watches.armWatchEnd(fault, run.index, (streams) => {
    if (streams.length === 0) {
      run.refuse(`${describeTrigger(fault.at)} happened while the controller had no open ${fault.kind} watch`);
      return;
    }
    run.fired();
    run.log(`  fault fired: ${describeWatchEnd(fault)} (${streams.length} stream(s))`);
  });
  return { whyNotFired: () => armed.whyNotFired() };
};
