/**
 * The resource registry: which kinds the embedded API server serves, under which group, versions and
 * plural name, and the strategy (create/update/delete rules) each follows. Built-in kinds and kinds
 * defined by CustomResourceDefinitions are both plain `ResourceDefinition`s; the generic store and
 * handlers never branch on a kind's name.
 */
import type { KubeObject } from '../model/object-key.js';
import type { FieldError, GroupResource } from './api-error.js';
import type { CustomResourceSchemas } from './crd-schema.js';

/**
 * How one list field merges, for strategic merge patch (patchStrategy/patchMergeKey in k8s.io/api) and
 * for server-side apply (x-kubernetes-list-type/-list-map-keys). Lists without a rule are replaced by
 * strategic merge patch and atomic for server-side apply, as in Kubernetes.
 */
export interface ListRule {
  /** Strategic merge patch: merge by this key (lists of objects) or as a set (lists of scalars, no key). */
  patchMerge?: { key?: string };
  /** Server-side apply list type. */
  listType: 'map' | 'set' | 'atomic';
  /** Keys of a `map` list; a missing key field takes its default from `listMapKeyDefaults`. */
  listMapKeys?: readonly string[];
  listMapKeyDefaults?: Readonly<Record<string, string | number>>;
}

/**
 * List rules keyed by field path, list items written as `[]`: `spec.containers`,
 * `spec.containers[].ports`, `metadata.finalizers`.
 */
export type ListRules = Readonly<Record<string, ListRule>>;

/** Where the scale subresource reads and writes replicas (CRD `subresources.scale`, fixed for built-ins). */
export interface ScalePaths {
  /** Dotted JSON path, e.g. `.spec.replicas`. */
  specReplicasPath: string;
  statusReplicasPath: string;
  /** Path of the label selector: a string (CRs) or, for built-ins, a metav1.LabelSelector. */
  labelSelectorPath?: string;
}

/** What a write to the status subresource may change besides `status`. */
export type StatusWriteScope =
  /** Only status (custom resources, CRDs). */
  | 'status-only'
  /** status and metadata except ownerReferences (pods and most built-ins). */
  | 'status-and-metadata'
  /** status and metadata except labels and ownerReferences (apps/v1 workloads). */
  | 'status-and-annotations';

export interface ResourceStrategy {
  /** metadata.generation starts at 1 and is bumped by spec changes (CRs, CRDs); absent otherwise. */
  tracksGeneration: boolean;
  /** Which fields count as spec for generation (default: everything but metadata and status). */
  specFields?: readonly string[];
  /** List semantics for strategic merge patch and server-side apply. */
  listRules?: ListRules;
  /** Whether strategic merge patch is accepted (built-ins); custom resources answer 415. */
  strategicMerge?: boolean;
  /** What a status-subresource write may change; default `status-only`. */
  statusWrite?: StatusWriteScope;
  /** A create keeps the status the client sent (nodes); otherwise status is reset on create. */
  keepsStatusOnCreate?: boolean;
  /** Status a new object starts with (after reset), e.g. `{ phase: 'Pending' }`. */
  initialStatus?(obj: KubeObject): Record<string, unknown> | undefined;
  /** Immediate deletes answer with the object (true) or with a Success Status (false, most kinds). */
  returnDeletedObject: boolean;
  /** Rule for metadata.name (`path-segment`: any name usable in a URL path, as RBAC names). */
  nameRule: 'dns1123-subdomain' | 'dns1123-label' | 'dns1035-label' | 'path-segment';
  /** Annotations whose change bumps generation like a spec change (Deployment's rollback annotation). */
  generationAnnotations?: readonly string[];
  /**
   * Graceful deletion: the grace period for a DELETE (`requested` is gracePeriodSeconds from the
   * options); 0 deletes now. Kinds without it are deleted immediately (unless finalizers hold them).
   */
  gracefulDeletion?(obj: KubeObject, requested: number | undefined): number;
  /** Extra field-selector fields beyond metadata.name and metadata.namespace. */
  selectableFields?: Readonly<Record<string, (obj: KubeObject) => string | undefined>>;
  /** Normalises a new object (defaults, derived fields) before validation. */
  prepareForCreate?(obj: KubeObject): void;
  /** Normalises an updated object; `old` is the stored object. */
  prepareForUpdate?(obj: KubeObject, old: KubeObject): void;
  /**
   * Kind-specific validation (metadata is validated generically). `requestVersion` is the version the
   * client wrote in: some checks depend on it (a CRD written as v1beta1 needs no schema), as
   * kube-apiserver's validation takes the request's group-version; undefined for the server's own
   * writes (status updates of its controllers), which skip those checks.
   */
  /**
   * A review kind (SelfSubjectAccessReview): a create answers the object with this status and stores
   * nothing, as kube-apiserver's review registries do.
   */
  review?(obj: KubeObject): Record<string, unknown>;
  validate?(obj: KubeObject, old: KubeObject | undefined, requestVersion: string | undefined, subresource?: 'status'): FieldError[];
  /** Mutates an object on its first DELETE, before finalizers are considered (e.g. a namespace turns Terminating). */
  prepareForDelete?(obj: KubeObject): void;
  /** Finalizers that hold deletion besides metadata.finalizers (a namespace's spec.finalizers). */
  extraFinalizers?(obj: KubeObject): readonly string[];
}

