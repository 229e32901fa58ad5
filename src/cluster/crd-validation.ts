/**
 * Value validation of custom resources against their CRD's openAPIV3Schema, as kube-apiserver 1.33 does
 * it (k8s.io/apiextensions-apiserver/pkg/registry/customresource strategy.go, validator.go,
 * status_strategy.go):
 *
 * - the schema validator of kube-openapi (pkg/validation/validate) with its messages (`spec.replicas in
 *   body should be greater than or equal to 1`), turned into field errors by apiserver/validation's
 *   kubeOpenAPIResultToFieldErrors (Required, NotSupported, TooLong, TooMany, TypeInvalid, Invalid);
 * - formats: only those apiextensions keeps (validation/formats.go), checked as kube-openapi's strfmt;
 * - x-kubernetes-list-type set/map uniqueness (schema/listtype);
 * - x-kubernetes-validations (CEL, crd-cel.ts), skipped with kube-apiserver's note when a blocking error
 *   was found first;
 * - ratcheting on updates (CRDValidationRatcheting, on by default since 1.30): an error in a part of the
 *   object that did not change (correlated by field name, list-map keys) is dropped.
 *
 * A status write validates `status` against its own schema (paths `status.x`), then list types and CEL
 * over the whole object. Values are JSON as Go's unstructured decoder reads it: a whole number is an
 * int64, any other number a float64 (`1.0` cannot be told from `1` here).
 */
import { RE2JS } from '@bufbuild/re2';
import { jsonEqual } from '../model/json-value.js';
import { isObject, type KubeObject } from '../model/object-key.js';
import type { FieldError } from './api-error.js';
import type { CustomResourceSchemas } from './crd-schema.js';
import { goJson } from './operations/support.js';
import { celErrors, type CelRule } from './crd-cel.js';

type Obj = Record<string, unknown>;

/** The keywords of one schema node that validation reads. */
export interface ValueSchema {
  types: readonly string[];
  nullable: boolean;
  format: string;
  minimum?: number;
  maximum?: number;
  exclusiveMinimum: boolean;
  exclusiveMaximum: boolean;
  multipleOf?: number;
  minLength?: number;
  maxLength?: number;
  pattern?: string;
  minItems?: number;
  maxItems?: number;
  uniqueItems: boolean;
  minProperties?: number;
  maxProperties?: number;
  required: readonly string[];
  enum?: readonly unknown[];
  properties?: ReadonlyMap<string, ValueSchema>;
  additionalProperties?: { allows: boolean; schema?: ValueSchema };
  items?: ValueSchema;
  allOf: readonly ValueSchema[];
  anyOf: readonly ValueSchema[];
  oneOf: readonly ValueSchema[];
  not?: ValueSchema;
  listType?: string;
  listMapKeys: readonly string[];
  mapType?: string;
  embeddedResource: boolean;
  rules: readonly CelRule[];
}

// Formats apiextensions keeps (validation/formats.go); the others are dropped from the schema.
const SUPPORTED_FORMATS = new Set(
  'bsonobjectid uri email hostname ipv4 ipv6 cidr mac uuid uuid3 uuid4 uuid5 isbn isbn10 isbn13 creditcard ssn hexcolor rgbcolor byte password date duration datetime'.split(
    ' ',
  ),
);

const num = (v: unknown): number | undefined => (typeof v === 'number' && Number.isFinite(v) ? v : undefined);

