/**
 * `kperturb explore`: operations generated from the controller's CRDs and seed CRs (planner/explore),
 * written as ordinary workloads (`--emit`), or run through `learn` (one fresh cluster per sequence,
 * its reference runs) and judged step by step by explore's oracles (oracles/explore).
 *
 * Files, under the campaign directory: `explore/explore.json` (the generated campaign), and
 * `explore/results.json` (each step's verdict, the alarms, coverage); the runs are learn's,
 * `learn/<sequence>/ref-<n>/`, so `plan` and `test` take them unchanged.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { isAbsolute, join, resolve } from 'node:path';
import { stringify } from 'yaml';
import { loadManifestObjects, type ControllerUnderTest, type Workload, type WorkloadStep } from '../config/config.js';
import { readYamlFile } from '../io/yaml-file.js';
import { writeFileAtomic } from '../io/atomic-files.js';
import { UserInputError } from '../model/errors.js';
import { isObject, keyOf, type KubeObject, type ObjectKey } from '../model/object-key.js';
import { builtinV2Definitions } from '../cluster/openapi-builtin.js';
import {
  crdVersionSchema,
  generateExploration,
  parseSchema,
  rollbackSequence,
  applyCoreRules,
  CORE_RULES,
  type ExploreCampaign,
  type ExploreSequence,
  type ExploreTarget,
  type PropertyCoverage,
} from '../../planner/explore/index.js';
import {
  differentialAlarms,
  differentialNotCompared,
  confirmExploreFinding,
  groupExploreFindings,
  nondeterministicFields,
  type DifferentialCase,
  judgeExploration,
  judgeSequence,
  rollbackAlarms,
  rollbackCrash,
  rollbackTargets,
  stateAfterStep,
  type ExploreAlarm,
  type ExploreFinding,
  type FieldMap,
  type SequenceJudgement,
  type SequenceRun,
  type StepJudgement,
} from '../../oracles/explore/index.js';
import { readRunRecord, readRunTraces, RUN_FILES } from '../io/run-dir.js';
import { mergeTracesBySeq } from '../model/trace-merge.js';
import type { MaskRule, ObjectMask } from '../../oracles/masks.js';
// Learned masks are concrete paths (learnMasks), printable as such.
import { formatPath, type FieldPath } from '../model/field-path.js';
import type { TraceEvent } from '../model/trace.js';
import { CampaignLayout } from './layout.js';
import { learn, plan, test, type CampaignOptions, type LearnOptions } from './campaign.js';
import { withQuietMs } from './quiet-window.js';
import { PATTERNS, type Pattern, type TestPlan } from '../model/plan.js';
import type { PlanResult, Verdict } from '../model/results.js';

export const EXPLORE_FORMAT = 'kperturb.dev/explore/v1';
export const EXPLORE_RESULTS_FORMAT = 'kperturb.dev/explore-results/v1';
export const DEFAULT_EXPLORE_STEPS = 5;
/** `--perturb` without a number: plans tested per pattern and sequence. */
export const DEFAULT_PERTURB_PLANS = 2;

/**
 * Core types semantic operations match subtrees to (their definitions and every one they reach are
 * taken from the built-in OpenAPI the embedded cluster serves).
 */
const CORE_TYPES = [
  'io.k8s.api.core.v1.ResourceRequirements',
  'io.k8s.api.core.v1.Affinity',
  'io.k8s.api.core.v1.Toleration',
  'io.k8s.api.core.v1.PodSecurityContext',
  'io.k8s.api.core.v1.SecurityContext',
  'io.k8s.api.core.v1.Probe',
  'io.k8s.api.core.v1.PersistentVolumeClaimSpec',
  'io.k8s.api.apps.v1.StatefulSetUpdateStrategy',
  'io.k8s.api.apps.v1.DeploymentStrategy',
  'io.k8s.api.core.v1.ServiceSpec',
];

export interface ExploreOptions {
  seed: number;
  maxSteps: number;
  /** `--sequence`: only these sequences of the generated campaign (the same seed and steps name the same ones). */
  sequences?: readonly string[];
}

