/**
 * HTTP front of the embedded API server: routes a request to discovery, OpenAPI, a verb of
 * `Operations`, a subresource, or a watch; decodes bodies and encodes answers (JSON; YAML request bodies
 * are accepted too). Every failure becomes a metav1.Status response; nothing a client sends can crash
 * the process.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { parse as parseYaml } from 'yaml';
import { parseApiPath, requestVerb, type ApiPath } from '../model/api-path.js';
import { boolParam, integerParam, optionalBoolParam, prettyPrint, QueryParamError } from '../model/query-params.js';
import { isObject, type KubeObject } from '../model/object-key.js';
import {
  ApiError,
  GoValue,
  badRequest,
  internalError,
  invalid,
  methodNotAllowed,
  pathNotFound,
  requestEntityTooLarge,
  unsupportedMediaType,
  type FieldError,
} from './api-error.js';
import { aggregatedDiscovery, apiGroupDocument, apiGroupList, apiResourceList, apiVersions, versionInfo, wantsAggregatedDiscovery } from './discovery.js';
import { encodeOpenApiV2Document } from './openapi-v2-proto.js';
import { OPENAPI_V2_PROTOBUF_CONTENT_TYPE, openApiV2Document, openApiV2ETag, openApiV2Form, openApiV3Document, openApiV3Root } from './openapi.js';
import { tableRequestOf, toTable, type TableRequest } from './table.js';
import {
  DEFAULT_FIELD_MANAGER,
  Operations,
  checkPropagationPolicy,
  parseDeleteOptionsBody,
  parseResourceVersion,
  parseSelection,
  type DeleteOptions,
  type FieldValidation,
  type PatchOptions,
  type Result,
  type Scope,
  type WriteOptions,
} from './operations.js';
import type { ResourceRegistry } from './registry.js';
import type { AdmissionOperation, AdmissionWebhooks } from './admission-webhooks.js';
import type { WatchHub } from './watch.js';
import { servesAggregatedDiscovery } from './kube-version.js';
import { type KubernetesVersion } from '../model/kube-version.js';
import { KUBERNETES_PROTOBUF_MEDIA_TYPE } from '../wire/index.js';
import { decodeProtobufRequestBody } from './protobuf-body.js';
import { podStreamingTarget, type PodLookupResult, type PodStreaming } from '../streaming/pod-streaming.js';
import type { Duplex } from 'node:stream';

/** kube-apiserver's MaxRequestBodyBytes: larger write bodies get 413 before they are decoded. */
export const MAX_BODY_BYTES = 3 * 1024 * 1024;
const BODY_MEDIA_TYPES = ['application/json', 'application/yaml'];

export interface ApiServerContext {
  registry: ResourceRegistry;
  ops: Operations;
  watches: WatchHub;
  /** host:port clients reach the server at (for /api's serverAddressByClientCIDRs). */
  serverAddress(): string;
  /** pods/exec, attach, log, portforward (src/streaming), answered from the exec/log rules. */
  podStreaming: PodStreaming;
  /** The emulated release: /version, and whether aggregated discovery is answered. Default the newest. */
  kubernetesVersion?: KubernetesVersion;
  /** The WatchList feature gate: whether a watch may ask for `sendInitialEvents`. */
  watchList?: boolean;
  /** Validating admission webhooks (admission-webhooks.ts). */
  admission?: AdmissionWebhooks;
}

function mediaType(req: IncomingMessage): string {
  return (req.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
}

function readBody(req: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const declared = Number(req.headers['content-length'] ?? NaN);
    if (Number.isFinite(declared) && declared > MAX_BODY_BYTES) {
      req.resume();
      reject(requestEntityTooLarge(MAX_BODY_BYTES));
      return;
    }
    const chunks: Buffer[] = [];
    let size = 0;
    let failed = false;
    req.on('data', (chunk: Buffer) => {
      if (failed) return;
      size += chunk.length;
      if (size > MAX_BODY_BYTES) {
        failed = true;
        chunks.length = 0;
        reject(requestEntityTooLarge(MAX_BODY_BYTES));
        return;
      }
      chunks.push(chunk);
    });
    req.on('end', () => {
      if (!failed) resolve(Buffer.concat(chunks));
    });
    req.on('error', (err) => {
      if (!failed) reject(err);
      failed = true;
    });
  });
}

