/**
 * The campaign directory's lock (src/campaign/campaign-lock.ts): held by one process at a time,
 * shared by the calls of one process, taken over when its holder is gone, released on exit.
 */
import test from 'ava';
import { spawn } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { LOCK_FILE, lockCampaignDir } from '../../src/campaign/campaign-lock.js';
import { SetupError } from '../../src/model/errors.js';
import { scratchDir } from '../_scratch-dir.js';

const lockModule = pathToFileURL(new URL('../../src/campaign/campaign-lock.js', import.meta.url).pathname).href;

function campaignDir(t: import('ava').ExecutionContext): string {
  return scratchDir(t, 'kperturb-lock-');
}

/** Another process that takes the lock, says so on stdout, then runs `then` (JavaScript). */
function holder(dir: string, then: string) {
  const script = `import { lockCampaignDir } from ${JSON.stringify(lockModule)};\nlockCampaignDir(${JSON.stringify(dir)}, () => undefined);\nconsole.log('locked');\n${then}`;
  const child = spawn(process.execPath, ['--input-type=module', '-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
  const locked = new Promise<void>((resolve, reject) => {
    child.stdout.on('data', (d: Buffer) => d.toString().includes('locked') && resolve());
    child.on('exit', (code) => reject(new Error(`the holder exited (${code}) before locking`)));
  });
  const exited = new Promise<void>((resolve) => child.on('exit', () => resolve()));
  return { pid: child.pid!, locked, exited, kill: () => child.kill('SIGKILL') };
}

test('a live holder in another process keeps the lock: the error names its pid and the lock file; once it is killed the lock is taken over', async (t) => {
  const dir = campaignDir(t);
  const other = holder(dir, 'setInterval(() => undefined, 1 << 30);');
  t.teardown(other.kill);
  await other.locked;
  const err = t.throws(() => lockCampaignDir(dir, () => undefined), { instanceOf: SetupError });
  t.true(err!.message.includes(`in use by another kperturb (pid ${other.pid}`), err!.message);
  t.true(err!.message.includes(join(dir, LOCK_FILE)), err!.message);

  other.kill();
  await other.exited;
  const told: string[] = [];
  const release = lockCampaignDir(dir, (line) => told.push(line));
  t.regex(told.join('\n'), new RegExp(`taking over .*${LOCK_FILE}: its holder \\(pid ${other.pid}, since .*\\) is no longer running`));
  t.is(JSON.parse(readFileSync(join(dir, LOCK_FILE), 'utf8')).pid, process.pid);
  release();
  t.false(existsSync(join(dir, LOCK_FILE)));
});

test('a holder that calls process.exit (as a signal handler does) leaves no lock behind', async (t) => {
  const dir = campaignDir(t);
  const other = holder(dir, 'process.exit(0);');
  await other.exited;
  t.false(existsSync(join(dir, LOCK_FILE)));
});

test('calls in one process share the lock; it goes with the last release', (t) => {
  const dir = campaignDir(t);
  const first = lockCampaignDir(dir, () => undefined);
  const second = lockCampaignDir(dir, () => undefined);
  first();
  first();
  t.true(existsSync(join(dir, LOCK_FILE)), 'still held by the second call');
  second();
  t.false(existsSync(join(dir, LOCK_FILE)));
});

const linux = existsSync('/proc/self/stat');
(linux ? test : test.skip)('a lock naming a live pid that another process got since (pid reuse) is taken over', (t) => {
  const dir = campaignDir(t);
  // Our own pid, with a start time that is not ours: the holder that wrote it is gone.
  writeFileSync(join(dir, LOCK_FILE), JSON.stringify({ pid: process.pid, since: '2020-01-01T00:00:00Z', processStart: '1' }));
  const told: string[] = [];
  const release = lockCampaignDir(dir, (line) => told.push(line));
  t.is(told.length, 1, 'taken over');
  release();
});
