/**
 * Partial object matching, as KUTTL assert files and chainsaw assertion trees mean it: the expected
 * YAML is a subset of the live object. A mapping matches when every key it names is present and
 * matches (other keys are ignored); a list matches a list of the same length whose items match in
 * order (KUTTL's IsSubset, kyverno-json's "lengths of slices don't match"); anything else must be
 * equal. Numbers compare by value (YAML `1` and JSON `1.0` are one number); a string never equals a
 * number, as in both tools.
 */
import { isObject } from '../model/object-key.js';
import { quote } from '../model/validate.js';

/** Why `actual` does not match `expected` (path and reason), or undefined when it does. */
export function partialMismatch(expected: unknown, actual: unknown, path = ''): string | undefined {
  if (Array.isArray(expected)) {
    if (!Array.isArray(actual)) return `${at(path)}expected a list, found ${shape(actual)}`;
    if (actual.length !== expected.length) return `${at(path)}expected a list of ${expected.length} item(s), found ${actual.length}`;
    for (const [i, item] of expected.entries()) {
      const why = partialMismatch(item, actual[i], `${path}[${i}]`);
      if (why !== undefined) return why;
    }
    return undefined;
  }
  if (isObject(expected)) {
    if (!isObject(actual)) return `${at(path)}expected a mapping, found ${shape(actual)}`;
    for (const [key, value] of Object.entries(expected)) {
      const child = path ? `${path}.${key}` : key;
      if (!(key in actual)) return `${at(child)}missing`;
      const why = partialMismatch(value, actual[key], child);
      if (why !== undefined) return why;
    }
    return undefined;
  }
  if (expected === actual) return undefined;
  return `${at(path)}expected ${quote(expected)}, found ${actual === undefined ? 'nothing' : quote(actual)}`;
}

function at(path: string): string {
  return path ? `${path}: ` : '';
}

function shape(value: unknown): string {
  if (value === undefined) return 'nothing';
  if (Array.isArray(value)) return 'a list';
  if (isObject(value)) return 'a mapping';
  return quote(value);
}