/** The CRDs (crds:, else the CRDs among setup) and seeds (seeds:, and the CRs the workloads apply) as generation targets. */
export function exploreTargets(config: ControllerUnderTest): ExploreTarget[] {
  const crdFiles = config.crds && config.crds.length > 0 ? config.crds : config.setup;
  const crds = crdFiles.flatMap((file) =>
    loadManifestObjects(file)
      .filter((o) => o.kind === 'CustomResourceDefinition')
      .map((crd) => ({ crd, file })),
  );
  if (crds.length === 0)
    throw new UserInputError(config.file, 'crds', 'the CustomResourceDefinitions to explore (none among the setup files: name their files under crds)');
  const seeds: Array<{ obj: KubeObject; where: string }> = [];
  for (const file of config.seeds ?? []) loadManifestObjects(file).forEach((obj, i) => seeds.push({ obj, where: `${file} document ${i + 1}` }));
  for (const w of config.workloads.values()) {
    for (const [i, step] of w.steps.entries()) {
      if (!('apply' in step)) continue;
      const objs = typeof step.apply === 'string' ? loadManifestObjects(step.apply) : [step.apply.resource];
      for (const obj of objs) seeds.push({ obj, where: `workloads.${w.name}.steps[${i}]` });
    }
  }
  const targets = new Map<string, ExploreTarget>();
  const seen = new Set<string>();
  for (const { obj, where } of seeds) {
    const match = crds.map(({ crd }) => crdVersionSchema(crd, String(obj.apiVersion))).find((v) => v && v.kind === obj.kind);
    if (!match) {
      if (config.seeds?.some((f) => where.startsWith(f + ' ')))
        throw new UserInputError(where, 'apiVersion', `a custom resource of a CRD kperturb explores (no CRD serves ${String(obj.apiVersion)} ${obj.kind})`);
      continue; // a workload's ConfigMap or Secret: not a seed
    }
    if (match.schema === undefined) throw new UserInputError(where, 'kind', `a kind whose CRD version ${match.version} gives an openAPIV3Schema`);
    const id = JSON.stringify(obj);
    if (seen.has(id)) continue;
    seen.add(id);
    const t = targets.get(`${match.group}/${match.version}/${match.kind}`) ?? { schema: parseSchema(match.schema), kind: match.kind, seeds: [] };
    t.seeds.push(withoutServerFields(obj));
    targets.set(`${match.group}/${match.version}/${match.kind}`, t);
  }
  if (targets.size === 0)
    throw new UserInputError(
      config.file,
      'seeds',
      'at least one custom resource of the explored CRDs to start from (seeds: files, or a workload that applies one)',
    );
  return [...targets.values()];
}

function withoutServerFields(obj: KubeObject): Record<string, unknown> {
  const { status: _status, ...rest } = obj as Record<string, unknown>;
  const md = isObject(rest.metadata) ? { ...rest.metadata } : {};
  for (const k of ['resourceVersion', 'uid', 'creationTimestamp', 'generation', 'managedFields']) delete md[k];
  if (md.namespace === undefined) md.namespace = 'default';
  return { ...rest, metadata: md };
}

export function generateCampaign(config: ControllerUnderTest, opts: ExploreOptions): ExploreCampaign {
  const campaign = generateExploration({
    targets: exploreTargets(config),
    seed: opts.seed,
    maxSteps: opts.maxSteps,
    coreTypes: builtinV2Definitions(CORE_TYPES),
    coreRules: builtinV2Definitions(Object.keys(CORE_RULES)),
  });
  return opts.sequences ? selectSequences(campaign, opts.sequences) : campaign;
}

/** The named sequences of a campaign, in its order; a name it does not have is the user's error. */
export function selectSequences(campaign: ExploreCampaign, names: readonly string[]): ExploreCampaign {
  const known = new Set(campaign.sequences.map((s) => s.name));
  const unknown = names.filter((n) => !known.has(n));
  if (unknown.length > 0)
    throw new UserInputError(
      undefined,
      '--sequence',
      `a sequence of this campaign (seed ${campaign.seed}, ${campaign.maxSteps} steps: ${campaign.sequences[0]?.name ?? 'none'} ... ${campaign.sequences.at(-1)?.name ?? ''}), not ${unknown.join(', ')}`,
    );
  return { ...campaign, sequences: campaign.sequences.filter((s) => names.includes(s.name)) };
}

/** A sequence as a workload: apply the seed, then each operation as a merge patch that may be refused, each followed by settling. */
export function sequenceWorkload(seq: ExploreSequence, settleSeconds: number): Workload {
  const key = crKey(seq);
  const steps: WorkloadStep[] = [{ apply: { resource: seq.seed as KubeObject } }, { settle: { timeoutSeconds: settleSeconds } }];
  for (const s of seq.steps) {
    steps.push({ patch: { key, type: 'merge', patch: s.patch, onError: 'continue' } });
    steps.push({ settle: { timeoutSeconds: settleSeconds } });
  }
  return { name: seq.name, steps };
}

function crKey(seq: ExploreSequence): ObjectKey {
  const key = keyOf(seq.seed as KubeObject);
  if (!key) throw new Error(`seed of ${seq.name} has no name`);
  return key;
}

/** The config with the generated workloads in place of its own (masks of its own workloads dropped). */
export function exploreConfig(config: ControllerUnderTest, campaign: ExploreCampaign): ControllerUnderTest {
  const workloads = new Map(campaign.sequences.map((s) => [s.name, sequenceWorkload(s, config.settle.timeoutSeconds)]));
  return {
    ...config,
    workloads,
    masks: config.masks.filter((m) => m.workload === undefined),
    countUpdates: config.countUpdates.filter((m) => m.workload === undefined),
  };
}

/**
 * The config the sequences run with: one run each, since explore's oracles judge the first run of a
 * sequence alone (the rollback and differential runs are single too), unless `--perturb` plans from
 * them, which takes the config's `referenceRuns` (the planner's determinism pruning compares them).
 * Half the wall time of an exploration with the default `referenceRuns: 2`.
 */
export function sequenceRunsConfig(generated: ControllerUnderTest, perturb: number | undefined): ControllerUnderTest {
  return perturb ? generated : { ...generated, referenceRuns: 1 };
}

