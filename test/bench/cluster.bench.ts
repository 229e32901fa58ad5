/**
 * Embedded API server benchmark (a script, not a test). Prints:
 *  - objects created per second (ConfigMaps and Pods, 16 clients over keep-alive HTTP), against a
 *    baseline measured in the same run: a bare node:http server answering the same POSTs with a
 *    fixed JSON body (the HTTP and JSON cost no API server can avoid);
 *  - watch events delivered per second to 100 concurrent watchers while objects are created;
 *  - memory with 10,000 objects (heap and RSS, in a fresh process, after a forced GC).
 *
 *   npm run bench:cluster
 *   npm run bench:cluster -- --objects 3000 --watchers 100 --memory-objects 10000
 *
 * The embedded cluster runs without the simulated controllers (`simulation: false`): this measures the
 * API server alone.
 */
import { spawnSync } from 'node:child_process';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { Agent, request } from 'node:http';
import { EmbeddedCluster } from '../../src/cluster/index.js';

interface Options {
  objects: number;
  watchers: number;
  watchedObjects: number;
  memoryObjects: number;
  concurrency: number;
}

function parseArgs(argv: string[]): Options & { memoryChild: boolean } {
  const value = (name: string, fallback: number): number => {
    const i = argv.indexOf(`--${name}`);
    if (i < 0) return fallback;
    const n = Number(argv[i + 1]);
    if (!Number.isInteger(n) || n <= 0 || n > 1_000_000) throw new Error(`--${name} expects a positive integer up to 1000000`);
    return n;
  };
  return {
    objects: value('objects', 3000),
    watchers: value('watchers', 100),
    watchedObjects: value('watched-objects', 500),
    memoryObjects: value('memory-objects', 10_000),
    concurrency: value('concurrency', 16),
    memoryChild: argv.includes('--memory-child'),
  };
}

const agent = new Agent({ keepAlive: true, maxSockets: 64 });

/** One JSON request over the keep-alive agent; resolves with the status code. */
function send(url: string, method: string, body: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method, agent, headers: { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body) } }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('error', reject);
    req.end(body);
  });
}

/** Runs `count` requests from `concurrency` workers; returns requests per second. */
async function hammer(count: number, concurrency: number, one: (i: number) => Promise<number>, expected: number): Promise<number> {
  let next = 0;
  let failures = 0;
  const started = process.hrtime.bigint();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < count) {
        const i = next++;
        if ((await one(i)) !== expected) failures++;
      }
    }),
  );
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  if (failures > 0) throw new Error(`${failures} of ${count} requests failed`);
  return count / seconds;
}

const configMap = (name: string): string => JSON.stringify({ metadata: { name, labels: { app: 'bench' } }, data: { key: 'value', other: 'x'.repeat(64) } });
const pod = (name: string): string =>
  JSON.stringify({ metadata: { name, labels: { app: 'bench' } }, spec: { containers: [{ name: 'c', image: 'nginx:1.25', ports: [{ containerPort: 80 }] }] } });