function compile(raw: unknown, depth = 0): ValueSchema | undefined {
  if (!isObject(raw) || depth > 256) return undefined;
  const sub = (v: unknown): ValueSchema | undefined => compile(v, depth + 1);
  const list = (v: unknown): ValueSchema[] => (Array.isArray(v) ? v.map(sub).filter((x): x is ValueSchema => x !== undefined) : []);
  const format = typeof raw.format === 'string' ? raw.format : '';
  const s: ValueSchema = {
    types: raw['x-kubernetes-int-or-string'] === true ? ['integer', 'string'] : typeof raw.type === 'string' && raw.type ? [raw.type] : [],
    nullable: raw.nullable === true,
    format: SUPPORTED_FORMATS.has(format.replaceAll('-', '')) ? format : '',
    exclusiveMinimum: raw.exclusiveMinimum === true,
    exclusiveMaximum: raw.exclusiveMaximum === true,
    uniqueItems: raw.uniqueItems === true,
    required: Array.isArray(raw.required) ? raw.required.filter((r): r is string => typeof r === 'string') : [],
    allOf: list(raw.allOf),
    anyOf: list(raw.anyOf),
    oneOf: list(raw.oneOf),
    listMapKeys: Array.isArray(raw['x-kubernetes-list-map-keys']) ? raw['x-kubernetes-list-map-keys'].filter((k): k is string => typeof k === 'string') : [],
    embeddedResource: raw['x-kubernetes-embedded-resource'] === true,
    rules: Array.isArray(raw['x-kubernetes-validations'])
      ? (raw['x-kubernetes-validations'].filter(isObject).filter((r) => typeof r.rule === 'string') as unknown as CelRule[])
      : [],
  };
  const numeric = ['minimum', 'maximum', 'multipleOf', 'minLength', 'maxLength', 'minItems', 'maxItems', 'minProperties', 'maxProperties'] as const;
  for (const k of numeric) {
    const v = num(raw[k]);
    if (v !== undefined) s[k] = v;
  }
  if (typeof raw.pattern === 'string' && raw.pattern) s.pattern = raw.pattern;
  if (Array.isArray(raw.enum)) s.enum = raw.enum;
  // Each subschema compiled once: compiling it twice per level (to test, then to keep) took 2^depth
  // compiles, 3-28 s of a blocked event loop on RabbitmqCluster's 15-deep pod template override,
  // long enough for the operator behind the proxy to miss its Lease renewal and exit.
  if (isObject(raw.properties))
    s.properties = new Map(
      Object.entries(raw.properties).flatMap(([k, v]) => {
        const compiled = sub(v);
        return compiled ? [[k, compiled] as const] : [];
      }),
    );
  if (isObject(raw.additionalProperties)) {
    const schema = sub(raw.additionalProperties);
    s.additionalProperties = { allows: true, ...(schema ? { schema } : {}) };
  } else if (typeof raw.additionalProperties === 'boolean') s.additionalProperties = { allows: raw.additionalProperties };
  const items = sub(raw.items);
  if (items) s.items = items;
  const not = sub(raw.not);
  if (not) s.not = not;
  if (typeof raw['x-kubernetes-list-type'] === 'string') s.listType = raw['x-kubernetes-list-type'];
  if (typeof raw['x-kubernetes-map-type'] === 'string') s.mapType = raw['x-kubernetes-map-type'];
  return s;
}

const compiledSchemas = new WeakMap<CustomResourceSchemas, Map<string, ValueSchema | undefined>>();

function valueSchema(schemas: CustomResourceSchemas, version: string): ValueSchema | undefined {
  let byVersion = compiledSchemas.get(schemas);
  if (!byVersion) compiledSchemas.set(schemas, (byVersion = new Map()));
  if (!byVersion.has(version)) byVersion.set(version, compile(schemas.rawSchemas.get(version)));
  return byVersion.get(version);
}

// ---- Go value printing ----

/** `%v` of a float64 (strconv 'g', shortest): exponent form below 1e-4 and from 1e+06, two exponent digits at least. */
export function goFloat(f: number): string {
  if (!Number.isFinite(f)) return f > 0 ? '+Inf' : f < 0 ? '-Inf' : 'NaN';
  if (f === 0) return Object.is(f, -0) ? '-0' : '0';
  const [mantissa, expText] = f.toExponential().split('e');
  const exp = Number(expText);
  if (exp >= -4 && exp < 6) return String(f);
  const abs = Math.abs(exp);
  return `${mantissa}e${exp < 0 ? '-' : '+'}${abs < 10 ? `0${abs}` : abs}`;
}

/** A JSON number as Go's unstructured decoder holds it: int64 when whole, else float64. */
function isInt(v: number): boolean {
  return Number.isInteger(v) && Math.abs(v) <= Number.MAX_SAFE_INTEGER * 1024;
}

/** `%v` of a scalar (int64, float64, bool); strings quoted as `%q`. */
function goScalar(v: unknown): string {
  if (typeof v === 'number') return isInt(v) ? String(v) : goFloat(v);
  if (typeof v === 'string') return JSON.stringify(v);
  return String(v);
}

