/**
 * Where each tier of the fidelity matrix leaves what its cells showed (by cellKey), so that the real
 * tier can check each cell against the embedded tier's outcome of the same cell: the embedded tier
 * (npm test) writes embedded.json; the real tier reads it if present and writes real.json.
 * KPERTURB_FIDELITY_OUTCOMES overrides the directory.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Outcome } from './_matrix.js';

export const OUTCOMES_DIR = process.env.KPERTURB_FIDELITY_OUTCOMES ?? join(tmpdir(), 'kperturb-fidelity-outcomes');
export const outcomesFile = (cluster: 'embedded' | 'real'): string => join(OUTCOMES_DIR, `${cluster}.json`);

export function readOutcomes(cluster: 'embedded' | 'real'): Record<string, Outcome> | undefined {
  const file = outcomesFile(cluster);
  return existsSync(file) ? (JSON.parse(readFileSync(file, 'utf8')) as Record<string, Outcome>) : undefined;
}

/** Writes what this run's cells showed (merged over an earlier run's, so a filtered run keeps the rest). */
export function writeOutcomes(cluster: 'embedded' | 'real', observed: ReadonlyMap<string, Outcome>): void {
  mkdirSync(OUTCOMES_DIR, { recursive: true });
  writeFileSync(outcomesFile(cluster), JSON.stringify({ ...readOutcomes(cluster), ...Object.fromEntries(observed) }, null, 2));
}
