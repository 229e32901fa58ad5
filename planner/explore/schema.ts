/**
 * The schema model of `kperturb explore`: a CRD version's openAPIV3Schema as typed nodes that keep
 * every keyword constraining a value, so that operations (generate.ts) only write values the schema
 * allows, and can say why a property got none (opaque, no room in its constraints).
 *
 * Pure: a CRD object in, nodes out. Which version: the one the seed CR is written against (Acto takes
 * the last entry of spec.versions, which may not be the seed's).
 */
import { isObject } from '../../src/model/object-key.js';

export type NodeType = 'object' | 'map' | 'array' | 'string' | 'integer' | 'number' | 'boolean' | 'int-or-string' | 'opaque' | 'any-of';

export interface SchemaNode {
  type: NodeType;
  /** Where it sits in the CR: property names, `*` for an array item or a map value. */
  path: string[];
  /** Object: its properties. */
  properties?: Map<string, SchemaNode>;
  required?: string[];
  /** Array items; map values. */
  items?: SchemaNode;
  /** anyOf / oneOf branches (allOf is merged into the node). */
  branches?: SchemaNode[];
  enum?: unknown[];
  default?: unknown;
  nullable?: boolean;
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: boolean;
  exclusiveMaximum?: boolean;
  multipleOf?: number;
  minLength?: number;
  maxLength?: number;
  pattern?: string;
  format?: string;
  minItems?: number;
  maxItems?: number;
  uniqueItems?: boolean;
  minProperties?: number;
  maxProperties?: number;
  /** x-kubernetes-list-type (atomic, set, map) and, for map, x-kubernetes-list-map-keys. */
  listType?: 'atomic' | 'set' | 'map';
  listMapKeys?: string[];
  /** x-kubernetes-validations rules: noted, not evaluated (the API server's answer decides). */
  validations?: string[];
  /** x-kubernetes-preserve-unknown-fields with properties: the properties are generated, unknown ones kept. */
  preserveUnknown?: boolean;
  description?: string;
}

export class SchemaModelError extends Error {}

/** The CRD version a custom resource of `apiVersion` is written against, and its schema. */
export function crdVersionSchema(crd: unknown, apiVersion: string): { group: string; version: string; kind: string; schema: unknown } | undefined {
  if (!isObject(crd) || !isObject(crd.spec)) return undefined;
  const spec = crd.spec;
  const group = typeof spec.group === 'string' ? spec.group : '';
  const kind = isObject(spec.names) && typeof spec.names.kind === 'string' ? spec.names.kind : '';
  const [g, v] = apiVersion.includes('/') ? (apiVersion.split('/', 2) as [string, string]) : ['', apiVersion];
  if (g !== group) return undefined;
  const versions = Array.isArray(spec.versions) ? spec.versions.filter(isObject) : [];
  const entry = versions.find((e) => e.name === v);
  if (!entry) return undefined;
  // apiextensions.k8s.io/v1beta1 could give one schema for every version at spec.validation.
  const schema = isObject(entry.schema) ? entry.schema.openAPIV3Schema : isObject(spec.validation) ? spec.validation.openAPIV3Schema : undefined;
  return { group, version: v, kind, schema };
}

/** Parses an openAPIV3Schema (structural, as apiextensions.k8s.io/v1 requires) into nodes. */
export function parseSchema(raw: unknown, path: string[] = []): SchemaNode {
  if (!isObject(raw)) return { type: 'opaque', path };
  const s = mergeAllOf(raw);
  const node: SchemaNode = { type: 'opaque', path };
  if (Array.isArray(s.enum)) node.enum = s.enum;
  if ('default' in s) node.default = s.default;
  if (s.nullable === true) node.nullable = true;
  if (Array.isArray(s.required)) node.required = s.required.filter((r): r is string => typeof r === 'string');
  for (const k of ['minimum', 'maximum', 'multipleOf', 'minLength', 'maxLength', 'minItems', 'maxItems', 'minProperties', 'maxProperties'] as const) {
    if (typeof s[k] === 'number') node[k] = s[k];
  }
  for (const k of ['exclusiveMinimum', 'exclusiveMaximum', 'uniqueItems'] as const) if (s[k] === true) node[k] = true;
  if (typeof s.pattern === 'string') node.pattern = s.pattern;
  if (typeof s.format === 'string') node.format = s.format;
  if (typeof s.description === 'string') node.description = s.description;
  const listType = s['x-kubernetes-list-type'];
  if (listType === 'atomic' || listType === 'set' || listType === 'map') node.listType = listType;
  if (Array.isArray(s['x-kubernetes-list-map-keys'])) node.listMapKeys = s['x-kubernetes-list-map-keys'].filter((k): k is string => typeof k === 'string');
  if (Array.isArray(s['x-kubernetes-validations'])) {
    node.validations = s['x-kubernetes-validations'].filter(isObject).map((r) => String(r.rule ?? ''));
  }
  const preserve = s['x-kubernetes-preserve-unknown-fields'] === true;
  if (s['x-kubernetes-int-or-string'] === true) return { ...node, type: 'int-or-string' };
  const branches = [s.anyOf, s.oneOf].find(Array.isArray) as unknown[] | undefined;
  switch (s.type) {
    case 'object': {
      if (isObject(s.properties)) {
        node.type = 'object';
        node.properties = new Map(Object.entries(s.properties).map(([k, v]) => [k, parseSchema(v, [...path, k])]));
        if (preserve) node.preserveUnknown = true;
        return node;
      }
      if (isObject(s.additionalProperties)) return { ...node, type: 'map', items: parseSchema(s.additionalProperties, [...path, '*']) };
      // No properties, no value schema: anything may be written, nothing says what.
      return preserve || s.additionalProperties === true ? { ...node, type: 'opaque' } : { ...node, type: 'object', properties: new Map() };
    }
    case 'array':
      return { ...node, type: 'array', items: parseSchema(s.items, [...path, '*']) };
    case 'string':
    case 'integer':
    case 'number':
    case 'boolean':
      return { ...node, type: s.type };
    default:
      if (branches) return { ...node, type: 'any-of', branches: branches.map((b) => parseSchema(b, path)) };
      return node;
  }
}

/** allOf folded into its parent: structural schemas only allow constraints there, not types. */
function mergeAllOf(s: Record<string, unknown>): Record<string, unknown> {
  if (!Array.isArray(s.allOf)) return s;
  const out: Record<string, unknown> = { ...s };
  delete out.allOf;
  for (const part of s.allOf.filter(isObject)) {
    for (const [k, v] of Object.entries(mergeAllOf(part))) {
      if (k === 'properties' && isObject(v) && isObject(out.properties)) out.properties = { ...out.properties, ...v };
      else if (k === 'required' && Array.isArray(v) && Array.isArray(out.required)) out.required = [...new Set([...out.required, ...v])];
      else if (!(k in out)) out[k] = v;
    }
  }
  return out;
}

/** Every node of the tree, parents before children. */
export function* walkNodes(node: SchemaNode): Generator<SchemaNode> {
  yield node;
  for (const child of node.properties?.values() ?? []) yield* walkNodes(child);
  if (node.items) yield* walkNodes(node.items);
}

/** A property path as people write it: `spec.resources.limits.*`. */
export function formatNodePath(path: readonly string[]): string {
  return path.join('.');
}
