/**
 * Structural schemas of CustomResourceDefinitions and what kube-apiserver's apiextensions-apiserver does
 * with them to custom resources (k8s.io/apiextensions-apiserver/pkg/apiserver/schema and the codec of
 * customresource_handler.go):
 *
 * - pruning (schema/pruning): fields the structural schema does not specify are dropped, except under
 *   `x-kubernetes-preserve-unknown-fields: true`; apiVersion, kind and metadata of the object and of every
 *   `x-kubernetes-embedded-resource` are kept; nothing is pruned when the CRD has
 *   `spec.preserveUnknownFields: true` (v1beta1 legacy);
 * - null removal (defaulting.PruneNonNullableNullsWithoutDefaults): `null` in a field that is neither
 *   nullable nor defaulted is dropped;
 * - ObjectMeta coercion (schema/objectmeta): `metadata` of the object and of embedded resources goes
 *   through metav1.ObjectMeta, which drops unknown and empty (omitempty) fields;
 * - defaulting (schema/defaulting): `default` values fill absent fields (and non-nullable nulls), top-down,
 *   so a default object is itself defaulted deeper; defaults are pruned against the schema when the
 *   schema is loaded (defaulting.PruneDefaults), so unknown fields in a default never reach an object.
 *
 * The order is the codec's: decode -> prune -> drop nulls -> coerce metadata -> default. A request body is
 * processed with the schema of its own version; objects read from storage with the schema of the storage
 * version (then pruned for the version served), so defaults added to a CRD appear on objects stored
 * before the change, without being written back. Server-side apply does not prune: its configuration
 * is typed against the schema and an undeclared field fails the request (`field not declared in schema`).
 *
 * Value validation (types, enums, patterns, CEL) is in crd-validation.ts.
 */
import { cloneJson, jsonEqual } from '../model/json-value.js';
import { isObject, type KubeObject } from '../model/object-key.js';
import type { FieldError } from './api-error.js';
import { dns1035LabelErrors } from './validation.js';

type Obj = Record<string, unknown>;

/** The parts of a structural schema (schema.Structural) that pruning, defaulting and apply typing read. */
export interface Structural {
  type?: string;
  properties?: ReadonlyMap<string, Structural>;
  items?: Structural | undefined;
  /** `additionalProperties`: a schema, or `true`/`false` (schema undefined). */
  additionalProperties?: { schema?: Structural; allows: boolean };
  /** The default value, already pruned (undefined when there is none; a `null` default is none, as in Go). */
  default?: unknown;
  nullable: boolean;
  preserveUnknownFields: boolean;
  embeddedResource: boolean;
  intOrString: boolean;
  listType?: string;
  listMapKeys?: readonly string[];
}

/** The schemas of one CRD, as the custom resource handler holds them. */
export interface CustomResourceSchemas {
  /** `spec.preserveUnknownFields: true` (only v1beta1 CRDs can still have it): nothing is pruned. */
  readonly preserveUnknownFields: boolean;
  /** The version objects are stored in (read defaulting uses its schema). */
  readonly storageVersion: string;
  /** The structural schema of every version that has one, by version name. */
  readonly versions: ReadonlyMap<string, Structural | undefined>;
  /** Each version's openAPIV3Schema as the CRD gives it (value validation reads it: crd-validation.ts). */
  readonly rawSchemas: ReadonlyMap<string, unknown>;
}

// ---- loading ----

