/**
 * Built-in kinds: namespaces, configmaps and secrets (core/v1) and customresourcedefinitions
 * (apiextensions.k8s.io/v1, and v1beta1 through kinds/legacy.ts) here; pods, services and the other
 * core kinds in kinds/core.ts; workloads, policy, leases and RBAC in kinds/apps.ts; admission webhook
 * configurations in kinds/legacy.ts. Each is a `ResourceDefinition` with the strategy rules of
 * its real registry (pkg/registry/*, apiextensions-apiserver/pkg/registry/...). New built-in kinds plug
 * in by adding a definition to `builtinDefinitions()`.
 */
import { isObject, type KubeObject } from '../model/object-key.js';
import { badRequest, type FieldError } from './api-error.js';
import { ALL_VERBS, type ResourceDefinition } from './registry.js';
import { dns1123LabelErrors, dns1123SubdomainErrors } from './validation.js';
import { CONDITIONS_LIST_RULES, OBJECT_META_LIST_RULES } from './kinds/list-rules.js';
import { coreDefinitions } from './kinds/core.js';
import { DEFAULT_NETWORK, type ClusterNetwork } from './network.js';
import { workloadDefinitions } from './kinds/apps.js';
import { networkingDefinitions } from './kinds/networking.js';
import { admissionRegistrationDefinitions, CRD_V1BETA1_CONVERSION } from './kinds/legacy.js';
import { definitionsForRelease } from './kube-version.js';
import { DEFAULT_KUBERNETES_VERSION, parseKubernetesVersion, type KubernetesVersion } from '../model/kube-version.js';

export const CRD_CLEANUP_FINALIZER = 'customresourcecleanup.apiextensions.k8s.io';
export const NAMESPACE_FINALIZER = 'kubernetes';
const NAMESPACE_NAME_LABEL = 'kubernetes.io/metadata.name';

function namespaceDefinition(): ResourceDefinition {
  const specFinalizers = (obj: KubeObject): string[] => {
    const spec = obj.spec;
    return isObject(spec) && Array.isArray(spec.finalizers) ? (spec.finalizers as string[]) : [];
  };
  return {
    group: '',
    versions: ['v1'],
    resource: 'namespaces',
    singularName: 'namespace',
    kind: 'Namespace',
    listKind: 'NamespaceList',
    namespaced: false,
    shortNames: ['ns'],
    categories: [],
    verbs: ['create', 'delete', 'get', 'list', 'patch', 'update', 'watch'],
    subresources: ['status', 'finalize'],
    listItemsCarryTypeMeta: false,
    definedBy: 'builtin',
    strategy: {
      tracksGeneration: false,
      listRules: CONDITIONS_LIST_RULES,
      strategicMerge: true,
      statusWrite: 'status-and-metadata',
      returnDeletedObject: true,
      nameRule: 'dns1123-label',
      selectableFields: { 'status.phase': (o) => (isObject(o.status) ? (o.status.phase as string | undefined) : undefined) },
      prepareForCreate(obj) {
        const spec = isObject(obj.spec) ? obj.spec : (obj.spec = {});
        const finalizers = Array.isArray(spec.finalizers) ? (spec.finalizers as string[]) : [];
        if (!finalizers.includes(NAMESPACE_FINALIZER)) finalizers.push(NAMESPACE_FINALIZER);
        spec.finalizers = finalizers;
        obj.status = { phase: 'Active' };
        setNameLabel(obj);
      },
      prepareForUpdate(obj, old) {
        // spec.finalizers only change through the namespace controller (the finalize subresource).
        const oldSpec = isObject(old.spec) ? old.spec : {};
        obj.spec = { ...(isObject(obj.spec) ? obj.spec : {}), finalizers: oldSpec.finalizers };
        if (oldSpec.finalizers === undefined) delete (obj.spec as Record<string, unknown>).finalizers;
        setNameLabel(obj);
      },
      prepareForDelete(obj) {
        obj.status = { ...(isObject(obj.status) ? obj.status : {}), phase: 'Terminating' };
      },
      extraFinalizers: specFinalizers,
    },
  };
}

