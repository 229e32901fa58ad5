/**
 * The two controllers a bare kube-apiserver needs to be usable on its own, run in-process:
 * - the CRD controller (apiextensions-apiserver's naming, establishing and finalizing controllers):
 *   serves a kind once its CRD exists, reports Established/NamesAccepted, and on CRD deletion deletes
 *   every instance before letting the CRD go;
 * - a simplified namespace controller (kube-controller-manager's namespace deleter): deletes the content
 *   of a terminating namespace, then clears its `kubernetes` finalizer so that the namespace goes away.
 *
 * Both react to store changes on a microtask, so their writes come right after the change that caused
 * them (before any other client request is served) and show up as ordinary watch events.
 */
import { isObject, type KubeObject } from '../model/object-key.js';
import { ApiError } from './api-error.js';
import { CRD_CLEANUP_FINALIZER, NAMESPACE_FINALIZER, setCrdCondition } from './builtins.js';
import type { Operations } from './operations.js';
import {
  ALL_VERBS,
  compareKubeVersions,
  storageKey,
  type ListRule,
  type ListRules,
  type ResourceDefinition,
  type ResourceRegistry,
  type ScalePaths,
} from './registry.js';
import { OBJECT_META_LIST_RULES } from './kinds/list-rules.js';
import { customResourceSchemas, validateEmbeddedResources, type CustomResourceSchemas } from './crd-schema.js';
import { validateCustomResource } from './crd-validation.js';
import { printerColumnsOfCrd } from './table.js';
import type { ObjectStore, StoreChange } from './store.js';

const CRD_RESOURCE = 'customresourcedefinitions.apiextensions.k8s.io';
const NAMESPACE_RESOURCE = 'namespaces';

/** Runs each keyed task once per microtask turn, however many changes asked for it. */
class MicrotaskQueue {
  private readonly pending = new Set<string>();
  constructor(private readonly run: (key: string) => void) {}
  enqueue(key: string): void {
    if (this.pending.has(key)) return;
    this.pending.add(key);
    queueMicrotask(() => {
      this.pending.delete(key);
      try {
        this.run(key);
      } catch {
        // A controller failure must not take the server down; the next change retries.
      }
    });
  }
}

interface CrdNames {
  plural: string;
  singular: string;
  kind: string;
  listKind: string;
  shortNames: string[];
  categories: string[];
}

function crdNames(crd: KubeObject): CrdNames | undefined {
  const spec = isObject(crd.spec) ? crd.spec : undefined;
  const names = spec && isObject(spec.names) ? spec.names : undefined;
  if (!names || typeof names.plural !== 'string' || typeof names.kind !== 'string') return undefined;
  const strings = (v: unknown): string[] => (Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : []);
  return {
    plural: names.plural,
    singular: typeof names.singular === 'string' && names.singular ? names.singular : names.kind.toLowerCase(),
    kind: names.kind,
    listKind: typeof names.listKind === 'string' && names.listKind ? names.listKind : `${names.kind}List`,
    shortNames: strings(names.shortNames),
    categories: strings(names.categories),
  };
}

/** The kind a CRD defines, or undefined when it serves no version. */
export function definitionFromCrd(crd: KubeObject): ResourceDefinition | undefined {
  const spec = isObject(crd.spec) ? crd.spec : undefined;
  const names = crdNames(crd);
  if (!spec || !names || typeof spec.group !== 'string') return undefined;
  const versions = (Array.isArray(spec.versions) ? spec.versions : []).filter(isObject);
  const served = versions.filter((v) => v.served === true && typeof v.name === 'string');
  if (served.length === 0) return undefined;
  // Subresources are per version in Kubernetes; here one is on when any served version declares it.
  const status = served.some((v) => isObject(v.subresources) && v.subresources.status !== undefined && v.subresources.status !== null);
  const scaleSpec = served
    .map((v) => (isObject(v.subresources) && isObject(v.subresources.scale) ? v.subresources.scale : undefined))
    .find((x) => x !== undefined);
  const scale: ScalePaths | undefined =
    scaleSpec && typeof scaleSpec.specReplicasPath === 'string' && typeof scaleSpec.statusReplicasPath === 'string'
      ? {
          specReplicasPath: scaleSpec.specReplicasPath,
          statusReplicasPath: scaleSpec.statusReplicasPath,
          ...(typeof scaleSpec.labelSelectorPath === 'string' ? { labelSelectorPath: scaleSpec.labelSelectorPath } : {}),
        }
      : undefined;
  const storage = versions.find((v) => v.storage === true) ?? served[0]!;
  const schema = isObject(storage.schema) ? storage.schema.openAPIV3Schema : undefined;
  const crdSchemas = customResourceSchemas(crd);
  return {
    group: spec.group,
    versions: served.map((v) => v.name as string).sort(compareKubeVersions),
    resource: names.plural,
    singularName: names.singular,
    kind: names.kind,
    listKind: names.listKind,
    namespaced: spec.scope === 'Namespaced',
    shortNames: names.shortNames,
    categories: names.categories,
    verbs: [...ALL_VERBS],
    subresources: [...(status ? ['status'] : []), ...(scale ? ['scale'] : [])],
    ...(scale ? { scale } : {}),
    crdSchemas,
    printerColumns: printerColumnsOfCrd(crd),
    schemas: Object.fromEntries(
      served
        .filter((v) => isObject(v.schema) && isObject(v.schema.openAPIV3Schema))
        .map((v) => [v.name as string, (v.schema as Record<string, unknown>).openAPIV3Schema]),
    ),
    listItemsCarryTypeMeta: true,
    definedBy: crd.metadata!.name!,
    strategy: {
      tracksGeneration: true,
      listRules: { ...OBJECT_META_LIST_RULES, ...listRulesFromSchema(schema) },
      statusWrite: 'status-only',
      returnDeletedObject: false,
      nameRule: 'dns1123-subdomain',
      ...(crdSchemas ? { validate: customResourceValidator(crdSchemas) } : {}),
    },
  };
}

