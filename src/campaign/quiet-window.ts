/**
 * The quiet window a controller's runs settle with when kperturb.yaml sets no `settle.quietMs`:
 * learned from its runs' controller traces (planner/quiet-window.ts), by learn for each reference run
 * after the first and by the test stage for its plans.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { ControllerUnderTest } from '../config/config.js';
import { readTrace } from '../io/trace-io.js';
import { RUN_FILES } from '../io/run-files.js';
import { learnedQuietMs, SilenceMeter, type SilenceBeforeWrite } from '../../planner/index.js';
import type { Log } from './options.js';

/**
 * The configuration a workload's test runs use: with no `settle.quietMs` in kperturb.yaml, the quiet
 * window learned from its reference runs' controller traces (planner/quiet-window.ts), so that a
 * controller that never stays silent long before acting again does not make every plan wait the
 * default second at each settle.
 */
export async function settleConfig(config: ControllerUnderTest, workload: string, referenceDirs: readonly string[], log: Log): Promise<ControllerUnderTest> {
  if (config.settle.quietMsGiven !== false || referenceDirs.length === 0) return config;
  const silences: number[] = [];
  for (const dir of referenceDirs) {
    const silence = await runSilence(dir, config);
    if (silence === undefined) return config;
    silences.push(silence.longest);
  }
  const quietMs = learnedQuietMs(silences, config.settle.quietMs);
  if (quietMs === config.settle.quietMs) return config;
  log(
    `${config.name}/${workload}: runs settle after ${quietMs} ms of quiet (the reference runs' controller was never silent longer than ${Math.max(...silences)} ms before acting again; settle.quietMs in kperturb.yaml sets it)`,
  );
  return withQuietMs(config, quietMs);
}

/** What a run's controller trace shows of its silences (planner/quiet-window.ts `SilenceMeter`), read once. */
export interface RunSilence {
  /** The run directory, as the warning names it. */
  dir: string;
  /** The longest silence before a request (what the learned window is made of). */
  longest: number;
  /** The longest silence past the window that ended in a write (what `settleWindowWarning` warns of). */
  pastWindow: SilenceBeforeWrite | undefined;
}

/** The silences of the controller trace in `runDir` (named `dir`, where learn commits it); undefined without a trace. */
export async function runSilence(runDir: string, config: ControllerUnderTest, dir = runDir): Promise<RunSilence | undefined> {
  const file = join(runDir, RUN_FILES.controllerTrace);
  if (!existsSync(file)) return undefined;
  const meter = new SilenceMeter(config.settle.quietMs);
  for await (const e of readTrace(file)) meter.add(e);
  return { dir, longest: meter.result(), pastWindow: meter.pastWindow() };
}

/** The silences of several runs, skipping those without a trace. */
export async function runSilences(config: ControllerUnderTest, dirs: readonly string[]): Promise<RunSilence[]> {
  const out: RunSilence[] = [];
  for (const dir of dirs) {
    const s = await runSilence(dir, config);
    if (s) out.push(s);
  }
  return out;
}

export const withQuietMs = (config: ControllerUnderTest, quietMs: number): ControllerUnderTest => ({ ...config, settle: { ...config.settle, quietMs } });

/**
 * A warning when a workload's reference runs show the configured quiet window (settle.quietMs, or the
 * default) too short: the controller was silent that long, with nothing new shown to it, and then
 * wrote (a requeue after a delay, a slow reconcile). A run can settle in such a silence and read its
 * end state before that write, and learning only ever shortens the window.
 */
export function settleWindowWarning(config: ControllerUnderTest, runs: readonly RunSilence[]): string | undefined {
  let worst: { dir: string; silence: SilenceBeforeWrite } | undefined;
  for (const { dir, pastWindow: silence } of runs) if (silence && silence.ms > (worst?.silence.ms ?? -1)) worst = { dir, silence };
  if (!worst) return undefined;
  const { ms, request } = worst.silence;
  const window = config.settle.quietMsGiven === false ? `the default ${config.settle.quietMs} ms` : `${config.settle.quietMs} ms`;
  return `kperturb: warning: ${config.file} at settle.quietMs: a quiet window longer than the controller's pauses (got ${window}): in ${worst.dir} it was silent for ${ms} ms, nothing new shown to it, and then sent ${request.verb} ${request.key ?? request.path}, so a run can settle and read its end state before such a write; set settle.quietMs above ${ms}`;
}