function setNameLabel(obj: KubeObject): void {
  const meta = obj.metadata!;
  if (typeof meta.name === 'string' && meta.name !== '') meta.labels = { ...(meta.labels ?? {}), [NAMESPACE_NAME_LABEL]: meta.name };
}

const CONFIG_KEY = /^[-._a-zA-Z0-9]+$/;

function validateDataKeys(obj: KubeObject, fields: readonly string[]): FieldError[] {
  const errors: FieldError[] = [];
  const seen = new Set<string>();
  for (const field of fields) {
    const data = obj[field];
    if (data === undefined || data === null) continue;
    if (!isObject(data)) {
      errors.push({ type: 'Invalid', field, value: data, detail: 'must be a map of string keys to string values' });
      continue;
    }
    for (const [key, value] of Object.entries(data)) {
      if (key.length > 253 || !CONFIG_KEY.test(key)) {
        errors.push({
          type: 'Invalid',
          field: `${field}`,
          value: key,
          detail:
            "a valid config key must consist of alphanumeric characters, '-', '_' or '.' (e.g. 'key.name',  or 'KEY_NAME',  or 'key-name', regex used for validation is '[-._a-zA-Z0-9]+')",
        });
      }
      if (typeof value !== 'string') errors.push({ type: 'Invalid', field: `${field}[${key}]`, value, detail: 'must be a string' });
      if (seen.has(key)) errors.push({ type: 'Invalid', field: `${field}[${key}]`, value: key, detail: 'duplicate of key present in data' });
      seen.add(key);
    }
  }
  return errors;
}

/** core.MaxSecretSize: the most data a ConfigMap or a Secret may hold, summed over its keys. */
export const MAX_DATA_BYTES = 1024 * 1024;

/**
 * ValidateConfigMap / ValidateSecret's size check: string values count their UTF-8 bytes, base64
 * values (binaryData, a Secret's data) their decoded bytes, as Go's len() of the decoded field does.
 */
function dataSizeErrors(obj: KubeObject, fields: Readonly<Record<string, 'utf8' | 'base64'>>, errorField: string): FieldError[] {
  let total = 0;
  for (const [field, encoding] of Object.entries(fields)) {
    const data = obj[field];
    if (!isObject(data)) continue;
    for (const value of Object.values(data)) if (typeof value === 'string') total += Buffer.byteLength(value, encoding);
  }
  // "may not be more than" since Kubernetes 1.32 (field.TooLong); earlier releases said "must have at most".
  return total > MAX_DATA_BYTES ? [{ type: 'TooLong', field: errorField, detail: `may not be more than ${MAX_DATA_BYTES} bytes` }] : [];
}

function validateImmutable(obj: KubeObject, old: KubeObject | undefined, fields: readonly string[]): FieldError[] {
  if (!old || old.immutable !== true) return [];
  const errors: FieldError[] = [];
  if (obj.immutable !== true) errors.push({ type: 'Forbidden', field: 'immutable', detail: 'field is immutable when `immutable` is set' });
  for (const f of fields) {
    if (JSON.stringify(obj[f] ?? {}) !== JSON.stringify(old[f] ?? {}))
      errors.push({ type: 'Forbidden', field: f, detail: 'field is immutable when `immutable` is set' });
  }
  return errors;
}

function configMapDefinition(): ResourceDefinition {
  return {
    group: '',
    versions: ['v1'],
    resource: 'configmaps',
    singularName: 'configmap',
    kind: 'ConfigMap',
    listKind: 'ConfigMapList',
    namespaced: true,
    shortNames: ['cm'],
    categories: [],
    verbs: [...ALL_VERBS],
    subresources: [],
    listItemsCarryTypeMeta: false,
    definedBy: 'builtin',
    strategy: {
      tracksGeneration: false,
      listRules: OBJECT_META_LIST_RULES,
      strategicMerge: true,
      returnDeletedObject: false,
      nameRule: 'dns1123-subdomain',
      validate: (obj, old) => [
        ...validateDataKeys(obj, ['data', 'binaryData']),
        // Field path "" (the whole object), which field.Path prints as "[]".
        ...dataSizeErrors(obj, { data: 'utf8', binaryData: 'base64' }, '[]'),
        ...validateImmutable(obj, old, ['data', 'binaryData']),
      ],
    },
  };
}

