/**
 * Explore's rollback oracle (Acto's recovery oracle): after a step that left the controller refusing
 * its input, the system unhealthy or the CR's value inconsistent with the objects, re-applying the CR
 * before that step must bring back the state before it. The run is a replay of the sequence up to
 * that step followed by the rollback (planner/explore/rollback.ts), on a fresh cluster; the states
 * compared are both from that run, so nothing differs from one run to another but the rollback's
 * effect. Compared with the end-state oracle's comparison and masks, status left out (the cluster's
 * account of the spec), and fields that copy the CR's generation or resourceVersion (bookkeeping,
 * judge.ts `counterCopies`: they count its writes, and a rollback is one more); and health: an
 * object unhealthy after the rollback that was not before it.
 */
import type { ObjectKey } from '../../src/model/object-key.js';
import type { TraceEvent } from '../../src/model/trace.js';
import type { MaskRule } from '../masks.js';
import { ALLOCATED_AT_CREATION, exitedAfterState, objectDifferenceAlarms } from './differential.js';
import {
  counterCopies,
  controllerWrittenKeys,
  crashAlarms,
  healthAlarms,
  operationStepIndex,
  stateAfterStep,
  type ExploreAlarm,
  type SequenceJudgement,
  type SequenceRun,
} from './judge.js';

export interface RollbackTarget {
  /** The 1-based step to roll back. */
  step: number;
  /** Why: the controller refused its input (the sequence then goes on after the rollback), or it left the system unhealthy or inconsistent. */
  why: 'refused' | 'unhealthy' | 'inconsistent';
}

/**
 * The steps of a judged sequence to roll back: the first that alarmed or left an object unhealthy
 * that was not before it, and the one whose input the controller refused. A refused input is rolled
 * back whatever its kind: as after the API server's refusal, the previous CR is the reference for the
 * next step (Acto), and the rest of the sequence runs on it. Otherwise misoperations are left out:
 * their sequences already step back, and they are judged by that recovery.
 */
export function rollbackTargets(judgement: SequenceJudgement, run: SequenceRun): RollbackTarget[] {
  const targets: RollbackTarget[] = [];
  const n = run.sequence.steps.length;
  let broken = false;
  for (const s of judgement.steps) {
    if (s.kind === 'rollback') continue;
    if (s.verdict === 'rejected' && s.rejectedBy === 'controller') {
      targets.push({ step: s.step, why: 'refused' });
      break;
    }
    if (s.kind === 'misoperation') continue;
    if (broken || (s.verdict !== 'ok' && s.verdict !== 'alarm')) continue;
    if (s.verdict === 'alarm') {
      targets.push({ step: s.step, why: 'inconsistent' });
      broken = true;
      continue;
    }
    const before = stateAfterStep(run.events, s.step - 2, n);
    const after = stateAfterStep(run.events, s.step - 1, n);
    if (!before || !after) continue;
    const wasUnhealthy = new Set(healthAlarms(before, '').map((a) => a.object));
    if (healthAlarms(after, '').some((a) => !wasUnhealthy.has(a.object))) {
      targets.push({ step: s.step, why: 'unhealthy' });
      broken = true;
    }
  }
  return targets;
}

export interface RollbackCase {
  /** The sequence whose step was rolled back, and that step (1-based). */
  sequence: string;
  step: number;
  why: RollbackTarget['why'];
  crKey: ObjectKey;
  /** The rollback run's trace: the sequence's steps up to `step`, then the rollback step. */
  events: readonly TraceEvent[];
  /** Operation steps in the rollback run. */
  steps: number;
}

/** The rollback's alarms; undefined when the rollback step never ran or the API server refused it (nothing to judge). */
export function rollbackAlarms(c: RollbackCase, maskRules: readonly MaskRule[] = []): ExploreAlarm[] | undefined {
  const done = c.events.find((e) => e.type === 'workload-step' && e.phase === 'done' && e.index === operationStepIndex(c.step));
  if (!done || (done.type === 'workload-step' && done.rejected !== undefined)) return undefined;
  const before = stateAfterStep(c.events, c.step - 2, c.steps);
  const after = stateAfterStep(c.events, c.step, c.steps);
  if (!before || !after) return undefined;
  const why = {
    refused: 'the controller refused its input',
    unhealthy: 'it left the system unhealthy',
    inconsistent: 'it left the objects inconsistent with the CR',
  }[c.why];
  const lead = `re-applying the CR before step ${c.step} (${why}) did not bring back the state before it:`;
  const written = controllerWrittenKeys(c.events, c.crKey);
  const isCopy = counterCopies(c.events, c.crKey, written);
  const alarms = objectDifferenceAlarms(before, after, written, [...ALLOCATED_AT_CREATION, ...maskRules], {
    // A copy of the CR's resourceVersion or generation counts its writes, and a rollback is one more.
    ignore: (a) => {
      const holder = after.get(a.object) ?? before.get(a.object);
      return isCopy(a.object, a.field, a.reference[0], holder) && isCopy(a.object, a.field, a.test, holder);
    },
    oracle: 'rollback',
    sequence: c.sequence,
    step: c.step,
    say: (difference) => `${lead} ${difference.replace('after reference runs', 'before the step').replace('after the test run', 'after the rollback')}`,
  });
  const wasUnhealthy = new Set(healthAlarms(before, c.sequence).map((a) => a.object));
  for (const a of healthAlarms(after, c.sequence))
    if (!wasUnhealthy.has(a.object))
      alarms.push({ ...a, oracle: 'rollback', step: c.step, message: `${lead} ${a.message.replace("at the sequence's end", 'after the rollback')}` });
  return alarms;
}

/**
 * The crash oracle on a rollback run (the sequence replayed up to a step, then the CR before it
 * re-applied): a panic or an exit there that the sequence's own run did not show is an alarm of the
 * step rolled back (the replay met another timing, or the rollback itself crashed the controller:
 * redis-ot-container-kit-operator's `index out of range [-1]` when the pod it execs into was being
 * re-created). `known`: the sequence's own alarms. `compared`: false when the controller exited
 * before the state after the rollback was taken; that state is the dead controller's, not a
 * recovery, and the rollback oracle says nothing of it.
 */
export function rollbackCrash(
  run: Pick<SequenceRun, 'controllerExits' | 'controllerLog' | 'events'>,
  c: { sequence: string; step: number; rollbackRun: string },
  known: readonly ExploreAlarm[],
): { alarms: ExploreAlarm[]; compared: boolean } {
  const seen = new Set(known.filter((a) => a.oracle === 'crash').map((a) => withoutLine(a.message)));
  const alarms = crashAlarms(run, c.sequence)
    .filter((a) => !seen.has(withoutLine(a.message)))
    .map((a) => ({
      ...a,
      step: c.step,
      message: `${a.message.replace(' during the sequence', '')} (in ${c.rollbackRun}: the sequence replayed up to step ${c.step}, then the CR before it re-applied)`,
    }));
  const exits = (run.controllerExits ?? []).filter((e) => !e.expected);
  // The rollback is step `step + 1` of its run.
  return { alarms, compared: exits.length === 0 || exitedAfterState(exits, run.events, c.step + 1) };
}

/** A crash alarm's message without the log line it was read at (two runs print it on different lines). */
const withoutLine = (message: string): string => message.replace(/^controller\.log line \d+: /, '');
