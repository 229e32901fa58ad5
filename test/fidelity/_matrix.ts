/**
 * The client fidelity matrix (issue 8): each cell is (client, cluster, path, operation) -> the
 * outcome the client must show: what its cache/output holds before, during and after, and for the Go
 * client what went over the wire. The embedded tier (matrix.test.ts) and the real tier
 * (test/real/fidelity.real.ts) register the same cells against their cluster with `registerMatrix`;
 * one expectation table (`expectedOutcome`) serves both, so a cell whose outcome differs between the
 * clusters says so there, in the open (see docs/fidelity.md).
 *
 * Faults are driven through the proxy's in-process API (ControllerProxy), as the coordinator does;
 * they exist only in the "through the proxy" column: direct x fault cells are not applicable.
 */
import type { ExecutionContext, TestFn } from 'ava';
import * as k8s from '@kubernetes/client-node';
import { ControllerProxy } from '../../proxy/index.js';
import { KubeClient, type KubeClientOptions } from '../../src/kube/client.js';
import { ClusterRecorder } from '../../src/recorder/cluster-recorder.js';
import type { RequestEvent } from '../../src/model/trace.js';
import { MemoryTrace } from '../proxy/helpers.js';
import {
  CLIENTS,
  ClientSet,
  clientNodeConfig,
  Scratch,
  unavailable,
  type Cache,
  type Client,
  type ClientConfig,
  type ClientId,
  type Session,
} from './_clients.js';
import { hangBound } from '../_hang-bound.js';

export { CLIENTS, type ClientId } from './_clients.js';
export const CLUSTERS = ['embedded', 'real'] as const;
export type ClusterKind = (typeof CLUSTERS)[number];
export const PATHS = ['direct', 'proxy'] as const;
export type PathKind = (typeof PATHS)[number];
export const OPERATIONS = ['list', 'watch', 'write', 'relist-410', 'crash-after-write', 'stale-view', 'unobserved', 'conflict-409'] as const;
export type Operation = (typeof OPERATIONS)[number];
const FAULTS = new Set<Operation>(['relist-410', 'crash-after-write', 'stale-view', 'unobserved', 'conflict-409']);
/** Operations only some clients have: the others' cells are not applicable, for this reason. */
const ONLY_FOR: Partial<Record<Operation, { clients: readonly ClientId[]; note: string }>> = {
  'conflict-409': {
    clients: ['python'],
    note: "a write retried after 409 Conflict is the Python probe's (the other clients' one-shot writes do not retry)",
  },
};

export interface Cell {
  client: ClientId;
  cluster: ClusterKind;
  path: PathKind;
  op: Operation;
}

export type Outcome = Record<string, unknown>;

export interface CellSpec extends Cell {
  /** 'not applicable': a fault needs the proxy. 'known difference': `test.failing`, with why. */
  status: 'pass' | 'not applicable' | 'known difference';
  note?: string;
  expected?: Outcome;
}

const isGo = (c: ClientId) => c.startsWith('go-');

/**
 * Known differences, kept as `test.failing` with the reason. Empty means every applicable cell passes;
 * an entry here is a fidelity bug someone should fix (docs/fidelity.md lists them).
 */
export const KNOWN_DIFFERENCES: Array<{ match: Partial<Cell>; note: string }> = [];

/** The real kube-apiserver v1.33's answer to a WatchList watch (its WatchList gate is off by default). */
export const WATCHLIST_REFUSAL =
  '422 Invalid: ListOptions.meta.k8s.io "" is invalid: sendInitialEvents: Forbidden: sendInitialEvents is forbidden for watch unless the WatchList feature gate is enabled';

// --- expectations --------------------------------------------------------------------------------

/**
 * What the client must show. `cluster` and `path` matter only where the clusters really differ (the
 * embedded cluster serves plain HTTP/1.1, so a Go client talking to it directly cannot use HTTP/2).
 */
