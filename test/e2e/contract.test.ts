/**
 * Faults beyond the API contract, in a whole campaign: secret-marker's operator (TypeScript,
 * client-node informers) lists with resourceVersion unset, a consistent read, so a stale view of it
 * goes beyond what any real API server does. The plan's result and every report must say so; with
 * `--contract strict` the same plan stays within the contract and is judged afresh (its kept verdict
 * was made under the other mode).
 */
import test from 'ava';
import { ExampleCampaign } from './_campaign.js';
import { test as runPlans } from '../../src/campaign/campaign.js';
import { renderTerminalReport } from '../../src/report/terminal.js';

test.serial('a stale plan on a client-node operator is marked beyond the API contract, and --contract strict keeps it within', async (t) => {
  const campaign = new ExampleCampaign('secret-marker', 'fixed');
  const { config, out, planned } = await campaign.prepare();
  const stale = planned.plans.find((p) => p.spec.pattern === 'stale-state');
  if (!stale) return t.fail(`no stale-state plan was generated (patterns: ${planned.plans.map((p) => p.spec.pattern).join(', ')})`);
  const log = () => undefined;

  const [lenient] = await runPlans(config, [stale], { out, log });
  t.true(lenient!.injected, `the stale restart happened: ${lenient!.error ?? ''}`);
  t.deepEqual(lenient!.beyondContract, ['a LIST with resourceVersion unset (a consistent read) answered from a stale view']);
  const report = renderTerminalReport([lenient!]);
  t.regex(report, new RegExp(`${stale.metadata.name}\\s+${lenient!.verdict}\\*`), report);

  const [strict] = await runPlans(config, [stale], { out, log, contract: 'strict' });
  t.not(strict!.runDir, undefined);
  t.true(strict!.injected);
  t.is(strict!.beyondContract, undefined, 'within the contract: consistent reads were answered live');
  t.is(strict!.inputs?.contract, 'strict', 'judged afresh under strict, not kept from the lenient run');
});
