/**
 * The oracles' options a plan's run is judged with (src/campaign/test-stage.ts, planOracleOptions):
 * the masks and counted updates of its own workload, and `faultsOnManagedSystemOnly` only when every
 * fault of the plan acts on the managed system (a pod, node or volume, or the application's stub):
 * one fault on the API server's side (a crash, a stale view, an error) leaves the update summary
 * strict about replacements.
 */
import test from 'ava';
import type { ControllerUnderTest } from '../../src/config/config.js';
import { planOracleOptions } from '../../src/campaign/test-stage.js';
import type { Fault, TestPlan } from '../../src/model/plan.js';

const config = {
  masks: [
    { key: 'ConfigMap/default/*', paths: [] },
    { key: 'Secret/default/s', paths: ['data'], workload: 'scale' },
  ],
  countUpdates: [{ key: 'Pod/default/*', paths: ['metadata.deletionTimestamp'], workload: 'recreate' }],
} as unknown as ControllerUnderTest;

const plan = (workload: string, faults: Fault[]) => ({ metadata: { name: 'p' }, spec: { workload, pattern: 'managed-system', faults } }) as unknown as TestPlan;

const crash = { type: 'pod-crash', key: 'Pod/default/a-0', mode: 'crash-loop' } as unknown as Fault;
const evict = { type: 'pod-evict', key: 'Pod/default/a-1', how: 'evict' } as unknown as Fault;
const appDown = { type: 'app-unavailable', answer: 'service-unavailable' } as unknown as Fault;
const controllerCrash = { type: 'crash-after-write', after: { verb: 'create', key: 'ConfigMap/default/x' } } as unknown as Fault;
const staleView = { type: 'stale-restart' } as unknown as Fault;

test('only faults on the managed system: the flag is set; one fault on the API side clears it', (t) => {
  t.true(planOracleOptions(config, plan('scale', [crash])).faultsOnManagedSystemOnly);
  t.true(planOracleOptions(config, plan('scale', [crash, evict, appDown])).faultsOnManagedSystemOnly);
  t.false(planOracleOptions(config, plan('scale', [crash, controllerCrash])).faultsOnManagedSystemOnly);
  t.false(planOracleOptions(config, plan('scale', [staleView])).faultsOnManagedSystemOnly);
  t.false(planOracleOptions(config, plan('scale', [controllerCrash])).faultsOnManagedSystemOnly);
});

test("a plan's run takes the masks and counted updates of its own workload and those of every workload", (t) => {
  const scale = planOracleOptions(config, plan('scale', [crash]));
  t.deepEqual(scale.extraMasks, [
    { keyGlob: 'ConfigMap/default/*', paths: [] },
    { keyGlob: 'Secret/default/s', paths: ['data'] },
  ]);
  t.deepEqual(scale.countUpdates, []);
  const recreate = planOracleOptions(config, plan('recreate', [crash]));
  t.deepEqual(recreate.extraMasks, [{ keyGlob: 'ConfigMap/default/*', paths: [] }]);
  t.deepEqual(recreate.countUpdates, [{ keyGlob: 'Pod/default/*', paths: ['metadata.deletionTimestamp'] }]);
});
