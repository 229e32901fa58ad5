/**
 * YAML (and JSON) input files: read, then parsed by the core's parseYamlText so that a syntax error
 * names the file, line and column; a missing or unreadable file is a UserInputError naming it too.
 */
import { readFileSync } from 'node:fs';
import { UserInputError, type ErrorCode } from '../model/errors.js';
import { parseYamlText } from '../model/validate.js';

/** Reads a YAML (or JSON) file; syntax errors name the file, line and column (and carry `code`). */
export function readYamlFile(file: string, code: ErrorCode = 'KP_E_INPUT'): unknown {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    const errno = (err as NodeJS.ErrnoException).code;
    throw new UserInputError(file, undefined, errno === 'ENOENT' ? 'an existing file (not found)' : `a readable file (${errno})`, code);
  }
  return parseYamlText(text, file, code);
}
