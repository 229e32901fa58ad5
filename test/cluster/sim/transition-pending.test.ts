/**
 * ClusterSimulation.transitionPending: a run has not settled while the simulated managed system is
 * about to change (coordinator/settle.ts). Its controllers at work on a key count: under load the
 * hops between a workload's pod and its kubelet's first status (the scheduler's bind, the kubelet's
 * sync) are each a queued key, and a run that settled between them ended before the pod started.
 */
import test from 'ava';
import { ClusterSimulation } from '../../../src/cluster/sim/index.js';
import { WorkRunner } from '../../../src/cluster/sim/runtime.js';

/** A simulation with no parts over `runner` (the constructor is private: start() builds the parts). */
function simulationOver(runner: WorkRunner): ClusterSimulation {
  const Ctor = ClusterSimulation as unknown as new (...args: unknown[]) => ClusterSimulation;
  return new Ctor(undefined, undefined, runner, undefined, [], []);
}

test('a key queued or being reconciled by a simulated controller is a change pending; a requeue timer is not', async (t) => {
  const runner = new WorkRunner(false, () => undefined);
  t.teardown(() => runner.stop());
  let release: () => void = () => undefined;
  let reconciled = 0;
  const enqueue = runner.register('scheduler', async () => {
    reconciled++;
    await new Promise<void>((r) => (release = r));
  });
  const sim = simulationOver(runner);
  t.false(sim.transitionPending(), 'nothing queued');
  enqueue('default/p');
  t.true(sim.transitionPending(), 'queued');
  while (reconciled === 0) await new Promise((r) => setImmediate(r));
  t.true(sim.transitionPending(), 'being reconciled');
  release();
  while (!runner.idle()) await new Promise((r) => setImmediate(r));
  t.false(sim.transitionPending(), 'done');
  enqueue('default/p', 60_000);
  t.false(sim.transitionPending(), 'a requeue a minute later (a back-off) is not a change about to happen');
});
