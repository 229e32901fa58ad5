/**
 * Proxy benchmark (a script, not a test): direct vs through the proxy against the embedded cluster,
 * in one run. Prints GET latency p50/p99, request throughput and watch events per second with 100
 * watchers, and the ratios against the targets (added p50 < 0.3 ms; throughput and watch rate at
 * least 80% of direct). The proxy writes its trace to a file as in a real run.
 *
 *   npm run bench:proxy            (or: node dist/test/bench/proxy.bench.js [--quick])
 */
import http from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import { Worker } from 'node:worker_threads';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { EmbeddedCluster } from '../../src/cluster/index.js';
import { ControllerProxy } from '../../proxy/index.js';
import { TraceSequence, TraceWriter } from '../../src/model/trace-io.js';
import type { BenchReply, BenchRequest } from './proxy-bench-client.js';

const quick = process.argv.includes('--quick');
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

/** The clients run in a worker thread, as a controller runs in its own process. */
class Clients {
  private readonly worker = new Worker(new URL('./proxy-bench-client.js', import.meta.url));
  private waiting: Array<(r: BenchReply) => void> = [];

  constructor() {
    this.worker.on('message', (r: BenchReply) => this.waiting.shift()?.(r));
  }

  private ask(m: BenchRequest): Promise<BenchReply> {
    return new Promise((resolve) => {
      this.waiting.push(resolve);
      this.worker.postMessage(m);
    });
  }

  private next(): Promise<BenchReply> {
    return new Promise((resolve) => this.waiting.push(resolve));
  }

  async latency(t: Target): Promise<{ p50: number; p99: number }> {
    const r = await this.ask({ op: 'latency', url: t.url, path: PATH, headers: t.headers, n: LATENCY_REQUESTS });
    return r as { p50: number; p99: number };
  }

  async h2Latency(t: Target, ca: string): Promise<{ p50: number; p99: number }> {
    const r = await this.ask({ op: 'h2-latency', url: t.url, path: PATH, headers: t.headers, n: LATENCY_REQUESTS, ca });
    return r as { p50: number; p99: number };
  }

  async throughput(t: Target): Promise<number> {
    const r = await this.ask({ op: 'throughput', url: t.url, path: PATH, headers: t.headers, n: THROUGHPUT_REQUESTS, concurrency: THROUGHPUT_CONCURRENCY });
    return (r as { perSecond: number }).perSecond;
  }

  /** 100 watchers of one object; WATCH_CHANGES patches; the rate at which all watchers together receive them. */
  async watchRate(t: Target, cluster: ClusterHandle, round: number): Promise<number> {
    const name = `watched-${round}`;
    const created = await directRequest(cluster, 'POST', '/api/v1/namespaces/default/configmaps', { metadata: { name }, data: { n: '0' } });
    const rv = (created as { metadata: { resourceVersion: string } }).metadata.resourceVersion;
    const expected = WATCHERS * WATCH_CHANGES;
    const ready = this.ask({
      op: 'watch',
      url: t.url,
      headers: t.headers,
      path: `/api/v1/namespaces/default/configmaps?watch=1&resourceVersion=${rv}&fieldSelector=metadata.name%3D${name}`,
      watchers: WATCHERS,
      expectedLines: expected,
    });
    await ready;
    const done = this.next();
    const start = process.hrtime.bigint();
    for (let i = 1; i <= WATCH_CHANGES; i++) {
      await directRequest(cluster, 'PATCH', `/api/v1/namespaces/default/configmaps/${name}`, { data: { n: String(i) } }, 'application/merge-patch+json');
    }
    const { received } = (await done) as { received: number };
    const seconds = Number(process.hrtime.bigint() - start) / 1e9;
    if (received < expected) process.stdout.write(`  (${t.name}: only ${received}/${expected} events within 60 s)\n`);
    return received / seconds;
  }

  async close(): Promise<void> {
    await this.worker.terminate();
  }
}

const directAgent = new http.Agent({ keepAlive: true, maxSockets: 4 });
function directRequest(cluster: ClusterHandle, method: string, path: string, body: unknown, contentType = 'application/json'): Promise<unknown> {
  const payload = Buffer.from(JSON.stringify(body));
  return new Promise((resolve, reject) => {
    const req = http.request(
      { hostname: '127.0.0.1', port: cluster.port, method, path, agent: directAgent, headers: { 'content-type': contentType, 'content-length': payload.length } },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve(JSON.parse(Buffer.concat(chunks).toString('utf8'))));
      },
    );
    req.on('error', reject);
    req.end(payload);
  });
}

function fmt(n: number, digits = 3): string {
  return n.toFixed(digits);
}

