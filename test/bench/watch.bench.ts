/**
 * Watch fan-out benchmark (a script, not a test). Opens W watches (default 100) on ConfigMaps, then
 * writes N creates, N updates and N deletes (default 1000 each) from 16 keep-alive clients, and prints:
 *  - the write rate of each verb held while the watchers receive every event, against the same writes
 *    on a cluster nobody watches, measured in the same run (the baseline);
 *  - the watch events delivered per second: W x 3N events over the time from the first write until
 *    every watcher has received the last one.
 *
 *   npm run bench:watch
 *   npm run bench:watch -- --watchers 100 --writes 1000 --concurrency 16 --rounds 2
 *
 * The watchers are raw HTTP streams in this process (they count lines; a client library would add its
 * own decoding), the cluster runs without simulated controllers (`simulation: false`).
 */
import { Agent, request } from 'node:http';
import { EmbeddedCluster } from '../../src/cluster/index.js';
import { configMap, hammer, positiveIntegerOption, send } from './http-load.js';

interface Options {
  watchers: number;
  writes: number;
  concurrency: number;
  rounds: number;
}

function parseArgs(argv: string[]): Options {
  const value = (name: string, fallback: number): number => positiveIntegerOption(argv, name, fallback);
  return { watchers: value('watchers', 100), writes: value('writes', 1000), concurrency: value('concurrency', 16), rounds: value('rounds', 1) };
}

const VERBS = ['create', 'update', 'delete'] as const;
type Verb = (typeof VERBS)[number];
type Rates = Record<Verb, number>;

/** N creates, then N updates, then N deletes of the same ConfigMaps; the rate of each. */
async function writeAll(cluster: EmbeddedCluster, opts: Options): Promise<Rates> {
  const base = `${cluster.url}/api/v1/namespaces/default/configmaps`;
  const { writes, concurrency } = opts;
  return {
    create: await hammer(writes, concurrency, (i) => send(base, 'POST', configMap(`cm-${i}`)), 201),
    update: await hammer(writes, concurrency, (i) => send(`${base}/cm-${i}`, 'PUT', configMap(`cm-${i}`, 'updated')), 200),
    delete: await hammer(writes, concurrency, (i) => send(`${base}/cm-${i}`, 'DELETE', '{}'), 200),
  };
}

async function unwatched(opts: Options): Promise<Rates> {
  const cluster = await EmbeddedCluster.start({ simulation: false, bookmarkIntervalMs: 0, insecureNoAuth: true });
  try {
    return await writeAll(cluster, opts);
  } finally {
    await cluster.stop();
  }
}

/** The same writes with `watchers` streams open; also the events per second they received. */
async function watched(opts: Options): Promise<{ rates: Rates; eventsPerSecond: number }> {
  const cluster = await EmbeddedCluster.start({ simulation: false, bookmarkIntervalMs: 0, insecureNoAuth: true });
  const requests: Array<{ destroy(): void }> = [];
  try {
    const expected = 3 * opts.writes;
    const url = `${cluster.url}/api/v1/namespaces/default/configmaps?watch=true&resourceVersion=${cluster.resourceVersion}`;
    const agent = new Agent({ keepAlive: false, maxSockets: opts.watchers + 1 });
    let complete = 0;
    let allSeen: () => void = () => undefined;
    let failed: (err: Error) => void = () => undefined;
    const done = new Promise<void>((resolve, reject) => ((allSeen = resolve), (failed = reject)));
    await Promise.all(
      Array.from(
        { length: opts.watchers },
        () =>
          new Promise<void>((resolve, reject) => {
            let seen = 0;
            const req = request(url, { agent }, (res) => {
              res.setEncoding('utf8');
              res.on('data', (chunk: string) => {
                for (let i = chunk.indexOf('\n'); i >= 0; i = chunk.indexOf('\n', i + 1)) {
                  if (++seen === expected && ++complete === opts.watchers) allSeen();
                }
              });
              res.on('end', () => seen < expected && failed(new Error(`a watch ended after ${seen} of ${expected} events`)));
              resolve();
            });
            requests.push(req);
            req.on('error', reject);
            req.end();
          }),
      ),
    );
    const started = process.hrtime.bigint();
    const rates = await writeAll(cluster, opts);
    const guard = setTimeout(() => failed(new Error('the watchers did not receive every event within 120 s')), 120_000);
    await done.finally(() => clearTimeout(guard));
    const seconds = Number(process.hrtime.bigint() - started) / 1e9;
    return { rates, eventsPerSecond: (opts.watchers * expected) / seconds };
  } finally {
    for (const r of requests) r.destroy();
    await cluster.stop();
  }
}

const rate = (n: number): string => n.toFixed(0).padStart(7);

async function main(): Promise<void> {
  const opts = parseArgs(process.argv.slice(2));
  console.log(`watch fan-out benchmark (node ${process.version}, simulation off, ${opts.concurrency} writing clients)`);
  // Warm-up (JIT, sockets): one round, not reported.
  await unwatched(opts);
  await watched(opts);
  const ratios: Record<Verb | 'events', number[]> = { create: [], update: [], delete: [], events: [] };
  for (let round = 1; round <= opts.rounds; round++) {
    const baseline = await unwatched(opts);
    const load = await watched(opts);
    for (const verb of VERBS) ratios[verb].push(load.rates[verb] / baseline[verb]);
    ratios.events.push(load.eventsPerSecond);
    console.log(`\nround ${round}: ${opts.writes} writes of each verb, ${opts.watchers} watchers`);
    console.log(`  verb     unwatched (baseline)   watched               ratio`);
    for (const verb of VERBS) {
      console.log(
        `  ${verb.padEnd(8)} ${rate(baseline[verb])} writes/s        ${rate(load.rates[verb])} writes/s     ${(load.rates[verb] / baseline[verb]).toFixed(2)} x baseline`,
      );
    }
    console.log(
      `  events delivered ${rate(load.eventsPerSecond)} events/s to ${opts.watchers} watchers (${(load.eventsPerSecond / opts.watchers).toFixed(0)} per watcher)`,
    );
  }
  if (opts.rounds > 1) {
    const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
    console.log(
      `\nmedian of ${opts.rounds} rounds: watched / unwatched writes ${VERBS.map((v) => `${v} ${median(ratios[v]).toFixed(2)}`).join(', ')}; ${median(ratios.events).toFixed(0)} events/s`,
    );
  }
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    console.error(err instanceof Error ? err.message : err);
    process.exit(1);
  },
);
