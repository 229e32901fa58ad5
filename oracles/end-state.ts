/**
 * End-state oracle: the objects a test run leaves behind must match what the reference runs left,
 * field by field, once masked fields are set aside.
 */
import { isObject, type KubeObject, type ObjectKey } from '../src/model/object-key.js';
import { ABSENT, type Alarm } from '../src/model/results.js';
import { formatPath, type FieldPath } from './field-path.js';
import { formatReferenceValues, formatValue } from './format.js';
import { isPathMasked, type Masks, type ObjectMask } from './masks.js';
import type { EndStateView } from './object-identity.js';
import { distinctValues, looksLikeTimestamp, semanticEqual } from './semantic.js';

const ORACLE = 'end-state';

export function compareEndStates(references: readonly EndStateView[], test: EndStateView, masks: Masks): Alarm[] {
  const alarms: Alarm[] = [];
  const keys = new Set<ObjectKey>(test.named.keys());
  for (const r of references) for (const k of r.named.keys()) keys.add(k);
  for (const key of keys) {
    const mask = masks.forObject(key);
    if (mask.whole) continue;
    const refs = references.map((r) => r.named.get(key));
    const testObj = test.named.get(key);
    compareObject(key, refs, testObj, mask, alarms);
  }
  compareGeneratedCounts(references, test, masks, alarms);
  return alarms;
}

function compareObject(key: ObjectKey, refs: Array<KubeObject | undefined>, test: KubeObject | undefined, mask: ObjectMask, alarms: Alarm[]): void {
  // Presence that differs between references is learned as a whole-object mask, so the references agree here.
  const refPresent = refs[0] !== undefined;
  if (refPresent && test === undefined) {
    alarms.push({
      oracle: ORACLE,
      object: key,
      reference: distinctValues(refs),
      test: ABSENT,
      message: `${key}: exists after reference runs, but is absent after the test run`,
    });
    return;
  }
  if (!refPresent && test !== undefined) {
    alarms.push({
      oracle: ORACLE,
      object: key,
      reference: [ABSENT],
      test,
      message: `${key}: is absent after reference runs, but exists after the test run`,
    });
    return;
  }
  if (test === undefined) return;
  compareValues(key, refs, test, [], mask, alarms);
}

/**
 * Walks reference and test values together. Maps and lists are descended so that each alarm names
 * a leaf field; a field present on one side only is reported leaf by leaf, against ABSENT.
 */
function compareValues(key: ObjectKey, refs: readonly unknown[], test: unknown, path: FieldPath, mask: ObjectMask, alarms: Alarm[]): void {
  if (path.length > 0 && isPathMasked(mask, path)) return;
  const all = [...refs, test];
  const present = all.filter((v) => v !== ABSENT);
  if (present.length > 0 && present.every(isObject)) {
    const children = new Set<string>();
    for (const v of present as Record<string, unknown>[]) for (const k of Object.keys(v)) children.add(k);
    if (children.size > 0) {
      for (const k of [...children].sort()) {
        const child = (v: unknown): unknown => (isObject(v) && Object.prototype.hasOwnProperty.call(v, k) ? v[k] : ABSENT);
        compareValues(key, refs.map(child), child(test), [...path, k], mask, alarms);
      }
      return;
    }
  } else if (present.length > 0 && present.every(Array.isArray)) {
    const len = Math.max(...(present as unknown[][]).map((a) => a.length));
    if (len > 0) {
      for (let i = 0; i < len; i++) {
        const item = (v: unknown): unknown => (Array.isArray(v) && i < v.length ? v[i] : ABSENT);
        compareValues(key, refs.map(item), item(test), [...path, i], mask, alarms);
      }
      return;
    }
  }
  // A leaf, an empty map or list, or values of different types.
  if (refs.every((r) => semanticEqual(r, test))) return;
  // Timestamps differ from run to run; only whether the field is there at all is compared.
  if (all.every(looksLikeTimestamp)) return;
  const reference = distinctValues(refs);
  const field = formatPath(path);
  alarms.push({
    oracle: ORACLE,
    object: key,
    field,
    reference,
    test,
    message: `${key}: ${field} is ${formatReferenceValues(reference)} after reference runs, but ${formatValue(test)} after the test run`,
  });
}

function compareGeneratedCounts(references: readonly EndStateView[], test: EndStateView, masks: Masks, alarms: Alarm[]): void {
  const keys = new Set<ObjectKey>(test.generated.keys());
  for (const r of references) for (const k of r.generated.keys()) keys.add(k);
  for (const key of keys) {
    if (masks.forObject(key).whole) continue;
    const refCounts = distinctValues(references.map((r) => r.generated.get(key) ?? 0));
    const testCount = test.generated.get(key) ?? 0;
    if (refCounts.length !== 1 || refCounts[0] === testCount) continue;
    alarms.push({
      oracle: ORACLE,
      object: key,
      reference: refCounts,
      test: testCount,
      message: `${key}: ${String(refCounts[0])} object(s) with this generated name after reference runs, but ${testCount} after the test run`,
    });
  }
}
