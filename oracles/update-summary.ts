/**
 * Update-summary oracle: how many times each object was created and deleted during the run (from
 * the cluster trace). A test run that creates or deletes an object a different number of times
 * than every reference run did has taken a different path, even if the end state looks right.
 */
import type { ObjectKey } from '../src/model/object-key.js';
import type { Alarm, RunArtifacts } from '../src/model/results.js';
import type { Masks } from './masks.js';
import { comparableIdentity } from './object-identity.js';

const ORACLE = 'update-summary';

interface Counts {
  created: number;
  deleted: number;
}

export function summarizeUpdates(run: RunArtifacts): Map<ObjectKey, Counts> {
  const counts = new Map<ObjectKey, Counts>();
  for (const change of run.clusterChanges) {
    if (change.eventType === 'MODIFIED') continue;
    const id = comparableIdentity(change.key, change.object);
    if (!id) continue;
    const c = counts.get(id.key) ?? { created: 0, deleted: 0 };
    if (change.eventType === 'ADDED') c.created++;
    else c.deleted++;
    counts.set(id.key, c);
  }
  return counts;
}

export function compareUpdateSummaries(references: readonly RunArtifacts[], test: RunArtifacts, masks: Masks): Alarm[] {
  const refSummaries = references.map(summarizeUpdates);
  const testSummary = summarizeUpdates(test);
  const keys = new Set<ObjectKey>(testSummary.keys());
  for (const s of refSummaries) for (const k of s.keys()) keys.add(k);
  const alarms: Alarm[] = [];
  const zero: Counts = { created: 0, deleted: 0 };
  for (const key of keys) {
    if (masks.userMasksWhole(key)) continue;
    const refCounts = refSummaries.map((s) => s.get(key) ?? zero);
    const testCounts = testSummary.get(key) ?? zero;
    // Counts that differ between reference runs are nondeterministic: the key says nothing.
    if (refCounts.some((c) => c.created !== refCounts[0]!.created || c.deleted !== refCounts[0]!.deleted)) continue;
    const ref = refCounts[0] ?? zero;
    for (const what of ['created', 'deleted'] as const) {
      if (ref[what] === testCounts[what]) continue;
      alarms.push({
        oracle: ORACLE,
        object: key,
        reference: [ref[what]],
        test: testCounts[what],
        message: `${key}: ${what} ${ref[what]} time(s) in reference runs, but ${testCounts[what]} time(s) in the test run`,
      });
    }
  }
  return alarms;
}
