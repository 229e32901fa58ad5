/**
 * Shared by the end-to-end tests of the example operators (fixtures/controllers/): run a whole
 * campaign (learn, plan, test) against one example on the embedded cluster, and build the Go examples.
 */
import test, { type ExecutionContext } from 'ava';
import { execFileSync, spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadConfig } from '../../src/config/config.js';
import { learn, plan, test as runPlans, type PlanSummary } from '../../src/campaign/campaign.js';
import type { ControllerUnderTest } from '../../src/config/config.js';
import { PATTERNS, type Pattern, type TestPlan } from '../../src/model/plan.js';
import type { ObjectKey } from '../../src/model/object-key.js';
import type { PlanResult } from '../../src/model/results.js';
import { sharedScratchDir } from '../_scratch-dir.js';

const repoRoot = fileURLToPath(new URL('../../../', import.meta.url));

export function fixtureConfig(example: string, variant: 'buggy' | 'fixed'): string {
  return join(repoRoot, 'fixtures', 'controllers', example, variant, 'kperturb.yaml');
}

/**
 * One example variant's campaign, shared by the tests of a file: learn and plan once (on first use,
 * in a fresh output directory), then test the plans of one pattern per call, so that every test
 * reports within ava's inactivity timeout.
 */
export class ExampleCampaign {
  private prepared: Promise<{ config: ControllerUnderTest; out: string; planned: PlanSummary }> | undefined;

  constructor(
    readonly example: string,
    readonly variant: 'buggy' | 'fixed',
    /** Learn with serialized watch delivery (`learn --serialize`) with this quiet window. */
    readonly serialize?: { quietMs: number },
  ) {}

  /** learn (the reference runs must all succeed) and plan, once. */
  prepare(): Promise<{ config: ControllerUnderTest; out: string; planned: PlanSummary }> {
    this.prepared ??= (async () => {
      const config = loadConfig(fixtureConfig(this.example, this.variant));
      const out = sharedScratchDir(`kperturb-e2e-${this.example}-${this.variant}${this.serialize ? '-serialized' : ''}-`);
      const learned = await learn(config, { out, log: quiet, ...(this.serialize ? { serialize: this.serialize } : {}) });
      const failed = learned.flatMap((l) => l.runs).filter((r) => !r.ok);
      if (failed.length > 0) throw new Error(`reference runs of ${config.name} failed: ${failed.map((f) => `${f.error} (${f.dir})`).join('; ')}`);
      const [planned] = await plan(config, { out, log: quiet });
      return { config, out, planned: planned! };
    })();
    return this.prepared;
  }

  /**
   * Tests the plans of one pattern that `select` picks; returns every plan generated for the pattern
   * and the results of those that ran.
   */
  async run(
    pattern: Pattern,
    select: (plans: TestPlan[]) => TestPlan[] = (p) => p,
    /** Stop after the first result this accepts (the rest of the selection does not run). */
    stopAfter?: (result: PlanResult) => boolean,
  ): Promise<{ plans: TestPlan[]; results: PlanResult[] }> {
    const { config, out, planned } = await this.prepare();
    const plans = planned.plans.filter((p) => p.spec.pattern === pattern);
    const results: PlanResult[] = [];
    for (const p of select(plans)) {
      const [result] = await runPlans(config, [p], { out, log: quiet });
      results.push(result!);
      if (stopAfter?.(result!)) break;
    }
    return { plans, results };
  }
}

const quiet = () => undefined;

/** `n` plans spread evenly over `plans` (all of them when there are at most `n`). */
export function spread(plans: TestPlan[], n: number): TestPlan[] {
  if (plans.length <= n) return plans;
  return Array.from({ length: n }, (_, i) => plans[Math.floor((i * plans.length) / n)]!);
}

/** Does the plan perturb, or expect the controller to act on, one of these objects? */
export function mentionsAny(plan: TestPlan, keys: readonly string[]): boolean {
  const text = plan.spec.description + JSON.stringify(plan.spec.faults);
  return keys.some((k) => text.includes(k));
}

/**
 * How many plans a test runs, so that each test reports within ava's 120 s inactivity timeout on a
 * busy two-core machine (a plan run takes 3-15 s). `kperturb demo --all` runs every plan.
 */
export const PLANS_PER_TEST = { intermediate: 10, relevant: 4, others: 2 };

/**
 * The plans an end-to-end test runs: every intermediate-state plan (they are few), else the plans
 * that involve the bug's objects (those that catch it, or for the twin, where the fix is put to the
 * test), else a couple spread over the rest so that the twin's test can still fail.
 */
