/**
 * Proxy benchmark (a script, not a test): direct vs through the proxy against the embedded cluster,
 * in one run. Prints GET latency p50/p99, request throughput and watch events per second with 100
 * watchers, and the ratios against the targets (added p50 < 0.3 ms; throughput and watch rate at
 * least 80% of direct). The proxy writes its trace to a file as in a real run.
 *
 * Fairness: the same client process (proxy-bench-client.ts) measures both sides with the same
 * concurrency against the same cluster, direct and proxied rounds alternate and each side keeps its
 * best round. The clients and (in A) the cluster run in processes of their own, so this process hosts
 * only the proxy and its CPU time is the proxy's cost, printed per request and per event.
 *
 *   npm run bench:proxy            (or: node dist/test/bench/proxy.bench.js [--quick] [--rounds N])
 */
import { fork, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { EmbeddedCluster } from '../../src/cluster/index.js';
import { ControllerProxy } from '../../proxy/index.js';
import { TraceSequence, TraceWriter } from '../../src/model/trace-io.js';
import type { BenchReply, BenchRequest } from './proxy-bench-client.js';

const quick = process.argv.includes('--quick');
const roundsArg = process.argv.indexOf('--rounds');
const ROUNDS = roundsArg > 0 ? Number(process.argv[roundsArg + 1]) : 2;
const LATENCY_REQUESTS = quick ? 500 : 3000;
const THROUGHPUT_REQUESTS = quick ? 2000 : 10000;
const THROUGHPUT_CONCURRENCY = 32;
const WATCHERS = 100;
const WATCH_CHANGES = quick ? 100 : 300;
const PATH = '/api/v1/namespaces/default/configmaps/bench';

interface Target {
  name: string;
  url: string;
  headers: Record<string, string>;
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
  /** CPU time of this process spent during the proxied rounds, per operation. */
  readonly cpu = { requests: 0, requestMicros: 0, events: 0, eventMicros: 0 };

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
    const before = cpuMicros();
    const r = await this.ask<Extract<BenchReply, { op: 'latency' }>>({ op: 'latency', url: t.url, path: PATH, headers: t.headers, n: LATENCY_REQUESTS });
    this.count(t, 'request', Math.min(200, LATENCY_REQUESTS) + LATENCY_REQUESTS, cpuMicros() - before);
    return r;
  }

  async h2Latency(t: Target, ca: string): Promise<{ p50: number; p99: number }> {
    return this.ask<Extract<BenchReply, { op: 'latency' }>>({ op: 'h2-latency', url: t.url, path: PATH, headers: t.headers, n: LATENCY_REQUESTS, ca });
  }

  async throughput(t: Target): Promise<number> {
    const before = cpuMicros();
    const r = await this.ask<Extract<BenchReply, { op: 'throughput' }>>({ op: 'throughput', url: t.url, path: PATH, headers: t.headers, n: THROUGHPUT_REQUESTS, concurrency: THROUGHPUT_CONCURRENCY });
    this.count(t, 'request', THROUGHPUT_REQUESTS, cpuMicros() - before);
    return r.perSecond;
  }

  /** 100 watchers of one object; WATCH_CHANGES patches (made directly on the cluster); the rate at which all watchers together receive them. */
  async watchRate(t: Target, cluster: ClusterHandle, round: number): Promise<number> {
    const before = cpuMicros();
    const r = await this.ask<Extract<BenchReply, { op: 'watch' }>>({
      op: 'watch',
      url: t.url,
      cluster: cluster.url,
      name: `watched-${round}`,
      headers: t.headers,
      watchers: WATCHERS,
      changes: WATCH_CHANGES,
    });
    this.count(t, 'event', r.received, cpuMicros() - before);
    if (r.received < r.expected) process.stdout.write(`  (${t.name}: only ${r.received}/${r.expected} events within 60 s)\n`);
    return r.received / r.seconds;
  }

  private count(t: Target, what: 'request' | 'event', n: number, micros: number): void {
    if (t.name !== 'proxy') return;
    if (what === 'request') {
      this.cpu.requests += n;
      this.cpu.requestMicros += micros;
    } else {
      this.cpu.events += n;
      this.cpu.eventMicros += micros;
    }
  }

  async close(): Promise<void> {
    const exited = new Promise<void>((r) => this.proc.once('exit', () => r()));
    this.proc.disconnect();
    await exited;
  }
}

function fmt(n: number, digits = 3): string {
  return n.toFixed(digits);
}

interface ClusterHandle {
  url: string;
  stop(): Promise<void>;
}

