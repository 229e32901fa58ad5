/**
 * Field paths inside objects, written the way users and alarms name them: dotted keys, `[i]` for
 * list items, `[name=web]` for items of lists keyed by a field (containers, env, conditions by
 * type...; see semantic.ts), `["a.b/c"]` for keys that contain dots (labels, annotations), and
 * `*` / `[*]` in mask patterns to match any key or item.
 *
 *   data.password   status.conditions[type=Ready].status   metadata.labels["app.kubernetes.io/name"]
 *   spec.template.spec.containers[name=web].image   metadata.ownerReferences[*].uid
 */
/** The item of a keyed list whose `key` field equals `value`. */
export interface KeyedSegment {
  readonly key: string;
  readonly value: string | number;
}
export type PathSegment = string | number | KeyedSegment;
export type FieldPath = readonly PathSegment[];

export function isKeyedSegment(seg: unknown): seg is KeyedSegment {
  return typeof seg === 'object' && seg !== null && 'key' in seg && 'value' in seg;
}

const KEYED_VALUE_PLAIN = /^[A-Za-z0-9_.:/@+-]+$/;

/** Matches any one key or list index in a pattern. */
export const ANY_SEGMENT: unique symbol = Symbol('any');
export type PatternSegment = PathSegment | typeof ANY_SEGMENT;
export type FieldPattern = readonly PatternSegment[];

const PLAIN_KEY = /^[^.[\]"*\s]+$/;

export function formatPath(path: FieldPath): string {
  let out = '';
  for (const seg of path) {
    if (typeof seg === 'number') out += `[${seg}]`;
    else if (isKeyedSegment(seg)) {
      const v = String(seg.value);
      out += `[${seg.key}=${typeof seg.value === 'string' && !KEYED_VALUE_PLAIN.test(v) ? JSON.stringify(v) : v}]`;
    } else if (PLAIN_KEY.test(seg)) out += out === '' ? seg : `.${seg}`;
    else out += `[${JSON.stringify(seg)}]`;
  }
  return out;
}

export class FieldPathSyntaxError extends Error {
  constructor(
    readonly path: string,
    readonly expected: string,
  ) {
    super(`field path ${JSON.stringify(path)}: expected ${expected}`);
    this.name = 'FieldPathSyntaxError';
  }
}

/** Parses a mask path; `""` is the whole object. Throws FieldPathSyntaxError. */
export function parseFieldPattern(text: string): FieldPattern {
  const segs: PatternSegment[] = [];
  let i = 0;
  const fail = (expected: string): never => {
    throw new FieldPathSyntaxError(text, `${expected} at character ${i + 1}`);
  };
  const readName = (): void => {
    let j = i;
    while (j < text.length && text[j] !== '.' && text[j] !== '[') j++;
    const name = text.slice(i, j);
    if (name === '') fail('a field name');
    if (name === '*') segs.push(ANY_SEGMENT);
    else if (name.includes(']') || name.includes('"')) fail('a field name without ] or "');
    else segs.push(name);
    i = j;
  };
  if (text === '') return segs;
  if (text[0] !== '[') readName();
  while (i < text.length) {
    if (text[i] === '.') {
      i++;
      readName();
    } else if (text[i] === '[') {
      const keyed = /^\[([A-Za-z_][\w-]*)=/.exec(text.slice(i));
      const valueStart = keyed ? i + keyed[0].length : i + 1;
      const close = text[valueStart] === '"' ? findClosingQuote(text, valueStart + 1) + 1 : text.indexOf(']', valueStart);
      if (close <= i || text[close] !== ']') fail('a closing ]');
      const inner = text.slice(i + 1, close);
      if (keyed) {
        const raw = text.slice(valueStart, close);
        let value = raw;
        if (raw.startsWith('"')) {
          try {
            value = JSON.parse(raw) as string;
          } catch {
            fail('a JSON string after =');
          }
        } else if (raw === '') fail('a value after =');
        segs.push({ key: keyed[1]!, value });
      } else if (inner === '*') segs.push(ANY_SEGMENT);
      else if (/^\d+$/.test(inner)) segs.push(Number(inner));
      else if (inner.startsWith('"')) {
        try {
          segs.push(JSON.parse(inner) as string);
        } catch {
          fail('a JSON string inside [ ]');
        }
      } else fail('a list index, *, key=value or a quoted key inside [ ]');
      i = close + 1;
    } else fail('. or [');
  }
  return segs;
}

function findClosingQuote(text: string, from: number): number {
  for (let j = from; j < text.length; j++) {
    if (text[j] === '\\') j++;
    else if (text[j] === '"') return j;
  }
  return -1;
}

/**
 * The value a path names inside `obj` (undefined when absent): `[i]` indexes a list, `[type=Ready]`
 * picks the first list item whose `type` field equals the value (compared as text, as alarms print it).
 */
export function valueAtPath(obj: unknown, path: FieldPath): unknown {
  let cur = obj;
  for (const seg of path) {
    if (typeof seg === 'number') {
      if (!Array.isArray(cur)) return undefined;
      cur = cur[seg];
    } else if (isKeyedSegment(seg)) {
      if (!Array.isArray(cur)) return undefined;
      cur = cur.find((item: unknown) => isRecord(item) && item[seg.key] !== undefined && String(item[seg.key]) === String(seg.value));
    } else {
      if (!isRecord(cur)) return undefined;
      cur = cur[seg];
    }
  }
  return cur;
}

/** Parses a path that names one field (no `*`); throws FieldPathSyntaxError. */
export function parseFieldPath(text: string): FieldPath {
  const pattern = parseFieldPattern(text);
  if (text === '') throw new FieldPathSyntaxError(text, 'a field path such as status.phase');
  if (pattern.includes(ANY_SEGMENT)) throw new FieldPathSyntaxError(text, 'one field, without * (a pattern is allowed only in masks)');
  return pattern as FieldPath;
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Does `pattern` name `path` or one of its ancestors (masking a map masks everything in it)? */
export function patternCovers(pattern: FieldPattern, path: FieldPath): boolean {
  if (pattern.length > path.length) return false;
  for (let i = 0; i < pattern.length; i++) {
    if (!segmentMatches(pattern[i]!, path[i]!)) return false;
  }
  return true;
}

function segmentMatches(p: PatternSegment, seg: PathSegment): boolean {
  if (p === ANY_SEGMENT) return true;
  if (isKeyedSegment(p)) return isKeyedSegment(seg) && p.key === seg.key && String(p.value) === String(seg.value);
  return p === seg;
}