/**
 * `--emit DIR`: DIR/kperturb.yaml, the config with the generated workloads (paths made absolute, so
 * that `kperturb learn -c DIR/kperturb.yaml` runs them unchanged), and DIR/explore.json, the campaign.
 */
export function emitCampaign(config: ControllerUnderTest, campaign: ExploreCampaign, dir: string): { config: string; campaign: string } {
  const raw = readYamlFile(config.file, 'KP_E_CONFIG') as Record<string, unknown>;
  const abs = (p: unknown) => (typeof p === 'string' && !isAbsolute(p) ? resolve(config.dir, p) : p);
  const controller = { ...(raw.controller as Record<string, unknown>), workingDir: config.controller.workingDir };
  const out: Record<string, unknown> = { ...raw, controller };
  for (const section of ['setup', 'crds', 'seeds'] as const) if (Array.isArray(raw[section])) out[section] = (raw[section] as unknown[]).map(abs);
  const workloads: Record<string, unknown> = {};
  for (const s of campaign.sequences) workloads[s.name] = { steps: sequenceWorkload(s, config.settle.timeoutSeconds).steps };
  out.workloads = workloads;
  for (const section of ['masks', 'countUpdates'] as const)
    if (Array.isArray(raw[section])) out[section] = (raw[section] as unknown[]).filter((m) => !(isObject(m) && m.workload !== undefined));
  mkdirSync(dir, { recursive: true });
  const configFile = join(dir, 'kperturb.yaml');
  const header = `# Generated by \`kperturb explore --emit\` from ${config.file} (seed ${campaign.seed}, up to ${campaign.maxSteps} steps per sequence).\n# Run it with \`kperturb learn -c ${configFile}\`, then plan and test as usual; explore.json beside it says what each step does.\n`;
  writeFileSync(configFile, header + stringify(out, { lineWidth: 0, aliasDuplicateObjects: false }));
  const campaignFile = join(dir, 'explore.json');
  writeFileSync(campaignFile, JSON.stringify({ format: EXPLORE_FORMAT, ...campaign }, null, 2) + '\n');
  return { config: configFile, campaign: campaignFile };
}

export interface CoverageSummary {
  covered: number;
  total: number;
  uncovered: Array<{ kind: string; property: string; reason: string }>;
}

export interface ExploreResults {
  format: typeof EXPLORE_RESULTS_FORMAT;
  seed: number;
  maxSteps: number;
  sequences: Array<SequenceJudgement & { runDir: string }>;
  alarms: ExploreAlarm[];
  /** The alarms grouped into distinct bugs (oracles/explore/findings.ts). */
  findings: ExploreFinding[];
  coverage: CoverageSummary;
  /** `--perturb`: the generated operations that passed their own oracles, perturbed by the four patterns. */
  perturbation?: PerturbationSummary;
}

/**
 * explore's exit code: 1 when an alarm is the controller's (an `environment` alarm shows what kperturb's
 * cluster lacks: it is reported, not counted) or a perturbation plan found a bug; 2 when every sequence
 * failed to run (nothing was explored: a set-up failure, not a clean result); else 0.
 */
export function exploreExitCode(results: Pick<ExploreResults, 'sequences' | 'alarms' | 'perturbation'>): 0 | 1 | 2 {
  const alarms = results.alarms.some((a) => a.class !== 'environment');
  const bugs = results.perturbation?.results.some((r) => r.verdict === 'bug') ?? false;
  if (alarms || bugs) return 1;
  const ranNone = results.sequences.length > 0 && results.sequences.every((s) => s.error && s.steps.every((st) => st.verdict === 'not-run'));
  return ranNone ? 2 : 0;
}

export interface PerturbationSummary {
  /** Plans tested per pattern and sequence (at most). */
  plansPerPattern: number;
  /** The sequences perturbed: every step accepted (or rejected) and no alarm. */
  sequences: string[];
  /** Plans derived from their reference runs (pruned as `plan` prunes), and those tested. */
  planned: number;
  results: Array<{ plan: string; workload: string; pattern: Pattern; verdict: Verdict; alarms: number; runDir: string; planFile?: string }>;
  coverage: PerturbationCoverage;
}

/** Properties x patterns: for each property an accepted step of a perturbed sequence changed, the plans of each pattern tested on such a sequence, and how many found a bug. */
export interface PerturbationCoverage {
  patterns: readonly Pattern[];
  properties: Array<{ property: string; byPattern: Record<Pattern, { tested: number; bugs: number }> }>;
}

/** The sequences `--perturb` takes: they ran to the end, every step passed its own oracles (ok, or rejected input), and nothing alarmed. */
export function passingSequences(judged: readonly SequenceJudgement[]): string[] {
  return judged
    .filter(
      (j) =>
        !j.error && j.alarms.length === 0 && j.steps.some((s) => s.verdict === 'ok') && j.steps.every((s) => s.verdict === 'ok' || s.verdict === 'rejected'),
    )
    .map((j) => j.sequence);
}

