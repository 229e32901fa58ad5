/**
 * pvc-fault (the managed system fails): from `at` on, a PersistentVolumeClaim misbehaves as the
 * volume controllers would report it (src/cluster/sim/volume-controller.ts), until `until` fires or
 * `forSeconds` have passed:
 * - `pending`: the claim gets no volume (nothing provisions or binds it) and stays Pending; it must
 *   not be bound yet when the fault starts (trigger on its creation);
 * - `lost`: the bound claim's phase is Lost (the PV controller's ClaimLost warning); at the heal its
 *   volume is found again and the claim is Bound;
 * - `resize-refused`: a grown request is refused as a CSI resizer refuses an infeasible size (the
 *   ControllerResizeError condition, allocatedResourceStatuses ControllerResizeInfeasible, a
 *   VolumeResizeFailed warning); at the heal the resize is retried.
 *
 *   - type: pvc-fault
 *     claim: PersistentVolumeClaim/default/data-kv1-0
 *     mode: resize-refused
 *     at: { change: { key: KVStore/default/kv1, change: update, occurrence: 1 } }
 *     forSeconds: 5
 */
import { describeTrigger } from '../trigger.js';
import { declareFault, type FaultOf } from './declare.js';
import { enumField, namespacedKeyField, optionalTriggerField, triggerField } from './fields.js';
import { checkWindowEnd, describeWindowEnd, WINDOW_END_SCHEMA, windowSecondsField } from './window.js';

export const PVC_FAULT_MODES = ['pending', 'lost', 'resize-refused'] as const;
export type PvcFaultMode = (typeof PVC_FAULT_MODES)[number];

const MODE_TEXT: Record<PvcFaultMode, string> = { pending: 'keep {} Pending', lost: 'make {} lose its volume', 'resize-refused': 'refuse resizing {}' };

export const pvcFault = declareFault({
  type: 'pvc-fault',
  simulated: 'the volume controller',
  onManagedSystem: true,
  description: 'The managed system fails: a PersistentVolumeClaim stays Pending, loses its volume or has its resize refused for a window, then recovers',
  fields: {
    claim: namespacedKeyField('PersistentVolumeClaim', 'The claim: PersistentVolumeClaim/namespace/name'),
    mode: enumField(PVC_FAULT_MODES, 'pending: no volume is bound; lost: the bound claim is Lost; resize-refused: a grown request is refused'),
    at: triggerField(),
    until: optionalTriggerField('Heal when this fires (after the fault started)'),
    forSeconds: windowSecondsField(),
  },
  check: checkWindowEnd,
  checkSchema: WINDOW_END_SCHEMA,
  describe: (f) => `${MODE_TEXT[f.mode].replace('{}', f.claim)} when ${describeTrigger(f.at)}, ${describeWindowEnd(f)}`,
  extraMs: (f) => (f.forSeconds ?? 0) * 1000,
});

export type PvcFault = FaultOf<typeof pvcFault>;