/** Converts one API version's form of a kind to and from the form objects are stored in. */
export interface Conversion {
  /** May throw an `ApiError` (422) for input the version's own validation refuses. */
  toStorage(obj: KubeObject): KubeObject;
  fromStorage(obj: KubeObject): KubeObject;
}

/** One additionalPrinterColumns entry of a CRD version. */
export interface PrinterColumn {
  name: string;
  type: string;
  format?: string;
  description?: string;
  priority?: number;
  jsonPath: string;
}

export interface ResourceDefinition {
  group: string;
  /**
   * Served versions, highest priority first (the emulated Kubernetes release decides which, see
   * kube-version.ts); the group's preferred version in discovery is the highest over its kinds.
   */
  versions: readonly string[];
  /**
   * The version whose form objects are stored in (the hub of `versionConversions`); default
   * `versions[0]`. A kind keeps storing its newest form when the emulated release serves only an
   * older one, so every version reads the same objects.
   */
  storageVersion?: string | undefined;
  /** Plural resource name, as in URLs. */
  resource: string;
  singularName: string;
  kind: string;
  listKind: string;
  namespaced: boolean;
  shortNames: readonly string[];
  categories: readonly string[];
  verbs: readonly string[];
  /** Subresources served beside the main resource: status, scale, binding, eviction, finalize. */
  subresources: readonly string[];
  /** Replica paths when `scale` is served. */
  scale?: ScalePaths | undefined;
  /**
   * Storage bucket shared with another API group's view of the same objects (core/v1 events and
   * events.k8s.io/v1 events); default: the resource's own key.
   */
  storageResource?: string | undefined;
  /** Converts this API's form to and from the shared storage form (only with `storageResource`). */
  conversion?: Conversion | undefined;
  /**
   * Per served version, conversion to and from the storage version's form (policy/v1beta1 to
   * policy/v1, apiextensions v1beta1 to v1); wins over `conversion` for that version.
   */
  versionConversions?: Readonly<Record<string, Conversion>> | undefined;
  /** Strategic merge list rules of a version whose Go types differ from the storage version's. */
  versionListRules?: Readonly<Record<string, ListRules>> | undefined;
  /** The OpenAPI v3 schema of a CRD-defined version, by version name (pruning is not done, SSA reads list types). */
  schemas?: Readonly<Record<string, unknown>> | undefined;
  /** A CRD-defined kind's structural schemas (pruning and defaulting, see crd-schema.ts). */
  crdSchemas?: CustomResourceSchemas | undefined;
  /** A CRD-defined kind's additionalPrinterColumns by version (the Table format, see table.ts). */
  printerColumns?: Readonly<Record<string, readonly PrinterColumn[]>> | undefined;
  /**
   * Typed built-in lists are encoded without kind/apiVersion on their items; CR lists are unstructured
   * and keep them. Faithful to what a real kube-apiserver sends.
   */
  listItemsCarryTypeMeta: boolean;
  strategy: ResourceStrategy;
  /** `builtin`, or the name of the CustomResourceDefinition that defines this kind. */
  definedBy: string;
  /** Set while the defining CRD is being deleted: creates are refused. */
  terminating?: boolean | undefined;
}

