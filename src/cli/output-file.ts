/**
 * Files the user names with an option (`report --html FILE`, `--junit FILE`): a file-system error on
 * that path, or on a directory above it, becomes a message naming the option and the path.
 */
import { resolve, sep } from 'node:path';
import { UserInputError } from '../model/errors.js';

const REASONS: Readonly<Record<string, string>> = {
  EISDIR: 'is a directory',
  ENOTDIR: 'is not a directory',
  EEXIST: 'is not a directory',
  EACCES: 'permission denied',
  EPERM: 'operation not permitted',
  EROFS: 'read-only file system',
  ENOSPC: 'no space left on the device',
};

export async function writeOptionFile(option: string, file: string, write: () => void | Promise<void>): Promise<void> {
  try {
    await write();
  } catch (err) {
    const e = err as NodeJS.ErrnoException;
    const target = resolve(file);
    const at = typeof e.path === 'string' ? resolve(e.path) : undefined;
    if (!e.code || at === undefined || !(target === at || target.startsWith(at + sep))) throw err;
    const above = at === target ? '' : `${at}: `;
    throw new UserInputError(undefined, option, `a file path kperturb can write (${file}: ${above}${REASONS[e.code] ?? e.message}, ${e.code})`);
  }
}
