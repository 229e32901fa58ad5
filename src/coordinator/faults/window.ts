/**
 * A fault on the managed system that lasts for a window (pod-crash, app-unavailable, node-not-ready, pvc-fault): it starts
 * when `at` fires and heals when `until` fires or `forSeconds` have passed, whichever comes first,
 * and at the end of the run at the latest. Both triggers are armed at once, so that their
 * occurrences count from the start of the run, as the planner counted them; an `until` that fired
 * before the start leaves the fault not injected. The start and the heal are `fault` events in the
 * cluster trace (phases `applied` and `healed`), beside the changes they caused.
 */
import { describeTrigger, type Trigger } from '../../model/plan.js';
import type { ObjectKey } from '../../model/object-key.js';
import type { FaultKind } from '../../model/trace.js';
import type { ArmedFault, FaultRun } from './arming.js';

export interface WindowedFault {
  type: FaultKind;
  at: Trigger;
  until?: Trigger;
  forSeconds?: number;
}

export interface WindowEffect {
  /** The object the fault acts on (recorded with its events). */
  key?: ObjectKey;
  /** Starts the fault; why it cannot, if it cannot. */
  start(): string | undefined;
  heal(): void;
  /** What it does, for the trace and the run log. */
  describe: string;
}

export function armWindow(fault: WindowedFault, run: FaultRun, effect: WindowEffect): ArmedFault {
  let state: 'waiting' | 'started' | 'healed' | 'refused' = 'waiting';
  let untilFiredFirst = false;
  let timer: NodeJS.Timeout | undefined;
  let healedSignal: (() => void) | undefined;
  const key = effect.key !== undefined ? { key: effect.key } : {};
  const record = (phase: 'applied' | 'healed', detail: string) =>
    run.managed.clusterTrace.append({ type: 'fault', fault: fault.type, phase, faultIndex: run.index, ...key, detail });

  const heal = (why: string) => {
    if (state !== 'started') return;
    state = 'healed';
    untilArmed?.cancel();
    if (timer) clearTimeout(timer);
    effect.heal();
    record('healed', `healed (${why}): ${effect.describe}`);
    run.log(`  fault healed (${why}): ${effect.describe}`);
    healedSignal?.();
  };

  const untilArmed = fault.until
    ? run.primitives.triggers.arm(fault.until, () => {
        if (state === 'waiting') untilFiredFirst = true;
        else heal(describeTrigger(fault.until!));
      })
    : undefined;

  const atArmed = run.primitives.triggers.arm(fault.at, () => {
    if (untilFiredFirst) {
      state = 'refused';
      run.refuse(`its window's end (${describeTrigger(fault.until!)}) came before its start (${describeTrigger(fault.at)})`);
      return;
    }
    const refused = effect.start();
    if (refused !== undefined) {
      state = 'refused';
      untilArmed?.cancel();
      run.refuse(refused);
      return;
    }
    state = 'started';
    record('applied', effect.describe);
    run.fired();
    run.log(`  fault fired: ${effect.describe}`);
    if (fault.forSeconds !== undefined) {
      run.settleAfter(new Promise<void>((resolve) => (healedSignal = resolve)));
      timer = setTimeout(() => heal(`after ${fault.forSeconds} s`), fault.forSeconds * 1000);
    }
  });

  run.releaseAtEnd(() => {
    heal('the run ended');
    atArmed.cancel();
    untilArmed?.cancel();
  });
  return { whyNotFired: () => atArmed.whyNotFired() };
}