function sendJson(res: ServerResponse, code: number, body: unknown, pretty: boolean, contentType = 'application/json'): void {
  if (res.headersSent || res.destroyed) return;
  const text = pretty ? JSON.stringify(body, null, 2) + '\n' : JSON.stringify(body);
  res.writeHead(code, { 'Content-Type': contentType, 'Content-Length': Buffer.byteLength(text), 'Cache-Control': 'no-cache, private' });
  res.end(text);
}

export function sendError(res: ServerResponse, err: unknown): void {
  // A query value its option cannot hold: kube-apiserver's parameter codec fails the request with strconv's error.
  const apiError =
    err instanceof ApiError ? err : err instanceof QueryParamError ? badRequest(err.message) : internalError(err instanceof Error ? err.message : String(err));
  if (res.headersSent) {
    // Too late for a status line (a watch already streaming): end the stream.
    if (!res.writableEnded) res.end();
    return;
  }
  sendJson(res, apiError.code, apiError.toStatus(), false);
}

/**
 * Decodes a write body by its media type. JSON and YAML here; protobuf bodies
 * (`application/vnd.kubernetes.protobuf`) are decoded by src/wire/ (protobuf-body.ts), which plugs in as
 * one more branch.
 */
export function decodeBody(raw: Buffer, contentType: string, kind: string): unknown {
  if (contentType === KUBERNETES_PROTOBUF_MEDIA_TYPE) return decodeProtobufRequestBody(raw, kind);
  const text = raw.toString('utf8');
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

/** The options kind kube-apiserver decodes a write's query into, by method: its name is in a refusal. */
type WriteOptionsKind = 'CreateOptions' | 'UpdateOptions' | 'PatchOptions' | 'DeleteOptions';
const OPTIONS_KIND_OF_METHOD: Readonly<Record<string, WriteOptionsKind>> = {
  POST: 'CreateOptions',
  PUT: 'UpdateOptions',
  PATCH: 'PatchOptions',
  DELETE: 'DeleteOptions',
};

/**
 * `dryRun` (a list): every value must be "All", else 422 as apimachinery's ValidateDryRun words it,
 * the whole list as Go's %#v prints a []string.
 */
function dryRunOf(query: URLSearchParams, kind: WriteOptionsKind): boolean {
  const values = query.getAll('dryRun');
  if (values.some((v) => v !== 'All')) {
    const list = `[]string{${values.map((v) => JSON.stringify(v)).join(', ')}}`;
    throw invalid(kind, 'meta.k8s.io', '', [{ type: 'NotSupported', field: 'dryRun', value: new GoValue(list), detail: 'supported values: "All"' }]);
  }
  return values.length > 0;
}

/**
 * A list or watch's ListOptions, decoded as kube-apiserver's parameter codec decodes them (field by
 * field in ListOptions' order, so the first bad integer names the error) for both verbs alike: a list
 * with a bad timeoutSeconds fails as a watch with one does.
 */
function listOptionsOf(query: URLSearchParams) {
  const timeoutSeconds = integerParam(query, 'timeoutSeconds');
  const limit = integerParam(query, 'limit');
  return {
    labelSelector: query.get('labelSelector'),
    fieldSelector: query.get('fieldSelector'),
    allowWatchBookmarks: boolParam(query, 'allowWatchBookmarks'),
    resourceVersion: query.get('resourceVersion'),
    resourceVersionMatch: query.get('resourceVersionMatch'),
    timeoutSeconds,
    limit,
    continueToken: query.get('continue'),
    sendInitialEvents: optionalBoolParam(query, 'sendInitialEvents'),
  };
}
type ListQuery = ReturnType<typeof listOptionsOf>;

/** The field manager: `fieldManager=`, else the User-Agent up to its first '/', as kube-apiserver derives it. */
function fieldManagerOf(req: IncomingMessage, query: URLSearchParams, required: boolean): string | undefined {
  const explicit = query.get('fieldManager');
  if (explicit !== null && explicit !== '') {
    if (explicit.length > 128) {
      throw invalid('PatchOptions', 'meta.k8s.io', '', [{ type: 'TooLong', field: 'fieldManager', detail: 'may not be more than 128 characters' }]);
    }
    return explicit;
  }
  if (required) return undefined;
  const agent = req.headers['user-agent'];
  const prefix = typeof agent === 'string' ? agent.split('/')[0]!.slice(0, 128) : '';
  return prefix || DEFAULT_FIELD_MANAGER;
}

/**
 * `fieldValidation=`; undefined when unset, which operations.ts treats as kube-apiserver's default, Warn
 * (built-in kinds then skip the unknown-field check, see checkBuiltinFields).
 */
function checkFieldValidation(query: URLSearchParams): FieldValidation | undefined {
  const v = query.get('fieldValidation');
  if (v === null || v === '') return undefined;
  if (v !== 'Ignore' && v !== 'Warn' && v !== 'Strict') {
    throw badRequest(`fieldValidation: Unsupported value: ${JSON.stringify(v)}: supported values: "Ignore", "Strict", "Warn"`);
  }
  return v;
}

/** A `Warning` header value as k8s.io/apimachinery/pkg/util/net.NewWarningHeader writes it: `299 - "text"`. */
function warningHeader(text: string): string {
  return `299 - "${text.replace(/["\\]/g, (c) => `\\${c}`)}"`;
}

type Subresource = 'status' | 'scale' | 'binding' | 'eviction' | 'finalize';

export class ApiServer {
  constructor(private readonly ctx: ApiServerContext) {}

  /** The request listener for `http.createServer`. */
  readonly listener = (req: IncomingMessage, res: ServerResponse): void => {
    res.on('error', () => undefined);
    this.handle(req, res).catch((err) => {
      req.resume();
      sendError(res, err);
    });
  };

  /**
   * The listener for the server's `upgrade` event: exec and attach (SPDY or WebSocket); anything else
   * that asks for an upgrade (port-forward too) is refused with a Status.
   */
  readonly upgradeListener = (req: IncomingMessage, socket: Duplex, head: Buffer): void => {
    socket.on('error', () => undefined);
    const target = podStreamingTarget(new URL(req.url ?? '/', 'http://embedded').pathname);
    if (!target) {
      const body = JSON.stringify(badRequest('this server upgrades only pods/exec and pods/attach requests').toStatus());
      socket.end(
        `HTTP/1.1 400 Bad Request\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
      );
      return;
    }
    this.ctx.podStreaming.upgrade(req, socket, head, target, () => undefined).catch(() => socket.destroy());
  };

  /** A pod as pods/exec and friends see it: the stored object, or the 404 Status. */
  readonly lookupPod = async (namespace: string, name: string): Promise<PodLookupResult> => {
    const def = this.ctx.registry.get({ group: '', resource: 'pods' });
    if (!def) return { status: 404, body: pathNotFound().toStatus() };
    try {
      const found = this.ctx.ops.get({ def, version: 'v1', namespace }, name);
      return { pod: found.body as KubeObject };
    } catch (err) {
      const apiError = err instanceof ApiError ? err : internalError(String(err));
      return { status: apiError.code, body: apiError.toStatus() };
    }
  };

  /** The Node, for pods/exec (pod-streaming.ts); undefined when there is none. */
  readonly lookupNode = (name: string): Promise<KubeObject | undefined> => {
    const def = this.ctx.registry.get({ group: '', resource: 'nodes' });
    if (!def) return Promise.resolve(undefined);
    try {
      return Promise.resolve(this.ctx.ops.get({ def, version: 'v1' }, name).body as KubeObject);
    } catch {
      return Promise.resolve(undefined);
    }
  };

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://embedded');
    const streamingTarget = podStreamingTarget(url.pathname);
    if (streamingTarget) {
      await this.ctx.podStreaming.answer((req.method ?? 'GET').toUpperCase(), req.url ?? '/', res, streamingTarget);
      return;
    }
    const query = url.searchParams;
    const pretty = prettyPrint(query, req.headers['user-agent']);
    const method = (req.method ?? 'GET').toUpperCase();
    const pathname = url.pathname.length > 1 ? url.pathname.replace(/\/+$/, '') : url.pathname;
    if (this.serveNonResource(req, res, method, pathname, pretty)) return;
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
    const subresource = path.subresource as Subresource | undefined;
    const name = path.name;
    const ops = this.ctx.ops;
    const fieldValidation = checkFieldValidation(query);
    const writeOptions = (): WriteOptions => ({
      dryRun: dryRunOf(query, OPTIONS_KIND_OF_METHOD[method] ?? 'CreateOptions'),
      fieldManager: fieldManagerOf(req, query, false),
      fieldValidation,
    });
    const body = async (kind: string): Promise<unknown> => decodeBody(await readBody(req), mediaType(req), kind);
    let result: Result;
    if (subresource !== undefined && subresource !== 'status') {
      result = await this.serveSubresource(method, scope, name!, subresource, req, query, writeOptions);
      sendJson(res, result.code, result.body, pretty);
      return;
    }
    const verb = requestVerb(method, path, query);
    switch (verb) {
      case 'get':
        result = ops.get(scope, name!, query.get('resourceVersion'));
        break;
      case 'list': {
        if (subresource) throw methodNotAllowed();
        const { labelSelector, fieldSelector, limit, continueToken, resourceVersion, resourceVersionMatch } = listOptionsOf(query);
        result = ops.list(scope, { labelSelector, fieldSelector, limit, continueToken, resourceVersion, resourceVersionMatch });
        break;
      }
      case 'watch':
        if (subresource) throw methodNotAllowed();
        this.serveWatch(scope, name, listOptionsOf(query), res, tableRequestOf(req.headers.accept, query.get('includeObject')));
        return;
      case 'create': {
        if (subresource || name !== undefined) throw methodNotAllowed();
        if (def.namespaced && scope.namespace === undefined) throw methodNotAllowed();
        const review = def.strategy.review;
        if (review) {
          // The answer does not depend on the request (everything is allowed), so a protobuf body (kubectl
          // auth can-i sends one) is not decoded: only JSON and YAML specs are echoed back.
          const raw = await readBody(req);
          const sent = mediaType(req) === KUBERNETES_PROTOBUF_MEDIA_TYPE ? {} : decodeBody(raw, mediaType(req), def.kind);
          if (!isObject(sent)) throw badRequest(`the object provided is unrecognized (must be of type ${def.kind})`);
          result = {
            code: 201,
            body: {
              ...sent,
              kind: def.kind,
              apiVersion: `${def.group}/${path.version}`,
              metadata: isObject(sent.metadata) ? sent.metadata : {},
              status: review(sent as KubeObject),
            } as KubeObject,
          };
          break;
        }
        const sent = await body(def.kind);
        const options = writeOptions();
        result = await this.admitted(scope, undefined, undefined, 'CREATE', options.dryRun === true, (dryRun) =>
          ops.create(scope, dryRun ? structuredClone(sent) : sent, { ...options, dryRun }),
        );
        break;
      }
      case 'update': {
        if (name === undefined) throw methodNotAllowed();
        const sent = await body(def.kind);
        const options = writeOptions();
        result = await this.admitted(scope, name, subresource, 'UPDATE', options.dryRun === true, (dryRun) =>
          ops.update(scope, name, dryRun ? structuredClone(sent) : sent, subresource, { ...options, dryRun }),
        );
        break;
      }
      case 'patch': {
        if (name === undefined) throw methodNotAllowed();
        const raw = (await readBody(req)).toString('utf8');
        const isApply = mediaType(req) === 'application/apply-patch+yaml';
        const options: PatchOptions = {
          dryRun: dryRunOf(query, 'PatchOptions'),
          fieldManager: fieldManagerOf(req, query, isApply),
          force: optionalBoolParam(query, 'force') ?? false,
          fieldValidation,
        };
        if (!isApply && query.get('force') !== null) {
          throw invalid('PatchOptions', 'meta.k8s.io', '', [{ type: 'Forbidden', field: 'force', detail: 'may not be specified for non-apply patch' }]);
        }
        const type = mediaType(req);
        result = await this.admitted(scope, name, subresource, 'UPDATE', options.dryRun === true, (dryRun) =>
          ops.patch(scope, name, type, raw, subresource, { ...options, dryRun }),
        );
        break;
      }
      case 'delete': {
        if (subresource) throw methodNotAllowed();
        if (!def.verbs.includes('delete')) throw methodNotAllowed();
        const options = this.deleteOptions(await readBody(req), query, req);
        result = await this.admitted(scope, name, undefined, 'DELETE', options.dryRun === true, () => ops.delete(scope, name!, options));
        break;
      }
      case 'deletecollection': {
        if (!def.verbs.includes('deletecollection')) throw methodNotAllowed();
        const options = this.deleteOptions(await readBody(req), query, req);
        result = ops.deleteCollection(scope, { labelSelector: query.get('labelSelector'), fieldSelector: query.get('fieldSelector') }, options);
        break;
      }
      default:
        throw methodNotAllowed();
    }
    if (result.warnings) res.setHeader('Warning', result.warnings.map(warningHeader));
    // kubectl get asks for a Table; reads answer one, writes and errors stay objects as in Kubernetes.
    const table = (verb === 'get' || verb === 'list') && result.code === 200 ? tableRequestOf(req.headers.accept, query.get('includeObject')) : undefined;
    if (table) {
      sendJson(res, 200, toTable(def, path.version, result.body as KubeObject, table), pretty);
      return;
    }
    sendJson(res, result.code, result.body, pretty);
  }

  /**
   * A write the validating admission webhooks see first (admission-webhooks.ts): the object they
   * judge is the write's own result, from a dry run of it; then the write. Between the two the
   * object may change (the calls are awaited), as kube-apiserver's admission may run again on a
   * conflict retry: an update's resourceVersion precondition still holds.
   */
  private async admitted(
    scope: Scope,
    name: string | undefined,
    subresource: string | undefined,
    operation: AdmissionOperation,
    dryRun: boolean,
    write: (dryRun: boolean) => Result,
  ): Promise<Result> {
    const admission = this.ctx.admission;
    const attributes = { def: scope.def, version: scope.version, subresource, operation, namespace: scope.namespace, dryRun };
    const candidates = admission?.candidates(attributes) ?? [];
    if (candidates.length === 0) return write(dryRun);
    const current = name === undefined ? undefined : this.ctx.ops.get(scope, name);
    const oldObject = current?.code === 200 ? (current.body as KubeObject) : undefined;
    const object = operation === 'DELETE' ? undefined : (write(true).body as KubeObject);
    const warnings = await admission!.validate(
      { ...attributes, name: name ?? String(object?.metadata?.name ?? ''), object, oldObject: operation === 'CREATE' ? undefined : oldObject },
      candidates,
    );
    const result = write(dryRun);
    return warnings.length === 0 ? result : { ...result, warnings: [...(result.warnings ?? []), ...warnings] };
  }

  private async serveSubresource(
    method: string,
    scope: Scope,
    name: string,
    subresource: Exclude<Subresource, 'status'>,
    req: IncomingMessage,
    query: URLSearchParams,
    writeOptions: () => WriteOptions,
  ): Promise<Result> {
    const ops = this.ctx.ops;
    const body = async (kind: string): Promise<unknown> => decodeBody(await readBody(req), mediaType(req), kind);
    switch (`${subresource} ${method}`) {
      case 'scale GET':
        return ops.getScale(scope, name);
      case 'scale PUT':
        return ops.updateScale(scope, name, await body('Scale'), writeOptions());
      case 'scale PATCH':
        return ops.patchScale(scope, name, mediaType(req), (await readBody(req)).toString('utf8'), writeOptions());
      case 'binding POST':
        return ops.bind(scope, name, await body('Binding'), writeOptions());
      case 'eviction POST': {
        const eviction = await body('Eviction');
        if (isObject(eviction) && isObject(eviction.deleteOptions) && query.getAll('dryRun').length > 0) eviction.deleteOptions.dryRun = ['All'];
        return ops.evict(scope, name, eviction);
      }
      case 'finalize PUT':
        return ops.update(scope, name, await body(scope.def.kind), 'finalize', writeOptions());
      default:
        throw methodNotAllowed();
    }
  }

  /** Discovery, OpenAPI, version and health endpoints; true when the request was answered. */
  private serveNonResource(req: IncomingMessage, res: ServerResponse, method: string, pathname: string, pretty: boolean): boolean {
    const segs = pathname.split('/').filter(Boolean);
    const { registry } = this.ctx;
    const isDiscovery =
      pathname === '/version' ||
      pathname === '/healthz' ||
      pathname === '/livez' ||
      pathname === '/readyz' ||
      pathname === '/api' ||
      pathname === '/apis' ||
      segs[0] === 'openapi' ||
      (segs[0] === 'api' && segs.length === 2) ||
      (segs[0] === 'apis' && (segs.length === 2 || segs.length === 3));
    if (!isDiscovery) return false;
    if (method !== 'GET' && method !== 'HEAD') {
      sendJson(res, 405, methodNotAllowed().toStatus(), pretty);
      return true;
    }
    const send = (body: unknown, contentType?: string): true => {
      if (body === undefined) sendJson(res, 404, pathNotFound().toStatus(), pretty);
      else sendJson(res, 200, body, pretty, contentType);
      return true;
    };
    switch (pathname) {
      case '/version':
        return send(versionInfo(this.ctx.kubernetesVersion));
      case '/healthz':
      case '/livez':
      case '/readyz':
        res.writeHead(200, { 'Content-Type': 'text/plain; charset=utf-8' });
        res.end('ok');
        return true;
      case '/api':
      case '/apis': {
        const release = this.ctx.kubernetesVersion;
        const aggregated = wantsAggregatedDiscovery(req.headers.accept, (v) => !release || servesAggregatedDiscovery(release, v));
        if (aggregated) {
          const doc = aggregatedDiscovery(registry, pathname === '/api' ? 'legacy' : 'apis', aggregated.version);
          res.setHeader('Vary', 'Accept');
          return send(doc, aggregated.contentType);
        }
        return send(pathname === '/api' ? apiVersions(this.ctx.serverAddress()) : apiGroupList(registry));
      }
      case '/openapi/v3':
        return send(openApiV3Root(registry));
      case '/openapi/v2': {
        // As kube-openapi's handler: JSON or gnostic protobuf by Accept (else 406), one ETag for both forms.
        res.setHeader('Vary', 'Accept');
        const form = openApiV2Form(req.headers.accept);
        if (form === undefined) {
          res.writeHead(406);
          res.end();
          return true;
        }
        const doc = openApiV2Document(registry);
        const json = JSON.stringify(doc);
        const etag = openApiV2ETag(json);
        res.setHeader('Etag', etag);
        if (req.headers['if-none-match'] === etag) {
          res.writeHead(304);
          res.end();
          return true;
        }
        if (form === 'json') return send(doc);
        const body = encodeOpenApiV2Document(doc);
        res.writeHead(200, { 'Content-Type': OPENAPI_V2_PROTOBUF_CONTENT_TYPE, 'Content-Length': body.length });
        res.end(body);
        return true;
      }
    }
    if (segs[0] === 'openapi') {
      if (segs[1] === 'v3' && segs.length >= 3) return send(openApiV3Document(registry, segs.slice(2).join('/')));
      return send(undefined);
    }
    if (segs[0] === 'api') return send(apiResourceList(registry, '', segs[1]!));
    if (segs.length === 2) return send(apiGroupDocument(registry, segs[1]!));
    return send(apiResourceList(registry, segs[1]!, segs[2]!));
  }

  private deleteOptions(raw: Buffer, query: URLSearchParams, req: IncomingMessage): DeleteOptions {
    let options: DeleteOptions = {};
    const text = raw.toString('utf8');
    if (text.trim() !== '') {
      const body = decodeBody(raw, mediaType(req) === '' ? 'application/json' : mediaType(req), 'DeleteOptions');
      if (!isObject(body)) throw badRequest('the object provided is unrecognized (must be of type DeleteOptions)');
      options = parseDeleteOptionsBody(body);
    }
    if (dryRunOf(query, 'DeleteOptions')) options.dryRun = true;
    const grace = integerParam(query, 'gracePeriodSeconds');
    if (grace !== undefined) options.gracePeriodSeconds = grace;
    const policy = query.get('propagationPolicy');
    if (policy !== null && policy !== '') options.propagationPolicy = checkPropagationPolicy(policy);
    const orphan = optionalBoolParam(query, 'orphanDependents');
    if (orphan !== undefined) options.orphanDependents = orphan;
    return options;
  }

  private serveWatch(scope: Scope, name: string | undefined, options: ListQuery, res: ServerResponse, table: TableRequest | undefined): void {
    const { def } = scope;
    const selection = parseSelection(def, options.labelSelector, options.fieldSelector);
    const resourceVersion = parseResourceVersion(options.resourceVersion);
    const { allowWatchBookmarks: allowBookmarks, sendInitialEvents, timeoutSeconds, resourceVersionMatch: match } = options;
    // validateWatchOptions (apimachinery's internalversion validation), in its order.
    const errors: FieldError[] = [];
    if (sendInitialEvents !== undefined) {
      if (match !== 'NotOlderThan')
        errors.push({ type: 'Forbidden', field: 'resourceVersionMatch', detail: 'sendInitialEvents requires setting resourceVersionMatch to NotOlderThan' });
      if (!this.ctx.watchList)
        errors.push({
          type: 'Forbidden',
          field: 'sendInitialEvents',
          detail: 'sendInitialEvents is forbidden for watch unless the WatchList feature gate is enabled',
        });
    }
    if (match !== null && match !== undefined && match !== '') {
      if (sendInitialEvents === undefined)
        errors.push({
          type: 'Forbidden',
          field: 'resourceVersionMatch',
          detail: 'resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided',
        });
      if (match !== 'NotOlderThan')
        errors.push({ type: 'NotSupported', field: 'resourceVersionMatch', value: match, detail: 'supported values: "NotOlderThan"' });
      if (options.continueToken)
        errors.push({ type: 'Forbidden', field: 'resourceVersionMatch', detail: 'resourceVersionMatch is forbidden when continue is provided' });
    }
    if (errors.length > 0) throw invalid('ListOptions', 'meta.k8s.io', '', errors);
    this.ctx.watches.open({ scope, name, selection, resourceVersion, allowBookmarks, timeoutSeconds, sendInitialEvents, ...(table ? { table } : {}) }, res);
  }
}
