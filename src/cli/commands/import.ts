/**
 * `kperturb import chainsaw|kuttl DIR [-o FILE]`: a team's chainsaw or KUTTL tests as the workloads
 * section of a kperturb.yaml, printed or written. Paths in it are relative to the output file's
 * directory (stdout: the current directory). Exit 0 when every test imported, 2 naming the file, the
 * path in it and why for the first part kperturb cannot express.
 */
import { writeFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import type { Command } from 'commander';
import { importChainsaw } from '../../config/import/chainsaw.js';
import { importKuttl } from '../../config/import/kuttl.js';
import { renderWorkloads } from '../../config/import/suite.js';
import { UserInputError } from '../../model/errors.js';
import { writeOptionFile } from '../output-file.js';

const IMPORTERS = { chainsaw: importChainsaw, kuttl: importKuttl } as const;

export function registerImport(program: Command): void {
  program
    .command('import')
    .description('turn a chainsaw or KUTTL test directory into kperturb workloads (the workloads section of a kperturb.yaml)')
    .argument('<format>', 'chainsaw or kuttl')
    .argument('<dir>', 'a test directory, or a directory of them')
    .option('-o, --output <file>', 'write the workloads here (paths relative to its directory) instead of to stdout')
    .action((format: string, dir: string, opts: { output?: string }) => runImport(format, dir, opts.output));
}

async function runImport(format: string, dir: string, output: string | undefined): Promise<void> {
  if (!(format in IMPORTERS)) throw new UserInputError(undefined, '<format>', `chainsaw or kuttl (got ${JSON.stringify(format)})`);
  const result = IMPORTERS[format as keyof typeof IMPORTERS](dir);
  const text = renderWorkloads(result, output ? dirname(resolve(output)) : process.cwd(), format);
  if (output) await writeOptionFile('--output', output, () => writeFileSync(output, text));
  else process.stdout.write(text);
  const steps = result.workloads.reduce((n, w) => n + w.steps.length, 0);
  process.stderr.write(`kperturb: imported ${result.workloads.length} test(s) as workloads (${steps} steps)${output ? ` into ${output}` : ''}\n`);
  for (const note of result.notes) process.stderr.write(`kperturb: note: ${note}\n`);
}