function compile(raw: unknown, depth = 0): Structural | undefined {
  if (!isObject(raw) || depth > 256) return undefined;
  const s: Structural = {
    nullable: raw.nullable === true,
    preserveUnknownFields: raw['x-kubernetes-preserve-unknown-fields'] === true,
    embeddedResource: raw['x-kubernetes-embedded-resource'] === true,
    intOrString: raw['x-kubernetes-int-or-string'] === true,
  };
  if (typeof raw.type === 'string') s.type = raw.type;
  if (raw.default !== undefined && raw.default !== null) s.default = cloneJson(raw.default);
  if (isObject(raw.properties)) {
    const props = new Map<string, Structural>();
    for (const [k, v] of Object.entries(raw.properties)) {
      const child = compile(v, depth + 1);
      if (child) props.set(k, child);
    }
    if (props.size > 0) s.properties = props;
  }
  if (isObject(raw.items)) s.items = compile(raw.items, depth + 1);
  if (isObject(raw.additionalProperties)) {
    const schema = compile(raw.additionalProperties, depth + 1);
    s.additionalProperties = schema ? { schema, allows: true } : { allows: true };
  } else if (typeof raw.additionalProperties === 'boolean') {
    s.additionalProperties = { allows: raw.additionalProperties };
  }
  if (typeof raw['x-kubernetes-list-type'] === 'string') s.listType = raw['x-kubernetes-list-type'];
  const keys = raw['x-kubernetes-list-map-keys'];
  if (Array.isArray(keys) && keys.every((k) => typeof k === 'string')) s.listMapKeys = keys as string[];
  return s;
}

/**
 * defaulting.PruneDefaults: every default is pruned (and its embedded ObjectMeta coerced) as it would be
 * at its place in an object, so that defaulting never adds a field pruning would drop.
 */
function pruneDefaults(s: Structural | undefined, depth = 0): void {
  if (!s || depth > 256) return;
  if (s.default !== undefined) {
    prune(s.default, s, new PathTracker(false), '');
    coerceValue(s.default, s, '', undefined, true);
  }
  pruneDefaults(s.additionalProperties?.schema, depth + 1);
  pruneDefaults(s.items, depth + 1);
  for (const child of s.properties?.values() ?? []) pruneDefaults(child, depth + 1);
}

const compiled = new Map<string, CustomResourceSchemas>();
const COMPILED_CACHE_SIZE = 64;

/**
 * The schemas of a CRD (spec.versions[].schema.openAPIV3Schema, spec.preserveUnknownFields). Equal
 * schemas give the same object, so caches keyed by it survive CRD writes that do not change a schema.
 */
export function customResourceSchemas(crd: KubeObject): CustomResourceSchemas | undefined {
  const spec = isObject(crd.spec) ? crd.spec : undefined;
  if (!spec) return undefined;
  const versions = (Array.isArray(spec.versions) ? spec.versions : []).filter(isObject).filter((v) => typeof v.name === 'string');
  if (versions.length === 0) return undefined;
  const storage = versions.find((v) => v.storage === true) ?? versions[0]!;
  const raw = {
    preserveUnknownFields: spec.preserveUnknownFields === true,
    storageVersion: storage.name as string,
    versions: versions.map((v) => [v.name as string, isObject(v.schema) ? (v.schema.openAPIV3Schema ?? null) : null] as const),
  };
  const key = JSON.stringify(raw);
  const hit = compiled.get(key);
  if (hit) {
    compiled.delete(key);
    compiled.set(key, hit);
    return hit;
  }
  const byVersion = new Map<string, Structural | undefined>();
  for (const [name, schema] of raw.versions) {
    const s = compile(schema);
    if (s && !raw.preserveUnknownFields) pruneDefaults(s);
    byVersion.set(name, s);
  }
  const result: CustomResourceSchemas = {
    preserveUnknownFields: raw.preserveUnknownFields,
    storageVersion: raw.storageVersion,
    versions: byVersion,
    rawSchemas: new Map(raw.versions.filter(([, schema]) => isObject(schema))),
  };
  compiled.set(key, result);
  if (compiled.size > COMPILED_CACHE_SIZE) compiled.delete(compiled.keys().next().value!);
  return result;
}

// ---- pruning (schema/pruning) ----

const META_FIELDS = new Set(['apiVersion', 'kind', 'metadata']);

/** Collects unknown field paths in the pruning algorithm's notation (`spec.a.b`, `spec.list[0].c`). */
class PathTracker {
  readonly unknown: string[] = [];
  constructor(readonly track: boolean) {}
  key(parent: string, k: string): string {
    return this.track ? (parent ? `${parent}.${k}` : k) : '';
  }
  index(parent: string, i: number): string {
    return this.track ? `${parent}[${i}]` : '';
  }
  record(parent: string, k: string): void {
    if (this.track) this.unknown.push(this.key(parent, k));
  }
}

