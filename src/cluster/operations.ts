/**
 * The verbs (get, list, create, update, patch, delete, deletecollection) on any registered kind,
 * following the generic registry of kube-apiserver (k8s.io/apiserver/pkg/registry/generic/registry):
 * system metadata, optimistic concurrency, generation, status subresource rules, no-op updates,
 * finalizers and deletion. HTTP decoding and encoding live in server.ts; this layer takes and returns
 * plain objects and throws `ApiError`.
 */
import { randomUUID } from 'node:crypto';
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
  resourceVersionTooLarge,
  successStatus,
  unsupportedMediaType,
  type MetaStatus,
} from './api-error.js';
import { applyJsonPatch, applyMergePatch, applyStrategicMergePatch, patchTypeOf } from './patch.js';
import { groupResourceOf, hasStatusSubresource, resourceKey, type ResourceDefinition, type ResourceRegistry } from './registry.js';
import { STANDARD_FIELDS, matchesFields, matchesLabels, parseFieldSelector, parseLabelSelector, type FieldGetter, type FieldRequirement, type LabelRequirement } from './selectors.js';
import type { ObjectStore } from './store.js';
import { validateMetaUpdate, validateObjectMeta } from './validation.js';

/** Where a request points: a kind at one of its served versions, and the namespace from the URL. */
export interface Scope {
  def: ResourceDefinition;
  version: string;
  namespace?: string;
}

export interface WriteOptions {
  dryRun?: boolean;
}

export interface DeleteOptions extends WriteOptions {
  preconditions?: { uid?: string; resourceVersion?: string };
}

export interface ListOptions {
  labelSelector?: string | null;
  fieldSelector?: string | null;
  limit?: number;
  continueToken?: string | null;
  resourceVersion?: string | null;
}

export interface Result {
  code: number;
  body: KubeObject | MetaStatus;
}

/** What a main-resource write may change, what a status write may change, or (system) everything. */
type UpdateMode = 'main' | 'status' | 'system';

const NAMESPACES = { group: '', resource: 'namespaces' };
const NAME_SUFFIX_ALPHABET = 'bcdfghjklmnpqrstvwxz2456789';
const PATCH_TYPES_BASE = ['application/json-patch+json', 'application/merge-patch+json'];

export function nowTimestamp(): string {
  return new Date().toISOString().replace(/\.\d+Z$/, 'Z');
}

function generateName(prefix: string): string {
  let suffix = '';
  for (let i = 0; i < 5; i++) suffix += NAME_SUFFIX_ALPHABET[Math.floor(Math.random() * NAME_SUFFIX_ALPHABET.length)];
  return prefix.slice(0, 58) + suffix;
}

