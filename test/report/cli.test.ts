import test from 'ava';
import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { makeCampaign } from './_fixture.js';

const CLI = fileURLToPath(new URL('../../../bin/kperturb.js', import.meta.url));
const run = (args: string[]) => spawnSync(process.execPath, [CLI, ...args], { encoding: 'utf8', timeout: 30_000 });

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