export function expectedOutcome(cell: Cell): Outcome | undefined {
  const { client, cluster, path, op } = cell;
  if (path === 'direct' && FAULTS.has(op)) return undefined;
  if (ONLY_FOR[op] && !ONLY_FOR[op].clients.includes(client)) return undefined;
  const go = isGo(client);
  const wl = client === 'go-watchlist-on';
  switch (op) {
    case 'list':
      return {
        items: { a: '1', b: '2' },
        ...(go
          ? {
              // TLS (the real server, the proxy) means HTTP/2; the embedded cluster itself is plain http.
              protocol: cluster === 'embedded' && path === 'direct' ? 'HTTP/1.1' : 'HTTP/2.0',
              accept: 'application/vnd.kubernetes.protobuf, */*',
              // WatchList on: the streaming watch is refused with 422 (both servers), client-go falls
              // back to LIST resourceVersion=0 (a watch-cache read), then watches from its RV.
              informerRequests: [
                ...(wl ? ['WATCH resourceVersionMatch=NotOlderThan&sendInitialEvents=true -> 422'] : []),
                'LIST limit=500&resourceVersion=0 -> 200',
                'WATCH resourceVersion=N -> 200',
              ],
              ...(wl ? { watchListRefusal: WATCHLIST_REFUSAL } : {}),
            }
          : {}),
      };
    case 'watch':
      return { log: ['add w v=1', 'update w v=2', 'delete w'], after: {} };
    case 'write':
      return {
        results: ['create ok', 'update ok', 'delete ok'],
        clusterAfterUpdate: '2',
        clusterAfterDelete: 'absent',
        ...(go
          ? { bodies: ['POST application/vnd.kubernetes.protobuf', 'PUT application/vnd.kubernetes.protobuf', 'DELETE application/vnd.kubernetes.protobuf'] }
          : {}),
        ...(path === 'proxy'
          ? {
              traced:
                // kubectl patch reads the object first; kubectl delete waits for it to be gone (--wait).
                client === 'kubectl'
                  ? ['create 201', 'get 200', 'patch 200', 'delete 200', 'get 404']
                  : client === 'client-node'
                    ? ['create 201', 'get 200', 'update 200', 'delete 200']
                    : client === 'python'
                      ? ['create 201', 'get 200', 'patch 200', 'delete 200']
                      : ['create 201', 'update 200', 'delete 200'],
            }
          : {}),
      };
    case 'relist-410':
      if (client === 'kubectl') {
        // kubectl get -w does not relist: it prints the in-stream ERROR event (410 Expired) like any
        // other event and ends, successfully, when the server closes the stream.
        return { before: { a: '1' }, during: { a: '1' }, log: ['add a v=1', 'ERROR'], exit: 'code 0', resync: [] };
      }
      return {
        before: { a: '1' },
        during: { a: '1' },
        after: { a: '2', b: '1' },
        log: ['add a v=1', 'update a v=2', 'add b v=1'],
        // client-go relists "not older than" its last synced RV (WatchList on: tries a WatchList first,
        // refused, then LIST); client-node lists again with a consistent read.
        // Python: Watch().stream watches once more from its resourceVersion, is refused 410 again, raises; the probe relists.
        resync:
          client === 'client-node'
            ? ['list rv=', 'watch rv=N']
            : client === 'python'
              ? ['watch rv=N', 'list rv=', 'watch rv=N']
              : [...(wl ? ['watch sendInitialEvents rv=N -> 422'] : []), 'list rv=N', 'watch rv=N'],
      };
    case 'crash-after-write':
      return {
        acknowledged: false,
        clusterHasWrite: true,
        during: {},
        after: { c: '1', d: '1' },
        ...(go ? { leaderWithoutWaitingForLease: true, writeAfterRestart: 'ok' } : {}),
      };
    case 'stale-view':
      return {
        before: { later: '1', s: '3' },
        during: { s: '2' },
        after: { later: '1', s: '3' },
        log: ['add s v=2', 'add later v=1', 'update s v=3'],
      };
    case 'conflict-409':
      // The probe reads, patches with the resourceVersion it read, gets the proxy's 409, reads again and patches again.
      return { result: 'ok', cluster: '2', traced: ['get 200', 'patch 409', 'get 200', 'patch 200'] };
    case 'unobserved':
      // kubectl never sees u=2 either, but ends at the 410 instead of relisting to u=3.
      if (client === 'kubectl') return { before: { u: '1' }, during: { u: '1' }, log: ['add u v=1', 'ERROR'], exit: 'code 0', injected: true };
      return { before: { u: '1' }, during: { u: '1' }, after: { u: '3' }, log: ['add u v=1', 'update u v=3'], injected: true };
  }
}

