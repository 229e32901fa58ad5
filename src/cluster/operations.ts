/**
 * The verbs (get, list, create, update, patch, apply, delete, deletecollection) and subresources
 * (status, scale, binding, eviction, finalize) on any registered kind, following the generic registry of
 * kube-apiserver (k8s.io/apiserver/pkg/registry/generic/registry): system metadata, optimistic
 * concurrency, generation, status subresource rules, no-op updates, managed fields, server-side apply,
 * graceful deletion, finalizers and propagation policies. HTTP decoding and encoding live in server.ts;
 * this layer takes and returns plain objects and throws `ApiError`.
 *
 * This class is the write core (create, update, patch, server-side apply, and the commit, decoding
 * and validation every write shares); the other verbs live beside it in operations/ and get the core
 * as `OperationsCore`: reads.ts (get, list), deletion.ts (delete, deletecollection, DeleteOptions),
 * subresources.ts (scale, binding, eviction); support.ts holds the shared types and helpers.
 */
import { randomUUID } from 'node:crypto';
import { parse as parseYaml } from 'yaml';
import { groupVersion, splitApiVersion } from '../model/api-path.js';
import { cloneJson, jsonEqual } from '../model/json-value.js';
import { isObject, type KubeObject } from '../model/object-key.js';
import {
  ApiError,
  alreadyExists,
  badRequest,
  conflict,
  forbidden,
  internalError,
  invalid,
  methodNotSupported,
  notFound,
  unsupportedMediaType,
} from './api-error.js';
import { apply as serverSideApply, recordUpdate, type ManagerId, type WriteSite } from './field-manager.js';
import { applyJsonPatch, applyMergePatch, applyStrategicMergePatch, patchTypeOf, type PatchType } from './patch.js';
import { builtinUndeclaredApplyFields, builtinUnknownFields } from './openapi-builtin.js';
import {
  CustomResourceDecodingError,
  customResourceView,
  decodeCustomResource,
  storedObjectOf,
  typedPatchErrorMessage,
  undeclaredApplyFields,
} from './crd-schema.js';
import { defaultStorageClass } from './kinds/core.js';
import {
  conversionFor,
  groupResourceOf,
  hasStatusSubresource,
  storageKey,
  storageVersionOf,
  type ResourceDefinition,
  type ResourceRegistry,
} from './registry.js';
import type { ObjectStore } from './store.js';
import { validateMetaUpdate, validateObjectMeta } from './validation.js';
import {
  DEFAULT_FIELD_MANAGER,
  NAMESPACES,
  PATCH_TYPES_BASE,
  checkObjectSize,
  generateName,
  goJson,
  normalizeTimes,
  nowTimestamp,
  parsePatchBody,
  pendingFinalizers,
  present,
  sentVersion,
  specChanged,
  withWarnings,
  type DeleteOptions,
  type FieldValidation,
  type ListOptions,
  type OperationsCore,
  type PatchOptions,
  type Result,
  type Scope,
  type UpdateMode,
  type WriteOptions,
} from './operations/support.js';
import { deleteObject, deleteObjects } from './operations/deletion.js';
import { getObject, listObjects } from './operations/reads.js';
import { bind, evict, getScale, patchScale, updateScale } from './operations/subresources.js';

export { checkPropagationPolicy, parseDeleteOptionsBody } from './operations/deletion.js';
export {
  DEFAULT_FIELD_MANAGER,
  FOREGROUND_FINALIZER,
  MAX_OBJECT_BYTES,
  ORPHAN_FINALIZER,
  fieldGetters,
  nowTimestamp,
  parseResourceVersion,
  parseSelection,
  pendingFinalizers,
  present,
  selects,
  type DeleteOptions,
  type FieldValidation,
  type ListOptions,
  type PatchOptions,
  type PropagationPolicy,
  type Result,
  type Scope,
  type Selection,
  type WriteOptions,
} from './operations/support.js';

export class Operations implements OperationsCore {
  constructor(
    readonly store: ObjectStore,
    readonly registry: ResourceRegistry,
  ) {}

  /** Mutating admission of a default kube-apiserver that needs other objects than the one created. */
  private admitCreate(def: ResourceDefinition, obj: KubeObject): void {
    if (def.group === '' && def.resource === 'persistentvolumeclaims') defaultStorageClass(obj, this.store.list('storageclasses.storage.k8s.io'));
  }

  get(scope: Scope, name: string, resourceVersion?: string | null): Result {
    return getObject(this, scope, name, resourceVersion);
  }

  /** See reads.ts: the API server's resourceVersion semantics and continue tokens. */
  list(scope: Scope, options: ListOptions): Result {
    return listObjects(this, scope, options);
  }

