/**
 * Embedded API server benchmark (a script, not a test). Prints:
 *  - objects created per second (ConfigMaps and Pods, 16 clients over keep-alive HTTP), against a
 *    baseline measured in the same run: a bare node:http server answering the same POSTs with a
 *    fixed JSON body (the HTTP and JSON cost no API server can avoid);
 *  - memory with 10,000 objects (heap and RSS, in a fresh process, after a forced GC).
 *
 *   npm run bench:cluster
 *   npm run bench:cluster -- --objects 3000 --memory-objects 10000
 *
 * Watch fan-out (100 watchers while objects are written) has its own script: watch.bench.ts.
 *
 * The embedded cluster runs without the simulated controllers (`simulation: false`): this measures the
 * API server alone.
 */
import { spawnSync } from 'node:child_process';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { EmbeddedCluster } from '../../src/cluster/index.js';
import { configMap, hammer, positiveIntegerOption, send } from './http-load.js';

interface Options {
  objects: number;
  memoryObjects: number;
  concurrency: number;
}

function parseArgs(argv: string[]): Options & { memoryChild: boolean } {
  const value = (name: string, fallback: number): number => positiveIntegerOption(argv, name, fallback);
  return {
    objects: value('objects', 3000),
    memoryObjects: value('memory-objects', 10_000),
    concurrency: value('concurrency', 16),
    memoryChild: argv.includes('--memory-child'),
  };
}

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
  console.log(
    `  ConfigMaps                          ${creates.configMaps.toFixed(0).padStart(7)} objects/s  (${(creates.configMaps / baseline).toFixed(2)} x baseline)`,
  );
  console.log(`  Pods (defaulting, validation)       ${creates.pods.toFixed(0).padStart(7)} objects/s  (${(creates.pods / baseline).toFixed(2)} x baseline)`);

  console.log(`\nwatch fan-out: npm run bench:watch`);

  const child = spawnSync(
    process.execPath,
    [
      '--expose-gc',
      fileURLToPath(import.meta.url),
      '--memory-child',
      '--memory-objects',
      String(opts.memoryObjects),
      '--concurrency',
      String(opts.concurrency),
    ],
    {
      encoding: 'utf8',
      timeout: 300_000,
    },
  );
  if (child.status !== 0) throw new Error(`memory child failed: ${child.stderr}`);
  const m = JSON.parse(child.stdout.trim().split('\n').pop()!) as {
    objects: number;
    before: { heap: number; rss: number };
    after: { heap: number; rss: number };
  };
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
