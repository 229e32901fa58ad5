/**
 * The required properties of objects a step creates. A write under a parent the CR does not have
 * (`spec.override.statefulSet.spec.template.spec.affinity` on a seed with no override) creates the
 * parents on the way; the API server refuses each one that lacks a property its schema lists as
 * `required` (`spec.override.statefulSet.spec.template.spec.containers: Required value`), so the step
 * never tests what it meant to. Each newly created object gets those properties, with a minimal value
 * its schema allows, recursively.
 *
 * Pure and deterministic: pattern samples draw from the campaign's seeded source.
 */
import { isObject } from '../../src/model/object-key.js';
import type { SchemaNode } from './schema.js';
import { allowsNumber, allowsString, getAt, samplePattern, setAt, type CrPath, type SeededRandom } from './values.js';

/** The plain string a required property gets when nothing in its schema says more (a valid DNS label: container names). */
export const FILLER_STRING = 'kperturb';

/**
 * The image a filled container gets. controller-gen leaves `image` optional in a Container (the Go
 * type's `omitempty`), but kube-apiserver's pod validation requires it in every pod template
 * (`spec.template.spec.containers[0].image: Required value`), so an operator that merges a filled
 * container into its own pod template by name (rabbitmq's override) adds a container the API server
 * refuses, and the step tests nothing of its own field. With an image the container is a sidecar the
 * API server takes.
 */
export const FILLER_IMAGE = 'registry.example/kperturb:1.0';

/**
 * `after` (the CR `before` with a value written at `path`) with, in every object along `path` (the
 * written value included) that `before` did not have, each required property the write left unset,
 * set to minimalValue (a created container also gets FILLER_IMAGE). A property no value can be found
 * for is left out (the API server decides).
 */
export function fillRequired<T>(root: SchemaNode, before: unknown, after: T, path: CrPath, random: SeededRandom): T {
  let out = after;
  let node: SchemaNode | undefined = root;
  for (let depth = 0; depth <= path.length && node; depth++) {
    const prefix = path.slice(0, depth);
    const created = depth > 0 && getAt(before, prefix) === undefined;
    const here = getAt(out, prefix);
    if (created && isObject(here)) {
      for (const [name, child] of requiredChildren(node)) {
        if (name in here) continue;
        const v = minimalValue(child, random);
        if (v !== undefined) out = setAt(out, [...prefix, name], v);
      }
      if (isContainer(node) && !('image' in here)) out = setAt(out, [...prefix, 'image'], FILLER_IMAGE);
    }
    node = depth < path.length ? childNode(node, path[depth]!) : undefined;
  }
  return out;
}

/**
 * The least a node takes: its default, else its first enum value, else a value of its type within its
 * constraints (the minimum, or 1; `kperturb` padded to minLength; a pattern sample; a format's value);
 * an object with its own required properties (and a container its image: FILLER_IMAGE); an array with
 * minItems items, or with one item when the items are objects that require something (a PodSpec's
 * `containers`, each requiring `name`).
 */
export function minimalValue(node: SchemaNode, random: SeededRandom): unknown {
  if (node.default !== undefined) return node.default;
  if (node.enum && node.enum.length > 0) return node.enum[0];
  switch (node.type) {
    case 'string':
      return minimalString(node, random);
    case 'integer':
    case 'number':
      return minimalNumber(node);
    case 'boolean':
      return false;
    case 'int-or-string':
      return 1;
    case 'object': {
      const out: Record<string, unknown> = {};
      for (const [name, child] of requiredChildren(node)) {
        const v = minimalValue(child, random);
        if (v === undefined) return undefined;
        out[name] = v;
      }
      if (isContainer(node) && out.image === undefined) out.image = FILLER_IMAGE;
      return out;
    }
    case 'map':
      return {};
    case 'array': {
      const items = node.items;
      const count = Math.max(node.minItems ?? 0, items?.type === 'object' && (items.required ?? []).length > 0 ? 1 : 0);
      if (count === 0 || !items) return [];
      if (node.maxItems !== undefined && node.maxItems < count) return undefined;
      const list: unknown[] = [];
      for (let i = 0; i < count; i++) {
        const v = minimalValue(items, random);
        if (v === undefined) return undefined;
        list.push(v);
      }
      // Items of a set or a list map must differ; one item always does, more only if the values do.
      return list.length > 1 && (node.uniqueItems || node.listType === 'set' || node.listType === 'map') ? undefined : list;
    }
    case 'any-of': {
      for (const branch of node.branches ?? []) {
        const v = minimalValue({ ...branch, path: node.path }, random);
        if (v !== undefined) return v;
      }
      return undefined;
    }
    default:
      return undefined;
  }
}

/** A Container as controller-gen embeds it: `name` required, a string `image` beside it. */
export function isContainer(node: SchemaNode): boolean {
  return (node.required ?? []).includes('name') && node.properties?.get('image')?.type === 'string';
}

function requiredChildren(node: SchemaNode): Array<[string, SchemaNode]> {
  if (node.type !== 'object') return [];
  return (node.required ?? []).flatMap((name) => {
    const child = node.properties?.get(name);
    return child ? [[name, child] as [string, SchemaNode]] : [];
  });
}

/** The schema node of a CR path segment under `node`: a property, a list item, a map value. */
function childNode(node: SchemaNode, segment: string | number): SchemaNode | undefined {
  if (node.type === 'object') return typeof segment === 'string' ? node.properties?.get(segment) : undefined;
  if (node.type === 'array' || node.type === 'map') return node.items;
  if (node.type === 'any-of') return node.branches?.map((b) => childNode(b, segment)).find((c) => c !== undefined);
  return undefined;
}

function minimalString(node: SchemaNode, random: SeededRandom): string | undefined {
  if (node.format === 'date-time') return '2001-02-03T04:05:06Z';
  if (node.format === 'date') return '2001-02-03';
  if (node.pattern && !allowsString(node, FILLER_STRING)) return samplePattern(node.pattern, random, new Set(), node);
  let s = FILLER_STRING;
  if (node.minLength !== undefined && s.length < node.minLength) s = s.padEnd(node.minLength, 'x');
  if (node.maxLength !== undefined && s.length > node.maxLength) s = s.slice(0, node.maxLength);
  return allowsString(node, s) ? s : undefined;
}

/** The smallest value at or above the minimum (1 when none is given: a port, a count) that the bounds and multipleOf allow. */
function minimalNumber(node: SchemaNode): number | undefined {
  const by = node.multipleOf ?? 1;
  // Below zero only when the maximum says so: then the largest value it allows.
  const down = node.minimum === undefined && node.maximum !== undefined && node.maximum < 1;
  const start = down ? Math.floor(node.maximum! / by) * by : Math.ceil((node.minimum ?? 1) / by) * by;
  for (let k = 0; k < 50; k++) {
    const v = start + (down ? -k : k) * by;
    if (allowsNumber(node, v)) return v;
  }
  return undefined;
}
