import test from 'ava';
import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { makeCampaign } from './_fixture.js';
import { RESULTS_FORMAT } from '../../src/model/results.js';
import { hangBound } from '../_hang-bound.js';

const CLI = fileURLToPath(new URL('../../../bin/kperturb.js', import.meta.url));
const run = (args: string[]) => spawnSync(process.execPath, [CLI, ...args], { encoding: 'utf8', timeout: hangBound(30_000) });

test('report: table on stdout, JUnit and HTML files written, exit 1 because the results hold bugs', (t) => {
  const { out } = makeCampaign();
  const junit = join(out, 'ci', 'junit.xml');
  const html = join(out, 'report.html');
  const r = run(['report', out, '--junit', junit, '--html', html]);
  t.is(r.status, 1, r.stderr);
  t.true(r.stdout.includes('4 plans: 2 found bugs, 1 passed, 1 not injected'), r.stdout);
  t.true(readFileSync(junit, 'utf8').startsWith('<?xml'));
  t.true(readFileSync(html, 'utf8').includes('⚡ FAULT'));
  const json = run(['report', out, '--json']);
  t.is(JSON.parse(json.stdout).summary.bug, 2);
});

test('report: a truncated results.json exits 2 naming the file, without a stack trace', (t) => {
  const { resultsFile } = makeCampaign();
  writeFileSync(resultsFile, readFileSync(resultsFile, 'utf8').slice(0, 300));
  const r = run(['report', resultsFile]);
  t.is(r.status, 2);
  t.true(r.stderr.startsWith(`kperturb: ${resultsFile}: a complete JSON document`), r.stderr);
  t.false(/\n\s+at /.test(r.stderr), r.stderr);
});

test('diff: exit 1 with the differences between two runs, 0 for a run against itself, 2 for a non-run', (t) => {
  const { root, results } = makeCampaign();
  const ref = join(root, 'learn', 'create', 'ref-1');
  const d = run(['diff', ref, results[0]!.runDir]);
  t.is(d.status, 1, d.stderr);
  t.true(d.stdout.includes('Secret/default/db1-tls: exists in the reference run, but is absent in the test run'), d.stdout);
  t.is(run(['diff', ref, ref]).status, 0);
  const bad = run(['diff', ref, root]);
  t.is(bad.status, 2);
  t.true(bad.stderr.includes(`${root}: a kperturb run directory`), bad.stderr);
});

test('report: colour follows NO_COLOR, FORCE_COLOR and --no-color; off a terminal there is none by default', (t) => {
  const { out } = makeCampaign();
  const env = (extra: Record<string, string>) => {
    const e: Record<string, string | undefined> = { ...process.env, ...extra };
    if (!('NO_COLOR' in extra)) delete e.NO_COLOR;
    if (!('FORCE_COLOR' in extra)) delete e.FORCE_COLOR;
    return e;
  };
  const report = (args: string[], extra: Record<string, string>) =>
    spawnSync(process.execPath, [CLI, 'report', out, ...args], { encoding: 'utf8', timeout: hangBound(30_000), env: env(extra) }).stdout;
  t.false(report([], {}).includes('\x1b['), 'a pipe gets plain text');
  t.true(report([], { FORCE_COLOR: '1' }).includes('\x1b[31mbug'));
  t.false(report(['--no-color'], { FORCE_COLOR: '1' }).includes('\x1b['));
  t.false(report([], { FORCE_COLOR: '1', NO_COLOR: '1' }).includes('\x1b['));
});

test('--quiet and --verbose: global options, also after the command; both at once is bad input', (t) => {
  const { out } = makeCampaign();
  const junit = join(out, 'quiet.xml');
  const quiet = run(['report', out, '--junit', junit, '--quiet']);
  t.is(quiet.status, 1);
  t.false(quiet.stderr.includes('JUnit XML written'), 'information is dropped');
  t.true(quiet.stdout.includes('4 plans'), 'the report itself is the output');
  const both = run(['--quiet', '--verbose', 'report', out]);
  t.is(both.status, 2);
  t.true(both.stderr.includes('either --quiet or --verbose'), both.stderr);
});

test('report: a workload that tested nothing is reported untested with what to do, and exits 3 unless --allow-untested', (t) => {
  const { out, resultsFile, results } = makeCampaign();
  const doc = JSON.parse(readFileSync(resultsFile, 'utf8')) as { results: Array<{ verdict: string }>; workloads?: unknown[] };
  // Only the passed plan is kept: no bug, so the untested workload decides the exit code.
  doc.results = doc.results.filter((r) => r.verdict === 'pass');
  doc.workloads = [
    { controller: results[0]!.controller, workload: 'create', plans: 3 },
    { controller: results[0]!.controller, workload: 'upgrade', plans: 0, emptiedBy: 'deterministic', referenceRuns: 2 },
  ];
  writeFileSync(resultsFile, JSON.stringify(doc));
  const r = run(['report', out]);
  t.is(r.status, 3, r.stderr);
  t.true(r.stdout.startsWith('0 bug verdicts -> 0 findings\n'), r.stdout);
  t.true(r.stdout.includes('Untested (1): these workloads tested nothing, so they are not clean:'), r.stdout);
  t.true(r.stdout.includes('upgrade: the planner kept no plan: its 2 reference runs disagreed on every trigger'), r.stdout);
  t.true(r.stdout.includes('what to do: learn again with more reference runs (referenceRuns: 3 or more'), r.stdout);
  t.is(run(['report', out, '--allow-untested']).status, 0);
  const json = JSON.parse(run(['report', out, '--json']).stdout) as { untested: Array<{ workload: string; reason: string }> };
  t.deepEqual(
    json.untested.map((u) => [u.workload, u.reason]),
    [['upgrade', 'no-plans']],
  );
});

test('report: bug verdicts whose finding its re-runs did not confirm are not bugs found: exit 0, and 1 again once confirmed', (t) => {
  const { results, resultsFile } = makeCampaign();
  const signature = { oracle: 'end-state', divergence: { kind: 'missing', verb: 'create', object: 'Secret/default/db1-tls' } };
  const withReruns = (verdicts: string[]) =>
    writeFileSync(
      resultsFile,
      JSON.stringify({
        format: RESULTS_FORMAT,
        complete: true,
        results: [
          {
            ...results[0],
            reruns: { runs: verdicts.map((verdict, i) => ({ runDir: `/reruns/${i}`, verdict, signature })), faultFree: { runDir: '/c', alarms: 0 } },
          },
          ...results.slice(1),
        ],
      }),
    );
  withReruns(['bug', 'pass', 'pass']);
  const flaky = run(['report', resultsFile]);
  t.true(flaky.stdout.startsWith('2 bug verdicts -> 1 finding (1 flaky)'), flaky.stdout);
  t.is(flaky.status, 0, flaky.stderr);
  withReruns(['bug', 'bug', 'bug']);
  const confirmed = run(['report', resultsFile]);
  t.true(confirmed.stdout.startsWith('2 bug verdicts -> 1 finding (1 bug)'), confirmed.stdout);
  t.is(confirmed.status, 1, confirmed.stderr);
});