export const ALL_VERBS = ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'] as const;
export const SUBRESOURCE_VERBS = ['get', 'patch', 'update'] as const;

export function groupResourceOf(def: ResourceDefinition): GroupResource {
  return { group: def.group, resource: def.resource };
}

export function resourceKey(gr: GroupResource): string {
  return gr.group ? `${gr.resource}.${gr.group}` : gr.resource;
}

/** The store bucket of a kind's objects. */
export function storageKey(def: ResourceDefinition): string {
  return def.storageResource ?? resourceKey(def);
}

/** The version objects of this kind are stored in. */
export function storageVersionOf(def: ResourceDefinition): string {
  return def.storageVersion ?? def.versions[0]!;
}

/** The conversion between `version`'s form and the storage form, if they differ. */
export function conversionFor(def: ResourceDefinition, version: string): Conversion | undefined {
  return def.versionConversions?.[version] ?? def.conversion;
}

export function hasStatusSubresource(def: ResourceDefinition): boolean {
  return def.subresources.includes('status');
}

type RegistryListener = (def: ResourceDefinition) => void;

export class ResourceRegistry {
  private readonly byKey = new Map<string, ResourceDefinition>();
  private readonly removalListeners = new Set<RegistryListener>();

  /** Adds or replaces the definition of `group/resource`. */
  define(def: ResourceDefinition): void {
    this.byKey.set(resourceKey(def), def);
  }

  remove(gr: GroupResource): ResourceDefinition | undefined {
    const key = resourceKey(gr);
    const def = this.byKey.get(key);
    if (!def) return undefined;
    this.byKey.delete(key);
    for (const listener of this.removalListeners) listener(def);
    return def;
  }

  onRemove(listener: RegistryListener): () => void {
    this.removalListeners.add(listener);
    return () => this.removalListeners.delete(listener);
  }

  get(gr: GroupResource): ResourceDefinition | undefined {
    return this.byKey.get(resourceKey(gr));
  }

  /** The definition serving `resource` at `group/version`, if that version is served. */
  lookup(group: string, version: string, resource: string): ResourceDefinition | undefined {
    const def = this.byKey.get(resourceKey({ group, resource }));
    return def && def.versions.includes(version) ? def : undefined;
  }

  findByKind(group: string, kind: string): ResourceDefinition | undefined {
    for (const def of this.byKey.values()) if (def.group === group && def.kind === kind) return def;
    return undefined;
  }

  all(): ResourceDefinition[] {
    return [...this.byKey.values()];
  }

  /** Groups with their served versions, highest priority first; the core group ("") is included. */
  groups(): Array<{ group: string; versions: string[] }> {
    const versionsByGroup = new Map<string, Set<string>>();
    for (const def of this.byKey.values()) {
      let set = versionsByGroup.get(def.group);
      if (!set) versionsByGroup.set(def.group, (set = new Set()));
      for (const v of def.versions) set.add(v);
    }
    return [...versionsByGroup.entries()].map(([group, set]) => ({ group, versions: [...set].sort(compareKubeVersions) }));
  }

  resourcesIn(group: string, version: string): ResourceDefinition[] {
    return this.all()
      .filter((d) => d.group === group && d.versions.includes(version))
      .sort((a, b) => a.resource.localeCompare(b.resource));
  }
}

const KUBE_VERSION = /^v(\d+)(?:(alpha|beta)(\d+))?$/;

/**
 * Orders versions as Kubernetes prioritises them: GA before beta before alpha, higher numbers first,
 * then versions that do not look like Kubernetes versions, alphabetically.
 */
export function compareKubeVersions(a: string, b: string): number {
  const rank = (v: string): [number, number, number] | undefined => {
    const m = KUBE_VERSION.exec(v);
    if (!m) return undefined;
    const stability = m[2] === undefined ? 3 : m[2] === 'beta' ? 2 : 1;
    return [stability, Number(m[1]), m[3] === undefined ? 0 : Number(m[3])];
  };
  const ra = rank(a);
  const rb = rank(b);
  if (ra && rb) {
    for (let i = 0; i < 3; i++) if (ra[i] !== rb[i]) return rb[i]! - ra[i]!;
    return 0;
  }
  if (ra) return -1;
  if (rb) return 1;
  return a.localeCompare(b);
}
