/**
 * End-state oracle: the objects a test run leaves behind must match what the reference runs left,
 * field by field, once masked fields are set aside.
 */
import type { KubeObject, ObjectKey } from '../src/model/object-key.js';
import { ABSENT, type Alarm } from '../src/model/results.js';
import { formatPath, type FieldPath } from '../src/model/field-path.js';
import { formatReferenceValues, formatValue } from './format.js';
import { isPathMasked, type Masks, type ObjectMask } from './masks.js';
import { containsUid, withoutUids, type EndStateView } from './object-identity.js';
import { childSlots, distinctValues, looksLikeIP, looksLikeTimestamp, namesAnAddress, semanticEqual } from './semantic.js';
import type { VersionCopies } from './version-copies.js';

const ORACLE = 'end-state';

/** `copies`: the labels and annotations that copy a resourceVersion (version-copies.ts), given the runs' traces. */
export function compareEndStates(references: readonly EndStateView[], test: EndStateView, masks: Masks, copies?: VersionCopies): Alarm[] {
  const alarms: Alarm[] = [];
  const keys = new Set<ObjectKey>(test.named.keys());
  for (const r of references) for (const k of r.named.keys()) keys.add(k);
  for (const key of keys) {
    const mask = masks.forObject(key);
    if (mask.whole) continue;
    const refs = references.map((r) => r.named.get(key));
    const testObj = test.named.get(key);
    compareObject(key, refs, testObj, { mask, copies }, alarms);
  }
  compareGeneratedCounts(references, test, masks, alarms);
  return alarms;
}

/** What a field is compared with besides the values: the object's masks, and which fields copy a resourceVersion. */
interface FieldRules {
  mask: ObjectMask;
  copies: VersionCopies | undefined;
}

function compareObject(key: ObjectKey, refs: Array<KubeObject | undefined>, test: KubeObject | undefined, rules: FieldRules, alarms: Alarm[]): void {
  const { mask } = rules;
  // Presence that differs between references is learned as a whole-object mask, so the references agree here.
  const refPresent = refs[0] !== undefined;
  if (refPresent && test === undefined) {
    alarms.push({
      oracle: ORACLE,
      check: 'missing',
      object: key,
      reference: distinctValues(refs.map((r) => withoutMaskedFields(r, mask))),
      test: ABSENT,
      message: `${key}: exists after reference runs, but is absent after the test run`,
    });
    return;
  }
  if (!refPresent && test !== undefined) {
    alarms.push({
      oracle: ORACLE,
      check: 'unexpected',
      object: key,
      reference: [ABSENT],
      test: withoutMaskedFields(test, mask),
      message: `${key}: is absent after reference runs, but exists after the test run`,
    });
    return;
  }
  if (test === undefined) return;
  compareValues(key, refs, test, [], rules, alarms);
}

/**
 * Walks reference and test values together. Maps and lists are descended so that each alarm names
 * a leaf field (list items by key where the list is keyed, see semantic.ts); a field present on one
 * side only is reported leaf by leaf, against ABSENT.
 */
function compareValues(key: ObjectKey, refs: readonly unknown[], test: unknown, path: FieldPath, rules: FieldRules, alarms: Alarm[]): void {
  if (path.length > 0 && isPathMasked(rules.mask, path)) return;
  const last = path[path.length - 1];
  const fieldName = typeof last === 'string' ? last : undefined;
  const all = [...refs, test];
  const slots = childSlots(all, fieldName, ABSENT);
  if (slots) {
    for (const slot of slots) compareValues(key, refs.map(slot.pick), slot.pick(test), [...path, slot.segment], rules, alarms);
    return;
  }
  // A leaf, an empty map or list, or values of different types.
  if (refs.every((r) => semanticEqual(r, test, fieldName))) return;
  // Timestamps and addresses differ from run to run; only whether the field is there at all is compared.
  if (all.every(looksLikeTimestamp)) return;
  if (all.every(looksLikeIP) && path.some(namesAnAddress)) return;
  // Values that name an object by its UID (`volumeName: pvc-<uid>`) differ only in the UID.
  if (all.every(containsUid) && all.every((v) => withoutUids(v as string) === withoutUids(all[0] as string))) return;
  // A label or annotation that copies an object's resourceVersion counts that object's writes.
  if (rules.copies?.explains(path, refs, test)) return;
  const reference = distinctValues(refs, fieldName);
  const field = formatPath(path);
  alarms.push({
    oracle: ORACLE,
    check: 'value',
    object: key,
    field,
    reference,
    test,
    message: `${key}: ${field} is ${formatReferenceValues(reference)} after reference runs, but ${formatValue(test)} after the test run`,
  });
}

/** An object as the oracle compares it: built-in, learned and user-masked fields left out (for alarms). */
export function withoutMaskedFields(obj: unknown, mask: ObjectMask, path: FieldPath = []): unknown {
  const last = path[path.length - 1];
  const slots = childSlots([obj], typeof last === 'string' ? last : undefined, ABSENT);
  if (!slots) return obj;
  const kept = slots.filter((s) => !isPathMasked(mask, [...path, s.segment]));
  if (Array.isArray(obj)) return kept.map((s) => withoutMaskedFields(s.pick(obj), mask, [...path, s.segment]));
  const out: Record<string, unknown> = {};
  for (const s of kept) out[s.segment as string] = withoutMaskedFields(s.pick(obj), mask, [...path, s.segment]);
  return out;
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
      check: 'generated-count',
      object: key,
      reference: refCounts,
      test: testCount,
      message: `${key}: ${String(refCounts[0])} object(s) with this generated name after reference runs, but ${testCount} after the test run`,
    });
  }
}
