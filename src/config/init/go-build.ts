/**
 * Builds an operator's Go main package for `kperturb init` and `kperturb build`, without touching the
 * repository's go.mod: the build reads a copy of go.mod and go.sum (`go build -modfile`) into which
 * the vanity modules the Go module proxy refuses are replaced by their GitHub twins, and `-mod=mod`
 * lets old go.sum files be completed in the copy. A vendored module builds from vendor/ as it is.
 * Modules and objects go to Go's own caches, so a second build only relinks.
 */
import { spawn } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, rmSync, renameSync, appendFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { SetupError } from '../../model/errors.js';
import { GO_TOOLCHAIN_FIXES, VANITY_MODULES, type GoModuleFact } from './repo-scan.js';

export interface GoBuildResult {
  binary: string;
  seconds: number;
  replaced: string[];
}

function run(cmd: string, args: string[], cwd: string, env: NodeJS.ProcessEnv): Promise<{ code: number; output: string }> {
  return new Promise((done, fail) => {
    const child = spawn(cmd, args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (b: Buffer) => (output += b.toString()));
    child.stderr.on('data', (b: Buffer) => (output += b.toString()));
    child.on('error', fail);
    child.on('close', (code) => done({ code: code ?? 1, output }));
  });
}

/** Builds `main` (a package path relative to `repo`, `./cmd/manager`) into `output`. */
export async function buildGoOperator(
  repo: string,
  main: string,
  output: string,
  module: GoModuleFact | undefined,
  log: (line: string) => void,
): Promise<GoBuildResult> {
  const started = Date.now();
  const goVersion = await run('go', ['env', 'GOVERSION'], repo, process.env).catch(() => undefined);
  if (!goVersion || goVersion.code !== 0)
    throw new SetupError('kperturb: no `go` command on PATH: install Go to build the operator, or give controller.command a binary you built');
  const abs = resolve(repo, output);
  mkdirSync(dirname(abs), { recursive: true });
  const args = ['build', '-trimpath', '-o', `${abs}.tmp`];
  const replaced: string[] = [];
  let work: string | undefined;
  let flags = '-buildvcs=false';
  if (module?.vendored) flags += ' -mod=vendor';
  else if (existsSync(join(repo, 'go.mod'))) {
    work = mkdtempSync(join(tmpdir(), 'kperturb-gomod-'));
    copyFileSync(join(repo, 'go.mod'), join(work, 'go.mod'));
    if (existsSync(join(repo, 'go.sum'))) copyFileSync(join(repo, 'go.sum'), join(work, 'go.sum'));
    const replacements = { ...VANITY_MODULES, ...GO_TOOLCHAIN_FIXES };
    for (const m of [...(module?.vanityModules ?? []), ...(module?.toolchainFixes ?? [])]) {
      appendFileSync(join(work, 'go.mod'), `\nreplace ${m} => ${replacements[m]!.replace('@', ' ')}\n`);
      replaced.push(`${m} => ${replacements[m]}`);
    }
    args.push(`-modfile=${join(work, 'go.mod')}`);
    flags += ' -mod=mod';
  }
  args.push(main);
  log(`building ${main} with ${goVersion.output.trim()}${replaced.length > 0 ? ` (replacing ${replaced.join(', ')})` : ''}`);
  const env = { ...process.env, GOTOOLCHAIN: 'local', GOFLAGS: `${process.env.GOFLAGS ?? ''} ${flags}`.trim() };
  try {
    const result = await run('nice', ['-n', '10', 'go', ...args], repo, env);
    if (result.code !== 0) {
      rmSync(`${abs}.tmp`, { force: true });
      const tail = result.output.trim().split('\n').slice(-15).join('\n');
      throw new SetupError(`kperturb: building ${main} failed (go ${args.join(' ')}):\n${tail}`);
    }
    renameSync(`${abs}.tmp`, abs);
  } finally {
    if (work) rmSync(work, { recursive: true, force: true });
  }
  return { binary: abs, seconds: (Date.now() - started) / 1000, replaced };
}
