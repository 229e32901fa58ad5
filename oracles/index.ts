/**
 * Differential oracles: compare what a test run did with what the reference runs did, and raise an
 * alarm for every difference that masks do not explain. Pure: run artifacts in, alarms out.
 */
import type { Alarm, RunArtifacts } from '../src/model/results.js';
import { compareEndStates } from './end-state.js';
import { Masks, learnMasks, type MaskRule } from './masks.js';
import { endStateView } from './object-identity.js';
import { compareUpdateSummaries } from './update-summary.js';

export interface OracleOptions {
  /** The user's masks for this workload, on top of the built-in and learned ones. */
  extraMasks?: MaskRule[];
}

export function compareRuns(references: RunArtifacts[], test: RunArtifacts, options: OracleOptions = {}): Alarm[] {
  if (references.length === 0) throw new Error('compareRuns needs at least one reference run');
  const refViews = references.map((r) => endStateView(r.endState));
  const testView = endStateView(test.endState);
  const masks = new Masks(options.extraMasks ?? [], learnMasks(refViews.map((v) => v.named)));
  const alarms = [...compareEndStates(refViews, testView, masks), ...compareUpdateSummaries(references, test, masks)];
  return alarms.sort(compareAlarms);
}

function compareAlarms(a: Alarm, b: Alarm): number {
  return cmp(a.object, b.object) || cmp(a.oracle, b.oracle) || cmp(a.field ?? '', b.field ?? '') || cmp(a.message, b.message);
}

function cmp(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

export type { MaskRule, ObjectMask } from './masks.js';
export { BUILT_IN_MASK_PATHS, MASKED_KEY_NAMES, learnMasks, globMatches } from './masks.js';
export { parseFieldPattern, formatPath, FieldPathSyntaxError } from './field-path.js';
export { summarizeUpdates } from './update-summary.js';
export { semanticEqual, looksLikeTimestamp } from './semantic.js';
