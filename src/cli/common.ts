/**
 * What the commands of src/cli/commands share: the global output settings (`--quiet`, `--verbose`,
 * `--no-color`), logging, the options several commands take, their parsers, and the cluster choice.
 */
import { Option } from 'commander';
import { relative } from 'node:path';
import type { ClusterChoice } from '../coordinator/run.js';
import { UserInputError } from '../model/errors.js';
import { KUBERNETES_VERSION_EXPECTED, formatKubernetesVersion, parseKubernetesVersion } from '../model/kube-version.js';
import { BUG_FOUND_CLASSES, DEFAULT_CONFIRM_RUNS, type PlanResult, type UntestedWorkload } from '../model/results.js';
import { ProgressReporter, type Verbosity } from '../report/progress.js';
import { paletteFor } from '../report/color.js';
import { renderTerminalReport } from '../report/terminal.js';
import { groupFindings } from '../../oracles/findings.js';

export function relativeOrAbsolute(path: string): string {
  const rel = relative(process.cwd(), path);
  return rel && !rel.startsWith('..') ? rel : path;
}

/** Set from the global options before a command runs (`--quiet`, `--verbose`, `--no-color`). */
export const output: { verbosity: Verbosity; colour: boolean; jsonErrors: boolean } = { verbosity: 'normal', colour: true, jsonErrors: false };

/** Information on stderr; `--quiet` drops it. */
export const log = (line: string) => {
  if (output.verbosity !== 'quiet') process.stderr.write(line + '\n');
};
/** Errors and warnings on stderr, however quiet. */
export const logError = (line: string) => process.stderr.write(line + '\n');

export function progressReporter(): ProgressReporter {
  return new ProgressReporter(process.stderr, Date.now, { verbosity: output.verbosity, palette: paletteFor(process.stderr, process.env, output.colour) });
}

/**
 * The campaign modules load the coordinator, the proxy, the embedded cluster and client-node (most
 * of kperturb's start-up time): only the commands that run them load them, so that `--help`,
 * `report`, `job` and bad input answer at once.
 */
export const campaignModule = () => import('../campaign/campaign.js');
export const demoModule = () => import('../campaign/demo.js');

export function parseKubernetesRelease(value: string): string {
  const release = parseKubernetesVersion(value);
  if (!release) throw new UserInputError(undefined, '--kubernetes-version', `${KUBERNETES_VERSION_EXPECTED} (got ${JSON.stringify(value)})`);
  return formatKubernetesVersion(release);
}

export function parsePort(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0 || n > 65535) throw new UserInputError(undefined, '--port', `a port number 0-65535 (got ${JSON.stringify(value)})`);
  return n;
}

/**
 * Listens on the `--port` a user gave (`kperturb cluster`, `kperturb proxy`): a port another program
 * holds is that option's fault, said as such rather than as Node's EADDRINUSE (an internal error).
 */
export async function listeningOnPort<T>(port: number | undefined, listen: () => Promise<T>): Promise<T> {
  try {
    return await listen();
  } catch (err) {
    if (port === undefined || (err as NodeJS.ErrnoException).code !== 'EADDRINUSE') throw err;
    throw new UserInputError(
      undefined,
      '--port',
      `a port no other program listens on (127.0.0.1:${port} is in use: stop what listens there, or leave --port out for a free port)`,
    );
  }
}

/** How long `proxy` waits for the upstream's GET /version before giving up. */
export const PROXY_UPSTREAM_CHECK_MS = 5_000;

/** Serialized delivery's default quiet window (ms): see docs/cli.md for the measured cost. */
export const DEFAULT_SERIALIZE_QUIET_MS = 100;

export function parseQuietMs(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1 || n > 60_000)
    throw new UserInputError(undefined, '--serialize', `a quiet window in milliseconds, 1-60000 (got ${JSON.stringify(value)})`);
  return n;
}

export function parseWholeNumber(value: string, option: string): number {
  const n = Number(value);
  if (!/^\d+$/.test(value.trim()) || !Number.isSafeInteger(n) || n < 1)
    throw new UserInputError(undefined, option, `a whole number from 1 (got ${JSON.stringify(value)})`);
  return n;
}

export function parseParallel(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1 || n > 64)
    throw new UserInputError(undefined, '--parallel', `a number of plans to run at once, 1-64 (got ${JSON.stringify(value)})`);
  return n;
}

export const parallelOption = (dflt: number) =>
  new Option('-j, --parallel <n>', 'run this many plans at once (each on its own cluster, proxy and controller process)')
    .argParser(parseParallel)
    .default(dflt);

export function parseConfirmRuns(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0 || n > 100)
    throw new UserInputError(undefined, '--confirm-runs', `a number of re-runs per finding, 0-100 (0: no confirmation; got ${JSON.stringify(value)})`);
  return n;
}

/** `--confirm-runs K`: re-runs of each bug finding's shortest reproducer (src/campaign/confirm-findings.ts). */
export const confirmRunsOption = () =>
  new Option(
    '--confirm-runs <k>',
    'confirm each finding of class bug: re-run its shortest reproducer K times on fresh clusters (and its workload once without faults); it stays a bug only if it failed again every time (or, failing that, one of its next two plans did), else it is flaky. 0: off',
  )
    .argParser(parseConfirmRuns)
    .default(DEFAULT_CONFIRM_RUNS);

