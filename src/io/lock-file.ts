/**
 * Lock files naming the process that holds them: created atomically (written aside and hard-linked
 * into place, so the file appears complete or not at all) and taken over when their process is
 * gone. Used for the fixed ports of controllers (src/coordinator/port-locks.ts) and for campaign
 * directories (src/campaign/campaign-lock.ts).
 */
import { linkSync, readFileSync, unlinkSync, writeFileSync } from 'node:fs';

export interface LockHolder {
  pid: number;
  /** When the holder took the lock (ISO time). */
  since?: string;
  /** What the holder is running, for the message of whoever finds the lock taken. */
  command?: string;
  /**
   * The holder's start time as the kernel counts it (Linux), so that a pid reused by another
   * process after the holder died (a new container, a reboot) does not keep the lock.
   */
  processStart?: string;
}

/**
 * Creates `file` naming this process (and `command`). Returns undefined when the lock is now ours,
 * else its live holder. A lock left by a process that is gone is removed, `onStale` told, and taken.
 */
export function tryLockFile(file: string, command?: string, onStale?: (stale: LockHolder) => void): LockHolder | undefined {
  const mine: LockHolder = { pid: process.pid, since: new Date().toISOString(), ...(command ? { command } : {}) };
  const start = processStart(process.pid);
  if (start) mine.processStart = start;
  for (let attempt = 0; ; attempt++) {
    const aside = `${file}.${process.pid}`;
    writeFileSync(aside, JSON.stringify(mine) + '\n');
    try {
      linkSync(aside, file);
      return undefined;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    } finally {
      unlinkQuietly(aside);
    }
    const holder = readLockFile(file);
    if (holder === undefined) continue; // released meanwhile
    if (holderAlive(holder) || attempt > 0) return holder;
    onStale?.(holder);
    unlinkQuietly(file);
  }
}

/** The holder a lock file names; a bare pid is read too (port locks before v1 of this format). */
export function readLockFile(file: string): LockHolder | undefined {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    return undefined;
  }
  try {
    const doc = JSON.parse(text) as Partial<LockHolder>;
    if (typeof doc === 'object' && doc !== null && typeof doc.pid === 'number') return doc as LockHolder;
  } catch {
    /* not JSON */
  }
  return { pid: Number(text.trim()) };
}

/** Removes the lock file if it is still this process's (a taken-over lock is someone else's now). */
export function releaseLockFile(file: string): void {
  if (readLockFile(file)?.pid === process.pid) unlinkQuietly(file);
}

export function holderAlive(holder: LockHolder): boolean {
  if (!Number.isInteger(holder.pid) || holder.pid <= 0) return false;
  try {
    process.kill(holder.pid, 0);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EPERM') return false;
  }
  const start = holder.processStart === undefined ? undefined : processStart(holder.pid);
  return start === undefined || start === holder.processStart;
}

/** Field 22 of /proc/<pid>/stat (start time in clock ticks since boot); undefined off Linux. */
function processStart(pid: number): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name (field 2) is in parentheses and may hold spaces: count from the last ')'.
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19];
  } catch {
    return undefined;
  }
}

function unlinkQuietly(file: string): void {
  try {
    unlinkSync(file);
  } catch {
    /* gone */
  }
}
