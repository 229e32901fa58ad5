/**
 * crash-after-write in a run: the proxy holds the controller right after the write; the controller
 * is killed (SIGKILL), the Leases it held are deleted (so its successor need not wait out the
 * lease), a new connection epoch starts and the controller is restarted.
 */
import { describeWrite, type CrashAfterWriteFault } from '../../model/plan.js';
import type { ArmFault } from './arming.js';

export const armCrashAfterWrite: ArmFault<CrashAfterWriteFault> = (fault, run) => {
  const armed = run.primitives.holdAfterWrite(
    fault.after,
    (info) => {
      run.fired();
      run.log(`  fault fired: the controller ${describeWrite(fault.after)}; killing and restarting it`);
      run.restart(info.requestId);
    },
    run.index,
  );
  return { whyNotFired: () => armed.whyNotFired() };
};
