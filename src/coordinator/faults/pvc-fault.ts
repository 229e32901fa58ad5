/**
 * pvc-fault in a run: the simulation's volume controller (src/cluster/sim/volume-controller.ts)
 * holds the claim Pending, Lost or its resize refused for the fault's window (./window.ts). Without
 * the simulated volume controller (a kubeconfig's cluster; the real control plane unless it runs
 * it), or with a claim in the wrong state (bound for `pending`, not bound for `lost`), the fault is
 * not injected and the run says why.
 */
import { parseKey } from '../../model/object-key.js';
import type { PvcFault } from '../../model/plan.js';
import { notCreatedYet, withoutSimulation, type ArmFault } from './arming.js';
import { armWindow } from './window.js';

const DOES: Record<PvcFault['mode'], string> = { pending: 'stays Pending', lost: 'has lost its volume', 'resize-refused': 'has its resize refused' };

export const armPvcFault: ArmFault<PvcFault> = (fault, run) => {
  const sim = run.managed.containers;
  // The claim's name in this run, once it is known (a generated name: when the fault starts).
  let namespace = '';
  let name = '';
  return armWindow(fault, run, {
    key: fault.claim,
    describe: `${fault.claim} ${DOES[fault.mode]}`,
    start: () => {
      if (!sim) return withoutSimulation(fault, fault.claim, 'fail');
      const claim = run.primitives.triggers.keys.resolve(fault.claim);
      if (!claim) return notCreatedYet(fault.claim);
      ({ namespace = '', name } = parseKey(claim)!);
      return sim.setClaimFault(namespace, name, fault.mode);
    },
    heal: () => {
      if (name) sim?.setClaimFault(namespace, name, undefined);
    },
  });
};
