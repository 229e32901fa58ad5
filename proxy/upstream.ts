/**
 * The proxy's side of the connection to the API server: one agent with the proxy's own upstream
 * credentials, and a register of every upstream request and socket still open, so that nothing
 * outlives the controller request it serves (the leak `http-proxy` has, upstream issue 1586).
 */
import http from 'node:http';
import https from 'node:https';
import type { Socket } from 'node:net';
import { createSecureContext, type SecureContext } from 'node:tls';
import { ResourceMapper, type ResourceInfo } from '../src/kube/discovery.js';
import { ShortLivedSet } from './short-lived-set.js';

export interface UpstreamOptions {
  url: string;
  caPem?: string;
  token?: string;
  /**
   * Where a fresh bearer token comes from when tokens expire (kubeconfig exec plugins, token files).
   * Asked at start, every `tokenRefreshMs` and after the API server answered 401.
   */
  tokenProvider?: () => Promise<string | undefined>;
  tokenRefreshMs?: number;
  clientCertPem?: string;
  clientKeyPem?: string;
}

export class Upstream {
  readonly url: URL;
  /** Maps group/version/resource to kinds through the proxy's own discovery requests. */
  readonly resources: ResourceMapper;
  private readonly agent: http.Agent;
  private readonly secureContext: SecureContext | undefined;
  /** Thousands come and go per second: a ShortLivedSet, see there why not a Set. */
  private readonly openRequests = new ShortLivedSet<http.ClientRequest>();
  private readonly openSockets = new Set<Socket>();
  private readonly lookups = new Map<string, Promise<ResourceInfo | undefined>>();
  /** Resources discovery found (the mapper keeps hits for good too), for lookups without a promise. */
  private readonly known = new Map<string, ResourceInfo>();
  private currentToken: string | undefined;
  private refreshTimer: NodeJS.Timeout | undefined;
  private refreshing: Promise<void> | undefined;

  constructor(readonly options: UpstreamOptions) {
    this.currentToken = options.token;
    if (options.tokenProvider) {
      this.refreshTimer = setInterval(() => void this.refreshToken(), options.tokenRefreshMs ?? 60_000);
      this.refreshTimer.unref();
    }
    this.url = new URL(options.url);
    if (this.url.protocol !== 'http:' && this.url.protocol !== 'https:') {
      throw new Error(`upstream ${options.url}: expected an http:// or https:// URL`);
    }
    // Keep-alive without a socket limit: every watch holds a socket of its own, and requests
    // must never queue behind each other in the proxy (the API server is the one to throttle).
    // One TLS context for every upstream connection: given only `ca`, `cert` and `key`, each new
    // connection (each watch holds one) would parse them into a context of its own, about 0.3 ms.
    this.secureContext =
      this.url.protocol === 'https:' ? createSecureContext({ ca: options.caPem, cert: options.clientCertPem, key: options.clientKeyPem }) : undefined;
    this.agent =
      this.url.protocol === 'https:'
        ? new https.Agent({ keepAlive: true, noDelay: true, maxFreeSockets: 1024, secureContext: this.secureContext })
        : new http.Agent({ keepAlive: true, noDelay: true, maxFreeSockets: 1024 });
    // Sockets are registered once, when the agent makes them, rather than on every request.
    const agentWithConnect = this.agent as http.Agent & { createConnection: (...args: unknown[]) => Socket };
    const createConnection = agentWithConnect.createConnection.bind(this.agent);
    agentWithConnect.createConnection = (...args: unknown[]) => {
      const socket = createConnection(...args);
      if (socket) this.trackSocket(socket);
      return socket;
    };
    this.resources = new ResourceMapper((path) => this.fetchJson(path));
  }

  /**
   * The resource's kind and scope. Concurrent lookups of one resource share a discovery request (a
   * controller starting up asks for many at once). Misses are not cached: a CRD may appear any time.
   */
  lookupResource(group: string, version: string, resource: string): Promise<ResourceInfo | undefined> {
    const k = `${group}/${version}/${resource}`;
    let pending = this.lookups.get(k);
    if (!pending) {
      pending = this.resources
        .byResource(group, version, resource)
        .then((info) => {
          if (info) this.known.set(k, info);
          return info;
        })
        .catch(() => undefined)
        .finally(() => this.lookups.delete(k));
      this.lookups.set(k, pending);
    }
    return pending;
  }

  /** The resource's kind and scope if discovery found it already (no waiting); see lookupResource. */
  knownResource(group: string, version: string, resource: string): ResourceInfo | undefined {
    return this.known.get(`${group}/${version}/${resource}`);
  }

