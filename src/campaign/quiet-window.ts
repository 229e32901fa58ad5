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
import { learnedQuietMs, SilenceMeter, sizedQuietMs, type SilenceBeforeWrite, type UnfinishedSilence } from '../../planner/index.js';
import type { Log } from './options.js';
import type { RunRecord } from '../model/results.js';

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
  /** The silence the run ended in while the controller let spec changes go by without a request (what `settleWindowWarning` warns of when no silence ended in a write). */
  unfinished?: UnfinishedSilence | undefined;
}

/** The silences of the controller trace in `runDir` (named `dir`, where learn commits it); undefined without a trace. */
export async function runSilence(runDir: string, config: ControllerUnderTest, dir = runDir): Promise<RunSilence | undefined> {
  const file = join(runDir, RUN_FILES.controllerTrace);
  if (!existsSync(file)) return undefined;
  const meter = new SilenceMeter(config.settle.quietMs);
  for await (const e of readTrace(file)) meter.add(e);
  return { dir, longest: meter.result(), pastWindow: meter.pastWindow(), unfinished: meter.unfinished() };
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

/** What the controller was shown in a silence that ended in a write, as the messages say it. */
const shownInSilence = (silence: SilenceBeforeWrite): string =>
  silence.unanswered === undefined
    ? 'nothing new shown to it'
    : `from the first of ${silence.unanswered} changes of a custom resource's spec it let go by (busy)`;

export const withQuietMs = (config: ControllerUnderTest, quietMs: number): ControllerUnderTest => ({ ...config, settle: { ...config.settle, quietMs } });

/**
 * A warning when a workload's reference runs show the configured quiet window (settle.quietMs, or the
 * default) too short: the controller was silent that long, with nothing new shown to it, and then
 * wrote (a requeue after a delay, a slow reconcile). A run can settle in such a silence and read its
 * end state before that write, and learning only ever shortens the window.
 */
export function settleWindowWarning(config: ControllerUnderTest, runs: readonly RunSilence[], sized = false): string | undefined {
  let worst: { dir: string; silence: SilenceBeforeWrite } | undefined;
  for (const { dir, pastWindow: silence } of runs) if (silence && silence.ms > (worst?.silence.ms ?? -1)) worst = { dir, silence };
  const window = sized
    ? `${config.settle.quietMs} ms, sized from the runs`
    : config.settle.quietMsGiven === false
      ? `the default ${config.settle.quietMs} ms`
      : `${config.settle.quietMs} ms`;
  if (!worst) return unfinishedWarning(config, runs, window);
  const { ms, request } = worst.silence;
  return `kperturb: warning: ${config.file} at settle.quietMs: a quiet window longer than the controller's pauses (got ${window}): in ${worst.dir} it was silent for ${ms} ms, ${shownInSilence(worst.silence)}, and then sent ${request.verb} ${request.key ?? request.path}, so a run can settle and read its end state before such a write; set settle.quietMs above ${ms}`;
}

/**
 * The warning for a run that ended while the controller let changes of a custom resource's spec go by
 * without a request, for longer than the window (planner/quiet-window.ts UnfinishedSilence): it was
 * still busy, and the steps were judged before it acted, or it is stuck for good. Nothing is sized
 * from it: a stuck controller's runs would only wait longer.
 */
function unfinishedWarning(config: ControllerUnderTest, runs: readonly RunSilence[], window: string): string | undefined {
  let worst: { dir: string; silence: UnfinishedSilence } | undefined;
  for (const { dir, unfinished: silence } of runs)
    if (silence && silence.ms >= config.settle.quietMs && silence.ms > (worst?.silence.ms ?? -1)) worst = { dir, silence };
  if (!worst) return undefined;
  const { ms, changes } = worst.silence;
  return `kperturb: warning: ${config.file} at settle.quietMs: in ${worst.dir} the controller sent nothing for the last ${ms} ms of the run, though ${changes} changes of a custom resource's spec were shown to it (window: ${window}). If it was still busy (a dial to an application no kperturb cluster runs waits for its timeout, silent), its steps were judged before it acted on them: set settle.quietMs above the longest such wait; if it is stuck (a bug), nothing to do`;
}

/**
 * learn's window when kperturb.yaml sets no `settle.quietMs` and a run shows the window it settled on
 * too short (silent at least that long, nothing new shown to it, then a write): from then on runs
 * settle on a window sized from that silence (sizedQuietMs), and the run that showed it is run again
 * on it, since its own settles could end inside such a silence and its end state be read before the
 * write. Shared by the workloads of one learn: they run the same controller.
 */
export class SizedSettleWindow {
  /** The sized window, once a run showed the window too short. */
  ms: number | undefined;
  /**
   * Do runs wait, once settled, for a controller that let its custom resource's spec changes go by
   * without a request (RunOptions.awaitAnswer)? The wait shows a busy controller's whole silence, and
   * `grow` sizes the window from it; a stuck one waits to the settle timeout, once: later runs do not.
   */
  awaitsAnswers: boolean;

  constructor(private readonly config: ControllerUnderTest) {
    this.awaitsAnswers = config.settle.quietMsGiven === false;
  }

  /** For a run's outcome (returned as is): a wait for the controller's next request that ended at the settle timeout stops the waits of later runs. */
  awaited(dir: string, log: Log): <T extends { record: Pick<RunRecord, 'awaitedAnswer'> }>(outcome: T) => T {
    return (outcome) => {
      const awaited = outcome.record.awaitedAnswer;
      if (awaited && !awaited.answered && this.awaitsAnswers) {
        this.awaitsAnswers = false;
        log(
          `  in ${dir} the controller sent nothing for ${awaited.silentMs} ms, to the settle timeout, though changes of its custom resource were shown to it: stuck, not busy; later runs do not wait for it`,
        );
      }
      return outcome;
    };
  }

  /** The window a run settles on: the sized one, else what learn would use. */
  window(otherwise: number): number {
    return this.ms ?? otherwise;
  }

  /** After a run that settled on `usedMs` (its silences measured against it): true when it sized the window from them. */
  grow(silence: RunSilence | undefined, usedMs: number, log: Log): boolean {
    const past = silence?.pastWindow;
    if (this.config.settle.quietMsGiven !== false || !past || past.ms < usedMs) return false;
    const sized = sizedQuietMs(past.ms, this.config.settle.timeoutSeconds * 1000);
    if (sized <= usedMs) return false;
    this.ms = sized;
    log(
      `  in ${silence!.dir} the controller was silent for ${past.ms} ms, ${shownInSilence(past)}, and then sent ${past.request.verb} ${past.request.key ?? past.request.path}: longer than the ${usedMs} ms window it settled on, so runs settle after ${sized} ms of quiet from now on (settle.quietMs in kperturb.yaml sets it), and this run is run again`,
    );
    return true;
  }
}
