/**
 * x-kubernetes-validations: CEL rules of a CRD's schema, evaluated as apiextensions-apiserver's
 * schema/cel/validation.go does (with @bufbuild/cel, a conformance-tested CEL evaluator):
 *
 * - `self` is the value at the rule's node, typed by the schema (integer -> int, number -> double,
 *   int-or-string -> int or string, objects -> maps whose property names are escaped as Kubernetes
 *   escapes them: `__dash__`, `__dot__`, `__slash__`, `__underscores__`, `__in__`...);
 * - `oldSelf` on updates where the old value correlates (same field; list-map items by key); a
 *   transition rule (one naming oldSelf) is skipped on create and for new values; `optionalOldSelf`
 *   rules are skipped when there is no old value (optional types are not supported here);
 * - a false result is `<path>: Invalid value: "<type>": <message>` (`messageExpression`'s value,
 *   else `message`, else `failed rule: <rule>`), at the rule's `fieldPath` below the node, with its
 *   `reason` (FieldValueForbidden, FieldValueRequired, FieldValueDuplicate);
 * - evaluation errors read as cel-go's (`no such key: x evaluating rule: ...`);
 * - ratcheting: a failed rule that does not name oldSelf on a value that did not change is a warning.
 *
 * Libraries: CEL's standard functions, the strings extension, and from Kubernetes' libraries the list
 * functions (sum, min, max, isSorted, indexOf, lastIndexOf). Not supported: regex find/findAll,
 * quantity, url, ip/cidr, semver, format and authz libraries, timestamps from `format: date-time`
 * strings, set/map-list equality ignoring order, and the cost budget; a rule calling a function the
 * evaluator lacks is skipped (not answered as invalid).
 */
import { celEnv, celFunc, celMethod, CelScalar, isCelError, listType, parse, plan, type CelInput, type CelValue } from '@bufbuild/cel';
import { strings } from '@bufbuild/cel/ext';
import { isObject, type KubeObject } from '../model/object-key.js';
import type { FieldError } from './api-error.js';
import { correlatedItem, re2, type Correlation, type ValueSchema } from './crd-validation.js';

/** One entry of x-kubernetes-validations. */
export interface CelRule {
  rule: string;
  message?: string;
  messageExpression?: string;
  reason?: string;
  fieldPath?: string;
  optionalOldSelf?: boolean;
}

const DYN_LIST = listType(CelScalar.DYN);

function numbers(list: Iterable<unknown>): (bigint | number)[] {
  return [...list].filter((x): x is bigint | number => typeof x === 'bigint' || typeof x === 'number');
}

/** k8s.io/apiserver/pkg/cel/library lists.go. */
const KUBERNETES_FUNCS = [
  celMethod('sum', DYN_LIST, [], CelScalar.DYN, function () {
    const xs = numbers(this as Iterable<unknown>);
    if (xs.some((x) => typeof x === 'number')) return xs.reduce<number>((a, x) => a + Number(x), 0);
    return xs.reduce<bigint>((a, x) => a + (x as bigint), 0n);
  }),
  celMethod('min', DYN_LIST, [], CelScalar.DYN, function () {
    const xs = [...(this as Iterable<CelValue>)];
    if (xs.length === 0) throw new Error('min called on empty list');
    return xs.reduce((a, x) => ((x as number) < (a as number) ? x : a)) as CelInput;
  }),
  celMethod('max', DYN_LIST, [], CelScalar.DYN, function () {
    const xs = [...(this as Iterable<CelValue>)];
    if (xs.length === 0) throw new Error('max called on empty list');
    return xs.reduce((a, x) => ((x as number) > (a as number) ? x : a)) as CelInput;
  }),
  celMethod('isSorted', DYN_LIST, [], CelScalar.BOOL, function () {
    const xs = [...(this as Iterable<CelValue>)];
    return xs.every((x, i) => i === 0 || (xs[i - 1] as number) <= (x as number));
  }),
  celMethod('indexOf', DYN_LIST, [CelScalar.DYN], CelScalar.INT, function (v) {
    return BigInt([...(this as Iterable<CelValue>)].findIndex((x) => celEqual(x, v)));
  }),
  celMethod('lastIndexOf', DYN_LIST, [CelScalar.DYN], CelScalar.INT, function (v) {
    const xs = [...(this as Iterable<CelValue>)];
    for (let i = xs.length - 1; i >= 0; i--) if (celEqual(xs[i], v)) return BigInt(i);
    return -1n;
  }),
  celFunc('isSorted', [DYN_LIST], CelScalar.BOOL, (l) => [...(l as Iterable<CelValue>)].every((x, i, xs) => i === 0 || (xs[i - 1] as number) <= (x as number))),
];