const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/** stringData is write-only: merged into data (base64) on every write, as the real Secret strategy does. */
function foldStringData(obj: KubeObject): void {
  if (obj.data !== undefined && obj.data !== null) {
    if (!isObject(obj.data)) throw badRequest('Secret in version "v1" cannot be handled as a Secret: data must be an object');
    for (const [k, v] of Object.entries(obj.data)) {
      if (typeof v !== 'string' || !BASE64.test(v)) {
        throw badRequest(`Secret in version "v1" cannot be handled as a Secret: illegal base64 data at input byte 0 (data[${k}])`);
      }
    }
  }
  if (isObject(obj.stringData)) {
    const data: Record<string, unknown> = isObject(obj.data) ? { ...obj.data } : {};
    for (const [k, v] of Object.entries(obj.stringData)) data[k] = Buffer.from(String(v), 'utf8').toString('base64');
    obj.data = data;
  }
  delete obj.stringData;
  if (obj.type === undefined || obj.type === '') obj.type = 'Opaque';
}

function secretDefinition(): ResourceDefinition {
  return {
    group: '',
    versions: ['v1'],
    resource: 'secrets',
    singularName: 'secret',
    kind: 'Secret',
    listKind: 'SecretList',
    namespaced: true,
    shortNames: [],
    categories: [],
    verbs: [...ALL_VERBS],
    subresources: [],
    listItemsCarryTypeMeta: false,
    definedBy: 'builtin',
    strategy: {
      tracksGeneration: false,
      listRules: OBJECT_META_LIST_RULES,
      strategicMerge: true,
      returnDeletedObject: false,
      nameRule: 'dns1123-subdomain',
      selectableFields: { type: (o) => (typeof o.type === 'string' ? o.type : undefined) },
      prepareForCreate: foldStringData,
      prepareForUpdate: (obj) => foldStringData(obj),
      validate(obj, old) {
        const errors = [...validateDataKeys(obj, ['data']), ...dataSizeErrors(obj, { data: 'base64' }, 'data'), ...validateImmutable(obj, old, ['data'])];
        if (old && old.type !== obj.type) errors.push({ type: 'Invalid', field: 'type', value: obj.type, detail: 'field is immutable' });
        return errors;
      },
    },
  };
}

interface CrdVersion {
  name?: unknown;
  served?: unknown;
  storage?: unknown;
  schema?: { openAPIV3Schema?: unknown };
  subresources?: { status?: unknown };
}

function crdDefinition(): ResourceDefinition {
  return {
    group: 'apiextensions.k8s.io',
    versions: ['v1', 'v1beta1'],
    storageVersion: 'v1',
    versionConversions: { v1beta1: CRD_V1BETA1_CONVERSION },
    resource: 'customresourcedefinitions',
    singularName: 'customresourcedefinition',
    kind: 'CustomResourceDefinition',
    listKind: 'CustomResourceDefinitionList',
    namespaced: false,
    shortNames: ['crd', 'crds'],
    categories: ['api-extensions'],
    verbs: [...ALL_VERBS],
    subresources: ['status'],
    listItemsCarryTypeMeta: false,
    definedBy: 'builtin',
    strategy: {
      tracksGeneration: true,
      listRules: CONDITIONS_LIST_RULES,
      strategicMerge: true,
      statusWrite: 'status-only',
      returnDeletedObject: false,
      nameRule: 'dns1123-subdomain',
      prepareForCreate(obj) {
        defaultCrdSpec(obj);
        const spec = obj.spec as Record<string, unknown>;
        const versions = Array.isArray(spec.versions) ? (spec.versions as CrdVersion[]) : [];
        const storage = versions.find((v) => v.storage === true)?.name;
        obj.status = { acceptedNames: { kind: '', plural: '' }, storedVersions: typeof storage === 'string' ? [storage] : [] };
      },
      prepareForUpdate(obj) {
        defaultCrdSpec(obj);
      },
      prepareForDelete(obj) {
        const meta = obj.metadata!;
        if (!(meta.finalizers ?? []).includes(CRD_CLEANUP_FINALIZER)) meta.finalizers = [...(meta.finalizers ?? []), CRD_CLEANUP_FINALIZER];
        setCrdCondition(obj, {
          type: 'Terminating',
          status: 'True',
          reason: 'InstanceDeletionPending',
          message: 'CustomResourceDefinition marked for deletion; CustomResource deletion will begin soon',
        });
      },
      validate: validateCrd,
    },
  };
}