export function cellSpecs(cluster: ClusterKind): CellSpec[] {
  const specs: CellSpec[] = [];
  for (const client of CLIENTS) {
    for (const path of PATHS) {
      for (const op of OPERATIONS) {
        const cell: Cell = { client, cluster, path, op };
        const expected = expectedOutcome(cell);
        if (!expected) {
          const only = ONLY_FOR[op];
          const note = only && !only.clients.includes(client) ? only.note : 'faults are injected by the proxy';
          specs.push({ ...cell, status: 'not applicable', note });
          continue;
        }
        const known = KNOWN_DIFFERENCES.find((k) => Object.entries(k.match).every(([f, v]) => (cell as unknown as Record<string, unknown>)[f] === v));
        specs.push({ ...cell, status: known ? 'known difference' : 'pass', expected, ...(known ? { note: known.note } : {}) });
      }
    }
  }
  return specs;
}

export const cellTitle = (c: Cell): string => `${c.client} x ${c.cluster} x ${c.path}: ${c.op}`;
/** A cell without its cluster: the key under which the two tiers' outcomes are compared. */
export const cellKey = (c: Omit<Cell, 'cluster'>): string => `${c.client} x ${c.path}: ${c.op}`;

/**
 * Fields of an outcome that depend on the cluster by design (the embedded cluster serves plain
 * HTTP/1.1, so a Go client talking to it directly does not use HTTP/2); left out when comparing tiers.
 */
export function comparable(cell: Omit<Cell, 'cluster'>, outcome: Outcome): Outcome {
  const { protocol, ...rest } = outcome;
  return cell.path === 'direct' ? rest : { ...rest, protocol };
}

// --- the environment: one cluster per test file -------------------------------------------------

export interface MatrixCluster {
  kind: ClusterKind;
  url: string;
  kubeconfigYaml: string;
  clientOptions: KubeClientOptions;
}

/** The cluster, the proxy's cluster view (one recorder shared by every cell's proxy) and the clients. */
export class MatrixEnv {
  readonly clients = new ClientSet();
  readonly scratch = new Scratch();
  readonly admin: k8s.CoreV1Api;
  private readonly limiter: Limiter;
  /** Observed outcomes by cellKey (for comparing the tiers). */
  readonly observed = new Map<string, Outcome>();

  private constructor(
    readonly cluster: MatrixCluster,
    readonly recorder: ClusterRecorder,
    private readonly recorderClient: KubeClient,
    concurrency: number,
  ) {
    this.admin = clientNodeConfig(cluster.kubeconfigYaml).makeApiClient(k8s.CoreV1Api);
    this.limiter = new Limiter(concurrency);
  }

  static async start(cluster: MatrixCluster, concurrency: number): Promise<MatrixEnv> {
    const client = new KubeClient(cluster.url, cluster.clientOptions);
    const recorder = await ClusterRecorder.start(client, new MemoryTrace());
    return new MatrixEnv(cluster, recorder, client, concurrency);
  }

  async stop(): Promise<void> {
    await this.clients.stopAll();
    await this.recorder.stop();
    this.recorderClient.close();
    this.scratch.remove();
  }

  run<T>(fn: () => Promise<T>): Promise<T> {
    return this.limiter.run(fn);
  }
}

class Limiter {
  private active = 0;
  private readonly queue: Array<() => void> = [];
  constructor(private readonly max: number) {}
  async run<T>(fn: () => Promise<T>): Promise<T> {
    if (this.active >= this.max) await new Promise<void>((r) => this.queue.push(r));
    this.active++;
    try {
      return await fn();
    } finally {
      this.active--;
      this.queue.shift()?.();
    }
  }
}

// --- running a cell ------------------------------------------------------------------------------

interface CellContext {
  t: ExecutionContext;
  env: MatrixEnv;
  cell: Cell;
  client: Client;
  ns: string;
  /** The client's kubeconfig: the cluster's (direct) or the proxy's. */
  kc: ClientConfig;
  proxy: ControllerProxy | undefined;
  trace: MemoryTrace | undefined;
  /** Starts a session of the cell's client, torn down with the cell; waits until it shows "ready". */
  start(): Promise<Session>;
  /** Workload writes, straight to the cluster. */
  put(name: string, v: string): Promise<k8s.V1ConfigMap>;
  patch(name: string, v: string): Promise<k8s.V1ConfigMap>;
  remove(name: string): Promise<void>;
  read(name: string): Promise<string | undefined>;
}

