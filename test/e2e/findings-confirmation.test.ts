/**
 * Findings confirmed by default (issue 36, item 2) on a real campaign: the secret-marker example's
 * planted bug (its status marker written before the Secret; a crash right after the marker leaves the
 * Secret missing for good) found by one plan is re-run K times on fresh clusters by `test`, fails
 * again every time with the same signature while the fault-free run passes, and so is a confirmed
 * bug, with its re-runs' directories in results.json and the reproducer's verdict.json. Then
 * recovery is tried on it (issue 36, item 6): nothing brings the Secret back (the restarted operator
 * trusts its marker), so its recovery is `none`, after all four strategies were tried in order.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ExampleCampaign, describeResults, exampleTest } from './_campaign.js';
import { test as runPlans } from '../../src/campaign/campaign.js';
import { groupFindings } from '../../oracles/findings.js';
import type { PlanResult, ResultsFile } from '../../src/model/results.js';

const campaign = new ExampleCampaign('secret-marker', 'buggy');
const CATCHING_PLAN = /patches Database\/default\/db1 status \(1st time\)/;

exampleTest('the planted bug found by one plan is re-run K times, fails again each time, and is a confirmed bug that nothing recovers', {}, async (t) => {
  const { config, out, planned } = await campaign.prepare();
  const plan = planned.plans.find((p) => p.spec.pattern === 'intermediate-state' && CATCHING_PLAN.test(p.spec.description));
  t.truthy(plan, 'the plan that crashes the controller right after its marker');
  const lines: string[] = [];
  const results = await runPlans(config, [plan!], { out, log: (l) => lines.push(l), confirmRuns: 2, recovery: true });
  t.is(results[0]!.verdict, 'bug', describeResults(results));
  const [finding] = groupFindings(results);
  t.is(finding!.class, 'bug', finding!.why);
  t.like(finding!.confirmation, { failedAgain: 2, runs: 2, confirmed: true, faultFree: { passed: true } });
  for (const dir of finding!.confirmation!.runDirs) t.true(existsSync(join(dir, 'run.json')), `${dir} holds the re-run`);
  t.true(
    lines.some((l) => /^confirm secret-marker-buggy\/\S+ finding 1\/1 \[re-run 2\/2\]/.test(l)),
    'each re-run says so in the log',
  );
  const written = JSON.parse(readFileSync(join(out, config.name, 'results.json'), 'utf8')) as ResultsFile;
  t.like(written.findings?.[0], { class: 'bug', confirmation: { failedAgain: 2, runs: 2 } });
  const verdict = JSON.parse(readFileSync(join(results[0]!.runDir, 'verdict.json'), 'utf8')) as PlanResult;
  t.is(verdict.reruns?.runs.length, 2, 'a kept verdict keeps its re-runs: the next `test` does not re-run them');
  // Recovery: the restarted operator trusts the marker, so neither time, nor another restart, nor
  // re-sending the version patch brings the Secret; rolling back to the database as first applied
  // does not either: the marker stays set. State that needs a human.
  t.log(lines.filter((l) => l.startsWith('recover')).join('\n'));
  t.is(finding!.recovery, 'none', JSON.stringify(finding!.recoveryRun));
  t.deepEqual(
    finding!.recoveryRun!.attempts.map((a) => a.strategy),
    ['time', 'restart', 're-apply', 'rollback'],
  );
  t.true(finding!.recoveryRun!.before > 0, 'the run showed the missing Secret before any attempt');
});
