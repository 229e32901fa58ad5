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
 */
import { mkdirSync, unlinkSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { tryLockFile } from '../io/lock-file.js';

const POLL_MS = 250;

export interface PortLockOptions {
  /** Where the lock files live (default: `<tmpdir>/kperturb-ports`, shared by every kperturb on the machine). */
  dir?: string;
  /** Told once per port when the run has to wait, with the reason. */
  onWait?: (port: number, reason: string) => void;
  /** Gives up after this long, with an error naming the port (default: 30 min). */
  timeoutMs?: number;
}

/** Takes every port's lock (in ascending order, so two runs cannot deadlock); resolves to a release function. */
export async function lockPorts(ports: readonly number[], options: PortLockOptions = {}): Promise<() => void> {
  const dir = options.dir ?? join(tmpdir(), 'kperturb-ports');
  mkdirSync(dir, { recursive: true });
  const held: string[] = [];
  const release = () => {
    for (const file of held.splice(0)) {
      try {
        unlinkSync(file);
      } catch {
        /* already gone */
      }
    }
  };
  const deadline = Date.now() + (options.timeoutMs ?? 30 * 60_000);
  try {
    for (const port of [...new Set(ports)].sort((a, b) => a - b)) {
      const file = join(dir, `${port}.lock`);
      let told = false;
      for (;;) {
        let reason = tryLock(file);
        if (reason === undefined && !(await portFree(port))) {
          // Locked, but another program listens there: let go while we wait.
          unlinkQuietly(file);
          reason = `something else is listening on port ${port}`;
        }
        if (reason === undefined) break;
        if (!told) options.onWait?.(port, reason);
        told = true;
        if (Date.now() >= deadline) throw new Error(`port ${port} stayed busy (${reason}); the controller binds it (controller.ports)`);
        await sleep(POLL_MS);
      }
      held.push(file);
    }
  } catch (err) {
    release();
    throw err;
  }
  return release;
}

/** Creates the lock file; undefined when taken, else why not ("held by pid N"). */
function tryLock(file: string): string | undefined {
  const holder = tryLockFile(file);
  return holder && `held by pid ${holder.pid}`;
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