const settle = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function eventually<T>(what: string, check: () => Promise<T | undefined> | T | undefined, timeoutMs = 20_000): Promise<T> {
  const bound = hangBound(timeoutMs);
  const deadline = Date.now() + bound;
  for (;;) {
    const v = await check();
    if (v !== undefined && v !== false) return v;
    if (Date.now() > deadline) throw new Error(`timed out after ${bound / 1000} s waiting for ${what}`);
    await settle(50);
  }
}

const sameCache = (want: Cache) => (have: Cache) =>
  JSON.stringify(have) === JSON.stringify(Object.fromEntries(Object.entries(want).sort(([a], [b]) => a.localeCompare(b))));

export function namespaceOf(cell: Cell): string {
  const client = { 'go-watchlist-off': 'go-wl-off', 'go-watchlist-on': 'go-wl-on', 'client-node': 'node', kubectl: 'kubectl', python: 'py' }[cell.client];
  return `fx-${client}-${cell.path}-${cell.op}`;
}

async function runCell(t: ExecutionContext, env: MatrixEnv, cell: Cell): Promise<Outcome> {
  const ns = namespaceOf(cell);
  const client = env.clients.get(cell.client);
  await env.admin.createNamespace({ body: { metadata: { name: ns } } });
  // The "ready" marker: a client has listed once it shows it.
  await env.admin.createNamespacedConfigMap({ namespace: ns, body: { metadata: { name: 'ready' }, data: { v: '0' } } });
  let proxy: ControllerProxy | undefined;
  let trace: MemoryTrace | undefined;
  const proxyLog: string[] = [];
  if (cell.path === 'proxy') {
    trace = new MemoryTrace();
    const o = env.cluster.clientOptions;
    proxy = await ControllerProxy.start({
      upstream: env.cluster.url,
      ...(o.caPem ? { upstreamCaPem: o.caPem } : {}),
      ...(o.token ? { upstreamToken: o.token } : {}),
      ...(o.clientCertPem ? { upstreamClientCertPem: o.clientCertPem } : {}),
      ...(o.clientKeyPem ? { upstreamClientKeyPem: o.clientKeyPem } : {}),
      // TLS, so Go clients speak HTTP/2 to the proxy as they would to a real apiserver.
      tls: true,
      trace,
      clusterView: env.recorder,
      log: (line) => proxyLog.push(line),
    });
  }
  const sessions: Session[] = [];
  const kc = env.scratch.kubeconfig(proxy ? proxy.kubeconfigYaml() : env.cluster.kubeconfigYaml);
  const ctx: CellContext = {
    t,
    env,
    cell,
    client,
    ns,
    kc,
    proxy,
    trace,
    start: async () => {
      const s = await client.start(ctx.kc, ns, async (s) => {
        sessions.push(s);
        await eventually(`${cell.client} to list (show the "ready" marker)`, async () => {
          const exited = s.exited();
          if (exited) throw new Error(`${cell.client} exited (${exited.code}): ${exited.output}`);
          return (await s.raw()).ready !== undefined || undefined;
        });
      });
      return s;
    },
    put: (name, v) => env.admin.createNamespacedConfigMap({ namespace: ns, body: { metadata: { name }, data: { v } } }),
    patch: (name, v) =>
      env.admin.patchNamespacedConfigMap({ namespace: ns, name, body: { data: { v } } }, k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch)),
    remove: async (name) => {
      await env.admin.deleteNamespacedConfigMap({ namespace: ns, name });
    },
    read: (name) =>
      env.admin.readNamespacedConfigMap({ namespace: ns, name }).then(
        (cm) => cm.data?.v ?? '',
        () => undefined,
      ),
  };
  try {
    return await SCENARIOS[cell.op](ctx);
  } catch (err) {
    for (const s of sessions) t.log(s.diagnostics());
    if (proxyLog.length) t.log(`proxy log:\n${proxyLog.join('\n')}`);
    throw err;
  } finally {
    await Promise.all(sessions.map((s) => s.stop()));
    await proxy?.stop();
  }
}

// --- the scenarios -------------------------------------------------------------------------------

/** The client's requests on ConfigMaps of the cell's namespace after trace seq `after` (every incarnation). */
function configMapRequests(ctx: CellContext, after: number): RequestEvent[] {
  return ctx.trace!.ofType('request').filter((r) => r.seq > after && r.resource?.resource === 'configmaps' && r.path.includes(`/namespaces/${ctx.ns}/`));
}

