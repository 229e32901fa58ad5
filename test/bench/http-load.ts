/** HTTP load for the benchmark scripts: keep-alive JSON requests from a fixed number of concurrent workers. */
import { Agent, request } from 'node:http';

const agent = new Agent({ keepAlive: true, maxSockets: 64 });

/** One JSON request over the keep-alive agent; resolves with the status code. */
export function send(url: string, method: string, body: string): Promise<number> {
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
export async function hammer(count: number, concurrency: number, one: (i: number) => Promise<number>, expected: number): Promise<number> {
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

export const configMap = (name: string, value = 'value'): string =>
  JSON.stringify({ metadata: { name, labels: { app: 'bench' } }, data: { key: value, other: 'x'.repeat(64) } });

/** `--name N` from the command line: a positive integer up to 1,000,000, or `fallback` when absent. */
export function positiveIntegerOption(argv: string[], name: string, fallback: number): number {
  const i = argv.indexOf(`--${name}`);
  if (i < 0) return fallback;
  const n = Number(argv[i + 1]);
  if (!Number.isInteger(n) || n <= 0 || n > 1_000_000) throw new Error(`--${name} expects a positive integer up to 1000000`);
  return n;
}
