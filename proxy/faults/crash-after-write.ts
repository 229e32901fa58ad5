/**
 * The crash-after-write fault: right after the matching write completes upstream (before the
 * controller gets the answer), hold everything of the controller's connection epoch and tell the
 * coordinator, which kills the process; the held answer is never delivered.
 */
import { describeWrite, type WriteTrigger } from '../../src/model/plan.js';
import type { Epoch } from '../epoch.js';
import { faultIndexField, type FaultContext } from './context.js';
import type { ArmedTrigger, TriggerBoard } from './triggers.js';

export interface CrashTriggered {
  requestId: number;
  description: string;
}

export function armCrashAfterWrite(
  ctx: FaultContext,
  triggers: TriggerBoard,
  currentEpoch: () => Epoch,
  trigger: WriteTrigger,
  onTriggered: (info: CrashTriggered) => void,
  faultIndex?: number,
): ArmedTrigger {
  const t = { ...trigger };
  return triggers.arm({ write: t }, (info, epoch) => {
    (epoch ?? currentEpoch()).gate.hold();
    const description = describeWrite(t);
    ctx.record({
      fault: 'crash-after-write',
      phase: 'triggered',
      ...(info.requestId !== undefined ? { requestId: info.requestId } : {}),
      ...faultIndexField(faultIndex),
      key: t.key,
      detail: `the controller ${description}; holding it until it is killed`,
    });
    onTriggered({ requestId: info.requestId ?? 0, description });
  });
}
