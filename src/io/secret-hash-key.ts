/**
 * The campaign's secret-hash key file (CampaignLayout.secretHashKeyFile, mode 0600): read, or made
 * with a random key, and handed to the core's hashSecretValue (src/model/secret-hash.ts), so that
 * every run of one campaign hashes Secret values alike.
 */
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { readOrCreatePrivateFile } from './private-file.js';
import { UserInputError } from '../model/errors.js';
import { SECRET_HASH_KEY_BYTES, useSecretHashKey } from '../model/secret-hash.js';

/**
 * Hashes from now on with the key in `file`, making a random one there (mode 0600) if there is none.
 * Throws UserInputError for a file that does not hold a key, and for a missing one when `hashedBy`
 * names runs already recorded with a key (reference runs copied without it): a new key would make
 * every Secret value of the next runs differ from theirs, an alarm on each.
 */
export function useSecretHashKeyFile(file: string, hashedBy?: string): void {
  if (hashedBy !== undefined && !existsSync(file))
    throw new UserInputError(
      file,
      undefined,
      `the secret-hash key of the runs in ${hashedBy} (there is no such file: copy the secret-hash.key of the output directory they were recorded in here, or learn again; a new key would make every Secret value in the next runs differ from theirs)`,
    );
  let content: Buffer;
  try {
    content = readOrCreatePrivateFile(file, () => randomBytes(SECRET_HASH_KEY_BYTES));
  } catch (err) {
    throw new UserInputError(file, undefined, `a readable secret-hash key file or a place to create one (${(err as Error).message})`);
  }
  if (content.length !== SECRET_HASH_KEY_BYTES)
    throw new UserInputError(
      file,
      undefined,
      `a secret-hash key of ${SECRET_HASH_KEY_BYTES} bytes (got ${content.length}; delete the file to make a new key, which changes every hash)`,
    );
  useSecretHashKey(content);
}
