/**
 * Finding and reading campaign results for `kperturb report`: a results.json, a run's verdict.json,
 * or a directory searched for them. A campaign that was interrupted still reports what it holds:
 * where a controller's results.json is missing, the verdict.json of each finished test run is read.
 * Every file is validated; a bad one is a UserInputError naming it and the path inside it.
 */
import { existsSync, readdirSync, statSync } from 'node:fs';
import { basename, join, resolve } from 'node:path';
import { ResultsError } from '../model/errors.js';
import { isObject } from '../model/object-key.js';
import { PATTERNS } from '../model/plan.js';
import {
  ORACLE_NAMES,
  RECOVERY_STRATEGIES,
  RESULTS_FORMAT,
  VERDICTS,
  type NotRunPlan,
  type PlannedWorkload,
  type PlanResult,
  type UntestedWorkload,
} from '../model/results.js';
import { untestedWorkloads } from '../../oracles/findings.js';
import { checkFormat, readJsonFile, RUN_FILES } from './run-dir.js';
import { RESULTS_FILE } from './run-files.js';

export interface LoadedResults {
  results: PlanResult[];
  /** The files read. */
  sources: string[];
  /** What a reader should know about them (partial campaigns, unfinished runs, missing shards). */
  notes: string[];
  /** Plans an interrupted campaign was given and did not run (none that has a result in another file). */
  notRun: NotRunPlan[];
  /** Planned workloads that tested nothing, judged over every file read (shards merged): never clean. */
  untested: UntestedWorkload[];
}

/** What mergeResults needs beyond LoadedResults: the file each result came from, and the shards read. */
interface Gathered extends LoadedResults {
  resultFiles: string[];
  shards: Array<{ file: string; controller: string; index: number; count: number }>;
  workloads: PlannedWorkload[];
}

export const DEFAULT_RESULTS_DIR = '.kperturb';
const MAX_DEPTH = 6;

/**
 * Reads the results of one or more targets (results.json, verdict.json or directories: e.g. the
 * output directories of the shards of one campaign) as one report. A plan found twice counts once
 * (merging is idempotent: the later file's result stands); results of one controller and workload
 * judged against different reference runs are refused (they would mix two campaigns); shards that
 * are missing, and plans a shard did not finish, are said in `notes`.
 */
export function loadResults(target: string | readonly string[] = DEFAULT_RESULTS_DIR): LoadedResults {
  const targets = typeof target === 'string' ? [target] : target.length > 0 ? target : [DEFAULT_RESULTS_DIR];
  const gathered: Gathered = { results: [], sources: [], notes: [], notRun: [], untested: [], resultFiles: [], shards: [], workloads: [] };
  for (const t of targets) gatherTarget(t, gathered);
  return mergeResults(gathered);
}

function gatherTarget(target: string, loaded: Gathered): void {
  const path = resolve(target);
  if (!existsSync(path)) {
    throw new ResultsError(
      target,
      undefined,
      target === DEFAULT_RESULTS_DIR
        ? 'a results directory (none here: run `kperturb test` first, or name a results.json)'
        : 'an existing results.json, verdict.json or directory',
    );
  }
  const before = loaded.sources.length;
  if (statSync(path).isDirectory()) {
    searchDirectory(path, 0, loaded);
    if (loaded.sources.length === before)
      throw new ResultsError(target, undefined, 'a directory holding results.json or test runs with verdict.json (found none)');
  } else if (basename(path) === RUN_FILES.verdict) {
    addVerdictFile(path, loaded);
  } else {
    addResultsFile(path, loaded);
  }
}

function addVerdictFile(file: string, loaded: Gathered): void {
  loaded.results.push(validatePlanResult(readJsonFile(file), file, '(top level)'));
  loaded.resultFiles.push(file);
  loaded.sources.push(file);
}

function addResultsFile(file: string, loaded: Gathered): void {
  const { results, shard, notRun, workloads } = readResults(file, loaded.notes);
  loaded.results.push(...results);
  loaded.notRun.push(...notRun);
  loaded.workloads.push(...workloads);
  for (const _ of results) loaded.resultFiles.push(file);
  loaded.sources.push(file);
  const controller = results[0]?.controller;
  if (shard && controller !== undefined) loaded.shards.push({ file, controller, ...shard });
}