function prune(x: unknown, s: Structural | undefined, tracker: PathTracker, path: string): void {
  if (s?.preserveUnknownFields) {
    skipPrune(x, s, tracker, path);
    return;
  }
  if (Array.isArray(x)) {
    for (let i = 0; i < x.length; i++) prune(x[i], s?.items, tracker, tracker.index(path, i));
    return;
  }
  if (!isObject(x)) return;
  if (!s) {
    for (const k of Object.keys(x)) {
      tracker.record(path, k);
      delete x[k];
    }
    return;
  }
  for (const [k, v] of Object.entries(x)) {
    if (s.embeddedResource && META_FIELDS.has(k)) continue;
    const prop = s.properties?.get(k);
    if (prop) prune(v, prop, tracker, tracker.key(path, k));
    else if (s.additionalProperties) prune(v, s.additionalProperties.schema, tracker, tracker.key(path, k));
    else {
      if (!META_FIELDS.has(k) || path !== '') tracker.record(path, k);
      delete x[k];
    }
  }
}

function skipPrune(x: unknown, s: Structural, tracker: PathTracker, path: string): void {
  if (Array.isArray(x)) {
    for (let i = 0; i < x.length; i++) if (s.items) skipPrune(x[i], s.items, tracker, tracker.index(path, i));
    return;
  }
  if (!isObject(x)) return;
  for (const [k, v] of Object.entries(x)) {
    if (s.embeddedResource && META_FIELDS.has(k)) continue;
    const prop = s.properties?.get(k);
    if (prop) prune(v, prop, tracker, tracker.key(path, k));
    else if (s.additionalProperties) prune(v, s.additionalProperties.schema, tracker, tracker.key(path, k));
  }
}

/** pruning.PruneWithOptions(obj, s, isResourceRoot=true): the root keeps apiVersion, kind and metadata. */
function pruneRoot(obj: KubeObject, s: Structural, tracker: PathTracker): void {
  prune(obj, { ...s, embeddedResource: true }, tracker, '');
}

// ---- nulls (defaulting.PruneNonNullableNullsWithoutDefaults) ----

function schemaForField(field: string, s: Structural | undefined): Structural | undefined {
  if (!s) return undefined;
  return s.properties?.get(field) ?? s.additionalProperties?.schema;
}

function pruneNonNullableNullsWithoutDefaults(x: unknown, s: Structural | undefined): void {
  if (Array.isArray(x)) {
    for (const item of x) pruneNonNullableNullsWithoutDefaults(item, s?.items);
    return;
  }
  if (!isObject(x)) return;
  for (const [k, v] of Object.entries(x)) {
    const child = schemaForField(k, s);
    if (v === null && child && !child.nullable && child.default === undefined) delete x[k];
    else pruneNonNullableNullsWithoutDefaults(v, child);
  }
}

// ---- ObjectMeta (schema/objectmeta) ----

const META_STRING_FIELDS = ['name', 'generateName', 'namespace', 'selfLink', 'uid', 'resourceVersion'] as const;
const OBJECT_META_FIELDS = new Set([
  ...META_STRING_FIELDS,
  'generation',
  'creationTimestamp',
  'deletionTimestamp',
  'deletionGracePeriodSeconds',
  'labels',
  'annotations',
  'ownerReferences',
  'finalizers',
  'managedFields',
]);
const OWNER_REFERENCE_FIELDS = ['apiVersion', 'kind', 'name', 'uid', 'controller', 'blockOwnerDeletion'] as const;
const MANAGED_FIELDS_ENTRY_FIELDS = ['manager', 'operation', 'apiVersion', 'time', 'fieldsType', 'fieldsV1', 'subresource'] as const;

const RFC3339 = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)$/;

