/**
 * Field paths as the planner compares them: a path (in the `fields.ts` syntax that change-match.ts
 * writes, `spec.items[0].name`, `data.tls\.crt`) becomes its list of segments joined by NUL, so that
 * "a field and everything under it" is a string prefix test and map keys with dots cannot confuse it.
 */
import { splitFieldPath } from '../src/model/fields.js';
import { isObject } from '../src/model/object-key.js';

export type PathKey = string;
const SEP = '\u0000';

export function pathKey(path: string): PathKey {
  return splitFieldPath(path).map(String).join(SEP);
}

export function segmentsKey(segments: ReadonlyArray<string | number>): PathKey {
  return segments.map(String).join(SEP);
}

/** Does one path contain the other (equal, ancestor or descendant)? Changing either changes both. */
export function pathsOverlap(a: PathKey, b: PathKey): boolean {
  if (a === b || a === '' || b === '') return true;
  return a.length < b.length ? b.startsWith(a + SEP) : a.startsWith(b + SEP);
}

/** The proper ancestors of a path, outermost first: `a.b.c` -> `a`, `a.b`. */
export function ancestorKeys(key: PathKey): PathKey[] {
  const segs = key.split(SEP);
  const out: PathKey[] = [];
  for (let i = 1; i < segs.length; i++) out.push(segs.slice(0, i).join(SEP));
  return out;
}

/** The value under `segments` inside `value` (undefined when absent). */
export function valueAt(value: unknown, segments: ReadonlyArray<string | number>): unknown {
  let cur = value;
  for (const seg of segments) {
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

/**
 * The fields a write sets, as path keys, or `all` when it may set any field: an update (PUT) sends
 * the whole object, so re-sending it writes every field; a body the proxy could not decode (YAML,
 * protobuf) could say anything. Merge and strategic-merge patches set their leaves (a list is one
 * leaf: merge patches replace lists); JSON patches set the paths of their operations.
 */
export function writtenPaths(verb: string, body: unknown): PathKey[] | 'all' {
  if (verb === 'update' || body === undefined) return 'all';
  if (Array.isArray(body)) {
    const out = new Set<PathKey>();
    for (const op of body) {
      if (!isObject(op)) return 'all';
      for (const field of ['path', 'from']) {
        const p = op[field];
        if (typeof p === 'string') out.add(segmentsKey(jsonPointerSegments(p)));
      }
    }
    return [...out].sort();
  }
  if (!isObject(body)) return 'all';
  const out: PathKey[] = [];
  collectLeaves(body, [], out);
  return out.sort();
}

/**
 * The fields a create sets: the leaves of its body (an empty object sets nothing: client libraries
 * send `status: {}`), or `all` when the proxy could not decode the body (protobuf, YAML).
 */
export function createdPaths(body: unknown): PathKey[] | 'all' {
  if (!isObject(body)) return 'all';
  const out: PathKey[] = [];
  collectLeaves(body, [], out, true);
  return out.sort();
}

function collectLeaves(value: Record<string, unknown>, prefix: string[], out: PathKey[], skipEmpty = false): void {
  for (const [k, v] of Object.entries(value)) {
    const segs = [...prefix, k];
    if (isObject(v) && Object.keys(v).length > 0) collectLeaves(v, segs, out, skipEmpty);
    else if (!(skipEmpty && isObject(v))) out.push(segmentsKey(segs));
  }
}

function jsonPointerSegments(pointer: string): string[] {
  if (pointer === '' || pointer === '/') return [];
  return pointer
    .replace(/^\//, '')
    .split('/')
    .map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'));
}
