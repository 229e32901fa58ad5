/** Shared scaffolding for the proxy tests: servers on port 0, torn down with the test. */
import { writeFileSync } from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import { join } from 'node:path';
import type { ExecutionContext } from 'ava';
import { KubeConfig } from '@kubernetes/client-node';
import { ControllerProxy, type ControllerProxyOptions } from '../../proxy/index.js';
import { KubeClient } from '../../src/kube/client.js';
import { ClusterRecorder } from '../../src/recorder/cluster-recorder.js';
import { EmbeddedCluster } from '../../src/cluster/index.js';
import type { ControllerUnderTest, Workload } from '../../src/config/config.js';
import { mirrorControllerConfig as mirrorRunConfig } from './fixtures/mirror-config.js';
import type { ControllerTraceEvent, ClusterChangeEvent, TraceEvent, TraceSink, Unstamped } from '../../src/model/trace.js';
import { hangBound } from '../_hang-bound.js';
import { scratchDir } from '../_scratch-dir.js';

type OfType<T, E = TraceEvent> = E extends { type: infer U } ? (T extends U ? E : never) : never;

/**
 * The mirroring controller's run configuration (fixtures/mirror-config.ts), with the settle window
 * the proxy and coordinator tests were written for.
 */
export const mirrorControllerConfig = (dir: string, workload: Workload, settle = { quietMs: 400, timeoutSeconds: 20 }): ControllerUnderTest =>
  mirrorRunConfig(dir, workload, { settle });

/**
 * The mirroring controller with a one-step workload in a fresh directory (removed when the test passes):
 * apply ConfigMap src-a and wait for its mirror.
 */
export function mirrorFollowOnce(
  t: ExecutionContext,
  settle?: ControllerUnderTest['settle'],
): { config: ControllerUnderTest; workload: Workload; dir: string } {
  const dir = scratchDir(t, 'kperturb-mirror-');
  const manifest = join(dir, 'src-a.yaml');
  writeFileSync(manifest, 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: src-a, namespace: default}\ndata: {v: "1"}\n');
  const workload: Workload = {
    name: 'follow',
    steps: [{ apply: manifest }, { waitFor: { key: 'ConfigMap/default/mirror-src-a', field: 'data.v', equals: '1', timeoutSeconds: 30 } }],
  };
  return { config: mirrorControllerConfig(dir, workload, settle), workload, dir };
}

/** An in-memory controller trace with the same stamping as TraceWriter. */
export class MemoryTrace implements TraceSink {
  readonly events: TraceEvent[] = [];
  private seq = 1;
  append(event: Unstamped<ControllerTraceEvent | ClusterChangeEvent>): number {
    const seq = this.seq++;
    this.events.push({ seq, ts: Date.now(), ...event } as TraceEvent);
    return seq;
  }
  ofType<T extends TraceEvent['type']>(type: T): Array<OfType<T>> {
    return this.events.filter((e): e is OfType<T> => e.type === type);
  }
}

export async function startCluster(t: ExecutionContext): Promise<EmbeddedCluster> {
  const cluster = await EmbeddedCluster.start({ port: 0 });
  t.teardown(() => cluster.stop());
  return cluster;
}

/** A proxy in front of `upstream`: a URL, or the embedded cluster (whose token it then presents). */
export async function startProxy(
  t: ExecutionContext,
  upstream: string | EmbeddedCluster,
  extra: { log?: (line: string) => void; trace?: MemoryTrace } & Partial<Omit<ControllerProxyOptions, 'upstream' | 'trace' | 'log'>> = {},
): Promise<{ proxy: ControllerProxy; trace: MemoryTrace; logs: string[] }> {
  const { log, trace: givenTrace, ...rest } = extra;
  const trace = givenTrace ?? new MemoryTrace();
  const logs: string[] = [];
  const proxy = await ControllerProxy.start({ ...upstreamOf(upstream), trace, log: log ?? ((line) => logs.push(line)), ...rest });
  t.teardown(() => proxy.stop());
  return { proxy, trace, logs };
}

/** The proxy's upstream options for a URL, or for the embedded cluster with its token. */
export function upstreamOf(upstream: string | EmbeddedCluster): Pick<ControllerProxyOptions, 'upstream' | 'upstreamToken'> {
  if (typeof upstream === 'string') return { upstream };
  return { upstream: upstream.url, ...(upstream.token ? { upstreamToken: upstream.token } : {}) };
}

/** `Authorization` for raw requests to the proxy. */
export function proxyAuth(proxy: ControllerProxy): { authorization: string } {
  return { authorization: `Bearer ${proxy.controllerToken}` };
}

/**
 * The embedded cluster, its cluster recorder (the proxy's view of the cluster) and a proxy that uses
 * it, all writing one trace, as the coordinator wires them.
 */
export async function startRecordedProxy(
  t: ExecutionContext,
  extra: Partial<Omit<ControllerProxyOptions, 'upstream' | 'trace' | 'clusterView'>> = {},
): Promise<{ cluster: EmbeddedCluster; proxy: ControllerProxy; trace: MemoryTrace; recorder: ClusterRecorder; client: KubeClient }> {
  const cluster = await startCluster(t);
  const trace = new MemoryTrace();
  const client = new KubeClient(cluster.url, cluster.clientOptions());
  const recorder = await ClusterRecorder.start(client, trace);
  t.teardown(async () => {
    await recorder.stop();
    client.close();
  });
  const { proxy } = await startProxy(t, cluster, { ...extra, trace, clusterView: recorder });
  return { cluster, proxy, trace, recorder, client };
}

