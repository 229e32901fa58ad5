/**
 * explore's findings as the terminal shows them (`kperturb explore`, and `kperturb demo --all` for the
 * examples it explores): the alarms grouped into findings (oracles/explore/findings.ts).
 */
import type { ExploreFinding } from '../../oracles/explore/findings.js';

const FINDING_LABEL = { bug: 'FINDING', flaky: 'FLAKY', misoperation: 'MISOPERATION', environment: 'ENVIRONMENT' } as const;

/**
 * "5 alarm(s) -> 2 finding(s) (1 bug, 1 environment)", then a line per finding: what it is, how
 * many alarms in how many sequences, its shortest reproducer and the command that runs it alone.
 */
export function exploreFindingLines(alarms: number, findings: readonly ExploreFinding[]): string[] {
  if (alarms === 0) return [];
  const byClass = (['bug', 'flaky', 'misoperation', 'environment'] as const)
    .map((c) => [c, findings.filter((f) => f.class === c).length] as const)
    .filter(([, n]) => n > 0)
    .map(([c, n]) => `${n} ${c}`);
  const lines = [`${alarms} alarm(s) -> ${findings.length} finding(s) (${byClass.join(', ')})`];
  for (const f of findings) {
    const sequences = new Set(f.alarms.map((a) => a.sequence)).size;
    const at = `${f.reproducer.sequence}${f.reproducer.step !== undefined ? ` step ${f.reproducer.step}` : ''}`;
    const c = f.confirmation;
    const confirmed = c ? `; shown again ${c.failedAgain} of ${c.runs}${c.confirmed ? '' : ': flaky'}` : '';
    lines.push(
      `${FINDING_LABEL[f.class]} ${f.summary}: ${f.alarms.length} alarm(s) in ${sequences} sequence(s)${confirmed}; shortest: ${at}: ${f.reproducer.message}${f.command ? ` (again: ${f.command})` : ''}`,
    );
  }
  return lines;
}
