/**
 * JUnit XML (`kperturb report --junit FILE`) for CI systems. The first suite, `findings`, has one
 * test case per finding (oracles/findings.ts): a `bug` or `beyond-contract` finding is a failure
 * (its message the summary, its body the reproducer, its command and its alarms), the other classes
 * are skipped with why; a workload that tested nothing is an error there (it is not clean). Then one
 * test suite per controller and workload, one test case per plan, named by the plan (stable when the
 * wording of descriptions changes); each plan's description is a property of its suite
 * (`<plan>: description`). A plan's bug verdict is not a failure of its own (its finding is): it
 * passes with the finding's number in its system-out; an error is an error; plans that tested nothing (not injected, workload failed first) and flaky ones are skipped,
 * with the reason as the element's text, as are the plans an interrupted campaign did not get to
 * (`notRun`), so that a CI server shows them instead of losing them. The file follows the JUnit XSD CI servers read (Jenkins'
 * junit-4.xsd): no attributes it does not know (`skipped` only on suites, none on `<skipped>`), and
 * a test case holds skipped, error, failure, system-out in that order.
 */
import { BUG_FOUND_CLASSES, type NotRunPlan, type PlanResult, type UntestedWorkload } from '../model/results.js';
import { alarmLine, confirmationLines } from './terminal.js';
import { BEYOND_CONTRACT } from './groups.js';
import { groupFindings } from '../../oracles/findings.js';

export const NOT_RUN_REASON = 'not run: the campaign was interrupted before this plan ran (rerun the same command to run it)';

export function renderJUnit(results: readonly PlanResult[], notRun: readonly NotRunPlan[] = [], untestedWorkloads: readonly UntestedWorkload[] = []): string {
  const found = groupFindings(results);
  const findingOf = new Map<string, number>();
  found.forEach((f, i) => f.plans.forEach((p) => findingOf.set(`${f.controller}/${p.workload}/${p.plan}`, i + 1)));
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
    failures: 0,
    errors: rs.filter((r) => r.verdict === 'error').length,
  });
  const time = (rs: readonly PlanResult[]) => seconds(rs.reduce((s, r) => s + r.durationMs, 0));
  const attrs = (o: Record<string, string | number>) =>
    Object.entries(o)
      .map(([k, v]) => ` ${k}="${escapeXml(String(v))}"`)
      .join('');
  const totals = count(results);
  const failing = found.filter((f) => BUG_FOUND_CLASSES.has(f.class)).length;
  const findingCases = found.length + untestedWorkloads.length;
  const lines = [
    '<?xml version="1.0" encoding="UTF-8"?>',
    `<testsuites${attrs({
      name: 'kperturb',
      tests: totals.tests + notRun.length + findingCases,
      failures: failing,
      errors: totals.errors + untestedWorkloads.length,
      time: time(results),
    })}>`,
  ];
  if (findingCases > 0) {
    lines.push(
      `  <testsuite${attrs({ name: 'findings', tests: findingCases, failures: failing, errors: untestedWorkloads.length, skipped: found.length - failing, time: seconds(0) })}>`,
    );
    for (const [i, f] of found.entries()) {
      lines.push(`    <testcase${attrs({ name: `finding ${i + 1}: ${f.summary}`, classname: `${f.controller}.findings`, time: seconds(0) })}>`);
      const body = [
        f.why,
        `plans (${f.plans.length}): ${f.plans.map((p) => `${p.workload}/${p.plan}`).join(', ')}`,
        `shortest reproducer: ${f.reproducer.workload}/${f.reproducer.plan}: ${f.reproducer.description}`,
        ...(f.command ? [f.command] : []),
        ...f.alarms.map(alarmLine),
        `run: ${f.reproducer.runDir}`,
        ...confirmationLines(f),
      ].join('\n');
      if (BUG_FOUND_CLASSES.has(f.class))
        lines.push(`      <failure${attrs({ message: `${f.class}: ${f.summary}`, type: f.class })}>${escapeXml(body)}</failure>`);
      else lines.push(`      <skipped>${escapeXml(`${f.class}: ${f.why}`)}</skipped>`, `      <system-out>${escapeXml(body)}</system-out>`);
      lines.push('    </testcase>');
    }
    for (const u of untestedWorkloads) {
      lines.push(
        `    <testcase${attrs({ name: `untested: ${u.workload}`, classname: `${u.controller}.findings`, time: seconds(0) })}>`,
        `      <error${attrs({ message: `untested: ${u.detail}`, type: 'untested' })}>${escapeXml(`${u.detail}\nwhat to do: ${u.advice}`)}</error>`,
        '    </testcase>',
      );
    }
    lines.push('  </testsuite>');
  }
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
      if (r.verdict === 'bug')
        lines.push(
          `      <system-out>${escapeXml(`bug verdict, part of finding ${findingOf.get(`${r.controller}/${r.workload}/${r.plan}`) ?? '?'} (suite findings): ${first}\n${body}`)}</system-out>`,
        );
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
