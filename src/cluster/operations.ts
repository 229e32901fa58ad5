/**
 * The verbs (get, list, create, update, patch, apply, delete, deletecollection) and subresources
 * (status, scale, binding, eviction, finalize) on any registered kind, following the generic registry of
 * kube-apiserver (k8s.io/apiserver/pkg/registry/generic/registry): system metadata, optimistic
 * concurrency, generation, status subresource rules, no-op updates, managed fields, server-side apply,
 * graceful deletion, finalizers and propagation policies. HTTP decoding and encoding live in server.ts;
 * this layer takes and returns plain objects and throws `ApiError`.
 */
import { randomUUID } from 'node:crypto';
import { parse as parseYaml } from 'yaml';
import { groupVersion, splitApiVersion } from '../model/api-path.js';
import { GENERATED_NAME_ALPHABET, GENERATED_SUFFIX_LENGTH } from '../model/generated-names.js';
import { cloneJson, jsonEqual } from '../model/json-value.js';
import { asLabelSelector, formatLabelSelector, matchesLabelSelector } from '../model/label-selector.js';
import { isObject, type KubeObject } from '../model/object-key.js';
import {
  ApiError,
  alreadyExists,
  badRequest,
  conflict,
  expired,
  forbidden,
  internalError,
  invalid,
  methodNotSupported,
  notFound,
  resourceVersionTooLarge,
  successStatus,
  tooManyRequests,
  unsupportedMediaType,
  type FieldError,
  type MetaStatus,
} from './api-error.js';
import { apply as serverSideApply, recordUpdate, type ManagerId, type WriteSite } from './field-manager.js';
import { applyJsonPatch, applyMergePatch, applyStrategicMergePatch, patchTypeOf, type PatchType } from './patch.js';
import { builtinUndeclaredApplyFields, builtinUnknownFields } from './openapi-builtin.js';
import { CustomResourceDecodingError, customResourceView, decodeCustomResource, storedObjectOf, typedPatchErrorMessage, undeclaredApplyFields } from './crd-schema.js';
import { defaultStorageClass } from './kinds/core.js';
import { conversionFor, groupResourceOf, hasStatusSubresource, storageKey, storageVersionOf, type ResourceDefinition, type ResourceRegistry } from './registry.js';
import { STANDARD_FIELDS, matchesFields, matchesLabels, parseFieldSelector, parseLabelSelector, type FieldGetter, type FieldRequirement, type LabelRequirement } from './selectors.js';
import type { ObjectStore } from './store.js';
import { validateMetaUpdate, validateObjectMeta } from './validation.js';

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
type UpdateMode = 'main' | 'status' | 'finalize' | 'system';

const NAMESPACES = { group: '', resource: 'namespaces' };
/** etcd's default --max-request-bytes: a stored object larger than this is refused with 413. */
export const MAX_OBJECT_BYTES = 1.5 * 1024 * 1024;
const PATCH_TYPES_BASE = ['application/json-patch+json', 'application/merge-patch+json', 'application/apply-patch+yaml'];
export const ORPHAN_FINALIZER = 'orphan';
export const FOREGROUND_FINALIZER = 'foregroundDeletion';
/** The manager recorded for writes without fieldManager and without a User-Agent. */
export const DEFAULT_FIELD_MANAGER = 'unknown';

export function nowTimestamp(offsetSeconds = 0): string {
  return new Date(Date.now() + offsetSeconds * 1000).toISOString().replace(/\.\d+Z$/, 'Z');
}

