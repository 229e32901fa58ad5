/**
 * A controller's results.json (<out>/<controller>/results.json, see layout.ts): the test stage
 * merges its verdicts into it after every plan; `kperturb test` reads it back for the workloads that
 * tested nothing. Reading it for reports is src/io/results-file.ts.
 */
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import type { ControllerUnderTest } from '../config/config.js';
import type { TestPlan } from '../model/plan.js';
import {
  RESULTS_FORMAT,
  type NotRunPlan,
  type PlannedWorkload,
  type PlanResult,
  type ResultsFile as ResultsDocument,
  type UntestedWorkload,
} from '../model/results.js';
import type { PruningStats } from '../../planner/index.js';
import { groupFindings, stageThatEmptied, untestedWorkloads } from '../../oracles/findings.js';
import { writeFileAtomic } from '../io/atomic-files.js';
import { CampaignLayout } from './layout.js';
import type { Shard } from './shard.js';

/** One entry per workload and plan in results.json. */
const resultKey = (r: { workload: string; plan: string }) => `${r.workload}/${r.plan}`;

/** The entries of an existing results.json; an unreadable file is replaced. */
function readResultEntries(file: string): PlanResult[] {
  if (!existsSync(file)) return [];
  try {
    const doc = JSON.parse(readFileSync(file, 'utf8')) as Partial<ResultsDocument>;
    return doc.format === RESULTS_FORMAT && Array.isArray(doc.results) ? doc.results : [];
  } catch {
    return [];
  }
}

/**
 * results.json of one test stage: the latest verdict of every plan of the controller. `write`'s
 * results (this test's finished and kept verdicts) replace their plans' entries; the other plans'
 * entries stay (testing one plan keeps the rest), except those of a tested workload that were judged
 * against other reference runs than `inputs` names (a new `learn`: they would mix two campaigns).
 * The file is read again before every write, so that test() calls running at once (the demo's) keep
 * each other's results. `planned`: this test's plans, counted with the other entries.
 */
export class ResultsFile {
  constructor(
    readonly file: string,
    private readonly planned: readonly TestPlan[],
    private readonly inputs: ReadonlyMap<string, readonly string[]>,
    private readonly workloads: readonly PlannedWorkload[],
    private readonly shard?: Shard,
  ) {}

  write(results: PlanResult[], complete: boolean): void {
    const { file, planned, inputs, workloads, shard } = this;
    const fresh = new Map(results.map((r) => [resultKey(r), r]));
    const stillValid = (r: PlanResult) => {
      const references = inputs.get(r.workload);
      return references === undefined || isDeepStrictEqual(r.inputs?.referenceRunsStartedAt, references);
    };
    const merged: PlanResult[] = [];
    for (const r of readResultEntries(file)) {
      const replacement = fresh.get(resultKey(r));
      if (replacement) merged.push(replacement);
      else if (stillValid(r)) merged.push(r);
      fresh.delete(resultKey(r));
    }
    merged.push(...fresh.values());
    const keys = new Set([...merged.map(resultKey), ...planned.map((p) => resultKey({ workload: p.spec.workload, plan: p.metadata.name }))]);
    const have = new Set(merged.map(resultKey));
    const notRun: NotRunPlan[] = complete
      ? []
      : planned
          .filter((p) => !have.has(resultKey({ workload: p.spec.workload, plan: p.metadata.name })))
          .map((p) => ({
            controller: p.spec.controller,
            workload: p.spec.workload,
            plan: p.metadata.name,
            pattern: p.spec.pattern,
            description: p.spec.description,
          }));
    const doc: ResultsDocument = {
      format: RESULTS_FORMAT,
      results: merged,
      complete,
      planned: keys.size,
      ...(notRun.length > 0 ? { notRun } : {}),
      ...(shard ? { shard: { index: shard.index, count: shard.count } } : {}),
      workloads: [...workloads],
      ...untestedAndFindings(workloads, merged),
    };
    // Written after every plan, through a rename, so an interrupted campaign leaves a readable file.
    writeFileAtomic(file, JSON.stringify(doc, null, 2) + '\n');
  }
}

/** results.json's `untested` and `findings` (absent when empty): what `report` leads with, for scripts reading the file. */
function untestedAndFindings(workloads: readonly PlannedWorkload[], results: readonly PlanResult[]): Pick<ResultsDocument, 'untested' | 'findings'> {
  const untested = untestedWorkloads(workloads, results);
  const findings = groupFindings(results);
  return { ...(untested.length > 0 ? { untested } : {}), ...(findings.length > 0 ? { findings } : {}) };
}

/**
 * The controller's workloads that have been planned (their plans directory holds pruning.json), with
 * how many plans the planner kept and, when it kept none, the stage that emptied every pattern.
 */
export function plannedWorkloads(config: ControllerUnderTest, layout: CampaignLayout): PlannedWorkload[] {
  const out: PlannedWorkload[] = [];
  for (const workload of config.workloads.keys()) {
    const dir = layout.plansDir(workload);
    const file = join(dir, 'pruning.json');
    if (!existsSync(file)) continue;
    let pruning: { patterns?: PruningStats[]; referenceRuns?: unknown[] };
    try {
      pruning = JSON.parse(readFileSync(file, 'utf8')) as typeof pruning;
    } catch {
      continue;
    }
    const plans = readdirSync(dir).filter((f) => /\.ya?ml$/.test(f)).length;
    const emptiedBy = plans === 0 ? stageThatEmptied(pruning.patterns ?? []) : undefined;
    out.push({
      controller: config.name,
      workload,
      plans,
      ...(emptiedBy ? { emptiedBy } : {}),
      ...(Array.isArray(pruning.referenceRuns) ? { referenceRuns: pruning.referenceRuns.length } : {}),
    });
  }
  return out;
}

/**
 * The workloads of the controller's campaign in `out` that tested nothing, from its results.json (so
 * plans tested earlier count) and its plans directories: what `kperturb test` reports and exits 3 for.
 */
export function campaignUntested(config: ControllerUnderTest, out: string): UntestedWorkload[] {
  const layout = new CampaignLayout(out, config.name);
  return untestedWorkloads(plannedWorkloads(config, layout), readResultEntries(layout.resultsFile));
}
