/**
 * The load generator of proxy.bench.ts, in a process of its own (like a controller process): the
 * clients must not share an event loop with the cluster or the proxy they measure. The same code
 * measures the direct and the proxied side. Talks to the bench over the IPC channel of `fork`.
 */
import http from 'node:http';
import http2 from 'node:http2';
import https from 'node:https';

/**
 * Where requests go: `ca` for an https:// server (the real control plane, a TLS proxy); `headers`
 * carry its credentials.
 */
interface Tls {
  ca?: string;
}

export type BenchRequest =
  | ({ op: 'create'; cluster: string; name: string; clusterHeaders?: Record<string, string> } & Tls)
  | ({ op: 'latency'; url: string; path: string; headers: Record<string, string>; n: number } & Tls)
  | { op: 'h2-latency'; url: string; path: string; headers: Record<string, string>; n: number; ca: string }
  | ({ op: 'throughput'; url: string; path: string; headers: Record<string, string>; n: number; concurrency: number } & Tls)
  | { op: 'h2-throughput'; url: string; path: string; headers: Record<string, string>; n: number; concurrency: number; ca: string }
  | {
      op: 'watch';
      /** CA of `url` (https). */
      ca?: string;
      /** CA and credentials of `cluster` (https), for the changes. */
      clusterCa?: string;
      clusterHeaders?: Record<string, string>;
      /** Where the watchers connect (the cluster or the proxy). */
      url: string;
      /** Where the changes are made: always the cluster itself, as another client would. */
      cluster: string;
      name: string;
      headers: Record<string, string>;
      watchers: number;
      changes: number;
    };

export type BenchReply =
  | { op: 'created' }
  | { op: 'latency'; p50: number; p99: number }
  | { op: 'throughput'; perSecond: number }
  | { op: 'watch'; received: number; expected: number; seconds: number };

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

/** A keep-alive agent for `url`: https (trusting `ca`) or plain http. */
function agentFor(url: URL, maxSockets: number, ca: string | undefined, keepAlive = true): http.Agent {
  return url.protocol === 'https:' ? new https.Agent({ keepAlive, maxSockets, ca }) : new http.Agent({ keepAlive, maxSockets });
}

function requestFor(url: URL): typeof http.request {
  return url.protocol === 'https:' ? https.request : http.request;
}

function get(agent: http.Agent, url: URL, path: string, headers: Record<string, string>): Promise<void> {
  return new Promise((resolve, reject) => {
    const req = requestFor(url)({ hostname: url.hostname, port: url.port, path, agent, headers: { accept: 'application/json', ...headers } }, (res) => {
      res.on('data', () => undefined);
      res.on('end', () => (res.statusCode === 200 ? resolve() : reject(new Error(`HTTP ${res.statusCode}`))));
    });
    req.on('error', reject);
    req.end();
  });
}

function send(
  agent: http.Agent,
  base: string,
  method: string,
  path: string,
  body: unknown,
  contentType = 'application/json',
  headers: Record<string, string> = {},
): Promise<unknown> {
  const url = new URL(base);
  const payload = Buffer.from(JSON.stringify(body));
  return new Promise((resolve, reject) => {
    const req = requestFor(url)(
      { hostname: url.hostname, port: url.port, method, path, agent, headers: { ...headers, 'content-type': contentType, 'content-length': payload.length } },
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

/** One GET on an HTTP/2 session; rejects unless the answer is 200. */
function h2Get(session: http2.ClientHttp2Session, path: string, headers: Record<string, string>): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    const req = session.request({ ':path': path, accept: 'application/json', ...headers });
    req.on('response', (h) => {
      if (h[':status'] !== 200) reject(new Error(`HTTP ${String(h[':status'])}`));
    });
    req.on('data', () => undefined);
    req.on('end', () => resolve());
    req.on('error', reject);
    req.end();
  });
}

/** `n` calls of `one`, `concurrency` at a time: how many per second. */
async function requestsPerSecond(n: number, concurrency: number, one: () => Promise<void>): Promise<number> {
  let next = 0;
  const start = process.hrtime.bigint();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < n) {
        next++;
        await one();
      }
    }),
  );
  return n / (Number(process.hrtime.bigint() - start) / 1e9);
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

/** The agent the changes go through, one per cluster (and CA). */
const writers = new Map<string, http.Agent>();
function writerFor(cluster: string, ca: string | undefined): http.Agent {
  let agent = writers.get(cluster);
  if (!agent) writers.set(cluster, (agent = agentFor(new URL(cluster), 1, ca)));
  return agent;
}

