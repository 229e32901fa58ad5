/**
 * The kperturb command line. Exit codes: 0 success (no bug found), 1 bugs found (`test`, `demo`),
 * 2 bad input or setup failure. Errors a user can act on are printed without a stack trace.
 */
import { Command, CommanderError, Option } from 'commander';
import { writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { loadConfig } from '../config/config.js';
import { learn, plan, test, loadPlans } from '../campaign/campaign.js';
import { CampaignLayout } from '../campaign/layout.js';
import { runDemo, writeDemoJson } from '../campaign/demo.js';
import { UserInputError, SetupError } from '../model/errors.js';
import { renderTable, formatDuration } from './table.js';
import type { PlanResult } from '../model/results.js';

const log = (line: string) => process.stderr.write(line + '\n');

function parsePort(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0 || n > 65535) throw new UserInputError(undefined, '--port', `a port number 0-65535 (got ${JSON.stringify(value)})`);
  return n;
}

const configOption = () => new Option('-c, --config <file>', 'the kperturb.yaml of the controller under test').default('kperturb.yaml');
const outOption = () => new Option('-o, --out <dir>', 'where runs, plans and results are kept').default('.kperturb');
const workloadOption = () => new Option('-w, --workload <name...>', 'only these workloads (default: all)');

function printResults(results: PlanResult[]): void {
  const rows = results.map((r) => [r.workload, r.plan, r.verdict, r.alarms.length, formatDuration(r.durationMs), r.description]);
  process.stdout.write(renderTable(['workload', 'plan', 'verdict', 'alarms', 'time', 'perturbation'], rows) + '\n');
  for (const r of results.filter((x) => x.verdict === 'bug' || x.verdict === 'error')) {
    process.stdout.write(`\n${r.plan} (${r.verdict}): ${r.description}\n`);
    if (r.error) process.stdout.write(`  error: ${r.error}\n`);
    for (const a of r.alarms) process.stdout.write(`  [${a.oracle}] ${a.message}\n`);
    process.stdout.write(`  run: ${r.runDir}\n`);
  }
}

