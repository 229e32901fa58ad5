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
 * A life that the garbage collector ended with its owner (every owner already deleted or being
 * deleted when it went) is the controller having reached that child before its owner went: a
 * controller that makes a child only in a later reconcile than its owner's (a budget once its
 * StatefulSet is found) does so or not by timing. Such lives do not count when the owners' own
 * creations and deletions raise no alarm (see collectedExplains): the owners lived as in the
 * reference runs. An owner with lives of its own the references lack still has its children's
 * extra lives counted (a StatefulSet deleted and created again takes its pods with it), and a
 * child created when its owner was already gone (a stale view's re-creation) counts whatever
 * took it.
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
  /** Of the deletions, those of the garbage collector after the owners went, and those owners' identities. */
  collected: number;
  collectedOwners: Set<ObjectKey>;
}

const noCounts = (): Counts => ({ created: 0, deleted: 0, updated: new Map(), collected: 0, collectedOwners: new Set() });

/** What the run has shown of each uid: its owner identity, and whether it is being deleted or gone. */
type UidStates = Map<string, { id: ObjectKey | undefined; going: boolean }>;

/**
 * The identities of the object's owners when every one of them is known to the run and was already
 * deleted or being deleted (deletionTimestamp) as the object went: the garbage collector's deletion.
 * Undefined for an object without owners, or with an owner still alive or never seen.
 */
function collectedWith(obj: KubeObject | undefined, uids: UidStates): ObjectKey[] | undefined {
  const refs = obj?.metadata?.ownerReferences;
  if (!Array.isArray(refs) || refs.length === 0) return undefined;
  const owners: ObjectKey[] = [];
  for (const ref of refs) {
    const state = isObject(ref) && typeof ref.uid === 'string' ? uids.get(ref.uid) : undefined;
    if (!state?.going || state.id === undefined) return undefined;
    owners.push(state.id);
  }
  return owners;
}

