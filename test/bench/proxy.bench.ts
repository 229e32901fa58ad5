/**
 * Proxy benchmark (a script, not a test): direct vs through the proxy against the embedded cluster,
 * in one run. Prints GET latency p50/p99, request throughput and watch events per second with 100
 * watchers, and the ratios against the targets (added p50 < 0.3 ms; throughput and watch rate at
 * least 80% of direct). The proxy writes its trace to a file as in a real run.
 *
 * Beside the proxy, two ceilings are measured the same way (proxy-bench-relays.ts): a raw TCP pipe
 * and a bare Node HTTP relay, in the proxy's place. They show what any process in the middle reaches
 * on this machine, where the clients, the cluster and the relay share the cores.
 *
 * Fairness: the same client process (proxy-bench-client.ts) measures every side with the same
 * concurrency against the same cluster, the sides' rounds alternate and each side keeps its best
 * round. The clients and (in A) the cluster run in processes of their own, so this process hosts
 * only the relays (one exercised at a time) and its CPU time is the relay's cost, printed per request
 * and per event. Hosted together, one side's garbage can be collected in another side's rounds:
 * with --separate-processes each relay of A runs in a process of its own (this file, started with
 * --relay-host), whose CPU time is that relay's alone (its own collections, its own compilation).
 *
 *   npm run bench:proxy            (or: node dist/test/bench/proxy.bench.js [--quick] [--rounds N] [--separate-processes])
 */
