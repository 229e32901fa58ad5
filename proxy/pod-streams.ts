/**
 * The controller's `pods/exec`, `pods/attach`, `pods/log` and `pods/portforward` calls, answered by the
 * proxy itself from the config's exec/log rules (src/streaming/pod-streaming.ts) instead of being
 * relayed: the real control plane has no kubelet that could run a command, and the embedded one only
 * answers the same way. The pod is still looked up on the API server (with the proxy's credentials),
 * so a call on a missing pod gets the server's own 404.
 *
 * Each call is a `request`, its `response` (101 for an upgraded stream) and a `pod-exec` event with
 * the container, command, exit code and rule, in the controller trace; `onPodExec` hands the same
 * event to whoever keeps the cluster trace. Like any request, a call waits while the controller is
 * held and dies with its connection epoch.
 */
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { parseApiPath, requestVerb } from '../src/model/api-path.js';
import { formatKey, type KubeObject } from '../src/model/object-key.js';
import type { PodExecEvent, Unstamped } from '../src/model/trace.js';
import { PodStreaming, type NodeLookup, type PodCallRecord, type PodLookupResult, type PodStreamingTarget } from '../src/streaming/pod-streaming.js';
import type { PodStreamingRules } from '../src/model/exec-rules.js';
import type { ClientRequest, ClientResponse } from './client-conn.js';
import type { Epoch, EpochMember, EpochMembership } from './epoch.js';
import type { ExchangeHost } from './exchange.js';
import { statusObject } from './status.js';
import type { Upstream } from './upstream.js';

type Host = Pick<ExchangeHost, 'upstream' | 'trace' | 'incarnation' | 'touch'>;

/** The pod as the API server has it, read with the proxy's own credentials. */
export function upstreamPodLookup(upstream: Upstream): (namespace: string, name: string) => Promise<PodLookupResult> {
  return async (namespace, name) => {
    const { status, body } = await upstream.send('GET', `/api/v1/namespaces/${encodeURIComponent(namespace)}/pods/${encodeURIComponent(name)}`);
    if (status === 200 && body && typeof body === 'object') return { pod: body as KubeObject };
    if (status === 0) return { status: 503, body: statusObject(503, 'ServiceUnavailable', 'kperturb proxy: the API server is unreachable') };
    const statusBody = body && typeof body === 'object' ? (body as KubeObject) : statusObject(status, 'InternalError', `reading pod ${name}: HTTP ${status}`);
    return { status, body: statusBody };
  };
}

export function podExecEvent(record: PodCallRecord, id?: number): Unstamped<PodExecEvent> {
  const { namespace, pod, ...rest } = record;
  return { type: 'pod-exec', ...(id !== undefined ? { id } : {}), key: formatKey('Pod', namespace, pod), ...rest };
}

export class PodStreamCall implements EpochMember {
  private readonly startedAt = Date.now();
  private closed = false;
  private socket: Duplex | undefined;
  private membership: EpochMembership | undefined;

  constructor(
    readonly id: number,
    private readonly host: Host,
    readonly epoch: Epoch,
    private readonly streaming: PodStreaming,
    private readonly target: PodStreamingTarget,
    private readonly onPodExec: ((event: Unstamped<PodExecEvent>) => void) | undefined,
  ) {}

  /** exec/attach/portforward: an HTTP/1.1 upgrade. */
  upgrade(req: IncomingMessage, socket: Duplex, head: Buffer): void {
    this.socket = socket;
    this.membership = this.epoch.join(this);
    socket.on('error', () => this.terminate());
    socket.on('close', () => this.terminate());
    this.epoch.gate.pass(() => {
      if (this.closed) return;
      this.recordRequest(req.method ?? 'GET', req.url ?? '/');
      void this.streaming
        .upgrade(req, socket, head, this.target, (r) => this.finish(r))
        .catch((err: Error) => {
          socket.destroy();
          this.failed(err);
        });
    });
  }

  /** log, or an exec without an upgrade (HTTP/2, or a client that did not ask for one). */
  answer(req: ClientRequest, res: ClientResponse): void {
    this.membership = this.epoch.join(this);
    res.on('close', () => this.terminate());
    this.epoch.gate.pass(() => {
      if (this.closed) return;
      this.recordRequest(req.method ?? 'GET', req.url ?? '/');
      this.streaming
        .answer(req.method ?? 'GET', req.url ?? '/', res, this.target)
        .then((r) => this.finish(r))
        .catch((err: Error) => {
          res.destroy();
          this.failed(err);
        });
    });
  }

  private recordRequest(method: string, url: string): void {
    const parsed = new URL(url, 'http://proxy.invalid');
    this.host.trace.append({
      type: 'request',
      id: this.id,
      incarnation: this.host.incarnation(),
      method,
      path: parsed.pathname,
      query: Object.fromEntries(parsed.searchParams.entries()),
      verb: requestVerb(method, parseApiPath(parsed.pathname), parsed.searchParams),
      resource: { group: '', version: 'v1', resource: 'pods', subresource: this.target.subresource, kind: 'Pod', namespaced: true },
      key: formatKey('Pod', this.target.namespace, this.target.pod),
      bodyBytes: 0,
    });
    this.host.touch();
  }

  private reported = false;

  /** The call could not be answered: a 500 that never reached the controller. */
  private failed(err: Error): void {
    const { subresource, namespace, pod } = this.target;
    this.finish({ subresource, namespace, pod, status: 500, delivered: false, message: err.message });
  }

  private finish(record: PodCallRecord): void {
    if (this.reported) return;
    this.reported = true;
    this.host.trace.append({ type: 'response', id: this.id, status: record.status, durationMs: Date.now() - this.startedAt });
    this.host.trace.append(podExecEvent(record, this.id));
    this.onPodExec?.(podExecEvent(record, this.id));
    this.host.touch();
  }

  terminate(): void {
    if (this.closed) return;
    this.closed = true;
    this.socket?.destroy();
    this.epoch.leave(this.membership);
  }
}

export function podStreamingFor(rules: PodStreamingRules, upstream: Upstream): PodStreaming {
  return new PodStreaming(rules, upstreamPodLookup(upstream), upstreamNodeLookup(upstream));
}

function upstreamNodeLookup(upstream: Upstream): NodeLookup {
  return async (name) => {
    const { status, body } = await upstream.send('GET', `/api/v1/nodes/${encodeURIComponent(name)}`);
    return status === 200 && body && typeof body === 'object' ? (body as KubeObject) : undefined;
  };
}