/** The object as the client sees it at `version`; shares structure with the stored object (do not mutate). */
export function present(def: ResourceDefinition, version: string, obj: KubeObject, withTypeMeta = true): KubeObject {
  const { apiVersion: _apiVersion, kind: _kind, metadata, ...rest } = obj;
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

export class Operations {
  constructor(
    readonly store: ObjectStore,
    readonly registry: ResourceRegistry,
  ) {}

  get(scope: Scope, name: string): Result {
    const stored = this.stored(scope, name);
    return { code: 200, body: present(scope.def, scope.version, stored) };
  }

  list(scope: Scope, options: ListOptions): Result {
    const { def, version } = scope;
    const selection = parseSelection(def, options.labelSelector, options.fieldSelector);
    const requestedRv = parseResourceVersion(options.resourceVersion);
    if (requestedRv !== undefined && requestedRv > this.store.resourceVersion) throw resourceVersionTooLarge(requestedRv, this.store.resourceVersion);
    let listRv = this.store.resourceVersion;
    let start = '';
    if (options.continueToken) {
      const token = decodeContinue(options.continueToken);
      listRv = token.rv;
      start = token.start;
    }
    const keyOf = (o: KubeObject): string => `${o.metadata?.namespace ?? ''}/${o.metadata?.name ?? ''}`;
    let items = this.store.list(resourceKey(def), def.namespaced ? scope.namespace : undefined).filter((o) => selects(selection, o));
    if (start) items = items.filter((o) => keyOf(o) >= start);
    const metadata: Record<string, unknown> = { resourceVersion: String(listRv) };
    if (options.limit !== undefined && options.limit > 0 && items.length > options.limit) {
      const remaining = items.length - options.limit;
      items = items.slice(0, options.limit);
      const token: ContinueToken = { v: 'meta.k8s.io/v1', rv: listRv, start: keyOf(items[items.length - 1]!) + '\u0000' };
      metadata.continue = Buffer.from(JSON.stringify(token)).toString('base64url');
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
    const { def } = scope;
    const gr = groupResourceOf(def);
    const obj = this.decode(scope, body);
    const meta = obj.metadata!;
    if (def.terminating) throw methodNotSupported(gr, 'create not allowed while custom resource definition is terminating; create');
    if (meta.resourceVersion) throw internalError('resourceVersion should not be set on objects to be created');
    if (def.namespaced) this.requireLiveNamespace(scope, meta.namespace!, meta.name ?? '');
    if (!meta.name && typeof meta.generateName === 'string' && meta.generateName !== '') {
      meta.name = generateName(meta.generateName);
      while (this.store.get(resourceKey(def), meta.namespace, meta.name)) meta.name = generateName(meta.generateName);
    }
    meta.uid = randomUUID();
    meta.creationTimestamp = nowTimestamp();
    delete meta.deletionTimestamp;
    delete meta.deletionGracePeriodSeconds;
    delete meta.selfLink;
    delete meta.managedFields;
    if (def.strategy.tracksGeneration) meta.generation = 1;
    else delete meta.generation;
    if (hasStatusSubresource(def)) delete obj.status;
    def.strategy.prepareForCreate?.(obj);
    this.validate(def, obj, undefined);
    if (this.store.get(resourceKey(def), meta.namespace, meta.name!)) throw alreadyExists(gr, meta.name!);
    if (options.dryRun) return { code: 201, body: present(def, scope.version, obj) };
    this.store.create(resourceKey(def), obj);
    return { code: 201, body: present(def, scope.version, obj) };
  }

  update(scope: Scope, name: string, body: unknown, subresource: 'status' | undefined, options: WriteOptions = {}): Result {
    const incoming = this.decode(scope, body);
    const objName = incoming.metadata!.name ?? '';
    if (objName !== name) throw badRequest(`the name of the object (${objName}) does not match the name on the URL (${name})`);
    const old = this.stored(scope, name);
    return this.commitUpdate(scope, old, incoming, subresource ?? 'main', options);
  }

  patch(scope: Scope, name: string, contentType: string, rawBody: string, subresource: 'status' | undefined, options: WriteOptions = {}): Result {
    const { def } = scope;
    const type = patchTypeOf(contentType);
    const accepted = def.strategy.strategicMergeLists ? [...PATCH_TYPES_BASE, 'application/strategic-merge-patch+json'] : PATCH_TYPES_BASE;
    if (type === undefined || type === 'apply' || (type === 'strategic' && !def.strategy.strategicMergeLists)) {
      throw unsupportedMediaType(contentType, accepted);
    }
    let patch: unknown;
    try {
      patch = JSON.parse(rawBody);
    } catch (err) {
      throw badRequest(`error decoding patch: ${(err as Error).message}`);
    }
    if (type !== 'json' && !isObject(patch)) throw badRequest('error decoding patch: a merge patch must be a JSON object');
    const old = this.stored(scope, name);
    const current = cloneJson(present(def, scope.version, old));
    let patched: unknown;
    if (type === 'json') patched = applyJsonPatch(current, patch);
    else if (type === 'merge') patched = applyMergePatch(current, patch);
    else patched = applyStrategicMergePatch(current, patch, def.strategy.strategicMergeLists!);
    const incoming = this.decode(scope, patched);
    const objName = incoming.metadata!.name ?? '';
    if (objName !== name) throw badRequest(`the name of the object (${objName}) does not match the name on the URL (${name})`);
    return this.commitUpdate(scope, old, incoming, subresource ?? 'main', options);
  }

  delete(scope: Scope, name: string, options: DeleteOptions = {}): Result {
    const { def } = scope;
    const gr = groupResourceOf(def);
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
    if (!meta.deletionTimestamp) def.strategy.prepareForDelete?.(next);
    if (pendingFinalizers(def, next).length > 0) {
      const nextMeta = next.metadata!;
      if (!nextMeta.deletionTimestamp) {
        nextMeta.deletionTimestamp = nowTimestamp();
        nextMeta.deletionGracePeriodSeconds = 0;
        if (def.strategy.tracksGeneration && (nextMeta.generation ?? 0) > 0) nextMeta.generation = nextMeta.generation! + 1;
      }
      if (options.dryRun || jsonEqual(next, old)) return { code: 200, body: present(def, scope.version, options.dryRun ? next : old) };
      this.store.update(resourceKey(def), next, old);
      return { code: 200, body: present(def, scope.version, next) };
    }
    const last = options.dryRun ? old : this.store.delete(resourceKey(def), old);
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
    const targets = this.store.list(resourceKey(def), def.namespaced ? scope.namespace : undefined).filter((o) => selects(selection, o));
    const items: KubeObject[] = [];
    for (const target of targets) {
      const targetScope: Scope = { def, version, namespace: target.metadata?.namespace };
      try {
        const result = this.delete(targetScope, target.metadata!.name!, { dryRun: options.dryRun });
        items.push(result.body.kind === 'Status' ? present(def, version, target, def.listItemsCarryTypeMeta) : present(def, version, result.body as KubeObject, def.listItemsCarryTypeMeta));
      } catch (err) {
        if (!(err instanceof ApiError && err.code === 404)) throw err;
      }
    }
    const body: KubeObject = { kind: def.listKind, apiVersion: groupVersion(def.group, version), metadata: { resourceVersion: String(this.store.resourceVersion) }, items };
    return { code: 200, body };
  }

  /**
   * A write by the server itself (a built-in controller): `mutate` edits a copy of the stored object
   * freely (spec.finalizers, status, metadata.finalizers); the usual no-op and deletion rules apply.
   */
  systemUpdate(def: ResourceDefinition, current: KubeObject, mutate: (obj: KubeObject) => void): Result {
    const next = cloneJson(current);
    mutate(next);
    return this.commitUpdate({ def, version: def.versions[0]!, namespace: current.metadata?.namespace }, current, next, 'system', {});
  }

  private commitUpdate(scope: Scope, old: KubeObject, incoming: KubeObject, mode: UpdateMode, options: WriteOptions): Result {
    const { def } = scope;
    const gr = groupResourceOf(def);
    const oldMeta = old.metadata!;
    const name = oldMeta.name!;
    const inMeta = incoming.metadata ?? {};
    if (inMeta.resourceVersion && inMeta.resourceVersion !== oldMeta.resourceVersion) throw conflict(gr, name);
    if (inMeta.uid && inMeta.uid !== oldMeta.uid) {
      throw conflict(gr, name, `Precondition failed: UID in precondition: ${inMeta.uid}, UID in object meta: ${oldMeta.uid ?? ''}`);
    }
    let next: KubeObject;
    if (mode === 'status') {
      next = cloneJson(old);
      if (incoming.status !== undefined) next.status = incoming.status;
      else delete next.status;
    } else {
      next = incoming;
      const meta = (next.metadata ?? (next.metadata = {})) as Record<string, unknown>;
      const previousMeta = oldMeta as Record<string, unknown>;
      for (const field of ['uid', 'creationTimestamp', 'deletionTimestamp', 'deletionGracePeriodSeconds', 'generation']) {
        if (previousMeta[field] !== undefined) meta[field] = previousMeta[field];
        else delete meta[field];
      }
      delete meta.selfLink;
      delete meta.managedFields;
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
    this.validate(def, next, old);
    if (jsonEqual(next, old)) return { code: 200, body: present(def, scope.version, old) };
    if (oldMeta.deletionTimestamp && pendingFinalizers(def, next).length === 0) {
      // The last finalizer is gone: the object is deleted instead of updated (the update itself is not
      // persisted, so the DELETED event carries the last stored state, as in the real registry).
      const last = options.dryRun ? old : this.store.delete(resourceKey(def), old);
      return { code: 200, body: present(def, scope.version, last) };
    }
    if (options.dryRun) return { code: 200, body: present(def, scope.version, next) };
    this.store.update(resourceKey(def), next, old);
    return { code: 200, body: present(def, scope.version, next) };
  }

  private validate(def: ResourceDefinition, obj: KubeObject, old: KubeObject | undefined): void {
    const errors = [
      ...validateObjectMeta(obj, { namespaced: def.namespaced, nameRule: def.strategy.nameRule }),
      ...(old ? validateMetaUpdate(obj, old) : []),
      ...(def.strategy.validate?.(obj, old) ?? []),
    ];
    if (errors.length > 0) {
      const name = typeof obj.metadata?.name === 'string' ? obj.metadata.name : '';
      throw invalid(def.kind, def.group, name, errors);
    }
  }

  private stored(scope: Scope, name: string): KubeObject {
    const { def } = scope;
    const obj = this.store.get(resourceKey(def), def.namespaced ? scope.namespace : undefined, name);
    if (!obj) throw notFound(groupResourceOf(def), name);
    return obj;
  }

  private requireLiveNamespace(scope: Scope, namespace: string, name: string): void {
    const ns = this.store.get(resourceKey(NAMESPACES), undefined, namespace);
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
    const obj = cloneJson(body) as KubeObject;
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
    obj.apiVersion = groupVersion(def.group, def.versions[0]!);
    obj.kind = def.kind;
    return obj;
  }
}

/** For kinds with a status subresource only spec-like fields count; without one, everything but metadata. */
function specChanged(def: ResourceDefinition, next: KubeObject, old: KubeObject): boolean {
  const strip = (o: KubeObject): Record<string, unknown> => {
    const { metadata: _m, apiVersion: _a, kind: _k, ...rest } = o;
    if (hasStatusSubresource(def)) delete rest.status;
    return rest;
  };
  return !jsonEqual(strip(next), strip(old));
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