function celEqual(a: unknown, b: unknown): boolean {
  if (typeof a === 'bigint' || typeof b === 'bigint' || typeof a === 'number' || typeof b === 'number') return Number(a) === Number(b);
  return a === b;
}

const ENV = celEnv({
  funcs: [...strings, ...KUBERNETES_FUNCS],
  re2: {
    compile: (p) => {
      const re = re2(p);
      if (re instanceof Error) throw re;
      return re;
    },
  },
});

type Program = (ctx: Record<string, CelInput>) => unknown;

interface Compiled {
  program?: Program;
  message?: Program;
  error?: string;
  usesOldSelf: boolean;
}

const programs = new Map<string, Compiled>();

function program(source: string): Program {
  return plan(ENV, parse(source)) as unknown as Program;
}

/** Whether an expression names `oldSelf` outside string literals. */
function namesOldSelf(source: string): boolean {
  return /\boldSelf\b/.test(source.replace(/'(?:[^'\\]|\\.)*'|"(?:[^"\\]|\\.)*"/g, '""'));
}

function compiled(rule: CelRule): Compiled {
  const key = `${rule.rule}\u0000${rule.messageExpression ?? ''}`;
  let c = programs.get(key);
  if (!c) {
    c = { usesOldSelf: namesOldSelf(rule.rule) };
    try {
      c.program = program(rule.rule);
    } catch (err) {
      c.error = `compilation failed: ${(err as Error).message}`;
    }
    if (rule.messageExpression) {
      try {
        c.message = program(rule.messageExpression);
      } catch {
        // A messageExpression that does not compile falls back to the message, as a failed evaluation does.
      }
    }
    if (programs.size > 1024) programs.clear();
    programs.set(key, c);
  }
  return c;
}

// ---- values (UnstructuredToVal) ----

const RESERVED = new Set([
  'true',
  'false',
  'null',
  'in',
  'as',
  'break',
  'const',
  'continue',
  'else',
  'for',
  'function',
  'if',
  'import',
  'let',
  'loop',
  'package',
  'namespace',
  'return',
  'var',
  'void',
  'while',
]);

/** k8s.io/apiserver/pkg/cel/escaping.go: a property name as a CEL identifier, undefined when it cannot be one. */
export function escapeProperty(name: string): string | undefined {
  if (RESERVED.has(name)) return `__${name}__`;
  if (!/^[a-zA-Z_][a-zA-Z0-9_./-]*$/.test(name)) return undefined;
  return name.replaceAll('__', '__underscores__').replaceAll('.', '__dot__').replaceAll('-', '__dash__').replaceAll('/', '__slash__');
}

function toCel(value: unknown, s: ValueSchema | undefined): CelInput {
  if (value === null || value === undefined) return null;
  if (typeof value === 'number') {
    if (s?.types.includes('number') && !s.types.includes('integer')) return value;
    return Number.isInteger(value) ? BigInt(value) : value;
  }
  if (typeof value === 'string' || typeof value === 'boolean') return value;
  if (Array.isArray(value)) return value.map((v) => toCel(v, s?.items));
  if (isObject(value)) {
    const out = new Map<string, CelInput>();
    for (const [k, v] of Object.entries(value)) {
      const prop = s?.properties?.get(k);
      if (prop) {
        const name = escapeProperty(k);
        if (name !== undefined) out.set(name, toCel(v, prop));
      } else out.set(k, toCel(v, s?.additionalProperties?.schema));
    }
    return out;
  }
  return null;
}

