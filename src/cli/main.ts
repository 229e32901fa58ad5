/**
 * The kperturb command line. Exit codes: 0 success (no bug found), 1 bugs found (`test`, `demo`),
 * 2 bad input or setup failure. Errors a user can act on are printed without a stack trace.
 */
import { Command, CommanderError, Option } from 'commander';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { dirname, relative, resolve } from 'node:path';
import { loadConfig } from '../config/config.js';
import type { ClusterChoice } from '../coordinator/run.js';
import { CampaignLayout } from '../campaign/layout.js';
import { formatShard, parseShard, referenceWeights, shardPlans } from '../campaign/shard.js';
import { renderJob } from '../campaign/job.js';
import { DEMO_PARALLEL } from '../campaign/limiter.js';
import { InterruptedError, SetupError, UserInputError, errorCode } from '../model/errors.js';
import { registerImport } from './import.js';
import { interruptExitCode, stopOnInterrupt } from './signals.js';
import { KUBERNETES_VERSION_EXPECTED, formatKubernetesVersion, parseKubernetesVersion } from '../cluster/kube-version.js';
import { renderTable, formatDuration } from '../report/table.js';
import { writeOptionFile } from './output-file.js';
import { CONTRACT_MODES, type ContractMode, type PlanResult } from '../model/results.js';
import { ProgressReporter, type Verbosity } from '../report/progress.js';
import { paletteFor } from '../report/color.js';
import { renderTerminalReport } from '../report/terminal.js';
import { DEFAULT_RESULTS_DIR, loadResults } from '../report/results-io.js';
import { buildJsonReport } from '../report/json.js';
import { renderJUnit } from '../report/junit.js';
import { writeHtmlReport } from '../report/html.js';
import { diffRuns, renderRunDiff } from '../report/run-diff.js';

function relativeOrAbsolute(path: string): string {
  const rel = relative(process.cwd(), path);
  return rel && !rel.startsWith('..') ? rel : path;
}

/** Set from the global options before a command runs (`--quiet`, `--verbose`, `--no-color`). */
const output: { verbosity: Verbosity; colour: boolean; jsonErrors: boolean } = { verbosity: 'normal', colour: true, jsonErrors: false };

/** Information on stderr; `--quiet` drops it. */
const log = (line: string) => {
  if (output.verbosity !== 'quiet') process.stderr.write(line + '\n');
};
/** Errors and warnings on stderr, however quiet. */
const logError = (line: string) => process.stderr.write(line + '\n');

function progressReporter(): ProgressReporter {
  return new ProgressReporter(process.stderr, Date.now, { verbosity: output.verbosity, palette: paletteFor(process.stderr, process.env, output.colour) });
}

/**
 * The campaign modules load the coordinator, the proxy, the embedded cluster and client-node (most
 * of kperturb's start-up time): only the commands that run them load them, so that `--help`,
 * `report`, `job` and bad input answer at once.
 */
const campaignModule = () => import('../campaign/campaign.js');
const demoModule = () => import('../campaign/demo.js');

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

function parseKubernetesRelease(value: string): string {
  const release = parseKubernetesVersion(value);
  if (!release) throw new UserInputError(undefined, '--kubernetes-version', `${KUBERNETES_VERSION_EXPECTED} (got ${JSON.stringify(value)})`);
  return formatKubernetesVersion(release);
}

function parsePort(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0 || n > 65535) throw new UserInputError(undefined, '--port', `a port number 0-65535 (got ${JSON.stringify(value)})`);
  return n;
}

/** How long `proxy` waits for the upstream's GET /version before giving up. */
const PROXY_UPSTREAM_CHECK_MS = 5_000;

/** Serialized delivery's default quiet window (ms): see docs/cli.md for the measured cost. */
const DEFAULT_SERIALIZE_QUIET_MS = 100;

function parseQuietMs(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1 || n > 60_000) throw new UserInputError(undefined, '--serialize', `a quiet window in milliseconds, 1-60000 (got ${JSON.stringify(value)})`);
  return n;
}

function parseWholeNumber(value: string, option: string): number {
  const n = Number(value);
  if (!/^\d+$/.test(value.trim()) || !Number.isSafeInteger(n) || n < 1) throw new UserInputError(undefined, option, `a whole number from 1 (got ${JSON.stringify(value)})`);
  return n;
}

