/**
 * The runs of explore's rollback oracle (oracles/explore/rollback.ts): a sequence replayed up to a
 * step that left the system refusing its input, unhealthy or inconsistent, then the CR before that
 * step re-applied (a `rollback` step), and, when the controller had refused the step's input, the
 * rest of the sequence on the rolled-back CR (the "the CR goes back to the previous one").
 * Pure: the sequence, the step and the CR's spec before and after it, as the sequence's run left them.
 */
import { isObject } from '../../src/model/object-key.js';
import type { ExploreSequence, ExploreStep } from './generate.js';
import { fillRequired } from './required.js';
import type { SchemaNode } from './schema.js';
import { SeededRandom, mergePatch } from './values.js';

export interface RollbackInput {
  sequence: ExploreSequence;
  /** The 1-based step rolled back. */
  step: number;
  /** The CR's spec before and after that step, as the run left them (defaults the API server added included). */
  specBefore: unknown;
  specAfter: unknown;
  /** Go on with the sequence's later steps after the rollback (the controller refused the step's input). */
  continueAfter: boolean;
  /**
   * The CRD version's schema the sequence was generated from. A later step's patch was made against
   * the CR the sequence reached, where an earlier step may have created its parents with their
   * required properties (a pod template's `containers`); when that step is the one rolled back, the
   * replay creates those parents again, and with the schema they get their required properties again
   * (required.ts), as generation gave them. Without it the patches are replayed as they are.
   */
  schema?: SchemaNode;
}

/** The workload name of the rollback run of a sequence's step. */
export const rollbackName = (sequence: string, step: number): string => `${sequence}-rollback-${step}`;

/** `rollbackName` read back: the sequence and the step rolled back, or undefined for another name. */
export function parseRollbackName(name: string): { sequence: string; step: number } | undefined {
  const m = /^(.*)-rollback-(\d+)$/.exec(name);
  return m ? { sequence: m[1]!, step: Number(m[2]) } : undefined;
}

export function rollbackSequence(input: RollbackInput): ExploreSequence {
  const { sequence, step } = input;
  const kept = sequence.steps.slice(0, step);
  const bad = kept.at(-1);
  if (!bad) throw new Error(`no step ${step} in ${sequence.name}`);
  const previous = step > 1 ? sequence.steps[step - 2]!.cr : sequence.seed;
  const restored = { ...bad.cr, spec: input.specBefore };
  const rollback: ExploreStep = {
    operation: 'rollback',
    kind: 'rollback',
    property: bad.property,
    path: bad.path,
    patch: { spec: mergePatch(input.specAfter, input.specBefore) },
    cr: { ...previous, spec: input.specBefore },
  };
  const steps = [...kept, rollback];
  if (input.continueAfter) {
    // Pattern samples of a refill draw from their own source: the same rollback, the same replay.
    const random = new SeededRandom(step);
    let cr: Record<string, unknown> = restored;
    for (const later of sequence.steps.slice(step)) {
      let next = applyMergePatch(cr, later.patch) as Record<string, unknown>;
      if (input.schema && !later.deleted) next = fillRequired(input.schema, cr, next, later.path, random);
      steps.push({ ...later, patch: mergePatch(cr, next) as Record<string, unknown>, cr: next });
      cr = next;
    }
  }
  return { name: rollbackName(sequence.name, step), seed: sequence.seed, steps };
}

/** RFC 7386 (the embedded cluster's src/cluster/patch.ts has the server's own; the core cannot import it). */
function applyMergePatch(target: unknown, patch: unknown): unknown {
  if (!isObject(patch)) return patch;
  const result: Record<string, unknown> = isObject(target) ? { ...target } : {};
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) delete result[key];
    else result[key] = applyMergePatch(result[key], value);
  }
  return result;
}
