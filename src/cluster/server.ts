/**
 * HTTP front of the embedded API server: routes a request to discovery, a verb of `Operations`, or a
 * watch, decodes bodies and encodes answers (JSON; YAML request bodies are accepted too). Every failure
 * becomes a metav1.Status response; nothing a client sends can crash the process.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { parse as parseYaml } from 'yaml';
import { parseApiPath, requestVerb, type ApiPath } from '../model/api-path.js';
import { isObject } from '../model/object-key.js';
import {
  ApiError,
  badRequest,
  internalError,
  methodNotAllowed,
  pathNotFound,
  requestEntityTooLarge,
  unsupportedMediaType,
  invalid,
} from './api-error.js';
import { apiGroupDocument, apiGroupList, apiResourceList, apiVersions, versionInfo } from './discovery.js';
import { Operations, parseResourceVersion, parseSelection, type DeleteOptions, type Result, type Scope } from './operations.js';
import type { ResourceRegistry } from './registry.js';
import type { WatchHub } from './watch.js';

const MAX_BODY_BYTES = 3 * 1024 * 1024;
const BODY_MEDIA_TYPES = ['application/json', 'application/yaml'];

export interface ApiServerContext {
  registry: ResourceRegistry;
  ops: Operations;
  watches: WatchHub;
  /** host:port clients reach the server at (for /api's serverAddressByClientCIDRs). */
  serverAddress(): string;
}

function mediaType(req: IncomingMessage): string {
  return (req.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let failed = false;
    req.on('data', (chunk: Buffer) => {
      if (failed) return;
      size += chunk.length;
      if (size > MAX_BODY_BYTES) {
        failed = true;
        reject(requestEntityTooLarge(MAX_BODY_BYTES));
        return;
      }
      chunks.push(chunk);
    });
    req.on('end', () => {
      if (!failed) resolve(Buffer.concat(chunks).toString('utf8'));
    });
    req.on('error', (err) => {
      if (!failed) reject(err);
      failed = true;
    });
  });
}

function sendJson(res: ServerResponse, code: number, body: unknown, pretty: boolean): void {
  if (res.headersSent || res.destroyed) return;
  const text = pretty ? JSON.stringify(body, null, 2) + '\n' : JSON.stringify(body);
  res.writeHead(code, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(text), 'Cache-Control': 'no-cache, private' });
  res.end(text);
}

export function sendError(res: ServerResponse, err: unknown): void {
  const apiError = err instanceof ApiError ? err : internalError(err instanceof Error ? err.message : String(err));
  if (res.headersSent) {
    // Too late for a status line (a watch already streaming): end the stream.
    if (!res.writableEnded) res.end();
    return;
  }
  sendJson(res, apiError.code, apiError.toStatus(), false);
}

function decodeBody(text: string, contentType: string, kind: string): unknown {
  if (contentType === 'application/yaml') {
    try {
      return parseYaml(text);
    } catch (err) {
      throw badRequest(`the object provided is unrecognized (must be of type ${kind}): yaml: ${(err as Error).message.split('\n')[0]}`);
    }
  }
  if (contentType !== '' && contentType !== 'application/json' && contentType !== '*/*') {
    throw unsupportedMediaType(contentType, BODY_MEDIA_TYPES);
  }
  try {
    return JSON.parse(text);
  } catch (err) {
    throw badRequest(`the object provided is unrecognized (must be of type ${kind}): couldn't get version/kind; json parse error: ${(err as Error).message}`);
  }
}

function dryRunOf(query: URLSearchParams): boolean {
  const values = query.getAll('dryRun');
  for (const v of values) {
    if (v !== 'All') throw invalidQuery('dryRun', v, 'supported values: "All"');
  }
  return values.length > 0;
}

function invalidQuery(field: string, value: string, detail: string): ApiError {
  return badRequest(`${field}: Unsupported value: ${JSON.stringify(value)}: ${detail}`);
}

function integerParam(query: URLSearchParams, name: string): number | undefined {
  const raw = query.get(name);
  if (raw === null || raw === '') return undefined;
  if (!/^-?\d+$/.test(raw)) throw badRequest(`${name}: Invalid value: ${JSON.stringify(raw)}: must be an integer`);
  return Number(raw);
}

