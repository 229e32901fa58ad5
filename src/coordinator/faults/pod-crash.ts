/**
 * pod-crash in a run: the simulated kubelet of the pod's node crash-loops its containers (or makes
 * them unready) for the fault's window (./window.ts). A cluster without simulated kubelets (a
 * kubeconfig's) cannot: the fault is not injected, and the run says why.
 */
import { parseKey } from '../../model/object-key.js';
import type { PodCrashFault } from '../../model/plan.js';
import { notCreatedYet, withoutSimulation, type ArmFault } from './arming.js';
import { armWindow } from './window.js';

export const armPodCrash: ArmFault<PodCrashFault> = (fault, run) => {
  const containers = run.managed.containers;
  // The pod's name in this run, once it is known (a generated name: when the fault starts).
  let namespace = '';
  let name = '';
  return armWindow(fault, run, {
    key: fault.pod,
    describe: fault.mode === 'crash-loop' ? `the containers of ${fault.pod} crash-loop` : `the containers of ${fault.pod} are unready`,
    start: () => {
      if (!containers) return withoutSimulation(fault, fault.pod, 'crash');
      const pod = run.primitives.triggers.keys.resolve(fault.pod);
      if (!pod) return notCreatedYet(fault.pod);
      ({ namespace = '', name } = parseKey(pod)!);
      if (!containers.setContainerFault(namespace, name, fault.mode)) {
        containers.setContainerFault(namespace, name, undefined);
        return `${fault.pod} does not run on a simulated node when the fault starts (not created or not scheduled yet)`;
      }
      return undefined;
    },
    heal: () => {
      if (name) containers?.setContainerFault(namespace, name, undefined);
    },
  });
};
