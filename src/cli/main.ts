/**
 * The kperturb command line: the program, its global options, and how errors end it. Each command is
 * a module of src/cli/commands. Exit codes: 0 success (no bug found), 1 bugs found (`test`, `demo`,
 * `report`), 2 bad input or setup failure. Errors a user can act on are printed without a stack trace.
 */
import { Command, CommanderError } from 'commander';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { InterruptedError, UserInputError, errorCode } from '../model/errors.js';
import { interruptExitCode } from './signals.js';
import { logError, output } from './common.js';
import { registerImport } from './commands/import.js';
import { registerCluster } from './commands/cluster.js';
import { registerProxy } from './commands/proxy.js';
import { registerLearn } from './commands/learn.js';
import { registerPlan } from './commands/plan.js';
import { registerTest } from './commands/test.js';
import { registerReport } from './commands/report.js';
import { registerSchema } from './commands/schema.js';
import { registerDiff } from './commands/diff.js';
import { registerJob } from './commands/job.js';
import { registerDemo } from './commands/demo.js';
import { registerInit } from './commands/init.js';
import { registerExplore } from './commands/explore.js';

/** The version in the package.json beside dist/ (one file to bump). */
function packageVersion(): string {
  const file = fileURLToPath(new URL('../../../package.json', import.meta.url));
  try {
    const { version } = JSON.parse(readFileSync(file, 'utf8')) as { version?: unknown };
    return typeof version === 'string' ? version : 'unknown';
  } catch {
    return 'unknown';
  }
}

export function buildProgram(): Command {
  const program = new Command()
    .name('kperturb')
    .description('Test Kubernetes controllers by perturbing their view of the cluster from an intercepting proxy.')
    .version(packageVersion(), '-V, --version', 'print the version of kperturb')
    .option('-q, --quiet', 'print only bugs, warnings and errors on stderr (no progress)')
    .option('--verbose', "also print each finished plan's perturbation, run directory and alarms")
    .option('--no-color', 'no colour (also: NO_COLOR set; colour is only used on a terminal)')
    .showHelpAfterError()
    .exitOverride()
    .hook('preAction', (cmd, action) => {
      // A command asked for JSON on stdout (`report --json`, `diff --json`) gets its error as JSON too.
      output.jsonErrors = action.opts<{ json?: unknown }>().json === true;
      const o = cmd.opts<{ quiet?: boolean; verbose?: boolean; color: boolean }>();
      if (o.quiet && o.verbose) throw new UserInputError(undefined, '--quiet', 'either --quiet or --verbose, not both');
      output.verbosity = o.quiet ? 'quiet' : o.verbose ? 'verbose' : 'normal';
      output.colour = o.color;
    });

  registerInit(program);
  registerCluster(program);
  registerProxy(program);
  registerLearn(program);
  registerPlan(program);
  registerTest(program);
  registerReport(program);
  registerSchema(program);
  registerDiff(program);
  registerJob(program);
  registerDemo(program);
  registerImport(program);
  registerExplore(program);
  return program;
}

export async function main(argv: string[]): Promise<number> {
  const program = buildProgram();
  try {
    await program.parseAsync(argv);
    return typeof process.exitCode === 'number' ? process.exitCode : 0;
  } catch (err) {
    if (err instanceof CommanderError) {
      // --help and --version end here too, with exit code 0.
      return err.exitCode === 0 ? 0 : 2;
    }
    const code = errorCode(err);
    const message = err instanceof Error ? err.message : String(err);
    if (output.jsonErrors) {
      const where =
        err instanceof UserInputError ? { ...(err.file !== undefined ? { file: err.file } : {}), ...(err.at !== undefined ? { at: err.at } : {}) } : {};
      process.stdout.write(JSON.stringify({ error: { code, message, ...where } }, null, 2) + '\n');
    }
    if (err instanceof InterruptedError) {
      logError(`kperturb: interrupted: ${message}; rerun the same command to continue [${code}]`);
      return interruptExitCode() ?? 130;
    }
    logError(`kperturb: ${message} [${code}]`);
    if (code === 'KP_E_INTERNAL' && process.env.KPERTURB_DEBUG && err instanceof Error) logError(err.stack ?? '');
    return 2;
  }
}

const code = await main(process.argv);
// Servers and child processes are stopped by now; exit explicitly so a stray handle cannot hang the CLI.
process.exit(code);
