/**
 * `kperturb diff REF_RUN TEST_RUN`: the end-state and update-summary differences between any two
 * run directories, with the same built-in masks and semantics as the oracles (nothing is learned
 * from a single reference).
 */
import { compareRuns } from '../../oracles/index.js';
import type { Alarm } from '../model/results.js';
import { loadRunDir } from '../io/run-dir.js';

export const DIFF_FORMAT = 'kperturb.dev/diff/v1';

export interface RunDiff {
  format: typeof DIFF_FORMAT;
  reference: string;
  test: string;
  endState: Alarm[];
  updateSummary: Alarm[];
}

export async function diffRuns(referenceDir: string, testDir: string): Promise<RunDiff> {
  const [ref, tst] = [await loadRunDir(referenceDir), await loadRunDir(testDir)];
  const alarms = compareRuns([ref.artifacts], tst.artifacts);
  return {
    format: DIFF_FORMAT,
    reference: referenceDir,
    test: testDir,
    endState: alarms.filter((a) => a.oracle === 'end-state'),
    updateSummary: alarms.filter((a) => a.oracle === 'update-summary'),
  };
}

/** Alarm messages say "reference runs" / "the test run": here they are the two named runs. */
function reword(message: string): string {
  return message
    .replace(/after reference runs/g, 'in the reference run')
    .replace(/in reference runs/g, 'in the reference run')
    .replace(/after the test run/g, 'in the test run');
}

export function renderRunDiff(d: RunDiff): string {
  const out = [`reference run: ${d.reference}`, `test run:      ${d.test}`, ''];
  const section = (title: string, alarms: Alarm[]) => {
    out.push(`${title}: ${alarms.length === 0 ? 'no differences' : `${alarms.length} difference(s)`}`);
    for (const a of alarms) out.push(`  ${reword(a.message)}`);
  };
  section('end state', d.endState);
  section('update summary', d.updateSummary);
  return out.join('\n') + '\n';
}
