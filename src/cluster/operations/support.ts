/**
 * What the operations share: the request types (scope, options, result), constants, how an object
 * is presented at a version, selections, and the small helpers on bodies (timestamps, patches,
 * sizes, conditions) that reads, writes, deletion and subresources all use.
 */
import { groupVersion, splitApiVersion } from '../../model/api-path.js';
import { GENERATED_NAME_ALPHABET, GENERATED_SUFFIX_LENGTH } from '../../model/generated-names.js';
import { jsonEqual } from '../../model/json-value.js';
import { isObject, type KubeObject } from '../../model/object-key.js';
import { ApiError, badRequest, type MetaStatus } from '../api-error.js';
import type { PatchType } from '../patch.js';
import { customResourceView } from '../crd-schema.js';
import { conversionFor, hasStatusSubresource, type ResourceDefinition, type ResourceRegistry } from '../registry.js';
import {
  STANDARD_FIELDS,
  matchesFields,
  matchesLabels,
  parseFieldSelector,
  parseLabelSelector,
  type FieldGetter,
  type FieldRequirement,
  type LabelRequirement,
} from '../selectors.js';
import type { ObjectStore } from '../store.js';

/** Where a request points: a kind at one of its served versions, and the namespace from the URL. */
export interface Scope {
  def: ResourceDefinition;
  version: string;
  namespace?: string | undefined;
}

export interface WriteOptions {
  dryRun?: boolean | undefined;
  /** The field manager recorded in managedFields (`fieldManager=`, else derived from the User-Agent). */
  fieldManager?: string | undefined;
  /**
   * `fieldValidation=`: what unknown fields of a custom resource do (they are pruned either way):
   * Strict fails the request, Warn (the server's default) answers with warnings, Ignore says nothing.
   */
  fieldValidation?: FieldValidation | undefined;
}

export type FieldValidation = 'Ignore' | 'Warn' | 'Strict';

export interface PatchOptions extends WriteOptions {
  /** Server-side apply: take ownership of conflicting fields. */
  force?: boolean | undefined;
}

export type PropagationPolicy = 'Orphan' | 'Background' | 'Foreground';

export interface DeleteOptions extends WriteOptions {
  preconditions?: { uid?: string | undefined; resourceVersion?: string | undefined };
  gracePeriodSeconds?: number;
  propagationPolicy?: PropagationPolicy;
  /** Deprecated boolean form of the propagation policy; wins over it when set. */
  orphanDependents?: boolean;
}

export interface ListOptions {
  labelSelector?: string | null | undefined;
  fieldSelector?: string | null | undefined;
  limit?: number | undefined;
  continueToken?: string | null | undefined;
  resourceVersion?: string | null | undefined;
  resourceVersionMatch?: string | null | undefined;
}

export interface Result {
  code: number;
  body: KubeObject | MetaStatus;
  /** Warnings for the `Warning` response header (unknown fields under fieldValidation=Warn). */
  warnings?: string[];
}

/**
 * What a write may change: the main resource, the status subresource, the finalize subresource
 * (namespaces' spec.finalizers), or (system) everything.
 */
export type UpdateMode = 'main' | 'status' | 'finalize' | 'system';

export const NAMESPACES = { group: '', resource: 'namespaces' };
/** etcd's default --max-request-bytes: a stored object larger than this is refused with 413. */
export const MAX_OBJECT_BYTES = 1.5 * 1024 * 1024;
export const PATCH_TYPES_BASE = ['application/json-patch+json', 'application/merge-patch+json', 'application/apply-patch+yaml'];
export const ORPHAN_FINALIZER = 'orphan';
export const FOREGROUND_FINALIZER = 'foregroundDeletion';
/** The manager recorded for writes without fieldManager and without a User-Agent. */
export const DEFAULT_FIELD_MANAGER = 'unknown';

export function nowTimestamp(offsetSeconds = 0): string {
  return new Date(Date.now() + offsetSeconds * 1000).toISOString().replace(/\.\d+Z$/, 'Z');
}

export function generateName(prefix: string): string {
  let suffix = '';
  for (let i = 0; i < GENERATED_SUFFIX_LENGTH; i++) suffix += GENERATED_NAME_ALPHABET[Math.floor(Math.random() * GENERATED_NAME_ALPHABET.length)];
  return prefix.slice(0, 58) + suffix;
}

