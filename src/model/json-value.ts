/**
 * Plain JSON values (what Kubernetes objects are on the wire) and the two operations every stage
 * needs on them: a deep copy and a semantic equality that ignores key order.
 */
export type JsonValue = string | number | boolean | null | JsonValue[] | { [key: string]: JsonValue };

/** The HTML structured clone (a global of every JavaScript runtime; the core compiles without DOM or Node types). */
declare function structuredClone<T>(value: T): T;

/** Deep copy of a JSON-compatible value (objects decoded from JSON, never class instances). */
export function cloneJson<T>(value: T): T {
  return structuredClone(value);
}

/**
 * Deep equality as Kubernetes compares objects: key order is irrelevant, array order matters, and an
 * object key holding `undefined` counts as absent (it would not survive JSON encoding).
 */
export function jsonEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a)) {
    const bArr = b as unknown[];
    if (a.length !== bArr.length) return false;
    return a.every((item, i) => jsonEqual(item, bArr[i]));
  }
  const aRec = a as Record<string, unknown>;
  const bRec = b as Record<string, unknown>;
  const aKeys = Object.keys(aRec).filter((k) => aRec[k] !== undefined);
  const bKeys = Object.keys(bRec).filter((k) => bRec[k] !== undefined);
  if (aKeys.length !== bKeys.length) return false;
  return aKeys.every((k) => Object.prototype.hasOwnProperty.call(bRec, k) && jsonEqual(aRec[k], bRec[k]));
}
