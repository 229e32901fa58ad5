/**
 * The pods' streaming subresources (`exec`, `attach`, `log`, `portforward`) as kube-apiserver fronts
 * them: look the pod up, pick the container (its only one, or the one named, with kube-apiserver's
 * BadRequest messages otherwise), refuse an exec or attach a kubelet could not serve (below), then
 * answer from the exec/log rules instead of a kubelet. The proxy
 * uses it for every controller call (the real control plane has no kubelet to run anything), the
 * embedded cluster for kubectl; both report each call (PodCallRecord) so it can be traced.
 */
import type { IncomingMessage, OutgoingHttpHeaders } from 'node:http';
import type { Duplex } from 'node:stream';
import { answerExec, answerLog, type PodStreamingRules } from '../model/exec-rules.js';
import { isObject, type KubeObject } from '../model/object-key.js';
import type { PodExecEvent } from '../model/trace.js';
import { refuseUpgrade, serveRemoteCommand, streamOptionsOf, type SessionReport } from './remote-command.js';

export type PodStreamingSubresource = PodExecEvent['subresource'];
const STREAMING_SUBRESOURCES: readonly string[] = ['exec', 'attach', 'log', 'portforward'];

export interface PodStreamingTarget {
  namespace: string;
  pod: string;
  subresource: PodStreamingSubresource;
}

/** `/api/v1/namespaces/{ns}/pods/{name}/{exec|attach|log|portforward}`, else undefined. */
export function podStreamingTarget(pathname: string): PodStreamingTarget | undefined {
  const m = /^\/api\/v1\/namespaces\/([^/]+)\/pods\/([^/]+)\/([a-z]+)\/?$/.exec(pathname);
  if (!m || !STREAMING_SUBRESOURCES.includes(m[3]!)) return undefined;
  try {
    return { namespace: decodeURIComponent(m[1]!), pod: decodeURIComponent(m[2]!), subresource: m[3] as PodStreamingSubresource };
  } catch {
    return undefined;
  }
}

/**
 * What one call did, for the traces: the `pod-exec` trace event's fields (src/model/trace.ts), with
 * the pod as namespace and name rather than an object key.
 */
export type PodCallRecord = Omit<PodExecEvent, 'type' | 'seq' | 'ts' | 'id' | 'key'> & { namespace: string; pod: string };

/** The pod as the API server has it, or the Status to answer (404 NotFound...). */
export type PodLookupResult = { pod: KubeObject } | { status: number; body: object };
export type PodLookup = (namespace: string, name: string) => Promise<PodLookupResult>;
/** The node as the API server has it; undefined when it cannot be read (a cluster without Node objects). */
export type NodeLookup = (name: string) => Promise<KubeObject | undefined>;

/** What `res` needs: both node:http and node:http2 (compat) responses have it. */
export interface PlainResponse {
  writeHead(status: number, headers: OutgoingHttpHeaders): unknown;
  end(body: string): unknown;
}

function status(code: number, reason: string, message: string): KubeObject {
  return { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message, reason, code };
}

class Refusal {
  constructor(
    readonly code: number,
    readonly body: object,
  ) {}
  get message(): string {
    const message = (this.body as { message?: unknown }).message;
    return typeof message === 'string' ? message : `HTTP ${this.code}`;
  }
}

const badRequest = (message: string) => new Refusal(400, status(400, 'BadRequest', message));
const internalError = (message: string) => new Refusal(500, status(500, 'InternalError', message));
const STATUS_TEXT: Readonly<Record<number, string>> = { 404: 'Not Found', 500: 'Internal Server Error' };

function containerNames(list: unknown): string[] {
  return Array.isArray(list) ? list.filter(isObject).map((c) => String(c.name ?? '')) : [];
}

/** kube-apiserver's container choice (pkg/registry/core/pod: LogLocation, streamLocation). */
export function chooseContainer(pod: KubeObject, requested: string | null, podName: string): string | Refusal {
  const spec = isObject(pod.spec) ? pod.spec : {};
  const containers = containerNames(spec.containers);
  const init = containerNames(spec.initContainers);
  const ephemeral = containerNames(spec.ephemeralContainers);
  if (requested) {
    if (![...containers, ...init, ...ephemeral].includes(requested)) return badRequest(`container ${requested} is not valid for pod ${podName}`);
    return requested;
  }
  if (containers.length === 1) return containers[0]!;
  if (containers.length === 0) return badRequest(`a container name must be specified for pod ${podName}`);
  let message = `a container name must be specified for pod ${podName}, choose one of: [${containers.join(' ')}]`;
  if (init.length > 0) message += ` or one of the init containers: [${init.join(' ')}]`;
  return badRequest(message);
}

