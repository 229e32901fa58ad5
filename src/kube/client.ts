/**
 * kperturb's own small Kubernetes REST client: used by the workload runner, the cluster recorder and
 * the coordinator (never by the controller under test, which brings its own client). JSON only.
 */
import http from 'node:http';
import https from 'node:https';
import { formatApiPath, splitApiVersion } from '../model/api-path.js';
import { formatKey, isObject, parseKey, type KubeObject, type ObjectKey } from '../model/object-key.js';
import { ResourceMapper, type ResourceInfo } from './discovery.js';
import { kubeconfigYaml } from './kubeconfig.js';
import { tokenPathPrefix } from './bearer-auth.js';
import { releasesServing } from '../model/kube-version.js';

export interface KubeClientOptions {
  caPem?: string;
  token?: string;
  /** Client certificate and key (PEM) for servers that authenticate by certificate. */
  clientCertPem?: string;
  clientKeyPem?: string;
  /** Per-request timeout for non-watch requests (ms). */
  timeoutMs?: number;
}

export interface KubeResponse {
  status: number;
  body: unknown;
}

export type PatchType = 'merge' | 'json' | 'strategic';
const PATCH_CONTENT_TYPES: Record<PatchType, string> = {
  merge: 'application/merge-patch+json',
  json: 'application/json-patch+json',
  strategic: 'application/strategic-merge-patch+json',
};

export class KubeApiError extends Error {
  constructor(
    readonly status: number,
    readonly body: unknown,
    what: string,
  ) {
    const reason = isObject(body) && typeof body.message === 'string' ? body.message : JSON.stringify(body);
    super(`${what}: HTTP ${status}: ${reason}`);
    this.name = 'KubeApiError';
  }
}

export interface WatchHandle {
  stop(): void;
  /** Resolves when the stream has ended (server close, error or stop()), with the HTTP status (0: no answer). */
  done: Promise<{ status: number }>;
}

export class KubeClient {
  readonly resources: ResourceMapper;
  private readonly url: URL;
  private readonly agent: http.Agent;

  constructor(
    readonly server: string,
    private readonly options: KubeClientOptions = {},
  ) {
    this.url = new URL(server);
    this.agent =
      this.url.protocol === 'https:'
        ? new https.Agent({ keepAlive: true, ca: options.caPem, cert: options.clientCertPem, key: options.clientKeyPem })
        : new http.Agent({ keepAlive: true });
    this.resources = new ResourceMapper((path) => this.request('GET', path));
  }

  close(): void {
    this.agent.destroy();
  }

  /**
   * A kubeconfig that reaches the same server with the same credentials (for processes kperturb runs).
   * Over plain HTTP the token also goes into the server's path, as the embedded cluster's own
   * kubeconfig has it: client-go sends no token over plain HTTP.
   */
  kubeconfig(): string {
    const { caPem, token, clientCertPem, clientKeyPem } = this.options;
    const server = token && this.url.protocol === 'http:' ? this.server.replace(/\/+$/, '') + tokenPathPrefix(token) : this.server;
    return kubeconfigYaml(server, {
      ...(caPem ? { caPem } : {}),
      ...(token ? { token } : {}),
      ...(clientCertPem && clientKeyPem ? { clientCertPem, clientKeyPem } : {}),
    });
  }

  private headers(extra: Record<string, string> = {}): Record<string, string> {
    const h: Record<string, string> = { Accept: 'application/json', ...extra };
    if (this.options.token) h.Authorization = `Bearer ${this.options.token}`;
    return h;
  }

  private pathWithQuery(path: string, query?: Record<string, string>): string {
    const q = query && Object.keys(query).length > 0 ? '?' + new URLSearchParams(query).toString() : '';
    return path + q;
  }

