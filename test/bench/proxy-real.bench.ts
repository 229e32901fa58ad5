/**
 * Proxy benchmark on the real control plane (a script, not a test): GET throughput and watch events
 * per second, direct to kube-apiserver vs through the ControllerProxy in front of it, in one run,
 * with the ratios against the target (through the proxy >= 90% of direct, GET and watch).
 *
 * On the embedded cluster (proxy.bench.ts) the cluster is cheap, so any relay's own cost shows; here
 * the API server's (authentication, admission, etcd) dominates, as it does in a kperturb run on
 * the real tier. The proxy is set up as such a run sets it up (src/coordinator/run.ts): the real
 * API server as its upstream with the admin's credentials (proxyUpstreamFor), TLS towards the
 * client (HTTP/2 and HTTP/1.1 on one port), its trace written to a file.
 *
 * Beside the proxy, two ceilings are measured the same way (proxy-bench-relays.ts, startBareTlsRelay):
 * a bare Node relay (TLS both ways, the admin's token upstream, no classification, no trace), once
 * with an HTTP/1.1 upstream as the proxy's (a keep-alive connection per request in flight) and once
 * with one HTTP/2 session upstream. They say whether any Node HTTP relay reaches the target here, and
 * what an HTTP/2 upstream is worth. A third, the bare relay with plain HTTP/1.1 towards the client
 * (HTTP/1.1 GETs and watches only), says what the client side's TLS costs. The fourth and fifth,
 * the same relay written in Go (test/bench/relay-go, startGoRelay; built with the Go toolchain, its
 * rows skipped without `go`), with either upstream, say whether that ceiling is Node's or any relay's.
 *
 * Fairness, as in proxy.bench.ts: the same client process (proxy-bench-client.ts) measures both sides
 * with the same concurrency over the same protocol (both TLS), the sides' rounds alternate and each
 * side keeps its best round. This process hosts only the Node relays (one at work at a time), so its
 * CPU time is a Node relay's cost, and the Go relay's is its own process's (from /proc);
 * kube-apiserver's CPU time (read from /proc) is printed per side beside it, and the sum over every
 * process at work (clients, relay, kube-apiserver, etcd) with the bound it sets: on 2 busy cores a
 * side can reach at most direct's CPU per operation over its own (the last column).
 *
 *   npm run bench:proxy-real   (or: node dist/test/bench/proxy-real.bench.js [--quick] [--rounds N])
 */
import { fork, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ControllerProxy } from '../../proxy/index.js';
import { proxyUpstreamFor, startRealControlPlane, type RealControlPlane } from '../../src/realcluster/index.js';
import { TraceSequence, TraceWriter } from '../../src/io/trace-io.js';
import type { BenchReply, BenchRequest } from './proxy-bench-client.js';
import { statCpuMicros } from './proxy-bench-host.js';
import { startBareTlsRelay, startGoRelay, type GoRelay } from './proxy-bench-relays.js';

const quick = process.argv.includes('--quick');
const roundsArg = process.argv.indexOf('--rounds');
const ROUNDS = roundsArg > 0 ? Number(process.argv[roundsArg + 1]) : 3;
const THROUGHPUT_REQUESTS = quick ? 1000 : 4000;
const CONCURRENCY = 32;
const WATCHERS = 100;
const WATCH_CHANGES = quick ? 50 : 150;
const PATH = '/api/v1/namespaces/default/configmaps/bench';
const TARGET = 0.9;

/** The sides measured, in the order their rounds run and their columns print. */
const SIDES = ['direct', 'bare relay', 'bare relay, HTTP/2 upstream', 'bare relay, plain client', 'Go relay', 'Go relay, HTTP/2 upstream', 'proxy'] as const;
type Side = (typeof SIDES)[number];
const MEASURES = ['GET, HTTP/1.1 over TLS', 'GET, HTTP/2', 'watch events'] as const;
type Measure = (typeof MEASURES)[number];

interface Target {
  side: Side;
  url: string;
  ca: string;
  headers: Record<string, string>;
  /** CPU time (us) of the process relaying for this side so far. */
  relayCpu: () => number;
  /** The measures this side takes part in (all when absent). */
  measures?: readonly Measure[];
}

/**
 * CPU time (user + system, microseconds) of the relay and of kube-apiserver, for one measure and
 * side; and of every process at work (clients, relay, kube-apiserver, etcd): on 2 cores their sum
 * per operation bounds the rate, so direct's sum over a side's says what that side can reach.
 */
interface CpuCount {
  ops: number;
  proxyMicros: number;
  apiserverMicros: number;
  allMicros: number;
}

function cpuMicros(): number {
  const u = process.cpuUsage();
  return u.user + u.system;
}

/** A process's user + system CPU time in microseconds (0 once it is gone). */
function processCpuMicros(pid: number | undefined): number {
  if (pid === undefined) return 0;
  try {
    return statCpuMicros(`/proc/${pid}/stat`);
  } catch {
    return 0;
  }
}

