/**
 * OpenAPI v3, as much as clients need: the /openapi/v3 root (one document per group-version) and, per
 * group-version, the operations on each resource with their `x-kubernetes-group-version-kind` and
 * query parameters. That is what kubectl's validator looks for: when a kind's PATCH operation declares
 * the `fieldValidation` parameter, kubectl leaves validation to the server (fieldValidation=Strict)
 * instead of validating against full schemas. Schemas themselves are open (`type: object`), and the
 * PATCH operations do not advertise strategic merge patch bodies, so kubectl computes strategic merge
 * patches for built-in kinds from its own Go types (as it does with a server without OpenAPI v3).
 */
import { createHash } from 'node:crypto';
import type { ResourceDefinition, ResourceRegistry } from './registry.js';

type Obj = Record<string, unknown>;

function gvPath(group: string, version: string): string {
  return group === '' ? `api/${version}` : `apis/${group}/${version}`;
}

const WRITE_PARAMETERS = ['dryRun', 'fieldManager', 'fieldValidation'];

function parameters(names: readonly string[]): Obj[] {
  return names.map((name) => ({ name, in: 'query', schema: { type: name === 'force' ? 'boolean' : 'string', uniqueItems: true } }));
}

function schemaName(def: ResourceDefinition, version: string): string {
  const group = def.group === '' ? 'core' : def.group;
  return `${group}.${version}.${def.kind}`;
}

function operations(def: ResourceDefinition, version: string): Record<string, Obj> {
  const gvk = { group: def.group, version, kind: def.kind };
  const ref = { $ref: `#/components/schemas/${schemaName(def, version)}` };
  const response = { '200': { description: 'OK', content: { 'application/json': { schema: ref } } } };
  const op = (action: string, params: readonly string[], extra: Obj = {}): Obj => ({
    operationId: `${action}${def.kind}`,
    'x-kubernetes-action': action,
    'x-kubernetes-group-version-kind': gvk,
    parameters: parameters(params),
    responses: response,
    ...extra,
  });
  const base = `/${gvPath(def.group, version)}${def.namespaced ? '/namespaces/{namespace}' : ''}/${def.resource}`;
  const paths: Record<string, Obj> = {
    [base]: {
      get: op('list', ['labelSelector', 'fieldSelector', 'limit', 'continue', 'resourceVersion', 'resourceVersionMatch', 'watch']),
      post: op('post', WRITE_PARAMETERS, { requestBody: { content: { 'application/json': { schema: ref } } } }),
    },
    [`${base}/{name}`]: {
      get: op('get', []),
      put: op('put', WRITE_PARAMETERS, { requestBody: { content: { 'application/json': { schema: ref } } } }),
      patch: op('patch', [...WRITE_PARAMETERS, 'force']),
      delete: op('delete', ['dryRun', 'gracePeriodSeconds', 'propagationPolicy']),
    },
  };
  for (const sub of def.subresources) {
    if (sub === 'status') paths[`${base}/{name}/status`] = { get: op('get', []), put: op('put', WRITE_PARAMETERS), patch: op('patch', [...WRITE_PARAMETERS, 'force']) };
  }
  return paths;
}

/**
 * A kind's schema: a CRD version's own openAPIV3Schema (so `kubectl explain` shows its fields and
 * descriptions) with the object's apiVersion, kind and metadata, as apiextensions-apiserver publishes
 * it; open (`type: object`, unknown fields kept) for built-in kinds.
 */
function componentSchema(def: ResourceDefinition, version: string): Obj {
  const gvk = [{ group: def.group, version, kind: def.kind }];
  const crdSchema = def.schemas?.[version];
  if (typeof crdSchema !== 'object' || crdSchema === null || Array.isArray(crdSchema)) {
    return { type: 'object', 'x-kubernetes-group-version-kind': gvk, 'x-kubernetes-preserve-unknown-fields': true };
  }
  const schema = crdSchema as Obj;
  const own = typeof schema.properties === 'object' && schema.properties !== null ? (schema.properties as Obj) : {};
  return {
    ...schema,
    type: 'object',
    properties: {
      apiVersion: { type: 'string', description: 'APIVersion defines the versioned schema of this representation of an object. Servers should convert recognized schemas to the latest internal value, and may reject unrecognized values.' },
      kind: { type: 'string', description: 'Kind is a string value representing the REST resource this object represents. Servers may infer this from the endpoint the client submits requests to.' },
      metadata: { type: 'object', description: "Standard object's metadata." },
      ...own,
    },
    'x-kubernetes-group-version-kind': gvk,
  };
}

/** The OpenAPI v3 document of one group-version (`api/v1`, `apis/apps/v1`), or undefined. */
export function openApiV3Document(registry: ResourceRegistry, path: string): Obj | undefined {
  const m = /^(?:api\/([^/]+)|apis\/([^/]+)\/([^/]+))$/.exec(path);
  if (!m) return undefined;
  const group = m[1] !== undefined ? '' : m[2]!;
  const version = m[1] ?? m[3]!;
  const defs = registry.resourcesIn(group, version);
  if (defs.length === 0) return undefined;
  const paths: Record<string, Obj> = {};
  const schemas: Record<string, Obj> = {};
  for (const def of defs) {
    Object.assign(paths, operations(def, version));
    schemas[schemaName(def, version)] = componentSchema(def, version);
  }
  return { openapi: '3.0.0', info: { title: 'Kubernetes', version: 'v1.32.0' }, paths, components: { schemas } };
}

/** The /openapi/v3 root: each group-version's document URL, with a content hash as real servers give. */
export function openApiV3Root(registry: ResourceRegistry): Obj {
  const paths: Record<string, Obj> = {};
  for (const { group, versions } of registry.groups()) {
    for (const version of versions) {
      const path = gvPath(group, version);
      const doc = openApiV3Document(registry, path);
      if (!doc) continue;
      const hash = createHash('sha512').update(JSON.stringify(doc)).digest('hex').slice(0, 128).toUpperCase();
      paths[path] = { serverRelativeURL: `/openapi/v3/${path}?hash=${hash}` };
    }
  }
  return { paths };
}
