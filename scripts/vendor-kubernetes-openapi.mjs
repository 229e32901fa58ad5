#!/usr/bin/env node
/**
 * Regenerates vendor/kubernetes-openapi/ from the OpenAPI specs kube-apiserver's build generates
 * (k8s.io/kubernetes api/openapi-spec: v3/*.json per group-version, swagger.json for v2), read from
 * the Go module cache. Only the kinds the embedded cluster serves in some emulated release (every
 * group-version of builtinDefinitions() from 1.18 to 1.32 that the spec has) and the schemas they
 * reach are kept; descriptions are kept, as `kubectl explain` prints them. The build never reads the
 * module cache: the output is committed, so a fresh clone builds without Go.
 *
 *   npm run build && go mod download k8s.io/kubernetes@v1.33.13 && node scripts/vendor-kubernetes-openapi.mjs
 *
 * KUBERNETES_OPENAPI_SPEC=<dir> reads another copy of api/openapi-spec instead of the module cache.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';

export const KUBERNETES_VERSION = 'v1.33.13';
const root = fileURLToPath(new URL('..', import.meta.url));
const out = join(root, 'vendor', 'kubernetes-openapi');

function specDir() {
  if (process.env.KUBERNETES_OPENAPI_SPEC) return process.env.KUBERNETES_OPENAPI_SPEC;
  const cache = execFileSync('go', ['env', 'GOMODCACHE'], { encoding: 'utf8' }).trim();
  return join(cache, `k8s.io/kubernetes@${KUBERNETES_VERSION}`, 'api', 'openapi-spec');
}

const dir = specDir();
if (!existsSync(join(dir, 'swagger.json'))) {
  console.error(
    `vendor-kubernetes-openapi: ${dir}/swagger.json not found; run: go mod download k8s.io/kubernetes@${KUBERNETES_VERSION} (or set KUBERNETES_OPENAPI_SPEC)`,
  );
  process.exit(2);
}
const builtinsModule = join(root, 'dist', 'src', 'cluster', 'builtins.js');
if (!existsSync(builtinsModule)) {
  console.error('vendor-kubernetes-openapi: dist/ is missing; run npm run build first');
  process.exit(2);
}
const { builtinDefinitions } = await import(builtinsModule);
const { OLDEST_KUBERNETES_MINOR, NEWEST_KUBERNETES_MINOR } = await import(join(root, 'dist', 'src', 'cluster', 'kube-version.js'));

/** group-version path (api/v1, apis/apps/v1) -> kinds served there in some release. */
const served = new Map();
for (let minor = OLDEST_KUBERNETES_MINOR; minor <= NEWEST_KUBERNETES_MINOR; minor++) {
  for (const def of builtinDefinitions({ major: 1, minor })) {
    for (const version of def.versions) {
      const gv = def.group === '' ? `api/${version}` : `apis/${def.group}/${version}`;
      if (!served.has(gv)) served.set(gv, new Set());
      served.get(gv).add(def.kind);
    }
  }
}

const gvkMatches = (schema, group, version, kind) =>
  Array.isArray(schema['x-kubernetes-group-version-kind']) &&
  schema['x-kubernetes-group-version-kind'].some((g) => g.group === group && g.version === version && g.kind === kind);

/** Every `$ref` under `value`, as the name after `prefix`. */
function refs(value, prefix, found = []) {
  if (Array.isArray(value)) for (const v of value) refs(v, prefix, found);
  else if (value !== null && typeof value === 'object') {
    for (const [k, v] of Object.entries(value)) {
      if (k === '$ref' && typeof v === 'string' && v.startsWith(prefix)) found.push(v.slice(prefix.length));
      else refs(v, prefix, found);
    }
  }
  return found;
}

/** The names reachable from `start` in `pool`, with their schemas, sorted by name. */
function closure(start, pool, prefix) {
  const keep = new Map();
  const queue = [...start];
  while (queue.length > 0) {
    const name = queue.pop();
    if (keep.has(name)) continue;
    const schema = pool[name];
    if (schema === undefined) throw new Error(`vendor-kubernetes-openapi: $ref to ${name} is not in the spec`);
    keep.set(name, schema);
    queue.push(...refs(schema, prefix));
  }
  return Object.fromEntries([...keep.entries()].sort(([a], [b]) => a.localeCompare(b)));
}

// v3: one pool of component schemas (every group-version's document names a schema the same way,
// checked below), and per group-version the schema name of each served kind.
const v3Pool = {};
const v3Kinds = {};
const missing = [];
for (const [gv, kinds] of [...served.entries()].sort()) {
  const file = join(dir, 'v3', `${gv.replaceAll('/', '__')}_openapi.json`);
  if (!existsSync(file)) {
    missing.push(`${gv} (${[...kinds].join(', ')})`);
    continue;
  }
  const doc = JSON.parse(readFileSync(file, 'utf8'));
  const parts = gv.split('/');
  const [group, version] = parts[0] === 'api' ? ['', parts[1]] : [parts[1], parts[2]];
  const names = {};
  for (const kind of kinds) {
    const name = Object.keys(doc.components.schemas).find((n) => gvkMatches(doc.components.schemas[n], group, version, kind));
    if (name === undefined) {
      missing.push(`${gv} ${kind}`);
      continue;
    }
    names[kind] = name;
  }
  for (const [name, schema] of Object.entries(closure(Object.values(names), doc.components.schemas, '#/components/schemas/'))) {
    if (v3Pool[name] !== undefined && JSON.stringify(v3Pool[name]) !== JSON.stringify(schema))
      throw new Error(`vendor-kubernetes-openapi: ${name} differs between group-versions`);
    v3Pool[name] = schema;
  }
  if (Object.keys(names).length > 0) v3Kinds[gv] = Object.fromEntries(Object.entries(names).sort());
}

// v2: the swagger.json definitions of the same kinds and what they reach.
const swagger = JSON.parse(readFileSync(join(dir, 'swagger.json'), 'utf8'));
const v2Definitions = closure(
  Object.values(v3Kinds).flatMap((k) => Object.values(k)),
  swagger.definitions,
  '#/definitions/',
);

mkdirSync(out, { recursive: true });
const write = (name, data) => {
  const json = JSON.stringify(data);
  const gz = gzipSync(json, { level: 9 });
  writeFileSync(join(out, name), gz);
  console.log(`${name}: ${(json.length / 1e6).toFixed(2)} MB JSON, ${(gz.length / 1e3).toFixed(0)} kB gzipped`);
};
write('v3.json.gz', { kubernetesVersion: KUBERNETES_VERSION, kinds: v3Kinds, schemas: v3Pool });
write('v2.json.gz', { kubernetesVersion: KUBERNETES_VERSION, definitions: v2Definitions });
console.log(`${Object.keys(v3Kinds).length} group-versions, ${Object.keys(v3Pool).length} v3 schemas, ${Object.keys(v2Definitions).length} v2 definitions`);
if (missing.length > 0) console.log(`not in the ${KUBERNETES_VERSION} spec (served with open schemas): ${missing.join('; ')}`);