function parseParallel(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1 || n > 64) throw new UserInputError(undefined, '--parallel', `a number of plans to run at once, 1-64 (got ${JSON.stringify(value)})`);
  return n;
}

const parallelOption = (dflt: number) =>
  new Option('-j, --parallel <n>', 'run this many plans at once (each on its own cluster, proxy and controller process)').argParser(parseParallel).default(dflt);

const realOption = () =>
  new Option('--real', 'run each run on a fresh real control plane (etcd, kube-apiserver, kube-controller-manager; built by `npm run setup:real` if needed) instead of the embedded cluster').conflicts(['kubeconfig', 'context']);
const kubeconfigOption = () =>
  new Option('--kubeconfig <file>', "run on the cluster of this kubeconfig's current context (shared by every run: what a run creates is deleted after it)").conflicts('real');
const contextOption = () =>
  new Option('--context <name>', 'run on the cluster of this kubeconfig context: of --kubeconfig, else of $KUBECONFIG (a path list) or ~/.kube/config, as kubectl loads them').conflicts('real');

/**
 * The cluster the runs use, checked before the first run: --real builds the control plane if needed
 * (progress on stderr), --kubeconfig must name a readable kubeconfig whose API server answers. Runs
 * on an existing cluster share it, so they cannot run in parallel.
 */
async function clusterChoice(
  opts: { real?: boolean; kubeconfig?: string; context?: string; parallel?: number },
  parallelGiven: boolean,
  signal?: AbortSignal,
): Promise<{ cluster?: ClusterChoice; parallel?: number }> {
  if (opts.real) {
    const { ensureControlPlaneBinaries } = await import('../realcluster/index.js');
    return { cluster: { kind: 'real', binaries: await ensureControlPlaneBinaries(log, signal) }, ...(opts.parallel !== undefined ? { parallel: opts.parallel } : {}) };
  }
  if (opts.kubeconfig !== undefined || opts.context !== undefined) {
    const { ExistingCluster } = await import('../realcluster/index.js');
    const { kubeconfigSource } = await import('../kube/kubeconfig-source.js');
    const source = kubeconfigSource(opts);
    await (await ExistingCluster.connect(source)).check();
    if ((opts.parallel ?? 1) > 1 && parallelGiven) {
      throw new UserInputError(undefined, '--parallel', `1 with ${opts.kubeconfig !== undefined ? '--kubeconfig' : '--context'} (runs on an existing cluster share it, so they run one at a time)`);
    }
    return { cluster: { kind: 'existing', kubeconfig: source }, ...(opts.parallel !== undefined ? { parallel: 1 } : {}) };
  }
  return opts.parallel !== undefined ? { parallel: opts.parallel } : {};
}

const configOption = () => new Option('-c, --config <file>', 'the kperturb.yaml of the controller under test').default('kperturb.yaml');
const outOption = () => new Option('-o, --out <dir>', 'where runs, plans and results are kept').default('.kperturb');
const workloadOption = () => new Option('-w, --workload <name...>', 'only these workloads (default: all)');

function printResults(results: PlanResult[]): void {
  process.stdout.write(renderTerminalReport(results, { palette: paletteFor(process.stdout, process.env, output.colour) }));
}

