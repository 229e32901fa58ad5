/**
 * One kperturb at a time per campaign directory (<out>/<controller>): two `test` runs at once would
 * share run directories and overwrite each other's verdicts and results.json, and a `learn` or
 * `plan` would replace the reference runs or plans a `test` is reading. learn, plan and test take
 * the lock file `<out>/<controller>/kperturb.lock` (holding pid, start time and command) for as long
 * as they run. Calls in one process share it (the demo tests several workloads at once).
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { SetupError } from '../model/errors.js';
import { releaseLockFile, tryLockFile } from '../io/lock-file.js';

export const LOCK_FILE = 'kperturb.lock';

const held = new Map<string, { count: number; release: () => void }>();

/** Takes the lock of a campaign directory (creating it); resolves to its release, which every exit path must call. */
export function lockCampaignDir(dir: string, log: (line: string) => void): () => void {
  const file = join(dir, LOCK_FILE);
  let entry = held.get(file);
  if (!entry) {
    mkdirSync(dir, { recursive: true });
    const command = ['kperturb', ...process.argv.slice(2)].join(' ');
    const holder = tryLockFile(file, command, (stale) =>
      log(`taking over ${file}: its holder (pid ${stale.pid}${stale.since ? `, since ${stale.since}` : ''}) is no longer running`),
    );
    if (holder) {
      throw new SetupError(
        `${dir} is in use by another kperturb (pid ${holder.pid}${holder.since ? `, since ${holder.since}` : ''}${holder.command ? `: ${holder.command}` : ''}); ` +
          `lock file ${file}. Wait for it to finish, or use another --out`,
      );
    }
    // Also on process.exit() (a signal handler's), which skips the callers' finally blocks.
    const onExit = () => releaseLockFile(file);
    process.on('exit', onExit);
    entry = {
      count: 0,
      release: () => {
        process.off('exit', onExit);
        releaseLockFile(file);
      },
    };
    held.set(file, entry);
  }
  const lock = entry;
  lock.count++;
  let released = false;
  return () => {
    if (released) return;
    released = true;
    if (--lock.count === 0) {
      held.delete(file);
      lock.release();
    }
  };
}