function booleanParam(query: URLSearchParams, name: string): boolean | undefined {
  const raw = query.get(name);
  if (raw === null || raw === '') return undefined;
  return raw === 'true' || raw === '1';
}

export class ApiServer {
  constructor(private readonly ctx: ApiServerContext) {}

  /** The request listener for `http.createServer`. */
  readonly listener = (req: IncomingMessage, res: ServerResponse): void => {
    res.on('error', () => undefined);
    this.handle(req, res).catch((err) => sendError(res, err));
  };

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://embedded');
    const query = url.searchParams;
    const pretty = query.get('pretty') === 'true';
    const method = (req.method ?? 'GET').toUpperCase();
    const pathname = url.pathname.length > 1 ? url.pathname.replace(/\/+$/, '') : url.pathname;
    const direct = this.serveNonResource(method, pathname);
    if (direct) {
      if (direct.code === 200 && typeof direct.body === 'string') {
        res.writeHead(200, { 'Content-Type': 'text/plain; charset=utf-8' });
        res.end(direct.body);
      } else {
        sendJson(res, direct.code, direct.body, pretty);
      }
      return;
    }
    let parsed: ApiPath | undefined;
    try {
      parsed = parseApiPath(pathname);
    } catch {
      parsed = undefined; // malformed percent-encoding
    }
    const path = parsed;
    if (!path) throw pathNotFound();
    const def = this.ctx.registry.lookup(path.group, path.version, path.resource);
    if (!def) throw pathNotFound();
    if (!def.namespaced && path.namespace !== undefined) throw pathNotFound();
    if (def.namespaced && path.name !== undefined && path.namespace === undefined) throw pathNotFound();
    if (path.subresource !== undefined && !def.subresources.includes(path.subresource)) throw pathNotFound();
    const scope: Scope = { def, version: path.version, namespace: def.namespaced ? path.namespace : undefined };
    const verb = requestVerb(method, path, query);
    const subresource = path.subresource as 'status' | undefined;
    const name = path.name;
    const ops = this.ctx.ops;
    let result: Result;
    switch (verb) {
      case 'get':
        result = ops.get(scope, name!);
        break;
      case 'list':
        if (subresource) throw methodNotAllowed();
        result = ops.list(scope, {
          labelSelector: query.get('labelSelector'),
          fieldSelector: query.get('fieldSelector'),
          limit: integerParam(query, 'limit'),
          continueToken: query.get('continue'),
          resourceVersion: query.get('resourceVersion'),
        });
        break;
      case 'watch':
        if (subresource) throw methodNotAllowed();
        this.serveWatch(scope, name, query, res);
        return;
      case 'create': {
        if (subresource || name !== undefined) throw methodNotAllowed();
        if (def.namespaced && scope.namespace === undefined) throw methodNotAllowed();
        const body = decodeBody(await readBody(req), mediaType(req), def.kind);
        result = ops.create(scope, body, { dryRun: dryRunOf(query) });
        break;
      }
      case 'update': {
        if (name === undefined) throw methodNotAllowed();
        const body = decodeBody(await readBody(req), mediaType(req), def.kind);
        result = ops.update(scope, name, body, subresource, { dryRun: dryRunOf(query) });
        break;
      }
      case 'patch': {
        if (name === undefined) throw methodNotAllowed();
        const text = await readBody(req);
        result = ops.patch(scope, name, mediaType(req), text, subresource, { dryRun: dryRunOf(query) });
        break;
      }
      case 'delete': {
        if (subresource) throw methodNotAllowed();
        const options = this.deleteOptions(await readBody(req), query);
        result = ops.delete(scope, name!, options);
        break;
      }
      case 'deletecollection': {
        if (!def.verbs.includes('deletecollection')) throw methodNotAllowed();
        const options = this.deleteOptions(await readBody(req), query);
        result = ops.deleteCollection(scope, { labelSelector: query.get('labelSelector'), fieldSelector: query.get('fieldSelector') }, options);
        break;
      }
      default:
        throw methodNotAllowed();
    }
    sendJson(res, result.code, result.body, pretty);
  }

  private serveNonResource(method: string, pathname: string): { code: number; body: unknown } | undefined {
    const segs = pathname.split('/').filter(Boolean);
    const { registry } = this.ctx;
    const isDiscovery =
      pathname === '/version' ||
      pathname === '/healthz' ||
      pathname === '/livez' ||
      pathname === '/readyz' ||
      pathname === '/api' ||
      pathname === '/apis' ||
      (segs[0] === 'api' && segs.length === 2) ||
      (segs[0] === 'apis' && (segs.length === 2 || segs.length === 3));
    if (!isDiscovery) return undefined;
    if (method !== 'GET' && method !== 'HEAD') return { code: 405, body: methodNotAllowed().toStatus() };
    const notFound = { code: 404, body: pathNotFound().toStatus() };
    switch (pathname) {
      case '/version':
        return { code: 200, body: versionInfo() };
      case '/healthz':
      case '/livez':
      case '/readyz':
        return { code: 200, body: 'ok' };
      case '/api':
        return { code: 200, body: apiVersions(this.ctx.serverAddress()) };
      case '/apis':
        return { code: 200, body: apiGroupList(registry) };
    }
    if (segs[0] === 'api') {
      const doc = apiResourceList(registry, '', segs[1]!);
      return doc ? { code: 200, body: doc } : notFound;
    }
    if (segs.length === 2) {
      const doc = apiGroupDocument(registry, segs[1]!);
      return doc ? { code: 200, body: doc } : notFound;
    }
    const doc = apiResourceList(registry, segs[1]!, segs[2]!);
    return doc ? { code: 200, body: doc } : notFound;
  }

  private deleteOptions(text: string, query: URLSearchParams): DeleteOptions {
    const options: DeleteOptions = { dryRun: dryRunOf(query) };
    if (text.trim() === '') return options;
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch (err) {
      throw badRequest(`the object provided is unrecognized (must be of type DeleteOptions): couldn't get version/kind; json parse error: ${(err as Error).message}`);
    }
    if (!isObject(body)) throw badRequest('the object provided is unrecognized (must be of type DeleteOptions)');
    if (Array.isArray(body.dryRun)) {
      for (const v of body.dryRun) if (v !== 'All') throw invalidQuery('dryRun', String(v), 'supported values: "All"');
      if (body.dryRun.length > 0) options.dryRun = true;
    }
    if (isObject(body.preconditions)) {
      const pre = body.preconditions;
      options.preconditions = {};
      if (typeof pre.uid === 'string') options.preconditions.uid = pre.uid;
      if (typeof pre.resourceVersion === 'string') options.preconditions.resourceVersion = pre.resourceVersion;
    }
    return options;
  }

  private serveWatch(scope: Scope, name: string | undefined, query: URLSearchParams, res: ServerResponse): void {
    const { def } = scope;
    const selection = parseSelection(def, query.get('labelSelector'), query.get('fieldSelector'));
    const resourceVersion = parseResourceVersion(query.get('resourceVersion'));
    const allowBookmarks = booleanParam(query, 'allowWatchBookmarks') ?? false;
    const sendInitialEvents = booleanParam(query, 'sendInitialEvents');
    const timeoutSeconds = integerParam(query, 'timeoutSeconds');
    if (sendInitialEvents !== undefined) {
      const errors = [];
      if (query.get('resourceVersionMatch') !== 'NotOlderThan') {
        errors.push({ type: 'Forbidden' as const, field: 'resourceVersionMatch', detail: 'sendInitialEvents requires setting resourceVersionMatch to NotOlderThan' });
      }
      if (sendInitialEvents && !allowBookmarks) {
        errors.push({ type: 'Forbidden' as const, field: 'allowWatchBookmarks', detail: 'allowWatchBookmarks must be set to true when sendInitialEvents is true' });
      }
      if (errors.length > 0) throw invalid('ListOptions', 'meta.k8s.io', '', errors);
    }
    this.ctx.watches.open({ scope, name, selection, resourceVersion, allowBookmarks, timeoutSeconds, sendInitialEvents }, res);
  }
}
