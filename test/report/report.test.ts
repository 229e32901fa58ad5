import test from 'ava';
import { appendFileSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { buildJsonReport } from '../../src/report/json.js';
import { renderJUnit } from '../../src/report/junit.js';
import { collectPlanDetails, renderHtmlReport } from '../../src/report/html.js';
import { loadResults } from '../../src/io/results-file.js';
import { renderTerminalReport } from '../../src/report/terminal.js';
import { diffRuns, renderRunDiff } from '../../src/report/run-diff.js';
import { redactAlarm } from '../../src/model/redact.js';
import { groupAlarms } from '../../src/report/groups.js';
import { findingSignature } from '../../oracles/findings.js';
import { UserInputError } from '../../src/model/errors.js';
import { RESULTS_FORMAT, type PlanResult } from '../../src/model/results.js';
import { makeCampaign } from './_fixture.js';
import { findAll, parseXml, type XmlElement } from './_xml.js';

/** The plan table of a terminal report: from its header row to the next blank line. */
function tableOf(text: string): string {
  const start = text.search(/^(controller\s+)?workload\s+plan/m);
  const end = text.indexOf('\n\n', start);
  return text.slice(start, end < 0 ? undefined : end);
}

test('the terminal report leads with the findings (verdicts -> findings, each with its plans and reproducer), then a row per plan and a summary', (t) => {
  const { results, out } = makeCampaign();
  const loaded = loadResults(out);
  t.is(loaded.results.length, 4);
  const text = renderTerminalReport(loaded.results);
  t.regex(text, /intermediate-0002\s+bug\s+2/);
  t.true(text.includes('4 plans: 2 found bugs, 1 passed, 1 not injected'));
  // One finding (the missing Secret) seen by two oracles and two plans, not four separate alarms.
  t.true(text.startsWith('2 bug verdicts -> 1 finding (1 bug)\n'), text);
  t.true(text.includes('1. bug: [end-state] never created Secret/default/db1-tls, which the reference runs did'));
  t.true(text.includes('   2 plans: create/intermediate-0001, create/intermediate-0002'));
  t.true(text.includes(`   shortest reproducer: create/intermediate-0001: ${results[0]!.description}`));
  t.true(text.includes('[end-state] Secret/default/db1-tls: exists after reference runs, but is absent after the test run'));
  t.true(text.indexOf('1. bug:') < text.indexOf('intermediate-0002  bug'), 'the findings come before the plan table');
  t.true(
    text.includes(
      "intermediate-0004 (not-injected): restart the controller right after it deletes ConfigMap/default/db1-config (1st time)\n    the plan's trigger never matched",
    ),
  );
});

test('the JSON report gives every alarm its oracle, object, field, values and the plan description', (t) => {
  const { out } = makeCampaign();
  const loaded = loadResults(out);
  const report = buildJsonReport(loaded.results, loaded.sources, loaded.notes);
  t.is(report.format, 'kperturb.dev/report/v1');
  t.like(report.summary, { plans: 4, bug: 2, pass: 1, 'not-injected': 1 });
  t.is(report.alarms.length, 4);
  t.like(report.alarms[1], {
    oracle: 'update-summary',
    object: 'Secret/default/db1-tls',
    reference: [1],
    test: 0,
    plan: 'intermediate-0001',
    description: 'restart the controller right after it creates ConfigMap/default/db1-config (1st time)',
  });
  t.deepEqual(
    report.groups.map((g) => [g.oracle, g.count]),
    [
      ['end-state', 2],
      ['update-summary', 2],
    ],
  );
});

/**
 * The content model of the JUnit XSD CI servers validate against (Jenkins' junit-4.xsd): the
 * attributes each element may carry and the children it may hold, in order. Written from the
 * schema's rules (not a copy of it), so that a test fails on what the schema refuses.
 */
const JUNIT4: Record<string, { attrs: string[]; required: string[]; children?: string[]; text?: boolean }> = {
  testsuites: { attrs: ['name', 'time', 'tests', 'failures', 'disabled', 'errors'], required: [], children: ['testsuite'] },
  testsuite: {
    attrs: ['name', 'tests', 'failures', 'errors', 'time', 'disabled', 'skipped', 'timestamp', 'hostname', 'id', 'package'],
    required: ['name', 'tests'],
    children: ['properties', 'testcase', 'system-out', 'system-err'],
  },
  properties: { attrs: [], required: [], children: ['property'] },
  property: { attrs: ['name', 'value'], required: ['name', 'value'], children: [] },
  testcase: {
    attrs: ['name', 'assertions', 'time', 'classname', 'status'],
    required: ['name'],
    children: ['skipped', 'error', 'failure', 'system-out', 'system-err'],
  },
  skipped: { attrs: [], required: [], children: [], text: true },
  error: { attrs: ['message', 'type'], required: [], children: [], text: true },
  failure: { attrs: ['message', 'type'], required: [], children: [], text: true },
  'system-out': { attrs: [], required: [], children: [], text: true },
  'system-err': { attrs: [], required: [], children: [], text: true },
};

function junit4Problems(el: XmlElement, where = el.name): string[] {
  const rule = JUNIT4[el.name];
  if (!rule) return [`${where}: element not in the schema`];
  const problems: string[] = [];
  for (const a of Object.keys(el.attrs)) if (!rule.attrs.includes(a)) problems.push(`${where}: attribute ${a} not allowed`);
  for (const a of rule.required) if (!(a in el.attrs)) problems.push(`${where}: attribute ${a} required`);
  const order = rule.children ?? [];
  let last = -1;
  for (const c of el.children) {
    const at = order.indexOf(c.name);
    if (at < 0) problems.push(`${where}: child ${c.name} not allowed`);
    else if (at < last) problems.push(`${where}: child ${c.name} out of order`);
    else last = at;
    problems.push(...junit4Problems(c, `${where}/${c.name}${c.attrs.name ? `[${c.attrs.name}]` : ''}`));
  }
  if (el.name === 'testcase' && el.children.filter((c) => c.name === 'skipped').length > 1) problems.push(`${where}: more than one skipped`);
  return problems;
}

test('JUnit XML is well-formed and valid by the junit-4 schema: a failure per finding, a test case per plan named by it, skipped for untested plans', (t) => {
  const { results } = makeCampaign();
  const xml = renderJUnit(results);
  const root = parseXml(xml);
  t.is(root.name, 'testsuites');
  t.deepEqual(junit4Problems(root), []);
  t.like(root.attrs, { tests: '5', failures: '1', errors: '0' });
  const [findingsSuite, suite] = findAll(root, 'testsuite') as [XmlElement, XmlElement];
  t.like(findingsSuite.attrs, { name: 'findings', tests: '1', failures: '1' });
  const findingFailure = findAll(findingsSuite, 'failure')[0]!;
  t.is(findingFailure.attrs.message, 'bug: [end-state] never created Secret/default/db1-tls, which the reference runs did');
  t.true(findingFailure.text.includes('plans (2): create/intermediate-0001, create/intermediate-0002'));
  t.like(suite.attrs, { tests: '4', failures: '0', errors: '0', skipped: '1' });
  const cases = findAll(suite, 'testcase');
  t.is(cases.length, 4);
  t.deepEqual(
    cases.map((c) => c.attrs.name),
    results.map((r) => r.plan),
    'test cases are named by their plans',
  );
  // The description, with its special characters, is a property of the suite.
  const props = Object.fromEntries(findAll(suite, 'property').map((p) => [p.attrs.name, p.attrs.value]));
  t.is(props[`${results[1]!.plan}: description`], results[1]!.description);
  t.true(results[1]!.description.endsWith('(1st time) <&>"'), 'the fixture has characters to escape');
  t.is(findAll(cases[1]!, 'failure').length, 0, "a plan's bug verdict is its finding's failure, not one of its own");
  const out = findAll(cases[1]!, 'system-out')[0]!;
  t.true(out.text.startsWith('bug verdict, part of finding 1 (suite findings): [end-state] Secret/default/db1-tls: exists after reference runs'));
  t.true(out.text.includes('perturbation: restart the controller right after it patches'));
  const skipped = findAll(cases[3]!, 'skipped');
  t.is(skipped.length, 1);
  t.regex(skipped[0]!.text, /^not-injected: /);
  t.throws(() => parseXml('<a><b></a>'), undefined, 'the checker itself rejects broken XML');
  t.notDeepEqual(
    junit4Problems(
      parseXml('<testsuites skipped="1"><testsuite name="s" tests="1"><testcase name="c"><skipped message="m"/></testcase></testsuite></testsuites>'),
    ),
    [],
    'the schema check refuses what junit-4 refuses',
  );
});

test('JUnit XML of an interrupted campaign: the plans it did not run are skipped test cases, valid by the junit-4 schema', (t) => {
  const { results } = makeCampaign();
  const r0 = results[0]!;
  const notRun = [
    { controller: r0.controller, workload: r0.workload, plan: 'intermediate-0009', pattern: 'intermediate-state', description: 'restart after <x>' },
    { controller: r0.controller, workload: 'other', plan: 'stale-0001', pattern: 'stale-state', description: 'stale view' },
  ];
  const root = parseXml(renderJUnit(results, notRun));
  t.deepEqual(junit4Problems(root), []);
  t.like(root.attrs, { tests: '7', failures: '1' });
  const suites = findAll(root, 'testsuite');
  t.like(suites[1]!.attrs, { tests: '5', skipped: '2' });
  t.like(suites[2]!.attrs, { name: `${r0.controller}/other`, tests: '1', skipped: '1' });
  const missing = findAll(root, 'testcase').filter((c) => c.attrs.name === 'intermediate-0009' || c.attrs.name === 'stale-0001');
  t.is(missing.length, 2);
  for (const c of missing) t.regex(findAll(c, 'skipped')[0]!.text, /^not run: the campaign was interrupted/);
});

test('the HTML page is self-contained and shows the alarm, the fault marker, the timeline and the diff', async (t) => {
  const { out } = makeCampaign();
  const loaded = loadResults(out);
  const details = new Map();
  for (const r of loaded.results.filter((x) => x.verdict === 'bug')) details.set(r, await collectPlanDetails(r));
  const html = renderHtmlReport({ ...loaded, details, generatedAt: '2024-01-01T00:00:00Z' });
  t.true(html.startsWith('<!DOCTYPE html>'));
  t.true(html.includes('Secret/default/db1-tls: exists after reference runs, but is absent after the test run'));
  t.regex(
    html,
    /<tr class="fault first"><td class="t">[^<]+<\/td><td colspan="3">⚡ FAULT \(crash-after-write, triggered\): the controller creates ConfigMap\/default\/db1-config/,
  );
  t.true(html.includes('id="plan-secret-marker-buggy-create-intermediate-0001"'), 'one section per failing plan');
  t.false(html.includes('id="plan-secret-marker-buggy-create-intermediate-0003"'), 'no section for a passing plan');
  t.true(html.includes('shown ADDED Database/default/db1 (rv 7)'), 'what the controller was shown');
  t.true(html.includes('sent create ConfigMap/default/db1-config → 201'), 'what the controller sent');
  t.true(html.includes('setup before the controller started: 1 change(s)'));
  t.regex(
    html,
    /For comparison: the alarmed objects in reference run <code>ref-1<\/code>[\s\S]*ADDED Secret\/default\/db1-tls/,
    'what the reference run did with the missing Secret',
  );
  t.regex(html, /<span class="del">- kind: Secret<\/span>/, 'the diff shows the missing Secret');
  t.false(html.includes('Y2VydA=='), 'Secret values are hashed');
  t.false(/\b(src|href)="(https?:)?\/\//.test(html), 'nothing is fetched');
  t.true(html.includes('restart the controller right after it patches Database/default/db1 status (1st time) &lt;&amp;&gt;&quot;'));
});

test('results.json cut off in the middle is an error naming the file', (t) => {
  const { resultsFile } = makeCampaign();
  const text = readFileSync(resultsFile, 'utf8');
  writeFileSync(resultsFile, text.slice(0, Math.floor(text.length / 2)));
  const err = t.throws(() => loadResults(resultsFile), { instanceOf: UserInputError });
  t.true(err!.message.startsWith(`${resultsFile}: a complete JSON document`), err!.message);
  t.regex(err!.message, /truncated or hand-edited/);
});

test('results from another version or hand-edited are errors naming the file and the path inside it', (t) => {
  const { resultsFile } = makeCampaign();
  const doc = JSON.parse(readFileSync(resultsFile, 'utf8'));
  writeFileSync(resultsFile, JSON.stringify({ ...doc, format: 'kperturb.dev/results/v9' }));
  t.regex(
    t.throws(() => loadResults(resultsFile))!.message,
    /results\.json at format: "kperturb\.dev\/results\/v1" \(got "kperturb\.dev\/results\/v9": written by another version/,
  );
  doc.results[1].verdict = 'maybe';
  writeFileSync(resultsFile, JSON.stringify(doc));
  t.regex(
    t.throws(() => loadResults(resultsFile))!.message,
    /results\.json at results\[1\]\.verdict: one of bug, flaky, pass, not-injected, workload-failed, error \(got "maybe"/,
  );
  doc.results[1].verdict = 'bug';
  doc.results[1].alarms[0].oracle = 'gut-feeling';
  writeFileSync(resultsFile, JSON.stringify(doc));
  t.regex(t.throws(() => loadResults(resultsFile))!.message, /at results\[1\]\.alarms\[0\]\.oracle: one of end-state/);
});

test('a directory without results.json reports the verdict.json of each finished run, and says so', (t) => {
  const { out, resultsFile, root } = makeCampaign();
  rmSync(resultsFile);
  rmSync(join(root, 'test', 'create', 'intermediate-0004', 'verdict.json')); // interrupted in this run
  const loaded = loadResults(out);
  t.deepEqual(
    loaded.results.map((r) => r.plan),
    ['intermediate-0001', 'intermediate-0002', 'intermediate-0003'],
  );
  t.deepEqual(loaded.notes, [`${root}: no results.json; reporting the verdict.json of 3 test run(s); 1 run(s) without a verdict (unfinished) left out`]);
  t.true(renderTerminalReport(loaded.results, { notes: loaded.notes }).includes('note: '));
});

test('an interrupted campaign (results.json marked incomplete) is reported with a note', (t) => {
  const { resultsFile } = makeCampaign();
  const doc = JSON.parse(readFileSync(resultsFile, 'utf8'));
  writeFileSync(resultsFile, JSON.stringify({ ...doc, results: doc.results.slice(0, 2), complete: false, planned: 4 }));
  t.deepEqual(loadResults(resultsFile).notes, [`${resultsFile}: the campaign did not finish (2 of 4 plans have results)`]);
  // An interrupted re-run: the plans it had not redone keep their earlier results.
  writeFileSync(resultsFile, JSON.stringify({ ...doc, complete: false, planned: 4 }));
  t.deepEqual(loadResults(resultsFile).notes, [`${resultsFile}: the campaign did not finish (every plan has a result, some from an earlier run)`]);
});

test('a truncated trace is an error naming the trace file and the line', async (t) => {
  const { results } = makeCampaign();
  const trace = join(results[0]!.runDir, 'controller.trace.jsonl');
  appendFileSync(trace, '{"seq":99,"ts":1,"type":"requ');
  const err = await t.throwsAsync(() => collectPlanDetails(results[0]!), { instanceOf: UserInputError });
  t.regex(err!.message, /controller\.trace\.jsonl at line \d+: a complete JSON trace event/);
});

test('diff of two runs lists end-state and update-summary differences; a run against itself has none', async (t) => {
  const { results, root } = makeCampaign();
  const ref = join(root, 'learn', 'create', 'ref-1');
  const d = await diffRuns(ref, results[0]!.runDir);
  t.deepEqual(
    d.endState.map((a) => a.message),
    ['Secret/default/db1-tls: exists after reference runs, but is absent after the test run'],
  );
  t.deepEqual(
    d.updateSummary.map((a) => a.object),
    ['Secret/default/db1-tls'],
  );
  const text = renderRunDiff(d);
  t.true(text.includes('end state: 1 difference(s)\n  Secret/default/db1-tls: exists in the reference run, but is absent in the test run'));
  const same = await diffRuns(ref, ref);
  t.true(renderRunDiff(same).includes('end state: no differences\nupdate summary: no differences'));
  await t.throwsAsync(() => diffRuns(ref, root), { message: new RegExp(`${root}: a kperturb run directory \\(no run.json in it\\)`) });
});

test('Secret values in alarms are replaced by hashes, equal values by equal hashes', (t) => {
  const a = redactAlarm({
    oracle: 'end-state',
    check: 'value',
    object: 'Secret/default/s',
    field: 'data.password',
    reference: ['aGVsbG8='],
    test: 'd29ybGQ=',
    message: 'Secret/default/s: data.password is "aGVsbG8=" after reference runs, but "d29ybGQ=" after the test run',
  });
  t.regex(String(a.test), /^hmac-sha256:[0-9a-f]{16}$/);
  t.false(a.message.includes('aGVsbG8=') || a.message.includes('d29ybGQ='));
  t.true(a.message.includes(String(a.reference[0])));
  const other = { oracle: 'end-state' as const, object: 'ConfigMap/default/c', field: 'data.k', reference: ['v'], test: 'w', message: 'm' };
  t.is(redactAlarm(other), other);
});

test('liveness alarms that differ only in their counts are one root difference', (t) => {
  const { results } = makeCampaign();
  const endless = (n: number) => ({
    oracle: 'liveness' as const,
    check: 'endless-writes' as const,
    object: 'SQLCluster/default/c1',
    field: 'status',
    reference: [0],
    test: n,
    message: `the controller kept writing SQLCluster/default/c1 status after the workload ended: ${n} write(s), the reference runs at most 0`,
  });
  const withLiveness = results.map((r, i) => (r.verdict === 'bug' ? { ...r, alarms: [endless(11 + i)] } : r));
  const groups = groupAlarms(withLiveness);
  t.is(groups.length, 1);
  t.is(groups[0]!.plans.length, 2);
});

test('a verdict whose fault went beyond the API contract is marked in every report and counted apart', (t) => {
  const { results } = makeCampaign();
  const reason = 'a LIST with resourceVersion unset (a consistent read) answered from a stale view';
  const marked = results.map((r) => (r.plan === 'intermediate-0002' ? { ...r, beyondContract: [reason] } : r));
  const text = renderTerminalReport(marked);
  t.regex(text, /intermediate-0002\s+bug\*\s+2/);
  t.regex(text, /intermediate-0001\s+bug\s+2/, 'a verdict within the contract is not marked');
  t.true(text.includes('4 plans: 2 found bugs (1 beyond the API contract), 1 passed, 1 not injected'));
  t.true(text.includes('--contract strict'));
  t.regex(text, /2 plans: create\/intermediate-0001, create\/intermediate-0002\*/);

  const json = buildJsonReport(marked);
  t.deepEqual(json.summary.beyondContract, { bug: 1 });
  t.deepEqual(
    json.alarms.map((a) => [a.plan, a.beyondContract === true]),
    [
      ['intermediate-0001', false],
      ['intermediate-0001', false],
      ['intermediate-0002', true],
      ['intermediate-0002', true],
    ],
  );

  const cases = findAll(parseXml(renderJUnit(marked)), 'testcase');
  const outs = cases.flatMap((c) => findAll(c, 'system-out'));
  t.is(outs.length, 2);
  t.true(outs[1]!.text.startsWith(`bug verdict, part of finding 1 (suite findings): [beyond the API contract: ${reason}] [end-state]`));
  t.false(outs[0]!.text.includes('beyond'));
  // Only beyond-contract plans: the finding says so.
  const allMarked = results.map((r) => (r.verdict === 'bug' ? { ...r, beyondContract: [reason] } : r));
  t.is(findAll(parseXml(renderJUnit(allMarked)), 'failure')[0]!.attrs.type, 'beyond-contract');

  const html = renderHtmlReport({ results: marked, sources: [], notes: [], generatedAt: 'now', details: new Map() });
  t.is(html.match(/class="badge contract"/g)?.length, 2, 'in the plan table and in the plan section');
  t.true(html.includes('kperturb test --contract strict'));
});

test('the terminal report leads with bugs, collapses passed plans in a large campaign, cuts long perturbations, and gives each bug the command that runs it again', (t) => {
  const { results } = makeCampaign();
  const bug = { ...results[1]!, planFile: '/work/op/.kperturb/op/plans/w/intermediate-0002.yaml', configFile: '/work/op/my config.yaml' };
  const pass = results.find((r) => r.verdict === 'pass')!;
  const many = [...Array.from({ length: 25 }, (_, i) => ({ ...pass, plan: `stale-${String(i).padStart(4, '0')}`, description: 'x'.repeat(300) })), bug];
  const text = renderTerminalReport(many);
  const table = tableOf(text);
  const rows = table.split('\n').slice(2);
  t.regex(rows[0]!, /^create\s+intermediate-0002\s+bug\s+2/, 'the bug is the first row, though it came last');
  t.is(rows.filter((r) => /^create\s+stale-/.test(r)).length, 0, 'passed plans have no row of their own');
  t.regex(text, /passed \(25, not listed\): stale-0000, stale-0001, .*, … \(`kperturb report --json` lists every plan\)/);
  t.true(text.includes(`kperturb test /work/op/.kperturb/op/plans/w/intermediate-0002.yaml -c '/work/op/my config.yaml'`), text);
  // A small campaign keeps a row per plan, bugs first, the perturbation cut to 100 characters.
  const few = renderTerminalReport([{ ...pass, description: 'y'.repeat(300) }, bug]);
  const fewRows = tableOf(few).split('\n').slice(2);
  t.is(fewRows.length, 2);
  t.regex(fewRows[0]!, /intermediate-0002\s+bug/);
  t.regex(fewRows[1]!, / y{99}…$/);
});

test('alarms that differ only in generated uids (a leaked PVC bound to pvc-<uid>) are one root difference', (t) => {
  const { results } = makeCampaign();
  const leak = (uid: string) => ({
    oracle: 'end-state' as const,
    check: 'unexpected' as const,
    object: 'PersistentVolumeClaim/default/data-dc1-1',
    reference: ['<absent>'],
    test: { metadata: { name: 'data-dc1-1' }, spec: { volumeName: `pvc-${uid}` } },
    message: 'PersistentVolumeClaim/default/data-dc1-1: absent after reference runs, but exists after the test run',
  });
  const plans = ['3f1c2a9e-1b2c-4d5e-8f90-0123456789ab', 'a0b1c2d3-e4f5-4a6b-9c8d-fedcba987654', '00000000-1111-4222-8333-444444444444'].map((uid, i) => ({
    ...results[0]!,
    plan: `unobserved-000${i}`,
    alarms: [leak(uid)],
  }));
  const groups = groupAlarms(plans);
  t.is(groups.length, 1);
  t.is(groups[0]!.plans.length, 3);
  // A different value that is not a uid still tells groups apart.
  t.is(
    groupAlarms([
      ...plans,
      { ...results[0]!, plan: 'other', alarms: [{ ...leak('3f1c2a9e-1b2c-4d5e-8f90-0123456789ab'), test: { spec: { volumeName: 'manual-pv' } } }] },
    ]).length,
    2,
  );
});

test('the JSON report leads with the findings; JUnit and HTML show them and the workloads that tested nothing', (t) => {
  const { out } = makeCampaign();
  const loaded = loadResults(out);
  const report = buildJsonReport(loaded.results, loaded.sources, loaded.notes);
  t.deepEqual(Object.keys(report).slice(0, 4), ['format', 'sources', 'notes', 'findings']);
  t.is(report.summary.findings, 1);
  t.like(report.findings[0], { class: 'bug', controller: 'secret-marker-buggy', reproducer: { plan: 'intermediate-0001' } });
  t.deepEqual(
    report.findings[0]!.plans.map((p) => p.plan),
    ['intermediate-0001', 'intermediate-0002'],
  );
  const untested = [
    { controller: 'secret-marker-buggy', workload: 'upgrade', reason: 'no-plans' as const, detail: 'the planner kept no plan', advice: 'learn again' },
  ];
  const root = parseXml(renderJUnit(loaded.results, [], untested));
  t.deepEqual(junit4Problems(root), []);
  const findingsSuite = findAll(root, 'testsuite')[0]!;
  t.like(findingsSuite.attrs, { name: 'findings', tests: '2', failures: '1', errors: '1' });
  t.is(findAll(findingsSuite, 'error')[0]!.attrs.message, 'untested: the planner kept no plan');
  const html = renderHtmlReport({ ...loaded, untested, details: new Map(), generatedAt: 'now' });
  t.true(html.indexOf('<h2>Findings</h2>') < html.indexOf('<h2>Plans</h2>'), 'the findings come first');
  t.true(html.includes('2 bug verdicts -&gt; 1 finding (1 bug)'));
  t.true(html.includes('Workloads that tested nothing (not clean)'));
  const rows = html.slice(html.indexOf('<h2>Plans</h2>')).match(/badge v-[a-z-]+/g)!;
  t.deepEqual(rows.slice(0, 4), ['badge v-bug', 'badge v-bug', 'badge v-not-injected', 'badge v-pass'], 'the plan table puts bugs first');
});

test('shards merge into one report: planned workloads and results from every shard decide what is untested', (t) => {
  const { out, resultsFile } = makeCampaign();
  const doc = JSON.parse(readFileSync(resultsFile, 'utf8')) as { results: PlanResult[]; workloads?: unknown[]; shard?: unknown };
  const notInjected = (plan: string): PlanResult => ({ ...doc.results[0]!, workload: 'quiet', plan, verdict: 'not-injected', alarms: [] });
  const workloads = [{ controller: 'secret-marker-buggy', workload: 'quiet', plans: 2 }];
  const a = join(out, 'a.json');
  const b = join(out, 'b.json');
  writeFileSync(a, JSON.stringify({ ...doc, results: [notInjected('q1')], workloads, shard: { index: 0, count: 2 } }));
  writeFileSync(b, JSON.stringify({ ...doc, results: [notInjected('q2')], workloads, shard: { index: 1, count: 2 } }));
  t.deepEqual(loadResults(a).untested, [], 'one shard alone has not run every plan of the workload');
  t.deepEqual(
    loadResults([a, b]).untested.map((u) => [u.workload, u.reason]),
    [['quiet', 'not-injected']],
  );
});

test("a finding's re-runs are shown in every report, and one that did not fail again every time is flaky with the counts", (t) => {
  const { out, results, resultsFile } = makeCampaign();
  const reproducer = results[0]!;
  const rerun = (n: number, verdict: PlanResult['verdict']) => ({
    runDir: `/reruns/${n}`,
    verdict,
    ...(verdict === 'bug' ? { signature: findingSignature(reproducer) } : {}),
  });
  // Read back through results.json, as `report` reads a campaign: the re-runs are validated and kept.
  const write = (first: unknown) =>
    writeFileSync(resultsFile, JSON.stringify({ format: RESULTS_FORMAT, results: [first, ...results.slice(1)], complete: true }));
  write({ ...reproducer, reruns: { runs: [rerun(1, 'bug'), rerun(2, 'pass'), rerun(3, 'bug')], faultFree: { runDir: '/confirm/create', alarms: 0 } } });
  const loaded = loadResults(out);
  const text = renderTerminalReport(loaded.results);
  t.true(text.startsWith('2 bug verdicts -> 1 finding (1 flaky)\n'), text);
  t.true(text.includes('   not confirmed: failed again 2 of 3 re-runs of its reproducer; the fault-free run passed\n'), text);
  t.true(text.includes('   re-run 1: /reruns/1\n   re-run 2: /reruns/2\n   re-run 3: /reruns/3\n   fault-free run: /confirm/create'), text);
  const report = buildJsonReport(loaded.results, loaded.sources, loaded.notes);
  t.like(report.findings[0], { class: 'flaky', confirmation: { failedAgain: 2, runs: 3, confirmed: false, runDirs: ['/reruns/1', '/reruns/2', '/reruns/3'] } });
  const root = parseXml(renderJUnit(loaded.results, [], []));
  t.deepEqual(junit4Problems(root), []);
  const findingsSuite = findAll(root, 'testsuite')[0]!;
  t.like(findingsSuite.attrs, { name: 'findings', failures: '0', skipped: '1' });
  t.true(findAll(findingsSuite, 'system-out')[0]!.text.includes('not confirmed: failed again 2 of 3'));
  const html = renderHtmlReport({ ...loaded, details: new Map(), generatedAt: 'now' });
  t.true(html.includes('re-run 3: /reruns/3'));
  write({ ...reproducer, reruns: { runs: [{ runDir: '/reruns/1', verdict: 'maybe' }] } });
  t.throws(() => loadResults(out), { message: /reruns\.runs\[0\]/ });
});