async function baselineRate(count: number, concurrency: number): Promise<number> {
  const reply = JSON.stringify({ kind: 'ConfigMap', apiVersion: 'v1', metadata: { name: 'x', resourceVersion: '1' } });
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      res.writeHead(201, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(reply) });
      res.end(reply);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/v1/namespaces/default/configmaps`;
  const rate = await hammer(count, concurrency, (i) => send(url, 'POST', configMap(`cm-${i}`)), 201);
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return rate;
}

async function createRates(opts: Options): Promise<{ configMaps: number; pods: number }> {
  // Raw HTTP without a token: the cluster's bearer-token check is left out of these figures.
  const cluster = await EmbeddedCluster.start({ simulation: false, insecureNoAuth: true });
  try {
    const base = `${cluster.url}/api/v1/namespaces/default`;
    const configMaps = await hammer(opts.objects, opts.concurrency, (i) => send(`${base}/configmaps`, 'POST', configMap(`cm-${i}`)), 201);
    const pods = await hammer(opts.objects, opts.concurrency, (i) => send(`${base}/pods`, 'POST', pod(`pod-${i}`)), 201);
    return { configMaps, pods };
  } finally {
    await cluster.stop();
  }
}

/** Opens `watchers` watch streams, creates `objects` ConfigMaps, and times until every watcher saw every ADDED. */
async function watchRate(opts: Options): Promise<{ eventsPerSecond: number; createsPerSecond: number }> {
  const cluster = await EmbeddedCluster.start({ simulation: false, bookmarkIntervalMs: 0, insecureNoAuth: true });
  const streams: Array<{ seen: number; abort: () => void }> = [];
  try {
    const rv = String(cluster.resourceVersion);
    const watchAgent = new Agent({ keepAlive: false, maxSockets: opts.watchers + 1 });
    let allSeen: () => void = () => undefined;
    const done = new Promise<void>((resolve) => (allSeen = resolve));
    let complete = 0;
    await Promise.all(
      Array.from({ length: opts.watchers }, (_, w) =>
        new Promise<void>((resolve, reject) => {
          const state = { seen: 0, abort: () => req.destroy() };
          streams.push(state);
          const req = request(`${cluster.url}/api/v1/namespaces/default/configmaps?watch=true&resourceVersion=${rv}&labelSelector=app%3Dbench`, { agent: watchAgent }, (res) => {
            let buffer = '';
            res.setEncoding('utf8');
            res.on('data', (chunk: string) => {
              buffer += chunk;
              let nl: number;
              while ((nl = buffer.indexOf('\n')) >= 0) {
                buffer = buffer.slice(nl + 1);
                state.seen++;
                if (state.seen === opts.watchedObjects && ++complete === opts.watchers) allSeen();
              }
            });
            res.on('error', () => undefined);
            resolve();
          });
          req.on('error', (err) => (w >= 0 ? reject(err) : undefined));
          req.end();
        }),
      ),
    );
    const started = process.hrtime.bigint();
    const createsPerSecond = await hammer(opts.watchedObjects, opts.concurrency, (i) => send(`${cluster.url}/api/v1/namespaces/default/configmaps`, 'POST', configMap(`w-${i}`)), 201);
    const timeout = new Promise<never>((_, reject) => setTimeout(() => reject(new Error('watchers did not receive every event within 120 s')), 120_000).unref());
    await Promise.race([done, timeout]);
    const seconds = Number(process.hrtime.bigint() - started) / 1e9;
    return { eventsPerSecond: (opts.watchers * opts.watchedObjects) / seconds, createsPerSecond };
  } finally {
    for (const s of streams) s.abort();
    await cluster.stop();
  }
}

/** In this (fresh) process: heap and RSS before and after storing `count` objects. */
async function memoryChild(opts: Options): Promise<void> {
  const gc = (globalThis as { gc?: () => void }).gc;
  const measure = (): { heap: number; rss: number } => {
    gc?.();
    const m = process.memoryUsage();
    return { heap: m.heapUsed, rss: m.rss };
  };
  const cluster = await EmbeddedCluster.start({ simulation: false, insecureNoAuth: true });
  const before = measure();
  const half = Math.floor(opts.memoryObjects / 2);
  const base = `${cluster.url}/api/v1/namespaces/default`;
  await hammer(half, opts.concurrency, (i) => send(`${base}/configmaps`, 'POST', configMap(`cm-${i}`)), 201);
  await hammer(opts.memoryObjects - half, opts.concurrency, (i) => send(`${base}/pods`, 'POST', pod(`pod-${i}`)), 201);
  const after = measure();
  const objects = cluster.objectCount;
  await cluster.stop();
  process.stdout.write(JSON.stringify({ objects, before, after, gc: gc !== undefined }) + '\n');
}

const mib = (bytes: number): string => `${(bytes / 1024 / 1024).toFixed(1)} MiB`;

async function main(): Promise<void> {
  const opts = parseArgs(process.argv.slice(2));
  if (opts.memoryChild) {
    await memoryChild(opts);
    return;
  }
  console.log(`embedded API server benchmark (node ${process.version}, simulation off)`);
  // Warm-up (JIT, sockets): one short round of each, not reported.
  await baselineRate(Math.min(500, opts.objects), opts.concurrency);
  await createRates({ ...opts, objects: Math.min(500, opts.objects) });
  const baseline = await baselineRate(opts.objects, opts.concurrency);
  const creates = await createRates(opts);
  console.log(`\ncreates (${opts.objects} each, ${opts.concurrency} concurrent clients):`);
  console.log(`  baseline: bare node:http server     ${baseline.toFixed(0).padStart(7)} req/s`);
  console.log(`  ConfigMaps                          ${creates.configMaps.toFixed(0).padStart(7)} objects/s  (${(creates.configMaps / baseline).toFixed(2)} x baseline)`);
  console.log(`  Pods (defaulting, validation)       ${creates.pods.toFixed(0).padStart(7)} objects/s  (${(creates.pods / baseline).toFixed(2)} x baseline)`);

  const watch = await watchRate(opts);
  console.log(`\nwatch fan-out (${opts.watchers} watchers, ${opts.watchedObjects} creates):`);
  console.log(`  events delivered                    ${watch.eventsPerSecond.toFixed(0).padStart(7)} events/s`);
  console.log(`  creates while watched               ${watch.createsPerSecond.toFixed(0).padStart(7)} objects/s  (${(watch.createsPerSecond / creates.configMaps).toFixed(2)} x unwatched)`);

  const child = spawnSync(process.execPath, ['--expose-gc', fileURLToPath(import.meta.url), '--memory-child', '--memory-objects', String(opts.memoryObjects), '--concurrency', String(opts.concurrency)], {
    encoding: 'utf8',
    timeout: 300_000,
  });
  if (child.status !== 0) throw new Error(`memory child failed: ${child.stderr}`);
  const m = JSON.parse(child.stdout.trim().split('\n').pop()!) as { objects: number; before: { heap: number; rss: number }; after: { heap: number; rss: number } };
  const stored = opts.memoryObjects;
  console.log(`\nmemory (${stored} objects: half ConfigMaps, half Pods; ${m.objects} stored in all, history window 10000):`);
  console.log(`  empty cluster                       heap ${mib(m.before.heap)}, rss ${mib(m.before.rss)}`);
  console.log(`  with the objects                    heap ${mib(m.after.heap)}, rss ${mib(m.after.rss)}`);
  console.log(`  per object (heap)                   ${((m.after.heap - m.before.heap) / stored / 1024).toFixed(2)} KiB`);
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    console.error(err instanceof Error ? err.message : err);
    process.exit(1);
  },
);
