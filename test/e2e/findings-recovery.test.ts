/**
 * Recovery on a real campaign (issue 36, item 6): the decommission example's planted bug (the
 * operator deletes a removed node's claim only when it sees the node's pod terminating; a watch that
 * missed it leaks the claim) is not healed by time, a restart or re-sending the scale-down: the
 * restarted operator never sees a terminating pod. Rolling the data center back to the 2 nodes it
 * was applied with brings the node back onto its leaked claim, as in a healthy run rolled back the
 * same way: its recovery is `rollback` (secret-marker's, which nothing heals, is in
 * findings-confirmation.test.ts).
 */
import { ExampleCampaign, describeResults, exampleTest } from './_campaign.js';
import { test as runPlans } from '../../src/campaign/campaign.js';
import { groupFindings } from '../../oracles/findings.js';
import { freePort } from '../_free-port.js';

const campaign = new ExampleCampaign('decommission', 'buggy');
/** Hiding the removed node's pod from its creation to its deletion, then a relist: the claim leaks. */
const LEAKING_PLAN =
  /hide every change of Pod\/default\/dc1-1 from the controller from when Pod\/default\/dc1-1 is created \(1st time\) until Pod\/default\/dc1-1 is deleted/;

exampleTest('the leaked claim is recovered by rolling the data center back, after time, a restart and re-sending the scale-down did not', {}, async (t) => {
  const { config, out, planned } = await campaign.prepare();
  const plan = planned.plans.find((p) => p.spec.pattern === 'unobserved-state' && LEAKING_PLAN.test(p.spec.description));
  t.truthy(plan, `the plan that hides the removed pod: ${planned.plans.map((p) => p.spec.description).join('\n')}`);
  const lines: string[] = [];
  // A fixed port of the controller's (controller.ports: a lock per port, machine-wide): the rollback
  // reference is a run of its own, which must not wait for the lock the recovery run holds.
  const ports = [await freePort()];
  const results = await runPlans({ ...config, controller: { ...config.controller, ports } }, [plan!], { out, log: (l) => lines.push(l), recovery: true });
  t.is(results[0]!.verdict, 'bug', describeResults(results));
  const [finding] = groupFindings(results);
  t.log(lines.filter((l) => l.startsWith('recover')).join('\n'));
  t.is(finding!.recovery, 'rollback', JSON.stringify(finding!.recoveryRun));
  t.deepEqual(
    finding!.recoveryRun!.attempts.map((a) => `${a.strategy} ${a.alarms > 0 ? 'broken' : 'recovered'}`),
    ['time broken', 'restart broken', 're-apply broken', 'rollback recovered'],
  );
});