interface ClusterHandle {
  url: string;
  port: number;
  stop(): Promise<void>;
}

async function inThisThread(): Promise<ClusterHandle> {
  const c = await EmbeddedCluster.start({ bookmarkIntervalMs: 0 });
  return { url: c.url, port: c.port, stop: () => c.stop() };
}

async function inOwnThread(): Promise<ClusterHandle> {
  const worker = new Worker(new URL('./proxy-bench-cluster.js', import.meta.url));
  const port = await new Promise<number>((resolve) => worker.once('message', (m: { port: number }) => resolve(m.port)));
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    stop: async () => {
      worker.postMessage('stop');
      await new Promise<void>((r) => worker.once('exit', () => r()));
    },
  };
}

interface Figures {
  lat: { direct: { p50: number; p99: number }; proxy: { p50: number; p99: number } };
  tput: { direct: number; proxy: number };
  watch: { direct: number; proxy: number };
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
    await directRequest(cluster, 'POST', '/api/v1/namespaces/default/configmaps', { metadata: { name: 'bench' }, data: { a: 'x'.repeat(200) } });
    const direct: Target = { name: 'direct', url: cluster.url, headers: {} };
    const viaProxy: Target = { name: 'proxy', url: proxy.url, headers: { authorization: `Bearer ${proxy.controllerToken}` } };
    // Alternate direct and proxy rounds; keep each side's best, so background noise hurts both alike.
    const lat = { direct: [] as Array<{ p50: number; p99: number }>, proxy: [] as Array<{ p50: number; p99: number }> };
    const tput = { direct: [] as number[], proxy: [] as number[] };
    const watch = { direct: [] as number[], proxy: [] as number[] };
    for (let round = 0; round < 2; round++) {
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

function printFigures(title: string, f: Figures): void {
  const { lat, tput, watch } = f;
  const added = lat.proxy.p50 - lat.direct.p50;
  const rows = [
    ['GET latency p50 (ms)', fmt(lat.direct.p50), fmt(lat.proxy.p50), `added ${fmt(added)} ms`, added < 0.3 ? 'ok (< 0.3 ms)' : 'MISSED (< 0.3 ms)'],
    ['GET latency p99 (ms)', fmt(lat.direct.p99), fmt(lat.proxy.p99), `added ${fmt(lat.proxy.p99 - lat.direct.p99)} ms`, ''],
    [`throughput (req/s, ${THROUGHPUT_CONCURRENCY} concurrent)`, fmt(tput.direct, 0), fmt(tput.proxy, 0), `${fmt((100 * tput.proxy) / tput.direct, 1)}% of direct`, tput.proxy >= 0.8 * tput.direct ? 'ok (>= 80%)' : 'MISSED (>= 80%)'],
    [`watch events/s (${WATCHERS} watchers)`, fmt(watch.direct, 0), fmt(watch.proxy, 0), `${fmt((100 * watch.proxy) / watch.direct, 1)}% of direct`, watch.proxy >= 0.8 * watch.direct ? 'ok (>= 80%)' : 'MISSED (>= 80%)'],
  ];
  if (f.h2) rows.push(['GET latency p50/p99, TLS + HTTP/2 (ms)', '', `${fmt(f.h2.p50)} / ${fmt(f.h2.p99)}`, `added ${fmt(f.h2.p50 - lat.direct.p50)} ms (p50)`, 'information']);
  const header = ['metric', 'direct', 'proxy', 'difference', 'target'];
  const widths = header.map((_, i) => Math.max(...[header, ...rows].map((r) => r[i]!.length)));
  const line = (r: string[]) => r.map((c, i) => c.padEnd(widths[i]!)).join('  ').trimEnd();
  process.stdout.write(`\n${title}\n${line(header)}\n${widths.map((w) => '-'.repeat(w)).join('  ')}\n`);
  for (const r of rows) process.stdout.write(line(r) + '\n');
}

async function main(): Promise<void> {
  process.stdout.write(
    `kperturb proxy benchmark (${quick ? 'quick' : 'full'}): clients in a worker thread (as a controller process); the proxy speaks ` +
      'plain HTTP/1.1 and writes its trace to a file; best of 2 alternating rounds\n',
  );
  const own = await inOwnThread();
  try {
    printFigures('A. cluster in its own thread, proxy in another (`kperturb cluster` + `kperturb proxy`)', await measure(own, true));
  } finally {
    await own.stop();
  }
  const shared = await inThisThread();
  try {
    printFigures('B. cluster and proxy in one thread (as a kperturb run hosts them)', await measure(shared, false));
  } finally {
    await shared.stop();
  }
  directAgent.destroy();
}

await main();