/** At most `n` plans of each pattern, spread evenly over the ones planned (in their order: by trigger point in the run). */
export function plansPerPattern(plans: readonly TestPlan[], n: number): TestPlan[] {
  return PATTERNS.flatMap((pattern) => {
    const of = plans.filter((p) => p.spec.pattern === pattern);
    if (of.length <= n) return of;
    return Array.from({ length: n }, (_, i) => of[Math.floor((i * of.length) / n)]!);
  });
}

/** Properties x patterns, from the judged sequences (which properties each one's accepted steps changed) and the perturbed runs' results. */
export function perturbationCoverage(
  judged: readonly SequenceJudgement[],
  results: readonly Pick<PlanResult, 'workload' | 'pattern' | 'verdict'>[],
): PerturbationCoverage {
  const changed = new Map<string, Set<string>>();
  for (const j of judged) changed.set(j.sequence, new Set(j.steps.filter((s) => s.verdict === 'ok').map((s) => s.property)));
  const rows = new Map<string, Record<Pattern, { tested: number; bugs: number }>>();
  const row = (property: string) => {
    let r = rows.get(property);
    if (!r) rows.set(property, (r = Object.fromEntries(PATTERNS.map((p) => [p, { tested: 0, bugs: 0 }])) as Record<Pattern, { tested: number; bugs: number }>));
    return r;
  };
  for (const properties of changed.values()) for (const p of properties) row(p);
  for (const r of results) {
    for (const property of changed.get(r.workload) ?? []) {
      const cell = row(property)[r.pattern];
      cell.tested++;
      if (r.verdict === 'bug') cell.bugs++;
    }
  }
  return { patterns: PATTERNS, properties: [...rows].sort(([a], [b]) => a.localeCompare(b)).map(([property, byPattern]) => ({ property, byPattern })) };
}

/**
 * Coverage after the runs: a property counts when an accepted step changed it or something under
 * it; one whose every step was refused is "rejected every time"; the rest keep generation's reason.
 */
export function runCoverage(campaign: ExploreCampaign, judged: readonly SequenceJudgement[]): CoverageSummary {
  const accepted = new Set<string>();
  const tried = new Set<string>();
  for (const j of judged) {
    for (const s of j.steps) {
      const parts = s.property.split('.');
      for (let n = parts.length; n >= 2; n--) {
        const p = parts.slice(0, n).join('.');
        tried.add(p);
        if (s.verdict !== 'rejected' && s.verdict !== 'not-run') accepted.add(p);
      }
    }
  }
  const uncovered: CoverageSummary['uncovered'] = [];
  let covered = 0;
  let total = 0;
  for (const { kind, properties } of campaign.coverage) {
    for (const p of properties as PropertyCoverage[]) {
      total++;
      if (accepted.has(p.property)) covered++;
      else
        uncovered.push({
          kind,
          property: p.property,
          reason: tried.has(p.property) ? 'rejected every time (or its runs failed)' : (p.uncovered ?? 'its operations did not run'),
        });
    }
  }
  return { covered, total, uncovered };
}

export interface ExploreRunOptions extends CampaignOptions, ExploreOptions {
  /** Also apply each distinct accepted CR from the seed on a fresh cluster and compare (differential oracle). */
  differential?: boolean;
  /** Perturb the sequences that passed their own oracles: plan from their reference runs and test at most this many plans per pattern and sequence. */
  perturb?: number;
  /** Re-run each bug finding's reproducer sequence this many times; a finding not shown by every re-run is `flaky` (absent or 0: no re-runs). */
  confirmRuns?: number;
}

/** Generates, runs every sequence through learn, judges each step, and writes explore/results.json. */
export async function explore(config: ControllerUnderTest, opts: ExploreRunOptions): Promise<{ results: ExploreResults; file: string }> {
  const campaign = generateCampaign(config, opts);
  const layout = new CampaignLayout(opts.out, config.name);
  const dir = join(layout.root, 'explore');
  mkdirSync(dir, { recursive: true });
  writeFileAtomic(join(dir, 'explore.json'), JSON.stringify({ format: EXPLORE_FORMAT, ...campaign }, null, 2) + '\n');
  const steps = campaign.sequences.reduce((n, s) => n + s.steps.length, 0);
  opts.log(
    `explore ${config.name}: ${campaign.sequences.length} sequence(s), ${steps} operation step(s) (seed ${campaign.seed}, up to ${campaign.maxSteps} per sequence)`,
  );
  const sequencesConfig = exploreConfig(config, campaign);
  // A window the sequences' runs sized (quiet-window.ts SizedSettleWindow) is where the oracles' own runs start.
  const window: SizedWindow = { ms: 0 };
  const inner: InnerOptions = { ...opts, sizedWindow: window };
  noteSized(window, await learn(sequenceRunsConfig(sequencesConfig, opts.perturb), exploreLearnOptions(opts)));
  const sized = (c: ControllerUnderTest): ControllerUnderTest => (window.ms > 0 ? withQuietMs(c, window.ms) : c);
  let { runs, judged } = await judgeRuns(sized(config), layout, campaign, inner);
  const stale = staleSequences(runs, window.ms);
  if (stale.length > 0) {
    opts.log(
      `explore ${config.name}: later runs sized the settle window to ${window.ms} ms, past the window ${stale.length} sequence(s) settled on, so their steps may have been judged before the controller acted: they run again on it, and every step is judged again`,
    );
    noteSized(window, await learn(sequenceRunsConfig(sized(sequencesConfig), opts.perturb), { ...exploreLearnOptions(opts), workloads: stale }));
    ({ runs, judged } = await judgeRuns(sized(config), layout, campaign, inner));
  }
  const generated = sized(sequencesConfig);
  config = sized(config);
  const perturbation = opts.perturb ? await perturb(generated, judged, opts.perturb, opts) : undefined;
  const results: ExploreResults = {
    format: EXPLORE_RESULTS_FORMAT,
    seed: campaign.seed,
    maxSteps: campaign.maxSteps,
    sequences: judged.map((j, i) => ({ ...j, runDir: runs[i]!.runDir })),
    alarms: judged.flatMap((j) => j.alarms),
    findings: await confirmFindings(
      config,
      groupExploreFindings(judged, { file: resolve(config.file), seed: campaign.seed, steps: campaign.maxSteps }),
      join(dir, 'confirm'),
      opts,
    ),
    coverage: runCoverage(campaign, judged),
    ...(perturbation ? { perturbation } : {}),
  };
  const file = join(dir, 'results.json');
  writeFileAtomic(file, JSON.stringify(results, null, 2) + '\n');
  return { results, file };
}