/** `watchers` watches of one object, `changes` patches of it; how fast all watchers together receive them. */
async function watchRate(m: Extract<BenchRequest, { op: 'watch' }>): Promise<BenchReply> {
  const writer = writerFor(m.cluster, m.clusterCa);
  const clusterHeaders = m.clusterHeaders ?? {};
  const created = (await send(
    writer,
    m.cluster,
    'POST',
    '/api/v1/namespaces/default/configmaps',
    { metadata: { name: m.name }, data: { n: '0' } },
    undefined,
    clusterHeaders,
  )) as {
    metadata: { resourceVersion: string };
  };
  const url = new URL(m.url);
  const path = `/api/v1/namespaces/default/configmaps?watch=1&resourceVersion=${created.metadata.resourceVersion}&fieldSelector=metadata.name%3D${m.name}`;
  const expected = m.watchers * m.changes;
  const agent = agentFor(url, Infinity, m.ca, false);
  let received = 0;
  const requests: http.ClientRequest[] = [];
  let finish: () => void = () => undefined;
  const all = new Promise<void>((r) => (finish = r));
  await Promise.all(
    Array.from(
      { length: m.watchers },
      () =>
        new Promise<void>((resolve, reject) => {
          const req = requestFor(url)({ hostname: url.hostname, port: url.port, agent, headers: m.headers, path }, (res) => {
            let tail = '';
            res.setEncoding('utf8');
            res.on('data', (chunk: string) => {
              const lines = (tail + chunk).split('\n');
              tail = lines.pop() ?? '';
              received += lines.length;
              if (received >= expected) finish();
            });
            resolve();
          });
          req.on('error', reject);
          req.end();
          requests.push(req);
        }),
    ),
  );
  const start = process.hrtime.bigint();
  const patches = (async () => {
    for (let i = 1; i <= m.changes; i++) {
      await send(
        writer,
        m.cluster,
        'PATCH',
        `/api/v1/namespaces/default/configmaps/${m.name}`,
        { data: { n: String(i) } },
        'application/merge-patch+json',
        clusterHeaders,
      );
    }
  })();
  await Promise.race([all, new Promise<void>((r) => setTimeout(r, 60_000).unref())]);
  const seconds = Number(process.hrtime.bigint() - start) / 1e9;
  await patches;
  for (const r of requests) r.destroy();
  agent.destroy();
  return { op: 'watch', received, expected, seconds };
}

async function handle(m: BenchRequest): Promise<BenchReply> {
  switch (m.op) {
    case 'create': {
      const body = { metadata: { name: m.name }, data: { a: 'x'.repeat(200) } };
      await send(writerFor(m.cluster, m.ca), m.cluster, 'POST', '/api/v1/namespaces/default/configmaps', body, undefined, m.clusterHeaders);
      return { op: 'created' };
    }
    case 'latency': {
      const url = new URL(m.url);
      const agent = agentFor(url, 1, m.ca);
      const r = await timed(m.n, () => get(agent, url, m.path, m.headers));
      agent.destroy();
      return { op: 'latency', ...r };
    }
    case 'h2-latency': {
      const session = http2.connect(m.url, { ca: m.ca });
      const r = await timed(m.n, () => h2Get(session, m.path, m.headers));
      session.close();
      return { op: 'latency', ...r };
    }
    case 'throughput': {
      const url = new URL(m.url);
      const agent = agentFor(url, m.concurrency, m.ca);
      const perSecond = await requestsPerSecond(m.n, m.concurrency, () => get(agent, url, m.path, m.headers));
      agent.destroy();
      return { op: 'throughput', perSecond };
    }
    case 'h2-throughput': {
      // One HTTP/2 connection, `concurrency` streams in flight: how Go clients talk to an API server.
      const session = http2.connect(m.url, { ca: m.ca });
      const perSecond = await requestsPerSecond(m.n, m.concurrency, () => h2Get(session, m.path, m.headers));
      session.close();
      return { op: 'throughput', perSecond };
    }
    case 'watch':
      return watchRate(m);
  }
}

process.on('message', (m: BenchRequest) => {
  void handle(m).then(
    (reply) => process.send!(reply),
    (err: unknown) => {
      process.stderr.write(`bench client: ${(err as Error).stack ?? String(err)}\n`);
      process.exit(1);
    },
  );
});
process.on('disconnect', () => process.exit(0));