async function inThisProcess(): Promise<ClusterHandle> {
  const c = await EmbeddedCluster.start({ bookmarkIntervalMs: 0 });
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

interface Figures {
  lat: { direct: { p50: number; p99: number }; proxy: { p50: number; p99: number } };
  tput: { direct: number; proxy: number };
  watch: { direct: number; proxy: number };
  cpu: Clients['cpu'];
  h2?: { p50: number; p99: number };
}

async function measure(cluster: ClusterHandle, withH2: boolean): Promise<Figures> {
  const dir = mkdtempSync(join(tmpdir(), 'kperturb-proxy-bench-'));
  const trace = new TraceWriter(join(dir, 'controller.trace.jsonl'), 'controller', new TraceSequence());
  const proxy = await ControllerProxy.start({ upstream: cluster.url, trace, log: () => undefined });
  const tlsTrace = new TraceWriter(join(dir, 'tls.trace.jsonl'), 'controller', new TraceSequence());
  const tlsProxy = withH2 ? await ControllerProxy.start({ upstream: cluster.url, trace: tlsTrace, tls: true, log: () => undefined }) : undefined;
  const clients = new Clients();
  try {
    await clients.create(cluster, 'bench');
    const direct: Target = { name: 'direct', url: cluster.url, headers: {} };
    const viaProxy: Target = { name: 'proxy', url: proxy.url, headers: { authorization: `Bearer ${proxy.controllerToken}` } };
    // Alternate direct and proxy rounds; keep each side's best, so background noise hurts both alike.
    const lat = { direct: [] as Array<{ p50: number; p99: number }>, proxy: [] as Array<{ p50: number; p99: number }> };
    const tput = { direct: [] as number[], proxy: [] as number[] };
    const watch = { direct: [] as number[], proxy: [] as number[] };
    for (let round = 0; round < ROUNDS; round++) {
      lat.direct.push(await clients.latency(direct));
      lat.proxy.push(await clients.latency(viaProxy));
      tput.direct.push(await clients.throughput(direct));
      tput.proxy.push(await clients.throughput(viaProxy));
      watch.direct.push(await clients.watchRate(direct, cluster, round * 2));
      watch.proxy.push(await clients.watchRate(viaProxy, cluster, round * 2 + 1));
    }
    const best = (xs: Array<{ p50: number; p99: number }>) => xs.reduce((a, b) => (b.p50 < a.p50 ? b : a));
    const figures: Figures = {
      lat: { direct: best(lat.direct), proxy: best(lat.proxy) },
      tput: { direct: Math.max(...tput.direct), proxy: Math.max(...tput.proxy) },
      watch: { direct: Math.max(...watch.direct), proxy: Math.max(...watch.proxy) },
      cpu: clients.cpu,
    };
    if (tlsProxy) {
      const viaTls: Target = { name: 'proxy-tls', url: tlsProxy.url, headers: { authorization: `Bearer ${tlsProxy.controllerToken}` } };
      figures.h2 = await clients.h2Latency(viaTls, tlsProxy.caPem!);
    }
    return figures;
  } finally {
    await clients.close();
    await proxy.stop();
    await tlsProxy?.stop();
    await trace.close();
    await tlsTrace.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

function printFigures(title: string, f: Figures, cpuNote: string): void {
  const { lat, tput, watch } = f;
  const added = lat.proxy.p50 - lat.direct.p50;
  const rows = [
    ['GET latency p50 (ms)', fmt(lat.direct.p50), fmt(lat.proxy.p50), `added ${fmt(added)} ms`, added < 0.3 ? 'ok (< 0.3 ms)' : 'MISSED (< 0.3 ms)'],
    ['GET latency p99 (ms)', fmt(lat.direct.p99), fmt(lat.proxy.p99), `added ${fmt(lat.proxy.p99 - lat.direct.p99)} ms`, ''],
    [`throughput (req/s, ${THROUGHPUT_CONCURRENCY} concurrent)`, fmt(tput.direct, 0), fmt(tput.proxy, 0), `${fmt((100 * tput.proxy) / tput.direct, 1)}% of direct`, tput.proxy >= 0.8 * tput.direct ? 'ok (>= 80%)' : 'MISSED (>= 80%)'],
    [`watch events/s (${WATCHERS} watchers)`, fmt(watch.direct, 0), fmt(watch.proxy, 0), `${fmt((100 * watch.proxy) / watch.direct, 1)}% of direct`, watch.proxy >= 0.8 * watch.direct ? 'ok (>= 80%)' : 'MISSED (>= 80%)'],
  ];
  if (f.h2) rows.push(['GET latency p50/p99, TLS + HTTP/2 (ms)', '', `${fmt(f.h2.p50)} / ${fmt(f.h2.p99)}`, `added ${fmt(f.h2.p50 - lat.direct.p50)} ms (p50)`, 'information']);
  rows.push([`${cpuNote} CPU per proxied request (us)`, '', fmt(f.cpu.requestMicros / f.cpu.requests, 1), '', 'information']);
  rows.push([`${cpuNote} CPU per proxied watch event (us)`, '', fmt(f.cpu.eventMicros / f.cpu.events, 1), '', 'information']);
  const header = ['metric', 'direct', 'proxy', 'difference', 'target'];
  const widths = header.map((_, i) => Math.max(...[header, ...rows].map((r) => r[i]!.length)));
  const line = (r: string[]) => r.map((c, i) => c.padEnd(widths[i]!)).join('  ').trimEnd();
  process.stdout.write(`\n${title}\n${line(header)}\n${widths.map((w) => '-'.repeat(w)).join('  ')}\n`);
  for (const r of rows) process.stdout.write(line(r) + '\n');
}

async function main(): Promise<void> {
  process.stdout.write(
    `kperturb proxy benchmark (${quick ? 'quick' : 'full'}): the clients in a process of their own (as a controller); the proxy speaks ` +
      `plain HTTP/1.1 and writes its trace to a file; best of ${ROUNDS} alternating rounds\n`,
  );
  const own = await inOwnProcess();
  try {
    printFigures('A. cluster in its own process, proxy in another (`kperturb cluster` + `kperturb proxy`)', await measure(own, true), 'proxy process');
  } finally {
    await own.stop();
  }
  const shared = await inThisProcess();
  try {
    printFigures('B. cluster and proxy in one thread (as a kperturb run hosts them)', await measure(shared, false), 'cluster + proxy process');
  } finally {
    await shared.stop();
  }
}

await main();