export class PodStreaming {
  constructor(
    private readonly rules: PodStreamingRules,
    private readonly lookup: PodLookup,
    private readonly lookupNode: NodeLookup = () => Promise.resolve(undefined),
  ) {}

  /** An upgrade request (exec, attach, portforward). `report` is called once, when the call is over. */
  async upgrade(req: IncomingMessage, socket: Duplex, head: Buffer, target: PodStreamingTarget, report: (r: PodCallRecord) => void): Promise<void> {
    const query = new URL(req.url ?? '/', 'http://pod-streaming.invalid').searchParams;
    const base = { subresource: target.subresource, namespace: target.namespace, pod: target.pod };
    const refuse = (r: Refusal, extra: Partial<PodCallRecord> = {}) => {
      refuseUpgrade(socket, r.code, STATUS_TEXT[r.code] ?? 'Bad Request', JSON.stringify(r.body), 'application/json');
      report({ ...base, ...extra, status: r.code, delivered: false, message: r.message });
    };
    const resolved = await this.resolve(target, query, req.method ?? 'GET');
    if (resolved instanceof Refusal) return refuse(resolved);
    const { container } = resolved;
    const command = target.subresource === 'exec' ? query.getAll('command') : [];
    const options = streamOptionsOf(query);
    if (typeof options === 'string') return refuse(badRequest(options), { container, ...(target.subresource === 'exec' ? { command } : {}) });
    const answer = answerExec(this.rules.exec, { namespace: target.namespace, pod: target.pod, container, command });
    const outcome = { command, exitCode: answer.exitCode, stdout: answer.stdout, stderr: answer.stderr };
    serveRemoteCommand(req, socket, head, options, outcome, (s: SessionReport) => {
      report({
        ...base,
        container,
        ...(target.subresource === 'exec' ? { command } : {}),
        status: s.status,
        ...(s.status === 101 ? { exitCode: answer.exitCode } : {}),
        ...(answer.rule !== undefined ? { rule: answer.rule } : {}),
        transport: s.transport,
        ...(s.protocol !== undefined ? { protocol: s.protocol } : {}),
        delivered: s.delivered,
        ...(s.delivered
          ? {
              stdoutBytes: Buffer.byteLength(options.tty ? answer.stdout + answer.stderr : options.stdout ? answer.stdout : ''),
              stderrBytes: options.stderr ? Buffer.byteLength(answer.stderr) : 0,
            }
          : {}),
        ...(s.reason !== undefined ? { message: s.reason } : {}),
      });
    });
  }

  /**
   * A plain request: `GET .../log` is answered from the log rules; exec/attach/portforward without an
   * upgrade get kube-apiserver's "Upgrade request required".
   */
  async answer(method: string, url: string, res: PlainResponse, target: PodStreamingTarget): Promise<PodCallRecord> {
    const query = new URL(url, 'http://pod-streaming.invalid').searchParams;
    const base = { subresource: target.subresource, namespace: target.namespace, pod: target.pod, transport: 'http' as const };
    const send = (code: number, body: string, contentType: string) => {
      res.writeHead(code, { 'Content-Type': contentType, 'Content-Length': Buffer.byteLength(body), 'Cache-Control': 'no-cache, private' });
      res.end(body);
    };
    const refuse = (r: Refusal, extra: Partial<PodCallRecord> = {}): PodCallRecord => {
      send(r.code, JSON.stringify(r.body), 'application/json');
      return { ...base, ...extra, status: r.code, delivered: false, message: r.message };
    };
    if (target.subresource !== 'log') return refuse(badRequest('Upgrade request required'));
    if (method !== 'GET' && method !== 'HEAD')
      return refuse(new Refusal(405, status(405, 'MethodNotAllowed', 'the server does not allow this method on the requested resource')));
    const resolved = await this.resolve(target, query, method);
    if (resolved instanceof Refusal) return refuse(resolved);
    const { container } = resolved;
    const answer = answerLog(this.rules.logs, { namespace: target.namespace, pod: target.pod, container });
    const text = limitLog(answer.text, query);
    send(200, text, 'text/plain');
    return {
      ...base,
      container,
      status: 200,
      delivered: true,
      stdoutBytes: Buffer.byteLength(text),
      ...(answer.rule !== undefined ? { rule: answer.rule } : {}),
    };
  }

