/**
 * The terminal report. It leads with the findings ("N bug verdicts -> k findings": one per distinct
 * bug, oracles/findings.ts), each with its class, the plans that showed it, its shortest reproducer
 * and the command that runs it again; then the workloads that tested nothing (never clean); then one
 * row per plan, bugs first (past PASS_ROWS_MAX plans, passed plans are one line), and the plans that
 * tested nothing and why.
 */
import type { Alarm, Finding, NotRunPlan, PlanResult, UntestedWorkload } from '../model/results.js';
import { formatDuration, renderTable } from './table.js';
import { BEYOND_CONTRACT, summaryLine } from './groups.js';
import { PLAIN, type Palette } from './color.js';
import { groupFindings, rerunCommand } from '../../oracles/findings.js';
import { recoveryUnknown } from '../../oracles/recovery.js';

export { rerunCommand };

export interface TerminalReportOptions {
  /** Show the controller column (several controllers in one report). */
  controllerColumn?: boolean;
  notes?: readonly string[];
  /** Plans an interrupted campaign did not run: listed after the table. */
  notRun?: readonly NotRunPlan[];
  /** Colour (on a terminal only: see color.ts); default none. */
  palette?: Palette;
  /** Workloads that tested nothing (LoadedResults.untested): said after the findings, never clean. */
  untested?: readonly UntestedWorkload[];
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

const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;

/** "18 bug verdicts -> 1 finding (1 bug)": the report's first line. */
export function findingsLine(results: readonly PlanResult[], found: readonly Finding[]): string {
  const verdicts = results.filter((r) => r.verdict === 'bug').length;
  const flaky = results.filter((r) => r.verdict === 'flaky').length;
  const byClass = new Map<string, number>();
  for (const f of found) byClass.set(f.class, (byClass.get(f.class) ?? 0) + 1);
  const classes = [...byClass].map(([c, n]) => `${n} ${c}`).join(', ');
  return `${plural(verdicts, 'bug verdict')}${flaky > 0 ? ` (+${flaky} flaky)` : ''} -> ${plural(found.length, 'finding')}${classes ? ` (${classes})` : ''}`;
}

/** A finding as the terminal shows it (numbered `n`). */
export function findingLines(f: Finding, n: number, withController: boolean, palette: Palette): string[] {
  const where = (p: { workload: string; plan: string }) => `${withController ? `${f.controller}/` : ''}${p.workload}/${p.plan}`;
  const paint = f.class === 'bug' ? palette.bad : palette.warn;
  const out = [`${n}. ${paint(f.class)}: ${withController ? `${f.controller} ` : ''}${f.summary}`, `   ${f.why}`];
  const names = f.plans.map((p) => `${where(p)}${p.beyondContract ? '*' : ''}`);
  out.push(`   ${f.plans.length === 1 ? 'plan' : `${f.plans.length} plans`}: ${names.slice(0, 6).join(', ')}${names.length > 6 ? ', …' : ''}`);
  const size = f.reproducer.size ? ` (${plural(f.reproducer.size.faults, 'fault')}, ${plural(f.reproducer.size.steps, 'workload step')})` : '';
  out.push(`   shortest reproducer: ${where(f.reproducer)}${size}: ${f.reproducer.description}`, `     run: ${f.reproducer.runDir}`);
  if (f.command) out.push(`     ${f.command}`);
  for (const a of f.alarms) out.push(`     ${alarmLine(a)}`);
  out.push(...confirmationLines(f).map((l) => `   ${l}`));
  return out;
}

/**
 * A finding's re-runs (oracles/confirmation.ts: the counts and where they ran) and its recovery
 * (oracles/recovery.ts: what recovered, each attempt's end-state alarms, where); none when neither was tried.
 */
export function confirmationLines(f: Pick<Finding, 'confirmation' | 'recovery' | 'recoveryRun'>): string[] {
  const c = f.confirmation;
  // The counts are in the finding's `why` (oracles/findings.ts): here, where the runs are.
  const out = c ? [...c.runDirs.map((d, i) => `re-run ${i + 1}: ${d}`), ...(c.faultFree ? [`fault-free run: ${c.faultFree.runDir}`] : [])] : [];
  const r = f.recoveryRun;
  if (r) {
    const steps = [
      `end-state alarms after the run: ${r.before}`,
      ...r.attempts.map((a) => `${a.strategy}: ${a.skipped ? `skipped (${a.skipped})` : a.alarms}`),
    ];
    out.push(`recovery: ${f.recovery ?? `not known (${recoveryUnknown(r)})`} (${steps.join('; ')})`, `recovery run: ${r.runDir}`);
  }
  return out;
}

/** A workload that tested nothing, as the terminal shows it. */
export function untestedLines(u: UntestedWorkload, withController: boolean): string[] {
  return [`  ${withController ? `${u.controller}/` : ''}${u.workload}: ${u.detail}`, `    what to do: ${u.advice}`];
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
  const found = groupFindings(results);
  const out: string[] = [palette.bold(findingsLine(results, found))];
  for (const [i, f] of found.entries()) out.push('', ...findingLines(f, i + 1, withController, palette));
  const untestedWorkloads = opts.untested ?? [];
  if (untestedWorkloads.length > 0) {
    out.push('', palette.warn(`Untested (${untestedWorkloads.length}): these workloads tested nothing, so they are not clean:`));
    for (const u of untestedWorkloads) out.push(...untestedLines(u, withController));
  }
  out.push('', renderTable(headers, rows));
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

  const untested = results.filter((r) => r.verdict === 'not-injected' || r.verdict === 'workload-failed' || r.verdict === 'error');
  if (untested.length > 0) {
    out.push('', 'Not tested:');
    for (const r of untested) out.push(`  ${r.plan} (${r.verdict}): ${r.description}${r.error ? `\n    ${r.error}` : ''}`);
  }
  return out.join('\n') + '\n';
}