/** `%#v` of an unstructured value (`map[string]interface {}{"a":1}`, `[]interface {}{"x"}`). */
export function goSharpV(v: unknown, top = true): string {
  if (v === null || v === undefined) return top ? 'null' : 'interface {}(nil)';
  if (Array.isArray(v)) return `[]interface {}{${v.map((x) => goSharpV(x, false)).join(', ')}}`;
  if (isObject(v))
    return `map[string]interface {}{${Object.keys(v)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${goSharpV(v[k], false)}`)
      .join(', ')}}`;
  return goScalar(v);
}

/** The text field.Error prints for a bad value. */
export function shownValue(v: unknown): string {
  if (v === null || v === undefined) return '"null"';
  return typeof v === 'object' ? goSharpV(v) : goScalar(v);
}

// ---- ratcheting correlation (k8s.io/apiserver/pkg/cel/common/equality.go) ----

/** The item of `old` with the same list-map keys as `item` (undefined when none or not a map list). */
export function correlatedItem(schema: ValueSchema | undefined, old: unknown, item: unknown): unknown {
  if (!schema || schema.listType !== 'map' || !Array.isArray(old) || !isObject(item)) return undefined;
  const keys = schema.listMapKeys;
  return old.find((o) => isObject(o) && keys.every((k) => jsonEqual(o[k], item[k])));
}

/** A value with the old value at the same place, where the schema lets them be matched. */
export class Correlation {
  private equal: boolean | undefined;
  private readonly children = new Map<string | number, Correlation | undefined>();
  constructor(
    readonly value: unknown,
    readonly old: unknown,
    readonly schema: ValueSchema | undefined,
  ) {}

  key(field: string): Correlation | undefined {
    if (!this.schema) return undefined;
    if (this.children.has(field)) return this.children.get(field);
    let child: Correlation | undefined;
    if (isObject(this.value) && isObject(this.old) && field in this.value && field in this.old) {
      const schema = this.schema.properties?.get(field) ?? this.schema.additionalProperties?.schema;
      if (schema) child = new Correlation(this.value[field], this.old[field], schema);
    }
    this.children.set(field, child);
    return child;
  }

  index(i: number): Correlation | undefined {
    if (!this.schema) return undefined;
    if (this.children.has(i)) return this.children.get(i);
    let child: Correlation | undefined;
    if (Array.isArray(this.value) && i < this.value.length && this.schema.items) {
      const old = correlatedItem(this.schema, this.old, this.value[i]);
      if (old !== undefined) child = new Correlation(this.value[i], old, this.schema.items);
    }
    this.children.set(i, child);
    return child;
  }

  /** CachedDeepEqual: unchanged, comparing list-map items by key. */
  unchanged(): boolean {
    if (this.equal !== undefined) return this.equal;
    let equal: boolean;
    const { value, old } = this;
    if ((value === undefined || value === null) && (old === undefined || old === null)) equal = true;
    else if (value === undefined || value === null || old === undefined || old === null) equal = false;
    else if (Array.isArray(value) !== Array.isArray(old) || isObject(value) !== isObject(old)) equal = false;
    else if (Array.isArray(value) && Array.isArray(old)) {
      if (value.length !== old.length) equal = false;
      else if (this.schema?.listType !== 'map') equal = jsonEqual(value, old);
      else equal = value.every((_, i) => this.index(i)?.unchanged() ?? false);
    } else if (isObject(value) && isObject(old)) {
      const keys = Object.keys(value);
      equal = keys.length === Object.keys(old).length && keys.every((k) => this.key(k)?.unchanged() ?? false);
    } else equal = jsonEqual(value, old);
    this.equal = equal;
    return equal;
  }
}

// ---- the kube-openapi schema validator ----

/** One kube-openapi validation error, before kubeOpenAPIResultToFieldErrors. */
interface OpenApiError {
  code: 'type' | 'required' | 'tooLong' | 'enum' | 'maxItems' | 'maxProperties' | 'other' | 'plain';
  /** The path the validator names (`spec.replicas`); empty for errors without one (anyOf...). */
  name: string;
  message: string;
  value?: unknown;
  /** Shown value when it is not the data itself (a type name, a size). */
  shown?: string;
  valid?: number;
  values?: readonly unknown[];
}

class Result {
  errors: OpenApiError[] = [];
  matchCount = 0;
  add(...errors: OpenApiError[]): void {
    for (const e of errors) if (!this.errors.some((r) => r.message === e.message)) this.errors.push(e);
  }
  merge(...others: (Result | undefined)[]): this {
    for (const o of others) {
      if (!o) continue;
      this.add(...o.errors);
      this.matchCount += o.matchCount;
    }
    return this;
  }
  get valid(): boolean {
    return this.errors.length === 0;
  }
}

type Kind = 'null' | 'boolean' | 'string' | 'integer' | 'number' | 'array' | 'object';

function kindOf(data: unknown): Kind {
  if (data === null || data === undefined) return 'null';
  if (Array.isArray(data)) return 'array';
  if (typeof data === 'number') return isInt(data) ? 'integer' : 'number';
  if (typeof data === 'object') return 'object';
  return typeof data as Kind;
}

function typeError(path: string, typeName: string, value: string): OpenApiError {
  return { code: 'type', name: path, message: `${path} in body must be of type ${typeName}: ${JSON.stringify(value)}`, value, shown: JSON.stringify(value) };
}

function validateType(s: ValueSchema, path: string, data: unknown, kind: Kind): OpenApiError | undefined {
  if (s.types.length === 0 && !s.format) return undefined;
  if (kind === 'null') {
    return s.types.length > 0 && !s.types.includes('null') && !s.nullable ? typeError(path, s.types.join(','), 'null') : undefined;
  }
  const format = kind === 'integer' ? 'int64' : kind === 'number' ? 'float64' : '';
  const has = (t: string): boolean => s.types.includes(t);
  const isIntFloat = kind === 'integer' && has('number');
  if (kind !== 'string' && kind !== 'array' && s.format && !(has(kind) || format === s.format || isIntFloat)) return typeError(path, s.format, format);
  if (!(has('number') || has('integer')) && s.format && (kind === 'string' || kind === 'array')) return undefined;
  if (!(has(kind) || isIntFloat)) return typeError(path, s.types.join(','), kind);
  return undefined;
}

const re2Cache = new Map<string, RE2JS | Error>();

/** A Go (RE2) regular expression; an Error when it does not compile. */
export function re2(pattern: string): RE2JS | Error {
  let re = re2Cache.get(pattern);
  if (!re) {
    try {
      re = RE2JS.compile(pattern);
    } catch (err) {
      re = err instanceof Error ? err : new Error(String(err));
    }
    if (re2Cache.size > 512) re2Cache.clear();
    re2Cache.set(pattern, re);
  }
  return re;
}

function runeCount(s: string): number {
  let n = 0;
  for (const _ of s) n++;
  return n;
}

function validateString(s: ValueSchema, path: string, data: string): OpenApiError | undefined {
  const len = s.maxLength !== undefined || s.minLength !== undefined ? runeCount(data) : 0;
  if (s.maxLength !== undefined && len > s.maxLength)
    return { code: 'tooLong', name: path, message: `${path} in body should be at most ${s.maxLength} chars long`, value: data, valid: s.maxLength };
  if (s.minLength !== undefined && len < s.minLength)
    return { code: 'other', name: path, message: `${path} in body should be at least ${s.minLength} chars long`, value: data };
  if (s.pattern !== undefined) {
    const re = re2(s.pattern);
    if (re instanceof Error)
      return { code: 'other', name: path, message: `${path} in body should match '${s.pattern}, but pattern is invalid: ${re.message}'`, value: data };
    if (!re.test(data)) return { code: 'other', name: path, message: `${path} in body should match '${s.pattern}'`, value: data };
  }
  return undefined;
}

// strfmt's checkers (kube-openapi pkg/validation/strfmt, govalidator), for the formats apiextensions keeps.
const IPV4 = /^(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)(\.(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)){3}$/;
function isIPv6(v: string): boolean {
  if (!v.includes(':') || /[^0-9a-fA-F:.]/.test(v)) return false;
  const double = v.split('::');
  if (double.length > 2) return false;
  const groups = (part: string): string[] => (part === '' ? [] : part.split(':'));
  const all = [...groups(double[0]!), ...(double.length === 2 ? groups(double[1]!) : [])];
  let count = 0;
  for (let i = 0; i < all.length; i++) {
    const g = all[i]!;
    if (i === all.length - 1 && g.includes('.')) {
      if (!IPV4.test(g)) return false;
      count += 2;
    } else if (/^[0-9a-fA-F]{1,4}$/.test(g)) count++;
    else return false;
  }
  return double.length === 2 ? count < 8 : count === 8;
}
const DURATION =
  /^(([+-]?(\d+(\.\d*)?|\.\d+)(ns|us|µs|μs|ms|s|m|h))+|0|[+-]?\d+\s*(ns|us|ms|s|m|h|d|w|nanoseconds?|microseconds?|milliseconds?|seconds?|minutes?|hours?|days?|weeks?))$/;
const FORMAT_CHECKS: Record<string, (v: string) => boolean> = {
  uri: (v) => {
    if (v === '' || /\s/.test(v)) return false;
    if (v.startsWith('/')) return true;
    return /^[a-zA-Z][a-zA-Z0-9+.-]*:/.test(v);
  },
  email: (v) => /^[^\s@<>()[\],;:"]+@[^\s@<>()[\],;:"]+$/.test(v) || /^[^<>]*<[^\s@<>]+@[^\s@<>]+>$/.test(v),
  hostname: (v) => {
    const re = re2(
      '^([a-zA-Z0-9\\p{S}\\p{L}]((-?[a-zA-Z0-9\\p{S}\\p{L}]{0,62})?)|([a-zA-Z0-9\\p{S}\\p{L}](([a-zA-Z0-9-\\p{S}\\p{L}]{0,61}[a-zA-Z0-9\\p{S}\\p{L}])?)(\\.)){1,}([a-zA-Z\\p{L}]){2,63})$',
    );
    return !(re instanceof Error) && re.test(v) && Buffer.byteLength(v) <= 255 && v.split('.').every((p) => Buffer.byteLength(p) <= 63);
  },
  ipv4: (v) => IPV4.test(v),
  ipv6: isIPv6,
  cidr: (v) => {
    const m = /^(.+)\/(\d{1,3})$/.exec(v);
    if (!m) return false;
    const bits = Number(m[2]);
    return (IPV4.test(m[1]!) && bits <= 32) || (isIPv6(m[1]!) && bits <= 128);
  },
  mac: (v) =>
    /^([0-9a-fA-F]{2}[:-]){5}[0-9a-fA-F]{2}$|^([0-9a-fA-F]{2}[:-]){7}[0-9a-fA-F]{2}$|^([0-9a-fA-F]{2}[:-]){19}[0-9a-fA-F]{2}$|^([0-9a-fA-F]{4}\.){2}[0-9a-fA-F]{4}$/.test(
      v,
    ),
  uuid: (v) => /^[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}$/i.test(v),
  uuid3: (v) => /^[0-9a-f]{8}-?[0-9a-f]{4}-?3[0-9a-f]{3}-?[0-9a-f]{4}-?[0-9a-f]{12}$/i.test(v),
  uuid4: (v) => /^[0-9a-f]{8}-?[0-9a-f]{4}-?4[0-9a-f]{3}-?[89ab][0-9a-f]{3}-?[0-9a-f]{12}$/i.test(v),
  uuid5: (v) => /^[0-9a-f]{8}-?[0-9a-f]{4}-?5[0-9a-f]{3}-?[89ab][0-9a-f]{3}-?[0-9a-f]{12}$/i.test(v),
  bsonobjectid: (v) => /^[0-9a-fA-F]{24}$/.test(v),
  hexcolor: (v) => /^#?([0-9a-fA-F]{3}|[0-9a-fA-F]{6})$/.test(v),
  rgbcolor: (v) =>
    /^rgb\(\s*(0|[1-9]\d?|1\d\d?|2[0-4]\d|25[0-5])\s*,\s*(0|[1-9]\d?|1\d\d?|2[0-4]\d|25[0-5])\s*,\s*(0|[1-9]\d?|1\d\d?|2[0-4]\d|25[0-5])\s*\)$/.test(v),
  ssn: (v) => /^\d{3}[- ]?\d{2}[- ]?\d{4}$/.test(v),
  byte: (v) => /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=|[A-Za-z0-9+/]{4})$/.test(v),
  password: () => true,
  date: (v) => {
    const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(v);
    if (!m) return false;
    const d = new Date(Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3])));
    return d.getUTCMonth() === Number(m[2]) - 1 && d.getUTCDate() === Number(m[3]);
  },
  datetime: (v) => /^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?([Zz]|[+-]\d{2}:?\d{2})?$/.test(v) && !Number.isNaN(Date.parse(v.replace(' ', 'T'))),
  duration: (v) => DURATION.test(v),
};

function validateFormat(s: ValueSchema, path: string, data: string): OpenApiError | undefined {
  const check = FORMAT_CHECKS[s.format.replaceAll('-', '')];
  if (!check || check(data)) return undefined;
  return typeError(path, s.format, data);
}

function validateNumber(s: ValueSchema, path: string, data: number): OpenApiError[] {
  const out: OpenApiError[] = [];
  const int = isInt(data);
  const shown = goScalar(data);
  const bound = (b: number): string => (int ? String(Math.trunc(b)) : goFloat(b));
  if (s.multipleOf !== undefined) {
    const factor = int ? Math.trunc(s.multipleOf) : s.multipleOf;
    if (factor <= 0)
      out.push({
        code: 'other',
        name: path,
        message: `factor MultipleOf declared for ${path} must be positive: ${bound(factor)}`,
        value: data,
        shown: bound(factor),
      });
    else {
      const mult = int ? data % factor === 0 : Number.isInteger(factor < 1 ? (1 / factor) * data : data / factor);
      if (!mult) out.push({ code: 'other', name: path, message: `${path} in body should be a multiple of ${bound(factor)}`, value: data, shown });
    }
  }
  if (s.minimum !== undefined) {
    const min = int ? Math.trunc(s.minimum) : s.minimum;
    if (s.exclusiveMinimum ? data <= min : data < min)
      out.push({
        code: 'other',
        name: path,
        message: `${path} in body should be greater than ${s.exclusiveMinimum ? '' : 'or equal to '}${bound(min)}`,
        value: data,
        shown,
      });
  }
  if (s.maximum !== undefined) {
    const max = int ? Math.trunc(s.maximum) : s.maximum;
    if (s.exclusiveMaximum ? data >= max : data > max)
      out.push({
        code: 'other',
        name: path,
        message: `${path} in body should be less than ${s.exclusiveMaximum ? '' : 'or equal to '}${bound(max)}`,
        value: data,
        shown,
      });
  }
  return out;
}

function enumMatches(data: unknown, allowed: unknown): boolean {
  return jsonEqual(data, allowed);
}

/**
 * The kube-openapi SchemaValidator for one value; `corr` (updates, ratcheting) drops the errors of a
 * part that did not change.
 */
function validateValue(s: ValueSchema, path: string, data: unknown, corr: Correlation | undefined): Result {
  const result = new Result();
  const kind = kindOf(data);
  // The type validator, then (for null) only the enum check, as SchemaValidator.Validate.
  const typeErr = validateType(s, path, data, kind);
  if (s.types.length > 0 || s.format) {
    if (typeErr) result.add(typeErr);
    result.matchCount++;
  }
  if (kind !== 'null') {
    result.merge(validateCombinators(s, path, data, corr));
    result.matchCount++;
    if (kind === 'string') {
      const e = validateString(s, path, data as string);
      if (e) result.add(e);
      result.matchCount++;
      if (s.format && FORMAT_CHECKS[s.format.replaceAll('-', '')]) {
        const f = validateFormat(s, path, data as string);
        if (f) result.add(f);
        result.matchCount++;
      }
    }
    if (kind === 'integer' || kind === 'number') {
      result.add(...validateNumber(s, path, data as number));
      result.matchCount += 2;
    }
    if (kind === 'array') {
      result.merge(validateArray(s, path, data as unknown[], corr));
      result.matchCount++;
    }
  }
  if (s.enum && s.enum.length > 0 && !s.enum.some((e) => enumMatches(data, e))) {
    result.add({ code: 'enum', name: path, message: `${path} in body should be one of ${goListText(s.enum)}`, value: data, values: s.enum });
  }
  result.matchCount++;
  if (kind === 'object') {
    result.merge(validateObject(s, path, data as Obj, corr));
    result.matchCount++;
  }
  result.matchCount++;
  if (!result.valid && corr?.unchanged()) return new Result();
  return result;
}

/** `%v` of a []interface{} (an enum list in a message). */
function goListText(values: readonly unknown[]): string {
  const one = (v: unknown): string =>
    typeof v === 'string'
      ? v
      : Array.isArray(v)
        ? `[${v.map(one).join(' ')}]`
        : isObject(v)
          ? `map[${Object.keys(v)
              .sort()
              .map((k) => `${k}:${one(v[k])}`)
              .join(' ')}]`
          : v === null
            ? '<nil>'
            : goScalar(v);
  return `[${values.map(one).join(' ')}]`;
}

function validateCombinators(s: ValueSchema, path: string, data: unknown, corr: Correlation | undefined): Result {
  const main = new Result();
  if (s.anyOf.length > 0) {
    let best: Result | undefined;
    let ok = false;
    for (const alt of s.anyOf) {
      const r = validateValue(alt, path, data, corr);
      if (r.valid) {
        ok = true;
        best = undefined;
        break;
      }
      if (!best || r.matchCount > best.matchCount) best = r;
    }
    if (!ok) main.add({ code: 'plain', name: '', message: `${JSON.stringify(path)} must validate at least one schema (anyOf)` });
    main.merge(best);
  }
  if (s.oneOf.length > 0) {
    let best: Result | undefined;
    let validated = 0;
    for (const alt of s.oneOf) {
      const r = validateValue(alt, path, data, corr);
      if (r.valid) {
        validated++;
        best = undefined;
        continue;
      }
      if (validated === 0 && (!best || r.matchCount > best.matchCount)) best = r;
    }
    if (validated !== 1) {
      const extra = validated === 0 ? 'Found none valid' : `Found ${validated} valid alternatives`;
      main.add({ code: 'plain', name: '', message: `${JSON.stringify(path)} must validate one and only one schema (oneOf). ${extra}` });
      main.merge(best);
    }
  }
  if (s.allOf.length > 0) {
    let validated = 0;
    for (const alt of s.allOf) {
      const r = validateValue(alt, path, data, corr);
      if (r.valid) validated++;
      main.merge(r);
    }
    if (validated !== s.allOf.length)
      main.add({
        code: 'plain',
        name: '',
        message: `${JSON.stringify(path)} must validate all the schemas (allOf)${validated === 0 ? '. None validated' : ''}`,
      });
  }
  if (s.not && validateValue(s.not, path, data, corr).valid)
    main.add({ code: 'plain', name: '', message: `${JSON.stringify(path)} must not validate the schema (not)` });
  main.matchCount++;
  return main;
}

function validateArray(s: ValueSchema, path: string, data: unknown[], corr: Correlation | undefined): Result {
  const result = new Result();
  if (s.items) data.forEach((item, i) => result.merge(validateValue(s.items!, `${path}[${i}]`, item, corr?.index(i))));
  if (s.minItems !== undefined && data.length < s.minItems)
    result.add({
      code: 'other',
      name: path,
      message: `${path} in body should have at least ${s.minItems} items`,
      value: data.length,
      shown: String(data.length),
    });
  if (s.maxItems !== undefined && data.length > s.maxItems)
    result.add({ code: 'maxItems', name: path, message: `${path} in body should have at most ${s.maxItems} items`, value: data.length, valid: s.maxItems });
  if (s.uniqueItems && data.some((x, i) => data.slice(0, i).some((y) => jsonEqual(x, y))))
    result.add({ code: 'other', name: path, message: `${path} in body shouldn't contain duplicates`, shown: '""' });
  result.matchCount++;
  return result;
}

