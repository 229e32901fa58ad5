/**
 * The demo's summary table (kperturb demo): one row per example and workload, one column per
 * verdict. The demo (src/campaign/demo.ts) runs the examples; this renders what it found.
 */
import { BUG_FOUND_CLASSES, type Verdict } from '../model/results.js';
import type { DemoResults } from '../campaign/demo.js';
import { formatDuration, renderTable } from './table.js';

/** One row per example and workload, one column per verdict. */
export function renderDemoTable(results: DemoResults): string {
  const rows = results.examples.map((e) => {
    const n = (v: Verdict) => e.plans.filter((p) => p.verdict === v).length;
    if (e.error) return [e.example, e.workload, 'reference runs failed', '', '', '', '', '', '', '', formatDuration(e.durationMs)];
    if (e.skipped) return [e.example, e.workload, 'skipped (not built)', '', '', '', '', '', '', '', ''];
    // An explored example: sequences instead of plans, alarms instead of bug verdicts.
    if (e.explore) {
      const { sequences, alarms, findings } = e.explore;
      const bugs = findings.filter((f) => f.class === 'bug').length;
      const flaky = findings.filter((f) => f.class === 'flaky').length;
      return [e.example, e.workload, `${sequences} sequences`, `${alarms} alarms`, bugs, '', flaky, '', '', '', formatDuration(e.durationMs)];
    }
    const findings = e.findings?.filter((f) => BUG_FOUND_CLASSES.has(f.class)).length ?? 0;
    const beyond = e.plans.filter((p) => p.verdict === 'bug' && p.beyondContract?.length).length;
    return [
      e.example,
      e.workload,
      e.untested ? `${e.plansGenerated} (untested)` : e.plansGenerated,
      beyond > 0 ? `${e.bugs} (${beyond}*)` : e.bugs,
      findings,
      n('pass'),
      n('flaky'),
      n('not-injected'),
      n('workload-failed'),
      n('error'),
      formatDuration(e.durationMs),
    ];
  });
  const table = renderTable(
    ['example', 'workload', 'plans', 'bug verdicts', 'findings', 'passed', 'flaky', 'not injected', 'workload failed', 'error', 'time'],
    rows,
  );
  const marked = results.examples.some((e) => e.plans.some((p) => p.verdict === 'bug' && p.beyondContract?.length));
  return marked ? `${table}\n(N*): N of the bugs had a fault beyond the API contract (a consistent read answered from a stale view; docs/fidelity.md)` : table;
}
