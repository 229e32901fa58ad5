/**
 * `kperturb explore`: operations generated from the controller's CRDs and seed CRs, run and judged
 * step by step (docs/explore.md), or with `--emit DIR` only written as workloads. Exit 0: no alarm;
 * 1: alarms; 2: bad input or setup failure.
 */
import { Command, Option } from 'commander';
import { resolve } from 'node:path';
import { loadConfig } from '../../config/config.js';
import { UserInputError } from '../../model/errors.js';
import { DEFAULT_CONFIRM_RUNS } from '../../model/results.js';
import { stopOnInterrupt } from '../signals.js';
import { renderTable } from '../../report/table.js';
import { log, logError, parseConfirmRuns, configOption, outOption, realOption, kubeconfigOption, contextOption, clusterChoice, output } from '../common.js';
import { exploreFindingLines } from '../../report/explore-findings.js';

const exploreModule = () => import('../../campaign/explore.js');

function parseSeedNumber(value: string): number {
  const n = Number(value);
  if (!/^\d+$/.test(value.trim()) || !Number.isSafeInteger(n) || n > 0xffffffff)
    throw new UserInputError(undefined, '--seed', `a whole number from 0 to 4294967295 (got ${JSON.stringify(value)})`);
  return n;
}

function parseSteps(value: string): number {
  const n = Number(value);
  if (!/^\d+$/.test(value.trim()) || n < 1 || n > 100)
    throw new UserInputError(undefined, '--steps', `a number of steps per sequence, 1-100 (got ${JSON.stringify(value)})`);
  return n;
}

function parsePerturb(value: string): number {
  const n = Number(value);
  if (!/^\d+$/.test(value.trim()) || n < 1 || n > 1000)
    throw new UserInputError(undefined, '--perturb', `a number of plans per pattern and sequence, 1-1000 (got ${JSON.stringify(value)})`);
  return n;
}

export function registerExplore(program: Command): void {
  program
    .command('explore')
    .description("generate CR operations from the controller's CRDs and seed CRs, run each sequence and judge every step")
    .addOption(configOption())
    .addOption(outOption())
    .addOption(new Option('--emit <dir>', 'only write the operations as a kperturb.yaml of workloads (and explore.json) in this directory; run nothing'))
    .addOption(new Option('--seed <n>', 'the seed number: the same number gives the same operations').argParser(parseSeedNumber).default(1))
    .addOption(new Option('--steps <n>', 'at most this many operations per sequence (each sequence on a fresh cluster)').argParser(parseSteps))
    .addOption(
      new Option('--sequence <name...>', 'run only these sequences of the campaign (names as --emit and the step table give them; same --seed and --steps)'),
    )
    .option(
      '--differential',
      'also create each distinct accepted CR with its spec at once on a fresh cluster and compare its end with the one the sequence reached',
    )
    .addOption(
      new Option(
        '--perturb [n]',
        'also perturb the sequences that passed their own oracles: plan the four patterns from their runs and test at most n plans per pattern and sequence (default 2)',
      ).argParser(parsePerturb),
    )
    .addOption(
      new Option(
        '--confirm-runs <k>',
        "confirm each finding of class bug: explore its shortest reproducer's sequence alone K more times, each on fresh clusters; it stays a bug only if every re-run shows it again, else it is flaky. 0: off",
      )
        .argParser(parseConfirmRuns)
        .default(DEFAULT_CONFIRM_RUNS),
    )
    .addOption(realOption())
    .addOption(kubeconfigOption())
    .addOption(contextOption())
    .action(
      async (opts: {
        config: string;
        out: string;
        emit?: string;
        seed: number;
        steps?: number;
        sequence?: string[];
        differential?: boolean;
        perturb?: number | true;
        confirmRuns: number;
        real?: boolean;
        kubeconfig?: string;
        context?: string;
      }) => {
        const config = loadConfig(opts.config);
        const { generateCampaign, emitCampaign, explore, DEFAULT_EXPLORE_STEPS, DEFAULT_PERTURB_PLANS, exploreExitCode } = await exploreModule();
        const options = { seed: opts.seed, maxSteps: opts.steps ?? DEFAULT_EXPLORE_STEPS, ...(opts.sequence ? { sequences: opts.sequence } : {}) };
        if (opts.emit) {
          const campaign = generateCampaign(config, options);
          const files = emitCampaign(config, campaign, resolve(opts.emit));
          const steps = campaign.sequences.reduce((n, s) => n + s.steps.length, 0);
          process.stdout.write(`${campaign.sequences.length} sequence(s), ${steps} operation step(s) in ${files.config} (campaign: ${files.campaign})\n`);
          process.stdout.write(`run them with: kperturb learn -c ${files.config}\n`);
          return;
        }
        const signal = stopOnInterrupt(logError);
        const { cluster } = await clusterChoice(opts, false, signal);
        const { results, file } = await explore(config, {
          ...options,
          out: resolve(opts.out),
          log,
          signal,
          differential: opts.differential === true,
          confirmRuns: opts.confirmRuns,
          ...(opts.perturb !== undefined ? { perturb: opts.perturb === true ? DEFAULT_PERTURB_PLANS : opts.perturb } : {}),
          ...(cluster ? { cluster } : {}),
        });
        const rows = results.sequences.flatMap((s) =>
          s.steps.map((st) => [
            s.sequence,
            st.step,
            `${st.operation}${st.setup ? ' (setup)' : ''}`,
            st.path,
            st.verdict,
            st.traced ? `${st.traced.via}: ${st.traced.locations.map((l) => `${l.object} ${l.field}`).join(', ')}` : '',
          ]),
        );
        if (output.verbosity !== 'quiet') process.stdout.write(renderTable(['sequence', 'step', 'operation', 'field', 'verdict', 'traced to'], rows) + '\n');
        for (const s of results.sequences) if (s.error) logError(`kperturb: ${s.sequence}: the run did not finish: ${s.error}`);
        for (const line of exploreFindingLines(results.alarms.length, results.findings)) logError(line);
        for (const a of results.alarms)
          logError(`${a.class === 'environment' ? 'ENVIRONMENT' : 'ALARM'} [${a.oracle}] ${a.sequence}${a.step ? ` step ${a.step}` : ''}: ${a.message}`);
        const { covered, total, uncovered } = results.coverage;
        process.stdout.write(`coverage: ${covered}/${total} properties changed by an accepted step\n`);
        for (const u of uncovered) process.stdout.write(`  uncovered ${u.kind} ${u.property}: ${u.reason}\n`);
        const perturbation = results.perturbation;
        if (perturbation) {
          const { patterns, properties } = perturbation.coverage;
          process.stdout.write(
            `perturbation: ${perturbation.results.length} of ${perturbation.planned} plan(s) tested on ${perturbation.sequences.length} sequence(s) that passed their oracles; plans per property and pattern (bugs):\n`,
          );
          const cells = properties.map((p) => [
            p.property,
            ...patterns.map((x) => `${p.byPattern[x].tested}${p.byPattern[x].bugs ? ` (${p.byPattern[x].bugs} bug)` : ''}`),
          ]);
          if (cells.length > 0) process.stdout.write(renderTable(['property', ...patterns], cells) + '\n');
          for (const r of perturbation.results.filter((x) => x.verdict === 'bug'))
            logError(
              `BUG [${r.pattern}] ${r.workload}: plan ${r.plan}, ${r.alarms} alarm(s) (${r.runDir}; again: kperturb test ${r.planFile ?? r.plan} -c ${opts.config})`,
            );
        }
        process.stdout.write(`results: ${file}\n`);
        process.exitCode = exploreExitCode(results);
      },
    );
}