/**
 * The strategy's validation of a custom resource: embedded resources (main writes), and for client
 * writes the schema's values, list types and CEL rules in the version written (crd-validation.ts).
 * The server's own writes (garbage collection of metadata) are not schema-validated.
 */
function customResourceValidator(schemas: CustomResourceSchemas): NonNullable<ResourceDefinition['strategy']['validate']> {
  return (obj, old, requestVersion, subresource) => {
    const embedded = subresource === 'status' ? [] : validateEmbeddedResources(schemas, obj);
    if (requestVersion === undefined) return embedded;
    return validateCustomResource(schemas, obj, old, requestVersion, subresource, embedded).errors;
  };
}

/** Server-side apply list types from a CRD's structural schema (x-kubernetes-list-type/-list-map-keys). */
export function listRulesFromSchema(schema: unknown): ListRules {
  const rules: Record<string, ListRule> = {};
  const walk = (node: unknown, path: string, depth: number): void => {
    if (!isObject(node) || depth > 32) return;
    if (node.type === 'array') {
      const type = node['x-kubernetes-list-type'];
      const keys = node['x-kubernetes-list-map-keys'];
      if (type === 'map' && Array.isArray(keys) && keys.every((k) => typeof k === 'string')) rules[path] = { listType: 'map', listMapKeys: keys as string[] };
      else if (type === 'set') rules[path] = { listType: 'set' };
      walk(node.items, `${path}[]`, depth + 1);
      return;
    }
    if (isObject(node.properties)) {
      for (const [key, child] of Object.entries(node.properties)) walk(child, path ? `${path}.${key}` : key, depth + 1);
    }
  };
  walk(schema, '', 0);
  return rules;
}

export class CrdController {
  private readonly queue = new MicrotaskQueue((name) => this.reconcile(name));

  constructor(
    private readonly store: ObjectStore,
    private readonly registry: ResourceRegistry,
    private readonly ops: Operations,
  ) {}

  start(): () => void {
    return this.store.subscribe((change) => this.observe(change));
  }

  private observe(change: StoreChange): void {
    if (change.resource === CRD_RESOURCE) {
      if (change.type === 'DELETED') this.unregister(change.name);
      else this.queue.enqueue(change.name);
      return;
    }
    if (change.type !== 'DELETED') return;
    const def = this.registry.all().find((d) => storageKey(d) === change.resource);
    if (def?.terminating) this.queue.enqueue(def.definedBy);
  }

  private crdDefinition(): ResourceDefinition {
    return this.registry.get({ group: 'apiextensions.k8s.io', resource: 'customresourcedefinitions' })!;
  }

  private servedBy(crdName: string): ResourceDefinition | undefined {
    return this.registry.all().find((d) => d.definedBy === crdName);
  }

  private unregister(crdName: string): void {
    const def = this.servedBy(crdName);
    if (!def) return;
    this.registry.remove(def);
    this.store.drop(storageKey(def));
  }

