/**
 * Small, path-aware validators for user-given files (config, workload, plan). Every failure names the
 * file, the path inside it (e.g. `workloads.create.steps[2].waitFor.timeoutSeconds`) and what was expected.
 */
import { LineCounter, parseDocument, type YAMLParseError } from 'yaml';
import { UserInputError, type ErrorCode } from './errors.js';
import { isObject } from './object-key.js';

export class Validator {
  constructor(
    readonly file: string,
    /** The code of the errors it throws: which kind of file this is. */
    readonly code: ErrorCode = 'KP_E_INPUT',
  ) {}

  fail(path: string, expected: string): never {
    throw new UserInputError(this.file, path || '(top level)', expected, this.code);
  }

  object(value: unknown, path: string): Record<string, unknown> {
    if (!isObject(value)) this.fail(path, `a mapping (got ${describe(value)})`);
    return value;
  }

  string(value: unknown, path: string): string {
    if (typeof value !== 'string' || value === '') this.fail(path, `a non-empty string (got ${describe(value)})`);
    return value;
  }

  optionalString(value: unknown, path: string): string | undefined {
    return value === undefined ? undefined : this.string(value, path);
  }

  number(value: unknown, path: string, opts: { min?: number; max?: number; integer?: boolean } = {}): number {
    if (typeof value !== 'number' || !Number.isFinite(value)) this.fail(path, `a number (got ${describe(value)})`);
    if (opts.integer && !Number.isInteger(value)) this.fail(path, `a whole number (got ${value})`);
    if (opts.min !== undefined && value < opts.min) this.fail(path, `a number >= ${opts.min} (got ${value})`);
    if (opts.max !== undefined && value > opts.max) this.fail(path, `a number <= ${opts.max} (got ${value})`);
    return value;
  }

  optionalNumber(value: unknown, path: string, opts: { min?: number; max?: number; integer?: boolean } = {}): number | undefined {
    return value === undefined ? undefined : this.number(value, path, opts);
  }

  /**
   * A duration in `unit`s, from `min` to MAX_DURATION_SECONDS: Node's timers fire at once past 2^31-1 ms
   * (about 24.8 days), so an unbounded `sleep: 1e7` would not sleep at all.
   */
  duration(value: unknown, path: string, unit: 'seconds' | 'ms', min = 0): number {
    const max = unit === 'seconds' ? MAX_DURATION_SECONDS : MAX_DURATION_SECONDS * 1000;
    if (typeof value !== 'number' || !Number.isFinite(value) || value < min || value > max) {
      this.fail(path, `a duration in ${unit === 'ms' ? 'milliseconds' : 'seconds'} from ${min} to ${max} (24 h) (got ${describe(value)})`);
    }
    return value;
  }

  optionalDuration(value: unknown, path: string, unit: 'seconds' | 'ms', min = 0): number | undefined {
    return value === undefined ? undefined : this.duration(value, path, unit, min);
  }

  boolean(value: unknown, path: string): boolean {
    if (typeof value !== 'boolean') this.fail(path, `true or false (got ${describe(value)})`);
    return value;
  }

  array(value: unknown, path: string): unknown[] {
    if (!Array.isArray(value)) this.fail(path, `a list (got ${describe(value)})`);
    return value;
  }

  stringArray(value: unknown, path: string): string[] {
    return this.array(value, path).map((v, i) => this.string(v, `${path}[${i}]`));
  }

  oneOf<T extends string>(value: unknown, path: string, allowed: readonly T[]): T {
    if (typeof value !== 'string' || !(allowed as readonly string[]).includes(value)) {
      this.fail(path, `one of ${allowed.map((a) => JSON.stringify(a)).join(', ')} (got ${describe(value)})`);
    }
    return value as T;
  }

  /** Rejects keys outside `allowed`, which catches typos like `timeoutSecond`. */
  onlyKeys(obj: Record<string, unknown>, path: string, allowed: readonly string[]): void {
    for (const k of Object.keys(obj)) {
      if (!allowed.includes(k)) this.fail(join(path, k), `no such field here (allowed: ${allowed.join(', ')})`);
    }
  }
}

/** The longest duration any file may ask for (a sleep, a timeout, a quiet window): 24 hours. */
export const MAX_DURATION_SECONDS = 24 * 60 * 60;

export function join(path: string, key: string | number): string {
  if (typeof key === 'number') return `${path}[${key}]`;
  return path ? `${path}.${key}` : key;
}

export function describe(value: unknown): string {
  if (value === undefined) return 'nothing';
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'a list';
  if (typeof value === 'object') return 'a mapping';
  return `${typeof value} ${quote(value)}`;
}

/** Echoed input is cut to this many characters: a binary file read as YAML is one long string. */
const ECHO_CHARS = 200;

/**
 * A user's value as JSON (control characters escaped), cut to ECHO_CHARS, for messages that quote it.
 * `cut` applies the same limit to text that is already in a message (a parser's error, say).
 */
export function quote(value: unknown): string {
  // JSON escapes C0 controls; also escape DEL, C1 controls and the characters that reorder or break lines.
  const json = (typeof value === 'number' ? String(value) : (JSON.stringify(value) ?? String(value))).replace(
    /[\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );
  return cut(json);
}

export function cut(text: string): string {
  return text.length <= ECHO_CHARS ? text : `${text.slice(0, ECHO_CHARS)}... (${text.length - ECHO_CHARS} more characters)`;
}

export function parseYamlText(text: string, file: string, code: ErrorCode = 'KP_E_INPUT'): unknown {
  const lineCounter = new LineCounter();
  const doc = parseDocument(text, { prettyErrors: false, lineCounter });
  if (doc.errors.length > 0) {
    const e: YAMLParseError = doc.errors[0]!;
    const pos = lineCounter.linePos(e.pos[0]);
    const at = `line ${pos.line}, column ${pos.col}`;
    throw new UserInputError(file, at, `valid YAML (${e.code}: ${cut(e.message.split('\n')[0]!)})`, code);
  }
  try {
    return doc.toJS({ maxAliasCount: MAX_ALIAS_COUNT });
  } catch (err) {
    // The yaml package refuses documents whose aliases expand too often (a "billion laughs" bomb).
    throw new UserInputError(file, undefined, `YAML whose aliases (*name) expand to a bounded size (the parser stopped: ${cut((err as Error).message)})`, code);
  }
}

/** How many times the aliases of one document may be expanded (the yaml package's default). */
export const MAX_ALIAS_COUNT = 100;