export function plansToRun(plans: TestPlan[], objects: readonly string[], prefer?: RegExp): TestPlan[] {
  if (plans.length === 0 || plans[0]!.spec.pattern === 'intermediate-state') return spread(plans, PLANS_PER_TEST.intermediate);
  const relevant = plans.filter((p) => mentionsAny(p, objects));
  if (relevant.length === 0) return spread(plans, PLANS_PER_TEST.others);
  // The preferred plans first (as many as fit), then the other relevant ones spread over the rest.
  const preferred = prefer ? relevant.filter((p) => prefer.test(p.spec.description)) : [];
  const first = spread(preferred, PLANS_PER_TEST.relevant);
  return [
    ...first,
    ...spread(
      relevant.filter((p) => !preferred.includes(p)),
      PLANS_PER_TEST.relevant - first.length,
    ),
  ];
}

export function describeResults(results: PlanResult[]): string {
  return JSON.stringify(
    results.map((r) => ({ plan: r.plan, description: r.description, verdict: r.verdict, error: r.error, alarms: r.alarms.map((a) => a.message) })),
    null,
    1,
  );
}

/** Why the Go examples cannot run here, or undefined when `go` is on PATH. */
export function goMissingReason(): string | undefined {
  const probe = spawnSync('go', ['version'], { encoding: 'utf8' });
  if (probe.error && (probe.error as NodeJS.ErrnoException).code === 'ENOENT') {
    return 'skipped: no `go` command on PATH, so the Go example operators (fixtures/controllers/go) cannot be built';
  }
  return undefined;
}

/**
 * Builds the Go example operators (a no-op when the binary is up to date). A failed build throws with
 * the build's output: with `go` present, the Go tests fail loudly rather than skip.
 */
export function buildGoFixtures(): void {
  try {
    execFileSync('sh', [join(repoRoot, 'scripts', 'build-go-fixtures.sh')], { stdio: ['ignore', 'pipe', 'pipe'], encoding: 'utf8' });
  } catch (err) {
    const e = err as { stderr?: string; stdout?: string; message: string };
    throw new Error(`scripts/build-go-fixtures.sh failed: ${e.stderr || e.stdout || e.message}`, { cause: err });
  }
}

/** The interpreter the Python examples run with: Debian's, which has python3-kubernetes (.ci/run installs it). */
export const SYSTEM_PYTHON = '/usr/bin/python3';

/** Why the Python examples cannot run here (no /usr/bin/python3 with the official client), or undefined. */
export function pythonClientMissingReason(): string | undefined {
  const probe = spawnSync(SYSTEM_PYTHON, ['-c', 'import kubernetes'], { encoding: 'utf8' });
  if (probe.error) return `skipped: no ${SYSTEM_PYTHON}, so the Python example operators cannot run`;
  if (probe.status !== 0) return `skipped: ${SYSTEM_PYTHON} cannot import kubernetes (install Debian's python3-kubernetes, as .ci/run does)`;
  return undefined;
}

export interface ExampleTestOptions {
  /** A Go example: skipped (with the reason in its title) when `go` is absent, built before it runs. */
  go?: boolean;
  /** A Python example: skipped (with the reason in its title) without the official client for /usr/bin/python3. */
  python?: boolean;
  /**
   * The kperturb piece this test is waiting for. The test then runs as `test.failing`, so it flips
   * (ava reports it) as soon as the piece lands; remove the option then.
   */
  blockedOn?: string;
}

let goBuildRegistered = false;

/** Declares one serial end-to-end test of an example operator. */
export function exampleTest(title: string, opts: ExampleTestOptions, fn: (t: ExecutionContext) => Promise<void>): void {
  if (opts.go) {
    const missing = goMissingReason();
    if (missing) {
      test.skip(`${title} (${missing})`, () => undefined);
      return;
    }
    if (!goBuildRegistered) {
      goBuildRegistered = true;
      test.before('build the Go example operators', () => buildGoFixtures());
    }
  }
  if (opts.python) {
    const missing = pythonClientMissingReason();
    if (missing) {
      test.skip(`${title} (${missing})`, () => undefined);
      return;
    }
  }
  if (opts.blockedOn) test.serial.failing(`${title} [expected to fail until: ${opts.blockedOn}]`, fn);
  else test.serial(title, fn);
}

