/**
 * Update-summary oracle: how many times each object was created and deleted during the run (from
 * the cluster trace), and optionally how many times chosen fields changed. A test run that creates
 * or deletes an object a different number of times than every reference run did has taken a
 * different path, even if the end state looks right; except when it merely skipped delete-and-
 * recreate cycles (see skippedDeleteRecreate). Counts do not depend on the order of events.
 * A life of an Endpoints or EndpointSlice object that begins while its Service does not exist and
 * ends within the run is not counted (see serviceOf). Nor is a pod's deletion that the cluster
 * disrupted (its last state has the DisruptionTarget condition: an eviction, the taint manager, a
 * preemption; a managed-system fault's doing), nor its owner's recreation of it. A disrupted deletion
 * that nothing recreated counts as a deletion: the object is gone as a deletion leaves it (a pod a
 * scale-down would have deleted, evicted first).
 */
import { formatKey, isObject, parseKey, type KubeObject, type ObjectKey } from '../src/model/object-key.js';
import type { Alarm, RunArtifacts } from '../src/model/results.js';
import { ANY_SEGMENT, isKeyedSegment, parseFieldPattern, type FieldPattern } from '../src/model/field-path.js';
import { globMatches, type Masks, type MaskRule } from './masks.js';
import { comparableIdentity } from './object-identity.js';
import { canonicalJson } from './semantic.js';

const ORACLE = 'update-summary';

interface Counts {
  created: number;
  deleted: number;
  /** Changes of each counted field (by its path as written in the rule). */
  updated: Map<string, number>;
}

/** Fields whose changes are counted, per object key glob (same shape as a mask rule). */
export type UpdateCountRule = MaskRule;

/**
 * The Service an Endpoints object (same name) or an EndpointSlice (label
 * `kubernetes.io/service-name`) is derived from. The real endpoints controllers sync a Service from
 * their informer cache, which can still hold a Service the API server has just deleted: they then
 * create its Endpoints again, and delete them on their next sync (kubernetes/kubernetes#47711,
 * #91287). Such a life, begun while the Service is gone and ended again within the run, is the
 * cluster's own race, whatever the controller under test did; it is not counted.
 */
function serviceOf(key: ObjectKey, obj: KubeObject | undefined): ObjectKey | undefined {
  const parts = parseKey(key);
  if (!parts || parts.namespace === undefined) return undefined;
  if (parts.kind === 'Endpoints') return formatKey('Service', parts.namespace, parts.name);
  const label = obj?.metadata?.labels?.['kubernetes.io/service-name'];
  if (parts.kind === 'EndpointSlice' && typeof label === 'string') return formatKey('Service', parts.namespace, label);
  return undefined;
}

export function summarizeUpdates(run: RunArtifacts, countUpdates: readonly UpdateCountRule[] = []): Map<ObjectKey, Counts> {
  const rules = countUpdates.map((r) => ({ glob: r.keyGlob, fields: r.paths.map((p) => ({ text: p, pattern: parseFieldPattern(p) })) }));
  const counts = new Map<ObjectKey, Counts>();
  // Deletions the cluster disrupted, by identity: awaiting a recreation, and those followed by one
  // (neither they nor the recreations they caused count).
  const disrupted = new Map<ObjectKey, number>();
  const recreated = new Map<ObjectKey, number>();
  // The previous state of each object (by its real key), to tell which fields a MODIFIED changed.
  const previous = new Map<ObjectKey, unknown>();
  // Services that exist (real keys), and Endpoints/EndpointSlices created while their Service did not.
  const services = new Set<ObjectKey>();
  const orphans = new Set<ObjectKey>();
  for (const change of run.clusterChanges) {
    if (change.key.startsWith('Service/')) {
      if (change.eventType === 'DELETED') services.delete(change.key);
      else services.add(change.key);
    }
    const id = comparableIdentity(change.key, change.object);
    if (!id) continue;
    const c = counts.get(id.key) ?? { created: 0, deleted: 0, updated: new Map() };
    counts.set(id.key, c);
    const before = previous.get(change.key);
    if (change.eventType === 'ADDED') {
      c.created++;
      const pending = disrupted.get(id.key) ?? 0;
      if (pending > 0) {
        disrupted.set(id.key, pending - 1);
        recreated.set(id.key, (recreated.get(id.key) ?? 0) + 1);
      }
      const service = serviceOf(change.key, change.object);
      if (service && !services.has(service)) orphans.add(change.key);
    } else if (change.eventType === 'DELETED') {
      // An orphan life that ended: neither its creation nor its deletion counts.
      if (orphans.delete(change.key)) c.created--;
      else c.deleted++;
      if (isDisrupted(before) || isDisrupted(change.object)) disrupted.set(id.key, (disrupted.get(id.key) ?? 0) + 1);
    } else {
      for (const rule of rules) {
        if (!globMatches(rule.glob, id.key)) continue;
        for (const f of rule.fields) {
          if (canonicalJson(valuesAt(before, f.pattern)) !== canonicalJson(valuesAt(change.object, f.pattern))) {
            c.updated.set(f.text, (c.updated.get(f.text) ?? 0) + 1);
          }
        }
      }
    }
    if (change.eventType === 'DELETED') previous.delete(change.key);
    else previous.set(change.key, change.object);
  }
  for (const [key, n] of recreated) {
    const c = counts.get(key)!;
    c.deleted -= n;
    c.created -= n;
  }
  return counts;
}

