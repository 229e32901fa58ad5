/**
 * Secret values are replaced by a keyed hash (HMAC-SHA-256): without the key a guessed password
 * cannot be confirmed from a trace; with the campaign's key file every run of the campaign hashes
 * alike. The key is process-wide, so these tests run one at a time.
 */
import { createHash, createHmac } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import test, { type ExecutionContext } from 'ava';
import { hashSecretValue, isHashedSecretValue } from '../../src/model/secret-hash.js';
import { useSecretHashKeyFile } from '../../src/io/secret-hash-key.js';
import { UserInputError } from '../../src/model/errors.js';
import { loadConfig } from '../../src/config/config.js';
import { learn, plan, test as runPlans } from '../../src/campaign/campaign.js';
import { scratchDir } from '../_scratch-dir.js';

function tempDir(t: ExecutionContext): string {
  return scratchDir(t, 'kperturb-secret-hash-');
}

const hmac = (key: Buffer, value: string) => 'hmac-sha256:' + createHmac('sha256', key).update(value).digest('hex').slice(0, 16);

test.serial('the hash is an HMAC under the key file, not a plain SHA-256 anyone can recompute', (t) => {
  const dir = tempDir(t);
  const keyFile = join(dir, 'secret-hash.key');
  useSecretHashKeyFile(keyFile);
  const key = readFileSync(keyFile);
  t.is(key.length, 32);
  t.is(statSync(keyFile).mode & 0o777, 0o600);
  const hashed = hashSecretValue('hunter2');
  t.regex(hashed, /^hmac-sha256:[0-9a-f]{16}$/);
  t.is(hashed, hmac(key, 'hunter2'));
  const unkeyed = createHash('sha256').update('hunter2').digest('hex').slice(0, 16);
  t.false(hashed.includes(unkeyed), 'a dictionary of plain SHA-256 hashes does not find the password');
  t.true(isHashedSecretValue(hashed));
  t.true(isHashedSecretValue(`sha256:${unkeyed}`), 'hashes of earlier versions are not hashed again');
  t.false(isHashedSecretValue('hunter2'));
});

test.serial('the same key file gives the same hashes (across runs and processes); another key, other hashes', (t) => {
  const dir = tempDir(t);
  useSecretHashKeyFile(join(dir, 'a.key'));
  const a = hashSecretValue('hunter2');
  useSecretHashKeyFile(join(dir, 'b.key'));
  const b = hashSecretValue('hunter2');
  t.not(a, b);
  useSecretHashKeyFile(join(dir, 'a.key'));
  t.is(hashSecretValue('hunter2'), a, 'the key was kept in the file, not made again');
  t.is(hashSecretValue('hunter2'), hmac(readFileSync(join(dir, 'a.key')), 'hunter2'));
});

test.serial('a key file of the wrong size is refused, naming the file', (t) => {
  const file = join(tempDir(t), 'short.key');
  writeFileSync(file, 'too short');
  const err = t.throws(() => useSecretHashKeyFile(file), { instanceOf: UserInputError });
  t.true(err!.message.startsWith(file));
  t.regex(err!.message, /32 bytes/);
});

test.serial("learn, plan and test all hash with the key kept 0600 in the campaign's output directory", async (t) => {
  const config = loadConfig(fileURLToPath(new URL('../../../fixtures/controllers/secret-marker/buggy/kperturb.yaml', import.meta.url)));
  const out = tempDir(t);
  const other = join(tempDir(t), 'other.key');
  const log = () => undefined;
  await t.throwsAsync(learn(config, { out, log, workloads: ['no-such-workload'] }), { instanceOf: UserInputError });
  const keyFile = join(out, 'secret-hash.key');
  t.is(statSync(keyFile).mode & 0o777, 0o600);
  const campaign = hmac(readFileSync(keyFile), 'hunter2');
  t.is(hashSecretValue('hunter2'), campaign, 'learn');
  useSecretHashKeyFile(other);
  await t.throwsAsync(plan(config, { out, log, workloads: ['no-such-workload'] }), { instanceOf: UserInputError });
  t.is(hashSecretValue('hunter2'), campaign, 'plan');
  useSecretHashKeyFile(other);
  await runPlans(config, [], { out, log });
  t.is(hashSecretValue('hunter2'), campaign, 'test');
});

test.serial('plan and test refuse reference runs without the key they were recorded with, instead of making a new one', async (t) => {
  const config = loadConfig(fileURLToPath(new URL('../../../fixtures/controllers/secret-marker/buggy/kperturb.yaml', import.meta.url)));
  const out = tempDir(t);
  const log = () => undefined;
  // Reference runs copied without the output directory's key file.
  mkdirSync(join(out, config.name, 'learn', 'mark', 'ref-1'), { recursive: true });
  const keyFile = join(out, 'secret-hash.key');
  for (const stage of [() => plan(config, { out, log }), () => runPlans(config, [], { out, log })]) {
    const err = await t.throwsAsync(stage(), { instanceOf: UserInputError });
    t.true(err!.message.startsWith(`${keyFile}: `), err!.message);
    t.true(err!.message.includes(`the secret-hash key of the runs in ${join(out, config.name, 'learn')}`), err!.message);
    t.false(existsSync(keyFile));
  }
  // With nothing learned yet, the first stage makes the key.
  const fresh = tempDir(t);
  await runPlans(config, [], { out: fresh, log });
  t.true(existsSync(join(fresh, 'secret-hash.key')));
});
