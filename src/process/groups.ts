/**
 * Child processes that never outlive kperturb. Each one runs in a process group of its own (spawn's
 * `detached`: a new session), so that one kill(-pgid) ends it with everything it started, and a
 * terminal's Ctrl-C reaches kperturb alone, which then ends its children in order. Every exit path
 * ends the group:
 * - stop(): SIGTERM to the group, SIGKILL after a grace period (the orderly end of a run);
 * - the leader exits (asked or not): SIGKILL to what is left of its group;
 * - Node exits (process.exit, a second Ctrl-C): SIGKILL to every live group, synchronously;
 * - kperturb is killed outright (SIGKILL, the OOM killer): a watchdog per group, a `sh` in a session
 *   of its own that ignores SIGHUP, SIGINT and SIGTERM and reads its stdin, a pipe from kperturb.
 *   Only kperturb holds the pipe's other end (libuv opens it close-on-exec, so no other child
 *   inherits it), so the read returns at EOF exactly when kperturb is gone, and the watchdog then
 *   SIGKILLs the group. The watchdog starts just after the group's leader: kperturb killed in
 *   between (one spawn, a millisecond) would leave that group behind.
 */
import { spawn, type ChildProcess, type SpawnOptions } from 'node:child_process';
import type { Socket } from 'node:net';

const WATCHDOG_SCRIPT = `trap '' HUP INT TERM; read -r _; kill -s KILL -- "-$1" 2>/dev/null`;

const live = new Set<ProcessGroup>();
let exitHookInstalled = false;

/** SIGKILL to every live group (and its watchdog), synchronously: for exit paths. */
export function killAllGroups(): void {
  for (const group of [...live]) group.release();
}

/** How many groups are running (their leader has not exited). */
export function liveGroupCount(): number {
  return live.size;
}

/** Is a process with this pid running? (Signal 0 probes without signalling; EPERM: running, as another user.) */
export function processExists(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Sends `signal` to every process of group `pgid`; false when none is left. */
function signalGroup(pgid: number, signal: NodeJS.Signals): boolean {
  try {
    process.kill(-pgid, signal);
    return true;
  } catch {
    return false;
  }
}

function startWatchdog(pgid: number): ChildProcess | undefined {
  try {
    const watchdog = spawn('/bin/sh', ['-c', WATCHDOG_SCRIPT, 'kperturb-watchdog', String(pgid)], {
      stdio: ['pipe', 'ignore', 'ignore'],
      detached: true,
      cwd: '/',
    });
    watchdog.on('error', () => undefined);
    watchdog.stdin?.on('error', () => undefined);
    // Neither the watchdog nor its pipe keeps Node running.
    watchdog.unref();
    (watchdog.stdin as Socket | null)?.unref();
    return watchdog;
  } catch {
    return undefined;
  }
}

export class ProcessGroup {
  readonly child: ChildProcess;
  /** Resolves when the leader has exited (or could not be started). */
  readonly exited: Promise<void>;
  private readonly watchdog: ChildProcess | undefined;
  private released = false;

  /** spawn(command, args, options) as the leader of a new process group. */
  constructor(command: string, args: readonly string[], options: Omit<SpawnOptions, 'detached'>) {
    if (!exitHookInstalled) {
      exitHookInstalled = true;
      process.on('exit', killAllGroups);
    }
    this.child = spawn(command, args, { ...options, detached: true });
    const pid = this.child.pid;
    if (pid !== undefined) {
      live.add(this);
      this.watchdog = startWatchdog(pid);
    } else {
      this.released = true;
    }
    this.exited = new Promise<void>((resolve) => {
      const done = () => {
        this.release();
        resolve();
      };
      this.child.once('exit', done);
      // Spawn failures (ENOENT, EACCES) emit 'error' and no 'exit'.
      this.child.once('error', () => {
        if (this.child.pid === undefined) done();
      });
    });
  }

  get pid(): number | undefined {
    return this.child.pid;
  }

  /** Sends `signal` to the whole group while its leader runs. */
  signal(signal: NodeJS.Signals): void {
    if (!this.released && this.child.pid !== undefined) signalGroup(this.child.pid, signal);
  }

  /** SIGKILL to the group: a crash, no chance to clean up. Resolves once the leader has exited. */
  kill(): Promise<void> {
    this.signal('SIGKILL');
    return this.exited;
  }

  /** SIGTERM to the group, then SIGKILL after `graceMs`. Resolves once the leader has exited. */
  async stop(graceMs: number): Promise<void> {
    if (this.released) return this.exited;
    this.signal('SIGTERM');
    const timer = setTimeout(() => this.signal('SIGKILL'), graceMs);
    await this.exited;
    clearTimeout(timer);
  }

  /** SIGKILL to what is left of the group, and the watchdog is no longer needed. */
  release(): void {
    if (this.released) return;
    this.released = true;
    live.delete(this);
    if (this.child.pid !== undefined) signalGroup(this.child.pid, 'SIGKILL');
    this.watchdog?.kill('SIGKILL');
  }
}