function mergeResults(g: Gathered): LoadedResults {
  const byPlan = new Map<string, number>();
  const references = new Map<string, { refs: string; file: string }>();
  const merged: PlanResult[] = [];
  g.results.forEach((r, i) => {
    const file = g.resultFiles[i]!;
    const started = r.inputs?.referenceRunsStartedAt;
    if (started) {
      const campaign = `${r.controller}/${r.workload}`;
      const refs = JSON.stringify(started);
      const seen = references.get(campaign);
      if (!seen) references.set(campaign, { refs, file });
      else if (seen.refs !== refs) {
        throw new ResultsError(
          file,
          undefined,
          `results judged against the same reference runs of ${campaign} as ${seen.file} (these were judged against other reference runs, e.g. from another \`kperturb learn\`: merging them would mix two campaigns)`,
        );
      }
    }
    const key = `${r.controller}/${r.workload}/${r.plan}`;
    const at = byPlan.get(key);
    if (at === undefined) {
      byPlan.set(key, merged.length);
      merged.push(r);
    } else merged[at] = r;
  });
  const notes = [...g.notes, ...missingShards(g.shards)];
  const notRun = new Map<string, NotRunPlan>();
  for (const p of g.notRun) if (!byPlan.has(`${p.controller}/${p.workload}/${p.plan}`)) notRun.set(`${p.controller}/${p.workload}/${p.plan}`, p);
  // Every shard names the same planned workloads: the last word on each stands.
  const workloads = new Map(g.workloads.map((w) => [`${w.controller}/${w.workload}`, w]));
  return { results: merged, sources: g.sources, notes, notRun: [...notRun.values()], untested: untestedWorkloads([...workloads.values()], merged) };
}

/** Per controller: shard indices of its count that no results.json came from, and counts that disagree. */
function missingShards(shards: Gathered['shards']): string[] {
  const notes: string[] = [];
  const byController = new Map<string, Gathered['shards']>();
  for (const s of shards) byController.set(s.controller, [...(byController.get(s.controller) ?? []), s]);
  for (const [controller, list] of byController) {
    const counts = [...new Set(list.map((s) => s.count))];
    if (counts.length > 1) {
      notes.push(
        `${controller}: shards of different splits (${list.map((s) => `${s.index}/${s.count} in ${s.file}`).join(', ')}): some plans may be missing or counted twice`,
      );
      continue;
    }
    const count = counts[0]!;
    const have = new Set(list.map((s) => s.index));
    const missing = Array.from({ length: count }, (_, i) => i).filter((i) => !have.has(i));
    if (missing.length > 0)
      notes.push(
        `${controller}: ${missing.length} of ${count} shards missing (${missing.map((i) => `${i}/${count}`).join(', ')}): their plans have no results here`,
      );
  }
  return notes;
}

export function readResultsFile(file: string, notes: string[] = []): PlanResult[] {
  return readResults(file, notes).results;
}

function readNotRun(value: unknown, file: string): NotRunPlan[] {
  if (value === undefined) return [];
  if (!Array.isArray(value)) throw new ResultsError(file, 'notRun', 'a list of plans not run');
  return value.map((p, i) => {
    if (!isObject(p)) throw new ResultsError(file, `notRun[${i}]`, 'a plan not run (a mapping)');
    for (const k of ['controller', 'workload', 'plan', 'pattern', 'description'])
      if (typeof p[k] !== 'string') throw new ResultsError(file, `notRun[${i}].${k}`, 'a string');
    return {
      controller: p.controller as string,
      workload: p.workload as string,
      plan: p.plan as string,
      pattern: p.pattern as string,
      description: p.description as string,
    };
  });
}

function readWorkloads(value: unknown, file: string): PlannedWorkload[] {
  if (value === undefined) return [];
  if (!Array.isArray(value)) throw new ResultsError(file, 'workloads', 'a list of planned workloads');
  return value.map((w, i) => {
    if (!isObject(w)) throw new ResultsError(file, `workloads[${i}]`, 'a planned workload (a mapping)');
    for (const k of ['controller', 'workload']) if (typeof w[k] !== 'string') throw new ResultsError(file, `workloads[${i}].${k}`, 'a string');
    if (!Number.isInteger(w.plans) || (w.plans as number) < 0) throw new ResultsError(file, `workloads[${i}].plans`, 'a count of plans');
    if (w.emptiedBy !== undefined && typeof w.emptiedBy !== 'string') throw new ResultsError(file, `workloads[${i}].emptiedBy`, 'a pruning stage');
    if (w.referenceRuns !== undefined && !Number.isInteger(w.referenceRuns)) throw new ResultsError(file, `workloads[${i}].referenceRuns`, 'a count');
    return w as unknown as PlannedWorkload;
  });
}

