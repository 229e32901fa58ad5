/**
 * SIGINT and SIGTERM while `learn`, `test` or `demo` runs. The first one stops the work in order: no
 * new run starts, running controllers are ended (their process groups: src/process/groups.ts), the
 * runs' clusters and proxies are stopped, unfinished run directories are removed, and the stage's
 * InterruptedError says what finished and where it is; kperturb then exits 128 + the signal's number
 * (130 for SIGINT, 143 for SIGTERM), as a shell reports a process the signal killed. A second one
 * exits at once, after SIGKILL to every process group kperturb started.
 */
import { constants } from 'node:os';
import { killAllGroups } from '../process/groups.js';

const HANDLED = ['SIGINT', 'SIGTERM'] as const;

let received: NodeJS.Signals | undefined;

/** The exit code for the first signal received (130, 143), or undefined when none was. */
export function interruptExitCode(): number | undefined {
  return received === undefined ? undefined : 128 + constants.signals[received];
}

/** Installs the handlers (once per process); the signal aborts when the first SIGINT or SIGTERM arrives. */
export function stopOnInterrupt(log: (line: string) => void): AbortSignal {
  const controller = new AbortController();
  const onSignal = (signal: NodeJS.Signals) => {
    if (received !== undefined) {
      log(`kperturb: ${signal} again: stopping at once`);
      killAllGroups();
      process.exit(interruptExitCode());
    }
    received = signal;
    log(`kperturb: ${signal}: stopping (no new run starts; running controllers are being ended); ${signal} again to stop at once`);
    controller.abort();
  };
  for (const signal of HANDLED) process.on(signal, onSignal);
  return controller.signal;
}