function defaultCrdSpec(obj: KubeObject): void {
  if (!isObject(obj.spec)) return;
  const names = obj.spec.names;
  if (isObject(names) && typeof names.kind === 'string') {
    if (names.singular === undefined || names.singular === '') names.singular = names.kind.toLowerCase();
    if (names.listKind === undefined || names.listKind === '') names.listKind = `${names.kind}List`;
  }
  if (obj.spec.conversion === undefined) obj.spec.conversion = { strategy: 'None' };
}

export interface CrdCondition {
  type: string;
  status: 'True' | 'False' | 'Unknown';
  reason: string;
  message: string;
  lastTransitionTime?: string;
}

export function setCrdCondition(obj: KubeObject, condition: CrdCondition): void {
  const status = isObject(obj.status) ? obj.status : (obj.status = {});
  const conditions = Array.isArray(status.conditions) ? (status.conditions as CrdCondition[]) : [];
  const existing = conditions.find((c) => c.type === condition.type);
  const stamped = {
    ...condition,
    lastTransitionTime: existing?.status === condition.status ? existing.lastTransitionTime : new Date().toISOString().replace(/\.\d+Z$/, 'Z'),
  };
  status.conditions = existing ? conditions.map((c) => (c.type === condition.type ? stamped : c)) : [...conditions, stamped];
}

/** allVersionsSpecifyOpenAPISchema, on the stored (v1) form where every version carries its schema. */
function allVersionsHaveSchemas(obj: KubeObject): boolean {
  const spec = isObject(obj.spec) ? obj.spec : {};
  const versions = Array.isArray(spec.versions) ? (spec.versions as CrdVersion[]) : [];
  return versions.every((v) => isObject(v.schema) && isObject(v.schema.openAPIV3Schema));
}

/**
 * ValidateCustomResourceDefinition(Update) with the request's group-version: v1 requires a schema in
 * every version (unless the stored object already lacked one) and refuses preserveUnknownFields:
 * true; v1beta1 requires neither (`requestVersion` undefined: the server's own status writes).
 */
