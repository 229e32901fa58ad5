/**
 * Runs a run's parts (./run-parts.ts) in order, as controller-runtime's manager runs its Runnables:
 * each part starts once the one before it has; a part whose start began is stopped, in the reverse
 * order, whatever happens after it (an error, the abort signal). It also times the run's phases
 * (`RunRecord.phasesMs`: each phase ends where the next begins) and makes waits interruptible.
 */
import type { RunPhase, RunRecord } from '../model/results.js';
import { InterruptedError } from '../model/errors.js';

/** One part of a run: something started for it and stopped after it. */
export interface RunPart {
  start(): Promise<void> | void;
  /**
   * Stops what it started, best effort (an error is ignored: the rest still stops). Called even when
   * its start failed part way, so it stops only what exists.
   */
  stop?(): Promise<void> | void;
}

export class RunManager {
  private readonly stops: Array<() => Promise<void> | void> = [];
  private readonly lastStops: Array<() => Promise<void> | void> = [];
  readonly phasesMs: NonNullable<RunRecord['phasesMs']> = {};
  private phaseStart = Date.now();

  constructor(private readonly signal: AbortSignal | undefined) {}

  /**
   * Starts `part` (unless the run is aborted) and keeps it to stop. `stopLast`: stopped after every
   * other part, whenever it started (a plan's faults: a fault never injected is recorded once all is
   * down, and nothing it still holds is released to a running controller).
   */
  async start<P extends RunPart>(part: P, options: { stopLast?: boolean } = {}): Promise<P> {
    this.signal?.throwIfAborted();
    if (part.stop) (options.stopLast ? this.lastStops : this.stops).push(() => part.stop!());
    await part.start();
    return part;
  }

  /** Stops every started part, the last started first, then the `stopLast` ones; never throws. */
  async stopAll(): Promise<void> {
    const order = [...this.stops.splice(0).reverse(), ...this.lastStops.splice(0).reverse()];
    for (const stop of order) {
      try {
        await stop();
      } catch {
        /* best effort: keep tearing down */
      }
    }
  }

  /** Ends `phase` now: the time since the last phase ended is counted to it. */
  endPhase(phase: RunPhase): void {
    const now = Date.now();
    this.phasesMs[phase] = (this.phasesMs[phase] ?? 0) + now - this.phaseStart;
    this.phaseStart = now;
  }

  /** Counts `ms` to `phase` apart from the phases' sequence (a fault's restart, inside `settle`). */
  addToPhase(phase: RunPhase, ms: number): void {
    this.phasesMs[phase] = (this.phasesMs[phase] ?? 0) + ms;
  }

  /** `promise`, unless the run is aborted first: then InterruptedError at once (the promise goes on, unobserved). */
  interruptible<T>(promise: Promise<T>): Promise<T> {
    return unlessAborted(promise, this.signal);
  }

  throwIfAborted(): void {
    this.signal?.throwIfAborted();
  }
}

function unlessAborted<T>(promise: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (!signal) return promise;
  promise.catch(() => undefined);
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(new InterruptedError('interrupted'));
    if (signal.aborted) return onAbort();
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}