function readResults(
  file: string,
  notes: string[],
): { results: PlanResult[]; notRun: NotRunPlan[]; workloads: PlannedWorkload[]; shard?: { index: number; count: number } } {
  const doc = checkFormat(readJsonFile(file), file, RESULTS_FORMAT);
  if (!Array.isArray(doc.results)) throw new ResultsError(file, 'results', 'a list of plan results');
  const results = doc.results.map((r, i) => validatePlanResult(r, file, `results[${i}]`));
  let shard: { index: number; count: number } | undefined;
  if (doc.shard !== undefined) {
    const sh = doc.shard as { index?: unknown; count?: unknown } | null;
    const ok =
      isObject(sh) &&
      Number.isInteger(sh.index) &&
      Number.isInteger(sh.count) &&
      (sh.count as number) >= 1 &&
      (sh.index as number) >= 0 &&
      (sh.index as number) < (sh.count as number);
    if (!ok) throw new ResultsError(file, 'shard', 'a shard {index, count} with 0 <= index < count');
    shard = { index: sh.index as number, count: sh.count as number };
  }
  if (doc.complete === false) {
    // An interrupted re-run keeps the earlier results of the plans it had not redone.
    const all = typeof doc.planned === 'number' && results.length >= doc.planned;
    notes.push(
      `${file}: the campaign did not finish (${all ? 'every plan has a result, some from an earlier run' : `${results.length}${typeof doc.planned === 'number' ? ` of ${doc.planned}` : ''} plans have results`})`,
    );
  }
  const notRun = doc.complete === false ? readNotRun(doc.notRun, file) : [];
  const workloads = readWorkloads(doc.workloads, file);
  return shard ? { results, notRun, workloads, shard } : { results, notRun, workloads };
}