/** The largest settle window any of explore's learns sized (SizedSettleWindow), shared by its runs. */
interface SizedWindow {
  ms: number;
}

/** explore's options inside one exploration: its oracle runs note the window their learns sized. */
type InnerOptions = ExploreRunOptions & { sizedWindow?: SizedWindow };

const noteSized = (window: SizedWindow, learned: ReadonlyArray<{ sizedQuietMs?: number }>): void => {
  window.ms = Math.max(window.ms, ...learned.map((s) => s.sizedQuietMs ?? 0));
};

/** Each sequence's run loaded and judged, with the rollback and differential oracles' runs. */
async function judgeRuns(
  config: ControllerUnderTest,
  layout: CampaignLayout,
  campaign: ExploreCampaign,
  opts: InnerOptions,
): Promise<{ runs: Array<SequenceRun & { runDir: string; quietMs: number }>; judged: SequenceJudgement[] }> {
  const runs: Array<SequenceRun & { runDir: string; quietMs: number }> = [];
  for (const seq of campaign.sequences) {
    const runDir = layout.referenceRun(seq.name, 1);
    runs.push({ ...(await loadSequenceRun(runDir, seq)), runDir, quietMs: readRunRecord(join(runDir, RUN_FILES.record)).quietMs ?? config.settle.quietMs });
  }
  const map: FieldMap = new Map();
  const judged = judgeExploration(runs, map);
  await rollbacks(config, layout, runs, judged, map, opts);
  if (opts.differential) await differential(config, layout, runs, judged, opts);
  return { runs, judged };
}

/**
 * The sequences whose run settled on a shorter window than a later run of the exploration sized
 * (`sizedMs`; 0: none sized): a run is sized from its own silences, and percona-server-mongodb-
 * operator's sequence run, its steps' patches cutting its 20 s mongod dials short, grew the window to
 * 10.7 s only, while the rollback run of its step 2, with no patch in the dial, showed 20 s: the steps
 * were judged 10 s before the operator created the Services they alarmed on (4 false alarms).
 */
export function staleSequences(runs: ReadonlyArray<{ sequence: { name: string }; quietMs: number }>, sizedMs: number): string[] {
  return runs.filter((r) => r.quietMs < sizedMs).map((r) => r.sequence.name);
}

/**
 * `--confirm-runs K`: each bug finding's reproducer sequence explored alone K more times, each on
 * fresh clusters (its rollback and differential runs too, as the first exploration had them), under
 * explore/confirm/<finding>-<run>/; a finding whose signature a re-run does not show again is `flaky`
 * (oracles/explore/findings.ts).
 */
async function confirmFindings(config: ControllerUnderTest, findings: ExploreFinding[], dir: string, opts: ExploreRunOptions): Promise<ExploreFinding[]> {
  const k = opts.confirmRuns ?? 0;
  const bugs = findings.filter((f) => f.class === 'bug').length;
  if (k === 0 || bugs === 0) return findings;
  opts.log(`explore ${config.name}: confirming ${bugs} finding(s): each reproducer's sequence explored alone ${k} more time(s)`);
  // The re-runs explore the reproducer as the first exploration did, without perturbing or confirming again.
  const once: ExploreRunOptions = { ...opts, confirmRuns: 0, log: () => undefined };
  delete once.perturb;
  const confirmed: ExploreFinding[] = [];
  for (const [i, f] of findings.entries()) {
    const reruns: Array<{ runDir: string; findings: ExploreFinding[] }> = [];
    for (let r = 1; f.class === 'bug' && r <= k; r++) {
      const out = join(dir, `${i + 1}-${r}`);
      const { results } = await explore(config, { ...once, out, sequences: [f.reproducer.sequence] });
      reruns.push({ runDir: out, findings: results.findings });
    }
    const done = confirmExploreFinding(f, reruns);
    if (done.confirmation) opts.log(`  finding ${i + 1} (${f.summary}): shown again ${done.confirmation.failedAgain} of ${k}`);
    confirmed.push(done);
  }
  return confirmed;
}

