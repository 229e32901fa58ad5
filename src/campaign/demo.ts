/**
 * The demo campaign: learn, plan and test bundled example controllers on the embedded cluster.
 * It is what `npm start` runs on a fresh machine. By default it runs one example per pattern (a Go
 * controller-runtime one among them), each with its correct twin, on the pattern its bug belongs to,
 * within a few minutes on 2 cores; `all` runs every example on every pattern (about ten times longer).
 */
import { existsSync, readdirSync, writeFileSync, mkdirSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadConfig } from '../config/config.js';
import { InterruptedError, UserInputError } from '../model/errors.js';
import type { ControllerUnderTest } from '../config/config.js';
import type { Pattern, TestPlan } from '../model/plan.js';
import { DEFAULT_CONFIRM_RUNS, type Finding, type PlanResult, type UntestedWorkload } from '../model/results.js';
import { groupFindings, stageThatEmptied, untestedWorkloads } from '../../oracles/findings.js';
import { learn, plan, test, type Log, type TestProgress } from './campaign.js';
import { DEFAULT_EXPLORE_STEPS, explore } from './explore.js';
import type { ExploreFinding } from '../../oracles/explore/findings.js';
import type { ClusterChoice } from '../coordinator/run.js';
import { DEMO_PARALLEL, Limiter } from './limiter.js';
import { ProcessGroup } from '../process/groups.js';

/** What the Go examples' first build costs (measured: docs/cli.md, `kperturb demo`). */
const GO_COLD_BUILD = 'with empty Go caches about 2.6 min of CPU plus module downloads: 3-8 min on 2 cores; seconds once cached';

export const DEMO_RESULTS_FORMAT = 'kperturb.dev/demo-results/v1';

/** The repository's fixtures/controllers, found relative to this compiled file (dist/src/campaign). */
export function bundledExamplesDir(): string {
  return join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..', 'fixtures', 'controllers');
}

