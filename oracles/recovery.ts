/**
 * Recovery (issue 36, item 6; Arsc's strategies): what brings a run that showed a finding back to
 * the end state of the reference runs. src/campaign/recovery.ts runs the finding's reproducer once
 * more and, once it has settled, tries in order: nothing but time (settle again, longer), restarting
 * the controller, re-applying the workload's last custom resource as applied, rolling back to the
 * custom resource before it; after each it reads the end state, and stops at the first that
 * recovers. These are the rules it judges by, and the finding's recovery. Pure.
 */
import type { Alarm, Recovery, RecoveryAttempt, RecoveryRun, RunArtifacts } from '../src/model/results.js';
import { compareRuns, type OracleOptions } from './index.js';
import { alarmSignature } from './verdict.js';

/**
 * The end-state alarms of a run's state against `references` that the fault-free run (`faultFree`:
 * its alarms against the same references) does not also show: what is still broken. The update
 * summaries are left out: they count what happened during the run, which no recovery undoes. The
 * run's cluster changes so far come with its state: a label that copies a resourceVersion is judged
 * as "a version of its object" (version-copies.ts), and the end state alone has only each object's last.
 */
export function stillBroken(
  references: RunArtifacts[],
  run: Pick<RunArtifacts, 'endState' | 'clusterChanges'>,
  faultFree: readonly Alarm[],
  options: OracleOptions = {},
): Alarm[] {
  const nondeterministic = new Set(faultFree.map(alarmSignature));
  return compareRuns(references, run, options).filter((a) => a.oracle === 'end-state' && !nondeterministic.has(alarmSignature(a)));
}

/**
 * A finding's recovery from the run it was tried on: `time` when the run showed the finding and its
 * end state was already the references' before any attempt (the controller's own reconcile fixed
 * it), or after the first; else the first attempt (in RECOVERY_STRATEGIES order) after which nothing
 * is still broken; `none` when every attempt left something broken (state that needs a human).
 * Undefined when the run could not be carried out, did not show the finding, or tried nothing
 * (`recoveryUnknown` says which).
 */
export function recoveryOf(run: RecoveryRun): Recovery | undefined {
  if (run.error !== undefined) return undefined;
  if (run.before === 0) return run.shown === false ? undefined : 'time';
  const tried = run.attempts.filter((a) => a.skipped === undefined);
  if (tried.length === 0) return undefined;
  return tried.find((a) => a.alarms === 0)?.strategy ?? 'none';
}

/** Why a run's recovery is not known (recoveryOf gave none), in words. */
export function recoveryUnknown(run: RecoveryRun): string {
  if (run.error !== undefined) return run.error;
  if (run.before === 0 && run.shown === false) return 'the recovery run did not show the finding';
  return 'nothing tried';
}

/** The next strategy to try after `attempts`, or undefined when one recovered (or all were tried). */
export function shouldGoOn(attempts: readonly RecoveryAttempt[]): boolean {
  return !attempts.some((a) => a.skipped === undefined && a.alarms === 0);
}
