/**
 * Dotted field paths (`status.phase`, `spec.containers[0].image`, `data.tls\.crt`) over plain JSON.
 * getField reads the user-facing syntax of model/field-path.ts too (`status.conditions[type=Ready].status`,
 * `metadata.labels["app.kubernetes.io/name"]`), so a path written for a mask or printed in an alarm
 * means the same in a wait, a trigger or a field selector.
 */
import { FieldPathSyntaxError, parseFieldPath, valueAtPath } from './field-path.js';
import { isObject } from './object-key.js';

export function splitFieldPath(path: string): Array<string | number> {
  const out: Array<string | number> = [];
  let cur = '';
  for (let i = 0; i < path.length; i++) {
    const ch = path[i]!;
    if (ch === '\\' && i + 1 < path.length) {
      cur += path[++i];
    } else if (ch === '.') {
      if (cur) out.push(cur);
      cur = '';
    } else if (ch === '[') {
      if (cur) out.push(cur);
      cur = '';
      const end = path.indexOf(']', i);
      const idx = path.slice(i + 1, end < 0 ? undefined : end);
      out.push(/^\d+$/.test(idx) ? Number(idx) : idx);
      i = end < 0 ? path.length : end;
    } else {
      cur += ch;
    }
  }
  if (cur) out.push(cur);
  return out;
}

export function getField(obj: unknown, path: string): unknown {
  if (!path.includes('\\') && path.includes('[')) {
    try {
      return valueAtPath(obj, parseFieldPath(path));
    } catch (err) {
      if (!(err instanceof FieldPathSyntaxError)) throw err;
    }
  }
  let cur: unknown = obj;
  for (const seg of splitFieldPath(path)) {
    if (typeof seg === 'number') {
      if (!Array.isArray(cur)) return undefined;
      cur = cur[seg];
    } else {
      if (!isObject(cur)) return undefined;
      cur = cur[seg];
    }
  }
  return cur;
}
