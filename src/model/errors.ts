/**
 * Errors a user can act on. The CLI prints their message (no stack trace) and exits with `exitCode`.
 */
export class UserInputError extends Error {
  readonly exitCode = 2;
  constructor(
    readonly file: string | undefined,
    readonly at: string | undefined,
    readonly expected: string,
  ) {
    super(formatInputError(file, at, expected));
    this.name = 'UserInputError';
  }
}

/** Setup failures (a controller that does not start, a port in use): also exit 2. */
export class SetupError extends Error {
  readonly exitCode = 2;
  constructor(message: string) {
    super(message);
    this.name = 'SetupError';
  }
}

function formatInputError(file: string | undefined, at: string | undefined, expected: string): string {
  const where = [file, at ? `at ${at}` : undefined].filter(Boolean).join(' ');
  return where ? `${where}: ${expected}` : expected;
}

/**
 * SIGINT or SIGTERM stopped the work (src/cli/signals.ts): the message says what finished and where
 * it is. The CLI exits 128 + the signal's number (130, 143), as a shell reports a process the signal
 * killed.
 */
export class InterruptedError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'InterruptedError';
  }
}