// ---- ratcheting options (cel/validation.go ratchetingOptions) ----

interface Ratchet {
  current?: Correlation | undefined;
  nearest?: Correlation | undefined;
}

function ratchetKey(r: Ratchet, field: string): Ratchet {
  if (!r.current) return r;
  if (!r.nearest && (field === 'apiVersion' || field === 'kind')) return {};
  return { current: r.current.key(field), nearest: r.current };
}

function ratchetIndex(r: Ratchet, i: number): Ratchet {
  if (!r.current) return r;
  return { current: r.current.index(i), nearest: r.current };
}

function shouldRatchet(r: Ratchet): boolean {
  return r.current ? r.current.unchanged() : (r.nearest?.unchanged() ?? false);
}

// ---- evaluation ----

/** A field.Path as a string: `<nil>` for the root itself. */
function childPath(path: string | undefined, name: string): string {
  return path === undefined ? name : `${path}.${name}`;
}

function keyPath(path: string | undefined, key: string): string {
  return `${path ?? ''}[${key}]`;
}

/** ValidFieldPath: `.a.b`, `['a.b']` relative to the node, as a path string to append (undefined when invalid). */
function normalizedFieldPath(fieldPath: string): string | undefined {
  const parts: string[] = [];
  const re = /\.([^.[\]]+)|\['((?:[^'\\]|\\.)*)'\]/y;
  let m: RegExpExecArray | null;
  let at = 0;
  while (at < fieldPath.length && (re.lastIndex = at) >= 0 && (m = re.exec(fieldPath))) {
    parts.push(m[1] !== undefined ? m[1] : `[${m[2]!.replace(/\\(.)/g, '$1')}]`);
    at = re.lastIndex;
  }
  if (at !== fieldPath.length || parts.length === 0) return undefined;
  return parts.reduce((p, part) => (part.startsWith('[') ? p + part : p ? `${p}.${part}` : part), '');
}

const UNSUPPORTED_CALL = /^unbound function: /;

function celMessage(err: unknown): string {
  const text = err instanceof Error ? err.message : String(err);
  return text.replace(/^field not found: /, 'no such key: ');
}

function typeName(s: ValueSchema): string {
  return s.types.length === 1 ? s.types[0]! : s.types.length > 1 ? '' : '';
}

class Run {
  readonly errors: FieldError[] = [];
  readonly warnings: string[] = [];

  node(s: ValueSchema, path: string | undefined, obj: unknown, old: unknown, ratchet: Ratchet, resourceRoot: boolean): void {
    if (obj === null || obj === undefined) return;
    if (s.rules.length > 0) this.expressions(s, s.rules, path, obj, old, ratchet, resourceRoot);
    for (const allOf of s.allOf) if (allOf.rules.length > 0) this.expressions(s, allOf.rules, path, obj, old, { nearest: ratchet.nearest }, resourceRoot);
    if (Array.isArray(obj)) {
      if (!s.items) return;
      obj.forEach((item, i) =>
        this.node(s.items!, `${path ?? ''}[${i}]`, item, correlatedItem(s, old, item), ratchetIndex(ratchet, i), s.items!.embeddedResource),
      );
      return;
    }
    if (!isObject(obj)) return;
    const correlatable = s.mapType === undefined || s.mapType === 'granular' || s.mapType === 'atomic';
    const oldMap = correlatable && isObject(old) ? old : undefined;
    const ap = s.additionalProperties?.schema;
    if (ap) for (const [k, v] of Object.entries(obj)) this.node(ap, keyPath(path, k), v, oldMap?.[k], ratchetKey(ratchet, k), ap.embeddedResource);
    if (s.properties)
      for (const [k, v] of Object.entries(obj)) {
        const prop = s.properties.get(k);
        if (prop) this.node(prop, childPath(path, k), v, oldMap?.[k], ratchetKey(ratchet, k), prop.embeddedResource);
      }
  }

