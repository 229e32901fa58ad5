/**
 * Writing results so that an interrupted kperturb (Ctrl-C, SIGKILL, a full disk) leaves the old
 * version or the new one, never a cut-off file or a half-filled run directory: files are written
 * beside their place and renamed over it; directories are filled under a hidden sibling name and
 * renamed into place only once complete.
 */
import { closeSync, existsSync, fsyncSync, mkdirSync, openSync, renameSync, rmSync, unlinkSync, writeSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';

/** Replaces `file` with `text` in one step (a rename); `mode` applies to the new file (e.g. 0o600). */
export function writeFileAtomic(file: string, text: string, mode?: number): void {
  const tmp = join(dirname(file), `.${basename(file)}.${process.pid}.tmp`);
  try {
    const fd = openSync(tmp, 'w', mode);
    try {
      writeSync(fd, text);
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    renameSync(tmp, file);
  } catch (err) {
    try {
      unlinkSync(tmp);
    } catch {
      /* never created, or renamed */
    }
    throw err;
  }
}

/** The hidden siblings of a directory being replaced: the new one being filled, the old one on its way out. */
function siblings(dir: string): { partial: string; replaced: string } {
  const base = join(dirname(dir), `.${basename(dir)}`);
  return { partial: `${base}.partial`, replaced: `${base}.replaced` };
}

/**
 * Puts a directory back in order after an interrupted replaceDirectory: the old directory returns
 * if the process died between the two renames, and a half-filled new one is removed. Only one
 * process may replace a directory at a time (the campaign lock sees to that).
 */
export function recoverDirectory(dir: string): void {
  const { partial, replaced } = siblings(dir);
  if (existsSync(replaced)) {
    if (existsSync(dir)) rmSync(replaced, { recursive: true, force: true });
    else renameSync(replaced, dir);
  }
  rmSync(partial, { recursive: true, force: true });
}

export interface DirectoryReplacement {
  /** Where the new directory is filled (a hidden sibling of the target). */
  readonly path: string;
  /** Puts the filled directory in place of the target (removing the old one). */
  commit(): void;
}

/**
 * Starts a new version of `dir` that only replaces it once complete: until commit() the old
 * directory, if any, stays untouched, so an interrupted re-run keeps the earlier one. A replacement
 * never committed is removed by the next one (or by recoverDirectory).
 */
export function replaceDirectory(dir: string): DirectoryReplacement {
  recoverDirectory(dir);
  const { partial, replaced } = siblings(dir);
  mkdirSync(partial, { recursive: true });
  return {
    path: partial,
    commit: () => {
      if (existsSync(dir)) renameSync(dir, replaced);
      renameSync(partial, dir);
      rmSync(replaced, { recursive: true, force: true });
    },
  };
}