function validateObject(s: ValueSchema, path: string, data: Obj, corr: Correlation | undefined): Result {
  const result = new Result();
  const keys = Object.keys(data);
  if (s.minProperties !== undefined && keys.length < s.minProperties)
    result.add({ code: 'other', name: path, message: `${path} in body should have at least ${s.minProperties} properties`, shown: String(keys.length) });
  if (s.maxProperties !== undefined && keys.length > s.maxProperties)
    result.add({
      code: 'maxProperties',
      name: path,
      message: `${path} in body should have at most ${s.maxProperties} properties`,
      value: keys.length,
      valid: s.maxProperties,
    });
  const child = (k: string): string => (path ? `${path}.${k}` : k);
  // Type metadata is never ratcheted (ratcheting.go isTypeMetaField).
  const childCorr = (k: string): Correlation | undefined => (path === '' && (k === 'apiVersion' || k === 'kind') ? undefined : corr?.key(k));
  if (s.additionalProperties && !s.additionalProperties.allows) {
    for (const k of keys)
      if (!s.properties?.has(k)) result.add({ code: 'other', name: path, message: `${path}.${k} in body is a forbidden property`, value: k });
  } else if (s.additionalProperties?.schema) {
    for (const k of keys) if (!s.properties?.has(k)) result.merge(validateValue(s.additionalProperties.schema, `${path}.${k}`, data[k], childCorr(k)));
  }
  for (const [k, prop] of s.properties ?? []) if (k in data) result.merge(validateValue(prop, child(k), data[k], childCorr(k)));
  for (const k of s.required) if (!(k in data)) result.add({ code: 'required', name: `${path}.${k}`, message: `${path}.${k} in body is required` });
  return result;
}

