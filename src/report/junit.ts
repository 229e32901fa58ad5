/**
 * JUnit XML (`kperturb report --junit FILE`) for CI systems: one test suite per controller and
 * workload, one test case per plan. A bug is a failure (its message the first alarm, its body every
 * alarm with the perturbation), an error an error; plans that tested nothing (not injected, workload
 * failed first) and flaky ones are skipped, with the reason.
 */
import type { PlanResult } from '../model/results.js';
import { alarmLine } from './terminal.js';
import { BEYOND_CONTRACT } from './groups.js';

export function renderJUnit(results: readonly PlanResult[]): string {
  const suites = new Map<string, PlanResult[]>();
  for (const r of results) {
    const k = `${r.controller}/${r.workload}`;
    suites.set(k, [...(suites.get(k) ?? []), r]);
  }
  const count = (rs: readonly PlanResult[]) => ({
    tests: rs.length,
    failures: rs.filter((r) => r.verdict === 'bug').length,
    errors: rs.filter((r) => r.verdict === 'error').length,
    skipped: rs.filter((r) => r.verdict === 'not-injected' || r.verdict === 'workload-failed' || r.verdict === 'flaky').length,
    time: seconds(rs.reduce((s, r) => s + r.durationMs, 0)),
  });
  const attrs = (o: Record<string, string | number>) => Object.entries(o).map(([k, v]) => ` ${k}="${escapeXml(String(v))}"`).join('');
  const lines = ['<?xml version="1.0" encoding="UTF-8"?>', `<testsuites${attrs({ name: 'kperturb', ...count(results) })}>`];
  for (const [name, rs] of suites) {
    lines.push(`  <testsuite${attrs({ name, ...count(rs) })}>`);
    for (const r of rs) {
      lines.push(`    <testcase${attrs({ classname: `${r.controller}.${r.workload}`, name: `${r.plan}: ${r.description}`, time: seconds(r.durationMs) })}>`);
      const beyond = r.beyondContract?.length ? `[${BEYOND_CONTRACT}: ${r.beyondContract.join('; ')}] ` : '';
      const body = [`perturbation: ${r.description}`, ...(beyond ? [beyond.trim()] : []), ...r.alarms.map(alarmLine), ...(r.error ? [r.error] : []), `run: ${r.runDir}`].join('\n');
      const first = beyond + (r.alarms[0] ? alarmLine(r.alarms[0]) : (r.error ?? r.verdict));
      if (r.verdict === 'bug') lines.push(`      <failure${attrs({ message: first, type: r.alarms[0]?.oracle ?? 'bug' })}>${escapeXml(body)}</failure>`);
      else if (r.verdict === 'error') lines.push(`      <error${attrs({ message: first, type: 'error' })}>${escapeXml(body)}</error>`);
      else if (r.verdict === 'flaky') lines.push(`      <skipped${attrs({ message: 'flaky: every alarm also showed in an unperturbed re-run' })}/>`, `      <system-out>${escapeXml(body)}</system-out>`);
      else if (r.verdict !== 'pass') lines.push(`      <skipped${attrs({ message: `${r.verdict}: ${r.error ?? 'nothing was tested'}` })}/>`);
      lines.push('    </testcase>');
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
  return text
    .replace(/[^\x09\x0A\x0D\x20-\uD7FF\uE000-\uFFFD\u{10000}-\u{10FFFF}]/gu, '')
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;')
    .replace(/'/g, '&apos;');
}
