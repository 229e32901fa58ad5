/**
 * The demo is a pipeline per example: the first bug shows while the Go examples' one-time build is
 * still running (issue 16: a fresh clone's `npm start` shows a bug within 90 s), and the Go examples
 * run once it is done, in the results' usual order.
 */
import test from 'ava';
import { buildGoExamples, runDemo } from '../../src/campaign/demo.js';
import type { PlanResult } from '../../src/model/results.js';
import { hangBound } from '../_hang-bound.js';
import { scratchDir } from '../_scratch-dir.js';
import { renderDemoTable } from '../../src/report/demo-table.js';

test('a bug of a TypeScript example is reported while the Go examples are still building; the Go ones run after', async (t) => {
  // Four examples learned, planned and tested, and the Go build between them: about 100 s on an idle
  // 2-core machine, more beside other tests, and no assertion before the end (AVA's bound is 120 s of
  // silence). A bound, not a wait: the test ends when the demo does.
  t.timeout(hangBound(600_000));
  const out = scratchDir(t, 'kperturb-demo-');
  const finished: Array<{ result: PlanResult; buildDone: boolean }> = [];
  let buildDone = false;
  let releaseBuild!: () => void;
  const buildReleased = new Promise<void>((resolve) => (releaseBuild = resolve));
  const results = await runDemo({
    out,
    log: () => undefined,
    confirm: false,
    confirmRuns: 0,
    recovery: false,
    selection: { 'secret-marker': 'intermediate-state', 'snapshot-copy': 'error-path' },
    // The build ends only once a bug was reported (or every TypeScript plan has finished).
    buildGoExamples: async (log, signal) => {
      await buildReleased;
      await buildGoExamples(log, signal);
      buildDone = true;
    },
    progress: {
      begin: () => undefined,
      planStarted: () => undefined,
      planFinished: (result) => {
        finished.push({ result, buildDone });
        if (result.verdict === 'bug' || finished.filter((f) => f.result.controller.startsWith('secret-marker')).length === 8) releaseBuild();
      },
    },
  });
  const firstBug = finished.find((f) => f.result.verdict === 'bug');
  t.truthy(firstBug, 'a bug was found');
  t.false(firstBug!.buildDone, 'the first bug came before the Go build ended');
  t.regex(firstBug!.result.controller, /^secret-marker-buggy$/);
  // Every Go example's plan ran after its binary's build.
  const goPlans = finished.filter((f) => f.result.controller.startsWith('snapshot-copy'));
  t.true(goPlans.length > 0);
  t.true(goPlans.every((f) => f.buildDone));
  // Results keep the examples' order (by directory), whatever order they finished in.
  t.deepEqual(
    results.examples.map((e) => e.example),
    ['secret-marker-buggy', 'secret-marker-fixed', 'snapshot-copy-buggy', 'snapshot-copy-fixed'],
  );
  t.is(results.examples.find((e) => e.example === 'snapshot-copy-buggy')!.bugs > 0, true);
  t.is(results.examples.find((e) => e.example === 'snapshot-copy-fixed')!.bugs, 0);
});

test("--only an example of Acto's classes also explores it: a row of its own whose findings are the planted bug, confirmed", async (t) => {
  // label-removal's planted bug (a label removed from the CR stays on the children) shows in every run
  // of its hand-written workload, so its patterns find nothing; explore finds it. About 80 s on 2 cores.
  t.timeout(hangBound(600_000));
  const results = await runDemo({
    out: scratchDir(t, 'kperturb-demo-explore-'),
    log: () => undefined,
    confirm: false,
    confirmRuns: 1,
    recovery: false,
    only: ['label-removal-buggy'],
  });
  t.deepEqual(
    results.examples.map((e) => [e.example, e.workload]),
    [
      ['label-removal-buggy', 'remove-label'],
      ['label-removal-buggy', 'explore'],
    ],
  );
  const explored = results.examples[1]!;
  t.is(explored.error, undefined);
  t.deepEqual(
    explored.explore?.findings.map((f) => [f.class, f.oracle, f.property, f.confirmation?.failedAgain, f.confirmation?.runs]),
    [['bug', 'consistency', 'spec.additionalLabels', 1, 1]],
  );
  t.is(explored.bugs, explored.explore!.alarms);
  t.regex(renderDemoTable(results), /label-removal-buggy\s+explore\s+\d+ sequences\s+\d+ alarms\s+1\s/);
});