/** kubeOpenAPIResultToFieldErrors: kube-openapi errors as field errors under `prefix` (`status` for a status write). */
function toFieldErrors(errors: readonly OpenApiError[], prefix: string): FieldError[] {
  return errors.map((e): FieldError => {
    const name = e.name.replace(/^\./, '');
    const field = e.code === 'plain' ? prefix || '<nil>' : prefix ? (name ? `${prefix}.${name}` : prefix) : name || '<nil>';
    switch (e.code) {
      case 'required':
        return { type: 'Required', field, detail: '' };
      case 'enum':
        return {
          type: 'NotSupported',
          field,
          value: e.value,
          shownValue: shownValue(e.value),
          detail: `supported values: ${(e.values ?? []).map((v) => JSON.stringify(typeof v === 'string' ? v : JSON.stringify(v))).join(', ')}`,
        };
      case 'tooLong':
        return { type: 'TooLong', field, detail: `may not be more than ${e.valid ?? -1} bytes` };
      case 'maxItems':
      case 'maxProperties':
        return { type: 'TooMany', field, value: e.value, shownValue: String(e.value), detail: `must have at most ${e.valid ?? -1} items` };
      case 'type':
        return { type: 'TypeInvalid', field, value: e.value, shownValue: e.shown ?? shownValue(e.value), detail: e.message };
      case 'plain':
        return { type: 'Invalid', field, value: '', shownValue: '""', detail: e.message };
      default:
        return { type: 'Invalid', field, value: e.value, shownValue: e.shown ?? (e.value === undefined ? '""' : shownValue(e.value)), detail: e.message };
    }
  });
}