/** metav1.Time as it marshals: RFC 3339 in UTC, whole seconds; undefined when it would not unmarshal. */
function goTime(value: unknown): string | null | undefined {
  if (value === null || value === '') return null;
  if (typeof value !== 'string' || !RFC3339.test(value)) return undefined;
  const date = new Date(value);
  return Number.isNaN(date.getTime()) ? undefined : date.toISOString().replace(/\.\d+Z$/, 'Z');
}

/**
 * What JSON-unmarshalling `metadata` into metav1.ObjectMeta and marshalling it back leaves: known fields
 * that are not empty (omitempty), times in their canonical form. Unknown fields are recorded as
 * `<prefix>metadata.<field>`. A value of the wrong type is kept as it is (the real decoder fails the
 * request instead; metadata validation reports it here).
 */
export function roundTripObjectMeta(meta: Obj, unknown?: string[], prefix = ''): Obj {
  const out: Obj = {};
  const note = (field: string): void => {
    unknown?.push(`${prefix}metadata.${field}`);
  };
  for (const k of Object.keys(meta)) if (!OBJECT_META_FIELDS.has(k)) note(k);
  for (const f of META_STRING_FIELDS) {
    const v = meta[f];
    if (v !== undefined && v !== null && v !== '') out[f] = v;
  }
  if (meta.generation !== undefined && meta.generation !== null && meta.generation !== 0) out.generation = meta.generation;
  for (const f of ['creationTimestamp', 'deletionTimestamp'] as const) {
    const v = meta[f];
    if (v === undefined) continue;
    const t = goTime(v);
    if (t === undefined) out[f] = v;
    else if (t !== null) out[f] = t;
  }
  if (meta.deletionGracePeriodSeconds !== undefined && meta.deletionGracePeriodSeconds !== null)
    out.deletionGracePeriodSeconds = meta.deletionGracePeriodSeconds;
  for (const f of ['labels', 'annotations'] as const) {
    const v = meta[f];
    if (v === undefined || v === null || (isObject(v) && Object.keys(v).length === 0)) continue;
    out[f] = v;
  }
  const list = (f: string, fields: readonly string[], omitEmpty: (field: string) => boolean): void => {
    const v = meta[f];
    if (v === undefined || v === null || (Array.isArray(v) && v.length === 0)) return;
    if (!Array.isArray(v)) {
      out[f] = v;
      return;
    }
    out[f] = v.map((item, i) => {
      if (!isObject(item)) return item;
      const entry: Obj = {};
      for (const k of Object.keys(item)) if (!fields.includes(k)) unknown?.push(`${prefix}metadata.${f}[${i}].${k}`);
      for (const k of fields) {
        const fv = item[k];
        if (fv === undefined || fv === null || (fv === '' && omitEmpty(k))) {
          if (!omitEmpty(k)) entry[k] = '';
          continue;
        }
        entry[k] = k === 'time' ? (goTime(fv) ?? fv) : fv;
      }
      return entry;
    });
  };
  // OwnerReference: apiVersion, kind, name and uid are not omitempty; controller and blockOwnerDeletion are pointers.
  list('ownerReferences', OWNER_REFERENCE_FIELDS, (k) => k === 'controller' || k === 'blockOwnerDeletion');
  if (Array.isArray(meta.finalizers) ? meta.finalizers.length > 0 : meta.finalizers !== undefined && meta.finalizers !== null) out.finalizers = meta.finalizers;
  list('managedFields', MANAGED_FIELDS_ENTRY_FIELDS, () => true);
  return out;
}

/** A body the custom resource codec cannot decode (kube-apiserver answers 400, or 422 for a patch). */
export class CustomResourceDecodingError extends Error {
  constructor(
    readonly field: string,
    readonly value: unknown,
    readonly detail: string,
  ) {
    super(`${field}: Invalid value: ${typeof value === 'string' ? JSON.stringify(value) : JSON.stringify(value ?? null)}: ${detail}`);
    this.name = 'CustomResourceDecodingError';
  }
}

/**
 * objectmeta.Coerce below the root: the metadata of every `x-kubernetes-embedded-resource` goes through
 * ObjectMeta (a zero creationTimestamp is removed) and its apiVersion and kind must be strings: a
 * request fails (CustomResourceDecodingError), storage decoding drops them (`dropInvalid`). Paths are
 * field.Path strings (`spec.map[key]`).
 */
