/** `kperturb plan`: derive test plans from the reference runs. */
import { Command } from 'commander';
import { resolve } from 'node:path';
import { loadConfig } from '../../config/config.js';
import { renderTable } from '../../report/table.js';
import { UserInputError } from '../../model/errors.js';
import { log, logError, campaignModule, configOption, outOption, workloadOption } from '../common.js';

export function registerPlan(program: Command): void {
  program
    .command('plan')
    .description('derive test plans from the reference runs')
    .addOption(configOption())
    .addOption(outOption())
    .addOption(workloadOption())
    .option('--no-prune', 'write every plan the rules can express, with no pruning stage (to check that pruning keeps every bug)')
    .option(
      '--select',
      "keep one plan per group of plans that exercise the same step of the controller (about Sieve's count; the whole set finds bugs this may miss)",
    )
    .action(async (opts: { config: string; out: string; workload?: string[]; prune: boolean; select?: boolean }) => {
      // Selection is a stage after pruning: without pruning there is nothing to select from.
      if (opts.select === true && !opts.prune)
        throw new UserInputError(
          undefined,
          '--select',
          'not with --no-prune (selection keeps one plan per group of the pruned plans; --no-prune writes every plan the rules can express)',
        );
      const config = loadConfig(opts.config);
      const { plan } = await campaignModule();
      const summaries = await plan(config, {
        out: resolve(opts.out),
        log,
        warn: logError,
        prune: opts.prune,
        select: opts.select === true,
        ...(opts.workload ? { workloads: opts.workload } : {}),
      });
      for (const s of summaries) {
        process.stdout.write(`${s.workload}: ${s.plans.length} plan(s) in ${s.dir}\n`);
        const rows = s.stats.flatMap((st) => st.stages.map((stage) => [st.pattern, stage.stage, stage.plans]));
        process.stdout.write(renderTable(['pattern', 'stage', 'plans'], rows) + '\n');
      }
    });
}
