/**
 * The terminal report: one row per plan, bugs first (past PASS_ROWS_MAX plans, passed plans are one
 * line), then every bug's alarms grouped by root difference (with the plans that found each) and the
 * command that runs each bug's plan again, then the plans that tested nothing and why.
 */
import type { Alarm, NotRunPlan, PlanResult } from '../model/results.js';
import { formatDuration, renderTable } from './table.js';
import { BEYOND_CONTRACT, findings, groupAlarms, summaryLine } from './groups.js';
import { PLAIN, type Palette } from './color.js';

export interface TerminalReportOptions {
  /** Show the controller column (several controllers in one report). */
  controllerColumn?: boolean;
  notes?: readonly string[];
  /** Plans an interrupted campaign did not run: listed after the table. */
  notRun?: readonly NotRunPlan[];
  /** Colour (on a terminal only: see color.ts); default none. */
  palette?: Palette;
}

export function alarmLine(a: Alarm): string {
  return `[${a.oracle}]${a.flaky ? ' (flaky)' : ''} ${a.message}`;
}

/** The verdict as the table shows it: `bug*` when the fault went beyond the API contract. */
export function verdictText(r: PlanResult): string {
  return r.beyondContract?.length ? `${r.verdict}*` : r.verdict;
}

/** The verdict text painted by what it asks of the reader. */
export function paintVerdict(r: PlanResult, palette: Palette): string {
  const text = verdictText(r);
  if (r.verdict === 'bug' || r.verdict === 'error') return palette.bad(text);
  if (r.verdict === 'pass') return palette.good(text);
  return palette.warn(text);
}

/** Table order: what needs a look first. */
const VERDICT_ORDER: readonly PlanResult['verdict'][] = ['bug', 'flaky', 'error', 'workload-failed', 'not-injected', 'pass'];

/** Above this many plans, passed plans are one line under the table instead of a row each. */
export const PASS_ROWS_MAX = 20;
/** Perturbation text in the table is cut to this many characters (the full text is in the alarms and `--json`). */
export const PERTURBATION_WIDTH = 100;

function cut(text: string, width: number): string {
  return text.length <= width ? text : `${text.slice(0, width - 1)}…`;
}

/** The command that runs the plan of `r` again, when the result names its plan file. */
export function rerunCommand(r: PlanResult): string | undefined {
  if (!r.planFile) return undefined;
  const q = (s: string) => (/^[\w./@%+=:,-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`);
  return `kperturb test ${q(r.planFile)}${r.configFile ? ` -c ${q(r.configFile)}` : ''}`;
}

export function renderTerminalReport(results: readonly PlanResult[], opts: TerminalReportOptions = {}): string {
  const palette = opts.palette ?? PLAIN;
  const withController = opts.controllerColumn ?? new Set(results.map((r) => r.controller)).size > 1;
  const headers = [...(withController ? ['controller'] : []), 'workload', 'plan', 'verdict', 'alarms', 'time', 'perturbation'];
  const ordered = [...results].sort((a, b) => VERDICT_ORDER.indexOf(a.verdict) - VERDICT_ORDER.indexOf(b.verdict));
  const passed = ordered.filter((r) => r.verdict === 'pass');
  const collapse = results.length > PASS_ROWS_MAX && passed.length > 0;
  const shown = collapse ? ordered.filter((r) => r.verdict !== 'pass') : ordered;
  const rows = shown.map((r) => [
    ...(withController ? [r.controller] : []),
    r.workload,
    r.plan,
    paintVerdict(r, palette),
    r.alarms.length,
    formatDuration(r.durationMs),
    cut(r.description, PERTURBATION_WIDTH),
  ]);
  const out: string[] = [renderTable(headers, rows)];
  if (collapse) {
    const names = passed.map((r) => `${r.plan}${r.beyondContract?.length ? '*' : ''}`);
    out.push(
      `passed (${passed.length}, not listed): ${names.slice(0, 12).join(', ')}${names.length > 12 ? `, … (\`kperturb report --json\` lists every plan)` : ''}`,
    );
  }
  out.push('', palette.bold(summaryLine(results)));
  if (results.some((r) => r.beyondContract?.length && r.verdict === 'bug')) {
    out.push(
      `note: a verdict marked * had a fault ${BEYOND_CONTRACT} (${results.find((r) => r.beyondContract?.length)!.beyondContract![0]}); no real API server does that, so check such a bug with \`kperturb test --contract strict\` (docs/fidelity.md)`,
    );
  }
  for (const note of opts.notes ?? []) out.push(`note: ${note}`);
  const notRun = opts.notRun ?? [];
  if (notRun.length > 0) {
    const names = notRun.map((p) => `${withController ? `${p.controller}/` : ''}${p.workload}/${p.plan}`);
    out.push(
      palette.warn(
        `not run (${notRun.length}, the campaign was interrupted; rerun the same command to run them): ${names.slice(0, 12).join(', ')}${names.length > 12 ? ', …' : ''}`,
      ),
    );
  }

  const found = findings(groupAlarms(results));
  if (found.length > 0) {
    out.push('', `Alarms, by root difference (${found.length}):`);
    for (const [i, f] of found.entries()) {
      const n = f.plans.length;
      const flaky = f.groups.reduce((m, g) => Math.max(m, g.flakyIn), 0);
      out.push('', `${i + 1}. ${palette.bad(f.object)}: found by ${n} plan${n === 1 ? '' : 's'}${flaky > 0 ? ` (flaky in ${flaky})` : ''}`);
      for (const g of f.groups) out.push(`   ${alarmLine({ ...g.alarm, flaky: false })}`);
      out.push(`   ${n === 1 ? 'plan' : 'plans'}:`);
      for (const p of f.plans)
        out.push(
          `     ${withController ? `${p.controller}/` : ''}${p.workload}/${p.plan}: ${p.description}${p.beyondContract?.length ? ` [${BEYOND_CONTRACT}]` : ''}`,
        );
    }
    const bugs = ordered.filter((r) => r.verdict === 'bug' || r.verdict === 'flaky');
    out.push('', 'Runs, and the command that runs each plan again:');
    for (const r of bugs) {
      out.push(`  ${r.plan} (${verdictText(r)}): ${r.runDir}`);
      const again = rerunCommand(r);
      if (again) out.push(`    ${again}`);
    }
  }

  const untested = results.filter((r) => r.verdict === 'not-injected' || r.verdict === 'workload-failed' || r.verdict === 'error');
  if (untested.length > 0) {
    out.push('', 'Not tested:');
    for (const r of untested) out.push(`  ${r.plan} (${r.verdict}): ${r.description}${r.error ? `\n    ${r.error}` : ''}`);
  }
  return out.join('\n') + '\n';
}