function coerceValue(x: unknown, s: Structural | undefined, path: string, unknown: string[] | undefined, dropInvalid = false): void {
  if (!s) return;
  if (Array.isArray(x)) {
    for (let i = 0; i < x.length; i++) coerceValue(x[i], s.items, `${path}[${i}]`, unknown, dropInvalid);
    return;
  }
  if (!isObject(x)) return;
  for (const [k, v] of Object.entries(x)) {
    if (s.embeddedResource && (k === 'apiVersion' || k === 'kind') && typeof v !== 'string') {
      if (!dropInvalid) throw new CustomResourceDecodingError(path ? `${path}.${k}` : k, v, 'must be a string');
      delete x[k];
      continue;
    }
    if (s.embeddedResource && k === 'metadata' && (isObject(v) || v === null)) x.metadata = roundTripObjectMeta(v ?? {}, unknown, path ? `${path}.` : '');
    const prop = s.properties?.get(k);
    if (prop) coerceValue(x[k], prop, path ? `${path}.${k}` : k, unknown, dropInvalid);
    else if (s.additionalProperties) coerceValue(x[k], s.additionalProperties.schema, `${path}[${k}]`, unknown, dropInvalid);
  }
}

// ---- defaulting (schema/defaulting) ----

function isNonNullableNull(x: unknown, s: Structural | undefined): boolean {
  return x === null && s !== undefined && !s.nullable;
}

/** defaulting.Default: absent fields (and non-nullable nulls) take their default, then every field is defaulted deeper. */
function applyDefaults(x: unknown, s: Structural | undefined): void {
  if (!s) return;
  if (Array.isArray(x)) {
    for (let i = 0; i < x.length; i++) {
      if (isNonNullableNull(x[i], s.items) && s.items!.default !== undefined) x[i] = cloneJson(s.items!.default);
      applyDefaults(x[i], s.items);
    }
    return;
  }
  if (!isObject(x)) return;
  for (const [k, prop] of s.properties ?? []) {
    if (prop.default === undefined || k === '__proto__') continue;
    if (!Object.prototype.hasOwnProperty.call(x, k) || x[k] === undefined || isNonNullableNull(x[k], prop)) x[k] = cloneJson(prop.default);
  }
  for (const k of Object.keys(x)) {
    const prop = s.properties?.get(k);
    if (prop) applyDefaults(x[k], prop);
    else if (s.additionalProperties) {
      const ap = s.additionalProperties.schema;
      if (isNonNullableNull(x[k], ap) && ap!.default !== undefined) x[k] = cloneJson(ap!.default);
      applyDefaults(x[k], ap);
    }
  }
}

// ---- the codec ----

/**
 * unstructuredSchemaCoercer.apply then the defaulter, in place, with the schema of `version`. Returns the
 * unknown field paths when `trackUnknown` (fieldValidation Strict or Warn), sorted as the server reports them.
 */
function coerceAndDefault(
  schemas: CustomResourceSchemas,
  obj: KubeObject,
  version: string,
  trackUnknown: boolean,
  defaults: boolean,
  fromStorage = false,
): string[] {
  const s = schemas.versions.get(version);
  const unknown: string[] = [];
  if (isObject(obj.metadata)) obj.metadata = roundTripObjectMeta(obj.metadata, trackUnknown ? unknown : undefined) as KubeObject['metadata'];
  // A version without a schema only exists with preserveUnknownFields (v1beta1); nothing to prune by.
  if (!schemas.preserveUnknownFields && s) {
    const tracker = new PathTracker(trackUnknown);
    pruneRoot(obj, s, tracker);
    unknown.push(...tracker.unknown.sort());
    pruneNonNullableNullsWithoutDefaults(obj, s);
  }
  const coerceUnknown: string[] = [];
  coerceValue(obj, s, '', trackUnknown ? coerceUnknown : undefined, fromStorage);
  unknown.push(...coerceUnknown.sort());
  if (defaults) applyDefaults(obj, s);
  return unknown;
}

