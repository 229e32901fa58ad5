/**
 * JUnit XML (`kperturb report --junit FILE`) for CI systems: one test suite per controller and
 * workload, one test case per plan, named by the plan (stable when the wording of descriptions
 * changes); each plan's description is a property of its suite (`<plan>: description`). A bug is a
 * failure (its message the first alarm, its body every alarm with the perturbation), an error an
 * error; plans that tested nothing (not injected, workload failed first) and flaky ones are skipped,
 * with the reason as the element's text, as are the plans an interrupted campaign did not get to
 * (`notRun`), so that a CI server shows them instead of losing them. The file follows the JUnit XSD CI servers read (Jenkins'
 * junit-4.xsd): no attributes it does not know (`skipped` only on suites, none on `<skipped>`), and
 * a test case holds skipped, error, failure, system-out in that order.
 */
import type { NotRunPlan, PlanResult } from '../model/results.js';
import { alarmLine } from './terminal.js';
import { BEYOND_CONTRACT } from './groups.js';

export const NOT_RUN_REASON = 'not run: the campaign was interrupted before this plan ran (rerun the same command to run it)';

export function renderJUnit(results: readonly PlanResult[], notRun: readonly NotRunPlan[] = []): string {
  const suites = new Map<string, PlanResult[]>();
  const notRunIn = new Map<string, NotRunPlan[]>();
  for (const r of results) {
    const k = `${r.controller}/${r.workload}`;
    suites.set(k, [...(suites.get(k) ?? []), r]);
  }
  for (const p of notRun) {
    const k = `${p.controller}/${p.workload}`;
    if (!suites.has(k)) suites.set(k, []);
    notRunIn.set(k, [...(notRunIn.get(k) ?? []), p]);
  }
  const untested = (r: PlanResult) => r.verdict === 'not-injected' || r.verdict === 'workload-failed' || r.verdict === 'flaky';
  const count = (rs: readonly PlanResult[]) => ({
    tests: rs.length,
    failures: rs.filter((r) => r.verdict === 'bug').length,
    errors: rs.filter((r) => r.verdict === 'error').length,
  });
  const time = (rs: readonly PlanResult[]) => seconds(rs.reduce((s, r) => s + r.durationMs, 0));
  const attrs = (o: Record<string, string | number>) =>
    Object.entries(o)
      .map(([k, v]) => ` ${k}="${escapeXml(String(v))}"`)
      .join('');
  const totals = count(results);
  const lines = [
    '<?xml version="1.0" encoding="UTF-8"?>',
    `<testsuites${attrs({ name: 'kperturb', ...totals, tests: totals.tests + notRun.length, time: time(results) })}>`,
  ];
  for (const [name, rs] of suites) {
    const missing = notRunIn.get(name) ?? [];
    const c = count(rs);
    lines.push(`  <testsuite${attrs({ name, ...c, tests: c.tests + missing.length, skipped: rs.filter(untested).length + missing.length, time: time(rs) })}>`);
    lines.push('    <properties>');
    for (const r of [...rs, ...missing]) lines.push(`      <property${attrs({ name: `${r.plan}: description`, value: r.description })}/>`);
    lines.push('    </properties>');
    for (const r of rs) {
      lines.push(`    <testcase${attrs({ name: r.plan, classname: `${r.controller}.${r.workload}`, time: seconds(r.durationMs) })}>`);
      const beyond = r.beyondContract?.length ? `[${BEYOND_CONTRACT}: ${r.beyondContract.join('; ')}] ` : '';
      const body = [
        `perturbation: ${r.description}`,
        ...(beyond ? [beyond.trim()] : []),
        ...r.alarms.map(alarmLine),
        ...(r.error ? [r.error] : []),
        `run: ${r.runDir}`,
      ].join('\n');
      const first = beyond + (r.alarms[0] ? alarmLine(r.alarms[0]) : (r.error ?? r.verdict));
      if (r.verdict === 'bug') lines.push(`      <failure${attrs({ message: first, type: r.alarms[0]?.oracle ?? 'bug' })}>${escapeXml(body)}</failure>`);
      else if (r.verdict === 'error') lines.push(`      <error${attrs({ message: first, type: 'error' })}>${escapeXml(body)}</error>`);
      else if (r.verdict === 'flaky')
        lines.push(
          `      <skipped>${escapeXml('flaky: every alarm also showed in an unperturbed re-run')}</skipped>`,
          `      <system-out>${escapeXml(body)}</system-out>`,
        );
      else if (r.verdict !== 'pass') lines.push(`      <skipped>${escapeXml(`${r.verdict}: ${r.error ?? 'nothing was tested'}`)}</skipped>`);
      lines.push('    </testcase>');
    }
    for (const p of missing) {
      lines.push(
        `    <testcase${attrs({ name: p.plan, classname: `${p.controller}.${p.workload}`, time: seconds(0) })}>`,
        `      <skipped>${escapeXml(NOT_RUN_REASON)}</skipped>`,
        '    </testcase>',
      );
    }
    lines.push('  </testsuite>');
  }
  lines.push('</testsuites>');
  return lines.join('\n') + '\n';
}

function seconds(ms: number): string {
  return (ms / 1000).toFixed(3);
}

/** Escapes text and attribute values; drops characters XML 1.0 cannot carry at all. */
export function escapeXml(text: string): string {
  return (
    text
      // eslint-disable-next-line no-control-regex -- the control characters XML 1.0 allows are the point
      .replace(/[^\x09\x0A\x0D\x20-\uD7FF\uE000-\uFFFD\u{10000}-\u{10FFFF}]/gu, '')
      .replace(/&/g, '&amp;')
      .replace(/</g, '&lt;')
      .replace(/>/g, '&gt;')
      .replace(/"/g, '&quot;')
      .replace(/'/g, '&apos;')
  );
}