  private reconcile(name: string): void {
    const crd = this.store.get(CRD_RESOURCE, undefined, name);
    if (!crd) return;
    if (crd.metadata?.deletionTimestamp) {
      this.finalize(crd);
      return;
    }
    const def = definitionFromCrd(crd);
    const names = crdNames(crd);
    if (!def || !names) {
      this.unregister(name);
      return;
    }
    const clash = this.registry.all().find((d) => d.definedBy !== name && d.group === def.group && (d.resource === def.resource || d.kind === def.kind));
    const previous = this.servedBy(name);
    if (!clash) {
      if (previous && (previous.group !== def.group || previous.resource !== def.resource)) this.unregister(name);
      this.registry.define(def);
    }
    this.ops.systemUpdate(
      this.crdDefinition(),
      crd,
      (obj) => {
        const status = isObject(obj.status) ? obj.status : (obj.status = {});
        if (clash) {
          setCrdCondition(obj, { type: 'NamesAccepted', status: 'False', reason: 'NameConflict', message: `"${def.resource}" is already in use` });
          setCrdCondition(obj, { type: 'Established', status: 'False', reason: 'NotAccepted', message: 'not all names are accepted' });
          return;
        }
        status.acceptedNames = {
          plural: names.plural,
          singular: names.singular,
          ...(names.shortNames.length ? { shortNames: names.shortNames } : {}),
          kind: names.kind,
          listKind: names.listKind,
          ...(names.categories.length ? { categories: names.categories } : {}),
        };
        setCrdCondition(obj, { type: 'NamesAccepted', status: 'True', reason: 'NoConflicts', message: 'no conflicts found' });
        setCrdCondition(obj, { type: 'Established', status: 'True', reason: 'InitialNamesAccepted', message: 'the initial names have been accepted' });
        const spec = obj.spec as Record<string, unknown>;
        const storage = (Array.isArray(spec.versions) ? spec.versions : []).find((v) => isObject(v) && v.storage === true) as { name?: string } | undefined;
        const stored = Array.isArray(status.storedVersions) ? (status.storedVersions as string[]) : [];
        if (storage?.name && !stored.includes(storage.name)) status.storedVersions = [...stored, storage.name];
      },
      'kube-apiserver',
      'status',
    );
  }

  /** Deletes every instance; once none is left, drops the cleanup finalizer so the CRD can go. */
  private finalize(crd: KubeObject): void {
    const def = this.servedBy(crd.metadata!.name!);
    if (def) {
      def.terminating = true;
      for (const obj of this.store.list(storageKey(def))) {
        if (obj.metadata?.deletionTimestamp) continue;
        deleteQuietly(this.ops, def, obj);
      }
      if (this.store.list(storageKey(def)).length > 0) return;
    }
    if (!(crd.metadata?.finalizers ?? []).includes(CRD_CLEANUP_FINALIZER)) return;
    this.ops.systemUpdate(
      this.crdDefinition(),
      crd,
      (obj) => {
        obj.metadata!.finalizers = (obj.metadata!.finalizers ?? []).filter((f) => f !== CRD_CLEANUP_FINALIZER);
        if (obj.metadata!.finalizers.length === 0) delete obj.metadata!.finalizers;
      },
      'kube-apiserver',
    );
  }
}

function deleteQuietly(ops: Operations, def: ResourceDefinition, obj: KubeObject): void {
  try {
    ops.delete({ def, version: def.versions[0]!, namespace: obj.metadata?.namespace }, obj.metadata!.name!);
  } catch (err) {
    if (!(err instanceof ApiError)) throw err;
  }
}

/**
 * Namespace deletion, simplified: no discovery of every API group and no NamespaceDeletion* conditions,
 * but the same order of events (namespace Terminating, content deleted honouring finalizers, then the
 * namespace itself once it is empty).
 */
export class NamespaceController {
  private readonly queue = new MicrotaskQueue((name) => this.reconcile(name));

  constructor(
    private readonly store: ObjectStore,
    private readonly registry: ResourceRegistry,
    private readonly ops: Operations,
  ) {}

  start(): () => void {
    return this.store.subscribe((change) => this.observe(change));
  }

  private observe(change: StoreChange): void {
    if (change.resource === NAMESPACE_RESOURCE) {
      if (change.type !== 'DELETED' && change.object.metadata?.deletionTimestamp) this.queue.enqueue(change.name);
      return;
    }
    if (change.type === 'DELETED' && change.namespace) {
      const ns = this.store.get(NAMESPACE_RESOURCE, undefined, change.namespace);
      if (ns?.metadata?.deletionTimestamp) this.queue.enqueue(change.namespace);
    }
  }

  private reconcile(name: string): void {
    const ns = this.store.get(NAMESPACE_RESOURCE, undefined, name);
    if (!ns?.metadata?.deletionTimestamp) return;
    // One definition per storage bucket (core and events.k8s.io Events are the same objects).
    const namespaced = [
      ...new Map(
        this.registry
          .all()
          .filter((d) => d.namespaced)
          .map((d) => [storageKey(d), d]),
      ).values(),
    ];
    let remaining = 0;
    for (const def of namespaced) {
      for (const obj of this.store.list(storageKey(def), name)) {
        if (!obj.metadata?.deletionTimestamp) deleteQuietly(this.ops, def, obj);
      }
      remaining += this.store.list(storageKey(def), name).length;
    }
    if (remaining > 0) return;
    const nsDef = this.registry.get({ group: '', resource: NAMESPACE_RESOURCE })!;
    const current = this.store.get(NAMESPACE_RESOURCE, undefined, name)!;
    this.ops.systemUpdate(nsDef, current, (obj) => {
      const spec = isObject(obj.spec) ? obj.spec : (obj.spec = {});
      spec.finalizers = (Array.isArray(spec.finalizers) ? (spec.finalizers as string[]) : []).filter((f) => f !== NAMESPACE_FINALIZER);
    });
  }
}