export interface ExampleSpec {
  /** The folder under fixtures/controllers/, with buggy/ and fixed/ variants. */
  example: string;
  /** Written in Go (built by scripts/build-go-fixtures.sh). */
  go?: boolean;
  /** Written in Python against the official client (needs python3-kubernetes for /usr/bin/python3). */
  python?: boolean;
  /** The pattern the planted bug belongs to. */
  pattern: Pattern;
  /** The objects the bug damages: the catching plan's alarm must name one of them. */
  damaged: ObjectKey[];
  /**
   * The objects whose perturbation exercises the bug, when they are not the damaged ones (e.g. the
   * pod whose termination the controller must see); tests favour plans that involve them.
   */
  focus?: ObjectKey[];
  /** Plans whose description matches run first (e.g. the stale view that still shows the deletion). */
  prefer?: RegExp;
  /**
   * Also catch the buggy variant with plans learned with serialized delivery (`learn --serialize`,
   * this quiet window), which sharpens causality and so prunes differently.
   */
  serializedToo?: { quietMs: number };
  /** When one specific plan must be the catching one: a pattern its description matches. */
  catchingPlan?: RegExp;
  /**
   * The kperturb pieces the buggy variant's test and the twin's tests are waiting for; they run as
   * `test.failing` until then, so that ava reports them as soon as the pieces land.
   */
  blockedOn?: { buggy?: string[]; fixed?: string[] };
}

/**
 * The end-to-end tests of one example: the buggy variant is caught by a plan of its pattern whose
 * alarm names a damaged object; the fixed twin passes every plan of every pattern (one test per
 * pattern, to report within ava's timeout). Only the buggy variant's own pattern is tested, to keep
 * the suite lean on two cores.
 */
export function declareExampleTests(spec: ExampleSpec): void {
  const buggy = new ExampleCampaign(spec.example, 'buggy');
  const fixed = new ExampleCampaign(spec.example, 'fixed');
  const involved = [...spec.damaged, ...(spec.focus ?? [])];
  const catches = (r: PlanResult) => r.verdict === 'bug' && r.injected && r.alarms.some((a) => spec.damaged.includes(a.object));
  const options = (blockers: string[] | undefined): ExampleTestOptions => ({
    ...(spec.go ? { go: true } : {}),
    ...(spec.python ? { python: true } : {}),
    ...(blockers && blockers.length > 0 ? { blockedOn: blockers.join('; ') } : {}),
  });

  const buggyTest = (campaign: ExampleCampaign, how: string) =>
    exampleTest(
      `${spec.example} (buggy) is caught by a ${spec.pattern} plan naming ${spec.damaged.join(' or ')}${how}`,
      options(spec.blockedOn?.buggy),
      async (t) => {
        // Stops at the first catch, unless a specific plan must be the one.
        const stop = spec.catchingPlan ? (r: PlanResult) => catches(r) && spec.catchingPlan!.test(r.description) : catches;
        const { plans, results } = await campaign.run(spec.pattern, (p) => plansToRun(p, involved, spec.prefer), stop);
        t.log(`ran ${results.length} of ${plans.length} ${spec.pattern} plans`);
        t.true(plans.length >= 1, `no ${spec.pattern} plan was generated`);
        const caught = results.filter(catches);
        t.true(caught.length >= 1, `no bug verdict with an alarm on ${spec.damaged.join(' or ')}: ${describeResults(results)}`);
        if (spec.catchingPlan) {
          t.true(
            caught.some((r) => spec.catchingPlan!.test(r.description)),
            `the plan matching ${spec.catchingPlan} must be one that catches the bug; caught by: ${caught.map((r) => r.description).join('; ')}`,
          );
        }
      },
    );
  buggyTest(buggy, '');
  if (spec.serializedToo)
    buggyTest(new ExampleCampaign(spec.example, 'buggy', spec.serializedToo), ` (learned with --serialize ${spec.serializedToo.quietMs})`);

  for (const pattern of PATTERNS) {
    exampleTest(`${spec.example} (fixed) passes every ${pattern} plan`, options(spec.blockedOn?.fixed), async (t) => {
      const { plans, results } = await fixed.run(pattern, (p) => plansToRun(p, involved, spec.prefer));
      t.log(`ran ${results.length} of ${plans.length} ${pattern} plans`);
      // Every controller writes, and the bug's own pattern must have plans for the twin too.
      if (pattern === 'intermediate-state' || pattern === spec.pattern) t.true(plans.length >= 1, `no ${pattern} plan was generated`);
      // No false alarm and no broken run; a plan whose trigger did not recur, or whose workload could
      // not finish under the fault, tested nothing and is only reported.
      for (const r of results) {
        t.not(r.verdict, 'bug', `false alarm: ${r.plan} (${r.description}): ${describeResults([r])}`);
        t.not(r.verdict, 'error', `${r.plan} (${r.description}) failed to run: ${r.error ?? ''}`);
        if (r.verdict !== 'pass') t.log(`${r.plan}: ${r.verdict} (${r.description})`);
      }
      if (spec.pattern === pattern)
        t.true(
          results.some((r) => r.verdict === 'pass'),
          `no ${pattern} plan of the twin passed: ${describeResults(results)}`,
        );
      if (results.length === 0) t.pass(`no ${pattern} plans`);
    });
  }
}
