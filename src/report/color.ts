/**
 * Colour for terminal output, the way command-line tools agree on it: only on a terminal, never
 * when NO_COLOR is set to anything (no-color.org) or TERM is `dumb`, forced by FORCE_COLOR (1-3; 0
 * turns it off), and `--no-color` wins over all of them. Off, every paint is the identity, so text
 * written to files, pipes and CI logs is byte for byte what it was.
 */
export interface Palette {
  readonly enabled: boolean;
  /** Bugs, failures. */
  bad(text: string): string;
  /** Flaky, not tested: needs a look, is not a bug. */
  warn(text: string): string;
  good(text: string): string;
  bold(text: string): string;
}

const paint = (open: number, close: number) => (text: string) => (text === '' ? text : `\x1b[${open}m${text}\x1b[${close}m`);

export const PLAIN: Palette = { enabled: false, bad: (s) => s, warn: (s) => s, good: (s) => s, bold: (s) => s };
export const COLOURED: Palette = { enabled: true, bad: paint(31, 39), warn: paint(33, 39), good: paint(32, 39), bold: paint(1, 22) };

/** Whether to colour what goes to `stream`; `flag` is false for `--no-color`. */
export function colourWanted(stream: { isTTY?: boolean }, env: NodeJS.ProcessEnv = process.env, flag = true): boolean {
  if (!flag) return false;
  if (env.NO_COLOR !== undefined && env.NO_COLOR !== '') return false;
  const forced = env.FORCE_COLOR;
  if (forced !== undefined && forced !== '') return forced !== '0' && forced !== 'false';
  return stream.isTTY === true && env.TERM !== 'dumb';
}

export function paletteFor(stream: { isTTY?: boolean }, env: NodeJS.ProcessEnv = process.env, flag = true): Palette {
  return colourWanted(stream, env, flag) ? COLOURED : PLAIN;
}

// eslint-disable-next-line no-control-regex
const SGR = /\x1b\[[0-9;]*m/g;

/** The length of `text` as a terminal shows it (colour codes take no columns). */
export function visibleLength(text: string): number {
  return text.replace(SGR, '').length;
}