function generateName(prefix: string): string {
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

interface ContinueToken {
  v: 'meta.k8s.io/v1';
  rv: number;
  start: string;
}

function encodeContinue(token: ContinueToken): string {
  return Buffer.from(JSON.stringify(token)).toString('base64url');
}

const CONTINUE_EXPIRED =
  'The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter, or use the continue token in this response to retrieve the remainder of the results. Continuing with the provided token results in an inconsistent list - objects that were created, modified, or deleted between the time the first chunk was returned and now may show up in the list.';

function listOptionsInvalid(errors: FieldError[]): ApiError {
  return invalid('ListOptions', 'meta.k8s.io', '', errors);
}

/** Reads `.spec.replicas`-style paths. */
function readPath(obj: unknown, path: string): unknown {
  let cur = obj;
  for (const seg of path.split('.').filter(Boolean)) {
    if (!isObject(cur)) return undefined;
    cur = cur[seg];
  }
  return cur;
}

function writePath(obj: Record<string, unknown>, path: string, value: unknown): void {
  const segs = path.split('.').filter(Boolean);
  let cur = obj;
  for (const seg of segs.slice(0, -1)) {
    if (!isObject(cur[seg])) cur[seg] = {};
    cur = cur[seg] as Record<string, unknown>;
  }
  cur[segs[segs.length - 1]!] = value;
}

export class Operations {
  constructor(
    readonly store: ObjectStore,
    readonly registry: ResourceRegistry,
  ) {}

  /** Mutating admission of a default kube-apiserver that needs other objects than the one created. */
  private admitCreate(def: ResourceDefinition, obj: KubeObject): void {
    if (def.group === '' && def.resource === 'persistentvolumeclaims') defaultStorageClass(obj, this.store.list('storageclasses.storage.k8s.io'));
  }

  get(scope: Scope, name: string, resourceVersion?: string | null): Result {
    const rv = parseResourceVersion(resourceVersion);
    if (rv !== undefined && rv > this.store.resourceVersion) throw resourceVersionTooLarge(rv, this.store.resourceVersion);
    const stored = this.stored(scope, name);
    return { code: 200, body: present(scope.def, scope.version, stored) };
  }

  /**
   * Lists with the apiserver's resourceVersion semantics: unset = most recent, "0" = any (the limit is
   * ignored, as the watch cache does), "X" = not older than X, or exactly X with
   * resourceVersionMatch=Exact or with a limit; continue tokens read the snapshot of their first page and
   * expire (410) when it leaves the retained history.
   */
  list(scope: Scope, options: ListOptions): Result {
    const { def, version } = scope;
    const selection = parseSelection(def, options.labelSelector, options.fieldSelector);
    const rvText = options.resourceVersion ?? '';
    const match = options.resourceVersionMatch ?? '';
    const requestedRv = parseResourceVersion(rvText);
    const errors: FieldError[] = [];
    if (match !== '' && match !== 'Exact' && match !== 'NotOlderThan') {
      errors.push({ type: 'NotSupported', field: 'resourceVersionMatch', value: match, detail: 'supported values: "Exact", "NotOlderThan", ""' });
    }
    if (match !== '' && rvText === '') errors.push({ type: 'Forbidden', field: 'resourceVersionMatch', detail: 'resourceVersionMatch is forbidden unless resourceVersion is provided' });
    if (match !== '' && options.continueToken) errors.push({ type: 'Forbidden', field: 'resourceVersionMatch', detail: 'resourceVersionMatch is forbidden when continue is provided' });
    if (match === 'Exact' && rvText === '0') errors.push({ type: 'Forbidden', field: 'resourceVersionMatch', detail: 'resourceVersionMatch "exact" is forbidden for resourceVersion "0"' });
    if (errors.length > 0) throw listOptionsInvalid(errors);
    if (options.continueToken && rvText !== '') throw badRequest('specifying resource version is not allowed when using continue');
    if (requestedRv !== undefined && requestedRv > this.store.resourceVersion) throw resourceVersionTooLarge(requestedRv, this.store.resourceVersion);

    const resource = storageKey(def);
    const namespace = def.namespaced ? scope.namespace : undefined;
    const keyOf = (o: KubeObject): string => `${o.metadata?.namespace ?? ''}/${o.metadata?.name ?? ''}`;
    let limit = options.limit !== undefined && options.limit > 0 ? options.limit : undefined;
    let listRv = this.store.resourceVersion;
    let start = '';
    let snapshot: KubeObject[] | undefined;
    if (options.continueToken) {
      const token = decodeContinue(options.continueToken);
      start = token.start;
      snapshot = this.store.listAt(resource, namespace, token.rv);
      if (snapshot === undefined) {
        const fresh = encodeContinue({ v: 'meta.k8s.io/v1', rv: this.store.resourceVersion, start });
        throw expired(CONTINUE_EXPIRED, fresh);
      }
      listRv = token.rv;
    } else if (requestedRv === 0) {
      limit = undefined;
    } else if (requestedRv !== undefined && (match === 'Exact' || (match === '' && limit !== undefined))) {
      snapshot = this.store.listAt(resource, namespace, requestedRv);
      if (snapshot === undefined) throw expired(`The resourceVersion for the provided list is too old.`);
      listRv = requestedRv;
    }
    let items = (snapshot ?? this.store.list(resource, namespace)).filter((o) => selects(selection, o));
    if (start) items = items.filter((o) => keyOf(o) >= start);
    const metadata: Record<string, unknown> = { resourceVersion: String(listRv) };
    if (limit !== undefined && items.length > limit) {
      const remaining = items.length - limit;
      items = items.slice(0, limit);
      metadata.continue = encodeContinue({ v: 'meta.k8s.io/v1', rv: listRv, start: keyOf(items[items.length - 1]!) + '\u0000' });
      metadata.remainingItemCount = remaining;
    }
    const body: KubeObject = {
      kind: def.listKind,
      apiVersion: groupVersion(def.group, version),
      metadata,
      items: items.map((o) => present(def, version, o, def.listItemsCarryTypeMeta)),
    };
    return { code: 200, body };
  }

  create(scope: Scope, body: unknown, options: WriteOptions = {}): Result {
    const builtinWarnings = this.checkBuiltinFields(scope, body, options);
    const obj = this.decode(scope, body);
    const warnings = [...builtinWarnings, ...this.decodeCustom(scope, obj, sentVersion(scope, body), options)];
    const result = this.commitCreate(scope, obj, options, (created) =>
      recordUpdate(undefined, created, obj.metadata?.managedFields, this.managerId(scope, options, 'Update'), this.site(scope.def), this.rules(scope.def), nowTimestamp()),
    );
    return withWarnings(result, warnings);
  }

  private commitCreate(scope: Scope, obj: KubeObject, options: WriteOptions, managed: (created: KubeObject) => unknown): Result {
    const { def } = scope;
    const gr = groupResourceOf(def);
    const meta = obj.metadata!;
    const resource = storageKey(def);
    if (def.terminating) throw methodNotSupported(gr, 'create not allowed while custom resource definition is terminating; create');
    if (meta.resourceVersion) throw internalError('resourceVersion should not be set on objects to be created');
    if (def.namespaced) this.requireLiveNamespace(scope, meta.namespace!, meta.name ?? '');
    if (!meta.name && typeof meta.generateName === 'string' && meta.generateName !== '') {
      meta.name = generateName(meta.generateName);
      while (this.store.get(resource, meta.namespace, meta.name)) meta.name = generateName(meta.generateName);
    }
    meta.uid = randomUUID();
    meta.creationTimestamp = nowTimestamp();
    delete meta.deletionTimestamp;
    delete meta.deletionGracePeriodSeconds;
    delete meta.selfLink;
    if (def.strategy.tracksGeneration) meta.generation = 1;
    else delete meta.generation;
    if (hasStatusSubresource(def) && !def.strategy.keepsStatusOnCreate) delete obj.status;
    const initial = hasStatusSubresource(def) && obj.status === undefined ? def.strategy.initialStatus?.(obj) : undefined;
    if (initial !== undefined) obj.status = initial;
    def.strategy.prepareForCreate?.(obj);
    this.admitCreate(def, obj);
    this.validate(scope, obj, undefined, scope.version);
    const fields = managed(obj);
    delete meta.managedFields;
    if (fields !== undefined) meta.managedFields = fields as unknown[];
    if (this.store.get(resource, meta.namespace, meta.name!)) throw alreadyExists(gr, meta.name!);
    checkObjectSize(obj);
    if (options.dryRun) return { code: 201, body: present(def, scope.version, obj) };
    this.store.create(resource, obj);
    return { code: 201, body: present(def, scope.version, obj) };
  }

  update(scope: Scope, name: string, body: unknown, subresource: 'status' | 'finalize' | undefined, options: WriteOptions = {}): Result {
    const stored = (): unknown => {
      const obj = this.store.get(storageKey(scope.def), scope.def.namespaced ? scope.namespace : undefined, name);
      return obj && present(scope.def, sentVersion(scope, body), obj);
    };
    const builtinWarnings = this.checkBuiltinFields(scope, body, options, undefined, stored);
    const incoming = this.decode(scope, body);
    const warnings = [...builtinWarnings, ...this.decodeCustom(scope, incoming, sentVersion(scope, body), options)];
    const objName = incoming.metadata!.name ?? '';
    if (objName !== name) throw badRequest(`the name of the object (${objName}) does not match the name on the URL (${name})`);
    const old = this.stored(scope, name);
    return withWarnings(this.commitUpdate(scope, old, incoming, subresource ?? 'main', options), warnings);
  }

  patch(scope: Scope, name: string, contentType: string, rawBody: string, subresource: 'status' | undefined, options: PatchOptions = {}): Result {
    const { def } = scope;
    const type = this.patchType(def, contentType);
    if (type === 'apply') return this.apply(scope, name, rawBody, subresource, options);
    const patch = parsePatchBody(rawBody, type);
    const old = this.stored(scope, name);
    const current = present(def, scope.version, old);
    const patched = this.patched(def, scope.version, current, type, patch);
    // A strategic merge patch's strict error quotes the patch (Go's %+v of it), the others the patched object.
    const quoted = type === 'strategic' ? goMapText(patch) : goJson(patched);
    const builtinWarnings = this.checkBuiltinFields(scope, patched, options, quoted, () => current);
    const incoming = this.decode(scope, patched);
    const warnings = [...builtinWarnings, ...this.decodeCustom(scope, incoming, sentVersion(scope, patched), options, patched)];
    const objName = incoming.metadata!.name ?? '';
    if (objName !== name) throw badRequest(`the name of the object (${objName}) does not match the name on the URL (${name})`);
    return withWarnings(this.commitUpdate(scope, old, incoming, subresource ?? 'main', options), warnings);
  }

  private patchType(def: ResourceDefinition, contentType: string): PatchType {
    const type = patchTypeOf(contentType);
    const accepted = def.strategy.strategicMerge ? [...PATCH_TYPES_BASE.slice(0, 2), 'application/strategic-merge-patch+json', PATCH_TYPES_BASE[2]!] : PATCH_TYPES_BASE;
    if (type === undefined || (type === 'strategic' && !def.strategy.strategicMerge)) throw unsupportedMediaType(contentType, accepted);
    return type;
  }

  /** Patches the object as the client sees it at `version`, with that version's merge keys. */
  private patched(def: ResourceDefinition, version: string, current: KubeObject, type: PatchType, patch: unknown): unknown {
    const copy = cloneJson(current);
    if (type === 'json') return applyJsonPatch(copy, patch);
    if (type === 'merge') return applyMergePatch(copy, patch);
    return applyStrategicMergePatch(copy, patch, def.versionListRules?.[version] ?? def.strategy.listRules ?? {});
  }

  /** Server-side apply (PATCH with application/apply-patch+yaml): creates the object when it does not exist. */
  private apply(scope: Scope, name: string, rawBody: string, subresource: 'status' | undefined, options: PatchOptions): Result {
    const { def } = scope;
    if (!options.fieldManager) {
      throw invalid('PatchOptions', 'meta.k8s.io', '', [{ type: 'Required', field: 'fieldManager', detail: 'is required for apply patch' }]);
    }
    let parsed: unknown;
    try {
      parsed = parseYaml(rawBody);
    } catch (err) {
      throw badRequest(`error decoding YAML: ${(err as Error).message.split('\n')[0]}`);
    }
    if (!isObject(parsed)) throw badRequest('error decoding YAML: the applied configuration must be an object');
    if (typeof parsed.apiVersion !== 'string' || parsed.apiVersion === '') throw badRequest("Object 'apiVersion' is missing in the applied configuration");
    if (typeof parsed.kind !== 'string' || parsed.kind === '') throw badRequest("Object 'Kind' is missing in the applied configuration");
    if (isObject(parsed.metadata) && parsed.metadata.managedFields !== undefined && parsed.metadata.managedFields !== null) {
      throw badRequest('metadata.managedFields must be nil');
    }
    const applied = this.decode(scope, parsed);
    const appliedName = applied.metadata!.name ?? '';
    if (appliedName !== name) throw badRequest(`the name of the object (${appliedName}) does not match the name on the URL (${name})`);
    const id = this.managerId(scope, options, 'Apply', subresource);
    const site = this.site(def, subresource);
    const rules = this.rules(def);
    const stored = this.store.get(storageKey(def), def.namespaced ? scope.namespace : undefined, name);
    const live = stored && def.crdSchemas ? customResourceView(def.crdSchemas, stored) : stored;
    const appliedRv = applied.metadata!.resourceVersion;
    const config = cloneJson(applied);
    delete config.metadata!.resourceVersion;
    if (!live) {
      if (subresource) throw notFound(groupResourceOf(def), name);
      if (appliedRv) throw conflict(groupResourceOf(def), name);
      this.checkApplyFields(scope, parsed);
      const result = serverSideApply(undefined, config, id, options.force ?? false, site, rules, nowTimestamp());
      this.decodeCustom(scope, result.object, sentVersion(scope, parsed), { fieldValidation: 'Ignore' });
      return this.commitCreate(scope, result.object, options, () => result.managedFields);
    }
    this.checkApplyFields(scope, parsed);
    const result = serverSideApply(present(def, scope.version, live), config, id, options.force ?? false, site, rules, nowTimestamp());
    const merged = this.decode(scope, result.object);
    this.decodeCustom(scope, merged, sentVersion(scope, parsed), { fieldValidation: 'Ignore' });
    if (appliedRv) merged.metadata!.resourceVersion = appliedRv;
    else delete merged.metadata!.resourceVersion;
    return this.commitUpdate(scope, live, merged, subresource ?? 'main', options, result.managedFields ?? []);
  }

  delete(scope: Scope, name: string, options: DeleteOptions = {}): Result {
    const { def } = scope;
    const gr = groupResourceOf(def);
    const resource = storageKey(def);
    const old = this.stored(scope, name);
    const meta = old.metadata!;
    const pre = options.preconditions;
    if (pre?.uid && pre.uid !== meta.uid) {
      throw conflict(gr, name, `Precondition failed: UID in precondition: ${pre.uid}, UID in object meta: ${meta.uid ?? ''}`);
    }
    if (pre?.resourceVersion && pre.resourceVersion !== meta.resourceVersion) {
      throw conflict(gr, name, `Precondition failed: ResourceVersion in precondition: ${pre.resourceVersion}, ResourceVersion in object meta: ${meta.resourceVersion ?? ''}`);
    }
    const next = cloneJson(old);
    const nextMeta = next.metadata!;
    if (!meta.deletionTimestamp) def.strategy.prepareForDelete?.(next);
    let grace = options.gracePeriodSeconds;
    if (grace !== undefined && grace < 0) grace = 1;

    // Graceful deletion (rest.BeforeDelete): schedule, shorten, or leave a pending graceful deletion alone.
    let graceful = false;
    let pendingGraceful = false;
    if (def.strategy.gracefulDeletion) {
      if (meta.deletionTimestamp) {
        const current = meta.deletionGracePeriodSeconds;
        if (current !== undefined && current !== 0) {
          if (grace !== undefined && grace < current) {
            const scheduled = Date.parse(meta.deletionTimestamp) - current * 1000 + grace * 1000;
            nextMeta.deletionTimestamp = new Date(scheduled).toISOString().replace(/\.\d+Z$/, 'Z');
            nextMeta.deletionGracePeriodSeconds = grace;
            graceful = true;
          } else {
            pendingGraceful = true;
          }
        }
      } else {
        const period = def.strategy.gracefulDeletion(old, grace);
        nextMeta.deletionTimestamp = nowTimestamp(period);
        nextMeta.deletionGracePeriodSeconds = period;
        if ((nextMeta.generation ?? 0) > 0) nextMeta.generation = nextMeta.generation! + 1;
        graceful = true;
      }
    }
    const accepted = options.orphanDependents === false ? 202 : 200;
    if (pendingGraceful) return { code: accepted, body: present(def, scope.version, old) };

    // Propagation policy as finalizers (deletionFinalizersForGarbageCollection).
    const finalizers = gcFinalizers(nextMeta.finalizers ?? [], options);
    if (finalizers.length > 0) nextMeta.finalizers = finalizers;
    else delete nextMeta.finalizers;
    const pending = pendingFinalizers(def, next).length > 0;
    if (!graceful && pending) markAsDeleting(next);
    if (pending || (graceful && (nextMeta.deletionGracePeriodSeconds ?? 0) > 0)) {
      if (options.dryRun || jsonEqual(next, old)) return { code: accepted, body: present(def, scope.version, options.dryRun ? next : old) };
      const updated = this.store.update(resource, next, old);
      return { code: accepted, body: present(def, scope.version, updated) };
    }
    // Deleted now; a graceful kind (pods) records the zero-grace deletion first, as the real registry does.
    let last: KubeObject;
    if (options.dryRun) last = old;
    else if (graceful) last = this.store.delete(resource, this.store.update(resource, next, old));
    else last = this.store.delete(resource, old);
    if (def.strategy.returnDeletedObject) return { code: 200, body: present(def, scope.version, last) };
    const details: Record<string, string> = { name };
    if (def.group) details.group = def.group;
    details.kind = def.resource;
    details.uid = meta.uid ?? '';
    return { code: 200, body: successStatus(details) };
  }

  deleteCollection(scope: Scope, list: ListOptions, options: DeleteOptions = {}): Result {
    const { def, version } = scope;
    const selection = parseSelection(def, list.labelSelector, list.fieldSelector);
    const targets = this.store.list(storageKey(def), def.namespaced ? scope.namespace : undefined).filter((o) => selects(selection, o));
    const items: KubeObject[] = [];
    for (const target of targets) {
      const targetScope: Scope = { def, version, namespace: target.metadata?.namespace };
      try {
        const { preconditions: _p, ...each } = options;
        const result = this.delete(targetScope, target.metadata!.name!, each);
        items.push(result.body.kind === 'Status' ? present(def, version, target, def.listItemsCarryTypeMeta) : present(def, version, result.body as KubeObject, def.listItemsCarryTypeMeta));
      } catch (err) {
        if (!(err instanceof ApiError && err.code === 404)) throw err;
      }
    }
    const body: KubeObject = { kind: def.listKind, apiVersion: groupVersion(def.group, version), metadata: { resourceVersion: String(this.store.resourceVersion) }, items };
    return { code: 200, body };
  }

  // ---- scale subresource ----

  getScale(scope: Scope, name: string): Result {
    return { code: 200, body: this.scaleOf(scope, this.stored(scope, name)) };
  }

  updateScale(scope: Scope, name: string, body: unknown, options: WriteOptions = {}): Result {
    const old = this.stored(scope, name);
    return this.commitScale(scope, old, body, options);
  }

  patchScale(scope: Scope, name: string, contentType: string, rawBody: string, options: WriteOptions = {}): Result {
    const old = this.stored(scope, name);
    const type = patchTypeOf(contentType);
    if (type === undefined || type === 'apply') {
      throw unsupportedMediaType(contentType, ['application/json-patch+json', 'application/merge-patch+json', 'application/strategic-merge-patch+json']);
    }
    const patch = parsePatchBody(rawBody, type);
    const current = this.scaleOf(scope, old);
    const patched = type === 'json' ? applyJsonPatch(current, patch) : type === 'merge' ? applyMergePatch(current, patch) : applyStrategicMergePatch(current, patch, {});
    return this.commitScale(scope, old, patched, options);
  }

  private scaleOf(scope: Scope, obj: KubeObject): KubeObject {
    const paths = scope.def.scale!;
    const view = present(scope.def, scope.version, obj);
    const meta = obj.metadata!;
    const selectorValue = paths.labelSelectorPath ? readPath(view, paths.labelSelectorPath) : undefined;
    const selector = typeof selectorValue === 'string' ? selectorValue : formatLabelSelector(asLabelSelector(selectorValue));
    const status: Record<string, unknown> = { replicas: Number(readPath(view, paths.statusReplicasPath) ?? 0) };
    if (selector) status.selector = selector;
    return {
      kind: 'Scale',
      apiVersion: 'autoscaling/v1',
      metadata: {
        name: meta.name,
        ...(meta.namespace ? { namespace: meta.namespace } : {}),
        uid: meta.uid,
        resourceVersion: meta.resourceVersion,
        creationTimestamp: meta.creationTimestamp,
      },
      spec: { replicas: Number(readPath(view, paths.specReplicasPath) ?? 0) },
      status,
    };
  }

  private commitScale(scope: Scope, old: KubeObject, body: unknown, options: WriteOptions): Result {
    const { def } = scope;
    const name = old.metadata!.name!;
    if (!isObject(body)) throw badRequest('the object provided is unrecognized (must be of type Scale): the body is not a JSON object');
    const meta = isObject(body.metadata) ? body.metadata : {};
    if (meta.name !== undefined && meta.name !== name) throw badRequest(`the name of the object (${String(meta.name)}) does not match the name on the URL (${name})`);
    const replicas = isObject(body.spec) ? body.spec.replicas : undefined;
    if (typeof replicas !== 'number' || !Number.isInteger(replicas) || replicas < 0) {
      throw invalid('Scale', 'autoscaling', name, [{ type: 'Invalid', field: 'spec.replicas', value: replicas ?? null, detail: 'must be greater than or equal to 0' }]);
    }
    const rv = typeof meta.resourceVersion === 'string' && meta.resourceVersion !== '' ? meta.resourceVersion : undefined;
    if (rv !== undefined && rv !== old.metadata!.resourceVersion) throw conflict(groupResourceOf(def), name);
    const next = cloneJson(present(def, scope.version, old));
    writePath(next, def.scale!.specReplicasPath, replicas);
    const incoming = this.decode(scope, next);
    this.decodeCustom(scope, incoming, scope.version, { fieldValidation: 'Ignore' });
    const result = this.commitUpdate(scope, old, incoming, 'main', options, undefined, 'scale');
    return { code: result.code, body: this.scaleOf(scope, this.stored(scope, name)) };
  }

  // ---- pods/binding and pods/eviction ----

  /** POST pods/{name}/binding: assigns the pod to a node (the scheduler's write). */
  bind(scope: Scope, name: string, body: unknown, options: WriteOptions = {}): Result {
    if (!isObject(body)) throw badRequest('the object provided is unrecognized (must be of type Binding): the body is not a JSON object');
    const meta = isObject(body.metadata) ? body.metadata : {};
    if (meta.name !== undefined && meta.name !== name) throw badRequest('name in URL does not match name in Binding object');
    const target = isObject(body.target) ? body.target : {};
    if (typeof target.name !== 'string' || target.name === '') {
      throw invalid('Binding', '', name, [{ type: 'Required', field: 'target.name', detail: '' }]);
    }
    if (target.kind !== undefined && target.kind !== '' && target.kind !== 'Node') {
      throw invalid('Binding', '', name, [{ type: 'NotSupported', field: 'target.kind', value: target.kind, detail: 'supported values: "Node", ""' }]);
    }
    const pod = this.stored(scope, name);
    const podMeta = pod.metadata!;
    const refuse = (why: string): ApiError => conflict({ group: '', resource: 'pods/binding' }, name, why);
    if (typeof meta.uid === 'string' && meta.uid !== '' && meta.uid !== podMeta.uid) throw refuse(`Precondition failed: UID in precondition: ${meta.uid}, UID in object meta: ${podMeta.uid ?? ''}`);
    if (podMeta.deletionTimestamp) throw refuse(`pod ${name} is being deleted, cannot be assigned to a host`);
    const spec = isObject(pod.spec) ? pod.spec : {};
    if (typeof spec.nodeName === 'string' && spec.nodeName !== '') throw refuse(`pod ${name} is already assigned to node "${spec.nodeName}"`);
    if (Array.isArray(spec.schedulingGates) && spec.schedulingGates.length > 0) throw refuse(`pod ${name} has non-empty .spec.schedulingGates`);
    const annotations = isObject(meta.annotations) ? (meta.annotations as Record<string, string>) : {};
    const bound = cloneJson(pod);
    (bound.spec as Record<string, unknown>).nodeName = target.name;
    if (Object.keys(annotations).length > 0) bound.metadata!.annotations = { ...(bound.metadata!.annotations ?? {}), ...annotations };
    setCondition(bound, { type: 'PodScheduled', status: 'True', lastProbeTime: null, lastTransitionTime: nowTimestamp() });
    this.commitUpdate(scope, pod, bound, 'system', options, undefined, 'binding');
    return { code: 201, body: { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success', code: 201 } as MetaStatus };
  }

  /** POST pods/{name}/eviction: deletes the pod unless a PodDisruptionBudget forbids it (429). */
  evict(scope: Scope, name: string, body: unknown): Result {
    if (!isObject(body)) throw badRequest('the object provided is unrecognized (must be of type Eviction): the body is not a JSON object');
    const meta = isObject(body.metadata) ? body.metadata : {};
    if (meta.name !== undefined && meta.name !== name) throw badRequest('name in URL does not match name in Eviction object');
    const pod = this.stored(scope, name);
    const deleteOptions = isObject(body.deleteOptions) ? parseDeleteOptionsBody(body.deleteOptions) : {};
    const status = isObject(pod.status) ? pod.status : {};
    const terminal = status.phase === 'Succeeded' || status.phase === 'Failed' || status.phase === 'Pending';
    const pdbDef = this.registry.get({ group: 'policy', resource: 'poddisruptionbudgets' });
    if (!terminal && !pod.metadata?.deletionTimestamp && pdbDef) {
      const pdbs = this.store
        .list(storageKey(pdbDef), scope.namespace)
        .filter((p) => matchesLabelSelector(asLabelSelector(isObject(p.spec) ? p.spec.selector : undefined), pod.metadata?.labels));
      if (pdbs.length > 1) throw internalError('This pod has more than one PodDisruptionBudget, which the eviction subresource does not support.');
      const pdb = pdbs[0];
      if (pdb) {
        const pdbStatus = isObject(pdb.status) ? pdb.status : {};
        const allowed = typeof pdbStatus.disruptionsAllowed === 'number' ? pdbStatus.disruptionsAllowed : 0;
        const observed = typeof pdbStatus.observedGeneration === 'number' ? pdbStatus.observedGeneration : 0;
        if (observed < (pdb.metadata?.generation ?? 0)) {
          throw tooManyRequests('Cannot evict pod as it would violate the pod\'s disruption budget.', [
            { reason: 'DisruptionBudget', message: `The disruption budget ${pdb.metadata!.name} is still being processed by the server.` },
          ]);
        }
        if (allowed <= 0) {
          throw tooManyRequests('Cannot evict pod as it would violate the pod\'s disruption budget.', [
            {
              reason: 'DisruptionBudget',
              message: `The disruption budget ${pdb.metadata!.name} needs ${String(pdbStatus.desiredHealthy ?? 0)} healthy pods and has ${String(pdbStatus.currentHealthy ?? 0)} currently`,
            },
          ]);
        }
        if (!deleteOptions.dryRun) {
          this.systemUpdate(pdbDef, pdb, (p) => {
            const s = p.status as Record<string, unknown>;
            s.disruptionsAllowed = allowed - 1;
            s.disruptedPods = { ...(isObject(s.disruptedPods) ? s.disruptedPods : {}), [name]: nowTimestamp() };
          }, 'kube-apiserver', 'status');
        }
      }
    }
    this.delete(scope, name, deleteOptions);
    return { code: 201, body: { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success', code: 201 } as MetaStatus };
  }

  /**
   * A write by the server itself (a built-in controller): `mutate` edits a copy of the stored object
   * freely (spec.finalizers, status, metadata.finalizers); the usual no-op and deletion rules apply.
   */
  systemUpdate(def: ResourceDefinition, current: KubeObject, mutate: (obj: KubeObject) => void, manager = 'kube-controller-manager', subresource?: 'status'): Result {
    const next = cloneJson(current);
    mutate(next);
    const scope = { def, version: storageVersionOf(def), namespace: current.metadata?.namespace };
    return this.commitUpdate(scope, current, next, 'system', { fieldManager: manager }, undefined, subresource);
  }

  /**
   * Commits an update. `appliedManagedFields` (server-side apply) replaces managed-fields tracking;
   * `managerSubresource` names the subresource recorded in managedFields (scale, binding).
   */
  private commitUpdate(
    scope: Scope,
    old: KubeObject,
    incoming: KubeObject,
    mode: UpdateMode,
    options: WriteOptions,
    appliedManagedFields?: unknown[],
    managerSubresource?: string,
  ): Result {
    const { def } = scope;
    const gr = groupResourceOf(def);
    const resource = storageKey(def);
    const oldMeta = old.metadata!;
    const name = oldMeta.name!;
    const inMeta = incoming.metadata ?? {};
    if (inMeta.resourceVersion && inMeta.resourceVersion !== oldMeta.resourceVersion) throw conflict(gr, name);
    if (inMeta.uid && inMeta.uid !== oldMeta.uid) {
      throw conflict(gr, name, `Precondition failed: UID in precondition: ${inMeta.uid}, UID in object meta: ${oldMeta.uid ?? ''}`);
    }
    const incomingManaged = inMeta.managedFields;
    let next: KubeObject;
    if (mode === 'status' || mode === 'finalize') {
      next = cloneJson(old);
      if (mode === 'finalize') {
        const spec = isObject(incoming.spec) ? incoming.spec : {};
        next.spec = { ...(isObject(next.spec) ? next.spec : {}), finalizers: Array.isArray(spec.finalizers) ? spec.finalizers : [] };
      } else {
        if (incoming.status !== undefined) next.status = incoming.status;
        else delete next.status;
        const scopeOfWrite = def.strategy.statusWrite ?? 'status-only';
        if (scopeOfWrite !== 'status-only') {
          const meta = next.metadata!;
          for (const field of ['labels', 'annotations', 'finalizers'] as const) {
            if (field === 'labels' && scopeOfWrite === 'status-and-annotations') continue;
            if (inMeta[field] !== undefined && inMeta[field] !== null) (meta as Record<string, unknown>)[field] = inMeta[field];
            else delete (meta as Record<string, unknown>)[field];
          }
        }
      }
    } else {
      next = incoming;
      const meta = (next.metadata ?? (next.metadata = {})) as Record<string, unknown>;
      const previousMeta = oldMeta as Record<string, unknown>;
      for (const field of ['uid', 'creationTimestamp', 'deletionTimestamp', 'deletionGracePeriodSeconds', 'generation']) {
        if (previousMeta[field] !== undefined) meta[field] = previousMeta[field];
        else delete meta[field];
      }
      delete meta.selfLink;
      if (mode === 'main') {
        if (hasStatusSubresource(def)) {
          if (old.status !== undefined) next.status = old.status;
          else delete next.status;
        }
        def.strategy.prepareForUpdate?.(next, old);
        if (def.strategy.tracksGeneration && specChanged(def, next, old)) meta.generation = (oldMeta.generation ?? 0) + 1;
      }
    }
    next.apiVersion = old.apiVersion;
    next.kind = old.kind;
    next.metadata!.resourceVersion = oldMeta.resourceVersion;
    delete next.metadata!.managedFields;
    this.validate(scope, next, mode === 'system' ? undefined : old, mode === 'system' ? undefined : scope.version);
    if (mode === 'system') {
      const metaErrors = validateMetaUpdate(next, old);
      if (metaErrors.length > 0) throw invalid(def.kind, def.group, name, metaErrors);
    }
    const managed =
      appliedManagedFields ??
      recordUpdate(
        old,
        next,
        incomingManaged,
        this.managerId(scope, options, 'Update', managerSubresource ?? (mode === 'status' ? 'status' : undefined)),
        this.site(def, mode === 'status' || managerSubresource === 'status' ? 'status' : undefined),
        this.rules(def),
        nowTimestamp(),
      );
    if (managed !== undefined && (managed as unknown[]).length > 0) next.metadata!.managedFields = managed as unknown[];
    // No-op: nothing to write (compared with what is stored, not with its defaulted view: as etcd compares bytes).
    if (jsonEqual(next, storedObjectOf(old))) return { code: 200, body: present(def, scope.version, old) };
    if (oldMeta.deletionTimestamp && pendingFinalizers(def, next).length === 0 && (oldMeta.deletionGracePeriodSeconds ?? 0) === 0) {
      // The last finalizer is gone: the object is deleted instead of updated (the update itself is not
      // persisted, so the DELETED event carries the last stored state, as in the real registry).
      const last = options.dryRun ? old : this.store.delete(resource, old);
      return { code: 200, body: present(def, scope.version, last) };
    }
    checkObjectSize(next);
    if (options.dryRun) return { code: 200, body: present(def, scope.version, next) };
    this.store.update(resource, next, old);
    return { code: 200, body: present(def, scope.version, next) };
  }

  private managerId(scope: Scope, options: WriteOptions, operation: 'Apply' | 'Update', subresource?: string): ManagerId {
    const id: ManagerId = { manager: options.fieldManager || DEFAULT_FIELD_MANAGER, operation, apiVersion: groupVersion(scope.def.group, scope.version) };
    if (subresource) id.subresource = subresource;
    return id;
  }

  private site(def: ResourceDefinition, subresource?: 'status'): WriteSite {
    return { ...(subresource ? { subresource } : {}), statusSubresource: hasStatusSubresource(def) };
  }

  private rules(def: ResourceDefinition) {
    return def.strategy.listRules ?? {};
  }

  private validate(scope: Scope, obj: KubeObject, old: KubeObject | undefined, requestVersion: string | undefined): void {
    const { def } = scope;
    const errors = [
      ...validateObjectMeta(obj, { namespaced: def.namespaced, nameRule: def.strategy.nameRule }),
      ...(old ? validateMetaUpdate(obj, old) : []),
      ...(def.strategy.validate?.(obj, old, requestVersion) ?? []),
    ];
    if (errors.length > 0) {
      const name = typeof obj.metadata?.name === 'string' ? obj.metadata.name : '';
      throw invalid(def.kind, def.group, name, errors);
    }
  }

  /** The stored object as the storage codec decodes it (custom resources: pruned and defaulted, see crd-schema.ts). */
  private stored(scope: Scope, name: string): KubeObject {
    const { def } = scope;
    const obj = this.store.get(storageKey(def), def.namespaced ? scope.namespace : undefined, name);
    if (!obj) throw notFound(groupResourceOf(def), name);
    return def.crdSchemas ? customResourceView(def.crdSchemas, obj) : obj;
  }

  /**
   * Custom resources: the apiextensions codec on a decoded request body (prune, coerce metadata, default,
   * with the schema of the version it was sent in). Unknown fields, pruned in any case, fail the request
   * under fieldValidation=Strict (as a decoding error, or for a patch as an invalid patch) and become
   * warnings under Warn (the default).
   */
  private decodeCustom(scope: Scope, obj: KubeObject, version: string, options: WriteOptions, patched?: unknown): string[] {
    const { def } = scope;
    if (!def.crdSchemas) return [];
    const validation = options.fieldValidation ?? 'Warn';
    let unknown: string[];
    try {
      unknown = decodeCustomResource(def.crdSchemas, obj, version, validation !== 'Ignore');
    } catch (err) {
      if (err instanceof CustomResourceDecodingError) throw decodingError(scope, version, err.message, patched === undefined ? undefined : goJson(patched));
      throw err;
    }
    return unknownFieldWarnings(scope, version, validation, unknown, patched === undefined ? undefined : goJson(patched));
  }

  /**
   * Built-in kinds: the fields of the body (as sent, or the patch result) that the kind's schema at that
   * version does not declare (kube-apiserver's vendored schemas, openapi-builtin.ts) fail the request
   * under fieldValidation=Strict and become warnings under Warn, as the strict JSON decoder reports
   * them; under any fieldValidation they are dropped from `sent` (decoding into Go types drops them).
   * Checked only when the request names fieldValidation (kubectl always does), so writes of
   * controllers and the simulation never load the schemas and keep what they send. A stored object may
   * so hold unknown fields: an update or patch is charged only with those `current()` (the object
   * replaced or patched) lacks.
   * `quoted` is the patch value a patch's strict error quotes.
   */
  private checkBuiltinFields(scope: Scope, sent: unknown, options: WriteOptions, quoted?: string, current?: () => unknown): string[] {
    const { def } = scope;
    const validation = options.fieldValidation;
    if (def.definedBy !== 'builtin' || validation === undefined) return [];
    const version = sentVersion(scope, sent);
    const existing = current?.();
    const before = new Set(existing === undefined ? [] : (builtinUnknownFields(def.group, version, def.kind, existing) ?? []));
    const unknown = (builtinUnknownFields(def.group, version, def.kind, sent, { drop: true }) ?? []).filter((field) => !before.has(field));
    // A body's fields come in document order; a patch's as the patched map is walked, sorted.
    if (quoted !== undefined) unknown.sort();
    return validation === 'Ignore' ? [] : unknownFieldWarnings(scope, version, validation, unknown, quoted);
  }

  /**
   * Server-side apply types its configuration against the CRD schema, or a built-in kind's vendored
   * one: an undeclared field fails it (500, as kube-apiserver).
   */
  private checkApplyFields(scope: Scope, config: Record<string, unknown>): void {
    const { def } = scope;
    const version = sentVersion(scope, config);
    const fields = def.crdSchemas
      ? undeclaredApplyFields(def.crdSchemas, config as KubeObject, version)
      : def.definedBy === 'builtin'
        ? (builtinUndeclaredApplyFields(def.group, version, def.kind, config) ?? [])
        : [];
    if (fields.length > 0) throw new ApiError(500, '', typedPatchErrorMessage(config as KubeObject, def.group, version, def.kind, fields));
  }

  private requireLiveNamespace(scope: Scope, namespace: string, name: string): void {
    const ns = this.store.get('namespaces', undefined, namespace);
    if (!ns) throw notFound(NAMESPACES, namespace);
    if (ns.metadata?.deletionTimestamp) {
      const why = `unable to create new content in namespace ${namespace} because it is being terminated`;
      throw forbidden(groupResourceOf(scope.def), name, why, [
        { reason: 'NamespaceTerminating', message: `namespace ${namespace} is being terminated`, field: 'metadata.namespace' },
      ]);
    }
  }

  /** Checks a request body against the endpoint and returns a private copy in storage form. */
  private decode(scope: Scope, body: unknown): KubeObject {
    const { def } = scope;
    const expected = groupVersion(def.group, scope.version);
    if (!isObject(body)) throw badRequest(`the object provided is unrecognized (must be of type ${def.kind}): the body is not a JSON object`);
    let obj = cloneJson(body) as KubeObject;
    if (obj.kind !== undefined && obj.kind !== def.kind) {
      throw badRequest(`the object provided is unrecognized (must be of type ${def.kind}): kind "${String(obj.kind)}" does not match`);
    }
    if (obj.apiVersion !== undefined) {
      const gv = typeof obj.apiVersion === 'string' ? splitApiVersion(obj.apiVersion) : undefined;
      if (!gv || gv.group !== def.group || !def.versions.includes(gv.version)) {
        throw badRequest(`the API version in the data (${String(obj.apiVersion)}) does not match the expected API version (${expected})`);
      }
    }
    if (obj.metadata === undefined || obj.metadata === null) obj.metadata = {};
    if (!isObject(obj.metadata)) throw badRequest(`the object provided is unrecognized (must be of type ${def.kind}): metadata must be an object`);
    const meta = obj.metadata;
    if (def.namespaced) {
      if (meta.namespace && meta.namespace !== scope.namespace) {
        throw badRequest('the namespace of the provided object does not match the namespace sent on the request');
      }
      meta.namespace = scope.namespace;
    } else {
      delete meta.namespace;
    }
    const conversion = conversionFor(def, scope.version);
    if (conversion) obj = conversion.toStorage(obj);
    if (def.definedBy === 'builtin') normalizeTimes(obj);
    else normalizeTimes({ metadata: obj.metadata });
    obj.apiVersion = groupVersion(def.group, storageVersionOf(def));
    obj.kind = def.kind;
    return obj;
  }
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
function normalizeTimes(value: unknown, key = ''): unknown {
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
function sentVersion(scope: Scope, body: unknown): string {
  const apiVersion = isObject(body) && typeof body.apiVersion === 'string' ? splitApiVersion(body.apiVersion) : undefined;
  return apiVersion && apiVersion.group === scope.def.group && scope.def.versions.includes(apiVersion.version) ? apiVersion.version : scope.version;
}

/** A decoded JSON value as Go's fmt prints it with %+v: `map[a:1 b:[x y]]`, keys sorted. */
function goMapText(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(goMapText).join(' ')}]`;
  if (isObject(value)) return `map[${Object.keys(value).sort().map((k) => `${k}:${goMapText(value[k])}`).join(' ')}]`;
  if (value === null || value === undefined) return '<nil>';
  return String(value);
}

/** JSON as Go encodes an unstructured object: map keys sorted. */
function goJson(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) => (isObject(v) ? Object.fromEntries(Object.keys(v).sort().map((k) => [k, v[k]])) : v));
}

/**
 * A decoding error as the handlers word it: a body 400 (transformDecodeError), a patch 422 quoting
 * `quotedPatch` (the patched object, or a strategic merge patch itself).
 */
function decodingError(scope: Scope, version: string, text: string, quotedPatch: string | undefined): ApiError {
  const { def } = scope;
  if (quotedPatch === undefined) return badRequest(`${def.kind} in version "${version}" cannot be handled as a ${def.kind}: ${text}`);
  const err = invalid('', '', '', [{ type: 'Invalid', field: 'patch', value: quotedPatch, detail: text }]);
  return new ApiError(err.code, err.reason, err.message, { causes: err.details!.causes! });
}

/** Unknown fields under fieldValidation: a strict decoding error (Strict) or `Warning` texts (Warn). */
function unknownFieldWarnings(scope: Scope, version: string, validation: FieldValidation, unknown: readonly string[], quotedPatch: string | undefined): string[] {
  if (unknown.length === 0) return [];
  const messages = [...new Set(unknown)].map((p) => `unknown field "${p}"`);
  if (validation === 'Strict') throw decodingError(scope, version, `strict decoding error: ${messages.join(', ')}`, quotedPatch);
  return messages;
}

function withWarnings(result: Result, warnings: string[]): Result {
  return warnings.length > 0 ? { ...result, warnings } : result;
}

/** Refuses objects larger than etcd would store (413), before anything is committed. */
function checkObjectSize(obj: KubeObject): void {
  if (Buffer.byteLength(JSON.stringify(obj)) > MAX_OBJECT_BYTES) {
    throw new ApiError(413, 'RequestEntityTooLarge', 'Request entity too large: etcdserver: request is too large');
  }
}

function parsePatchBody(rawBody: string, type: PatchType): unknown {
  let patch: unknown;
  try {
    patch = JSON.parse(rawBody);
  } catch (err) {
    throw badRequest(`error decoding patch: ${(err as Error).message}`);
  }
  if (type !== 'json' && !isObject(patch)) throw badRequest('error decoding patch: a merge patch must be a JSON object');
  return patch;
}

/** DeleteOptions from a JSON object (a DELETE body, or an Eviction's deleteOptions). */
export function parseDeleteOptionsBody(body: Record<string, unknown>): DeleteOptions {
  const options: DeleteOptions = {};
  if (Array.isArray(body.dryRun)) {
    for (const v of body.dryRun) if (v !== 'All') throw badRequest(`dryRun: Unsupported value: ${JSON.stringify(v)}: supported values: "All"`);
    if (body.dryRun.length > 0) options.dryRun = true;
  }
  if (isObject(body.preconditions)) {
    const pre = body.preconditions;
    options.preconditions = {};
    if (typeof pre.uid === 'string') options.preconditions.uid = pre.uid;
    if (typeof pre.resourceVersion === 'string') options.preconditions.resourceVersion = pre.resourceVersion;
  }
  if (body.gracePeriodSeconds !== undefined && body.gracePeriodSeconds !== null) {
    if (typeof body.gracePeriodSeconds !== 'number' || !Number.isInteger(body.gracePeriodSeconds)) throw badRequest('gracePeriodSeconds must be an integer');
    options.gracePeriodSeconds = body.gracePeriodSeconds;
  }
  if (body.propagationPolicy !== undefined && body.propagationPolicy !== null) options.propagationPolicy = checkPropagationPolicy(body.propagationPolicy);
  if (typeof body.orphanDependents === 'boolean') options.orphanDependents = body.orphanDependents;
  if (options.orphanDependents !== undefined && options.propagationPolicy !== undefined) {
    throw invalid('DeleteOptions', 'meta.k8s.io', '', [{ type: 'Invalid', field: 'propagationPolicy', value: options.propagationPolicy, detail: 'orphanDependents and deletionPropagation cannot be both set' }]);
  }
  return options;
}

export function checkPropagationPolicy(value: unknown): PropagationPolicy {
  if (value === 'Orphan' || value === 'Background' || value === 'Foreground') return value;
  throw invalid('DeleteOptions', 'meta.k8s.io', '', [
    { type: 'NotSupported', field: 'propagationPolicy', value, detail: 'supported values: "Foreground", "Background", "Orphan", "nil"' },
  ]);
}

/** The finalizers after a DELETE's propagation policy (generic registry deletionFinalizersForGarbageCollection). */
function gcFinalizers(current: readonly string[], options: DeleteOptions): string[] {
  let orphan: boolean;
  let foreground: boolean;
  if (options.orphanDependents !== undefined) {
    orphan = options.orphanDependents;
    foreground = false;
  } else if (options.propagationPolicy !== undefined) {
    orphan = options.propagationPolicy === 'Orphan';
    foreground = options.propagationPolicy === 'Foreground';
  } else {
    const first = current.find((f) => f === ORPHAN_FINALIZER || f === FOREGROUND_FINALIZER);
    orphan = first === ORPHAN_FINALIZER;
    foreground = first === FOREGROUND_FINALIZER;
  }
  const out = current.filter((f) => f !== ORPHAN_FINALIZER && f !== FOREGROUND_FINALIZER);
  if (orphan) out.push(ORPHAN_FINALIZER);
  if (foreground) out.push(FOREGROUND_FINALIZER);
  const same = out.length === current.length && out.every((f) => current.includes(f));
  return same ? [...current] : out;
}

/** markAsDeleting: deletionTimestamp now (kept if already set), grace 0, generation bumped once. */
function markAsDeleting(obj: KubeObject): void {
  const meta = obj.metadata!;
  if (!meta.deletionTimestamp && (meta.generation ?? 0) > 0) meta.generation = meta.generation! + 1;
  if (!meta.deletionTimestamp) meta.deletionTimestamp = nowTimestamp();
  meta.deletionGracePeriodSeconds = 0;
}

interface Condition {
  type: string;
  status: string;
  lastProbeTime?: string | null;
  lastTransitionTime?: string;
  [field: string]: unknown;
}

/** podutil.UpdatePodCondition: replaces the condition of the same type, keeping lastTransitionTime if status is unchanged. */
function setCondition(obj: KubeObject, condition: Condition): void {
  const status = isObject(obj.status) ? obj.status : (obj.status = {});
  const conditions = Array.isArray(status.conditions) ? (status.conditions as Condition[]) : [];
  const existing = conditions.find((c) => c.type === condition.type);
  const next = existing && existing.status === condition.status ? { ...condition, lastTransitionTime: existing.lastTransitionTime } : condition;
  status.conditions = existing ? conditions.map((c) => (c.type === condition.type ? next : c)) : [...conditions, next];
}

/** Spec changes bump generation: everything but metadata (and status with a status subresource), plus listed annotations. */
function specChanged(def: ResourceDefinition, next: KubeObject, old: KubeObject): boolean {
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

function decodeContinue(token: string): ContinueToken {
  try {
    const parsed = JSON.parse(Buffer.from(token, 'base64url').toString('utf8')) as Partial<ContinueToken>;
    if (parsed.v === 'meta.k8s.io/v1' && typeof parsed.rv === 'number' && typeof parsed.start === 'string') return parsed as ContinueToken;
  } catch {
    // fall through
  }
  throw badRequest('continue key is not valid: incorrect encoded start resourceVersion (version meta.k8s.io/v1)');
}
