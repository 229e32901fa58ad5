/**
 * pod-evict in a run: when its trigger fires, the simulation removes the pod as someone else would
 * (the eviction subresource or a plain delete, src/cluster/sim/index.ts); the pod's owner recreates
 * it. The removal is a `fault` event (phase `applied`) in the cluster trace, before the deletion it
 * causes. A removal the server refuses (a PodDisruptionBudget's 429, a pod already gone) leaves the
 * fault not injected, with the server's answer.
 */
import { parseKey } from '../../model/object-key.js';
import type { PodEvictFault } from '../../model/plan.js';
import { notCreatedYet, withoutSimulation, type ArmFault } from './arming.js';

export const armPodEvict: ArmFault<PodEvictFault> = (fault, run) => {
  const sim = run.managed.containers;
  const describe = `${fault.how === 'evict' ? 'evicted' : 'deleted'} ${fault.pod} (someone else)`;
  const armed = run.primitives.triggers.arm(fault.at, () => {
    if (!sim) {
      run.refuse(withoutSimulation(fault, fault.pod, 'be removed by someone else'));
      return;
    }
    const pod = run.primitives.triggers.keys.resolve(fault.pod);
    if (!pod) {
      run.refuse(notCreatedYet(fault.pod));
      return;
    }
    const { namespace = '', name } = parseKey(pod)!;
    run.managed.clusterTrace.append({ type: 'fault', fault: 'pod-evict', phase: 'applied', faultIndex: run.index, key: fault.pod, detail: describe });
    const done = sim.removePod(namespace, name, fault.how).then((refused) => {
      if (refused !== undefined) run.refuse(refused);
      else {
        run.fired();
        run.log(`  fault fired: ${describe}`);
      }
    });
    run.settleAfter(done);
  });
  run.releaseAtEnd(() => armed.cancel());
  return { whyNotFired: () => armed.whyNotFired() };
};
