/**
 * The baseline side of a benchmark: another commit of this repository, checked out in a temporary git
 * worktree beside this checkout's node_modules and built (TypeScript and the Go examples), so that a
 * script measures it in the same run as this commit.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** A worktree of `ref` (of the repository at `ROOT`) beside ROOT's node_modules, built; undefined when it cannot be. */
export function buildBaseline(ROOT: string, ref: string): { root: string; remove(): void } | undefined {
  const dir = mkdtempSync(join(tmpdir(), 'kperturb-bench-baseline-'));
  const root = join(dir, 'kperturb');
  try {
    execFileSync('git', ['-C', ROOT, 'worktree', 'add', '--detach', root, ref], { stdio: 'ignore' });
    symlinkSync(join(ROOT, 'node_modules'), join(root, 'node_modules'));
    // -b: a layered checkout's tsconfig.json only references the layers' projects (an older one builds alike).
    execFileSync(process.execPath, [join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc'), '-b', join(root, 'tsconfig.json')], { stdio: 'inherit' });
    execFileSync('sh', [join(root, 'scripts', 'build-go-fixtures.sh')], { stdio: 'inherit' });
  } catch (err) {
    process.stderr.write(`baseline ${ref} could not be built (${(err as Error).message}); no ratios\n`);
    return undefined;
  }
  return {
    root,
    remove: () => {
      execFileSync('git', ['-C', ROOT, 'worktree', 'remove', '--force', root], { stdio: 'ignore' });
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
