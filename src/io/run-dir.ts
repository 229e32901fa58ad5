/**
 * Reading run directories back (see src/model/results.ts for what one holds), for the oracles
 * (reference runs, the health inputs of a test run) and the reports. Every file is validated: a
 * truncated, hand-edited or foreign file is a UserInputError naming the file and what is wrong.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ResultsError } from '../model/errors.js';
import { isObject } from '../model/object-key.js';
import { END_STATE_FORMAT, RUN_FORMAT, type EndState, type RunArtifacts, type RunRecord } from '../model/results.js';
import { readTrace, readTraceAll } from './trace-io.js';
import type { ClusterChangeEvent, TraceEvent } from '../model/trace.js';
import { ControllerActivitySummarizer } from '../../oracles/controller-activity.js';
import { mergeTracesBySeq } from '../model/trace-merge.js';

import { RUN_FILES } from './run-files.js';

export { RUN_FILES };

/** Parses a JSON file; a missing, empty or cut-off file is reported as such. */
export function readJsonFile(file: string): unknown {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    throw new ResultsError(file, undefined, code === 'ENOENT' ? 'an existing file (not found)' : `a readable file (${code})`);
  }
  if (text.trim() === '') throw new ResultsError(file, undefined, 'a JSON document (the file is empty: was the run interrupted?)');
  try {
    return JSON.parse(text) as unknown;
  } catch (err) {
    const detail = err instanceof Error ? err.message : String(err);
    throw new ResultsError(file, undefined, `a complete JSON document (${detail}; the file may be truncated or hand-edited)`);
  }
}

/** Checks the `format` field every kperturb file starts with. */
export function checkFormat(doc: unknown, file: string, format: string): Record<string, unknown> {
  if (!isObject(doc)) throw new ResultsError(file, '(top level)', `a JSON object with "format": "${format}"`);
  if (doc.format !== format) {
    throw new ResultsError(file, 'format', `"${format}" (got ${JSON.stringify(doc.format)}: written by another version of kperturb, or not a kperturb file)`);
  }
  return doc;
}

export function readRunRecord(file: string): RunRecord {
  const doc = checkFormat(readJsonFile(file), file, RUN_FORMAT);
  const fail = (path: string, expected: string): never => {
    throw new ResultsError(file, path, expected);
  };
  for (const f of ['controller', 'workload', 'startedAt'] as const) if (typeof doc[f] !== 'string') fail(f, 'a string');
  if (typeof doc.durationMs !== 'number') fail('durationMs', 'a number');
  if (typeof doc.settled !== 'boolean') fail('settled', 'true or false');
  if (!isObject(doc.workloadOutcome) || typeof doc.workloadOutcome.ok !== 'boolean') fail('workloadOutcome.ok', 'true or false');
  if (!Array.isArray(doc.controllerExits)) fail('controllerExits', 'a list');
  (doc.controllerExits as unknown[]).forEach((e, i) => {
    if (!isObject(e) || typeof e.incarnation !== 'number' || typeof e.expected !== 'boolean') {
      fail(`controllerExits[${i}]`, 'an exit {incarnation, code, signal, expected}');
    }
  });
  if (doc.injected !== undefined && typeof doc.injected !== 'boolean') fail('injected', 'true or false');
  return doc as unknown as RunRecord;
}

export function readEndState(file: string): EndState {
  const doc = checkFormat(readJsonFile(file), file, END_STATE_FORMAT);
  if (!isObject(doc.objects)) throw new ResultsError(file, 'objects', 'a mapping from object key to object');
  for (const [key, obj] of Object.entries(doc.objects)) {
    if (!isObject(obj)) throw new ResultsError(file, `objects["${key}"]`, 'an object');
  }
  return doc as unknown as EndState;
}

export interface RunTraces {
  controller: TraceEvent[];
  cluster: TraceEvent[];
}

/** Both traces of a run; a run without a controller trace (setup failed early) has an empty one. */
export async function readRunTraces(dir: string): Promise<RunTraces> {
  const controllerFile = join(dir, RUN_FILES.controllerTrace);
  const clusterFile = join(dir, RUN_FILES.clusterTrace);
  return {
    controller: existsSync(controllerFile) ? await readTraceAll(controllerFile) : [],
    cluster: await readTraceAll(clusterFile),
  };
}

/** The events of a cluster trace the health inputs need (faults, Pod changes), each remembered in `seen`. */
async function* healthEventsOf(events: AsyncIterable<TraceEvent>, seen: WeakSet<TraceEvent>): AsyncGenerator<TraceEvent> {
  for await (const e of events) {
    if (e.type !== 'fault' && !(e.type === 'cluster-change' && e.key.startsWith('Pod/'))) continue;
    seen.add(e);
    yield e;
  }
}

/** The inputs of the health and liveness oracles that executeRun does not return (the trace is streamed). */
export async function loadHealthInputs(
  dir: string,
  record: RunRecord,
): Promise<Pick<RunArtifacts, 'controllerLog' | 'controllerExits' | 'controllerActivity' | 'settled'>> {
  const logFile = join(dir, RUN_FILES.controllerLog);
  const traceFile = join(dir, RUN_FILES.controllerTrace);
  let activity: ControllerActivitySummarizer | undefined;
  if (existsSync(traceFile)) {
    activity = new ControllerActivitySummarizer();
    // The managed-system faults (a claim kept Pending, a pod crash-looping, a node out ...) are
    // recorded in the cluster trace, and so are the nodes pods run on: the summary needs them beside
    // the controller's requests, in seq order.
    const clusterFile = join(dir, RUN_FILES.clusterTrace);
    const fromCluster = new WeakSet<TraceEvent>();
    const streams = [readTrace(traceFile), ...(existsSync(clusterFile) ? [healthEventsOf(readTrace(clusterFile), fromCluster)] : [])];
    for await (const e of mergeTracesBySeq(streams)) {
      if (fromCluster.has(e)) activity.addClusterEvent(e);
      else activity.add(e);
    }
  }
  return {
    controllerLog: existsSync(logFile) ? readFileSync(logFile, 'utf8') : '',
    controllerExits: record.controllerExits,
    settled: record.settled,
    ...(activity ? { controllerActivity: activity.result() } : {}),
  };
}

export interface LoadedRun {
  dir: string;
  record: RunRecord;
  artifacts: RunArtifacts;
}

/** What the oracles need of a finished run directory, validated (traces streamed, not kept). */
export async function loadRunDir(dir: string): Promise<LoadedRun> {
  if (!existsSync(join(dir, RUN_FILES.record))) {
    throw new ResultsError(dir, undefined, `a kperturb run directory (no ${RUN_FILES.record} in it)`);
  }
  const record = readRunRecord(join(dir, RUN_FILES.record));
  const endState = readEndState(join(dir, RUN_FILES.endState));
  const clusterChanges: ClusterChangeEvent[] = [];
  for await (const e of readTrace(join(dir, RUN_FILES.clusterTrace))) if (e.type === 'cluster-change') clusterChanges.push(e);
  const health = await loadHealthInputs(dir, record);
  return { dir, record, artifacts: { endState: endState.objects, clusterChanges, ...health } };
}
