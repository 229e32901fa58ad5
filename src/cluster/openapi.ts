/**
 * OpenAPI, as kube-apiserver serves it to clients: the /openapi/v3 root (one document per
 * group-version, with content hashes), each group-version's v3 document, and the /openapi/v2 document
 * (JSON, or protobuf as openapi-v2-proto.ts encodes it). Built-in kinds have kube-apiserver's own schemas (vendored, see openapi-builtin.ts), so
 * `kubectl explain pods.spec` prints their fields and descriptions; a CRD version's schema is its
 * openAPIV3Schema with apiVersion, kind and metadata, as apiextensions-apiserver publishes it.
 *
 * Each resource's operations carry `x-kubernetes-group-version-kind` and their query parameters.
 * That is what kubectl's validator looks for: when a kind's PATCH operation declares the
 * `fieldValidation` parameter, kubectl leaves validation to the server (fieldValidation=Strict)
 * instead of validating against schemas itself. The PATCH operations do not advertise strategic merge
 * patch bodies, so kubectl computes strategic merge patches for built-in kinds from its own Go types
 * (as it does with a server without OpenAPI v3).
 */
import { createHash } from 'node:crypto';
import type { ResourceDefinition, ResourceRegistry } from './registry.js';
import { builtinSchemaName, builtinV2Definitions, builtinV3Schemas, gvPath, OBJECT_META_SCHEMA } from './openapi-builtin.js';

type Obj = Record<string, unknown>;

/** The OpenAPI title and version kube-apiserver writes in `info`. */
const INFO = { title: 'Kubernetes', version: 'v1.32.0' };

const WRITE_PARAMETERS = ['dryRun', 'fieldManager', 'fieldValidation'];

function parameters(names: readonly string[], openApiVersion: 2 | 3): Obj[] {
  return names.map((name) => {
    const type = name === 'force' ? 'boolean' : 'string';
    return openApiVersion === 3 ? { name, in: 'query', schema: { type, uniqueItems: true } } : { name, in: 'query', type, uniqueItems: true };
  });
}

/**
 * A kind's schema name: kube-apiserver's (`io.k8s.api.apps.v1.Deployment`) for a vendored built-in kind,
 * else the reversed group as apiextensions-apiserver names CRD kinds (`com.example.v1.Widget`).
 */
function schemaName(def: ResourceDefinition, version: string): string {
  if (def.definedBy === 'builtin') {
    const name = builtinSchemaName(def.group, version, def.kind);
    if (name !== undefined) return name;
  }
  const group = def.group === '' ? 'core' : def.group.split('.').reverse().join('.');
  return `${group}.${version}.${def.kind}`;
}

function operations(def: ResourceDefinition, version: string, openApiVersion: 2 | 3): Record<string, Obj> {
  const gvk = { group: def.group, version, kind: def.kind };
  const ref = { $ref: openApiVersion === 3 ? `#/components/schemas/${schemaName(def, version)}` : `#/definitions/${schemaName(def, version)}` };
  const response =
    openApiVersion === 3 ? { '200': { description: 'OK', content: { 'application/json': { schema: ref } } } } : { '200': { description: 'OK', schema: ref } };
  // A request body: v3's requestBody, v2's `in: body` parameter.
  const op = (action: string, params: readonly string[], withBody = false): Obj => ({
    operationId: `${action}${def.kind}`,
    'x-kubernetes-action': action,
    'x-kubernetes-group-version-kind': gvk,
    parameters: [
      ...(withBody && openApiVersion === 2 ? [{ name: 'body', in: 'body', required: true, schema: ref }] : []),
      ...parameters(params, openApiVersion),
    ],
    responses: response,
    ...(withBody && openApiVersion === 3 ? { requestBody: { content: { 'application/json': { schema: ref } } } } : {}),
  });
  const base = `/${gvPath(def.group, version)}${def.namespaced ? '/namespaces/{namespace}' : ''}/${def.resource}`;
  const paths: Record<string, Obj> = {
    [base]: {
      get: op('list', ['labelSelector', 'fieldSelector', 'limit', 'continue', 'resourceVersion', 'resourceVersionMatch', 'watch']),
      post: op('post', WRITE_PARAMETERS, true),
    },
    [`${base}/{name}`]: {
      get: op('get', []),
      put: op('put', WRITE_PARAMETERS, true),
      patch: op('patch', [...WRITE_PARAMETERS, 'force']),
      delete: op('delete', ['dryRun', 'gracePeriodSeconds', 'propagationPolicy']),
    },
  };
  for (const sub of def.subresources) {
    if (sub === 'status')
      paths[`${base}/{name}/status`] = { get: op('get', []), put: op('put', WRITE_PARAMETERS), patch: op('patch', [...WRITE_PARAMETERS, 'force']) };
  }
  return paths;
}