class Clients {
  private readonly proc: ChildProcess = fork(fileURLToPath(new URL('./proxy-bench-client.js', import.meta.url)), [], {
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  private waiting: Array<(r: BenchReply) => void> = [];
  readonly cpu = new Map<string, CpuCount>();

  constructor(private readonly cp: RealControlPlane) {
    this.proc.on('message', (r: BenchReply) => this.waiting.shift()?.(r));
  }

  async ask<R extends BenchReply>(m: BenchRequest): Promise<R> {
    return new Promise((resolve) => {
      this.waiting.push(resolve as (r: BenchReply) => void);
      this.proc.send(m);
    });
  }

  /** Runs `work` (which reports how many operations it did) and counts both processes' CPU time against them. */
  async counted(measure: Measure, side: Side, relayCpu: () => number, work: () => Promise<number>): Promise<void> {
    const others = () => processCpuMicros(this.proc.pid) + processCpuMicros(this.cp.pids.etcd);
    const proxyBefore = relayCpu();
    const apiserverBefore = processCpuMicros(this.cp.pids.apiserver);
    const othersBefore = others();
    const ops = await work();
    const key = `${measure}/${side}`;
    const c = this.cpu.get(key) ?? { ops: 0, proxyMicros: 0, apiserverMicros: 0, allMicros: 0 };
    c.ops += ops;
    const relay = relayCpu() - proxyBefore;
    const apiserver = processCpuMicros(this.cp.pids.apiserver) - apiserverBefore;
    c.proxyMicros += relay;
    c.apiserverMicros += apiserver;
    c.allMicros += relay + apiserver + others() - othersBefore;
    this.cpu.set(key, c);
  }

  async close(): Promise<void> {
    const exited = new Promise<void>((r) => this.proc.once('exit', () => r()));
    this.proc.disconnect();
    await exited;
  }
}

/** The Go relay's side (its own token, its own process's CPU), or none with the reason printed. */
function goTarget(side: Side, relay: GoRelay | string): Target[] {
  if (typeof relay === 'string') {
    process.stdout.write(`(${side}: skipped, ${relay})\n`);
    return [];
  }
  return [{ side, url: relay.url, ca: relay.caPem, headers: { authorization: `Bearer ${relay.token}` }, relayCpu: () => processCpuMicros(relay.pid) }];
}

function fmt(n: number, digits = 0): string {
  return n.toFixed(digits);
}

async function main(): Promise<void> {
  process.stdout.write(
    `kperturb proxy benchmark on the real control plane (${quick ? 'quick' : 'full'}): kube-apiserver + etcd, the clients in a process of ` +
      `their own, the proxy in this one (TLS to the client, the admin's credentials upstream, its trace to a file) and beside it bare Node and Go relays (ceilings); best of ${ROUNDS} alternating rounds\n`,
  );
  const cp = await startRealControlPlane({ controllerManager: false });
  const dir = mkdtempSync(join(tmpdir(), 'kperturb-proxy-real-bench-'));
  const trace = new TraceWriter(join(dir, 'controller.trace.jsonl'), 'controller', new TraceSequence());
  const proxy = await ControllerProxy.start({ ...proxyUpstreamFor(cp.url, cp.clientOptions()), trace, tls: true, log: () => undefined });
  const admin = { authorization: `Bearer ${cp.token}` };
  const upstream = { url: cp.url, caPem: cp.caPem, token: cp.token };
  const bareRelay = await startBareTlsRelay(upstream, 'http/1.1');
  const bareH2Relay = await startBareTlsRelay(upstream, 'h2');
  const barePlainRelay = await startBareTlsRelay(upstream, 'http/1.1', 'plain');
  const goRelay = await startGoRelay(upstream, 'http/1.1');
  const goH2Relay = typeof goRelay === 'string' ? goRelay : await startGoRelay(upstream, 'h2');
  const clients = new Clients(cp);
  try {
    await clients.ask({ op: 'create', cluster: cp.url, name: 'bench', ca: cp.caPem, clusterHeaders: admin });
    const targets: Target[] = [
      { side: 'direct', url: cp.url, ca: cp.caPem, headers: admin, relayCpu: cpuMicros },
      // The bare Node relays put the admin's token in place of whatever the client sends.
      { side: 'bare relay', url: bareRelay.url, ca: bareRelay.caPem, headers: {}, relayCpu: cpuMicros },
      { side: 'bare relay, HTTP/2 upstream', url: bareH2Relay.url, ca: bareH2Relay.caPem, headers: {}, relayCpu: cpuMicros },
      {
        side: 'bare relay, plain client',
        url: barePlainRelay.url,
        ca: barePlainRelay.caPem,
        headers: {},
        relayCpu: cpuMicros,
        measures: ['GET, HTTP/1.1 over TLS', 'watch events'],
      },
      ...goTarget('Go relay', goRelay),
      ...goTarget('Go relay, HTTP/2 upstream', goH2Relay),
      { side: 'proxy', url: proxy.url, ca: proxy.caPem!, headers: { authorization: `Bearer ${proxy.controllerToken}` }, relayCpu: cpuMicros },
    ];
    const taking = (measure: Measure) => targets.filter((t) => t.measures?.includes(measure) ?? true);
    const rates = new Map<string, number[]>();
    const note = (measure: Measure, side: Side, rate: number) => {
      const key = `${measure}/${side}`;
      rates.set(key, [...(rates.get(key) ?? []), rate]);
    };
    let watched = 0;
    for (let round = 0; round < ROUNDS; round++) {
      for (const [measure, op] of [
        ['GET, HTTP/1.1 over TLS', 'throughput'],
        ['GET, HTTP/2', 'h2-throughput'],
      ] as const) {
        for (const t of taking(measure)) {
          await clients.counted(measure, t.side, t.relayCpu, async () => {
            const r = await clients.ask<Extract<BenchReply, { op: 'throughput' }>>({
              op,
              url: t.url,
              ca: t.ca,
              path: PATH,
              headers: t.headers,
              n: THROUGHPUT_REQUESTS,
              concurrency: CONCURRENCY,
            });
            note(measure, t.side, r.perSecond);
            return THROUGHPUT_REQUESTS;
          });
        }
      }
      for (const t of taking('watch events')) {
        await clients.counted('watch events', t.side, t.relayCpu, async () => {
          const r = await clients.ask<Extract<BenchReply, { op: 'watch' }>>({
            op: 'watch',
            url: t.url,
            ca: t.ca,
            cluster: cp.url,
            clusterCa: cp.caPem,
            clusterHeaders: admin,
            name: `watched-${watched++}`,
            headers: t.headers,
            watchers: WATCHERS,
            changes: WATCH_CHANGES,
          });
          if (r.received < r.expected) process.stdout.write(`  (${t.side}: only ${r.received}/${r.expected} events within 60 s)\n`);
          note('watch events', t.side, r.received / r.seconds);
          return r.received;
        });
      }
      process.stderr.write(`round ${round + 1}/${ROUNDS} done\n`);
    }
    printFigures(rates, clients.cpu);
  } finally {
    await clients.close();
    await proxy.stop();
    await bareRelay.stop();
    await bareH2Relay.stop();
    await barePlainRelay.stop();
    if (typeof goRelay !== 'string') await goRelay.stop();
    if (typeof goH2Relay !== 'string') await goH2Relay.stop();
    await trace.close();
    await cp.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** One table per measure, a row per side that took part (a side per row: seven do not fit side by side). */
function printFigures(rates: Map<string, number[]>, cpu: Map<string, CpuCount>): void {
  const best = (measure: Measure, side: Side) => Math.max(...(rates.get(`${measure}/${side}`) ?? [0]));
  const perOp = (measure: Measure, side: Side, which: 'proxyMicros' | 'apiserverMicros' | 'allMicros') => {
    const c = cpu.get(`${measure}/${side}`);
    return c && c.ops > 0 ? fmt(c[which] / c.ops, 1) : '';
  };
  // What a side could reach if the 2 cores were the only limit: direct's CPU per operation over the side's.
  const cpuBound = (measure: Measure, side: Side) => {
    const d = cpu.get(`${measure}/direct`);
    const c = cpu.get(`${measure}/${side}`);
    return d && c && d.ops > 0 && c.ops > 0 && c.allMicros > 0 ? fmt((100 * (d.allMicros / d.ops)) / (c.allMicros / c.ops), 1) : '';
  };
  for (const m of MEASURES) {
    const unit = m === 'watch events' ? `events/s, ${WATCHERS} watchers` : `req/s, ${CONCURRENCY} concurrent`;
    const op = m === 'watch events' ? 'event' : 'request';
    const direct = best(m, 'direct');
    const header = [
      `${m} (${unit})`,
      'best',
      '% of direct',
      'every round',
      `relay CPU per ${op} (us)`,
      `kube-apiserver CPU per ${op} (us)`,
      `all processes' CPU per ${op} (us)`,
      `direct's all-process CPU per ${op} / this side's (%)`,
    ];
    const rows = SIDES.filter((side) => rates.has(`${m}/${side}`)).map((side) => [
      side,
      fmt(best(m, side)),
      side === 'direct' ? '' : fmt((100 * best(m, side)) / direct, 1),
      (rates.get(`${m}/${side}`) ?? []).map((r) => fmt(r)).join(' / '),
      side === 'direct' ? '' : perOp(m, side, 'proxyMicros'),
      perOp(m, side, 'apiserverMicros'),
      perOp(m, side, 'allMicros'),
      side === 'direct' ? '' : cpuBound(m, side),
    ]);
    const widths = header.map((_, i) => Math.max(...[header, ...rows].map((r) => r[i]!.length)));
    const line = (r: string[]) =>
      r
        .map((c, i) => c.padEnd(widths[i]!))
        .join('  ')
        .trimEnd();
    process.stdout.write(`\n${line(header)}\n${widths.map((w) => '-'.repeat(w)).join('  ')}\n`);
    for (const r of rows) process.stdout.write(line(r) + '\n');
    process.stdout.write(`proxy: target (>= ${fmt(TARGET * 100)}% of direct) ${best(m, 'proxy') / direct >= TARGET ? 'ok' : 'MISSED'}\n`);
  }
  process.stdout.write('(best round per side; percentages against direct in the same run; CPU per operation summed over the rounds)\n');
}

await main();
