/**
 * The load generator of proxy.bench.ts, in a worker thread: the clients (like a controller process)
 * must not share the event loop of the cluster and the proxy they measure.
 */
import http from 'node:http';
import http2 from 'node:http2';
import { parentPort } from 'node:worker_threads';

export type BenchRequest =
  | { op: 'latency'; url: string; path: string; headers: Record<string, string>; n: number }
  | { op: 'h2-latency'; url: string; path: string; headers: Record<string, string>; n: number; ca: string }
  | { op: 'throughput'; url: string; path: string; headers: Record<string, string>; n: number; concurrency: number }
  | { op: 'watch'; url: string; path: string; headers: Record<string, string>; watchers: number; expectedLines: number };

export type BenchReply =
  | { op: 'latency'; p50: number; p99: number }
  | { op: 'throughput'; perSecond: number }
  | { op: 'watch-ready' }
  | { op: 'watch-done'; received: number };

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

function get(agent: http.Agent, url: URL, path: string, headers: Record<string, string>): Promise<void> {
  return new Promise((resolve, reject) => {
    const req = http.request({ hostname: url.hostname, port: url.port, path, agent, headers: { accept: 'application/json', ...headers } }, (res) => {
      res.on('data', () => undefined);
      res.on('end', () => (res.statusCode === 200 ? resolve() : reject(new Error(`HTTP ${res.statusCode}`))));
    });
    req.on('error', reject);
    req.end();
  });
}

async function timed(n: number, one: () => Promise<void>): Promise<{ p50: number; p99: number }> {
  for (let i = 0; i < Math.min(200, n); i++) await one();
  const times: number[] = [];
  for (let i = 0; i < n; i++) {
    const s = process.hrtime.bigint();
    await one();
    times.push(Number(process.hrtime.bigint() - s) / 1e6);
  }
  times.sort((a, b) => a - b);
  return { p50: percentile(times, 50), p99: percentile(times, 99) };
}

async function handle(m: BenchRequest): Promise<BenchReply | undefined> {
  const url = new URL(m.url);
  switch (m.op) {
    case 'latency': {
      const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
      const r = await timed(m.n, () => get(agent, url, m.path, m.headers));
      agent.destroy();
      return { op: 'latency', ...r };
    }
    case 'h2-latency': {
      const session = http2.connect(m.url, { ca: m.ca });
      const one = () =>
        new Promise<void>((resolve, reject) => {
          const req = session.request({ ':path': m.path, accept: 'application/json', ...m.headers });
          req.on('data', () => undefined);
          req.on('end', () => resolve());
          req.on('error', reject);
          req.end();
        });
      const r = await timed(m.n, one);
      session.close();
      return { op: 'latency', ...r };
    }
    case 'throughput': {
      const agent = new http.Agent({ keepAlive: true, maxSockets: m.concurrency });
      let next = 0;
      const start = process.hrtime.bigint();
      await Promise.all(
        Array.from({ length: m.concurrency }, async () => {
          while (next < m.n) {
            next++;
            await get(agent, url, m.path, m.headers);
          }
        }),
      );
      const seconds = Number(process.hrtime.bigint() - start) / 1e9;
      agent.destroy();
      return { op: 'throughput', perSecond: m.n / seconds };
    }
    case 'watch': {
      const agent = new http.Agent({ keepAlive: false, maxSockets: Infinity });
      let received = 0;
      const requests: http.ClientRequest[] = [];
      let finish: () => void = () => undefined;
      const all = new Promise<void>((r) => (finish = r));
      await Promise.all(
        Array.from(
          { length: m.watchers },
          () =>
            new Promise<void>((resolve, reject) => {
              const req = http.request({ hostname: url.hostname, port: url.port, agent, headers: m.headers, path: m.path }, (res) => {
                let tail = '';
                res.setEncoding('utf8');
                res.on('data', (chunk: string) => {
                  const lines = (tail + chunk).split('\n');
                  tail = lines.pop() ?? '';
                  received += lines.length;
                  if (received >= m.expectedLines) finish();
                });
                resolve();
              });
              req.on('error', reject);
              req.end();
              requests.push(req);
            }),
        ),
      );
      parentPort!.postMessage({ op: 'watch-ready' } satisfies BenchReply);
      await Promise.race([all, new Promise<void>((r) => setTimeout(r, 60_000).unref())]);
      for (const r of requests) r.destroy();
      agent.destroy();
      return { op: 'watch-done', received };
    }
  }
}

parentPort?.on('message', (m: BenchRequest) => {
  void handle(m).then((reply) => reply && parentPort!.postMessage(reply));
});
