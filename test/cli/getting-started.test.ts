/**
 * docs/getting-started.md, run as written: every `npx kperturb ...` line of its sh blocks, in order,
 * in a copy of the bundled operator repository it describes (fixtures/init/memcached-operator), with
 * this checkout's kperturb, each with the exit code the guide says it has.
 */
import test from 'ava';
import { execFile, spawnSync } from 'node:child_process';
import { promisify } from 'node:util';
import { cpSync, existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { hangBound } from '../_hang-bound.js';
import { scratchDir } from '../_scratch-dir.js';

const root = fileURLToPath(new URL('../../../', import.meta.url));
const CLI = join(root, 'bin', 'kperturb.js');
const hasGo = spawnSync('go', ['version']).status === 0;

/**
 * The guide's commands: the lines of its sh blocks, `cd` lines dropped (the test runs in the copy),
 * each with the exit code the guide states (`# exits N`; 0 when it states none).
 */
export function guideCommands(markdown: string): { args: string[]; exit: number }[] {
  const blocks = [...markdown.matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => m[1]!);
  return blocks
    .flatMap((b) => b.split('\n'))
    .map((l) => l.trim())
    .filter((l) => l !== '' && !l.startsWith('cd '))
    .map((l) => {
      const [command = '', note = ''] = l.split(/\s+#\s*/);
      const words = command.trim().split(/\s+/);
      if (words[0] !== 'npx' || words[1] !== 'kperturb') throw new Error(`docs/getting-started.md: a command the test cannot run as written: ${l}`);
      return { args: words.slice(2), exit: Number(/^exits (\d+)/.exec(note)?.[1] ?? 0) };
    });
}

test('the guide has the commands of a first campaign, in order', (t) => {
  const commands = guideCommands(readFileSync(join(root, 'docs', 'getting-started.md'), 'utf8'));
  t.deepEqual(
    commands.map((c) => [c.args[0], c.exit]),
    [
      ['init', 0],
      ['learn', 0],
      ['plan', 0],
      ['test', 0],
      ['report', 0],
    ],
  );
});

const run = promisify(execFile);

(hasGo ? test : test.skip)('every command of docs/getting-started.md succeeds on the bundled operator repository', async (t) => {
  // The first command builds a Go operator: minutes on a loaded machine with cold caches.
  t.timeout(hangBound(1_200_000));
  const dir = scratchDir(t, 'kperturb-guide-');
  cpSync(join(root, 'fixtures', 'init', 'memcached-operator'), dir, { recursive: true });
  for (const { args, exit } of guideCommands(readFileSync(join(root, 'docs', 'getting-started.md'), 'utf8'))) {
    const r = await run(process.execPath, [CLI, ...args], { cwd: dir, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 }).then(
      (ok) => ({ code: 0, ...ok }),
      (err: { code?: number; stdout?: string; stderr?: string }) => ({ code: err.code ?? -1, stdout: err.stdout ?? '', stderr: err.stderr ?? '' }),
    );
    t.is(r.code, exit, `kperturb ${args.join(' ')} exited ${r.code}:\n${r.stdout.slice(-3000)}\n${r.stderr.slice(-3000)}`);
  }
  t.true(existsSync(join(dir, 'kperturb.yaml')));
  t.true(existsSync(join(dir, 'report.html')));
});
