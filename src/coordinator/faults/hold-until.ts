/**
 * hold-until in a run: entirely in the proxy (hold from `from`, expire with 410 once `until`
 * happened). It took effect if a held stream was expired before the hold timed out; when it did
 * not, its description says where it stopped.
 */
import { describeChange, describeFault, type HoldUntilFault } from '../../model/plan.js';
import type { ArmFault } from './arming.js';

export const armHoldUntil: ArmFault<HoldUntilFault> = (fault, run) => {
  let workloadAtTimeout: string | undefined;
  const state = run.primitives.watches.armHoldUntil(fault, run.index, {
    onHeld: () => run.fired(),
    onExpired: (streams) => run.log(`  fault fired: ${describeChange(fault.until)}; ended ${streams.length} held stream(s) with 410 Expired`),
    onTimedOut: () => (workloadAtTimeout = run.workloadAt()),
  });
  return {
    injected: () => state.injected,
    whyNotFired: () => state.whyNotFired(),
    // A hold-until that timed out recorded why already.
    recordedItself: () => state.timedOut,
    describe: () => {
      const where =
        state.state === 'holding'
          ? ' (holding: the cancelling change never came)'
          : state.state === 'expired' && state.expiredStreams.length === 0
            ? ' (no controller stream had an event of it to hold)'
            : state.state === 'expired'
              ? // The planner drops the holds it can tell are waiting for the controller (planner/rules/hold-release.ts); say what this one waited on.
                ` (the cancelling change did not come in time${workloadAtTimeout ? `, the workload still at ${workloadAtTimeout}` : ', after the workload had ended'}: it waits for the controller to act on what was held; the hold was expired anyway)`
              : ' (the change to hold from never happened)';
      return `${describeFault(fault)}${where}`;
    },
  };
};