  request(method: string, path: string, opts: { query?: Record<string, string>; body?: unknown; contentType?: string } = {}): Promise<KubeResponse> {
    const mod = this.url.protocol === 'https:' ? https : http;
    const payload = opts.body === undefined ? undefined : Buffer.from(JSON.stringify(opts.body));
    // Content-Length always: Node sends a DELETE body without it and unchunked, so the server takes
    // the body for the next request on the connection (400) and the DELETE goes without its options.
    const headers = this.headers(payload ? { 'Content-Type': opts.contentType ?? 'application/json', 'Content-Length': String(payload.length) } : {});
    return new Promise((resolve, reject) => {
      const req = mod.request(
        {
          protocol: this.url.protocol,
          hostname: this.url.hostname,
          port: this.url.port,
          method,
          path: this.pathWithQuery(path, opts.query),
          headers,
          agent: this.agent,
          timeout: this.options.timeoutMs ?? 30_000,
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () => {
            const text = Buffer.concat(chunks).toString('utf8');
            let body: unknown = text;
            try {
              body = text ? JSON.parse(text) : undefined;
            } catch {
              /* not JSON: keep the text */
            }
            resolve({ status: res.statusCode ?? 0, body });
          });
          res.on('error', reject);
        },
      );
      req.on('timeout', () => req.destroy(new Error(`${method} ${path}: timed out`)));
      req.on('error', reject);
      req.end(payload);
    });
  }

  /** Resolves a kind to its resource, failing clearly if the cluster does not serve it. */
  async resolveKind(kind: string, apiVersion?: string): Promise<ResourceInfo> {
    const info = await this.resources.byKind(kind, apiVersion);
    if (!info) {
      const hint = apiVersion ? releasesServing(kind, apiVersion) : undefined;
      throw new Error(
        `the cluster serves no kind ${kind}${apiVersion ? ` in ${apiVersion}` : ''}${hint ? `; ${hint} (the embedded cluster emulates a release with cluster.kubernetesVersion in kperturb.yaml, or --kubernetes-version for kperturb cluster)` : ''}`,
      );
    }
    return info;
  }

  async pathForKey(key: ObjectKey, subresource?: string): Promise<string> {
    const parts = parseKey(key);
    if (!parts) throw new Error(`not an object key: ${key}`);
    const info = await this.resolveKind(parts.kind);
    return formatApiPath({
      group: info.group,
      version: info.version,
      resource: info.resource,
      name: parts.name,
      ...(info.namespaced ? { namespace: parts.namespace ?? 'default' } : {}),
      ...(subresource ? { subresource } : {}),
    });
  }

  async get(key: ObjectKey): Promise<KubeObject | undefined> {
    const res = await this.request('GET', await this.pathForKey(key));
    if (res.status === 404) return undefined;
    if (res.status !== 200) throw new KubeApiError(res.status, res.body, `get ${key}`);
    return res.body as KubeObject;
  }

  /** Client-side apply: create the object, or merge-patch it onto the existing one. */
  async apply(obj: KubeObject): Promise<KubeObject> {
    if (!obj.apiVersion || !obj.kind || !obj.metadata?.name) {
      throw new Error('a manifest needs apiVersion, kind and metadata.name');
    }
    const info = await this.resolveKind(obj.kind, obj.apiVersion);
    const { group, version } = splitApiVersion(obj.apiVersion);
    const namespace = info.namespaced ? (obj.metadata.namespace ?? 'default') : undefined;
    const body = namespace ? { ...obj, metadata: { ...obj.metadata, namespace } } : obj;
    const collection = formatApiPath({ group, version, resource: info.resource, ...(namespace ? { namespace } : {}) });
    const created = await this.request('POST', collection, { body });
    if (created.status === 201 || created.status === 200) return created.body as KubeObject;
    if (created.status !== 409) throw new KubeApiError(created.status, created.body, `create ${obj.kind} ${obj.metadata.name}`);
    const patched = await this.request('PATCH', `${collection}/${encodeURIComponent(obj.metadata.name)}`, {
      body,
      contentType: PATCH_CONTENT_TYPES.merge,
    });
    if (patched.status !== 200) throw new KubeApiError(patched.status, patched.body, `patch ${obj.kind} ${obj.metadata.name}`);
    return patched.body as KubeObject;
  }

  async patch(key: ObjectKey, type: PatchType, patch: unknown, subresource?: string): Promise<KubeObject> {
    const res = await this.request('PATCH', await this.pathForKey(key, subresource), {
      body: patch,
      contentType: PATCH_CONTENT_TYPES[type],
    });
    if (res.status !== 200) throw new KubeApiError(res.status, res.body, `patch ${key}`);
    return res.body as KubeObject;
  }

  /** Deletes an object; true if it existed. */
  async delete(key: ObjectKey, propagationPolicy?: string): Promise<boolean> {
    const query: Record<string, string> = propagationPolicy ? { propagationPolicy } : {};
    const res = await this.request('DELETE', await this.pathForKey(key), { query });
    if (res.status === 404) return false;
    if (res.status !== 200 && res.status !== 202) throw new KubeApiError(res.status, res.body, `delete ${key}`);
    return true;
  }

  /** Lists a resource in all namespaces; items get kind/apiVersion filled in. */
  async list(info: ResourceInfo): Promise<{ items: KubeObject[]; resourceVersion: string }> {
    const path = formatApiPath({ group: info.group, version: info.version, resource: info.resource });
    const res = await this.request('GET', path);
    if (res.status !== 200 || !isObject(res.body)) throw new KubeApiError(res.status, res.body, `list ${info.resource}`);
    const apiVersion = info.group ? `${info.group}/${info.version}` : info.version;
    const items = (Array.isArray(res.body.items) ? res.body.items : []).map((item) => ({
      ...(item as KubeObject),
      kind: info.kind,
      apiVersion,
    })) as KubeObject[];
    const md = res.body.metadata;
    const resourceVersion = isObject(md) && typeof md.resourceVersion === 'string' ? md.resourceVersion : '';
    return { items, resourceVersion };
  }

  /**
   * Opens a watch and calls `onEvent` for each event line. Ends on server close, error or stop();
   * `done` resolves then (it never rejects: callers decide whether to re-watch).
   */
  watch(path: string, query: Record<string, string>, onEvent: (type: string, object: KubeObject) => void): WatchHandle {
    const mod = this.url.protocol === 'https:' ? https : http;
    let req: http.ClientRequest | undefined;
    const done = new Promise<{ status: number }>((resolveDone) => {
      let status = 0;
      const resolve = () => resolveDone({ status });
      req = mod.request(
        {
          protocol: this.url.protocol,
          hostname: this.url.hostname,
          port: this.url.port,
          method: 'GET',
          path: this.pathWithQuery(path, { ...query, watch: 'true' }),
          headers: this.headers(),
          agent: false,
          ca: this.options.caPem,
          cert: this.options.clientCertPem,
          key: this.options.clientKeyPem,
        },
        (res) => {
          status = res.statusCode ?? 0;
          if (res.statusCode !== 200) {
            res.resume();
            res.on('end', resolve);
            return;
          }
          let buffered = '';
          res.setEncoding('utf8');
          res.on('data', (chunk: string) => {
            buffered += chunk;
            let nl: number;
            while ((nl = buffered.indexOf('\n')) >= 0) {
              const line = buffered.slice(0, nl).trim();
              buffered = buffered.slice(nl + 1);
              if (!line) continue;
              try {
                const ev = JSON.parse(line) as { type?: string; object?: KubeObject };
                if (typeof ev.type === 'string' && ev.object) onEvent(ev.type, ev.object);
              } catch {
                /* a torn line would be a server bug; skip it rather than kill the recorder */
              }
            }
          });
          res.on('end', resolve);
          res.on('error', () => resolve());
          res.on('close', () => resolve());
        },
      );
      req.on('error', () => resolve());
      req.end();
    });
    return { stop: () => req?.destroy(), done };
  }
}

export function keyOfListed(obj: KubeObject, info: ResourceInfo): ObjectKey {
  return formatKey(info.kind, info.namespaced ? obj.metadata?.namespace : undefined, obj.metadata?.name ?? '');
}
