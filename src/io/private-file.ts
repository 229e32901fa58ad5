/** Files that hold credentials (kubeconfigs with tokens, keys): readable and writable by their owner only. */
import { randomBytes } from 'node:crypto';
import { linkSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';

/**
 * Writes `content` to `file` with mode 0600, whether or not the file existed (writeFileSync's `mode`
 * only applies to a file it creates): a fresh temp file beside it, renamed over it.
 */
export function writePrivateFile(file: string, content: string | Uint8Array): void {
  withPrivateTempFile(file, content, (tmp) => renameSync(tmp, file));
}

function withPrivateTempFile(file: string, content: string | Uint8Array, use: (tmp: string) => void): void {
  const tmp = `${file}.${process.pid}-${randomBytes(4).toString('hex')}.tmp`;
  try {
    writeFileSync(tmp, content, { mode: 0o600, flag: 'wx' });
    use(tmp);
  } finally {
    rmSync(tmp, { force: true });
  }
}

/**
 * The content of `file`, or, when there is none, `make()` written there with mode 0600. The file
 * appears complete (a hard link to a finished temp file), and if another process creates it at the
 * same moment, both get the content that won.
 */
export function readOrCreatePrivateFile(file: string, make: () => Uint8Array): Buffer {
  try {
    return readFileSync(file);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
  withPrivateTempFile(file, make(), (tmp) => {
    try {
      linkSync(tmp, file);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
  });
  return readFileSync(file);
}