/** Whether some owner of a new object is known to the run and already deleted or being deleted. */
function ownerGoneAtCreation(obj: KubeObject | undefined, uids: UidStates): boolean {
  const refs = obj?.metadata?.ownerReferences;
  if (!Array.isArray(refs)) return false;
  return refs.some((ref) => isObject(ref) && typeof ref.uid === 'string' && uids.get(ref.uid)?.going === true);
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

/**
 * `replacementsAreUpdates`: an object the controller deleted and, with its very next write, created
 * again with other content (spec, data: everything but metadata and status) is one update, not a
 * deletion and a creation: the controller changes a field it does not update in place (ECK deletes
 * and creates a PodDisruptionBudget to change it). Told from the controller's own writes
 * (`controllerActivity.ownWrites`: the create's answer names the resourceVersion of the ADDED);
 * a run without them counts as before. Only where the controller's view is true (faults on the
 * managed system alone): under a stale view the same replacement is the controller following a
 * spec it should know is gone (casskop#321), and counts. A deletion and a creation by others (a
 * claim deleted, and made again by its StatefulSet) or with the same content still count.
 */
export function summarizeUpdates(run: RunArtifacts, countUpdates: readonly UpdateCountRule[] = [], replacementsAreUpdates = false): Map<ObjectKey, Counts> {
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
  const uids: UidStates = new Map();
  // Objects (real keys) created when an owner of theirs was already gone or going: the garbage
  // collector's deletion of such a life is no timing of the controller's but a create from a stale
  // view (children of a deleted owner made again), and it counts.
  const bornOrphaned = new Set<ObjectKey>();
  // Objects (real keys) whose last change was a plain deletion (not disrupted, not collected): a
  // creation next may be their replacement.
  const deleted = new Map<ObjectKey, KubeObject | undefined>();
  const replacements = replacementsAreUpdates ? replacementCreates(run) : new Set<string>();
  const countFieldChanges = (c: Counts, key: ObjectKey, before: unknown, after: unknown) => {
    for (const rule of rules) {
      if (!globMatches(rule.glob, key)) continue;
      for (const f of rule.fields) {
        if (canonicalJson(valuesAt(before, f.pattern)) !== canonicalJson(valuesAt(after, f.pattern))) {
          c.updated.set(f.text, (c.updated.get(f.text) ?? 0) + 1);
        }
      }
    }
  };
  for (const change of run.clusterChanges) {
    const uid = change.object?.metadata?.uid;
    if (uid)
      uids.set(uid, {
        id: comparableIdentity(change.key, change.object)?.key,
        going: change.eventType === 'DELETED' || !!change.object?.metadata?.deletionTimestamp,
      });
    if (change.key.startsWith('Service/')) {
      if (change.eventType === 'DELETED') services.delete(change.key);
      else services.add(change.key);
    }
    const id = comparableIdentity(change.key, change.object);
    if (!id) continue;
    const c = counts.get(id.key) ?? noCounts();
    counts.set(id.key, c);
    const before = previous.get(change.key);
    const replaced = deleted.get(change.key);
    deleted.delete(change.key);
    const replacement = replaced && replacements.has(`${change.key}@${change.resourceVersion}`) && contentOf(replaced) !== contentOf(change.object);
    if (change.eventType === 'ADDED' && replacement) {
      c.deleted--;
      countFieldChanges(c, id.key, replaced, change.object);
    } else if (change.eventType === 'ADDED') {
      c.created++;
      const pending = disrupted.get(id.key) ?? 0;
      if (pending > 0) {
        disrupted.set(id.key, pending - 1);
        recreated.set(id.key, (recreated.get(id.key) ?? 0) + 1);
      }
      const service = serviceOf(change.key, change.object);
      if (service && !services.has(service)) orphans.add(change.key);
      if (ownerGoneAtCreation(change.object, uids)) bornOrphaned.add(change.key);
      else bornOrphaned.delete(change.key);
    } else if (change.eventType === 'DELETED') {
      // An orphan life that ended: neither its creation nor its deletion counts.
      if (orphans.delete(change.key)) c.created--;
      else c.deleted++;
      if (isDisrupted(before) || isDisrupted(change.object)) disrupted.set(id.key, (disrupted.get(id.key) ?? 0) + 1);
      else {
        const owners = bornOrphaned.delete(change.key) ? undefined : collectedWith(change.object ?? (before as KubeObject | undefined), uids);
        if (owners) {
          c.collected++;
          for (const o of owners) c.collectedOwners.add(o);
        } else deleted.set(change.key, change.object);
      }
    } else countFieldChanges(c, id.key, before, change.object);
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

/** `key@resourceVersion` of each create the controller sent right after deleting the same object. */
function replacementCreates(run: RunArtifacts): Set<string> {
  const creates = new Set<string>();
  const writes = run.controllerActivity?.ownWrites ?? [];
  for (let i = 1; i < writes.length; i++) {
    const [previous, write] = [writes[i - 1]!, writes[i]!];
    if (write.verb === 'create' && previous.verb === 'delete' && write.key && write.key === previous.key && write.resourceVersion) {
      creates.add(`${write.key}@${write.resourceVersion}`);
    }
  }
  return creates;
}

/** What an object holds besides its metadata and status (spec, data...), canonical. */
function contentOf(obj: KubeObject | undefined): string {
  if (!obj) return '';
  const { metadata: _metadata, status: _status, ...content } = obj;
  return canonicalJson(content);
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

/**
 * The counts differ only by lives the garbage collector ended with their owners (the reference runs
 * agree, the test run too, once those are left out), and every such owner's own creations and
 * deletions hold: the controller reached a child before its owner went in one run and not in another.
 */
function collectedExplains(refCounts: readonly Counts[], test: Counts, ownerHolds: (owner: ObjectKey) => boolean): boolean {
  const all = [...refCounts, test];
  if (all.every((c) => c.collected === 0)) return false;
  const [created, deleted] = uncollected(test);
  if (!refCounts.every((c) => uncollected(c)[0] === created && uncollected(c)[1] === deleted)) return false;
  return all.every((c) => [...c.collectedOwners].every(ownerHolds));
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

/** Created and deleted counts without the lives the garbage collector ended with their owners. */
const uncollected = (c: Counts): [number, number] => [c.created - c.collected, c.deleted - c.collected];

export function compareUpdateSummaries(
  references: readonly RunArtifacts[],
  test: RunArtifacts,
  masks: Masks,
  countUpdates: readonly UpdateCountRule[] = [],
  replacementsAreUpdates = false,
): Alarm[] {
  const refSummaries = references.map((r) => summarizeUpdates(r, countUpdates, replacementsAreUpdates));
  const testSummary = summarizeUpdates(test, countUpdates, replacementsAreUpdates);
  const keys = new Set<ObjectKey>(testSummary.keys());
  for (const s of refSummaries) for (const k of s.keys()) keys.add(k);
  const zero = noCounts();
  const countsOf = (key: ObjectKey) => ({ refs: refSummaries.map((s) => s.get(key) ?? zero), test: testSummary.get(key) ?? zero });
  // Whether a key's creations and deletions raise no alarm, once its collected lives are accounted for.
  const holds = new Map<ObjectKey, boolean>();
  const countsHold = (key: ObjectKey): boolean => {
    const known = holds.get(key);
    if (known !== undefined) return known;
    holds.set(key, false); // an ownership cycle explains nothing
    const { refs, test: got } = countsOf(key);
    const same = (get: (c: Counts) => number) => refs.some((c) => get(c) !== get(refs[0]!)) || refs.every((c) => get(c) === get(got));
    const result =
      masks.userMasksWhole(key) ||
      skippedDeleteRecreate(refs, got) ||
      (same((c) => c.created) && same((c) => c.deleted)) ||
      collectedExplains(refs, got, countsHold);
    holds.set(key, result);
    return result;
  };
  const alarms: Alarm[] = [];
  for (const key of [...keys].sort()) {
    if (masks.userMasksWhole(key)) continue;
    const { refs: refCounts, test: testCounts } = countsOf(key);
    const counters: Array<{ name: string; get: (c: Counts) => number; field?: string }> = [
      { name: 'created', get: (c) => c.created },
      { name: 'deleted', get: (c) => c.deleted },
    ];
    for (const rule of countUpdates) {
      if (!globMatches(rule.keyGlob, key)) continue;
      for (const p of rule.paths) counters.push({ name: 'updated', field: p, get: (c) => c.updated.get(p) ?? 0 });
    }
    const livesHold = skippedDeleteRecreate(refCounts, testCounts) || collectedExplains(refCounts, testCounts, countsHold);
    for (const counter of counters) {
      if (livesHold && counter.field === undefined) continue;
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
