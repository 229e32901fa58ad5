/**
 * Scratch directories of tests, removed once they are done with, so that `npm test` leaves nothing
 * behind in the temporary directory (a run used to leave about 300 MB there: npm pack's package and
 * its global install, the getting-started guide's operator build, the example campaigns' run
 * directories). A failed test's directories are kept, and their paths logged, to look at.
 */
import test, { type ExecutionContext } from 'ava';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** A new directory `<tmp>/<prefix>XXXXXX`, removed when the test passes. */
export function scratchDir(t: ExecutionContext, prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  t.teardown(() => {
    if (t.passed) rmSync(dir, { recursive: true, force: true });
    else t.log(`kept for a look: ${dir}`);
  });
  return dir;
}

const shared = new Set<string>();
let failed = false;
test.afterEach.always((t) => {
  if (!t.passed) failed = true;
});
test.after.always(() => {
  if (failed) return;
  for (const dir of shared) rmSync(dir, { recursive: true, force: true });
});

/** A new directory for several tests of a file (a campaign they share), removed after the file's tests when all of them passed. */
export function sharedScratchDir(prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  shared.add(dir);
  return dir;
}