// ---- x-kubernetes-list-type (schema/listtype) ----

function listTypeErrors(s: ValueSchema | undefined, x: unknown, path: string, out: FieldError[]): void {
  if (!s) return;
  if (Array.isArray(x)) {
    if (s.listType === 'set') {
      for (const i of nonUnique(x)) out.push({ type: 'Duplicate', field: `${path}[${i}]`, value: x[i], shownValue: shownValue(x[i]), detail: '' });
    } else if (s.listType === 'map') {
      const bad = x.findIndex((item) => item !== null && !isObject(item));
      if (bad >= 0)
        out.push({
          type: 'Invalid',
          field: `${path}[${bad}]`,
          value: x[bad],
          shownValue: shownValue(x[bad]),
          detail: 'must be an object for an array of list-type map',
        });
      else if (x.length > 1) {
        const keys = x.map((item) => {
          const key: Obj = {};
          if (isObject(item)) for (const k of s.listMapKeys) if (k in item) key[k] = item[k];
          return key;
        });
        for (const i of nonUnique(keys)) out.push({ type: 'Duplicate', field: `${path}[${i}]`, value: keys[i], shownValue: goSharpV(keys[i]), detail: '' });
      }
    }
    if (s.items) x.forEach((item, i) => listTypeErrors(s.items, item, `${path}[${i}]`, out));
    return;
  }
  if (!isObject(x)) return;
  for (const [k, v] of Object.entries(x)) {
    const prop = s.properties?.get(k);
    if (prop) listTypeErrors(prop, v, path ? `${path}.${k}` : k, out);
    else if (s.additionalProperties?.schema) listTypeErrors(s.additionalProperties.schema, v, `${path}[${k}]`, out);
  }
}