/**
 * A request body (create, update, the result of a merge or JSON patch, a status write) in `version`:
 * pruned, coerced and defaulted in place. Returns the unknown fields it dropped (for fieldValidation);
 * throws CustomResourceDecodingError for a body the codec refuses.
 */
export function decodeCustomResource(schemas: CustomResourceSchemas, obj: KubeObject, version: string, trackUnknown = false): string[] {
  return coerceAndDefault(schemas, obj, version, trackUnknown, true);
}

interface CachedView {
  schemas: CustomResourceSchemas;
  version: string;
  view: KubeObject;
}

const views = new WeakMap<KubeObject, CachedView[]>();
const storedOf = new WeakMap<KubeObject, KubeObject>();

/**
 * A stored object as the storage codec decodes it: pruned and defaulted with the storage version's
 * schema, then (served in another version) pruned with that version's schema. The stored object is not
 * changed; the result is cached per object and must not be mutated. Returns `stored` itself when nothing
 * changes.
 */
export function customResourceView(schemas: CustomResourceSchemas, stored: KubeObject, version = schemas.storageVersion): KubeObject {
  if (storedOf.has(stored)) stored = storedOf.get(stored)!;
  const cached = views.get(stored);
  const hit = cached?.find((c) => c.schemas === schemas && c.version === version);
  if (hit) return hit.view;
  const copy = cloneJson(stored);
  coerceAndDefault(schemas, copy, schemas.storageVersion, false, true, true);
  if (version !== schemas.storageVersion && schemas.versions.has(version)) coerceAndDefault(schemas, copy, version, false, false, true);
  const view = jsonEqual(copy, stored) ? stored : copy;
  if (view !== stored) storedOf.set(view, stored);
  const entries = (cached ?? []).filter((c) => c.schemas === schemas).slice(-3);
  entries.push({ schemas, version, view });
  views.set(stored, entries);
  return view;
}

/** The stored object a view was made from (the object itself when it is not a view). */
export function storedObjectOf(obj: KubeObject): KubeObject {
  return storedOf.get(obj) ?? obj;
}

// ---- embedded resources (objectmeta.Validate) ----

function validateEmbedded(x: unknown, s: Structural | undefined, path: string, errors: FieldError[]): void {
  if (!s) return;
  if (Array.isArray(x)) {
    x.forEach((item, i) => validateEmbedded(item, s.items, `${path}[${i}]`, errors));
    return;
  }
  if (!isObject(x)) return;
  if (s.embeddedResource) {
    const at = (f: string): string => (path ? `${path}.${f}` : f);
    if (!('apiVersion' in x)) errors.push({ type: 'Required', field: at('apiVersion'), detail: 'must not be empty' });
    if (!('kind' in x)) errors.push({ type: 'Required', field: at('kind'), detail: 'must not be empty' });
    for (const [k, v] of Object.entries(x)) {
      if (k === 'apiVersion') {
        if (typeof v !== 'string') errors.push({ type: 'Invalid', field: at(k), value: v, detail: 'must be a string' });
        else if (v === '') errors.push({ type: 'Invalid', field: at(k), value: v, detail: 'must not be empty' });
        else if (v.split('/').length > 2) errors.push({ type: 'Invalid', field: at(k), value: v, detail: `unexpected GroupVersion string: ${v}` });
      } else if (k === 'kind') {
        if (typeof v !== 'string') errors.push({ type: 'Invalid', field: at(k), value: v, detail: 'must be a string' });
        else if (v === '') errors.push({ type: 'Invalid', field: at(k), value: v, detail: 'must not be empty' });
        else {
          const errs = dns1035LabelErrors(v.toLowerCase());
          if (errs.length > 0)
            errors.push({ type: 'Invalid', field: at(k), value: v, detail: `may have mixed case, but should otherwise match: ${errs.join(',')}` });
        }
      }
    }
  }
  for (const [k, v] of Object.entries(x)) {
    const prop = s.properties?.get(k);
    if (prop) validateEmbedded(v, prop, path ? `${path}.${k}` : k, errors);
    else if (s.additionalProperties) validateEmbedded(v, s.additionalProperties.schema, `${path}[${k}]`, errors);
  }
}