export function findExampleConfigs(root = bundledExamplesDir()): string[] {
  const found: string[] = [];
  const visit = (dir: string, depth: number) => {
    if (existsSync(join(dir, 'kperturb.yaml'))) found.push(join(dir, 'kperturb.yaml'));
    if (depth === 0) return;
    for (const e of readdirSync(dir, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
      if (e.isDirectory() && !e.name.startsWith('.') && e.name !== 'node_modules') visit(join(dir, e.name), depth - 1);
    }
  };
  if (existsSync(root)) visit(root, 2);
  return found;
}

/** The default demo: example directory -> the pattern its planted bug belongs to. */
export const DEMO_SELECTION: Readonly<Record<string, Pattern>> = {
  'secret-marker': 'intermediate-state',
  'stale-deletion': 'stale-state',
  decommission: 'unobserved-state',
  'snapshot-copy': 'error-path',
};

/**
 * Example directories whose planted bug is of Acto's classes: it shows in every run of the example's
 * hand-written workload, so the patterns have no reference without it to diverge from. `--all` (and
 * `--only` naming them) also explores them: `kperturb explore` with seed 1, its findings confirmed,
 * with the differential oracle where the bug is of its class.
 */
export const DEMO_EXPLORE: Readonly<Record<string, { differential?: boolean }>> = {
  'exporter-toggle': { differential: true },
  'label-removal': {},
  'resource-update': {},
  'scale-floor': {},
  'version-rollback': {},
};

/** Which examples the demo learns first, of those ready to be learned (see runDemo). */
const LEARN_PRIORITY = { go: 1, typescript: 0 } as const;

/** Serialized delivery during the demo's reference runs: sharper causality, far fewer plans. */
const DEMO_SERIALIZE_QUIET_MS = 100;

export interface DemoExampleResult {
  example: string;
  workload: string;
  plansGenerated: number;
  bugs: number;
  durationMs: number;
  /** Set when the example could not be tested (its reference runs failed). */
  error?: string;
  /** Set when the example was left out on purpose (its controller is not built on this machine). */
  skipped?: string;
  /** Set when the example tested nothing (no plan kept, or none injected): it is not clean. */
  untested?: UntestedWorkload;
  /** The bug and flaky verdicts grouped into distinct findings (oracles/findings.ts). */
  findings?: Finding[];
  /** The `explore` row of an example in DEMO_EXPLORE (workload `explore`): its sequences, alarms and findings. */
  explore?: { sequences: number; alarms: number; findings: ExploreFinding[]; results: string };
  plans: Array<
    Pick<PlanResult, 'plan' | 'pattern' | 'description' | 'verdict' | 'injected' | 'durationMs' | 'beyondContract'> & {
      alarms: Array<{ oracle: string; object: string; field?: string; message: string; flaky?: boolean }>;
    }
  >;
}

export interface DemoResults {
  format: typeof DEMO_RESULTS_FORMAT;
  durationMs: number;
  examples: DemoExampleResult[];
}

export interface DemoOptions {
  out: string;
  only?: string[];
  log: Log;
  progress?: TestProgress;
  /** Confirm bugs with an unperturbed re-run (`test --confirm`); default true. */
  confirm?: boolean;
  /** Re-runs per finding of class bug (`test --confirm-runs`); default DEFAULT_CONFIRM_RUNS. */
  confirmRuns?: number;
  /** Try recovery on findings of class bug (`test --no-recovery` turns it off); default true. */
  recovery?: boolean;
  /** Every example on every pattern, instead of DEMO_SELECTION. */
  all?: boolean;
  /** Example directory -> pattern: what the default run tests (default DEMO_SELECTION). */
  selection?: Readonly<Record<string, Pattern>>;
  /** Example directory -> how `all` and `only` explore it too (default DEMO_EXPLORE). */
  exploreExamples?: Readonly<Record<string, { differential?: boolean }>>;
  /** Plans run at once, across all examples (default DEMO_PARALLEL). */
  parallel?: number;
  /** Where the runs run (default: a fresh embedded cluster each); see ClusterChoice. */
  cluster?: ClusterChoice;
  /** Stops the demo (SIGINT, SIGTERM); see CampaignOptions.signal. */
  signal?: AbortSignal;
  /** Builds the Go examples' binary (default buildGoExamples: scripts/build-go-fixtures.sh); tests replace it. */
  buildGoExamples?: (log: Log, signal?: AbortSignal) => Promise<void>;
}

export { DEMO_PARALLEL } from './limiter.js';

/**
 * Each example (and workload) is a pipeline: learn, plan, then test its plans. Learning is one
 * example at a time (reference runs, serialized ones above all, want a machine that is not also
 * learning something else); the tests of the examples already planned run meanwhile, within one
 * limit over all examples. So the first bug is shown while later examples still learn, and the Go
 * examples, whose one-time build runs in the background (goBuild), come last without holding up the
 * rest. The results keep the examples' order. An example's time is its learn, plan and test time.
 */
export async function runDemo(opts: DemoOptions): Promise<DemoResults> {
  const started = Date.now();
  const orInterrupted = (err: unknown) => (opts.signal?.aborted ? new InterruptedError(`results so far in ${opts.out}`) : err);
  const selected = selectExamples(opts);
  const goBuild = selected.some((s) => usesGoExamplesBinary(s.config)) ? (opts.buildGoExamples ?? buildGoExamples)(opts.log, opts.signal) : Promise.resolve();
  opts.progress?.begin(0);
  const slots: DemoSlots = {
    goBuild,
    learning: new Limiter(1),
    // One limit over all examples: their plans share the machine, not one example at a time.
    testing: new Limiter(opts.parallel ?? DEMO_PARALLEL),
  };
  const outcomes = await Promise.allSettled(selected.map((example) => demoExample(example, slots, opts)));
  // Every example's runs have ended (an interrupt ends them all) before the demo says what happened.
  const examples: DemoExampleResult[] = [];
  for (const outcome of outcomes) {
    if (outcome.status === 'rejected') throw orInterrupted(outcome.reason);
    examples.push(outcome.value);
  }
  return { format: DEMO_RESULTS_FORMAT, durationMs: Date.now() - started, examples };
}

/** One example's workload the demo tests, and which of its plans (`only`: the one pattern it tests). */
interface SelectedExample {
  config: ControllerUnderTest;
  workload: string;
  wanted: (p: TestPlan) => boolean;
  only?: Pattern;
  /** Not a workload: explore the example (DEMO_EXPLORE). */
  explore?: { differential?: boolean };
}

/** What the examples' pipelines share: the Go build, one learning slot, one limit on runs. */
interface DemoSlots {
  goBuild: Promise<void>;
  learning: Limiter;
  testing: Limiter;
}

/** The bundled examples' workloads the options select (`--only`, `--all`, or DEMO_SELECTION). */
function selectExamples(opts: DemoOptions): SelectedExample[] {
  const selected: SelectedExample[] = [];
  const bundled = findExampleConfigs().map((file) => ({ file, config: loadConfig(file) }));
  const unknown = (opts.only ?? []).filter((name) => !bundled.some((e) => e.config.name === name));
  if (unknown.length > 0) {
    throw new UserInputError(
      undefined,
      '--only',
      `names of bundled examples (${bundled.map((e) => e.config.name).join(', ')}); got ${unknown.map((n) => JSON.stringify(n)).join(', ')}`,
    );
  }
  for (const { file, config } of bundled) {
    const pattern = (opts.selection ?? DEMO_SELECTION)[exampleLabel(file).split('/')[0]!];
    if (opts.only && opts.only.length > 0) {
      if (!opts.only.includes(config.name)) continue;
    } else if (!opts.all && !pattern) {
      continue;
    }
    // --only and --all test every pattern; the default selection tests each example's own pattern.
    const onePattern = opts.all || (opts.only?.length ?? 0) > 0 || !pattern ? undefined : pattern;
    const wanted = (p: TestPlan) => onePattern === undefined || p.spec.pattern === onePattern;
    for (const workload of config.workloads.keys()) selected.push({ config, workload, wanted, ...(onePattern ? { only: onePattern } : {}) });
    const explore = onePattern === undefined ? (opts.exploreExamples ?? DEMO_EXPLORE)[exampleLabel(file).split('/')[0]!] : undefined;
    if (explore) selected.push({ config, workload: 'explore', wanted: () => false, explore });
  }
  return selected;
}

/** One example's pipeline: learn and plan (in the learning slot), then test its plans. */
async function demoExample(selected: SelectedExample, slots: DemoSlots, opts: DemoOptions): Promise<DemoExampleResult> {
  const { config, workload, wanted, only } = selected;
  const base = { example: config.name, workload, plansGenerated: 0, bugs: 0, plans: [] };
  if (usesGoExamplesBinary(config)) await slots.goBuild;
  const notBuilt = missingControllerBinary(config);
  if (notBuilt) {
    opts.log(`demo: skipping ${config.name}/${workload}: ${notBuilt}`);
    return { ...base, durationMs: 0, skipped: notBuilt };
  }
  const t0 = Date.now();
  if (selected.explore) return { ...base, ...(await slots.learning.run(() => exploreExample(config, selected.explore!, opts), LEARN_PRIORITY.go)) };
  // The Go examples are learned first once they are built: they carry most of the default demo's
  // plans (stale-deletion's 116 of 168), and learned last (after the TypeScript ones, in name
  // order) their tests ran on their own at the end. Before the build is done they are not waiting
  // for the learning slot at all, so a fresh clone's first bug still comes from a TypeScript example.
  const prepared = await slots.learning.run(
    () => learnAndPlan({ config, workload, wanted, ...(only ? { only } : {}) }, opts),
    LEARN_PRIORITY[usesGoExamplesBinary(config) ? 'go' : 'typescript'],
  );
  if ('error' in prepared) return { ...base, durationMs: Date.now() - t0, error: prepared.error };
  const planned = {
    controller: config.name,
    workload,
    plans: prepared.plans.length,
    referenceRuns: prepared.referenceRuns,
    ...(prepared.emptiedBy ? { emptiedBy: prepared.emptiedBy } : {}),
  };
  if (prepared.plans.length === 0) return { ...base, durationMs: Date.now() - t0, untested: untestedWorkloads([planned], [])[0]! };
  const results = await test(config, prepared.plans, {
    out: opts.out,
    log: opts.log,
    ...(opts.cluster ? { cluster: opts.cluster } : {}),
    ...(opts.signal ? { signal: opts.signal } : {}),
    limiter: slots.testing,
    confirm: opts.confirm ?? true,
    confirmRuns: opts.confirmRuns ?? DEFAULT_CONFIRM_RUNS,
    recovery: opts.recovery ?? true,
    ...(opts.progress ? { progress: opts.progress } : {}),
  });
  return {
    ...base,
    plansGenerated: prepared.plans.length,
    bugs: results.filter((r) => r.verdict === 'bug').length,
    durationMs: Date.now() - t0,
    ...(untestedWorkloads([planned], results).length > 0 ? { untested: untestedWorkloads([planned], results)[0]! } : {}),
    findings: groupFindings(results),
    plans: results.map(demoPlanResult),
  };
}

/**
 * `kperturb explore` on an example (in the learning slot: its sequences' runs are reference runs):
 * its alarms as the row's bug count, and its findings, confirmed as the demo's are.
 */
async function exploreExample(
  config: ControllerUnderTest,
  how: { differential?: boolean },
  opts: DemoOptions,
): Promise<Pick<DemoExampleResult, 'bugs' | 'durationMs' | 'explore' | 'error'>> {
  if (opts.signal?.aborted) throw new InterruptedError(`results so far in ${opts.out}`);
  const t0 = Date.now();
  const { results, file } = await explore(config, {
    seed: 1,
    maxSteps: DEFAULT_EXPLORE_STEPS,
    out: opts.out,
    log: opts.log,
    ...(opts.cluster ? { cluster: opts.cluster } : {}),
    ...(opts.signal ? { signal: opts.signal } : {}),
    differential: how.differential === true,
    confirmRuns: opts.confirmRuns ?? DEFAULT_CONFIRM_RUNS,
  });
  const failed = results.sequences.find((s) => s.error);
  return {
    bugs: results.alarms.filter((a) => a.class !== 'environment').length,
    durationMs: Date.now() - t0,
    explore: { sequences: results.sequences.length, alarms: results.alarms.length, findings: results.findings, results: file },
    ...(failed ? { error: `sequence ${failed.sequence} did not finish: ${failed.error} (see ${file})` } : {}),
  };
}

/** Learns and plans one example's workload; the plans it wanted, or why there are none. */
async function learnAndPlan(
  { config, workload, wanted, only }: SelectedExample,
  opts: DemoOptions,
): Promise<{ plans: TestPlan[]; emptiedBy?: string; referenceRuns: number } | { error: string }> {
  if (opts.signal?.aborted) throw new InterruptedError(`results so far in ${opts.out}`);
  const learned = await learn(config, {
    out: opts.out,
    log: opts.log,
    ...(opts.cluster ? { cluster: opts.cluster } : {}),
    ...(opts.signal ? { signal: opts.signal } : {}),
    workloads: [workload],
    serialize: { quietMs: DEMO_SERIALIZE_QUIET_MS },
  });
  const failed = learned.flatMap((l) => l.runs).find((r) => !r.ok);
  // Plans from a broken reference would be meaningless; the other examples still run.
  if (failed) return { error: `a reference run failed: ${failed.error} (see ${failed.dir})` };
  const [planned] = await plan(config, { out: opts.out, log: opts.log, workloads: [workload] });
  const plans = planned!.plans.filter(wanted);
  const emptiedBy = stageThatEmptied(planned!.stats.filter((s) => only === undefined || s.pattern === only));
  return { plans, referenceRuns: config.referenceRuns, ...(plans.length === 0 && emptiedBy ? { emptiedBy } : {}) };
}

/** A plan's result as the demo's JSON carries it. */
function demoPlanResult(r: PlanResult): DemoExampleResult['plans'][number] {
  return {
    plan: r.plan,
    pattern: r.pattern,
    description: r.description,
    verdict: r.verdict,
    injected: r.injected,
    ...(r.beyondContract ? { beyondContract: r.beyondContract } : {}),
    durationMs: r.durationMs,
    alarms: r.alarms.map((a) => ({
      oracle: a.oracle,
      object: a.object,
      ...(a.field !== undefined ? { field: a.field } : {}),
      message: a.message,
      ...(a.flaky ? { flaky: true } : {}),
    })),
  };
}

export function writeDemoJson(file: string, results: DemoResults): void {
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, JSON.stringify(results, null, 2) + '\n');
}

