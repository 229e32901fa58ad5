/**
 * Differential oracles: compare what a test run did with what the reference runs did, and raise an
 * alarm for every difference that masks do not explain. Pure: run artifacts in, alarms out.
 *
 * - end state (end-state.ts, with the named duplicate-children alarm of duplicate-children.ts) and
 *   update summaries (update-summary.ts): `compareRuns`;
 * - liveness (liveness.ts) and controller health (health.ts): with those, `runAlarms`;
 * - the verdict (verdict.ts): `judgeTestRun`, and `applyConfirmation` for `test --confirm`.
 */
import type { Alarm, RunArtifacts, RunRecord } from '../src/model/results.js';
import { duplicateChildren } from './duplicate-children.js';
import { compareEndStates } from './end-state.js';
import { compareHealth } from './health.js';
import { livenessAlarms } from './liveness.js';
import { Masks, learnMasks, mergeLearnedMasks, type MaskRule } from './masks.js';
import { endStateView } from './object-identity.js';
import { compareUpdateSummaries, type UpdateCountRule } from './update-summary.js';
import { VersionCopies } from './version-copies.js';
import { decideVerdict, type VerdictDecision } from './verdict.js';

export interface OracleOptions {
  /** The user's masks for this workload, on top of the built-in and learned ones. */
  extraMasks?: MaskRule[];
  /** Key globs of the controller's own objects (its pod when it runs in the cluster): never compared. */
  controllerObjects?: string[];
  /** Fields whose changes the update-summary oracle counts, per key glob. */
  countUpdates?: UpdateCountRule[];
  /**
   * The test run's faults all acted on the managed system (pods, nodes, volumes, applications), none
   * on the controller's view or requests: the update-summary oracle then counts an object replaced
   * with other content as an update (summarizeUpdates).
   */
  faultsOnManagedSystemOnly?: boolean;
  /**
   * Other runs of the same workload: the fields on which they disagree vary from run to run, and
   * are masked as the references' own disagreements are. Recovery's rollback is compared with one
   * run of its own (src/campaign/recovery.ts), which alone cannot say that a generated password is
   * not deterministic; the workload's reference runs can.
   */
  varyingRuns?: readonly RunArtifacts[];
}

/** End-state and update-summary alarms. */
export function compareRuns(references: RunArtifacts[], test: RunArtifacts, options: OracleOptions = {}): Alarm[] {
  if (references.length === 0) throw new Error('compareRuns needs at least one reference run');
  const refViews = references.map((r) => endStateView(r.endState));
  const testView = endStateView(test.endState);
  const learned = mergeLearnedMasks(
    learnMasks(refViews.map((v) => v.named)),
    learnMasks((options.varyingRuns ?? []).map((r) => endStateView(r.endState).named)),
  );
  const masks = new Masks(options.extraMasks ?? [], learned, options.controllerObjects ?? []);
  const duplicates = duplicateChildren(
    references.map((r) => r.endState),
    test.endState,
    masks,
  );
  // The named alarm says what the bare count of generated objects means: keep it instead.
  const named = new Set(duplicates.map((a) => a.object));
  const copies = new VersionCopies(
    references,
    refViews.map((v) => v.named),
    test,
  );
  const endState = compareEndStates(refViews, testView, masks, copies).filter((a) => !(a.check === 'generated-count' && named.has(a.object)));
  const alarms = [
    ...endState,
    ...duplicates,
    ...compareUpdateSummaries(references, test, masks, options.countUpdates ?? [], options.faultsOnManagedSystemOnly ?? false),
  ];
  return alarms.sort(compareAlarms);
}

/** Every oracle's alarms for one run (test or unperturbed): liveness and health first, then state. */
export function runAlarms(references: RunArtifacts[], test: RunArtifacts, record: RunRecord, options: OracleOptions = {}): Alarm[] {
  return [...livenessAlarms(record, references, test), ...compareHealth(references, test), ...compareRuns(references, test, options)];
}

/** The verdict of a test run; the oracles only judge runs whose faults fired. */
export function judgeTestRun(references: RunArtifacts[], test: RunArtifacts, record: RunRecord, options: OracleOptions = {}): VerdictDecision {
  const alarms = record.injected && !record.error ? runAlarms(references, test, record, options) : [];
  return decideVerdict(record, alarms);
}

function compareAlarms(a: Alarm, b: Alarm): number {
  return cmp(a.object, b.object) || cmp(a.oracle, b.oracle) || cmp(a.field ?? '', b.field ?? '') || cmp(a.message, b.message);
}

function cmp(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

export type { MaskRule, ObjectMask } from './masks.js';
export type { UpdateCountRule } from './update-summary.js';
export type { VerdictDecision } from './verdict.js';
export { BUILT_IN_MASK_PATHS, MASKED_KEY_NAMES, learnMasks, globMatches } from './masks.js';
export { parseFieldPattern, formatPath, FieldPathSyntaxError } from '../src/model/field-path.js';
export { summarizeUpdates } from './update-summary.js';
export { semanticEqual, looksLikeTimestamp, looksLikeIP } from './semantic.js';
export { quantitiesEqual } from './quantity.js';
export { scanControllerLog, compareHealth } from './health.js';
export { livenessAlarms } from './liveness.js';
export { duplicateChildren } from './duplicate-children.js';
export { summarizeControllerTrace } from './controller-activity.js';
export { decideVerdict, applyConfirmation, alarmSignature } from './verdict.js';
