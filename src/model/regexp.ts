/** Regular-expression helpers shared by the layers (init's repository scan, the oracles' masks and judges). */

/** `s` as a literal inside a regular expression. */
export function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
