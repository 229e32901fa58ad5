/**
 * How long a test waits for something that should happen before it calls it a hang: a bound that
 * fails a stuck test instead of blocking the suite, never a timing under test. CI runs the suite on
 * a 2-core machine beside other work (load averages of 10-30 were seen), where a CLI takes many
 * times longer to start than on an idle one; so a bound given for an unloaded machine grows with
 * the load average per core when it is set (at least 1x). Benchmarks, not tests, measure speed.
 */
import { availableParallelism, loadavg } from 'node:os';

/** The machine's run-queue length per core over the last minute, at least 1. */
export function loadFactor(): number {
  return Math.max(1, loadavg()[0]! / availableParallelism());
}

/** `ms`, a bound for an idle machine, scaled by the load now (`loadFactor`). */
export function hangBound(ms: number): number {
  return Math.round(ms * loadFactor());
}
