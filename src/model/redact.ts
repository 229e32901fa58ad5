/**
 * Secret values never reach a report: in alarms and diffs about Secrets, the values under `data`
 * and `stringData` are replaced by the same stable hash the traces use, so equal values still look
 * equal and different ones different.
 */
import { isObject, type ObjectKey } from './object-key.js';
import type { Alarm } from './results.js';
import { hashSecretValue, isHashedSecretValue } from './secret-hash.js';

function isSecretKey(key: ObjectKey): boolean {
  return key.startsWith('Secret/');
}

function hash(value: unknown): unknown {
  return typeof value === 'string' && !isHashedSecretValue(value) ? hashSecretValue(value) : value;
}

function redactData(data: unknown): unknown {
  if (!isObject(data)) return hash(data);
  return Object.fromEntries(Object.entries(data).map(([k, v]) => [k, hash(v)]));
}

/** A copy of `obj` with its Secret values hashed (objects of other kinds are returned as they are). */
export function redactObject(key: ObjectKey, obj: unknown): unknown {
  if (!isSecretKey(key) || !isObject(obj)) return obj;
  const out: Record<string, unknown> = { ...obj };
  for (const f of ['data', 'stringData']) if (f in out) out[f] = redactData(out[f]);
  return out;
}

export function redactAlarm(a: Alarm): Alarm {
  if (!isSecretKey(a.object) || a.oracle !== 'end-state') return a;
  if (a.field === undefined) return { ...a, reference: a.reference.map((r) => redactObject(a.object, r)), test: redactObject(a.object, a.test) };
  if (!/^(data|stringData)\b/.test(a.field)) return a;
  const reference = a.reference.map((r) => (a.field === 'data' || a.field === 'stringData' ? redactData(r) : hash(r)));
  const test = a.field === 'data' || a.field === 'stringData' ? redactData(a.test) : hash(a.test);
  // The message quotes the values: rebuild it from the hashed ones.
  const message = a.message.split(JSON.stringify(a.test)).join(JSON.stringify(test));
  return { ...a, reference, test, message: a.reference.reduce<string>((m, r, i) => m.split(JSON.stringify(r)).join(JSON.stringify(reference[i])), message) };
}