  private expressions(
    s: ValueSchema,
    rules: readonly CelRule[],
    path: string | undefined,
    obj: unknown,
    old: unknown,
    ratchet: Ratchet,
    resourceRoot: boolean,
  ): void {
    const self = toCel(obj, s);
    const hasOld = old !== null && old !== undefined;
    const oldSelf = hasOld ? toCel(old, s) : null;
    const type = resourceRoot ? 'object' : typeName(s);
    for (const rule of rules) {
      const c = compiled(rule);
      const at = path ?? '<nil>';
      if (c.error !== undefined) {
        this.errors.push({ type: 'Invalid', field: at, value: type, detail: `rule compile error: ${c.error}` });
        continue;
      }
      if (c.usesOldSelf && !hasOld) continue;
      const ctx: Record<string, CelInput> = hasOld ? { self, oldSelf } : { self };
      let result: unknown;
      try {
        result = c.program!(ctx);
      } catch (err) {
        result = err;
      }
      const ruleText = (rule.message ?? '').trim() || rule.rule.trim();
      if (isCelError(result) || result instanceof Error) {
        const text = celMessage(result);
        if (UNSUPPORTED_CALL.test(text)) continue;
        const detail = /^found no matching overload|^no such overload/.test(text)
          ? `'${text}': call arguments did not match a supported operator, function or macro signature for rule: ${ruleText}`
          : `${text} evaluating rule: ${ruleText}`;
        this.errors.push({ type: 'Invalid', field: at, value: type, detail });
        continue;
      }
      if (result === true) continue;
      const normalized = rule.fieldPath ? normalizedFieldPath(rule.fieldPath) : undefined;
      const field = normalized === undefined ? at : normalized.startsWith('[') ? `${path ?? ''}${normalized}` : childPath(path, normalized);
      const message = this.message(rule, c, ctx);
      const error = fieldErrorForReason(field, type, message, rule.reason);
      if (!c.usesOldSelf && shouldRatchet(ratchet)) this.warnings.push(`${error.field}: ${warningBody(error)}`);
      else this.errors.push(error);
    }
  }

  private message(rule: CelRule, c: Compiled, ctx: Record<string, CelInput>): string {
    const fallback = (rule.message ?? '').trim() ? rule.message!.trim() : `failed rule: ${rule.rule.trim()}`;
    if (!c.message) return fallback;
    let value: unknown;
    try {
      value = c.message(ctx);
    } catch {
      return fallback;
    }
    if (typeof value !== 'string') return fallback;
    const trimmed = value.trim();
    if (trimmed === '' || trimmed.includes('\n') || trimmed.length > 5 * 1024) return fallback;
    return trimmed;
  }
}

function fieldErrorForReason(field: string, type: string, detail: string, reason: string | undefined): FieldError {
  switch (reason) {
    case 'FieldValueForbidden':
      return { type: 'Forbidden', field, detail };
    case 'FieldValueRequired':
      return { type: 'Required', field, detail };
    case 'FieldValueDuplicate':
      return { type: 'Duplicate', field, value: type, detail: '' };
    default:
      return { type: 'Invalid', field, value: type, detail };
  }
}

function warningBody(e: FieldError): string {
  if (e.type === 'Forbidden') return `Forbidden: ${e.detail}`;
  if (e.type === 'Required') return `Required value: ${e.detail}`;
  if (e.type === 'Duplicate') return `Duplicate value: ${JSON.stringify(e.value)}`;
  return `Invalid value: ${JSON.stringify(e.value)}: ${e.detail}`;
}

/** The CEL rules of a custom resource's schema, on create (`old` undefined) or update. */
export function celErrors(
  s: ValueSchema,
  obj: KubeObject,
  old: KubeObject | undefined,
  root: Correlation | undefined,
): { errors: FieldError[]; warnings: string[] } {
  const run = new Run();
  run.node(s, undefined, obj, old, { current: root }, true);
  return { errors: run.errors, warnings: run.warnings };
}
