/**
 * Selection (`kperturb plan --select`): one plan per group of a pattern's plans that exercise the
 * same step of the controller (docs/planner.md, "Selection"). Each rule says, per candidate, its
 * group and its rank (lower first); the kept plan of a group is the one with the lowest rank, the
 * first in trace order among equals. `plan` without --select writes every plan.
 */
import type { PlanCandidate } from './rules/rule.js';

/** Lexicographic order of two ranks; a missing rank is []. */
function compareRanks(a: readonly number[] = [], b: readonly number[] = []): number {
  for (let i = 0; i < Math.max(a.length, b.length); i++) {
    const d = (a[i] ?? 0) - (b[i] ?? 0);
    if (d !== 0) return d;
  }
  return 0;
}

/**
 * The positions (ascending, so in trace order) of the candidates the default plan set keeps: per
 * group, the one with the lowest rank. A candidate without a group is a group of its own.
 */
export function selectedCandidates(candidates: readonly PlanCandidate[]): number[] {
  const best = new Map<string, number>();
  candidates.forEach((c, i) => {
    const group = c.group ?? `#${i}`;
    const kept = best.get(group);
    if (kept === undefined || compareRanks(c.rank, candidates[kept]!.rank) < 0) best.set(group, i);
  });
  return [...best.values()].sort((a, b) => a - b);
}
