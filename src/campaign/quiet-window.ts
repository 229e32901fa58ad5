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
import { learnedQuietMs, SilenceMeter } from '../../planner/index.js';
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
    const silence = await longestSilence(dir, config);
    if (silence === undefined) return config;
    silences.push(silence);
  }
  const quietMs = learnedQuietMs(silences, config.settle.quietMs);
  if (quietMs === config.settle.quietMs) return config;
  log(
    `${config.name}/${workload}: runs settle after ${quietMs} ms of quiet (the reference runs' controller was never silent longer than ${Math.max(...silences)} ms before acting again; settle.quietMs in kperturb.yaml sets it)`,
  );
  return withQuietMs(config, quietMs);
}

/** The longest silence before a request in a run's controller trace (planner/quiet-window.ts); undefined without a trace. */
export async function longestSilence(runDir: string, config: ControllerUnderTest): Promise<number | undefined> {
  const file = join(runDir, RUN_FILES.controllerTrace);
  if (!existsSync(file)) return undefined;
  const meter = new SilenceMeter(config.settle.quietMs);
  for await (const e of readTrace(file)) meter.add(e);
  return meter.result();
}

export const withQuietMs = (config: ControllerUnderTest, quietMs: number): ControllerUnderTest => ({ ...config, settle: { ...config.settle, quietMs } });
