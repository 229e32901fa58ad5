/**
 * End to end on the embedded cluster: the real example operator (TypeScript, client-node informers)
 * behind the real proxy, learn -> plan -> test. The buggy variant must be caught by the plan that
 * crashes it between the status marker and the Secret; its correct twin must pass every plan.
 */
import test from 'ava';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadConfig } from '../../src/config/config.js';
import { learn, plan, test as runPlans } from '../../src/campaign/campaign.js';

const fixture = (variant: string) =>
  fileURLToPath(new URL(`../../../fixtures/controllers/secret-marker/${variant}/kperturb.yaml`, import.meta.url));

async function campaign(variant: string) {
  const config = loadConfig(fixture(variant));
  const out = mkdtempSync(join(tmpdir(), `kperturb-e2e-${variant}-`));
  const log = () => undefined;
  const learned = await learn(config, { out, log });
  const failed = learned.flatMap((l) => l.runs).filter((r) => !r.ok);
  if (failed.length > 0) throw new Error(`reference runs failed: ${failed.map((f) => f.error).join('; ')}`);
  const [planned] = await plan(config, { out, log });
  const results = await runPlans(config, planned!.plans, { out, log });
  return { planned: planned!, results };
}

test.serial('the buggy secret-marker operator is caught by an intermediate-state plan', async (t) => {
  const { planned, results } = await campaign('buggy');
  t.true(planned.plans.length >= 3, `expected several plans, got ${planned.plans.length}`);
  for (const r of results) t.true(r.injected, `${r.plan} (${r.description}) was not injected: ${r.verdict} ${r.error ?? ''}`);
  const bugs = results.filter((r) => r.verdict === 'bug');
  t.true(bugs.length >= 1, `no bug found: ${JSON.stringify(results.map((r) => [r.plan, r.verdict]))}`);
  const markerCrash = bugs.find((r) => /patches Database\/default\/db1 status \(1st time\)/.test(r.description));
  t.truthy(markerCrash, 'the crash right after the status marker must be the one that finds the bug');
  const alarm = markerCrash!.alarms.find((a) => a.object === 'Secret/default/db1-tls');
  t.truthy(alarm, `an alarm must name the Secret the bug leaves missing: ${JSON.stringify(markerCrash!.alarms)}`);
  t.regex(alarm!.message, /absent after the test run|0 time/);
});

test.serial('the fixed twin passes every plan', async (t) => {
  const { results } = await campaign('fixed');
  t.true(results.length >= 3);
  for (const r of results) {
    t.true(r.injected, `${r.plan} not injected`);
    t.is(r.verdict, 'pass', `${r.plan} (${r.description}): ${JSON.stringify(r.alarms)}`);
  }
});
