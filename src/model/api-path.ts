/**
 * Parsing Kubernetes REST paths into their parts, shared by the embedded cluster, the proxy and
 * the client so that all three agree on what a URL means.
 *
 *   /api/v1/namespaces/{ns}/{resource}/{name}/{subresource}
 *   /apis/{group}/{version}/namespaces/{ns}/{resource}/{name}/{subresource}
 *   /api/v1/{resource}            (cluster-scoped, or all namespaces)
 *   /api/v1/namespaces/{name}     (the namespace object itself)
 */
import { boolParam, type QueryParams } from './query-params.js';

export type { QueryParams } from './query-params.js';
export interface ApiPath {
  group: string; // "" for the core group
  version: string;
  namespace?: string;
  resource: string;
  name?: string;
  subresource?: string;
}

const NAMESPACE_SUBRESOURCES = new Set(['status', 'finalize']);

export function parseApiPath(pathname: string): ApiPath | undefined {
  const segs = pathname
    .split('/')
    .filter((s) => s.length > 0)
    .map(decodeURIComponent);
  let group: string;
  let version: string;
  let rest: string[];
  if (segs[0] === 'api' && segs.length >= 3) {
    group = '';
    version = segs[1]!;
    rest = segs.slice(2);
  } else if (segs[0] === 'apis' && segs.length >= 4) {
    group = segs[1]!;
    version = segs[2]!;
    rest = segs.slice(3);
  } else {
    return undefined;
  }
  let namespace: string | undefined;
  // As the API server's request-info resolver: `namespaces/{ns}/{resource}...` is scoped to {ns},
  // except the namespace's own subresources `namespaces/{name}/status` and `.../finalize`.
  if (rest[0] === 'namespaces' && rest.length >= 3 && !(group === '' && rest.length === 3 && NAMESPACE_SUBRESOURCES.has(rest[2]!))) {
    namespace = rest[1];
    rest = rest.slice(2);
  }
  const [resource, name, subresource, ...extra] = rest;
  if (!resource || extra.length > 0) return undefined;
  const parsed: ApiPath = { group, version, resource };
  if (namespace !== undefined) parsed.namespace = namespace;
  if (name !== undefined) parsed.name = name;
  if (subresource !== undefined) parsed.subresource = subresource;
  return parsed;
}

export function formatApiPath(p: ApiPath): string {
  const base = p.group === '' ? `/api/${p.version}` : `/apis/${p.group}/${p.version}`;
  const ns = p.namespace !== undefined ? `/namespaces/${encodeURIComponent(p.namespace)}` : '';
  const name = p.name !== undefined ? `/${encodeURIComponent(p.name)}` : '';
  const sub = p.subresource !== undefined ? `/${p.subresource}` : '';
  return `${base}${ns}/${p.resource}${name}${sub}`;
}

export function groupVersion(group: string, version: string): string {
  return group === '' ? version : `${group}/${version}`;
}

export function splitApiVersion(apiVersion: string): { group: string; version: string } {
  const i = apiVersion.indexOf('/');
  return i < 0 ? { group: '', version: apiVersion } : { group: apiVersion.slice(0, i), version: apiVersion.slice(i + 1) };
}

export type RequestVerb = 'get' | 'list' | 'watch' | 'create' | 'update' | 'patch' | 'delete' | 'deletecollection' | 'other';

export const WRITE_VERBS: ReadonlySet<RequestVerb> = new Set(['create', 'update', 'patch', 'delete', 'deletecollection']);

/**
 * The Kubernetes verb of an HTTP request, as the API server's request-info resolver derives it: a GET
 * is a watch when its `watch` parameter reads true by apimachinery's rule (query-params.ts), so
 * `watch=True` (the Python client's) and a bare `watch` are watches, `watch=0` and `watch=FALSE` are not.
 */
export function requestVerb(method: string, path: ApiPath | undefined, query: QueryParams): RequestVerb {
  if (!path) return 'other';
  const m = method.toUpperCase();
  switch (m) {
    case 'GET':
      if (boolParam(query, 'watch')) return 'watch';
      return path.name === undefined ? 'list' : 'get';
    case 'POST':
      return path.name === undefined || path.subresource !== undefined ? 'create' : 'other';
    case 'PUT':
      return 'update';
    case 'PATCH':
      return 'patch';
    case 'DELETE':
      return path.name === undefined ? 'deletecollection' : 'delete';
    default:
      return 'other';
  }
}
