/**
 * The planner: from the traces of the reference runs to test plans, one perturbation each.
 * Pure: no files, processes or clocks; the same traces always give byte-identical plans.
 *
 * Each reference run's merged trace (controller + cluster, in `seq` order) is read once, as a stream,
 * into compact records (trace-analysis.ts); plans come from the last run, and the others only tell
 * which triggers are deterministic, as do the normal-delivery runs of a serialized learn (plans are
 * tested with normal delivery). docs/planner.md describes the rules and the pruning stages.
 */
import { PLAN_API_VERSION, PATTERNS, type Pattern, type TestPlan } from '../src/model/plan.js';
import type { TraceEvent } from '../src/model/trace.js';
import type { StageCount } from './pruning.js';
import { intermediateStateRule } from './rules/intermediate-state.js';
import { errorPathRule } from './rules/error-path.js';
import { staleStateRule } from './rules/stale-state.js';
import { unobservedStateRule } from './rules/unobserved-state.js';
import { managedSystemRule } from './rules/managed-system.js';
import type { PlanningRule } from './rules/rule.js';
import { selectedCandidates } from './selection.js';
import { RunAnalyzer, type CausalityMode, type RunAnalysis } from './trace-analysis.js';
import { Triggers, type TriggerMask } from './triggers.js';

export interface PlannerOptions {
  /** false: no pruning stage at all; every candidate that can be written as a plan becomes one. Default true. */
  prune?: boolean;
  /** Traces without episode markers: a gap this long without controller requests ends a burst. Default 1000. */
  quietMs?: number;
  /** Stale-state plans release the frozen view after this long. Default 5. */
  staleReleaseSeconds?: number;
  /** At most this many changed fields identify an update in a trigger. Default 5. */
  maxTriggerFields?: number;
  /** The user's masks (kperturb.yaml `masks`): masked fields never identify a change; whole-masked objects never trigger. */
  masks?: readonly TriggerMask[];
  /** Which patterns to plan (default all). */
  patterns?: readonly Pattern[];
  /**
   * Keep one plan per group of plans that exercise the same step of the controller (selection.ts,
   * docs/planner.md "Selection"): the default plan set of `kperturb plan`. Plans keep the names they
   * have in the whole set. Default false: every plan pruning leaves.
   */
  select?: boolean;
}

export interface PlannerInput {
  controller: string;
  workload: string;
  /**
   * The merged controller and cluster traces of every reference run, each in `seq` order (an array in
   * any order is sorted). Plans come from the last; the others tell which triggers are deterministic.
   */
  references: ReadonlyArray<Iterable<TraceEvent>>;
  /**
   * Runs of the same workload with normal delivery, when `references` were serialized (`learn
   * --serialize`): plans are tested with normal delivery, so a trigger must fire in each of these
   * too (see Triggers). Plans never come from them, and they make no field nondeterministic.
   */
  normalDelivery?: ReadonlyArray<Iterable<TraceEvent>>;
  options?: PlannerOptions;
}

export interface StreamingPlannerInput extends Omit<PlannerInput, 'references' | 'normalDelivery'> {
  /** As `PlannerInput.references`, streamed (e.g. mergeTracesBySeq over readTrace); each in `seq` order. */
  references: ReadonlyArray<AsyncIterable<TraceEvent> | Iterable<TraceEvent>>;
  /** As `PlannerInput.normalDelivery`, streamed. */
  normalDelivery?: ReadonlyArray<AsyncIterable<TraceEvent> | Iterable<TraceEvent>>;
}

export interface PruningStats {
  pattern: Pattern;
  stages: StageCount[];
}

export interface PlannerOutput {
  plans: TestPlan[];
  stats: PruningStats[];
  /** How writes were attributed to deliveries in the run plans came from. */
  causality: CausalityMode;
  /** Events read, per reference run. */
  events: number[];
  /**
   * The normal-delivery runs: events read per run, and how many distinct triggers fired in every
   * reference run but not in one of them (their candidates dropped at `deterministic`).
   */
  normalDelivery: { events: number[]; unreproducedTriggers: number };
}

export const DEFAULT_RULES: readonly PlanningRule[] = [intermediateStateRule, staleStateRule, unobservedStateRule, errorPathRule, managedSystemRule];

const DEFAULTS = { prune: true, quietMs: 1000, staleReleaseSeconds: 5, maxTriggerFields: 5 };

export function planTests(input: PlannerInput, rules: readonly PlanningRule[] = DEFAULT_RULES): PlannerOutput {
  if (input.references.length === 0) throw new Error('planTests needs at least one reference run');
  const options = input.options ?? {};
  const analyse = (trace: Iterable<TraceEvent>, main: boolean) => {
    const analyzer = newAnalyzer(options, main);
    for (const e of Array.isArray(trace) ? sortBySeq(trace as TraceEvent[]) : trace) analyzer.push(e);
    return analyzer.finish();
  };
  const analyses = input.references.map((trace, i) => analyse(trace, i === input.references.length - 1));
  const normal = (input.normalDelivery ?? []).map((trace) => analyse(trace, false));
  return planFromAnalyses(input, analyses, normal, rules);
}

