/**
 * Machine-wide locks on the fixed TCP ports a controller binds (`controller.ports`).
 *
 * Many operators bind a port no flag changes (operator-sdk 0.x managers serve metrics on :8080 or
 * :8383). Two of them at once, in one kperturb (`test -j 2`) or in two (a CI matrix, two operators'
 * campaigns on one machine), make the second exit at start-up and its run an `error`. A run takes a
 * lock file per port in the system's temporary directory (holding its pid) before it starts the
 * controller and waits while another live process holds it or anything else is listening on the
 * port; the lock goes when the run has stopped its controller. A lock whose process is gone is taken
 * over.
 *
 * An application stub (src/stubs) listens on a pod's own loopback address at the application's port,
 * and a controller bound to every interface at that port keeps it from listening (and answers the
 * operator's calls in its place: the app-upgrade example's `POST /upgrade` got 404 from a Percona
 * operator's metrics server on :8080 that another campaign on the machine ran). Stubs on different
 * pod addresses do not conflict, so a run with stubs takes a *shared* lock on their ports (a file
 * `<port>.shared.<pid>.<n>`): shared locks coexist, an exclusive one waits until none is held, and a
 * shared one waits while an exclusive one is held or wanted. Each side writes its file before it
 * looks for the other's, so two never both go ahead; an exclusive taker keeps its file while it
 * waits for the shared holders to finish, so that new ones wait behind it. Waiters go in the order
 * they came: a stub run that waits leaves a file `<port>.queued-shared.<pid>.<n>` saying since when,
 * and a controller's run that came later lets it go first (two Percona campaigns on one machine,
 * taking :8080 in turns, otherwise kept a NiFi stub run waiting for as long as both ran).
 */
