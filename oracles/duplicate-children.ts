/**
 * Duplicate children: the named alarm for a create with `generateName` that a controller retried
 * after the first attempt had in fact succeeded (a lost answer, a timeout, a refused status write
 * that recorded it). The API server cannot refuse the retry, since each such create makes a new name,
 * so the run ends with two children of one owner where the reference runs end with one. The
 * end-state oracle sees only "2 objects with this generated name"; this says what it means.
 *
 * Children are grouped by kind, namespace, generateName prefix and controlling owner (kind and
 * name, which are stable across runs; UIDs are not).
 */
import { isGeneratedName } from '../src/model/generated-names.js';
import { controllerRef, formatKey, parseKey, type KubeObject, type ObjectKey } from '../src/model/object-key.js';
import type { Alarm } from '../src/model/results.js';
import type { Masks } from './masks.js';

interface OwnerRef {
  kind?: unknown;
  name?: unknown;
  controller?: unknown;
}

/** `Kind/namespace/<prefix>*` plus the controlling owner, for each generated child; with counts. */
function childCounts(endState: Record<ObjectKey, KubeObject>): Map<string, { family: ObjectKey; owner: string; count: number }> {
  const out = new Map<string, { family: ObjectKey; owner: string; count: number }>();
  for (const [key, obj] of Object.entries(endState)) {
    const meta = obj.metadata;
    const prefix = meta?.generateName;
    const parts = parseKey(key);
    if (!parts || typeof prefix !== 'string' || !isGeneratedName(meta?.name, prefix)) continue;
    const refs = (meta as { ownerReferences?: OwnerRef[] }).ownerReferences ?? [];
    const owner = controllerRef(obj) ?? refs[0];
    if (!owner || typeof owner.kind !== 'string' || typeof owner.name !== 'string') continue;
    const family = formatKey(parts.kind, parts.namespace, `${prefix}*`);
    const ownerText = `${owner.kind} ${owner.name}`;
    const id = `${family} ${ownerText}`;
    const entry = out.get(id) ?? { family, owner: ownerText, count: 0 };
    entry.count++;
    out.set(id, entry);
  }
  return out;
}

/**
 * An alarm per owner that ends the test run with two or more generated children of one family where
 * every reference run ends with exactly one.
 */
export function duplicateChildren(references: ReadonlyArray<Record<ObjectKey, KubeObject>>, test: Record<ObjectKey, KubeObject>, masks: Masks): Alarm[] {
  const refCounts = references.map(childCounts);
  const alarms: Alarm[] = [];
  for (const [id, child] of childCounts(test)) {
    if (child.count < 2 || masks.forObject(child.family).whole) continue;
    if (!refCounts.every((r) => r.get(id)?.count === 1)) continue;
    const prefix = parseKey(child.family)!.name.slice(0, -1);
    alarms.push({
      oracle: 'end-state',
      check: 'duplicate-children',
      object: child.family,
      reference: [1],
      test: child.count,
      message: `${child.family}: ${child.count} children of ${child.owner} created with generateName "${prefix}" after the test run, 1 after reference runs: a generateName create retried after its first attempt had succeeded (duplicate children)`,
    });
  }
  return alarms;
}