/** The object as the client sees it at `version`; shares structure with the stored object (do not mutate). */
export function present(def: ResourceDefinition, version: string, obj: KubeObject, withTypeMeta = true): KubeObject {
  const conversion = conversionFor(def, version);
  const view = conversion ? conversion.fromStorage(obj) : def.crdSchemas ? customResourceView(def.crdSchemas, obj, version) : obj;
  const { apiVersion: _apiVersion, kind: _kind, metadata, ...rest } = view;
  if (!withTypeMeta) return { metadata, ...rest };
  return { kind: def.kind, apiVersion: groupVersion(def.group, version), metadata, ...rest };
}

export function fieldGetters(def: ResourceDefinition): Record<string, FieldGetter> {
  return { ...STANDARD_FIELDS, ...(def.strategy.selectableFields ?? {}) };
}

/** Finalizers still holding an object's deletion. */
export function pendingFinalizers(def: ResourceDefinition, obj: KubeObject): string[] {
  return [...(obj.metadata?.finalizers ?? []), ...(def.strategy.extraFinalizers?.(obj) ?? [])];
}

export interface Selection {
  labels: LabelRequirement[];
  fields: FieldRequirement[];
  getters: Record<string, FieldGetter>;
}

export function parseSelection(def: ResourceDefinition, labelSelector: string | null | undefined, fieldSelector: string | null | undefined): Selection {
  const getters = fieldGetters(def);
  return { labels: parseLabelSelector(labelSelector), fields: parseFieldSelector(fieldSelector, Object.keys(getters)), getters };
}

export function selects(selection: Selection, obj: KubeObject): boolean {
  return matchesLabels(selection.labels, obj.metadata?.labels) && matchesFields(selection.fields, obj, selection.getters);
}

/** Parses a resourceVersion query parameter: undefined for unset, or a non-negative integer. */
export function parseResourceVersion(value: string | null | undefined): number | undefined {
  if (value === null || value === undefined || value === '') return undefined;
  if (!/^\d+$/.test(value)) throw badRequest(`resourceVersion: Invalid value: "${value}": must be a non-negative integer`);
  return Number(value);
}

/** Reads `.spec.replicas`-style paths. */
export function readPath(obj: unknown, path: string): unknown {
  let cur = obj;
  for (const seg of path.split('.').filter(Boolean)) {
    if (!isObject(cur)) return undefined;
    cur = cur[seg];
  }
  return cur;
}

export function writePath(obj: Record<string, unknown>, path: string, value: unknown): void {
  const segs = path.split('.').filter(Boolean);
  let cur = obj;
  for (const seg of segs.slice(0, -1)) {
    if (!isObject(cur[seg])) cur[seg] = {};
    cur = cur[seg] as Record<string, unknown>;
  }
  cur[segs[segs.length - 1]!] = value;
}

const TIMESTAMP = /^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)(\.\d+)?(Z|[+-]\d\d:\d\d)$/;
/** metav1.MicroTime fields (6 fractional digits on the wire); every other time is metav1.Time (seconds). */
const MICRO_TIME_FIELDS = new Set(['eventTime', 'renewTime', 'acquireTime', 'lastObservedTime']);
/** Maps whose keys are user data, never time fields. */
const OPAQUE_MAPS = new Set(['data', 'binaryData', 'stringData', 'labels', 'annotations', 'matchLabels', 'selector', 'nodeSelector']);

/**
 * Times as typed decoding leaves them: RFC 3339 in UTC with seconds (metav1.Time) or microseconds
 * (metav1.MicroTime), so that a client echoing `...T10:00:00.000Z` back is a no-op. Applied to
 * fields named like times (`*Time`, `*Timestamp`, `*At`, managedFields' `time`) of built-in kinds.
 */
export function normalizeTimes(value: unknown, key = ''): unknown {
  if (typeof value === 'string') {
    if (!(key === 'time' || /(?:Time|Timestamp|At)$/.test(key))) return value;
    const m = TIMESTAMP.exec(value);
    if (!m) return value;
    const date = new Date(value);
    if (Number.isNaN(date.getTime())) return value;
    const iso = date.toISOString();
    if (MICRO_TIME_FIELDS.has(key)) {
      const fraction = (m[3] === 'Z' ? (m[2] ?? '') : iso.slice(19, 23)).slice(1).padEnd(6, '0').slice(0, 6);
      return `${iso.slice(0, 19)}.${fraction}Z`;
    }
    return `${iso.slice(0, 19)}Z`;
  }
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) value[i] = normalizeTimes(value[i], key);
    return value;
  }
  if (isObject(value)) {
    if (OPAQUE_MAPS.has(key)) return value;
    for (const [k, v] of Object.entries(value)) value[k] = normalizeTimes(v, k);
  }
  return value;
}

