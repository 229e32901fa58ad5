/** `kperturb diff`: the end-state and update-summary differences between two run directories. */
import { Command } from 'commander';
import { resolve } from 'node:path';
import { diffRuns, renderRunDiff } from '../../report/run-diff.js';

export function registerDiff(program: Command): void {
  program
    .command('diff')
    .description('the end-state and update-summary differences between two run directories')
    .argument('<reference-run>', 'a run directory (e.g. .kperturb/<controller>/learn/<workload>/ref-1)')
    .argument('<test-run>', 'another run directory (e.g. .kperturb/<controller>/test/<workload>/<plan>)')
    .option('--json', 'print the differences as JSON')
    .action(async (referenceRun: string, testRun: string, opts: { json?: boolean }) => {
      const d = await diffRuns(resolve(referenceRun), resolve(testRun));
      process.stdout.write(opts.json ? JSON.stringify(d, null, 2) + '\n' : renderRunDiff(d));
      process.exitCode = d.endState.length + d.updateSummary.length > 0 ? 1 : 0;
    });
}