/** A pod state that says the cluster is removing it (DisruptionTarget True). */
function isDisrupted(obj: unknown): boolean {
  if (!isObject(obj) || !isObject(obj.status) || !Array.isArray(obj.status.conditions)) return false;
  return obj.status.conditions.some((c) => isObject(c) && c.type === 'DisruptionTarget' && c.status === 'True');
}

/**
 * The test run skipped delete-and-recreate cycles the references went through (fewer creations and
 * deletions, the same balance): a restarted controller that finds the object already as it should be
 * has no reason to replace it, and the end-state oracle still compares what is left. Extra cycles
 * (an object deleted and recreated, as a PVC whose data is lost) and a different balance alarm.
 */
function skippedDeleteRecreate(refCounts: readonly Counts[], test: Counts): boolean {
  const ref = refCounts[0];
  if (!ref || refCounts.some((c) => c.created !== ref.created || c.deleted !== ref.deleted)) return false;
  return test.created <= ref.created && test.deleted <= ref.deleted && test.created - test.deleted === ref.created - ref.deleted;
}

/** Every value the pattern names in `obj` (wildcards expand), in document order. */
function valuesAt(obj: unknown, pattern: FieldPattern): unknown[] {
  let current: unknown[] = [obj];
  for (const seg of pattern) {
    const next: unknown[] = [];
    for (const v of current) {
      if (seg === ANY_SEGMENT) {
        if (Array.isArray(v)) next.push(...v);
        else if (isObject(v)) next.push(...Object.values(v));
      } else if (isKeyedSegment(seg)) {
        if (Array.isArray(v)) next.push(...v.filter((item) => isObject(item) && String(item[seg.key]) === String(seg.value)));
      } else if (typeof seg === 'number') {
        if (Array.isArray(v) && seg < v.length) next.push(v[seg]);
      } else if (isObject(v) && Object.prototype.hasOwnProperty.call(v, seg)) next.push(v[seg]);
    }
    current = next;
  }
  return current;
}

export function compareUpdateSummaries(
  references: readonly RunArtifacts[],
  test: RunArtifacts,
  masks: Masks,
  countUpdates: readonly UpdateCountRule[] = [],
): Alarm[] {
  const refSummaries = references.map((r) => summarizeUpdates(r, countUpdates));
  const testSummary = summarizeUpdates(test, countUpdates);
  const keys = new Set<ObjectKey>(testSummary.keys());
  for (const s of refSummaries) for (const k of s.keys()) keys.add(k);
  const alarms: Alarm[] = [];
  const zero: Counts = { created: 0, deleted: 0, updated: new Map() };
  for (const key of [...keys].sort()) {
    if (masks.userMasksWhole(key)) continue;
    const refCounts = refSummaries.map((s) => s.get(key) ?? zero);
    const testCounts = testSummary.get(key) ?? zero;
    const counters: Array<{ name: string; get: (c: Counts) => number; field?: string }> = [
      { name: 'created', get: (c) => c.created },
      { name: 'deleted', get: (c) => c.deleted },
    ];
    for (const rule of countUpdates) {
      if (!globMatches(rule.keyGlob, key)) continue;
      for (const p of rule.paths) counters.push({ name: 'updated', field: p, get: (c) => c.updated.get(p) ?? 0 });
    }
    const skippedCycles = skippedDeleteRecreate(refCounts, testCounts);
    for (const counter of counters) {
      if (skippedCycles && counter.field === undefined) continue;
      const ref = refCounts.map(counter.get);
      const got = counter.get(testCounts);
      // Counts that differ between reference runs are nondeterministic: the key says nothing.
      if (ref.some((n) => n !== ref[0]) || ref[0] === got) continue;
      const what = counter.field ? `${counter.field} changed` : counter.name;
      alarms.push({
        oracle: ORACLE,
        check: counter.name as 'created' | 'deleted' | 'updated',
        object: key,
        ...(counter.field ? { field: counter.field } : {}),
        reference: [ref[0]],
        test: got,
        message: `${key}: ${what} ${ref[0]} time(s) in reference runs, but ${got} time(s) in the test run`,
      });
    }
  }
  return alarms;
}