export function buildProgram(): Command {
  const program = new Command()
    .name('kperturb')
    .description('Test Kubernetes controllers by perturbing their view of the cluster from an intercepting proxy.')
    .showHelpAfterError()
    .exitOverride();

  program
    .command('cluster')
    .description('run the embedded in-memory Kubernetes API server in the foreground')
    .option('-p, --port <port>', 'port on 127.0.0.1 (default: a free port)', parsePort)
    .option('--kubeconfig-out <file>', 'write a kubeconfig for it here')
    .action(async (opts: { port?: number; kubeconfigOut?: string }) => {
      const { EmbeddedCluster } = await import('../cluster/index.js');
      const cluster = await EmbeddedCluster.start(opts.port !== undefined ? { port: opts.port } : {});
      if (opts.kubeconfigOut) writeFileSync(opts.kubeconfigOut, cluster.kubeconfigYaml());
      log(`embedded cluster listening on ${cluster.url}${opts.kubeconfigOut ? `; kubeconfig in ${opts.kubeconfigOut}` : ''} (Ctrl-C to stop)`);
      await untilSignal();
      await cluster.stop();
    });

  program
    .command('proxy')
    .description('run the intercepting proxy stand-alone in front of a cluster; give the written kubeconfig to your controller')
    .requiredOption('--upstream-kubeconfig <file>', 'kubeconfig of the API server to forward to')
    .option('-p, --port <port>', 'port on 127.0.0.1 (default: a free port)', parsePort)
    .option('--kubeconfig-out <file>', 'write the controller-side kubeconfig here')
    .option('--trace <file>', 'write the controller trace (JSON lines) here')
    .action(async (opts: { upstreamKubeconfig: string; port?: number; kubeconfigOut?: string; trace?: string }) => {
      const { runStandaloneProxy } = await import('../../proxy/standalone.js');
      const running = await runStandaloneProxy({
        upstreamKubeconfig: opts.upstreamKubeconfig,
        ...(opts.port !== undefined ? { port: opts.port } : {}),
        ...(opts.kubeconfigOut ? { kubeconfigOut: opts.kubeconfigOut } : {}),
        ...(opts.trace ? { traceFile: opts.trace } : {}),
        log,
      });
      log(`proxy listening on ${running.proxy.url} (Ctrl-C to stop)`);
      await untilSignal();
      await running.close();
    });

  program
    .command('learn')
    .description('run each workload as unperturbed reference runs and keep their traces')
    .addOption(configOption())
    .addOption(outOption())
    .addOption(workloadOption())
    .action(async (opts: { config: string; out: string; workload?: string[] }) => {
      const config = loadConfig(opts.config);
      const summaries = await learn(config, { out: resolve(opts.out), log, ...(opts.workload ? { workloads: opts.workload } : {}) });
      const rows = summaries.flatMap((s) => s.runs.map((r, i) => [s.workload, `ref-${i + 1}`, r.ok ? 'ok' : 'FAILED', formatDuration(r.durationMs), r.error ?? r.dir]));
      process.stdout.write(renderTable(['workload', 'run', 'outcome', 'time', 'directory / error'], rows) + '\n');
      if (summaries.some((s) => s.runs.some((r) => !r.ok))) throw new SetupError('a reference run failed: fix the workload or the controller before planning');
    });

  program
    .command('plan')
    .description('derive test plans from the reference runs')
    .addOption(configOption())
    .addOption(outOption())
    .addOption(workloadOption())
    .action(async (opts: { config: string; out: string; workload?: string[] }) => {
      const config = loadConfig(opts.config);
      const summaries = await plan(config, { out: resolve(opts.out), log, ...(opts.workload ? { workloads: opts.workload } : {}) });
      for (const s of summaries) {
        process.stdout.write(`${s.workload}: ${s.plans.length} plan(s) in ${s.dir}\n`);
        const rows = s.stats.flatMap((st) => st.stages.map((stage) => [st.pattern, stage.stage, stage.plans]));
        process.stdout.write(renderTable(['pattern', 'stage', 'plans'], rows) + '\n');
      }
    });

  program
    .command('test')
    .description('run test plans (files or directories; default: all plans of the config), each on a fresh embedded cluster')
    .argument('[plans...]', 'plan files or directories')
    .addOption(configOption())
    .addOption(outOption())
    .action(async (paths: string[], opts: { config: string; out: string }) => {
      const config = loadConfig(opts.config);
      const out = resolve(opts.out);
      const planPaths = paths.length > 0 ? paths : [new CampaignLayout(out, config.name).plansDir()];
      const plans = loadPlans(planPaths);
      if (plans.length === 0) throw new UserInputError(planPaths.join(', '), undefined, 'at least one plan (run `kperturb plan` first)');
      const results = await test(config, plans, {
        out,
        log,
        onResult: (r, i, total) => log(`  -> ${r.verdict}${r.alarms.length ? ` (${r.alarms.length} alarm(s))` : ''} [${i + 1}/${total}]`),
      });
      printResults(results);
      process.exitCode = results.some((r) => r.verdict === 'bug') ? 1 : results.some((r) => r.verdict === 'error') ? 2 : 0;
    });

  program
    .command('demo')
    .description('learn, plan and test the bundled example controllers on the embedded cluster')
    .option('--json <file>', 'write the results as JSON')
    .option('--only <name...>', 'only these examples (by metadata.name)')
    .addOption(new Option('-o, --out <dir>', 'where runs, plans and results are kept').default('.kperturb/demo'))
    .action(async (opts: { json?: string; only?: string[]; out: string }) => {
      const results = await runDemo({ out: resolve(opts.out), log, ...(opts.only ? { only: opts.only } : {}) });
      const rows = results.examples.map((e) => {
        const verdicts = (v: string) => e.plans.filter((p) => p.verdict === v).length;
        return [e.example, e.workload, e.plansGenerated, e.bugs, verdicts('pass'), verdicts('not-injected') + verdicts('error'), formatDuration(e.durationMs)];
      });
      process.stdout.write('\n' + renderTable(['example', 'workload', 'plans', 'bugs found', 'passed', 'not injected/error', 'time'], rows) + '\n');
      for (const e of results.examples) {
        for (const p of e.plans.filter((x) => x.verdict === 'bug')) {
          process.stdout.write(`\n${e.example}: ${p.plan} found a bug: ${p.description}\n`);
          for (const a of p.alarms) process.stdout.write(`  [${a.oracle}] ${a.message}\n`);
        }
      }
      process.stdout.write(`\ntotal time ${formatDuration(results.durationMs)}; runs in ${resolve(opts.out)}\n`);
      if (opts.json) writeDemoJson(opts.json, results);
    });

  return program;
}

function untilSignal(): Promise<void> {
  return new Promise((r) => {
    process.once('SIGINT', () => r());
    process.once('SIGTERM', () => r());
  });
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
    if (err instanceof UserInputError || err instanceof SetupError) {
      log(`kperturb: ${err.message}`);
      return 2;
    }
    log(`kperturb: ${err instanceof Error ? err.message : String(err)}`);
    if (process.env.KPERTURB_DEBUG && err instanceof Error) log(err.stack ?? '');
    return 2;
  }
}

const code = await main(process.argv);
// Servers and child processes are stopped by now; exit explicitly so a stray handle cannot hang the CLI.
process.exit(code);
