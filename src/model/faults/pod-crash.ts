/**
 * pod-crash (the managed system fails): from `at` on, a pod's containers fail, as the simulated
 * kubelet reports it (src/cluster/sim/pod-lifecycle.ts), until `until` fires or `forSeconds` have
 * passed; then they run and are ready again.
 * - `crash-loop`: the containers exit with an error and the kubelet restarts them with back-off:
 *   restartCount goes up, the state is waiting CrashLoopBackOff, the Ready condition is False; the
 *   pod's stub applications stop listening while no container runs;
 * - `unready`: the containers keep running but fail their readiness: Ready False, nothing restarts.
 *
 *   - type: pod-crash
 *     pod: Pod/default/r1-node-0
 *     mode: crash-loop
 *     at: { change: { key: Ring/default/r1, change: update, occurrence: 1 } }
 *     forSeconds: 5
 *
 * Needs a simulated kubelet: the embedded cluster and the real control plane (`--real`) have
 * one, a kubeconfig's cluster (`existing`) does not, and the run says the fault was not injected.
 */
import { describeTrigger } from '../trigger.js';
import { declareFault, type FaultOf } from './declare.js';
import { enumField, namespacedKeyField, optionalTriggerField, triggerField } from './fields.js';
import { checkWindowEnd, describeWindowEnd, WINDOW_END_SCHEMA, windowSecondsField } from './window.js';

export const POD_CRASH_MODES = ['crash-loop', 'unready'] as const;
export type PodCrashMode = (typeof POD_CRASH_MODES)[number];

export const podCrash = declareFault({
  type: 'pod-crash',
  simulated: 'the kubelet',
  onManagedSystem: true,
  description: "The managed system fails: a pod's containers crash and restart with back-off (or stay unready) for a window, then recover",
  fields: {
    pod: namespacedKeyField('Pod', 'The pod: Pod/namespace/name'),
    mode: enumField(POD_CRASH_MODES, 'crash-loop: the containers exit with an error and restart with back-off; unready: they run but fail readiness'),
    at: triggerField(),
    until: optionalTriggerField('Heal when this fires (after the fault started)'),
    forSeconds: windowSecondsField(),
  },
  check: checkWindowEnd,
  checkSchema: WINDOW_END_SCHEMA,
  describe: (f) => `${describePodCrash(f.mode, f.pod)} when ${describeTrigger(f.at)}, ${describeWindowEnd(f)}`,
  extraMs: (f) => (f.forSeconds ?? 0) * 1000,
});

export type PodCrashFault = FaultOf<typeof podCrash>;

function describePodCrash(mode: PodCrashMode, pod: string): string {
  return mode === 'crash-loop' ? `crash-loop the containers of ${pod}` : `make ${pod} unready`;
}
