/** `kperturb demo`: learn, plan and test the bundled example controllers on the embedded cluster (or see --real, --kubeconfig). */
import { Command, Option } from 'commander';
import { resolve } from 'node:path';
import { DEMO_PARALLEL } from '../../campaign/limiter.js';
import { stopOnInterrupt } from '../signals.js';
import { formatDuration } from '../../report/table.js';
import { renderDemoTable } from '../../report/demo-table.js';
import {
  logError,
  progressReporter,
  relativeOrAbsolute,
  demoModule,
  parallelOption,
  confirmRunsOption,
  recoveryOption,
  realOption,
  kubeconfigOption,
  contextOption,
  clusterChoice,
  ALLOW_UNTESTED_HELP,
  EXIT_UNTESTED,
} from '../common.js';
import { findingLines, untestedLines } from '../../report/terminal.js';
import { exploreFindingLines } from '../../report/explore-findings.js';
import { PLAIN } from '../../report/color.js';

export function registerDemo(program: Command): void {
  program
    .command('demo')
    .description('learn, plan and test the bundled example controllers on the embedded cluster (or see --real, --kubeconfig)')
    .option('--json <file>', 'write the results as JSON')
    .option('--only <name...>', 'only these examples (by metadata.name), on every pattern')
    .option('--all', 'every bundled example on every pattern (default: one example per pattern and its twin, on that pattern)')
    .option('--no-confirm', 'do not re-run a workload without faults to confirm the alarms of a bug')
    .addOption(confirmRunsOption())
    .addOption(recoveryOption())
    .option('--allow-untested', ALLOW_UNTESTED_HELP)
    .addOption(new Option('-o, --out <dir>', 'where runs, plans and results are kept').default('.kperturb/demo'))
    .addOption(parallelOption(DEMO_PARALLEL))
    .addOption(realOption())
    .addOption(kubeconfigOption())
    .addOption(contextOption())
    .action(
      async (
        opts: {
          json?: string;
          only?: string[];
          out: string;
          confirm: boolean;
          confirmRuns: number;
          recovery: boolean;
          allowUntested?: boolean;
          all?: boolean;
          parallel: number;
          real?: boolean;
          kubeconfig?: string;
          context?: string;
        },
        cmd: Command,
      ) => {
        const signal = stopOnInterrupt(logError);
        const { cluster, parallel } = await clusterChoice(opts, cmd.getOptionValueSource('parallel') === 'cli', signal);
        const progress = progressReporter();
        const { runDemo, writeDemoJson } = await demoModule();
        let results: Awaited<ReturnType<typeof runDemo>>;
        try {
          results = await runDemo({
            out: resolve(opts.out),
            log: progress.log,
            progress,
            signal,
            parallel: parallel ?? opts.parallel,
            ...(cluster ? { cluster } : {}),
            confirm: opts.confirm,
            confirmRuns: opts.confirmRuns,
            recovery: opts.recovery,
            all: opts.all === true,
            ...(opts.only ? { only: opts.only } : {}),
          });
        } finally {
          progress.end();
        }
        process.stdout.write('\n' + renderDemoTable(results) + '\n');
        for (const e of results.examples) {
          if (e.error) process.stdout.write(`\n${e.example}/${e.workload} was not tested: ${e.error}\n`);
          if (e.skipped) process.stdout.write(`\n${e.example}/${e.workload} was skipped: ${e.skipped}\n`);
          if (e.untested) process.stdout.write(`\n${e.example}/${e.workload} is UNTESTED, not clean:\n${untestedLines(e.untested, false).join('\n')}\n`);
          if (e.explore && e.explore.alarms > 0)
            process.stdout.write(`\n${e.example}/explore: ${exploreFindingLines(e.explore.alarms, e.explore.findings).join('\n')}\n`);
          const found = e.findings ?? [];
          if (found.length > 0) {
            const verdicts = e.plans.filter((p) => p.verdict === 'bug').length;
            process.stdout.write(
              `\n${e.example}/${e.workload}: ${verdicts} bug verdict${verdicts === 1 ? '' : 's'} -> ${found.length} finding${found.length === 1 ? '' : 's'}\n`,
            );
            for (const [i, f] of found.entries()) process.stdout.write(findingLines(f, i + 1, false, PLAIN).join('\n') + '\n');
          }
        }
        process.stdout.write(
          `\ntotal time ${formatDuration(results.durationMs)}; runs in ${resolve(opts.out)}; \`kperturb report ${relativeOrAbsolute(resolve(opts.out))} --html report.html\` for details\n`,
        );
        if (opts.json) writeDemoJson(opts.json, results);
        if (results.examples.some((e) => e.error)) process.exitCode = 2;
        else if (results.examples.some((e) => e.untested) && !opts.allowUntested) process.exitCode = EXIT_UNTESTED;
      },
    );
}