import { mkdirSync, readdirSync, unlinkSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { holderAlive, readLockFile, tryLockFile, type LockHolder } from '../io/lock-file.js';

const POLL_MS = 250;

export interface PortLockOptions {
  /** Where the lock files live (default: `<tmpdir>/kperturb-ports`, shared by every kperturb on the machine). */
  dir?: string;
  /** Told once per port when the run has to wait, with the reason. */
  onWait?: (port: number, reason: string) => void;
  /** Gives up after this long, with an error naming the port (default: 30 min). */
  timeoutMs?: number;
  /** How often a waiting run looks again (default: 250 ms). */
  pollMs?: number;
}

/** The ports a run locks: exclusively (a controller binds them on every interface) or shared (stubs on pod addresses). */
export interface RunPorts {
  exclusive: readonly number[];
  shared?: readonly number[];
}

let sharedCount = 0;

/**
 * Takes every port's lock (in ascending order, so two runs cannot deadlock); resolves to a release
 * function. A bare list of ports is locked exclusively.
 */
export async function lockPorts(ports: readonly number[] | RunPorts, options: PortLockOptions = {}): Promise<() => void> {
  const { exclusive, shared = [] } = Array.isArray(ports) ? { exclusive: ports as readonly number[] } : (ports as RunPorts);
  const dir = options.dir ?? join(tmpdir(), 'kperturb-ports');
  mkdirSync(dir, { recursive: true });
  const held: string[] = [];
  const release = () => {
    for (const file of held.splice(0)) unlinkQuietly(file);
  };
  const deadline = Date.now() + (options.timeoutMs ?? 30 * 60_000);
  const modes = new Map<number, 'exclusive' | 'shared'>(shared.map((p) => [p, 'shared']));
  for (const p of exclusive) modes.set(p, 'exclusive');
  try {
    for (const [port, mode] of [...modes].sort(([a], [b]) => a - b)) {
      let told = false;
      let keeping: string | undefined;
      const since = Date.now();
      let queued: string | undefined;
      for (;;) {
        const taken = mode === 'exclusive' ? await takeExclusive(dir, port, keeping, since) : takeShared(dir, port);
        if ('file' in taken) {
          if (queued) unlinkQuietly(queued);
          held.push(taken.file);
          break;
        }
        if (mode === 'shared' && !queued) queued = queueShared(dir, port, since);
        keeping = taken.keeping;
        if (!told) options.onWait?.(port, taken.reason);
        told = true;
        if (Date.now() >= deadline) {
          if (keeping) unlinkQuietly(keeping);
          if (queued) unlinkQuietly(queued);
          const what = mode === 'exclusive' ? 'the controller binds it (controller.ports)' : 'an application stub listens there (applications)';
          throw new Error(`port ${port} stayed busy (${taken.reason}); ${what}`);
        }
        await sleep(options.pollMs ?? POLL_MS);
      }
    }
  } catch (err) {
    release();
    throw err;
  }
  return release;
}

type Taken = { file: string } | { reason: string; keeping?: string };

/**
 * The exclusive lock of `port`, or why not now. `keeping`: the lock file this taker already holds
 * while shared holders finish (kept, so that no new one starts).
 */
async function takeExclusive(dir: string, port: number, keeping: string | undefined, since: number): Promise<Taken> {
  const file = keeping ?? join(dir, `${port}.lock`);
  if (!keeping) {
    // At or before: the times have millisecond resolution, and a stub run that queued in this run's
    // first millisecond (the test below it, on a fast machine) came first.
    const earlier = liveHolders(dir, `${port}.queued-shared.`).find((h) => h.since !== undefined && Date.parse(h.since) <= since);
    if (earlier) return { reason: `an application stub run of pid ${earlier.pid} waits for it since before this run` };
    const holder = tryLockFile(file);
    if (holder) return { reason: `held by pid ${holder.pid}` };
  }
  if (!(await portFree(port))) {
    // Locked, but another program listens there: let go while we wait.
    unlinkQuietly(file);
    return { reason: `something else is listening on port ${port}` };
  }
  const sharers = liveSharedHolders(dir, port);
  if (sharers.length > 0) return { reason: `an application stub of pid ${sharers[0]!.pid} listens on port ${port}`, keeping: file };
  return { file };
}

/** A shared lock of `port`, or why not now. */
function takeShared(dir: string, port: number): Taken {
  const file = join(dir, `${port}.shared.${process.pid}.${++sharedCount}`);
  const me: LockHolder = { pid: process.pid, since: new Date().toISOString() };
  writeFileSync(file, JSON.stringify(me) + '\n');
  const exclusive = readLockFile(join(dir, `${port}.lock`));
  if (exclusive !== undefined && holderAlive(exclusive)) {
    unlinkQuietly(file);
    return { reason: `held by pid ${exclusive.pid}, whose controller binds it` };
  }
  return { file };
}

/** Marks a stub run as waiting for `port` since `since`, so that controllers' runs that come later wait behind it. */
function queueShared(dir: string, port: number, since: number): string {
  const file = join(dir, `${port}.queued-shared.${process.pid}.${++sharedCount}`);
  writeFileSync(file, JSON.stringify({ pid: process.pid, since: new Date(since).toISOString() } satisfies LockHolder) + '\n');
  return file;
}

/** The live holders of shared locks of `port`; files of processes that are gone are removed. */
function liveSharedHolders(dir: string, port: number): LockHolder[] {
  return liveHolders(dir, `${port}.shared.`);
}

/** The live processes named by the files starting with `prefix`; files of processes that are gone are removed. */
function liveHolders(dir: string, prefix: string): LockHolder[] {
  const live: LockHolder[] = [];
  for (const name of readdirSync(dir)) {
    if (!name.startsWith(prefix)) continue;
    const holder = readLockFile(join(dir, name));
    if (holder === undefined) continue;
    if (holderAlive(holder)) live.push(holder);
    else unlinkQuietly(join(dir, name));
  }
  return live;
}

/** Can the port be bound? Probed on 127.0.0.1, which a listener on every interface also blocks. */
function portFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen({ port, host: '127.0.0.1', exclusive: true }, () => server.close(() => resolve(true)));
  });
}

function unlinkQuietly(file: string): void {
  try {
    unlinkSync(file);
  } catch {
    /* gone */
  }
}