/** The version a request body was written in: its apiVersion's (checked by decode), else the URL's. */
export function sentVersion(scope: Scope, body: unknown): string {
  const apiVersion = isObject(body) && typeof body.apiVersion === 'string' ? splitApiVersion(body.apiVersion) : undefined;
  return apiVersion && apiVersion.group === scope.def.group && scope.def.versions.includes(apiVersion.version) ? apiVersion.version : scope.version;
}

/** JSON as Go encodes an unstructured object: map keys sorted. */
export function goJson(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) =>
    isObject(v)
      ? Object.fromEntries(
          Object.keys(v)
            .sort()
            .map((k) => [k, v[k]]),
        )
      : v,
  );
}

export function withWarnings(result: Result, warnings: string[]): Result {
  return warnings.length > 0 ? { ...result, warnings } : result;
}

/** Refuses objects larger than etcd would store (413), before anything is committed. */
export function checkObjectSize(obj: KubeObject): void {
  if (Buffer.byteLength(JSON.stringify(obj)) > MAX_OBJECT_BYTES) {
    throw new ApiError(413, 'RequestEntityTooLarge', 'Request entity too large: etcdserver: request is too large');
  }
}

export function parsePatchBody(rawBody: string, type: PatchType): unknown {
  let patch: unknown;
  try {
    patch = JSON.parse(rawBody);
  } catch (err) {
    throw badRequest(`error decoding patch: ${(err as Error).message}`);
  }
  if (type !== 'json' && !isObject(patch)) throw badRequest('error decoding patch: a merge patch must be a JSON object');
  return patch;
}

interface Condition {
  type: string;
  status: string;
  lastProbeTime?: string | null;
  lastTransitionTime?: string;
  [field: string]: unknown;
}

/** podutil.UpdatePodCondition: replaces the condition of the same type, keeping lastTransitionTime if status is unchanged. */
export function setCondition(obj: KubeObject, condition: Condition): void {
  const status = isObject(obj.status) ? obj.status : (obj.status = {});
  const conditions = Array.isArray(status.conditions) ? (status.conditions as Condition[]) : [];
  const existing = conditions.find((c) => c.type === condition.type);
  const next = existing && existing.status === condition.status ? { ...condition, lastTransitionTime: existing.lastTransitionTime } : condition;
  status.conditions = existing ? conditions.map((c) => (c.type === condition.type ? next : c)) : [...conditions, next];
}

/** Spec changes bump generation: everything but metadata (and status with a status subresource), plus listed annotations. */
export function specChanged(def: ResourceDefinition, next: KubeObject, old: KubeObject): boolean {
  const strip = (o: KubeObject): Record<string, unknown> => {
    const { metadata: _m, apiVersion: _a, kind: _k, ...rest } = o;
    if (hasStatusSubresource(def)) delete rest.status;
    return rest;
  };
  if (!jsonEqual(strip(next), strip(old))) return true;
  for (const a of def.strategy.generationAnnotations ?? []) {
    if (next.metadata?.annotations?.[a] !== old.metadata?.annotations?.[a]) return true;
  }
  return false;
}

/** What the verb modules (reads, deletion, subresources) use of the write core (the Operations class). */
export interface OperationsCore {
  readonly store: ObjectStore;
  readonly registry: ResourceRegistry;
  /** The stored object as the storage codec decodes it; 404 if there is none. */
  stored(scope: Scope, name: string): KubeObject;
  /** Checks a request body against the endpoint and returns a private copy in storage form. */
  decode(scope: Scope, body: unknown): KubeObject;
  decodeCustom(scope: Scope, obj: KubeObject, version: string, options: WriteOptions, patched?: unknown): string[];
  commitUpdate(
    scope: Scope,
    old: KubeObject,
    incoming: KubeObject,
    mode: UpdateMode,
    options: WriteOptions,
    appliedManagedFields?: unknown[],
    managerSubresource?: string,
  ): Result;
  systemUpdate(def: ResourceDefinition, current: KubeObject, mutate: (obj: KubeObject) => void, manager?: string, subresource?: 'status'): Result;
  delete(scope: Scope, name: string, options?: DeleteOptions): Result;
}