/**
 * Why the example's controller cannot start here: a controller given by path (the Go examples'
 * binary, built by `npm run build:go-fixtures` when `go` is installed) that does not exist.
 */
export function missingControllerBinary(config: ControllerUnderTest): string | undefined {
  const { command, workingDir } = config.controller;
  if (!command.includes('/')) return undefined;
  const file = resolve(workingDir, command);
  if (existsSync(file)) return undefined;
  return `its controller ${relative(process.cwd(), file) || file} is not built (the Go examples need \`go\`: npm run build:go-fixtures)`;
}

/** The Go examples share one binary, fixtures/controllers/go/bin/kperturb-fixtures. */
function usesGoExamplesBinary(config: ControllerUnderTest): boolean {
  const { command, workingDir } = config.controller;
  return command.includes('/') && resolve(workingDir, command) === GO_EXAMPLES_BINARY();
}

const GO_EXAMPLES_BINARY = () => join(bundledExamplesDir(), 'go', 'bin', 'kperturb-fixtures');

/**
 * Builds the Go examples in the background with scripts/build-go-fixtures.sh (a no-op in
 * milliseconds when the binary is up to date; without `go` it says so and the Go examples are
 * skipped). Its own lines (building..., built in N s) go to the log. Never rejects: a failed build
 * leaves the binary missing, and those examples say so.
 */
export function buildGoExamples(log: Log, signal?: AbortSignal): Promise<void> {
  const script = join(bundledExamplesDir(), '..', '..', 'scripts', 'build-go-fixtures.sh');
  if (!existsSync(script) || signal?.aborted) return Promise.resolve();
  if (!existsSync(GO_EXAMPLES_BINARY())) {
    log(`demo: building the Go examples in the background, once (${GO_COLD_BUILD}); the others run meanwhile`);
  }
  // Its own process group: an interrupted demo ends the build with everything go started.
  const build = new ProcessGroup('sh', [script], { stdio: ['ignore', 'ignore', 'pipe'] });
  const stop = () => void build.stop(2000);
  signal?.addEventListener('abort', stop, { once: true });
  if (build.child.stderr) createInterface({ input: build.child.stderr }).on('line', (line) => log(`demo: ${line}`));
  build.child.on('error', (err) => log(`demo: could not build the Go examples: ${err.message}`));
  return build.exited.then(() => signal?.removeEventListener('abort', stop));
}

export function exampleLabel(file: string): string {
  return relative(bundledExamplesDir(), dirname(file));
}