/** The same as `planTests`, reading each reference run as a stream (one pass, compact records only). */
export async function planTestsStreaming(input: StreamingPlannerInput, rules: readonly PlanningRule[] = DEFAULT_RULES): Promise<PlannerOutput> {
  if (input.references.length === 0) throw new Error('planTestsStreaming needs at least one reference run');
  const options = input.options ?? {};
  const analyse = async (trace: AsyncIterable<TraceEvent> | Iterable<TraceEvent>, main: boolean) => {
    const analyzer = newAnalyzer(options, main);
    if (Symbol.asyncIterator in trace) for await (const e of trace) analyzer.push(e);
    else for (const e of trace) analyzer.push(e);
    return analyzer.finish();
  };
  const analyses: RunAnalysis[] = [];
  for (const [i, trace] of input.references.entries()) analyses.push(await analyse(trace, i === input.references.length - 1));
  const normal: RunAnalysis[] = [];
  for (const trace of input.normalDelivery ?? []) normal.push(await analyse(trace, false));
  return planFromAnalyses(input, analyses, normal, rules);
}

function newAnalyzer(options: PlannerOptions, main: boolean): RunAnalyzer {
  return new RunAnalyzer({ quietMs: options.quietMs ?? DEFAULTS.quietMs, stateHashes: main, detail: main ? 'plans' : 'triggers' });
}

function planFromAnalyses(
  input: Omit<PlannerInput, 'references' | 'normalDelivery'>,
  analyses: RunAnalysis[],
  normal: RunAnalysis[],
  rules: readonly PlanningRule[],
): PlannerOutput {
  const options = input.options ?? {};
  const main = analyses[analyses.length - 1]!;
  const triggerOptions = { maxFields: options.maxTriggerFields ?? DEFAULTS.maxTriggerFields, masks: options.masks ?? [] };
  const triggers = new Triggers(main, analyses.slice(0, -1), triggerOptions, normal);
  const context = {
    main,
    triggers,
    prune: options.prune ?? DEFAULTS.prune,
    staleReleaseSeconds: options.staleReleaseSeconds ?? DEFAULTS.staleReleaseSeconds,
  };
  const wanted = new Set<Pattern>(options.patterns ?? PATTERNS);
  const plans: TestPlan[] = [];
  const stats: PruningStats[] = [];
  for (const rule of rules) {
    if (!wanted.has(rule.pattern)) continue;
    const result = rule.plan(context);
    // Selected plans keep their names in the whole set (names follow trace order either way).
    const kept = options.select && context.prune ? selectedCandidates(result.candidates) : result.candidates.map((_, i) => i);
    const stages = options.select && context.prune ? [...result.stages, { stage: 'selected', plans: kept.length }] : result.stages;
    stats.push({ pattern: rule.pattern, stages });
    for (const i of kept) {
      const c = result.candidates[i]!;
      plans.push({
        apiVersion: PLAN_API_VERSION,
        kind: 'TestPlan',
        metadata: { name: `${rule.namePrefix}-${String(i + 1).padStart(4, '0')}` },
        spec: {
          controller: input.controller,
          workload: input.workload,
          pattern: rule.pattern,
          description: c.description,
          faults: c.faults,
        },
      });
    }
  }
  return {
    plans,
    stats,
    causality: main.causality,
    events: analyses.map((a) => a.events),
    normalDelivery: { events: normal.map((a) => a.events), unreproducedTriggers: triggers.unreproducedTriggers },
  };
}

/** Sorts by seq (stable), so a hand-assembled array may come in any order. */
function sortBySeq(events: TraceEvent[]): TraceEvent[] {
  for (let i = 1; i < events.length; i++) {
    if (events[i]!.seq < events[i - 1]!.seq) return [...events].sort((a, b) => a.seq - b.seq);
  }
  return events;
}

export type { StageCount } from './pruning.js';
export { STAGES, MAX_REFERENCE_RUNS, wantsMoreReferenceRuns } from './pruning.js';
export type { PlanningRule, PlanCandidate, RuleResult, RuleContext } from './rules/rule.js';
export type { RunAnalysis, ChangeRecord, DeliveryRecord, WriteRecord, CausalityMode } from './trace-analysis.js';
export { RunAnalyzer, analyzeRun } from './trace-analysis.js';
export type { TriggerMask } from './triggers.js';
export { intermediateStateRule } from './rules/intermediate-state.js';
export { errorPathRule } from './rules/error-path.js';
export { staleStateRule } from './rules/stale-state.js';
export { unobservedStateRule } from './rules/unobserved-state.js';
export { managedSystemRule, MANAGED_WINDOW_SECONDS } from './rules/managed-system.js';
export {
  learnedQuietMs,
  sizedQuietMs,
  SilenceMeter,
  QUIET_WINDOW_FACTOR,
  QUIET_WINDOW_FLOOR_MS,
  SIZED_WINDOW_FACTOR,
  SpecChangesSinceRequest,
  type SilenceBeforeWrite,
  type UnfinishedSilence,
} from './quiet-window.js';
