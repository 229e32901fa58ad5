/**
 * The stand-in for a Secret value wherever kperturb writes one (traces, plans, end states, reports):
 * `hmac-sha256:` and the first 16 hex digits of HMAC-SHA-256(key, value). Under one key equal values
 * stay equal, so runs still compare; without the key, a guessed password cannot be confirmed from a
 * trace. A campaign keeps its key in a file (CampaignLayout.secretHashKeyFile, mode 0600) that learn,
 * plan and test all load, so every run of it hashes alike; any other process hashes with a random
 * key of its own unless given one.
 *
 * The key is process-wide: the hashing happens deep inside trace writers, trigger matching and
 * report redaction, and every campaign one process runs (the demo's included) shares one output
 * directory and so one key.
 */
import { createHmac, randomBytes } from 'node:crypto';
import { readOrCreatePrivateFile } from './private-file.js';
import { UserInputError } from './errors.js';

const KEY_BYTES = 32;
const PREFIX = 'hmac-sha256:';
/** `sha256:` is how earlier versions hashed (unkeyed): such values are hashed already too. */
const HASHED = /^(hmac-sha256|sha256):[0-9a-f]{16}$/;

let key: Buffer = randomBytes(KEY_BYTES);

/** A stable, non-reversible stand-in for a secret value: equal values stay equal, so diffs still work. */
export function hashSecretValue(value: string): string {
  return PREFIX + createHmac('sha256', key).update(value).digest('hex').slice(0, 16);
}

/** Is this a value hashSecretValue made (under any key)? */
export function isHashedSecretValue(value: unknown): boolean {
  return typeof value === 'string' && HASHED.test(value);
}

/**
 * Hashes from now on with the key in `file`, making a random one there (mode 0600) if there is none.
 * Throws UserInputError for a file that does not hold a key.
 */
export function useSecretHashKeyFile(file: string): void {
  let content: Buffer;
  try {
    content = readOrCreatePrivateFile(file, () => randomBytes(KEY_BYTES));
  } catch (err) {
    throw new UserInputError(file, undefined, `a readable secret-hash key file or a place to create one (${(err as Error).message})`);
  }
  if (content.length !== KEY_BYTES) throw new UserInputError(file, undefined, `a secret-hash key of ${KEY_BYTES} bytes (got ${content.length}; delete the file to make a new key, which changes every hash)`);
  key = content;
}