/**
 * `--perturb`: each sequence that passed its own oracles is a workload like any other, its reference
 * runs the ones explore recorded; `plan` derives the four patterns' plans from its writes (pruned as
 * usual, written under plans/<sequence>/), and `test` runs at most `n` of each pattern (results under
 * results/, as `kperturb test` writes them, so `kperturb report` shows them).
 */
async function perturb(generated: ControllerUnderTest, judged: readonly SequenceJudgement[], n: number, opts: ExploreRunOptions): Promise<PerturbationSummary> {
  const sequences = passingSequences(judged);
  const summary: PerturbationSummary = { plansPerPattern: n, sequences, planned: 0, results: [], coverage: perturbationCoverage([], []) };
  if (sequences.length === 0) {
    opts.log(`explore ${generated.name}: no sequence passed its own oracles; nothing to perturb`);
    return summary;
  }
  const campaign = { out: opts.out, log: opts.log, ...(opts.cluster ? { cluster: opts.cluster } : {}), ...(opts.signal ? { signal: opts.signal } : {}) };
  const planned = await plan(generated, { ...campaign, workloads: sequences });
  const chosen = planned.flatMap((p) => plansPerPattern(p.plans, n));
  summary.planned = planned.reduce((k, p) => k + p.plans.length, 0);
  opts.log(
    `explore ${generated.name}: perturbing ${sequences.length} sequence(s) that passed their oracles: ${chosen.length} of ${summary.planned} plan(s) (at most ${n} per pattern and sequence)`,
  );
  const results = await test(generated, chosen, campaign);
  summary.results = results.map((r) => ({
    plan: r.plan,
    workload: r.workload,
    pattern: r.pattern,
    verdict: r.verdict,
    alarms: r.alarms.length,
    runDir: r.runDir,
    ...(r.planFile ? { planFile: r.planFile } : {}),
  }));
  summary.coverage = perturbationCoverage(
    judged.filter((j) => sequences.includes(j.sequence)),
    results,
  );
  return summary;
}

/**
 * The rollback oracle's runs (oracles/explore/rollback.ts): for each step that left the controller
 * refusing its input, the system unhealthy or the objects inconsistent, the sequence replayed up to
 * it on a fresh cluster, then the CR before it re-applied; the state after must be the state before.
 * After a refused input the rest of the sequence goes on from the rolled-back CR in that run, and
 * its steps are judged there (the CR goes back to the previous one, as after an API server's refusal).
 */
async function rollbacks(
  config: ControllerUnderTest,
  layout: CampaignLayout,
  runs: ReadonlyArray<SequenceRun & { runDir: string }>,
  judged: SequenceJudgement[],
  map: FieldMap,
  opts: ExploreRunOptions,
): Promise<void> {
  const cases: Array<{ run: number; step: number; why: 'refused' | 'unhealthy' | 'inconsistent'; sequence: ExploreSequence }> = [];
  const targets = exploreTargets(config);
  for (const [i, run] of runs.entries()) {
    const n = run.sequence.steps.length;
    for (const target of rollbackTargets(judged[i]!, run)) {
      const before = stateAfterStep(run.events, target.step - 2, n)?.get(run.crKey);
      const after = stateAfterStep(run.events, target.step - 1, n)?.get(run.crKey);
      if (!before || !after) continue;
      const given = targetOfSeed(targets, run.sequence.seed)?.schema;
      // The schema the sequence was generated from: kube-apiserver's rules of core types applied.
      const schema = given && applyCoreRules(given, builtinV2Definitions(Object.keys(CORE_RULES)));
      const sequence = rollbackSequence({
        sequence: run.sequence,
        step: target.step,
        specBefore: before.spec,
        specAfter: after.spec,
        continueAfter: target.why === 'refused',
        ...(schema ? { schema } : {}),
      });
      cases.push({ run: i, step: target.step, why: target.why, sequence });
    }
  }
  if (cases.length === 0) return;
  opts.log(`explore ${config.name}: ${cases.length} step(s) to roll back, each replayed on a fresh cluster and the CR before it re-applied (rollback oracle)`);
  const maskRules = await runOnce(config, new Map(cases.map((c) => [c.sequence.name, sequenceWorkload(c.sequence, config.settle.timeoutSeconds)])), opts);
  for (const c of cases) {
    const original = runs[c.run]!;
    const judgement = judged[c.run]!;
    const run = await loadSequenceRun(layout.referenceRun(c.sequence.name, 1), c.sequence);
    const step = judgement.steps[c.step - 1]!;
    const crash = rollbackCrash(run, { sequence: original.sequence.name, step: c.step, rollbackRun: c.sequence.name }, judgement.alarms);
    judgement.alarms.push(...crash.alarms);
    if (crash.alarms.length > 0 && step.kind !== 'misoperation') step.verdict = 'alarm';
    if (!crash.compared) {
      step.notes.push(`rollback: not compared: the controller exited in ${c.sequence.name} (the crash oracle judges that)`);
      continue;
    }
    const alarms = rollbackAlarms(
      { sequence: original.sequence.name, step: c.step, why: c.why, crKey: run.crKey, events: run.events, steps: c.sequence.steps.length },
      maskRules,
    );
    if (!alarms) {
      step.notes.push(`rollback: the CR before this step could not be re-applied in ${c.sequence.name}${run.error ? ` (${run.error})` : ''}`);
      continue;
    }
    judgement.alarms.push(...alarms);
    if (alarms.length > 0 && step.kind !== 'misoperation') step.verdict = 'alarm';
    step.notes.push(
      `rollback: the CR before this step re-applied (${c.sequence.name}), ${alarms.length === 0 ? 'the state before it came back' : `${alarms.length} difference(s)`}`,
    );
    if (c.why !== 'refused') continue;
    // The rest of the sequence, judged where it ran on the rolled-back CR; its step k+1 is the rollback itself.
    const rest = judgeSequence(run, map);
    for (let k = c.step + 1; k <= original.sequence.steps.length; k++) {
      const there = rest.steps[k];
      if (there)
        judgement.steps[k - 1] = {
          ...there,
          step: k,
          ranIn: c.sequence.name,
          notes: [...there.notes, `run after the rollback of step ${c.step}, as step ${k + 1} of ${c.sequence.name}`],
        };
    }
    judgement.alarms.push(...rest.alarms.filter((a) => a.step === undefined || a.step > c.step + 1));
  }
}

