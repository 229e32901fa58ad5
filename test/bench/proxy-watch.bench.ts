/**
 * CPU per watch event: the proxy against the bare Node relay, each in a process of its own (as
 * `bench:proxy --separate-processes` hosts them), watch rounds only, so that many rounds fit in a
 * minute and the run-to-run spread can be seen. 100 watchers of one object, changes made directly on
 * the cluster (in a process of its own); the sides' rounds alternate and their order rotates from
 * round to round (the first round of each side is a warm-up and not counted). Per side: the mean and
 * median CPU per event, the ratio to the bare relay (of the means, and the median of each round's
 * ratio to the bare relay's round next to it), and where the process's CPU went: its main thread
 * and its other threads (V8's collector and compiler threads, libuv's pool, which writes the trace).
 *
 *   npm run bench:proxy-watch   (or: node dist/test/bench/proxy-watch.bench.js [--rounds N] [--changes N] [--also DIR]...)
 *
 * `--also DIR` adds the proxy of another checkout (its `dist` built), e.g. the commit before, as a
 * side of the same run: a before/after in one run, under the same load.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { BenchReply, BenchRequest } from './proxy-bench-client.js';
import { replies, startRelayProcess, statCpuMicros, type RelayHandle, type RelayKind } from './proxy-bench-host.js';

const arg = (name: string): string | undefined => {
  const i = process.argv.indexOf(name);
  return i > 0 ? process.argv[i + 1] : undefined;
};
const ROUNDS = Number(arg('--rounds') ?? 10);
const CHANGES = Number(arg('--changes') ?? 300);
const WATCHERS = 100;
const ALSO = process.argv.flatMap((a, i) => (a === '--also' && process.argv[i + 1] ? [resolve(process.argv[i + 1]!)] : []));

for (const [name, n] of [
  ['--rounds', ROUNDS],
  ['--changes', CHANGES],
] as const) {
  if (!Number.isInteger(n) || n < 2) {
    process.stderr.write(`proxy-watch.bench: ${name} expects a whole number of at least 2\n`);
    process.exit(2);
  }
}

const here = (file: string) => fileURLToPath(new URL(file, import.meta.url));

function child(file: string, args: string[] = []): ChildProcess {
  return fork(file, args, { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
}

/** CPU time (us) of each thread of `pid` so far, main thread first (its id is the pid). */
function threadCpu(pid: number): { main: number; others: number } {
  let main = 0;
  let others = 0;
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    const us = statCpuMicros(`/proc/${pid}/task/${tid}/stat`);
    if (Number(tid) === pid) main += us;
    else others += us;
  }
  return { main, others };
}

type Side = RelayHandle & { name: string; pid: number };

async function startSide(name: string, benchFile: string, kind: RelayKind, upstream: string): Promise<Side> {
  return { name, ...(await startRelayProcess(benchFile, kind, upstream)) };
}

const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};

async function main(): Promise<void> {
  process.stdout.write(
    `kperturb proxy watch benchmark: CPU per watch event, ${WATCHERS} watchers of one object, ${CHANGES} changes a round, ` +
      `${ROUNDS} rounds (the first not counted), each relay in a process of its own\n`,
  );
  const clusterProc = child(here('./proxy-bench-cluster.js'));
  const port = await new Promise<number>((r) => clusterProc.once('message', (m: { port: number }) => r(m.port)));
  const cluster = `http://127.0.0.1:${port}`;
  const sides: Side[] = [];
  const clientProc = child(here('./proxy-bench-client.js'));
  const nextReply = replies<BenchReply>(clientProc);
  const ask = async <R extends BenchReply>(m: BenchRequest): Promise<R> => {
    const reply = nextReply();
    clientProc.send(m);
    return (await reply) as R;
  };
  try {
    sides.push(await startSide('bare relay', here('./proxy.bench.js'), 'bare relay', cluster));
    sides.push(await startSide('proxy', here('./proxy.bench.js'), 'proxy', cluster));
    for (const dir of ALSO) sides.push(await startSide(`proxy of ${dir}`, resolve(dir, 'dist/test/bench/proxy.bench.js'), 'proxy', cluster));
    await ask({ op: 'create', cluster, name: 'bench' });
    const perEvent = new Map<string, number[]>(sides.map((s) => [s.name, []]));
    const threads = new Map<string, { main: number; others: number; events: number }>(sides.map((s) => [s.name, { main: 0, others: 0, events: 0 }]));
    let watched = 0;
    for (let round = 0; round < ROUNDS; round++) {
      const line: string[] = [];
      for (let j = 0; j < sides.length; j++) {
        const side = sides[(round + j) % sides.length]!;
        const before = await side.cpu();
        const t0 = threadCpu(side.pid);
        const r = await ask<Extract<BenchReply, { op: 'watch' }>>({
          op: 'watch',
          url: side.url,
          cluster,
          name: `watched-${watched++}`,
          headers: side.headers,
          watchers: WATCHERS,
          changes: CHANGES,
        });
        const us = (await side.cpu()) - before;
        const t1 = threadCpu(side.pid);
        if (r.received < r.expected) process.stdout.write(`  (${side.name}: only ${r.received}/${r.expected} events within 60 s)\n`);
        line.push(`${side.name} ${(us / r.received).toFixed(2)}`);
        if (round === 0) continue;
        perEvent.get(side.name)!.push(us / r.received);
        const t = threads.get(side.name)!;
        t.main += t1.main - t0.main;
        t.others += t1.others - t0.others;
        t.events += r.received;
      }
      process.stdout.write(`round ${round + 1}/${ROUNDS}${round === 0 ? ' (warm-up)' : ''}: ${line.join(', ')} us/event\n`);
    }
    const bare = perEvent.get('bare relay')!;
    const width = Math.max(...sides.map((s) => s.name.length));
    process.stdout.write(
      `\n${'side'.padEnd(width)}  mean us/event  median  ratio to bare relay (means)  median of round ratios  main thread / other threads (us/event)\n`,
    );
    for (const s of sides) {
      const xs = perEvent.get(s.name)!;
      const t = threads.get(s.name)!;
      const ratios = xs.map((x, i) => x / bare[i]!);
      process.stdout.write(
        `${s.name.padEnd(width)}  ${mean(xs).toFixed(2).padStart(13)}  ${median(xs).toFixed(2).padStart(6)}  ${(mean(xs) / mean(bare)).toFixed(3).padStart(27)}  ` +
          `${median(ratios).toFixed(3).padStart(22)}  ${(t.main / t.events).toFixed(2)} / ${(t.others / t.events).toFixed(2)}\n`,
      );
    }
    process.stdout.write('(target: proxy <= 1.25x the bare relay per watch event; thread CPU in 10 ms ticks, so coarse)\n');
  } finally {
    for (const s of sides) await s.stop();
    clientProc.disconnect();
    const exited = new Promise<void>((r) => clusterProc.once('exit', () => r()));
    clusterProc.send('stop');
    await exited;
  }
}

await main();