/** The indices of the second occurrence of each repeated value (validateListSet). */
function nonUnique(items: readonly unknown[]): number[] {
  const seen = new Map<string, number>();
  const out: number[] = [];
  items.forEach((item, i) => {
    const key = goJson(item);
    const times = seen.get(key) ?? 0;
    if (times === 1) out.push(i);
    seen.set(key, times + 1);
  });
  return out;
}

// ---- the strategy ----

const BLOCKING: ReadonlySet<FieldError['type']> = new Set(['NotSupported', 'Required', 'TooLong', 'TooMany', 'TypeInvalid']);

/** What a validation gives besides errors: warnings for errors ratcheting let through (CEL). */
export interface CustomResourceValidation {
  errors: FieldError[];
  warnings: string[];
}

/**
 * Validates a custom resource about to be stored, as customResourceStrategy.Validate/ValidateUpdate
 * (and statusStrategy.ValidateUpdate for `subresource: 'status'`) do, after metadata validation;
 * `embeddedErrors` (objectmeta.Validate's, main writes only) go where the strategy puts them.
 */
export function validateCustomResource(
  schemas: CustomResourceSchemas,
  obj: KubeObject,
  old: KubeObject | undefined,
  version: string,
  subresource?: 'status',
  embeddedErrors: readonly FieldError[] = [],
): CustomResourceValidation {
  const s = valueSchema(schemas, version);
  if (!s) return { errors: [...embeddedErrors], warnings: [] };
  const errors: FieldError[] = [];
  const root = old ? new Correlation(obj, old, s) : undefined;
  if (subresource === 'status') {
    const statusSchema = s.properties?.get('status');
    if (statusSchema && 'status' in obj)
      errors.push(...toFieldErrors(validateValue(statusSchema, '', (obj as Obj).status, root?.key('status')).errors, 'status'));
  } else {
    errors.push(...toFieldErrors(validateValue(s, '', obj, root).errors, ''));
  }
  errors.push(...embeddedErrors);
  const listErrors: FieldError[] = [];
  listTypeErrors(s, obj, '', listErrors);
  if (listErrors.length > 0) {
    const oldErrors: FieldError[] = [];
    if (old) listTypeErrors(s, old, '', oldErrors);
    if (oldErrors.length === 0) errors.push(...listErrors);
  }
  const warnings: string[] = [];
  if (hasRules(s)) {
    if (errors.some((e) => BLOCKING.has(e.type))) {
      errors.push({
        type: 'Invalid',
        field: '<nil>',
        shownValue: '"null"',
        detail: 'some validation rules were not checked because the object was invalid; correct the existing errors to complete validation',
      });
    } else {
      const cel = celErrors(s, obj, old, root);
      errors.push(...cel.errors);
      warnings.push(...cel.warnings);
    }
  }
  return { errors, warnings };
}

function hasRules(s: ValueSchema | undefined, depth = 0): boolean {
  if (!s || depth > 256) return false;
  if (s.rules.length > 0) return true;
  if (hasRules(s.items, depth + 1) || hasRules(s.additionalProperties?.schema, depth + 1)) return true;
  for (const p of s.properties?.values() ?? []) if (hasRules(p, depth + 1)) return true;
  return s.allOf.some((a) => hasRules(a, depth + 1));
}