/** The generation target a sequence's seed belongs to (its CRD version's schema). */
function targetOfSeed(targets: readonly ExploreTarget[], seed: Record<string, unknown>): ExploreTarget | undefined {
  const id = JSON.stringify(seed);
  return targets.find((t) => t.seeds.some((s) => JSON.stringify(s) === id));
}

/**
 * The steps whose CR the differential oracle creates from scratch: accepted ones, not setup steps or
 * misoperations, not input the controller refused, nor steps that ran in a rollback run (the
 * sequence's own run never reached the CR they did).
 */
export function differentialSteps(judgement: SequenceJudgement): StepJudgement[] {
  return judgement.steps.filter(
    (st) => !st.setup && st.kind !== 'misoperation' && !st.rejectedBy && !st.ranIn && (st.verdict === 'ok' || st.verdict === 'alarm'),
  );
}

/**
 * The CR the differential oracle creates at once for step `step` (1-based): what the user wrote, the
 * generated CR after that step (Acto's D_i), not the CR the cluster stored, into which the controller
 * may have written its own defaults (zookeeper-operator fills in every probe field before the step's
 * change; a CR created with the change alone is defaulted otherwise, which is the bug). After a step
 * the API server or the controller refused, the generated CR holds a change the sequence never
 * reached: then the stored CR is the input.
 */
export function differentialInput(
  sequence: ExploreSequence,
  judgement: SequenceJudgement,
  step: number,
  stored: KubeObject | undefined,
): KubeObject | undefined {
  if (!stored) return undefined;
  if (judgement.steps.slice(0, step).some((st) => st.verdict === 'rejected' || st.rejectedBy)) return stored;
  const written = sequence.steps[step - 1]?.cr;
  return written ? ({ ...stored, spec: written.spec } as KubeObject) : stored;
}

/**
 * The differential oracle's runs: each distinct CR a sequence reached by an accepted step (setup
 * steps and misoperations aside) as a workload of its own that creates it with that spec at once,
 * run through learn on a fresh cluster; its end compared with the state after that step. Alarms go
 * to the sequence's judgement.
 */
