/**
 * Which subtrees of a CRD's schema are core Kubernetes types, by structure (as Acto's
 * K8sSchemaMatcher does): an object node matches a definition of the built-in OpenAPI (v2
 * `definitions`, what the embedded cluster serves at /openapi/v2) when their property names are the
 * same and each property matches in turn (objects by their definition, lists by their items, maps by
 * their values; a Quantity or IntOrString by an int-or-string or a string). Ties go to the
 * definition whose name ends with the property's name, then to the first by name.
 */
import { isObject } from '../../src/model/object-key.js';
import { formatNodePath, walkNodes, type SchemaNode } from './schema.js';

/** Schema property path (`spec.resources`) -> the definition it matches. */
export type CoreTypeMatches = Map<string, string>;

const REF = '#/definitions/';

export function matchCoreTypes(root: SchemaNode, definitions: Record<string, unknown>): CoreTypeMatches {
  const matches: CoreTypeMatches = new Map();
  const names = Object.keys(definitions).sort();
  if (names.length === 0) return matches;
  const byProps = new Map<string, string[]>();
  for (const name of names) {
    const def = definitions[name];
    if (!isObject(def) || !isObject(def.properties)) continue;
    const key = Object.keys(def.properties).sort().join(',');
    byProps.set(key, [...(byProps.get(key) ?? []), name]);
  }
  for (const node of walkNodes(root)) {
    if (node.type !== 'object' || !node.properties || node.properties.size === 0 || node.path.length < 2) continue;
    const candidates = byProps.get([...node.properties.keys()].sort().join(',')) ?? [];
    const fitting = candidates.filter((name) => objectMatches(node, definitions[name], definitions, 0));
    if (fitting.length === 0) continue;
    const last = String(node.path.at(-1)).toLowerCase();
    const preferred = fitting.find((n) => n.toLowerCase().endsWith(last)) ?? fitting[0]!;
    matches.set(formatNodePath(node.path), preferred);
  }
  return matches;
}

function resolve(def: unknown, definitions: Record<string, unknown>): Record<string, unknown> | undefined {
  if (!isObject(def)) return undefined;
  if (typeof def.$ref === 'string' && def.$ref.startsWith(REF)) return resolve(definitions[def.$ref.slice(REF.length)], definitions);
  return def;
}

function refName(def: unknown): string | undefined {
  return isObject(def) && typeof def.$ref === 'string' && def.$ref.startsWith(REF) ? def.$ref.slice(REF.length) : undefined;
}

function objectMatches(node: SchemaNode, rawDef: unknown, definitions: Record<string, unknown>, depth: number): boolean {
  const def = resolve(rawDef, definitions);
  if (!def || !isObject(def.properties) || !node.properties) return false;
  const defProps = Object.keys(def.properties);
  if (defProps.length !== node.properties.size || defProps.some((p) => !node.properties!.has(p))) return false;
  return defProps.every((p) => valueMatches(node.properties!.get(p)!, (def.properties as Record<string, unknown>)[p], definitions, depth + 1));
}

function valueMatches(node: SchemaNode, rawDef: unknown, definitions: Record<string, unknown>, depth: number): boolean {
  // Deep recursive types (JSONSchemaProps) would not end: past this depth the names decide.
  if (depth > 12) return true;
  const name = refName(rawDef);
  if (name?.endsWith('.Quantity') || name?.endsWith('.IntOrString')) return node.type === 'int-or-string' || node.type === 'string' || node.type === 'integer';
  if (name?.endsWith('.Time') || name?.endsWith('.MicroTime')) return node.type === 'string';
  const def = resolve(rawDef, definitions);
  if (!def) return node.type === 'opaque';
  if (node.type === 'opaque') return true;
  switch (def.type) {
    case 'string':
      return node.type === 'string' || node.type === 'int-or-string';
    case 'integer':
    case 'number':
      return node.type === 'integer' || node.type === 'number';
    case 'boolean':
      return node.type === 'boolean';
    case 'array':
      return node.type === 'array' && !!node.items && valueMatches(node.items, def.items, definitions, depth + 1);
    case 'object':
      if (isObject(def.additionalProperties))
        return node.type === 'map' && !!node.items && valueMatches(node.items, def.additionalProperties, definitions, depth + 1);
      if (isObject(def.properties)) return node.type === 'object' && objectMatches(node, def, definitions, depth);
      return node.type === 'object' || node.type === 'map';
    default:
      return isObject(def.properties) ? node.type === 'object' && objectMatches(node, def, definitions, depth) : false;
  }
}
