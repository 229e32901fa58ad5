/**
 * How long the embedded cluster takes to start: `EmbeddedCluster.start()` in a running process
 * (simulation on and off), and `kperturb cluster` from spawning the process to its "listening"
 * line, against a bare `node -e 0` in the same run (most of the CLI's time is Node itself and
 * loading the modules). Medians of `rounds` runs.
 *
 *   node dist/test/bench/cluster-start.bench.js [rounds]
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { EmbeddedCluster } from '../../src/cluster/index.js';

const rounds = Number(process.argv[2] ?? 7);
const bin = fileURLToPath(new URL('../../../bin/kperturb.js', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'kperturb-start-'));

function median(values: number[]): string {
  const sorted = [...values].sort((a, b) => a - b);
  return `${sorted[Math.floor(sorted.length / 2)]!.toFixed(0)} ms (min ${sorted[0]!.toFixed(0)}, max ${sorted[sorted.length - 1]!.toFixed(0)})`;
}

/** Spawns `args` and resolves with the milliseconds until `marker` appears on stdout or stderr (or exit). */
async function timeUntil(args: string[], marker: string | undefined): Promise<number> {
  const start = performance.now();
  const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  await new Promise<void>((resolve) => {
    const seen = (d: Buffer): void => {
      out += d.toString();
      if (marker !== undefined && out.includes(marker)) resolve();
    };
    child.stdout.on('data', seen);
    child.stderr.on('data', seen);
    child.on('close', () => resolve());
  });
  const elapsed = performance.now() - start;
  if (child.exitCode === null) {
    child.kill('SIGINT');
    await new Promise((r) => child.on('close', r));
  }
  return elapsed;
}

async function main(): Promise<void> {
  const inProcess: Record<string, number[]> = { simulation: [], bare: [] };
  for (let i = 0; i < rounds; i++) {
    for (const [name, options] of [
      ['simulation', {}],
      ['bare', { simulation: false }],
    ] as const) {
      const start = performance.now();
      const cluster = await EmbeddedCluster.start(options);
      inProcess[name]!.push(performance.now() - start);
      await cluster.stop();
    }
  }
  const node: number[] = [];
  const cli: number[] = [];
  for (let i = 0; i < rounds; i++) {
    node.push(await timeUntil(['-e', '0'], undefined));
    cli.push(await timeUntil([bin, 'cluster', '--kubeconfig-out', join(dir, 'kubeconfig')], 'listening'));
  }
  rmSync(dir, { recursive: true, force: true });
  console.log(`EmbeddedCluster.start(), simulation on:  ${median(inProcess.simulation!)}`);
  console.log(`EmbeddedCluster.start(), bare API server: ${median(inProcess.bare!)}`);
  console.log(`node -e 0 (process start alone):          ${median(node)}`);
  console.log(`kperturb cluster to "listening":          ${median(cli)}`);
}

await main();
