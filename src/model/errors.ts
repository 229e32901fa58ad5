/**
 * Errors a user can act on, each with a stable code (shown in messages as `[KP_E_...]` and in the
 * `error.code` of `--json` output) that scripts and issue reports can rely on while the wording
 * changes. The CLI prints their message (no stack trace) and exits with `exitCode`.
 */
export const ERROR_CODES = {
  KP_E_INPUT: 'a command-line option or argument is not what it should be',
  KP_E_CONFIG: 'kperturb.yaml, or a file it names, is not valid',
  KP_E_PLAN: 'a test plan file is not valid',
  KP_E_RESULTS: 'results, a trace or a run directory cannot be read',
  KP_E_KUBECONFIG: 'a kubeconfig cannot be read or used',
  KP_E_SETUP: 'the controller, a cluster or a tool could not be set up or reached',
  KP_E_INTERRUPTED: 'SIGINT or SIGTERM stopped the work',
  KP_E_INTERNAL: 'an unexpected error: a bug in kperturb (KPERTURB_DEBUG=1 shows the stack)',
} as const;
export type ErrorCode = keyof typeof ERROR_CODES;

/** The base of kperturb's errors: a message and a stable code. */
export class KperturbError extends Error {
  readonly exitCode: number = 2;
  constructor(
    message: string,
    readonly code: ErrorCode,
  ) {
    super(message);
    this.name = 'KperturbError';
  }
}

/** Bad input: the file, the path inside it and what was expected. */
export class UserInputError extends KperturbError {
  constructor(
    readonly file: string | undefined,
    readonly at: string | undefined,
    readonly expected: string,
    code: ErrorCode = 'KP_E_INPUT',
  ) {
    super(formatInputError(file, at, expected), code);
    this.name = 'UserInputError';
  }
}

/** A results file, trace or run directory that cannot be read (KP_E_RESULTS). */
export class ResultsError extends UserInputError {
  constructor(file: string | undefined, at: string | undefined, expected: string) {
    super(file, at, expected, 'KP_E_RESULTS');
  }
}

/** A kubeconfig that cannot be read or used (KP_E_KUBECONFIG). */
export class KubeconfigError extends UserInputError {
  constructor(file: string | undefined, at: string | undefined, expected: string) {
    super(file, at, expected, 'KP_E_KUBECONFIG');
  }
}

/** Setup failures (a controller that does not start, a port in use, a server that does not answer). */
export class SetupError extends KperturbError {
  constructor(message: string, code: ErrorCode = 'KP_E_SETUP') {
    super(message, code);
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
export class InterruptedError extends KperturbError {
  constructor(message: string) {
    super(message, 'KP_E_INTERRUPTED');
    this.name = 'InterruptedError';
  }
}

/** The code of any error: its own, or KP_E_INTERNAL for one kperturb did not expect. */
export function errorCode(err: unknown): ErrorCode {
  return err instanceof KperturbError ? err.code : 'KP_E_INTERNAL';
}