/** 1 when a plan found a bug, 2 when one could not be run, else 0 (flaky and untested plans are not failures). */
function exitCodeFor(results: readonly PlanResult[]): number {
  return results.some((r) => r.verdict === 'bug') ? 1 : results.some((r) => r.verdict === 'error') ? 2 : 0;
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

  program
    .command('cluster')
    .description('run the embedded in-memory Kubernetes API server in the foreground')
    .option('-p, --port <port>', 'port on 127.0.0.1 (default: a free port)', parsePort)
    .option('--kubeconfig-out <file>', 'write a kubeconfig for it here')
    .option('--real', 'run a real control plane instead (etcd, kube-apiserver, kube-controller-manager built by `npm run setup:real`, plus simulated kubelets)')
    .option('--log-dir <dir>', 'with --real: keep the components\' logs here')
    .option('--kubernetes-version <release>', 'serve the API surface of this Kubernetes release, "1.18" to "1.32" (default: 1.32); e.g. 1.18-1.21 serve apiextensions.k8s.io/v1beta1 and policy/v1beta1', parseKubernetesRelease)
    .option('--insecure-no-auth', 'serve anyone who reaches the port, without the bearer token of the written kubeconfig')
    .action(async (opts: { port?: number; kubeconfigOut?: string; real?: boolean; logDir?: string; kubernetesVersion?: string; insecureNoAuth?: boolean }) => {
      if (opts.real && opts.kubernetesVersion !== undefined) throw new UserInputError(undefined, '--kubernetes-version', 'no --kubernetes-version with --real: a real control plane serves its own release');
      if (opts.real && opts.insecureNoAuth) throw new UserInputError(undefined, '--insecure-no-auth', 'no --insecure-no-auth with --real: a real control plane always authenticates');
      if (opts.real) {
        const { RealCluster, ensureControlPlaneBinaries } = await import('../realcluster/index.js');
        const cluster = await RealCluster.start({
          binaries: await ensureControlPlaneBinaries(log),
          log,
          ...(opts.port !== undefined ? { apiserverPort: opts.port } : {}),
          ...(opts.logDir ? { logDir: resolve(opts.logDir) } : {}),
        });
        await writeKubeconfigOrStop(opts.kubeconfigOut, cluster);
        log(`real control plane listening on ${cluster.url}${opts.kubeconfigOut ? `; kubeconfig in ${opts.kubeconfigOut}` : ''} (Ctrl-C to stop)`);
        await untilSignal();
        await cluster.stop();
        return;
      }
      const { EmbeddedCluster } = await import('../cluster/index.js');
      const cluster = await EmbeddedCluster.start({
        ...(opts.port !== undefined ? { port: opts.port } : {}),
        ...(opts.kubernetesVersion !== undefined ? { kubernetesVersion: opts.kubernetesVersion } : {}),
        ...(opts.insecureNoAuth ? { insecureNoAuth: true } : {}),
      });
      await writeKubeconfigOrStop(opts.kubeconfigOut, cluster);
      log(`embedded cluster (Kubernetes ${cluster.kubernetesVersion} API) listening on ${cluster.url}${opts.kubeconfigOut ? `; kubeconfig in ${opts.kubeconfigOut}` : ''} (Ctrl-C to stop)`);
      await untilSignal();
      await cluster.stop();
    });

  program
    .command('proxy')
    .description('run the intercepting proxy stand-alone in front of a cluster; give the written kubeconfig to your controller')
    .option('--upstream-kubeconfig <file>', 'kubeconfig of the API server to forward to (default: $KUBECONFIG, a path list, or ~/.kube/config, as kubectl loads them)')
    .option('--context <name>', 'the context of that kubeconfig to use (default: its current context)')
    .option('-p, --port <port>', 'port on 127.0.0.1 (default: a free port)', parsePort)
    .option('--kubeconfig-out <file>', 'write the controller-side kubeconfig here (it trusts the proxy\'s own CA)')
    .option('--trace <file>', 'write the controller trace (JSON lines) here')
    .option('--cluster-trace <file>', 'also watch every resource of the cluster and write the cluster trace here')
    .option('--no-redact-secrets', 'write Secret values into the traces as they are (default: a stable hash)')
    .option('--plain-http', 'serve the controller plain HTTP/1.1 instead of TLS (HTTP/2 and HTTP/1.1)')
    .option('--secret-hash-key <file>', 'hash Secret values with the key in this file (made if missing), e.g. a campaign\'s secret-hash.key (default: a key of this process only)')
    .action(
      async (opts: { upstreamKubeconfig?: string; context?: string; port?: number; kubeconfigOut?: string; trace?: string; clusterTrace?: string; redactSecrets: boolean; plainHttp?: boolean; secretHashKey?: string }) => {
        const { runStandaloneProxy } = await import('../../proxy/standalone.js');
        const { ExistingCluster } = await import('../realcluster/index.js');
        const { kubeconfigSource } = await import('../kube/kubeconfig-source.js');
        const upstream = kubeconfigSource({ ...(opts.upstreamKubeconfig !== undefined ? { kubeconfig: opts.upstreamKubeconfig } : {}), ...(opts.context !== undefined ? { context: opts.context } : {}) }, process.env, undefined, '--upstream-kubeconfig');
        // One bounded GET /version first: an unreachable server or refused credentials fail here, not in the controller.
        await (await ExistingCluster.connect(upstream)).check(PROXY_UPSTREAM_CHECK_MS);
        const running = await runStandaloneProxy({
          upstreamKubeconfig: upstream,
          ...(opts.port !== undefined ? { port: opts.port } : {}),
          ...(opts.kubeconfigOut ? { kubeconfigOut: opts.kubeconfigOut } : {}),
          ...(opts.trace ? { traceFile: opts.trace } : {}),
          ...(opts.clusterTrace ? { clusterTraceFile: opts.clusterTrace } : {}),
          redactSecrets: opts.redactSecrets,
          ...(opts.secretHashKey ? { secretHashKeyFile: opts.secretHashKey } : {}),
          tls: !opts.plainHttp,
          log,
        });
        log(`proxy listening on ${running.proxy.url} (Ctrl-C to stop)`);
        await untilSignal();
        await running.close();
      },
    );

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
    .action(async (opts: { config: string; out: string; workload?: string[]; serialize?: number | true; real?: boolean; kubeconfig?: string; context?: string }) => {
      const config = loadConfig(opts.config);
      const serialize = opts.serialize === undefined ? {} : { serialize: { quietMs: opts.serialize === true ? DEFAULT_SERIALIZE_QUIET_MS : opts.serialize } };
      const signal = stopOnInterrupt(logError);
      const { cluster } = await clusterChoice(opts, false, signal);
      const { learn } = await campaignModule();
      const summaries = await learn(config, { out: resolve(opts.out), log, signal, ...(cluster ? { cluster } : {}), ...(opts.workload ? { workloads: opts.workload } : {}), ...serialize });
      const rows = summaries.flatMap((s) => s.runs.map((r) => [s.workload, r.name, r.ok ? 'ok' : 'FAILED', formatDuration(r.durationMs), r.error ?? r.dir]));
      process.stdout.write(renderTable(['workload', 'run', 'outcome', 'time', 'directory / error'], rows) + '\n');
      if (summaries.some((s) => s.runs.some((r) => !r.ok))) throw new SetupError('a reference run failed: fix the workload or the controller before planning');
    });

  program
    .command('plan')
    .description('derive test plans from the reference runs')
    .addOption(configOption())
    .addOption(outOption())
    .addOption(workloadOption())
    .option('--no-prune', 'write every plan the rules can express, with no pruning stage (to check that pruning keeps every bug)')
    .action(async (opts: { config: string; out: string; workload?: string[]; prune: boolean }) => {
      const config = loadConfig(opts.config);
      const { plan } = await campaignModule();
      const summaries = await plan(config, { out: resolve(opts.out), log, prune: opts.prune, ...(opts.workload ? { workloads: opts.workload } : {}) });
      for (const s of summaries) {
        process.stdout.write(`${s.workload}: ${s.plans.length} plan(s) in ${s.dir}\n`);
        const rows = s.stats.flatMap((st) => st.stages.map((stage) => [st.pattern, stage.stage, stage.plans]));
        process.stdout.write(renderTable(['pattern', 'stage', 'plans'], rows) + '\n');
      }
    });

  program
    .command('test')
    .description('run test plans (files or directories; default: all plans of the config), each on a fresh embedded cluster (or see --real, --kubeconfig)')
    .argument('[plans...]', 'plan files or directories')
    .addOption(configOption())
    .addOption(outOption())
    .option('--confirm', 'when a plan alarms, re-run the workload without faults and mark alarms it reproduces as flaky')
    .option('--rerun', 'run every plan, also those that already have a verdict from the same plan and reference runs (kept by default)')
    .addOption(
      new Option('--contract <mode>', 'strict: faults stay within the Kubernetes API contract (stale views answer no consistent read); lenient: they may go beyond it, and such verdicts are marked')
        .choices(CONTRACT_MODES)
        .default('lenient'),
    )
    .addOption(parallelOption(1))
    .option('--shard <I/N>', 'run only share I (0-based) of N of the plans, the same share on every machine (e.g. --shard $JOB_COMPLETION_INDEX/4); `kperturb report` merges the shards')
    .addOption(realOption())
    .addOption(kubeconfigOption())
    .addOption(contextOption())
    .action(async (paths: string[], opts: { config: string; out: string; confirm?: boolean; rerun?: boolean; contract: ContractMode; parallel: number; shard?: string; real?: boolean; kubeconfig?: string; context?: string }, cmd: Command) => {
      const config = loadConfig(opts.config);
      const out = resolve(opts.out);
      const layout = new CampaignLayout(out, config.name);
      const shard = opts.shard === undefined ? undefined : parseShard(opts.shard);
      const planPaths = paths.length > 0 ? paths : [layout.plansDir()];
      const { loadPlans, test } = await campaignModule();
      const all = loadPlans(planPaths);
      if (all.length === 0) throw new UserInputError(planPaths.join(', '), undefined, 'at least one plan (run `kperturb plan` first)');
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
        results = await test(config, plans, { out, log: progress.log, progress, signal, parallel: parallel ?? opts.parallel, ...(cluster ? { cluster } : {}), ...(opts.confirm ? { confirm: true } : {}), ...(opts.rerun ? { rerun: true } : {}), ...(opts.contract === 'strict' ? { contract: 'strict' as const } : {}), ...(shard ? { shard } : {}) });
      } finally {
        progress.end();
      }
      printResults(results);
      process.exitCode = exitCodeFor(results);
    });

  program
    .command('report')
    .description('summarise test results: a table in the terminal, or JSON, JUnit XML and an HTML page')
    .argument('[results...]', `results.json files, verdict.json files or directories to search, e.g. the output directories of a campaign's shards, merged into one report (default: ${DEFAULT_RESULTS_DIR})`)
    .option('--json', 'print the report as JSON instead of a table')
    .option('--junit <file>', 'also write JUnit XML here (for CI systems)')
    .option('--html <file>', 'also write a self-contained HTML page here')
    .action(async (targets: string[], opts: { json?: boolean; junit?: string; html?: string }) => {
      const loaded = loadResults(targets);
      if (opts.json) process.stdout.write(JSON.stringify(buildJsonReport(loaded.results, loaded.sources, loaded.notes, loaded.notRun), null, 2) + '\n');
      else process.stdout.write(renderTerminalReport(loaded.results, { notes: loaded.notes, notRun: loaded.notRun, palette: paletteFor(process.stdout, process.env, output.colour) }));
      const { junit, html } = opts;
      if (junit) {
        await writeOptionFile('--junit', junit, () => {
          mkdirSync(dirname(resolve(junit)), { recursive: true });
          writeFileSync(junit, renderJUnit(loaded.results, loaded.notRun));
        });
        log(`JUnit XML written to ${junit}`);
      }
      if (html) {
        await writeOptionFile('--html', html, () => writeHtmlReport(resolve(html), loaded));
        log(`HTML report written to ${html}`);
      }
      process.exitCode = exitCodeFor(loaded.results);
    });

  program
    .command('schema')
    .description('print the JSON Schema of kperturb.yaml (config) or of a TestPlan (plan), for editors (yaml-language-server) and CI checks')
    .argument('[which]', 'config or plan', 'config')
    .option('--path', 'print the path of the schema file (in this installation) instead of its content')
    .action(async (which: string, opts: { path?: boolean }) => {
      const { SCHEMA_NAMES, schemaFile } = await import('../model/schemas.js');
      if (!(SCHEMA_NAMES as readonly string[]).includes(which)) throw new UserInputError(undefined, 'schema', `one of ${SCHEMA_NAMES.join(', ')} (got ${JSON.stringify(which)})`);
      const file = schemaFile(which as (typeof SCHEMA_NAMES)[number]);
      process.stdout.write(opts.path ? `${file}\n` : readFileSync(file, 'utf8'));
    });

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

  program
    .command('job')
    .description('write a Kubernetes Indexed Job that runs the campaign in N shards, one pod each (docs/sharding.md)')
    .requiredOption('--shards <n>', 'how many pods (shards) share the plans', (v: string) => parseWholeNumber(v, '--shards'))
    .requiredOption('--image <ref>', "the image holding kperturb, the controller and the campaign under /campaign (the repository's Containerfile)")
    .addOption(configOption())
    .option('--name <name>', 'the Job\'s name (default: kperturb-<controller>)')
    .option('--namespace <ns>', 'the Job\'s namespace (default: none written, kubectl\'s current one)')
    .option('--results-claim <pvc>', 'a ReadWriteMany PersistentVolumeClaim the shards write their results to (default: an emptyDir per pod)')
    .addOption(parallelOption(2))
    .option('--output <file>', 'write the manifest here instead of stdout')
    .action(async (opts: { shards: number; image: string; config: string; name?: string; namespace?: string; resultsClaim?: string; parallel: number; output?: string }) => {
      const config = loadConfig(opts.config);
      const yaml = renderJob({
        controller: config.name,
        shards: opts.shards,
        image: opts.image,
        parallel: opts.parallel,
        ...(opts.name ? { name: opts.name } : {}),
        ...(opts.namespace ? { namespace: opts.namespace } : {}),
        ...(opts.resultsClaim ? { resultsClaim: opts.resultsClaim } : {}),
      });
      const output = opts.output;
      if (output) await writeOptionFile('--output', output, () => writeFileSync(output, yaml));
      else process.stdout.write(yaml);
    });

  program
    .command('demo')
    .description('learn, plan and test the bundled example controllers on the embedded cluster (or see --real, --kubeconfig)')
    .option('--json <file>', 'write the results as JSON')
    .option('--only <name...>', 'only these examples (by metadata.name), on every pattern')
    .option('--all', 'every bundled example on every pattern (default: one example per pattern and its twin, on that pattern)')
    .option('--no-confirm', 'do not re-run a workload without faults to confirm the alarms of a bug')
    .addOption(new Option('-o, --out <dir>', 'where runs, plans and results are kept').default('.kperturb/demo'))
    .addOption(parallelOption(DEMO_PARALLEL))
    .addOption(realOption())
    .addOption(kubeconfigOption())
    .addOption(contextOption())
    .action(async (opts: { json?: string; only?: string[]; out: string; confirm: boolean; all?: boolean; parallel: number; real?: boolean; kubeconfig?: string; context?: string }, cmd: Command) => {
      const signal = stopOnInterrupt(logError);
      const { cluster, parallel } = await clusterChoice(opts, cmd.getOptionValueSource('parallel') === 'cli', signal);
      const progress = progressReporter();
      const { renderDemoTable, runDemo, writeDemoJson } = await demoModule();
      let results: Awaited<ReturnType<typeof runDemo>>;
      try {
        results = await runDemo({ out: resolve(opts.out), log: progress.log, progress, signal, parallel: parallel ?? opts.parallel, ...(cluster ? { cluster } : {}), confirm: opts.confirm, all: opts.all === true, ...(opts.only ? { only: opts.only } : {}) });
      } finally {
        progress.end();
      }
      process.stdout.write('\n' + renderDemoTable(results) + '\n');
      for (const e of results.examples) {
        if (e.error) process.stdout.write(`\n${e.example}/${e.workload} was not tested: ${e.error}\n`);
        if (e.skipped) process.stdout.write(`\n${e.example}/${e.workload} was skipped: ${e.skipped}\n`);
        for (const p of e.plans.filter((x) => x.verdict === 'bug' || x.verdict === 'flaky')) {
          process.stdout.write(`\n${e.example}: ${p.plan} ${p.verdict === 'bug' ? 'found a bug' : 'is flaky'}: ${p.description}\n`);
          for (const a of p.alarms) process.stdout.write(`  [${a.oracle}]${a.flaky ? ' (flaky)' : ''} ${a.message}\n`);
        }
      }
      process.stdout.write(`\ntotal time ${formatDuration(results.durationMs)}; runs in ${resolve(opts.out)}; \`kperturb report ${relativeOrAbsolute(resolve(opts.out))} --html report.html\` for details\n`);
      if (opts.json) writeDemoJson(opts.json, results);
      if (results.examples.some((e) => e.error)) process.exitCode = 2;
    });

  registerImport(program);
  return program;
}

/** `--kubeconfig-out` of a server just started (merged into an existing kubeconfig); stops the server if that fails. */
async function writeKubeconfigOrStop(file: string | undefined, server: { kubeconfigYaml(): string; stop(): Promise<void> }): Promise<void> {
  if (!file) return;
  const { writeKubeconfigFile } = await import('../kube/kubeconfig.js');
  try {
    writeKubeconfigFile(file, server.kubeconfigYaml());
  } catch (err) {
    await server.stop();
    throw err;
  }
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
    const code = errorCode(err);
    const message = err instanceof Error ? err.message : String(err);
    if (output.jsonErrors) {
      const where = err instanceof UserInputError ? { ...(err.file !== undefined ? { file: err.file } : {}), ...(err.at !== undefined ? { at: err.at } : {}) } : {};
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