/**
 * The checks kube-apiserver makes on every `x-kubernetes-embedded-resource` of a created or updated
 * custom resource (objectmeta.Validate): apiVersion and kind present, strings, not empty, a group
 * version and a DNS-1035 kind. (Their metadata is not validated here.)
 */
export function validateEmbeddedResources(schemas: CustomResourceSchemas, obj: KubeObject): FieldError[] {
  const version = typeof obj.apiVersion === 'string' ? obj.apiVersion.split('/').pop()! : schemas.storageVersion;
  const s = schemas.versions.get(version) ?? schemas.versions.get(schemas.storageVersion);
  const errors: FieldError[] = [];
  validateEmbedded(obj, s, '', errors);
  return errors;
}

// ---- server-side apply typing ----

/** Top-level fields of an object as server-side apply types it (TypeMeta and ObjectMeta). */
function objectMetaUndeclared(meta: unknown, path: string, out: string[]): void {
  if (!isObject(meta)) return;
  for (const k of Object.keys(meta)) if (!OBJECT_META_FIELDS.has(k)) out.push(`${path}.${k}`);
}

function pathValue(v: unknown): string {
  return typeof v === 'string' ? JSON.stringify(v) : String(v);
}

function undeclared(x: unknown, s: Structural | undefined, path: string, out: string[]): void {
  if (!s || x === null) return;
  if (Array.isArray(x)) {
    if (!s.items) return;
    x.forEach((item, i) => {
      let element = `[${i}]`;
      if (s.listType === 'map' && s.listMapKeys && isObject(item)) {
        const keys = [...s.listMapKeys].sort().filter((k) => item[k] !== undefined && item[k] !== null);
        element = `[${keys.map((k) => `${k}=${pathValue(item[k])}`).join(',')}]`;
      } else if (s.listType === 'set') element = `[=${pathValue(item)}]`;
      undeclared(item, s.items, path + element, out);
    });
    return;
  }
  if (!isObject(x)) return;
  for (const [k, v] of Object.entries(x)) {
    const child = `${path}.${k}`;
    if (s.embeddedResource && META_FIELDS.has(k)) {
      if (k === 'metadata') objectMetaUndeclared(v, child, out);
      continue;
    }
    const prop = s.properties?.get(k);
    if (prop) undeclared(v, prop, child, out);
    else if (s.additionalProperties) undeclared(v, s.additionalProperties.schema, child, out);
    else if (!s.preserveUnknownFields) out.push(child);
  }
}

/**
 * The fields of a server-side apply configuration that the CRD's schema does not declare, as
 * structured-merge-diff reports them (`.spec.foo`); empty when the CRD preserves unknown fields or the
 * version has no schema (the deduced type converter accepts anything).
 */
export function undeclaredApplyFields(schemas: CustomResourceSchemas, config: KubeObject, version: string): string[] {
  const s = schemas.versions.get(version);
  if (schemas.preserveUnknownFields || !s) return [];
  const out: string[] = [];
  undeclared(config, { ...s, embeddedResource: true }, '', out);
  return out;
}

/** `failed to create typed patch object (...)`: how kube-apiserver (500, no reason) answers an undeclared apply field. */
export function typedPatchErrorMessage(config: KubeObject, group: string, version: string, kind: string, fields: readonly string[]): string {
  const meta = isObject(config.metadata) ? config.metadata : {};
  const errors = fields.map((f) => `${f}: field not declared in schema`);
  const text = errors.length === 1 ? errors[0]! : ['errors:', ...errors.map((e) => `  ${e}`)].join('\n');
  const ns = typeof meta.namespace === 'string' ? meta.namespace : '';
  const name = typeof meta.name === 'string' ? meta.name : '';
  return `failed to create typed patch object (${ns}/${name}; ${group}/${version}, Kind=${kind}): ${text}`;
}
