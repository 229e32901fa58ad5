/** `kperturb learn`: run each workload as unperturbed reference runs and keep their traces. */
import { Command } from 'commander';
import { resolve } from 'node:path';
import { loadConfig } from '../../config/config.js';
import { SetupError } from '../../model/errors.js';
import { stopOnInterrupt } from '../signals.js';
import { renderTable, formatDuration } from '../../report/table.js';
import {
  log,
  logError,
  campaignModule,
  parseQuietMs,
  realOption,
  kubeconfigOption,
  contextOption,
  configOption,
  outOption,
  workloadOption,
  clusterChoice,
  DEFAULT_SERIALIZE_QUIET_MS,
} from '../common.js';

export function registerLearn(program: Command): void {
  program
    .command('learn')
    .description('run each workload as unperturbed reference runs and keep their traces')
    .addOption(configOption())
    .addOption(outOption())
    .addOption(workloadOption())
    .option(
      '--serialize [quietMs]',
      'causality learning: the proxy delivers watch events one at a time and waits until the controller has been quiet for quietMs (default 100) before the next; the trace gets episode markers',
      parseQuietMs,
    )
    .addOption(realOption())
    .addOption(kubeconfigOption())
    .addOption(contextOption())
    .action(
      async (opts: { config: string; out: string; workload?: string[]; serialize?: number | true; real?: boolean; kubeconfig?: string; context?: string }) => {
        const config = loadConfig(opts.config);
        const serialize = opts.serialize === undefined ? {} : { serialize: { quietMs: opts.serialize === true ? DEFAULT_SERIALIZE_QUIET_MS : opts.serialize } };
        const signal = stopOnInterrupt(logError);
        const { cluster } = await clusterChoice(opts, false, signal);
        const { learn } = await campaignModule();
        const summaries = await learn(config, {
          out: resolve(opts.out),
          log,
          warn: logError,
          signal,
          ...(cluster ? { cluster } : {}),
          ...(opts.workload ? { workloads: opts.workload } : {}),
          ...serialize,
        });
        const rows = summaries.flatMap((s) => s.runs.map((r) => [s.workload, r.name, r.ok ? 'ok' : 'FAILED', formatDuration(r.durationMs), r.error ?? r.dir]));
        process.stdout.write(renderTable(['workload', 'run', 'outcome', 'time', 'directory / error'], rows) + '\n');
        if (summaries.some((s) => s.runs.some((r) => !r.ok)))
          throw new SetupError('a reference run failed: fix the workload or the controller before planning');
      },
    );
}
