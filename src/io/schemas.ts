/**
 * The JSON Schemas of kperturb's files (schemas/ in the package: kperturb.yaml and TestPlan), which
 * editors use to complete and check them and `kperturb schema` prints. The config validator takes
 * the fields it allows from its schema (`allowedKeys`), so that a field the schema does not describe
 * is refused and the two cannot drift apart. The TestPlan schema is made from the fault registry
 * (src/model/plan-schema.ts); schemas/testplan.schema.json is its copy for editors, which
 * test/model/schemas.test.ts holds equal to it. That test also checks every bundled file against
 * the schemas with a standard JSON Schema validator.
 */
import { readFileSync } from 'node:fs';
import { isObject } from '../model/object-key.js';
import { planSchema } from '../model/plan-schema.js';

export const SCHEMA_NAMES = ['config', 'plan'] as const;
export type SchemaName = (typeof SCHEMA_NAMES)[number];

const FILES: Record<SchemaName, string> = { config: 'kperturb.schema.json', plan: 'testplan.schema.json' };

/** The schema file's path: schemas/ beside dist/ (this file is dist/src/io/schemas.js). */
export function schemaFile(name: SchemaName): string {
  return new URL(`../../../schemas/${FILES[name]}`, import.meta.url).pathname;
}

const loaded = new Map<SchemaName, Record<string, unknown>>();

export function schema(name: SchemaName): Record<string, unknown> {
  let s = loaded.get(name);
  if (!s) {
    s = name === 'plan' ? planSchema() : (JSON.parse(readFileSync(schemaFile(name), 'utf8')) as Record<string, unknown>);
    loaded.set(name, s);
  }
  return s;
}

/**
 * The property names the schema allows at `at`, a `/`-separated walk from the root: property names,
 * `*` for a map's values or a list's items, `definitions/NAME` for a definition; `$ref`s are followed
 * and, in a `oneOf`, the branch that has the next property (or, at the end, the object branch).
 */
export function allowedKeys(name: SchemaName, at: string): string[] {
  const root = schema(name);
  const resolve = (node: unknown): Record<string, unknown> => {
    let n = node;
    for (let hops = 0; isObject(n) && typeof n.$ref === 'string'; hops++) {
      if (hops > 20) break;
      n = (n.$ref as string)
        .replace(/^#\//, '')
        .split('/')
        .reduce<unknown>((o, k) => (isObject(o) ? o[k] : undefined), root);
    }
    if (!isObject(n)) throw new Error(`schema ${name}: nothing at ${at}`);
    return n;
  };
  const branches = (node: Record<string, unknown>): Array<Record<string, unknown>> => [node, ...(Array.isArray(node.oneOf) ? node.oneOf.map(resolve) : [])];
  let node = resolve(root);
  const segments = at === '' ? [] : at.split('/');
  for (let i = 0; i < segments.length; i++) {
    const seg = segments[i]!;
    if (seg === 'definitions') {
      node = resolve((root.definitions as Record<string, unknown>)[segments[++i]!]);
      continue;
    }
    const next = branches(node)
      .map((b) =>
        seg === '*'
          ? (b.items ?? (isObject(b.additionalProperties) ? b.additionalProperties : undefined))
          : isObject(b.properties)
            ? b.properties[seg]
            : undefined,
      )
      .find((x) => x !== undefined);
    node = resolve(next);
  }
  const object = branches(node).find((b) => isObject(b.properties));
  if (!object) throw new Error(`schema ${name}: no object at ${at}`);
  return Object.keys(object.properties as Record<string, unknown>);
}

/**
 * The property names of the `oneOf` branch at `at` whose `discriminator` property is the constant
 * `value` (a fault's fields by its `type`).
 */
export function allowedKeysOfBranch(name: SchemaName, at: string, discriminator: string, value: string): string[] {
  const root = schema(name);
  const node = at.split('/').reduce<unknown>((o, k) => (isObject(o) ? o[k] : undefined), root);
  const branches = isObject(node) && Array.isArray(node.oneOf) ? node.oneOf : [];
  for (const b of branches) {
    if (!isObject(b) || !isObject(b.properties)) continue;
    const d = b.properties[discriminator];
    if (isObject(d) && d.const === value) return Object.keys(b.properties);
  }
  throw new Error(`schema ${name}: no branch of ${at} with ${discriminator} ${value}`);
}
