/**
 * What a controller request means in Kubernetes terms: verb, resource (with its kind, from discovery)
 * and the key of the object it addresses. Also the small decoders the trace needs (JSON bodies,
 * compressed answers).
 */
import { brotliDecompressSync, gunzipSync, inflateSync } from 'node:zlib';
import { parseApiPath, requestVerb, type ApiPath, type RequestVerb } from '../src/model/api-path.js';
import { formatKey, isObject, keyOf, type KubeObject, type ObjectKey } from '../src/model/object-key.js';
import type { ResourceRef } from '../src/model/trace.js';
import type { ResourceInfo } from '../src/kube/discovery.js';

export type ResourceLookup = (group: string, version: string, resource: string) => Promise<ResourceInfo | undefined>;
/** A resource already known from discovery, without waiting (undefined: ask `ResourceLookup`). */
export type KnownResource = (group: string, version: string, resource: string) => ResourceInfo | undefined;

export interface RequestFacts {
  method: string;
  /** Path and query exactly as the controller sent them. */
  rawUrl: string;
  pathname: string;
  query: Record<string, string>;
  apiPath?: ApiPath;
  verb: RequestVerb;
  isWatch: boolean;
  dryRun: boolean;
  resource?: ResourceRef;
  key?: ObjectKey;
  body?: unknown;
  bodyBytes: number;
  contentType?: string;
}

/** What the method and the URL alone say: the same for every request to one URL, so it is cached. */
interface RequestTarget {
  pathname: string;
  query: Record<string, string>;
  apiPath: ApiPath | undefined;
  verb: RequestVerb;
  dryRun: boolean;
}

const TARGET_CACHE_LIMIT = 4096;
const targets = new Map<string, RequestTarget>();

/** Parses method + URL once per distinct request line (controllers repeat the same few many times). */
function requestTarget(method: string, rawUrl: string): RequestTarget {
  const cacheKey = method + ' ' + rawUrl;
  const cached = targets.get(cacheKey);
  if (cached) return cached;
  const url = new URL(rawUrl, 'http://proxy.invalid');
  const apiPath = parseApiPath(url.pathname);
  const target: RequestTarget = {
    pathname: url.pathname,
    query: Object.fromEntries(url.searchParams.entries()),
    apiPath,
    verb: requestVerb(method, apiPath, url.searchParams),
    dryRun: url.searchParams.getAll('dryRun').some((v) => v !== ''),
  };
  // Unbounded URLs (names, label selectors, continue tokens) must not grow the cache forever.
  if (targets.size >= TARGET_CACHE_LIMIT) targets.clear();
  targets.set(cacheKey, target);
  return target;
}

/**
 * Classifies a request. Synchronous when the resource is already known (`known`), which is the
 * usual case once a controller runs; a promise when discovery must be asked first.
 */
export function classifyRequest(
  method: string,
  rawUrl: string,
  body: Buffer,
  contentType: string | undefined,
  lookup: ResourceLookup,
  known?: KnownResource,
): RequestFacts | Promise<RequestFacts> {
  const target = requestTarget(method, rawUrl);
  const apiPath = target.apiPath;
  const facts: RequestFacts = {
    method: method.toUpperCase(),
    rawUrl,
    pathname: target.pathname,
    // Each request's own copy: the trace keeps it.
    query: { ...target.query },
    verb: target.verb,
    isWatch: target.verb === 'watch',
    dryRun: target.dryRun,
    bodyBytes: body.length,
  };
  if (apiPath) facts.apiPath = apiPath;
  if (contentType) facts.contentType = contentType;
  if (body.length > 0) {
    const parsed = parseJsonBody(body, contentType);
    if (parsed !== undefined) facts.body = parsed;
  }
  if (!apiPath) return facts;
  const info = known?.(apiPath.group, apiPath.version, apiPath.resource);
  if (info) return withResource(facts, apiPath, info);
  // Discovery unavailable or unknown resource: the request is recorded without its kind.
  return lookup(apiPath.group, apiPath.version, apiPath.resource)
    .catch(() => undefined)
    .then((found) => withResource(facts, apiPath, found));
}

function withResource(facts: RequestFacts, apiPath: ApiPath, info: ResourceInfo | undefined): RequestFacts {
  const resource: ResourceRef = { group: apiPath.group, version: apiPath.version, resource: apiPath.resource };
  if (apiPath.subresource) resource.subresource = apiPath.subresource;
  if (info) {
    resource.kind = info.kind;
    resource.namespaced = info.namespaced;
  }
  facts.resource = resource;

  if (resource.kind) {
    const namespace = resource.namespaced === false ? undefined : apiPath.namespace;
    if (apiPath.name !== undefined) {
      facts.key = formatKey(resource.kind, namespace, apiPath.name);
    } else if (facts.verb === 'create' && isObject(facts.body)) {
      const md = (facts.body as KubeObject).metadata;
      const name = typeof md?.name === 'string' && md.name ? md.name : undefined;
      const bodyNs = typeof md?.namespace === 'string' && md.namespace ? md.namespace : undefined;
      if (name) facts.key = formatKey(resource.kind, resource.namespaced === false ? undefined : (namespace ?? bodyNs), name);
    }
  }
  return facts;
}

/** Key of an object in an answer or a watch event, falling back to the request's kind. */
export function keyOfAnswer(obj: unknown, fallbackKind: string | undefined): ObjectKey | undefined {
  if (!isObject(obj)) return undefined;
  const o = obj as KubeObject;
  if (o.kind === 'Status') return undefined;
  const kind = typeof o.kind === 'string' && o.kind ? o.kind : fallbackKind;
  return kind ? keyOf(o, kind) : undefined;
}

export function isJsonLike(contentType: string | undefined): boolean {
  if (!contentType) return false;
  const media = contentType.split(';')[0]!.trim().toLowerCase();
  // application/json, merge-patch+json, json-patch+json, strategic-merge-patch+json; apply-patch+yaml
  // is usually JSON too (YAML is a superset), so it is tried as well.
  return media.endsWith('json') || media.endsWith('+yaml');
}

export function parseJsonBody(body: Buffer, contentType: string | undefined): unknown {
  if (!isJsonLike(contentType)) return undefined;
  try {
    return JSON.parse(body.toString('utf8'));
  } catch {
    return undefined;
  }
}

/** Decodes a compressed answer for the trace (the bytes forwarded to the controller stay as they were). */
export function decodeContent(body: Buffer, contentEncoding: string | undefined): Buffer | undefined {
  const enc = (contentEncoding ?? '').trim().toLowerCase();
  try {
    if (enc === '' || enc === 'identity') return body;
    if (enc === 'gzip' || enc === 'x-gzip') return gunzipSync(body);
    if (enc === 'deflate') return inflateSync(body);
    if (enc === 'br') return brotliDecompressSync(body);
  } catch {
    return undefined;
  }
  return undefined;
}
