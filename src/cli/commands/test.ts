/** `kperturb test`: run test plans (files or directories; default: all plans of the config), each on a fresh embedded cluster (or see --real, --kubeconfig). */
import { Command, Option } from 'commander';
import { resolve } from 'node:path';
import { loadConfig } from '../../config/config.js';
import { CampaignLayout } from '../../campaign/layout.js';
import { formatShard, parseShard, referenceWeights, shardPlans } from '../../campaign/shard.js';
import { UserInputError } from '../../model/errors.js';
import { stopOnInterrupt } from '../signals.js';
import { CONTRACT_MODES, type ContractMode, type PlanResult } from '../../model/results.js';
import { PATTERNS, type TestPlan } from '../../model/plan.js';
import {
  log,
  logError,
  progressReporter,
  campaignModule,
  parallelOption,
  confirmRunsOption,
  recoveryOption,
  realOption,
  kubeconfigOption,
  contextOption,
  configOption,
  outOption,
  workloadOption,
  clusterChoice,
  printResults,
  exitCodeFor,
  ALLOW_UNTESTED_HELP,
} from '../common.js';

export function registerTest(program: Command): void {
  program
    .command('test')
    .description('run test plans (files or directories; default: all plans of the config), each on a fresh embedded cluster (or see --real, --kubeconfig)')
    .argument('[plans...]', 'plan files or directories')
    .addOption(configOption())
    .addOption(outOption())
    .option('--confirm', 'when a plan alarms, re-run the workload without faults and mark alarms it reproduces as flaky')
    .addOption(confirmRunsOption())
    .addOption(recoveryOption())
    .option('--rerun', 'run every plan, also those that already have a verdict from the same plan and reference runs (kept by default)')
    .addOption(
      new Option(
        '--contract <mode>',
        'strict: faults stay within the Kubernetes API contract (stale views answer no consistent read); lenient: they may go beyond it, and such verdicts are marked',
      )
        .choices(CONTRACT_MODES)
        .default('lenient'),
    )
    .option('--allow-untested', ALLOW_UNTESTED_HELP)
    .addOption(parallelOption(1))
    .addOption(new Option('--pattern <pattern...>', 'only plans of these patterns').choices(PATTERNS))
    .addOption(workloadOption())
    .option(
      '--shard <I/N>',
      'run only share I (0-based) of N of the plans, the same share on every machine (e.g. --shard $JOB_COMPLETION_INDEX/4); `kperturb report` merges the shards',
    )
    .addOption(realOption())
    .addOption(kubeconfigOption())
    .addOption(contextOption())
    .action(
      async (
        paths: string[],
        opts: {
          config: string;
          out: string;
          confirm?: boolean;
          confirmRuns: number;
          recovery: boolean;
          rerun?: boolean;
          allowUntested?: boolean;
          contract: ContractMode;
          parallel: number;
          pattern?: string[];
          workload?: string[];
          shard?: string;
          real?: boolean;
          kubeconfig?: string;
          context?: string;
        },
        cmd: Command,
      ) => {
        const config = loadConfig(opts.config);
        const out = resolve(opts.out);
        const layout = new CampaignLayout(out, config.name);
        const shard = opts.shard === undefined ? undefined : parseShard(opts.shard);
        const planPaths = paths.length > 0 ? paths : [layout.plansDir()];
        const { loadPlans, test, campaignUntested } = await campaignModule();
        const loaded = loadPlans(planPaths);
        if (loaded.length === 0) throw new UserInputError(planPaths.join(', '), undefined, 'at least one plan (run `kperturb plan` first)');
        const all = selectPlans(loaded, opts.pattern, opts.workload, [...config.workloads.keys()]);
        if (all.length < loaded.length) log(`${all.length} of ${loaded.length} plans (${describeSelection(opts.pattern, opts.workload)})`);
        const plans = shard ? shardPlans(all, shard, referenceWeights(layout)) : all;
        if (shard) {
          log(`shard ${formatShard(shard)}: ${plans.length} of ${all.length} plans`);
          if (plans.length === 0) return;
        }
        const signal = stopOnInterrupt(logError);
        const { cluster, parallel } = await clusterChoice(opts, cmd.getOptionValueSource('parallel') === 'cli', signal);
        const progress = progressReporter();
        let results: PlanResult[];
        try {
          results = await test(config, plans, {
            out,
            log: progress.log,
            progress,
            signal,
            parallel: parallel ?? opts.parallel,
            ...(cluster ? { cluster } : {}),
            ...(opts.confirm ? { confirm: true } : {}),
            confirmRuns: opts.confirmRuns,
            recovery: opts.recovery,
            ...(opts.rerun ? { rerun: true } : {}),
            ...(opts.contract === 'strict' ? { contract: 'strict' as const } : {}),
            ...(shard ? { shard } : {}),
          });
        } finally {
          progress.end();
        }
        const untested = campaignUntested(config, out);
        printResults(results, untested);
        process.exitCode = exitCodeFor(results, untested, opts.allowUntested === true);
      },
    );
}

function describeSelection(patterns: string[] | undefined, workloads: string[] | undefined): string {
  return [patterns ? `pattern ${patterns.join(', ')}` : '', workloads ? `workload ${workloads.join(', ')}` : ''].filter(Boolean).join('; ');
}

/** The plans of the given patterns and workloads (all when not given); a workload the config does not have, or a selection that leaves nothing, is bad input. */
export function selectPlans(plans: TestPlan[], patterns: string[] | undefined, workloads: string[] | undefined, configWorkloads: string[]): TestPlan[] {
  for (const w of workloads ?? [])
    if (!configWorkloads.includes(w))
      throw new UserInputError(undefined, '--workload', `a workload of the config (${configWorkloads.join(', ')}; got ${JSON.stringify(w)})`);
  const chosen = plans.filter((p) => (!patterns || patterns.includes(p.spec.pattern)) && (!workloads || workloads.includes(p.spec.workload)));
  if (chosen.length === 0)
    throw new UserInputError(
      undefined,
      patterns ? '--pattern' : '--workload',
      `a selection with at least one plan (none of the ${plans.length} plans is of ${describeSelection(patterns, workloads)})`,
    );
  return chosen;
}