/** `--no-recovery`: do not try Arsc's recovery strategies on bug findings (src/campaign/recovery.ts). */
export const recoveryOption = () =>
  new Option(
    '--no-recovery',
    'do not try to recover from each finding of class bug (by default its reproducer runs once more and kperturb tries, in order: time, a controller restart, re-applying the last resource, rolling back to the one before)',
  );

export const realOption = () =>
  new Option(
    '--real',
    'run each run on a fresh real control plane (etcd, kube-apiserver, kube-controller-manager; built by `npm run setup:real` if needed) instead of the embedded cluster',
  ).conflicts(['kubeconfig', 'context']);
export const kubeconfigOption = () =>
  new Option(
    '--kubeconfig <file>',
    "run on the cluster of this kubeconfig's current context (shared by every run: what a run creates is deleted after it)",
  ).conflicts('real');
export const contextOption = () =>
  new Option(
    '--context <name>',
    'run on the cluster of this kubeconfig context: of --kubeconfig, else of $KUBECONFIG (a path list) or ~/.kube/config, as kubectl loads them',
  ).conflicts('real');

/**
 * The cluster the runs use, checked before the first run: --real builds the control plane if needed
 * (progress on stderr), --kubeconfig must name a readable kubeconfig whose API server answers. Runs
 * on an existing cluster share it, so they cannot run in parallel.
 */
export async function clusterChoice(
  opts: { real?: boolean; kubeconfig?: string; context?: string; parallel?: number },
  parallelGiven: boolean,
  signal?: AbortSignal,
): Promise<{ cluster?: ClusterChoice; parallel?: number }> {
  if (opts.real) {
    const { ensureControlPlaneBinaries } = await import('../realcluster/index.js');
    return {
      cluster: { kind: 'real', binaries: await ensureControlPlaneBinaries(log, signal) },
      ...(opts.parallel !== undefined ? { parallel: opts.parallel } : {}),
    };
  }
  if (opts.kubeconfig !== undefined || opts.context !== undefined) {
    const { ExistingCluster } = await import('../realcluster/index.js');
    const { kubeconfigSource } = await import('../kube/kubeconfig-source.js');
    const source = kubeconfigSource(opts);
    await (await ExistingCluster.connect(source)).check();
    if ((opts.parallel ?? 1) > 1 && parallelGiven) {
      throw new UserInputError(
        undefined,
        '--parallel',
        `1 with ${opts.kubeconfig !== undefined ? '--kubeconfig' : '--context'} (runs on an existing cluster share it, so they run one at a time)`,
      );
    }
    return { cluster: { kind: 'existing', kubeconfig: source }, ...(opts.parallel !== undefined ? { parallel: 1 } : {}) };
  }
  return opts.parallel !== undefined ? { parallel: opts.parallel } : {};
}

export const configOption = () => new Option('-c, --config <file>', 'the kperturb.yaml of the controller under test').default('kperturb.yaml');
export const outOption = () => new Option('-o, --out <dir>', 'where runs, plans and results are kept').default('.kperturb');
export const workloadOption = () => new Option('-w, --workload <name...>', 'only these workloads (default: all)');

export function printResults(results: PlanResult[], untested: readonly UntestedWorkload[] = []): void {
  process.stdout.write(renderTerminalReport(results, { untested, palette: paletteFor(process.stdout, process.env, output.colour) }));
}

/** Exit code 3: a workload tested nothing (docs/cli.md); `--allow-untested` makes it 0. */
export const EXIT_UNTESTED = 3;

/**
 * 1 when a plan found a bug, 2 when one could not be run, 3 when a workload tested nothing (unless
 * `allowUntested`: a campaign that tested nothing is not clean), else 0 (flaky and not-injected
 * plans of a workload that tested something are not failures).
 */
export function exitCodeFor(results: readonly PlanResult[], untested: readonly UntestedWorkload[] = [], allowUntested = false): number {
  // A bug found is a finding of a class that is one (BUG_FOUND_CLASSES): not one its re-runs did not
  // confirm (`flaky`, oracles/confirmation.ts), that healed with time alone (`transient`), that a
  // refused input held up (`misoperation`), or that the environment or the API server explains.
  if (groupFindings(results).some((f) => BUG_FOUND_CLASSES.has(f.class))) return 1;
  if (results.some((r) => r.verdict === 'error')) return 2;
  return untested.length > 0 && !allowUntested ? EXIT_UNTESTED : 0;
}

/** `--allow-untested` of test, demo and report. */
export const ALLOW_UNTESTED_HELP = `exit 0 even when a workload tested nothing (every plan pruned or not injected; otherwise exit ${EXIT_UNTESTED})`;

/** `--kubeconfig-out` of a server just started (merged into an existing kubeconfig); stops the server if that fails. */
export async function writeKubeconfigOrStop(file: string | undefined, server: { kubeconfigYaml(): string; stop(): Promise<void> }): Promise<void> {
  if (!file) return;
  const { writeKubeconfigFile } = await import('../kube/kubeconfig.js');
  try {
    writeKubeconfigFile(file, server.kubeconfigYaml());
  } catch (err) {
    await server.stop();
    throw err;
  }
}

export function untilSignal(): Promise<void> {
  return new Promise((r) => {
    process.once('SIGINT', () => r());
    process.once('SIGTERM', () => r());
  });
}
