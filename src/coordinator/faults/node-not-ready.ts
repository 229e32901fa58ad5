/**
 * node-not-ready in a run: the simulation's node lifecycle (src/cluster/sim/node-lifecycle.ts)
 * takes the node out for the fault's window (./window.ts): conditions, taints, its pods unready and
 * evicted after their toleration; the heal clears it. A cluster without the simulation's nodes (a
 * kubeconfig's) cannot: the fault is not injected, and the run says why.
 */
import { parseKey } from '../../model/object-key.js';
import type { NodeNotReadyFault } from '../../model/plan.js';
import { withoutSimulation, type ArmFault } from './arming.js';
import { armWindow } from './window.js';

export const armNodeNotReady: ArmFault<NodeNotReadyFault> = (fault, run) => {
  const node = parseKey(fault.node)!.name;
  const sim = run.managed.containers;
  const outage = { mode: fault.mode, ...(fault.evictAfterSeconds !== undefined ? { evictAfterSeconds: fault.evictAfterSeconds } : {}) };
  return armWindow(fault, run, {
    key: fault.node,
    describe: `${fault.node} is ${fault.mode}`,
    start: () => (sim ? sim.setNodeOutage(node, outage) : withoutSimulation(fault, fault.node, `go ${fault.mode}`)),
    heal: () => void sim?.setNodeOutage(node, undefined),
  });
};
