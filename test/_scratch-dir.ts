/**
 * Scratch directories of tests, removed once they are done with, so that `npm test` leaves nothing
 * behind in the temporary directory (a run used to leave about 300 MB there: npm pack's package and
 * its global install, the getting-started guide's operator build, the example campaigns' run
 * directories). A failed test's directories are kept, and their paths logged, to look at.
 * removeIfPassed does the same for a directory a test made itself (in its t.teardown: in the test's
 * body t.passed is not final yet).
 */
import test, { type ExecutionContext } from 'ava';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** Removes `dir` if the test passed, else logs that it is kept; to be called in a t.teardown. */
export function removeIfPassed(t: ExecutionContext, dir: string): void {
  if (t.passed) rmSync(dir, { recursive: true, force: true });
  else t.log(`kept for a look: ${dir}`);
}

/** A new directory `<tmp>/<prefix>XXXXXX`, removed when the test passes. */
export function scratchDir(t: ExecutionContext, prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  t.teardown(() => removeIfPassed(t, dir));
  return dir;
}

const shared = new Set<string>();
let failed = false;
let ran = false;
test.afterEach.always((t) => {
  ran = true;
  if (!t.passed) failed = true;
});
// No test ran though the after hooks do: a before hook failed (AVA runs no hooks in a file with no test to run).
test.after.always((t) => {
  if (failed || !ran) for (const dir of shared) t.log(`kept for a look: ${dir}`);
  else for (const dir of shared) rmSync(dir, { recursive: true, force: true });
});

/** A new directory for several tests of a file (a campaign they share), removed after the file's tests when all of them passed (and its before hooks). */
export function sharedScratchDir(prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  shared.add(dir);
  return dir;
}