  private async resolve(target: PodStreamingTarget, query: URLSearchParams, method: string): Promise<{ container: string } | Refusal> {
    if (target.subresource === 'portforward') {
      return badRequest("kperturb: pods/portforward is not supported: no container runs behind kperturb's kubelets");
    }
    if (target.subresource !== 'log' && method !== 'POST' && method !== 'GET') {
      return new Refusal(405, status(405, 'MethodNotAllowed', 'the server does not allow this method on the requested resource'));
    }
    const found = await this.lookup(target.namespace, target.pod);
    if ('status' in found) return new Refusal(found.status, found.body);
    const pod = found.pod;
    const container = chooseContainer(pod, query.get('container'), target.pod);
    if (container instanceof Refusal) return container;
    if (target.subresource === 'exec' && query.getAll('command').length === 0) return badRequest('you must specify at least one command for the container');
    const nodeName = isObject(pod.spec) ? pod.spec.nodeName : undefined;
    // kube-apiserver needs the node to reach its kubelet; a log of an unscheduled pod is just empty.
    if (target.subresource !== 'log' && (typeof nodeName !== 'string' || nodeName === '')) return badRequest(`pod ${target.pod} does not have a host assigned`);
    if (target.subresource === 'exec' || target.subresource === 'attach') {
      const refused = kubeletRefusal(pod, container, await this.lookupNode(nodeName as string));
      if (refused) return refused;
    }
    return { container };
  }
}

/**
 * What a real exec or attach gets when no kubelet can run it: kube-apiserver dials the node's kubelet
 * (a node whose kubelet stopped posting status, Ready `Unknown`, does not answer: "error dialing
 * backend"), and the kubelet looks the container up among the running ones (kubelet_pods.go
 * findContainer: `container not found ("c")`, 500 by streaming.WriteError; with the runtime down,
 * Ready `False`, it cannot list them). Only what the cluster reports is judged: a container without a
 * status, or a node that cannot be read (a cluster with no kubelet at all), is taken as running.
 */
function kubeletRefusal(pod: KubeObject, container: string, node: KubeObject | undefined): Refusal | undefined {
  const ready = conditionsOf(node?.status).find((c) => c.type === 'Ready');
  if (ready && ready.status === 'Unknown') return internalError(`error dialing backend: dial tcp ${String(node?.metadata?.name)}:10250: i/o timeout`);
  if (ready && ready.status !== 'True') return internalError(`rpc error: code = Unavailable desc = ${String(ready.message ?? 'container runtime is down')}`);
  const podStatus = isObject(pod.status) ? pod.status : {};
  const statuses = ['containerStatuses', 'initContainerStatuses', 'ephemeralContainerStatuses'].flatMap((f) =>
    Array.isArray(podStatus[f]) ? podStatus[f] : [],
  );
  const own = statuses.filter(isObject).find((c) => c.name === container);
  if (own && !(isObject(own.state) && isObject(own.state.running))) return internalError(`container not found ("${container}")`);
  return undefined;
}

function conditionsOf(status: unknown): Array<Record<string, unknown>> {
  return isObject(status) && Array.isArray(status.conditions) ? status.conditions.filter(isObject) : [];
}

/** `tailLines` and `limitBytes`, the PodLogOptions a static text can honour. */
function limitLog(text: string, query: URLSearchParams): string {
  let out = text;
  const tail = query.get('tailLines');
  if (tail !== null && /^\d+$/.test(tail)) {
    const lines = out.split('\n');
    const trailingNewline = out.endsWith('\n');
    const body = trailingNewline ? lines.slice(0, -1) : lines;
    const kept = Number(tail) === 0 ? [] : body.slice(-Number(tail));
    out = kept.join('\n') + (trailingNewline && kept.length > 0 ? '\n' : '');
  }
  const limit = query.get('limitBytes');
  if (limit !== null && /^\d+$/.test(limit) && Number(limit) > 0) out = Buffer.from(out).subarray(0, Number(limit)).toString('utf8');
  return out;
}
