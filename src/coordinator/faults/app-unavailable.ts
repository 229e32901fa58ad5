/**
 * app-unavailable in a run: the stub application answers errors or refuses connections on the
 * address of the fault's pod or Service (all of the application's when it names none) for the
 * fault's window (./window.ts). Without the application in kperturb.yaml, or with an error answer
 * on a ZooKeeper application, the fault is not injected and the run says why.
 */
import type { AppUnavailableFault } from '../../model/plan.js';
import type { ArmFault } from './arming.js';
import { armWindow } from './window.js';

export const armAppUnavailable: ArmFault<AppUnavailableFault> = (fault, run) => {
  const apps = run.managed.applications;
  const where = fault.key ? ` on ${fault.key}` : '';
  return armWindow(fault, run, {
    ...(fault.key !== undefined ? { key: fault.key } : {}),
    describe: `${fault.application}${where} ${fault.answer === 'refuse' ? 'refuses connections' : `answers ${fault.answer}`}`,
    start: () =>
      apps ? apps.setUnavailable(fault.application, fault.key, fault.answer) : `kperturb.yaml has no applications: nothing answers as ${fault.application}`,
    heal: () => void apps?.setUnavailable(fault.application, fault.key, undefined),
  });
};
