/**
 * `kperturb init [DIR]`: in an operator's repository, writes a kperturb.yaml that runs (the CRDs, a
 * seed CR, the manager's flags and environment, the Kubernetes release to emulate) and builds the
 * operator's Go main package into DIR/.kperturb/bin/manager. `kperturb build [DIR]` rebuilds it.
 * Exit 0 when the file was written (questions it could not answer are listed in it and on stderr),
 * 2 when DIR is not a directory, kperturb.yaml exists (without --force) or the build failed.
 */
import { existsSync, statSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { Command } from 'commander';
import { UserInputError } from '../../model/errors.js';
import { log, logError } from '../common.js';

function repoDir(dir: string): string {
  const abs = resolve(dir);
  if (!existsSync(abs) || !statSync(abs).isDirectory())
    throw new UserInputError(undefined, '[dir]', `an operator's repository directory (${dir} is not a directory)`);
  return abs;
}

export function registerInit(program: Command): void {
  program
    .command('init')
    .description("write a kperturb.yaml for the operator repository DIR (CRDs, seed CRs, the manager's flags and environment) and build its Go main package")
    .argument('[dir]', "the operator's repository", '.')
    .option('--force', 'overwrite an existing kperturb.yaml')
    .option('--no-build', 'do not build the operator (controller.command then names a binary still to build with `kperturb build`)')
    .option('--stdout', 'print the file instead of writing it (builds nothing)')
    .action((dir: string, opts: { force?: boolean; build: boolean; stdout?: boolean }) => runInit(dir, opts));
  program
    .command('build')
    .description(
      "build the operator repository DIR's Go main package into DIR/.kperturb/bin/manager, as `kperturb init` does (the repository's go.mod is not changed)",
    )
    .argument('[dir]', "the operator's repository", '.')
    .option('--main <package>', 'the main package to build (default: the one init chooses, e.g. ./cmd/manager)')
    .action((dir: string, opts: { main?: string }) => runBuild(dir, opts.main));
}

async function runInit(dir: string, opts: { force?: boolean; build: boolean; stdout?: boolean }): Promise<void> {
  const repo = repoDir(dir);
  const target = join(repo, 'kperturb.yaml');
  if (!opts.stdout && existsSync(target) && !opts.force)
    throw new UserInputError(target, undefined, 'no existing kperturb.yaml (give --force to overwrite it)');
  const { scanOperatorRepo } = await import('../../config/init/repo-scan.js');
  const { proposeConfig } = await import('../../config/init/propose.js');
  const { renderConfig } = await import('../../config/init/render.js');
  const { allowedKeys } = await import('../../io/schemas.js');
  const { validateConfig } = await import('../../config/config.js');
  const { parseYamlText } = await import('../../model/validate.js');
  const facts = scanOperatorRepo(repo);
  const proposal = proposeConfig(facts, (p) => existsSync(join(repo, p)));
  let buildNote = proposal.main
    ? `Built from ${proposal.main.value} (${proposal.main.why}) by \`kperturb build\`; run it again after changing the operator.`
    : 'No Go main package found: build the operator and give its binary here.';
  if (!opts.stdout && opts.build && proposal.main) {
    const { buildGoOperator } = await import('../../config/init/go-build.js');
    const built = await buildGoOperator(repo, proposal.main.value, proposal.binary, facts.module, (l) => log(`kperturb: ${l}`));
    log(`kperturb: built ${proposal.binary} in ${built.seconds.toFixed(1)} s`);
    if (built.replaced.length > 0)
      buildNote += ` The build replaces ${built.replaced.join(', ')} (the Go module proxy refuses those paths); go.mod is not changed.`;
  }
  const text = renderConfig(proposal, { seedsKey: allowedKeys('config', '').includes('seeds'), buildNote });
  // Never write a file kperturb itself would refuse (with --stdout the setup files init would write are not there to check).
  if (opts.stdout) {
    if (proposal.extraFiles.every((f) => f.controller || f.existing)) validateConfig(parseYamlText(text, target, 'KP_E_CONFIG'), target);
    process.stdout.write(text);
  } else {
    for (const f of proposal.extraFiles) if (!f.existing) writeFileSync(join(repo, f.file), f.text);
    validateConfig(parseYamlText(text, target, 'KP_E_CONFIG'), target);
    writeFileSync(target, text);
    log(`kperturb: wrote ${target} (${facts.layout} layout; ${proposal.crdFiles.value.length} CRD file(s), ${proposal.seeds.value.length} seed(s))`);
  }
  for (const q of proposal.questions) logError(`kperturb: question: ${q}`);
}

async function runBuild(dir: string, main: string | undefined): Promise<void> {
  const repo = repoDir(dir);
  const { scanOperatorRepo } = await import('../../config/init/repo-scan.js');
  const { proposeConfig, BINARY } = await import('../../config/init/propose.js');
  const { buildGoOperator } = await import('../../config/init/go-build.js');
  const facts = scanOperatorRepo(repo);
  const pkg = main ?? proposeConfig(facts, (p) => existsSync(join(repo, p))).main?.value;
  if (!pkg) throw new UserInputError(undefined, '--main', `a Go main package of ${repo} (none found; give --main ./path/to/main)`);
  const built = await buildGoOperator(repo, pkg, BINARY, facts.module, (l) => log(`kperturb: ${l}`));
  log(`kperturb: built ${built.binary} in ${built.seconds.toFixed(1)} s`);
}