/**
 * A custom resource kind's schema: the CRD version's own openAPIV3Schema (so `kubectl explain` shows
 * its fields and descriptions) with the object's apiVersion, kind and metadata (ObjectMeta), as
 * apiextensions-apiserver publishes it; open (`type: object`, unknown fields kept) without one. The
 * built-in kinds without a vendored schema (the v1beta1 versions of old releases) are open too.
 */
function openSchema(def: ResourceDefinition, version: string, openApiVersion: 2 | 3): Obj {
  const gvk = [{ group: def.group, version, kind: def.kind }];
  const crdSchema = def.schemas?.[version];
  if (typeof crdSchema !== 'object' || crdSchema === null || Array.isArray(crdSchema)) {
    return { type: 'object', 'x-kubernetes-group-version-kind': gvk, 'x-kubernetes-preserve-unknown-fields': true };
  }
  const schema = openApiVersion === 3 ? (crdSchema as Obj) : (toV2Schema(crdSchema) as Obj);
  const own = typeof schema.properties === 'object' && schema.properties !== null ? (schema.properties as Obj) : {};
  const metaRef = openApiVersion === 3 ? { allOf: [{ $ref: `#/components/schemas/${OBJECT_META_SCHEMA}` }] } : { $ref: `#/definitions/${OBJECT_META_SCHEMA}` };
  return {
    ...schema,
    type: 'object',
    properties: {
      apiVersion: {
        type: 'string',
        description:
          'APIVersion defines the versioned schema of this representation of an object. Servers should convert recognized schemas to the latest internal value, and may reject unrecognized values.',
      },
      kind: {
        type: 'string',
        description:
          'Kind is a string value representing the REST resource this object represents. Servers may infer this from the endpoint the client submits requests to.',
      },
      metadata: { ...metaRef, description: "Standard object's metadata." },
      ...own,
    },
    'x-kubernetes-group-version-kind': gvk,
  };
}

/**
 * A CRD schema as apiextensions-apiserver publishes it in OpenAPI v2 (ToStructuralOpenAPIV2): v2 has
 * no nullable, anyOf, oneOf or not, and a v2 client would reject the value-validation it cannot express,
 * so those are dropped, recursively.
 */
function toV2Schema(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(toV2Schema);
  if (typeof value !== 'object' || value === null) return value;
  const out: Obj = {};
  for (const [key, v] of Object.entries(value as Obj)) {
    if (key === 'nullable' || key === 'anyOf' || key === 'oneOf' || key === 'not') continue;
    // Values (default, enum, example) are data, not schemas: copied as they are.
    out[key] = key === 'default' || key === 'enum' || key === 'example' ? v : toV2Schema(v);
  }
  return out;
}

function hasVendoredSchema(def: ResourceDefinition, version: string): boolean {
  return def.definedBy === 'builtin' && builtinSchemaName(def.group, version, def.kind) !== undefined;
}

/** The OpenAPI v3 document of one group-version (`api/v1`, `apis/apps/v1`), or undefined. */
export function openApiV3Document(registry: ResourceRegistry, path: string): Obj | undefined {
  const m = /^(?:api\/([^/]+)|apis\/([^/]+)\/([^/]+))$/.exec(path);
  if (!m) return undefined;
  const group = m[1] !== undefined ? '' : m[2]!;
  const version = m[1] ?? m[3]!;
  const kinds = registry.resourcesIn(group, version).map((def) => ({ def, version }));
  if (kinds.length === 0) return undefined;
  const { paths, schemas } = documentParts(kinds, 3);
  return { openapi: '3.0.0', info: INFO, paths, components: { schemas } };
}