  /** The bearer token the proxy presents upstream. */
  get token(): string | undefined {
    return this.currentToken;
  }

  /** Asks the token provider again (after a 401, or periodically); concurrent calls share one refresh. */
  refreshToken(): Promise<void> {
    const provider = this.options.tokenProvider;
    if (!provider) return Promise.resolve();
    this.refreshing ??= provider()
      .then((t) => {
        if (t) this.currentToken = t;
      })
      .catch(() => undefined)
      .finally(() => (this.refreshing = undefined));
    return this.refreshing;
  }

  /** Upstream sockets carrying a request now (open sockets minus idle keep-alive ones). */
  busySocketCount(): number {
    let free = 0;
    for (const list of Object.values(this.agent.freeSockets)) free += list?.length ?? 0;
    return this.openSockets.size - free;
  }

  /** Upstream requests not yet closed (watches included). */
  openRequestCount(): number {
    return this.openRequests.size;
  }

  /** Upstream TCP/TLS sockets not yet closed, idle keep-alive ones included. */
  openSocketCount(): number {
    return this.openSockets.size;
  }

  /** Starts an upstream request; the caller writes the body and must destroy it when its client leaves. */
  request(method: string, pathWithQuery: string, headers: http.OutgoingHttpHeaders): http.ClientRequest {
    const mod = this.url.protocol === 'https:' ? https : http;
    const req = mod.request({
      protocol: this.url.protocol,
      hostname: this.url.hostname,
      port: this.url.port,
      method,
      path: this.basePath() + pathWithQuery,
      headers,
      agent: this.agent,
    });
    this.track(req, false);
    return req;
  }

  /** A request on its own connection, for protocol upgrades (the socket leaves the pool for good). */
  upgradeRequest(method: string, pathWithQuery: string, headers: http.OutgoingHttpHeaders): http.ClientRequest {
    const mod = this.url.protocol === 'https:' ? https : http;
    const req = mod.request({
      protocol: this.url.protocol,
      hostname: this.url.hostname,
      port: this.url.port,
      method,
      path: this.basePath() + pathWithQuery,
      headers,
      agent: false,
      ...(this.secureContext ? { secureContext: this.secureContext } : {}),
    });
    this.track(req, true);
    return req;
  }

  private basePath(): string {
    // A server URL may carry a path prefix (e.g. behind another proxy).
    return this.url.pathname === '/' ? '' : this.url.pathname.replace(/\/$/, '');
  }

  /** `ownSocket`: a request outside the agent, whose socket the agent does not register. */
  private track(req: http.ClientRequest, ownSocket: boolean): void {
    const entry = this.openRequests.add(req);
    req.once('close', () => this.openRequests.delete(entry));
    if (ownSocket) req.once('socket', (socket: Socket) => this.trackSocket(socket));
  }

  trackSocket(socket: Socket): void {
    if (this.openSockets.has(socket) || socket.destroyed) return;
    this.openSockets.add(socket);
    socket.once('close', () => this.openSockets.delete(socket));
  }

  /** GET a JSON document for the proxy's own use (discovery). Never throws. */
  fetchJson(path: string): Promise<{ status: number; body: unknown }> {
    return this.send('GET', path);
  }

  /** A request of the proxy's own (discovery, lease release), with the proxy's credentials. Never throws. */
  send(method: string, path: string, body?: unknown, contentType = 'application/json'): Promise<{ status: number; body: unknown }> {
    return new Promise((resolve) => {
      const headers: http.OutgoingHttpHeaders = { accept: 'application/json' };
      if (this.currentToken) headers.authorization = `Bearer ${this.currentToken}`;
      const payload = body === undefined ? undefined : Buffer.from(JSON.stringify(body));
      if (payload) {
        headers['content-type'] = contentType;
        headers['content-length'] = String(payload.length);
      }
      const req = this.request(method, path, headers);
      req.setTimeout(15_000, () => req.destroy(new Error('timed out')));
      req.on('response', (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          let body: unknown;
          try {
            body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
          } catch {
            body = undefined;
          }
          resolve({ status: res.statusCode ?? 0, body });
        });
        res.on('error', () => resolve({ status: 0, body: undefined }));
      });
      req.on('error', () => resolve({ status: 0, body: undefined }));
      req.end(payload);
    });
  }

  /** Aborts every open upstream request and closes every socket. */
  destroy(): void {
    if (this.refreshTimer) clearInterval(this.refreshTimer);
    for (const req of this.openRequests.values()) req.destroy();
    this.agent.destroy();
    for (const socket of [...this.openSockets]) socket.destroy();
  }
}