const rvClass = (rv: string | undefined) => (rv === undefined || rv === '' ? '' : rv === '0' ? '0' : 'N');
function describeResync(ctx: CellContext, r: RequestEvent): string {
  const status = ctx.trace!.ofType('response').find((x) => x.id === r.id)?.status;
  const wl = r.query.sendInitialEvents === 'true';
  return `${r.verb}${wl ? ' sendInitialEvents' : ''} rv=${rvClass(r.query.resourceVersion)}${wl ? ` -> ${status}` : ''}`;
}

async function waitExitOrCache(s: Session, want: Cache, ms = 15_000): Promise<void> {
  await eventually('the client to catch up or exit', async () => s.exited() !== undefined || sameCache(want)(await s.cache()), ms);
}

const SCENARIOS: Record<Operation, (ctx: CellContext) => Promise<Outcome>> = {
  async list(ctx) {
    await ctx.put('a', '1');
    await ctx.put('b', '2');
    if (!isGo(ctx.cell.client)) return { items: await ctx.client.list(ctx.kc, ctx.ns) };
    const s = await ctx.start();
    const items = await s.cache();
    // The informer shows its list before it watches: wait for its first requests on the wire.
    const first = ctx.cell.client === 'go-watchlist-on' ? 3 : 2;
    const wire = await eventually(`the informer's first ${first} requests`, async () => {
      const w = await s.wire!();
      return w.requests.length >= first ? w : undefined;
    });
    const protocols = Object.keys(wire.protocols);
    return {
      items,
      protocol: protocols.length === 1 ? protocols[0] : protocols.join('+'),
      accept: Object.keys(wire.accepts).join(' | '),
      informerRequests: wire.requests.slice(0, first).map((r) => r.replace(/resourceVersion=[1-9]\d*/, 'resourceVersion=N')),
      ...(ctx.cell.client === 'go-watchlist-on' ? { watchListRefusal: wire.refusals[0] } : {}),
    };
  },

  async watch(ctx) {
    const s = await ctx.start();
    await ctx.put('w', '1');
    await ctx.patch('w', '2');
    await ctx.remove('w');
    await eventually('the DELETED event', () => s.log.includes('delete w') || undefined).catch(() => undefined);
    return { log: [...s.log], after: await s.cache() };
  },

  async write(ctx) {
    const s = isGo(ctx.cell.client) ? await ctx.start() : undefined;
    const seq = ctx.trace?.events.at(-1)?.seq ?? 0;
    const results: string[] = [];
    let clusterAfterUpdate: string | undefined;
    for (const w of [
      { op: 'create', name: 'x', v: '1' },
      { op: 'update', name: 'x', v: '2' },
      { op: 'delete', name: 'x' },
    ] as const) {
      // controller-runtime's client reads from the informer cache, which lags the write: wait for
      // it to show the object before the read-modify-write (a reconciler would requeue).
      if (s && w.op === 'update') await eventually('the probe cache to show x', async () => (await s.cache()).x === '1' || undefined);
      const r = await ctx.client.write(ctx.kc, ctx.ns, s, w).result;
      results.push(`${w.op} ${r.ok ? 'ok' : `failed: ${r.error}`}`);
      if (w.op === 'update') clusterAfterUpdate = await ctx.read('x');
    }
    const clusterAfterDelete = await eventually('the delete', async () => ((await ctx.read('x')) === undefined ? 'absent' : undefined), 5000).catch(
      () => 'present',
    );
    const outcome: Outcome = { results, clusterAfterUpdate, clusterAfterDelete };
    if (s) {
      const order = ['POST', 'PUT', 'DELETE'];
      outcome.bodies = Object.keys((await s.wire!()).bodies).sort((a, b) => order.indexOf(a.split(' ')[0]!) - order.indexOf(b.split(' ')[0]!));
    }
    if (ctx.trace) {
      outcome.traced = configMapRequests(ctx, seq)
        .filter((r) => r.verb !== 'list' && r.verb !== 'watch')
        .map((r) => `${r.verb} ${ctx.trace!.ofType('response').find((x) => x.id === r.id)?.status}`);
    }
    return outcome;
  },

  async 'relist-410'(ctx) {
    const proxy = ctx.proxy!;
    const s = await ctx.start();
    await ctx.put('a', '1');
    await eventually('the client to show a=1', async () => (await s.cache()).a === '1' || undefined);
    const before = await s.cache();
    const hold = proxy.primitives.watches.hold({ key: `ConfigMap/${ctx.ns}/a` });
    await ctx.patch('a', '2');
    await ctx.put('b', '1');
    await eventually('both events to be held', () => hold.queuedEvents >= 2 || undefined);
    await settle(200);
    const during = await s.cache();
    const seq = ctx.trace!.events.at(-1)!.seq;
    hold.expire();
    await waitExitOrCache(s, { a: '2', b: '1' }).catch(() => undefined);
    if (ctx.cell.client !== 'kubectl') {
      // Wait until it watches again after its relist (the resync is complete) and has logged b; every
      // client but kubectl does, so the wait is for those events under the usual hang bound. A watch
      // alone is not the end: Python's first retries the watch from its old resourceVersion, and a
      // cell that took that retry for the end read the probe's cache between its relist and the log
      // lines and watch that follow it (a flake at load 13-20).
      await eventually('the client to watch again after relisting, and log b', () => {
        const requests = configMapRequests(ctx, seq);
        const relist = requests.findIndex((r) => r.verb === 'list');
        const watching = relist >= 0 && requests.slice(relist + 1).some((r) => r.verb === 'watch' && r.query.sendInitialEvents === undefined);
        return (watching && s.log.some((line) => line.split(' ')[1] === 'b')) || undefined;
      }).catch(() => undefined);
    }
    const exited = s.exited();
    return {
      before,
      during,
      ...(exited ? { exit: exitLine(exited) } : { after: await s.cache() }),
      log: [...s.log],
      resync: configMapRequests(ctx, seq).map((r) => describeResync(ctx, r)),
    };
  },

  async 'crash-after-write'(ctx) {
    const proxy = ctx.proxy!;
    const s = await ctx.start();
    if (isGo(ctx.cell.client)) await eventually('the probe to lead', () => s.leaderAfterMs!() !== undefined || undefined);
    let triggered = false;
    proxy.primitives.holdAfterWrite({ verb: 'create', key: `ConfigMap/${ctx.ns}/c`, occurrence: 1 }, () => (triggered = true));
    const w = ctx.client.write(ctx.kc, ctx.ns, s, { op: 'create', name: 'c', v: '1' });
    await eventually('the crash trigger', () => triggered || undefined);
    await ctx.put('d', '1');
    await settle(300);
    const acknowledged = w.settled() && (await w.result).ok;
    const clusterHasWrite = (await ctx.read('c')) === '1';
    // Its own write may reach its watch before the write's answer does (a real kube-apiserver often
    // sends the watch event first, so the proxy relays it before the trigger fires): only changes
    // after the trigger must stay unseen.
    const { c: _own, ...during } = await s.cache();
    // The coordinator kills the controller, ends its connection epoch, clears its Lease, restarts it.
    await w.kill();
    await s.stop();
    proxy.startNewEpoch();
    await proxy.releaseLeaderElection();
    proxy.incarnation = 2;
    const s2 = await ctx.start();
    await eventually('the restarted client to show c and d', async () => sameCache({ c: '1', d: '1' })(await s2.cache()) || undefined).catch(() => undefined);
    const outcome: Outcome = { acknowledged, clusterHasWrite, during, after: await s2.cache() };
    if (isGo(ctx.cell.client)) {
      // controller-runtime's lease is 15 s: leading well before that means the Lease was released.
      const leader = await eventually('the restarted probe to lead', () => s2.leaderAfterMs!(), 20_000);
      outcome.leaderWithoutWaitingForLease = leader < 10_000;
      const r = await ctx.client.write(ctx.kc, ctx.ns, s2, { op: 'create', name: 'e', v: '1' }).result;
      outcome.writeAfterRestart = r.ok ? 'ok' : `failed: ${r.error}`;
    }
    return outcome;
  },

  async 'stale-view'(ctx) {
    const proxy = ctx.proxy!;
    const key = `ConfigMap/${ctx.ns}/s`;
    const mark = proxy.primitives.triggers.markChange({ key, change: 'update', fields: [{ path: 'data.v', before: '1', after: '2' }], occurrence: 1 });
    const s1 = await ctx.start();
    await ctx.put('s', '1');
    await ctx.patch('s', '2');
    await ctx.put('later', '1');
    await ctx.patch('s', '3');
    await eventually('the first client to be current', async () => sameCache({ later: '1', s: '3' })(await s1.cache()) || undefined);
    const before = await s1.cache();
    await eventually('the mark', () => mark.resourceVersion);
    proxy.primitives.holdController();
    await s1.stop();
    proxy.startNewEpoch();
    await proxy.releaseLeaderElection();
    proxy.incarnation = 2;
    const view = proxy.primitives.staleViews.serve(mark.resourceVersion!);
    const s2 = await ctx.start();
    await settle(300);
    const during = await s2.cache();
    view.release();
    await eventually('the restarted client to catch up', async () => sameCache({ later: '1', s: '3' })(await s2.cache()) || undefined).catch(() => undefined);
    return { before, during, after: await s2.cache(), log: [...s2.log] };
  },

  async 'conflict-409'(ctx) {
    await ctx.put('k', '1');
    const seq = ctx.trace!.events.at(-1)?.seq ?? 0;
    ctx.proxy!.primitives.apiErrors.arm({ type: 'api-error', on: { verb: 'patch', key: `ConfigMap/${ctx.ns}/k`, occurrence: 1 }, answer: 'conflict' });
    const r = await ctx.client.write(ctx.kc, ctx.ns, undefined, { op: 'update', name: 'k', v: '2' }).result;
    return {
      result: r.ok ? 'ok' : `failed: ${r.error}`,
      cluster: await ctx.read('k'),
      traced: configMapRequests(ctx, seq)
        .filter((x) => x.verb !== 'list' && x.verb !== 'watch')
        .map((x) => `${x.verb} ${ctx.trace!.ofType('response').find((y) => y.id === x.id)?.status}`),
    };
  },

  async unobserved(ctx) {
    const proxy = ctx.proxy!;
    const key = `ConfigMap/${ctx.ns}/u`;
    const state = proxy.primitives.watches.armHoldUntil({
      type: 'hold-until',
      key,
      from: { key, change: 'update', fields: [{ path: 'data.v', before: '1', after: '2' }], occurrence: 1 },
      until: { key, change: 'update', fields: [{ path: 'data.v', before: '2', after: '3' }], occurrence: 1 },
    });
    const s = await ctx.start();
    await ctx.put('u', '1');
    await eventually('the client to show u=1', async () => (await s.cache()).u === '1' || undefined);
    const before = await s.cache();
    await ctx.patch('u', '2');
    await eventually('the hold', () => state.state === 'holding' || undefined);
    await settle(200);
    const during = await s.cache();
    await ctx.patch('u', '3');
    await waitExitOrCache(s, { u: '3' }).catch(() => undefined);
    const exited = s.exited();
    return { before, during, ...(exited ? { exit: exitLine(exited) } : { after: await s.cache() }), log: [...s.log], injected: state.injected };
  },
};