import { fork, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { EmbeddedCluster } from '../../src/cluster/index.js';
import { ControllerProxy } from '../../proxy/index.js';
import { TraceSequence, TraceWriter } from '../../src/io/trace-io.js';
import type { BenchReply, BenchRequest } from './proxy-bench-client.js';
import { RELAY_HOST, startRelayProcess, type HostReply, type RelayHandle, type RelayKind } from './proxy-bench-host.js';
import { startBareRelay, startRawPipe } from './proxy-bench-relays.js';

const quick = process.argv.includes('--quick');
const separateProcesses = process.argv.includes('--separate-processes');
const roundsArg = process.argv.indexOf('--rounds');
const ROUNDS = roundsArg > 0 ? Number(process.argv[roundsArg + 1]) : 2;
const LATENCY_REQUESTS = quick ? 500 : 3000;
const THROUGHPUT_REQUESTS = quick ? 2000 : 10000;
const THROUGHPUT_CONCURRENCY = 32;
const WATCHERS = 100;
const WATCH_CHANGES = quick ? 100 : 300;
const PATH = '/api/v1/namespaces/default/configmaps/bench';

/** The sides measured, in the order their rounds run and their columns print. */
const SIDES = ['direct', 'raw pipe', 'bare relay', 'proxy'] as const;
type Side = (typeof SIDES)[number];

interface Target {
  name: Side;
  url: string;
  headers: Record<string, string>;
  /** CPU time (us) of the process that hosts this side's relay, so far. */
  cpu: () => Promise<number>;
}

function child(file: string): ChildProcess {
  return fork(fileURLToPath(new URL(file, import.meta.url)), [], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
}

/** This process's CPU time in microseconds (user + system). */
function cpuMicros(): number {
  const u = process.cpuUsage();
  return u.user + u.system;
}

/** The clients run in a process of their own, as a controller does. */
class Clients {
  private readonly proc = child('./proxy-bench-client.js');
  private waiting: Array<(r: BenchReply) => void> = [];
  /** CPU time of this process spent during each side's rounds, per operation. */
  readonly cpu = new Map<Side, CpuCount>();

  constructor() {
    this.proc.on('message', (r: BenchReply) => this.waiting.shift()?.(r));
  }

  private async ask<R extends BenchReply>(m: BenchRequest): Promise<R> {
    return new Promise((resolve) => {
      this.waiting.push(resolve as (r: BenchReply) => void);
      this.proc.send(m);
    });
  }

  async create(cluster: ClusterHandle, name: string): Promise<void> {
    await this.ask({ op: 'create', cluster: cluster.url, name });
  }

  async latency(t: Target): Promise<{ p50: number; p99: number }> {
    const before = await t.cpu();
    const r = await this.ask<Extract<BenchReply, { op: 'latency' }>>({ op: 'latency', url: t.url, path: PATH, headers: t.headers, n: LATENCY_REQUESTS });
    this.count(t, 'request', Math.min(200, LATENCY_REQUESTS) + LATENCY_REQUESTS, (await t.cpu()) - before);
    return r;
  }

  async h2Latency(t: Target, ca: string): Promise<{ p50: number; p99: number }> {
    return this.ask<Extract<BenchReply, { op: 'latency' }>>({ op: 'h2-latency', url: t.url, path: PATH, headers: t.headers, n: LATENCY_REQUESTS, ca });
  }

  async throughput(t: Target): Promise<number> {
    const before = await t.cpu();
    const r = await this.ask<Extract<BenchReply, { op: 'throughput' }>>({
      op: 'throughput',
      url: t.url,
      path: PATH,
      headers: t.headers,
      n: THROUGHPUT_REQUESTS,
      concurrency: THROUGHPUT_CONCURRENCY,
    });
    this.count(t, 'request', THROUGHPUT_REQUESTS, (await t.cpu()) - before);
    return r.perSecond;
  }

  /** 100 watchers of one object; WATCH_CHANGES patches (made directly on the cluster); the rate at which all watchers together receive them. */
  async watchRate(t: Target, cluster: ClusterHandle, round: number): Promise<number> {
    const before = await t.cpu();
    const r = await this.ask<Extract<BenchReply, { op: 'watch' }>>({
      op: 'watch',
      url: t.url,
      cluster: cluster.url,
      name: `watched-${round}`,
      headers: t.headers,
      watchers: WATCHERS,
      changes: WATCH_CHANGES,
    });
    this.count(t, 'event', r.received, (await t.cpu()) - before);
    if (r.received < r.expected) process.stdout.write(`  (${t.name}: only ${r.received}/${r.expected} events within 60 s)\n`);
    return r.received / r.seconds;
  }

  private count(t: Target, what: 'request' | 'event', n: number, micros: number): void {
    let c = this.cpu.get(t.name);
    if (!c) this.cpu.set(t.name, (c = { requests: 0, requestMicros: 0, events: 0, eventMicros: 0 }));
    if (what === 'request') {
      c.requests += n;
      c.requestMicros += micros;
    } else {
      c.events += n;
      c.eventMicros += micros;
    }
  }

  async close(): Promise<void> {
    const exited = new Promise<void>((r) => this.proc.once('exit', () => r()));
    this.proc.disconnect();
    await exited;
  }
}

interface CpuCount {
  requests: number;
  requestMicros: number;
  events: number;
  eventMicros: number;
}

function fmt(n: number, digits = 3): string {
  return n.toFixed(digits);
}

interface ClusterHandle {
  url: string;
  stop(): Promise<void>;
}

async function inThisProcess(): Promise<ClusterHandle> {
  // The raw baselines (direct, pipe, relay) send no token.
  const c = await EmbeddedCluster.start({ bookmarkIntervalMs: 0, insecureNoAuth: true });
  return { url: c.url, stop: () => c.stop() };
}

async function inOwnProcess(): Promise<ClusterHandle> {
  const proc = child('./proxy-bench-cluster.js');
  const port = await new Promise<number>((resolve) => proc.once('message', (m: { port: number }) => resolve(m.port)));
  return {
    url: `http://127.0.0.1:${port}`,
    stop: async () => {
      const exited = new Promise<void>((r) => proc.once('exit', () => r()));
      proc.send('stop');
      await exited;
    },
  };
}

interface Latency {
  p50: number;
  p99: number;
}

interface Figures {
  lat: Record<Side, Latency>;
  tput: Record<Side, number>;
  watch: Record<Side, number>;
  cpu: Clients['cpu'];
  h2?: Latency;
}

function perSide<T>(make: (side: Side) => T): Record<Side, T> {
  return Object.fromEntries(SIDES.map((side) => [side, make(side)])) as Record<Side, T>;
}

/** Starts a relay in this process; the proxies write their trace to a file in `dir`, as in a real run. */
async function startRelay(kind: RelayKind, upstream: string, dir: string): Promise<RelayHandle> {
  const cpu = () => Promise.resolve(cpuMicros());
  if (kind === 'raw pipe' || kind === 'bare relay') {
    const relay = await (kind === 'raw pipe' ? startRawPipe(upstream) : startBareRelay(upstream));
    return { url: relay.url, headers: {}, cpu, stop: () => relay.stop() };
  }
  const trace = new TraceWriter(join(dir, `${kind.replace(' ', '-')}.trace.jsonl`), 'controller', new TraceSequence());
  const proxy = await ControllerProxy.start({ upstream, trace, ...(kind === 'tls proxy' ? { tls: true } : {}), log: () => undefined });
  return {
    url: proxy.url,
    headers: { authorization: `Bearer ${proxy.controllerToken}` },
    ...(proxy.caPem ? { caPem: proxy.caPem } : {}),
    cpu,
    stop: async () => {
      await proxy.stop();
      await trace.close();
    },
  };
}

/** The child side of startRelayProcess. */
async function hostRelay(kind: RelayKind, upstream: string): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'kperturb-proxy-bench-'));
  const relay = await startRelay(kind, upstream, dir);
  process.send!({ url: relay.url, headers: relay.headers, ...(relay.caPem ? { caPem: relay.caPem } : {}) } satisfies HostReply);
  process.on('message', (m: string) => {
    if (m === 'cpu') process.send!({ cpu: cpuMicros() } satisfies HostReply);
    if (m === 'stop')
      void relay.stop().then(() => {
        rmSync(dir, { recursive: true, force: true });
        process.exit(0);
      });
  });
}

