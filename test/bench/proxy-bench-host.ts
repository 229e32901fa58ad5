/**
 * A relay of proxy.bench.ts in a process of its own: that file started with `--relay-host KIND
 * UPSTREAM` (hostRelay there), which replies over IPC with where the relay listens, then with its
 * CPU time on 'cpu', and exits on 'stop'. Its CPU time is the relay's alone.
 */
import { fork } from 'node:child_process';

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
  const waiting: Array<(m: HostReply) => void> = [];
  proc.on('message', (m: HostReply) => waiting.shift()?.(m));
  const next = () => new Promise<HostReply>((resolve) => waiting.push(resolve));
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
