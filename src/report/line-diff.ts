/** A line diff (longest common subsequence) for showing two versions of an object side by side. */

export interface DiffLine {
  op: ' ' | '-' | '+';
  text: string;
}

/** Inputs longer than this many lines (each) are shown as removed + added, without alignment. */
const MAX_LINES = 3000;

export function diffLines(before: readonly string[], after: readonly string[]): DiffLine[] {
  if (before.length > MAX_LINES || after.length > MAX_LINES) {
    return [...before.map((text) => ({ op: '-' as const, text })), ...after.map((text) => ({ op: '+' as const, text }))];
  }
  const n = before.length;
  const m = after.length;
  // lcs[i][j]: length of the LCS of before[i..] and after[j..]
  const lcs: Uint32Array[] = Array.from({ length: n + 1 }, () => new Uint32Array(m + 1));
  for (let i = n - 1; i >= 0; i--) {
    for (let j = m - 1; j >= 0; j--) {
      lcs[i]![j] = before[i] === after[j] ? lcs[i + 1]![j + 1]! + 1 : Math.max(lcs[i + 1]![j]!, lcs[i]![j + 1]!);
    }
  }
  const out: DiffLine[] = [];
  let i = 0;
  let j = 0;
  while (i < n && j < m) {
    if (before[i] === after[j]) {
      out.push({ op: ' ', text: before[i]! });
      i++;
      j++;
    } else if (lcs[i + 1]![j]! >= lcs[i]![j + 1]!) out.push({ op: '-', text: before[i++]! });
    else out.push({ op: '+', text: after[j++]! });
  }
  while (i < n) out.push({ op: '-', text: before[i++]! });
  while (j < m) out.push({ op: '+', text: after[j++]! });
  return out;
}