function validateCrd(obj: KubeObject, old: KubeObject | undefined, requestVersion: string | undefined): FieldError[] {
  const errors: FieldError[] = [];
  const spec = obj.spec;
  if (!isObject(spec)) return [{ type: 'Required', field: 'spec', detail: '' }];
  const group = spec.group;
  if (typeof group !== 'string' || group === '') errors.push({ type: 'Required', field: 'spec.group', detail: '' });
  else if (!group.includes('.')) errors.push({ type: 'Invalid', field: 'spec.group', value: group, detail: 'should be a domain with at least one dot' });
  else for (const detail of dns1123SubdomainErrors(group)) errors.push({ type: 'Invalid', field: 'spec.group', value: group, detail });
  const names = isObject(spec.names) ? spec.names : {};
  for (const f of ['plural', 'kind'] as const) {
    const v = names[f];
    if (typeof v !== 'string' || v === '') errors.push({ type: 'Required', field: `spec.names.${f}`, detail: '' });
  }
  if (typeof names.plural === 'string' && names.plural !== '') {
    for (const detail of dns1123LabelErrors(names.plural)) errors.push({ type: 'Invalid', field: 'spec.names.plural', value: names.plural, detail });
    if (typeof group === 'string' && obj.metadata?.name !== `${names.plural}.${group}`) {
      errors.push({ type: 'Invalid', field: 'metadata.name', value: obj.metadata?.name ?? '', detail: 'must be spec.names.plural+"."+spec.group' });
    }
  }
  if (!['Namespaced', 'Cluster'].includes(spec.scope as string)) {
    errors.push({ type: 'NotSupported', field: 'spec.scope', value: spec.scope ?? '', detail: 'supported values: "Cluster", "Namespaced"' });
  } else if (old && isObject(old.spec) && old.spec.scope !== spec.scope) {
    errors.push({ type: 'Invalid', field: 'spec.scope', value: spec.scope, detail: 'field is immutable' });
  }
  const versions = Array.isArray(spec.versions) ? (spec.versions as CrdVersion[]) : [];
  if (versions.length === 0)
    errors.push({ type: 'Invalid', field: 'spec.versions', value: spec.versions ?? null, detail: 'must have exactly one version marked as storage version' });
  const storageCount = versions.filter((v) => v.storage === true).length;
  if (versions.length > 0 && storageCount !== 1) {
    errors.push({
      type: 'Invalid',
      field: 'spec.versions',
      value: versions.map((v) => v.name),
      detail: 'must have exactly one version marked as storage version',
    });
  }
  const seen = new Set<string>();
  const requireSchemas = requestVersion === 'v1' && (!old || allVersionsHaveSchemas(old));
  versions.forEach((v, i) => {
    if (typeof v.name !== 'string' || v.name === '') errors.push({ type: 'Required', field: `spec.versions[${i}].name`, detail: '' });
    else {
      for (const detail of dns1123LabelErrors(v.name)) errors.push({ type: 'Invalid', field: `spec.versions[${i}].name`, value: v.name, detail });
      if (seen.has(v.name)) errors.push({ type: 'Invalid', field: 'spec.versions', value: v.name, detail: 'must contain unique version names' });
      seen.add(v.name);
    }
    if (typeof v.served !== 'boolean') errors.push({ type: 'Required', field: `spec.versions[${i}].served`, detail: '' });
    if (typeof v.storage !== 'boolean') errors.push({ type: 'Required', field: `spec.versions[${i}].storage`, detail: '' });
    const hasSchema = isObject(v.schema) && isObject(v.schema.openAPIV3Schema);
    if (!hasSchema && requireSchemas) {
      errors.push({ type: 'Required', field: `spec.versions[${i}].schema.openAPIV3Schema`, detail: 'schemas are required' });
    } else if (!hasSchema && spec.preserveUnknownFields !== true && v.served === true && requestVersion !== undefined) {
      errors.push({ type: 'Required', field: `spec.versions[${i}].schema.openAPIV3Schema`, detail: 'because otherwise all fields are pruned' });
    }
  });
  const oldSpec = old && isObject(old.spec) ? old.spec : undefined;
  if (requestVersion === 'v1' && spec.preserveUnknownFields === true && oldSpec?.preserveUnknownFields !== true) {
    errors.push({
      type: 'Invalid',
      field: 'spec.preserveUnknownFields',
      value: true,
      detail: 'cannot set to true, set x-kubernetes-preserve-unknown-fields to true in spec.versions[*].schema instead',
    });
  }
  return errors;
}

/**
 * The built-in kinds as `release` serves them (default: the newest supported release, v1.32), each
 * with the versions that release served (see kube-version.ts), with pod and Service addresses from
 * `network`.
 */
export function builtinDefinitions(
  release: KubernetesVersion = parseKubernetesVersion(DEFAULT_KUBERNETES_VERSION)!,
  network: ClusterNetwork = DEFAULT_NETWORK,
): ResourceDefinition[] {
  const all = [
    namespaceDefinition(),
    configMapDefinition(),
    secretDefinition(),
    ...coreDefinitions(network),
    ...workloadDefinitions(),
    crdDefinition(),
    ...admissionRegistrationDefinitions(),
    ...networkingDefinitions(),
  ];
  return definitionsForRelease(all, release);
}

/** Namespaces that exist from the start, as in a fresh cluster. */
export const INITIAL_NAMESPACES = ['default', 'kube-node-lease', 'kube-public', 'kube-system'] as const;