function searchDirectory(dir: string, depth: number, loaded: Gathered): void {
  const resultsFile = join(dir, RESULTS_FILE);
  if (existsSync(resultsFile)) {
    addResultsFile(resultsFile, loaded);
    return;
  }
  if (existsSync(join(dir, 'test')) && statSync(join(dir, 'test')).isDirectory()) {
    // A controller's directory without results.json: read the verdict of each finished test run.
    const before = loaded.results.length;
    let unfinished = 0;
    for (const runDir of findRunDirs(join(dir, 'test'), 0)) {
      const verdictFile = join(runDir, RUN_FILES.verdict);
      if (!existsSync(verdictFile)) {
        unfinished++;
        continue;
      }
      addVerdictFile(verdictFile, loaded);
    }
    const found = loaded.results.length - before;
    if (found > 0 || unfinished > 0) {
      loaded.notes.push(
        `${dir}: no results.json; reporting the verdict.json of ${found} test run(s)` +
          (unfinished > 0 ? `; ${unfinished} run(s) without a verdict (unfinished) left out` : ''),
      );
    }
    return;
  }
  if (depth >= MAX_DEPTH) return;
  for (const entry of readdirSync(dir, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
    if (entry.isDirectory() && entry.name !== 'node_modules' && !entry.name.startsWith('.git')) searchDirectory(join(dir, entry.name), depth + 1, loaded);
  }
}

function findRunDirs(dir: string, depth: number): string[] {
  if (existsSync(join(dir, RUN_FILES.record)) || existsSync(join(dir, RUN_FILES.verdict))) return [dir];
  if (depth >= 3) return [];
  return readdirSync(dir, { withFileTypes: true })
    .filter((e) => e.isDirectory())
    .sort((a, b) => a.name.localeCompare(b.name))
    .flatMap((e) => findRunDirs(join(dir, e.name), depth + 1));
}

/** Checks one plan result as written by `kperturb test` (results.json entry or verdict.json). */
export function validatePlanResult(value: unknown, file: string, at: string): PlanResult {
  const fail = (path: string, expected: string): never => {
    throw new ResultsError(file, path, expected);
  };
  const sub = (k: string) => (at === '(top level)' ? k : `${at}.${k}`);
  if (!isObject(value)) fail(at, 'a plan result (a mapping)');
  const r = value as Record<string, unknown>;
  for (const k of ['plan', 'controller', 'workload', 'description', 'runDir']) if (typeof r[k] !== 'string') fail(sub(k), 'a string');
  if (!(PATTERNS as readonly unknown[]).includes(r.pattern)) fail(sub('pattern'), `one of ${PATTERNS.join(', ')} (got ${JSON.stringify(r.pattern)})`);
  if (!(VERDICTS as readonly unknown[]).includes(r.verdict))
    fail(sub('verdict'), `one of ${VERDICTS.join(', ')} (got ${JSON.stringify(r.verdict)}; written by another version of kperturb?)`);
  if (typeof r.injected !== 'boolean') fail(sub('injected'), 'true or false');
  if (typeof r.durationMs !== 'number') fail(sub('durationMs'), 'a number');
  if (!Array.isArray(r.alarms)) fail(sub('alarms'), 'a list of alarms');
  (r.alarms as unknown[]).forEach((a, i) => {
    const p = `${sub('alarms')}[${i}]`;
    if (!isObject(a)) fail(p, 'an alarm (a mapping)');
    const alarm = a as Record<string, unknown>;
    if (!(ORACLE_NAMES as readonly unknown[]).includes(alarm.oracle))
      fail(`${p}.oracle`, `one of ${ORACLE_NAMES.join(', ')} (got ${JSON.stringify(alarm.oracle)})`);
    if (typeof alarm.object !== 'string') fail(`${p}.object`, 'an object key');
    if (typeof alarm.message !== 'string') fail(`${p}.message`, 'a string');
    if (!Array.isArray(alarm.reference)) fail(`${p}.reference`, 'a list of reference values');
    if (alarm.field !== undefined && typeof alarm.field !== 'string') fail(`${p}.field`, 'a field path');
  });
  for (const k of ['planFile', 'configFile']) if (r[k] !== undefined && typeof r[k] !== 'string') fail(sub(k), 'a file path');
  for (const k of ['referenceRunDirs'] as const) {
    if (r[k] !== undefined && (!Array.isArray(r[k]) || !(r[k] as unknown[]).every((d) => typeof d === 'string'))) fail(sub(k), 'a list of directories');
  }
  if (r.beyondContract !== undefined && (!Array.isArray(r.beyondContract) || !r.beyondContract.every((d) => typeof d === 'string')))
    fail(sub('beyondContract'), 'a list of reasons (strings)');
  if (r.refusedInput !== undefined && (!Array.isArray(r.refusedInput) || !r.refusedInput.every((d) => typeof d === 'string')))
    fail(sub('refusedInput'), 'a list of refusals (strings)');
  if (r.divergence !== undefined) {
    const d = r.divergence as Record<string, unknown>;
    if (
      !isObject(d) ||
      !['extra', 'missing'].includes(d.kind as string) ||
      !['create', 'update', 'delete'].includes(d.verb as string) ||
      typeof d.object !== 'string' ||
      (d.ownerGone !== undefined && typeof d.ownerGone !== 'string')
    )
      fail(sub('divergence'), 'a divergence {kind: extra or missing, verb: create, update or delete, object, field?, ownerGone?}');
  }
  if (r.size !== undefined) {
    const z = r.size as Record<string, unknown>;
    if (!isObject(z) || !Number.isInteger(z.faults) || !Number.isInteger(z.steps)) fail(sub('size'), 'a plan size {faults, steps} (counts)');
  }
  if (r.reruns !== undefined) {
    const expected = 'the re-runs of a finding {runs: [{runDir, verdict, signature?}], faultFree?: {runDir, alarms, signature?, error?}}';
    const x = r.reruns as Record<string, unknown>;
    if (!isObject(x) || !Array.isArray(x.runs)) fail(sub('reruns'), expected);
    (x.runs as unknown[]).forEach((run, i) => {
      const e = run as Record<string, unknown>;
      if (!isObject(e) || typeof e.runDir !== 'string' || !(VERDICTS as readonly unknown[]).includes(e.verdict)) fail(`${sub('reruns')}.runs[${i}]`, expected);
    });
    const ff = x.faultFree as Record<string, unknown> | undefined;
    if (ff !== undefined && (!isObject(ff) || typeof ff.runDir !== 'string' || typeof ff.alarms !== 'number')) fail(`${sub('reruns')}.faultFree`, expected);
  }
  if (r.recovery !== undefined) {
    const expected = `a recovery run {runDir, before, shown?, attempts: [{strategy: ${RECOVERY_STRATEGIES.join(', ')}, alarms, skipped?}], error?}`;
    const x = r.recovery as Record<string, unknown>;
    if (
      !isObject(x) ||
      typeof x.runDir !== 'string' ||
      typeof x.before !== 'number' ||
      (x.shown !== undefined && typeof x.shown !== 'boolean') ||
      !Array.isArray(x.attempts)
    )
      fail(sub('recovery'), expected);
    (x.attempts as unknown[]).forEach((a, i) => {
      const e = a as Record<string, unknown>;
      if (!isObject(e) || !(RECOVERY_STRATEGIES as readonly unknown[]).includes(e.strategy) || typeof e.alarms !== 'number')
        fail(`${sub('recovery')}.attempts[${i}]`, expected);
    });
  }
  return r as unknown as PlanResult;
}