/** A client-node KubeConfig; plain-http servers get skipTLSVerify, without which client-node 1.x refuses http://. */
export function kubeConfigOf(yaml: string): KubeConfig {
  const kc = new KubeConfig();
  kc.loadFromString(yaml);
  const cluster = kc.getCurrentCluster();
  if (cluster && cluster.server.startsWith('http:') && !cluster.skipTLSVerify) {
    kc.clusters = kc.clusters.map((c) => (c.name === cluster.name ? { ...c, skipTLSVerify: true } : c));
  }
  return kc;
}

/**
 * Polls `cond` until it holds. The bound only names what never came when the test fails; it is
 * generous (a loaded 2-core machine runs these tests): the test waits for the event, not for a time.
 */
export async function waitFor(what: string, cond: () => boolean | Promise<boolean>, timeoutMs = 60_000): Promise<void> {
  const bound = hangBound(timeoutMs);
  const deadline = Date.now() + bound;
  while (!(await cond())) {
    if (Date.now() > deadline) throw new Error(`timed out after ${bound} ms waiting for ${what}`);
    await sleep(10);
  }
}

export function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

/**
 * A TCP relay in front of a server that counts live connections: an outside view of how many
 * upstream sockets the proxy holds open, independent of the proxy's own bookkeeping.
 * `liveMatching(re)` counts open connections whose latest request line matches `re`.
 */
export async function startTcpRelay(t: ExecutionContext, targetPort: number): Promise<{ url: string; live(): number; liveMatching(re: RegExp): number }> {
  const lastRequestLine = new Map<net.Socket, string>();
  const sockets = new Set<net.Socket>();
  const server = net.createServer((client) => {
    lastRequestLine.set(client, '');
    client.on('data', (d: Buffer) => {
      const m = d.toString('latin1').match(/^[A-Z]+ \S+ HTTP\/1\.1/m);
      if (m) lastRequestLine.set(client, m[0]);
    });
    const target = net.connect(targetPort, '127.0.0.1');
    sockets.add(client);
    sockets.add(target);
    let closed = false;
    const close = () => {
      if (closed) return;
      closed = true;
      lastRequestLine.delete(client);
      client.destroy();
      target.destroy();
    };
    client.on('error', close).on('close', close);
    target.on('error', close).on('close', close);
    client.pipe(target);
    target.pipe(client);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  t.teardown(
    () =>
      new Promise<void>((r) => {
        for (const s of sockets) s.destroy();
        server.close(() => r());
      }),
  );
  return {
    url: `http://127.0.0.1:${(server.address() as net.AddressInfo).port}`,
    live: () => lastRequestLine.size,
    liveMatching: (re) => [...lastRequestLine.values()].filter((line) => re.test(line)).length,
  };
}

/** A plain HTTP server for upstream behaviours the embedded cluster does not have. */
export async function startHttpServer(t: ExecutionContext, handler: http.RequestListener): Promise<string> {
  const server = http.createServer(handler);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  t.teardown(
    () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  );
  return `http://127.0.0.1:${(server.address() as net.AddressInfo).port}`;
}

/** A port nothing listens on. */
export async function deadPort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as net.AddressInfo).port;
  await new Promise<void>((r) => server.close(() => r()));
  return port;
}

export interface RawResponse {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
}

/** A raw HTTP request on its own connection (no client-library behaviour in the way). */
export function rawRequest(
  url: string,
  opts: { method?: string; path: string; headers?: http.OutgoingHttpHeaders; body?: string | Buffer },
): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const u = new URL(url);
    const req = http.request(
      { hostname: u.hostname, port: u.port, method: opts.method ?? 'GET', path: opts.path, headers: opts.headers, agent: false },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(opts.body);
  });
}

/**
 * A client-node ConfigMap informer in `default` (what a controller has): its event log
 * (`add a v=1`, `update a v=2`, `delete a`) and its cache (name -> data.v).
 */
export async function startConfigMapInformer(
  t: ExecutionContext,
  kc: KubeConfig,
): Promise<{ log: string[]; errors: unknown[]; cache(): Record<string, string | undefined>; stop(): Promise<void> }> {
  const { CoreV1Api, makeInformer, ADD, UPDATE, DELETE, ERROR } = await import('@kubernetes/client-node');
  const api = kc.makeApiClient(CoreV1Api);
  const informer = makeInformer(kc, '/api/v1/namespaces/default/configmaps', () => api.listNamespacedConfigMap({ namespace: 'default' }));
  const log: string[] = [];
  const errors: unknown[] = [];
  type Cm = { metadata?: { name?: string }; data?: Record<string, string> };
  informer.on(ADD, (o: Cm) => log.push(`add ${o.metadata?.name} v=${o.data?.v}`));
  informer.on(UPDATE, (o: Cm) => log.push(`update ${o.metadata?.name} v=${o.data?.v}`));
  informer.on(DELETE, (o: Cm) => log.push(`delete ${o.metadata?.name}`));
  informer.on(ERROR, (e: unknown) => errors.push(e));
  await informer.start();
  let stopped = false;
  const stop = async () => {
    if (stopped) return;
    stopped = true;
    await informer.stop();
  };
  t.teardown(stop);
  return {
    log,
    errors,
    cache: () => Object.fromEntries(informer.list().map((o: Cm) => [o.metadata!.name!, o.data?.v])),
    stop,
  };
}