/** How kubectl ended: its exit code and last stderr line. */
function exitLine(exited: { code: number | null; output: string }): string {
  const line = exited.output.trim().split('\n').at(-1) ?? '';
  return `code ${exited.code}${line ? `: ${line}` : ''}`;
}

// --- registering the cells ----------------------------------------------------------------------

/**
 * Registers every cell of `cluster` as an ava test. Cells that are not applicable are not
 * registered (docs/fidelity.md lists them); cells whose client cannot run here are registered as
 * skipped, the reason in the title; known differences run as `test.failing`.
 */
export function registerMatrix(
  test: TestFn,
  cluster: ClusterKind,
  env: () => Promise<MatrixEnv>,
  /** The other tier's outcomes by cellKey (see _outcomes.ts): each cell must show the same there. */
  other?: { cluster: ClusterKind; outcomes: Record<string, Outcome> },
): void {
  for (const spec of cellSpecs(cluster)) {
    if (spec.status === 'not applicable') continue;
    const title = cellTitle(spec);
    const skip = unavailable(spec.client);
    if (skip) {
      test.skip(`${title} (skipped: ${skip})`, () => {});
      continue;
    }
    const body = async (t: ExecutionContext) => {
      const e = await env();
      const observed = await e.run(() => runCell(t, e, spec));
      e.observed.set(cellKey(spec), observed);
      if (spec.note) t.log(`known difference: ${spec.note}`);
      t.deepEqual(observed, spec.expected!);
      const there = other?.outcomes[cellKey(spec)];
      if (there) t.deepEqual(comparable(spec, observed), comparable(spec, there), `the same cell on the ${other!.cluster} cluster showed something else`);
      else if (other) t.log(`no ${other.cluster} outcome to compare with (run the ${other.cluster} tier first)`);
    };
    if (spec.status === 'known difference') test.failing(title, body);
    else test(title, body);
  }
}
