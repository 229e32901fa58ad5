/**
 * A relay of proxy.bench.ts in a process of its own: that file started with `--relay-host KIND
 * UPSTREAM` (hostRelay there), which replies over IPC with where the relay listens, then with its
 * CPU time on 'cpu', and exits on 'stop'. Its CPU time is the relay's alone.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';

export const RELAY_HOST = '--relay-host';

/** A relay under test and where it listens; `kind` 'tls proxy' is the proxy with TLS towards the client. */
export type RelayKind = 'proxy' | 'tls proxy' | 'raw pipe' | 'bare relay';

export interface RelayHandle {
  url: string;
  headers: Record<string, string>;
  caPem?: string;
  cpu: () => Promise<number>;
  stop(): Promise<void>;
}

export type HostReply = { url: string; headers: Record<string, string>; caPem?: string } | { cpu: number };

/** Starts `benchFile` (proxy.bench.js, of this checkout or another) hosting a relay of `kind` in front of `upstream`. */
export async function startRelayProcess(benchFile: string, kind: RelayKind, upstream: string): Promise<RelayHandle & { pid: number }> {
  const proc = fork(benchFile, [RELAY_HOST, kind, upstream], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const next = replies<HostReply>(proc);
  const started = (await next()) as Extract<HostReply, { url: string }>;
  return {
    url: started.url,
    headers: started.headers,
    ...(started.caPem ? { caPem: started.caPem } : {}),
    pid: proc.pid!,
    cpu: async () => {
      const reply = next();
      proc.send('cpu');
      return ((await reply) as Extract<HostReply, { cpu: number }>).cpu;
    },
    stop: async () => {
      const exited = new Promise<void>((r) => proc.once('exit', () => r()));
      proc.send('stop');
      await exited;
    },
  };
}

/** The messages of a forked process, in order: each call waits for the next one. */
export function replies<T>(proc: ChildProcess): () => Promise<T> {
  const waiting: Array<(m: T) => void> = [];
  proc.on('message', (m: T) => waiting.shift()?.(m));
  return () => new Promise<T>((resolve) => waiting.push(resolve));
}

/**
 * User + system CPU time in microseconds from a `stat` file of /proc (a process's, or one thread's
 * under /proc/<pid>/task): fields 14 and 15, in clock ticks of 10 ms.
 */
export function statCpuMicros(statFile: string): number {
  const stat = readFileSync(statFile, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10_000;
}
