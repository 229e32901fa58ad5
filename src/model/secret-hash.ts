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
 *
 * Pure (the core): the HMAC is hash.ts's, and the key file is read by src/io/secret-hash-key.ts.
 */
import { createHmac } from './hash.js';

/** Web Crypto's random source: a global of every JavaScript host, not a Node module (see hash.ts). */
declare const crypto: { getRandomValues<T extends Uint8Array>(array: T): T };

export const SECRET_HASH_KEY_BYTES = 32;
const PREFIX = 'hmac-sha256:';
/** `sha256:` is how earlier versions hashed (unkeyed): such values are hashed already too. */
const HASHED = /^(hmac-sha256|sha256):[0-9a-f]{16}$/;

let key: Uint8Array = crypto.getRandomValues(new Uint8Array(SECRET_HASH_KEY_BYTES));

/** A stable, non-reversible stand-in for a secret value: equal values stay equal, so diffs still work. */
export function hashSecretValue(value: string): string {
  return PREFIX + createHmac('sha256', key).update(value).digest('hex').slice(0, 16);
}

/** Is this a value hashSecretValue made (under any key)? */
export function isHashedSecretValue(value: unknown): boolean {
  return typeof value === 'string' && HASHED.test(value);
}

/** Hashes from now on with `bytes` as the key (src/io/secret-hash-key.ts reads it from the campaign's key file). */
export function useSecretHashKey(bytes: Uint8Array): void {
  key = bytes;
}