/**
 * The operations and schemas of `kinds` in OpenAPI v2 or v3: a built-in kind's vendored schema and
 * what it reaches, else its own (CRD or open) schema, which reaches ObjectMeta; sorted by name.
 */
function documentParts(
  kinds: ReadonlyArray<{ def: ResourceDefinition; version: string }>,
  openApiVersion: 2 | 3,
): { paths: Record<string, Obj>; schemas: Record<string, Obj> } {
  const paths: Record<string, Obj> = {};
  const own: Record<string, Obj> = {};
  const vendored: string[] = [];
  for (const { def, version } of kinds) {
    Object.assign(paths, operations(def, version, openApiVersion));
    if (hasVendoredSchema(def, version)) vendored.push(schemaName(def, version));
    else {
      own[schemaName(def, version)] = openSchema(def, version, openApiVersion);
      if (def.schemas?.[version] !== undefined) vendored.push(OBJECT_META_SCHEMA);
    }
  }
  const all = { ...(openApiVersion === 3 ? builtinV3Schemas(vendored) : builtinV2Definitions(vendored)), ...own };
  return { paths, schemas: Object.fromEntries(Object.entries(all).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) };
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

/**
 * The /openapi/v2 (Swagger 2.0) document: every served kind's operations and definitions, CRDs
 * included, as kube-apiserver merges apiextensions-apiserver's into its own.
 */
export function openApiV2Document(registry: ResourceRegistry): Obj {
  const kinds = registry
    .groups()
    .flatMap(({ group, versions }) => versions.flatMap((version) => registry.resourcesIn(group, version).map((def) => ({ def, version }))));
  const { paths, schemas } = documentParts(kinds, 2);
  return { swagger: '2.0', info: INFO, paths, definitions: schemas };
}

/** The media types /openapi/v2 is served in: JSON, or gnostic's protobuf `Document` (openapi-v2-proto.ts). */
export type OpenApiV2Form = 'json' | 'protobuf';

/** The content type kube-openapi writes for the protobuf form, whichever of its two names was asked for. */
export const OPENAPI_V2_PROTOBUF_CONTENT_TYPE = 'application/com.github.proto-openapi.spec.v2.v1.0+protobuf';

const OPENAPI_V2_SUBTYPES: ReadonlyArray<[string, OpenApiV2Form]> = [
  ['json', 'json'],
  ['com.github.proto-openapi.spec.v2@v1.0+protobuf', 'protobuf'],
  ['com.github.proto-openapi.spec.v2.v1.0+protobuf', 'protobuf'],
];

/**
 * The form of /openapi/v2 an `Accept` header gets, as kube-openapi's handler negotiates it: the clauses
 * by quality (then the more specific first), the first that matches `application/json` or either name
 * of the protobuf type (client-go asks for `...spec.v2@v1.0+protobuf`); no header means any, hence JSON.
 * Undefined when none matches: kube-openapi answers 406.
 */
export function openApiV2Form(accept: string | undefined): OpenApiV2Form | undefined {
  const header = accept === undefined || accept.trim() === '' ? '*/*' : accept;
  const clauses = header
    .split(',')
    .map((clause) => {
      const [range = '', ...params] = clause.split(';');
      const [type = '', subtype = type.trim() === '*' ? '*' : ''] = range.trim().split('/');
      const q = params.map((p) => p.split('=')).find(([k]) => k?.trim() === 'q')?.[1];
      return { type: type.trim(), subtype: subtype.trim(), q: q === undefined ? 1 : Number(q) || 0 };
    })
    .filter((c) => c.subtype !== '')
    .sort((a, b) => b.q - a.q || Number(a.type === '*') - Number(b.type === '*') || Number(a.subtype === '*') - Number(b.subtype === '*'));
  for (const { type, subtype } of clauses) {
    if (type !== 'application' && type !== '*') continue;
    const match = OPENAPI_V2_SUBTYPES.find(([sub]) => subtype === sub || subtype === '*');
    if (match) return match[1];
  }
  return undefined;
}

/** kube-openapi's ETag of /openapi/v2 (both forms, as the response varies by Accept): the JSON's SHA-512, upper-case hex, quoted. */
export function openApiV2ETag(json: string): string {
  return `"${createHash('sha512').update(json).digest('hex').toUpperCase()}"`;
}