/** `ownProcesses`: each relay in a process of its own (setup A with --separate-processes); otherwise all in this one. */
async function measure(cluster: ClusterHandle, withH2: boolean, ownProcesses: boolean): Promise<Figures> {
  const dir = mkdtempSync(join(tmpdir(), 'kperturb-proxy-bench-'));
  const start = (kind: RelayKind) => (ownProcesses ? startRelayProcess(fileURLToPath(import.meta.url), kind, cluster.url) : startRelay(kind, cluster.url, dir));
  const proxy = await start('proxy');
  const tlsProxy = withH2 ? await start('tls proxy') : undefined;
  const rawPipe = await start('raw pipe');
  const bareRelay = await start('bare relay');
  const clients = new Clients();
  try {
    await clients.create(cluster, 'bench');
    const here = () => Promise.resolve(cpuMicros());
    const targets: Target[] = [
      { name: 'direct', url: cluster.url, headers: {}, cpu: here },
      { name: 'raw pipe', url: rawPipe.url, headers: {}, cpu: rawPipe.cpu },
      { name: 'bare relay', url: bareRelay.url, headers: {}, cpu: bareRelay.cpu },
      { name: 'proxy', url: proxy.url, headers: proxy.headers, cpu: proxy.cpu },
    ];
    // Alternate the sides' rounds; keep each side's best, so background noise hurts all alike.
    const lat = perSide((): Latency[] => []);
    const tput = perSide((): number[] => []);
    const watch = perSide((): number[] => []);
    let watched = 0;
    for (let round = 0; round < ROUNDS; round++) {
      for (const t of targets) lat[t.name].push(await clients.latency(t));
      for (const t of targets) tput[t.name].push(await clients.throughput(t));
      for (const t of targets) watch[t.name].push(await clients.watchRate(t, cluster, watched++));
    }
    const best = (xs: Latency[]) => xs.reduce((a, b) => (b.p50 < a.p50 ? b : a));
    const figures: Figures = {
      lat: perSide((side) => best(lat[side])),
      tput: perSide((side) => Math.max(...tput[side])),
      watch: perSide((side) => Math.max(...watch[side])),
      cpu: clients.cpu,
    };
    if (tlsProxy) {
      const viaTls: Target = { name: 'proxy', url: tlsProxy.url, headers: tlsProxy.headers, cpu: tlsProxy.cpu };
      figures.h2 = await clients.h2Latency(viaTls, tlsProxy.caPem!);
    }
    return figures;
  } finally {
    await clients.close();
    await proxy.stop();
    await tlsProxy?.stop();
    await rawPipe.stop();
    await bareRelay.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** `directCpu`: this process serves the direct side too (the cluster in B), so its CPU there is the baseline. */
function printFigures(title: string, f: Figures, cpuNote: string, directCpu: boolean): void {
  const { lat, tput, watch } = f;
  const relays = SIDES.filter((s) => s !== 'direct');
  const added = (side: Side) => lat[side].p50 - lat.direct.p50;
  const pct = (x: number, of: number) => `${fmt((100 * x) / of, 1)}%`;
  const plus = (ms: number) => (ms < 0 ? fmt(ms) : `+${fmt(ms)}`);
  const rate = (r: Record<Side, number>) => [fmt(r.direct, 0), ...relays.map((s) => `${fmt(r[s], 0)} (${pct(r[s], r.direct)})`)];
  const cpu = (side: Side, what: 'request' | 'event') => {
    const c = f.cpu.get(side);
    if (!c) return '';
    return what === 'request' ? fmt(c.requestMicros / c.requests, 1) : fmt(c.eventMicros / c.events, 1);
  };
  const rows = [
    [
      'GET latency p50 (ms)',
      fmt(lat.direct.p50),
      ...relays.map((s) => `${fmt(lat[s].p50)} (${plus(added(s))})`),
      added('proxy') < 0.3 ? 'ok (added < 0.3 ms)' : 'MISSED (added < 0.3 ms)',
    ],
    ['GET latency p99 (ms)', fmt(lat.direct.p99), ...relays.map((s) => `${fmt(lat[s].p99)} (${plus(lat[s].p99 - lat.direct.p99)})`), ''],
    [`throughput (req/s, ${THROUGHPUT_CONCURRENCY} concurrent)`, ...rate(tput), tput.proxy >= 0.8 * tput.direct ? 'ok (>= 80%)' : 'MISSED (>= 80%)'],
    [`watch events/s (${WATCHERS} watchers)`, ...rate(watch), watch.proxy >= 0.8 * watch.direct ? 'ok (>= 80%)' : 'MISSED (>= 80%)'],
  ];
  if (f.h2)
    rows.push([
      'GET latency p50/p99, TLS + HTTP/2 (ms)',
      '',
      '',
      '',
      `${fmt(f.h2.p50)} / ${fmt(f.h2.p99)} (${plus(f.h2.p50 - lat.direct.p50)})`,
      'information',
    ]);
  rows.push([`${cpuNote} CPU per request (us)`, directCpu ? cpu('direct', 'request') : '', ...relays.map((s) => cpu(s, 'request')), 'information']);
  rows.push([`${cpuNote} CPU per watch event (us)`, directCpu ? cpu('direct', 'event') : '', ...relays.map((s) => cpu(s, 'event')), 'information']);
  if (!directCpu) {
    // What the proxy adds, as issue 16 judges it: its CPU over the bare relay's, in the same run.
    const ratio = (what: 'request' | 'event') => Number(cpu('proxy', what)) / Number(cpu('bare relay', what));
    for (const what of ['request', 'event'] as const) {
      const r = ratio(what);
      rows.push([
        `proxy CPU / bare relay CPU per ${what === 'event' ? 'watch event' : 'request'}`,
        '',
        '',
        '',
        Number.isFinite(r) ? fmt(r, 2) : '',
        r <= 1.25 ? 'ok (<= 1.25)' : 'MISSED (<= 1.25)',
      ]);
    }
  }
  const header = ['metric', ...SIDES, 'target (proxy)'];
  const widths = header.map((_, i) => Math.max(...[header, ...rows].map((r) => r[i]!.length)));
  const line = (r: string[]) =>
    r
      .map((c, i) => c.padEnd(widths[i]!))
      .join('  ')
      .trimEnd();
  process.stdout.write(`\n${title}\n${line(header)}\n${widths.map((w) => '-'.repeat(w)).join('  ')}\n`);
  for (const r of rows) process.stdout.write(line(r) + '\n');
  process.stdout.write('(ratios and added latencies against direct, in the same run)\n');
}

async function main(): Promise<void> {
  process.stdout.write(
    `kperturb proxy benchmark (${quick ? 'quick' : 'full'}): the clients in a process of their own (as a controller); the proxy speaks ` +
      `plain HTTP/1.1 and writes its trace to a file; ceilings: a raw TCP pipe and a bare Node HTTP relay in its place; best of ${ROUNDS} alternating rounds${separateProcesses ? '; in A each relay in a process of its own' : ''}\n`,
  );
  const own = await inOwnProcess();
  try {
    printFigures(
      'A. cluster in its own process, proxy (or ceiling relay) in another (`kperturb cluster` + `kperturb proxy`)',
      await measure(own, true, separateProcesses),
      'relay process',
      false,
    );
  } finally {
    await own.stop();
  }
  const shared = await inThisProcess();
  try {
    printFigures(
      'B. cluster and proxy (or ceiling relay) in one thread (as a kperturb run hosts them)',
      await measure(shared, false, false),
      'cluster + relay process',
      true,
    );
  } finally {
    await shared.stop();
  }
}

if (process.argv[2] === RELAY_HOST) await hostRelay(process.argv[3] as RelayKind, process.argv[4]!);
else await main();
