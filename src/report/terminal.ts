/**
 * The terminal report: one row per plan, then every bug's alarms grouped by root difference (with
 * the plans that found each), then the plans that tested nothing and why.
 */
import type { Alarm, PlanResult } from '../model/results.js';
import { formatDuration, renderTable } from '../cli/table.js';
import { BEYOND_CONTRACT, findings, groupAlarms, summaryLine } from './groups.js';

export interface TerminalReportOptions {
  /** Show the controller column (several controllers in one report). */
  controllerColumn?: boolean;
  notes?: readonly string[];
}

export function alarmLine(a: Alarm): string {
  return `[${a.oracle}]${a.flaky ? ' (flaky)' : ''} ${a.message}`;
}

/** The verdict as the table shows it: `bug*` when the fault went beyond the API contract. */
export function verdictText(r: PlanResult): string {
  return r.beyondContract?.length ? `${r.verdict}*` : r.verdict;
}

export function renderTerminalReport(results: readonly PlanResult[], opts: TerminalReportOptions = {}): string {
  const withController = opts.controllerColumn ?? new Set(results.map((r) => r.controller)).size > 1;
  const headers = [...(withController ? ['controller'] : []), 'workload', 'plan', 'verdict', 'alarms', 'time', 'perturbation'];
  const rows = results.map((r) => [...(withController ? [r.controller] : []), r.workload, r.plan, verdictText(r), r.alarms.length, formatDuration(r.durationMs), r.description]);
  const out: string[] = [renderTable(headers, rows), '', summaryLine(results)];
  if (results.some((r) => r.beyondContract?.length && r.verdict === 'bug')) {
    out.push(`note: a verdict marked * had a fault ${BEYOND_CONTRACT} (${results.find((r) => r.beyondContract?.length)!.beyondContract![0]}); no real API server does that, so check such a bug with \`kperturb test --contract strict\` (docs/fidelity.md)`);
  }
  for (const note of opts.notes ?? []) out.push(`note: ${note}`);

  const found = findings(groupAlarms(results));
  if (found.length > 0) {
    out.push('', `Alarms, by root difference (${found.length}):`);
    for (const [i, f] of found.entries()) {
      const n = f.plans.length;
      const flaky = f.groups.reduce((m, g) => Math.max(m, g.flakyIn), 0);
      out.push('', `${i + 1}. ${f.object}: found by ${n} plan${n === 1 ? '' : 's'}${flaky > 0 ? ` (flaky in ${flaky})` : ''}`);
      for (const g of f.groups) out.push(`   ${alarmLine({ ...g.alarm, flaky: false })}`);
      out.push(`   ${n === 1 ? 'plan' : 'plans'}:`);
      for (const p of f.plans) out.push(`     ${withController ? `${p.controller}/` : ''}${p.workload}/${p.plan}: ${p.description}${p.beyondContract?.length ? ` [${BEYOND_CONTRACT}]` : ''}`);
    }
    const bugs = results.filter((r) => r.verdict === 'bug' || r.verdict === 'flaky');
    out.push('', 'Runs:', ...bugs.map((r) => `  ${r.plan} (${verdictText(r)}): ${r.runDir}`));
  }

  const untested = results.filter((r) => r.verdict === 'not-injected' || r.verdict === 'workload-failed' || r.verdict === 'error');
  if (untested.length > 0) {
    out.push('', 'Not tested:');
    for (const r of untested) out.push(`  ${r.plan} (${r.verdict}): ${r.description}${r.error ? `\n    ${r.error}` : ''}`);
  }
  return out.join('\n') + '\n';
}