  create(scope: Scope, body: unknown, options: WriteOptions = {}): Result {
    const builtinWarnings = this.checkBuiltinFields(scope, body, options);
    const obj = this.decode(scope, body);
    const warnings = [...builtinWarnings, ...this.decodeCustom(scope, obj, sentVersion(scope, body), options)];
    const result = this.commitCreate(scope, obj, options, (created) =>
      recordUpdate(
        undefined,
        created,
        obj.metadata?.managedFields,
        this.managerId(scope, options, 'Update'),
        this.site(scope.def),
        this.rules(scope.def),
        nowTimestamp(),
      ),
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
    const accepted = def.strategy.strategicMerge
      ? [...PATCH_TYPES_BASE.slice(0, 2), 'application/strategic-merge-patch+json', PATCH_TYPES_BASE[2]!]
      : PATCH_TYPES_BASE;
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
    return deleteObject(this, scope, name, options);
  }

  deleteCollection(scope: Scope, list: ListOptions, options: DeleteOptions = {}): Result {
    return deleteObjects(this, scope, list, options);
  }

  // ---- subresources (see subresources.ts) ----

  getScale(scope: Scope, name: string): Result {
    return getScale(this, scope, name);
  }

  updateScale(scope: Scope, name: string, body: unknown, options: WriteOptions = {}): Result {
    return updateScale(this, scope, name, body, options);
  }

  patchScale(scope: Scope, name: string, contentType: string, rawBody: string, options: WriteOptions = {}): Result {
    return patchScale(this, scope, name, contentType, rawBody, options);
  }

  /** POST pods/{name}/binding: assigns the pod to a node (the scheduler's write). */
  bind(scope: Scope, name: string, body: unknown, options: WriteOptions = {}): Result {
    return bind(this, scope, name, body, options);
  }

  /** POST pods/{name}/eviction: deletes the pod unless a PodDisruptionBudget forbids it (429). */
  evict(scope: Scope, name: string, body: unknown): Result {
    return evict(this, scope, name, body);
  }

  /**
   * A write by the server itself (a built-in controller): `mutate` edits a copy of the stored object
   * freely (spec.finalizers, status, metadata.finalizers); the usual no-op and deletion rules apply.
   */
  systemUpdate(
    def: ResourceDefinition,
    current: KubeObject,
    mutate: (obj: KubeObject) => void,
    manager = 'kube-controller-manager',
    subresource?: 'status',
  ): Result {
    const next = cloneJson(current);
    mutate(next);
    const scope = { def, version: storageVersionOf(def), namespace: current.metadata?.namespace };
    return this.commitUpdate(scope, current, next, 'system', { fieldManager: manager }, undefined, subresource);
  }

  /**
   * Commits an update. `appliedManagedFields` (server-side apply) replaces managed-fields tracking;
   * `managerSubresource` names the subresource recorded in managedFields (scale, binding).
   */
  commitUpdate(
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
    this.validate(scope, next, mode === 'system' ? undefined : old, mode === 'system' ? undefined : scope.version, mode === 'status' ? 'status' : undefined);
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

  private validate(scope: Scope, obj: KubeObject, old: KubeObject | undefined, requestVersion: string | undefined, subresource?: 'status'): void {
    const { def } = scope;
    const errors = [
      ...validateObjectMeta(obj, { namespaced: def.namespaced, nameRule: def.strategy.nameRule }),
      ...(old ? validateMetaUpdate(obj, old) : []),
      ...(def.strategy.validate?.(obj, old, requestVersion, subresource) ?? []),
    ];
    if (errors.length > 0) {
      const name = typeof obj.metadata?.name === 'string' ? obj.metadata.name : '';
      throw invalid(def.kind, def.group, name, errors);
    }
  }

  /** The stored object as the storage codec decodes it (custom resources: pruned and defaulted, see crd-schema.ts). */
  stored(scope: Scope, name: string): KubeObject {
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
  decodeCustom(scope: Scope, obj: KubeObject, version: string, options: WriteOptions, patched?: unknown): string[] {
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
  decode(scope: Scope, body: unknown): KubeObject {
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

/** A decoded JSON value as Go's fmt prints it with %+v: `map[a:1 b:[x y]]`, keys sorted. */
function goMapText(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(goMapText).join(' ')}]`;
  if (isObject(value))
    return `map[${Object.keys(value)
      .sort()
      .map((k) => `${k}:${goMapText(value[k])}`)
      .join(' ')}]`;
  if (value === null || value === undefined) return '<nil>';
  return String(value);
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
function unknownFieldWarnings(
  scope: Scope,
  version: string,
  validation: FieldValidation,
  unknown: readonly string[],
  quotedPatch: string | undefined,
): string[] {
  if (unknown.length === 0) return [];
  const messages = [...new Set(unknown)].map((p) => `unknown field "${p}"`);
  if (validation === 'Strict') throw decodingError(scope, version, `strict decoding error: ${messages.join(', ')}`, quotedPatch);
  return messages;
}