async function differential(
  config: ControllerUnderTest,
  layout: CampaignLayout,
  runs: ReadonlyArray<SequenceRun & { runDir: string }>,
  judged: SequenceJudgement[],
  opts: ExploreRunOptions,
): Promise<void> {
  const cases: Array<{ name: string; run: number; step: number; workload: Workload }> = [];
  const seen = new Set<string>();
  for (const [i, run] of runs.entries()) {
    seen.add(JSON.stringify(run.sequence.seed.spec ?? null));
    for (const st of differentialSteps(judged[i]!)) {
      const stored = stateAfterStep(run.events, st.step - 1, run.sequence.steps.length)?.get(run.crKey);
      const cr = differentialInput(run.sequence, judged[i]!, st.step, stored);
      const spec = JSON.stringify(cr?.spec ?? null);
      if (!cr || seen.has(spec)) continue;
      seen.add(spec);
      // Created with that spec at once, as a user who wrote it so from the start would (Acto: S0 -> D_i).
      const name = `${run.sequence.name}-diff-${st.step}`;
      const steps: WorkloadStep[] = [
        { apply: { resource: { ...run.sequence.seed, spec: cr.spec } as KubeObject } },
        { settle: { timeoutSeconds: config.settle.timeoutSeconds } },
      ];
      cases.push({ name, run: i, step: st.step, workload: { name, steps } });
    }
  }
  if (cases.length === 0) return;
  opts.log(`explore ${config.name}: ${cases.length} distinct accepted CR(s), each created with its spec at once on a fresh cluster (differential oracle)`);
  const maskRules = await runOnce(config, new Map(cases.map((c) => [c.name, c.workload])), opts);
  const loaded: Array<{ c: (typeof cases)[number]; d: DifferentialCase }> = [];
  for (const c of cases) {
    const run = runs[c.run]!;
    const fresh = await loadSequenceRun(layout.referenceRun(c.name, 1), run.sequence);
    const chained = stateAfterStep(run.events, c.step - 1, run.sequence.steps.length)!;
    loaded.push({
      c,
      d: {
        sequence: run.sequence.name,
        step: c.step,
        crKey: run.crKey,
        chained,
        freshEvents: fresh.events,
        chainedEvents: run.events,
        ...(run.controllerExits ? { chainedExits: run.controllerExits } : {}),
        ...(fresh.controllerExits ? { freshExits: fresh.controllerExits } : {}),
      },
    });
  }
  // Nondeterminism: each case that differs runs once more from scratch; what differs between its two
  // fresh runs is chance, not the input's answer, and is masked for the whole campaign (Acto re-runs too).
  const differing = loaded.filter(({ d }) => differentialAlarms(d, maskRules).length > 0);
  const nondeterministic = new Map<ObjectKey, ObjectMask>();
  if (differing.length > 0) {
    opts.log(
      `explore ${config.name}: ${differing.length} differential case(s) differ; each created once more from scratch to learn what differs between two runs of the same input`,
    );
    await runOnce(config, new Map(differing.map(({ c }) => [`${c.name}-again`, { ...c.workload, name: `${c.name}-again` }])), opts);
    for (const { c, d } of differing) {
      const again = await loadSequenceRun(layout.referenceRun(`${c.name}-again`, 1), runs[c.run]!.sequence);
      if (differentialNotCompared({ freshExits: again.controllerExits ?? [] })) continue;
      nondeterministicFields([d.freshEvents, again.events], d.crKey, nondeterministic);
    }
  }
  for (const { c, d } of loaded) {
    const alarms = differentialAlarms(d, maskRules, nondeterministic);
    judged[c.run]!.alarms.push(...alarms);
    const step = judged[c.run]!.steps[c.step - 1]!;
    if (alarms.length > 0 && step.verdict === 'ok') step.verdict = 'alarm';
    const skipped = differentialNotCompared(d);
    step.notes.push(
      `differential: created with this spec at once (${c.name}), ${skipped ?? (alarms.length === 0 ? 'the same end' : `${alarms.length} difference(s)`)}`,
    );
  }
  const masked = [...nondeterministic].map(([key, m]) => `${key} ${m.whole ? '(whole)' : m.patterns.map((p) => formatPath(p as FieldPath)).join(', ')}`);
  if (masked.length > 0)
    opts.log(`explore ${config.name}: differential: fields that differed between two runs of the same input, not compared: ${masked.join('; ')}`);
}

/** Runs the oracles' own workloads once each through learn (a fresh cluster each); the config's masks for every workload, as the comparisons take them. */
/**
 * How explore learns every run it judges: the sequences' and the rollback and differential runs'.
 * Each records the cluster's Events, which the judge reads for what the cluster said of a step's input
 * (controllerRefusal: a StatefulSet's FailedCreate): the steps after a refused one are judged in their
 * rollback run, and without its Events a pod refused there alarmed as unhealthy (rabbitmq-operator,
 * sequences 2 and 18 of the whole exploration).
 */
export function exploreLearnOptions(opts: Pick<ExploreRunOptions, 'out' | 'log' | 'cluster' | 'signal'>): LearnOptions {
  return {
    out: opts.out,
    log: opts.log,
    recordEvents: true,
    ...(opts.cluster ? { cluster: opts.cluster } : {}),
    ...(opts.signal ? { signal: opts.signal } : {}),
  };
}

async function runOnce(config: ControllerUnderTest, workloads: Map<string, Workload>, opts: InnerOptions): Promise<MaskRule[]> {
  const learned = await learn({ ...config, workloads, referenceRuns: 1 }, { ...exploreLearnOptions(opts), awaitAnswers: false });
  if (opts.sizedWindow) noteSized(opts.sizedWindow, learned);
  return config.masks.filter((m) => m.workload === undefined).map((m) => ({ keyGlob: m.key, paths: m.paths }));
}

async function loadSequenceRun(runDir: string, sequence: ExploreSequence): Promise<SequenceRun> {
  const record = readRunRecord(join(runDir, RUN_FILES.record));
  const traces = await readRunTraces(runDir);
  const events: TraceEvent[] = [];
  for await (const e of mergeTracesBySeq([iterate(traces.controller), iterate(traces.cluster)])) events.push(e);
  let controllerLog = '';
  try {
    controllerLog = readFileSync(join(runDir, RUN_FILES.controllerLog), 'utf8');
  } catch {
    /* no log: the controller never started */
  }
  const error = record.error ?? (record.workloadOutcome.ok ? undefined : record.workloadOutcome.error);
  return { sequence, crKey: crKey(sequence), events, controllerLog, controllerExits: record.controllerExits, ...(error ? { error } : {}) };
}

async function* iterate<T>(items: readonly T[]): AsyncGenerator<T> {
  for (const item of items) yield item;
}
