/**
 * learn adds reference runs while they disagree: when the planner's `deterministic` stage would keep
 * fewer than half of its candidates, another run is made, until a majority of the runs agree
 * (planner/triggers.ts) or there are MAX_REFERENCE_RUNS; `plan` then plans from all of them.
 */
import test from 'ava';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { learn, plan } from '../../src/campaign/campaign.js';
import { CampaignLayout } from '../../src/campaign/layout.js';
import { loadConfig } from '../../src/config/config.js';
import { writeMirrorConfig } from './_mirror-campaign.js';
import { hangBound } from '../_hang-bound.js';
import { removeIfPassed } from '../_scratch-dir.js';

/** The mirror controller, every second start of which also writes echo-<i>-src-<x> ConfigMaps: runs 1 and 2 disagree, run 3 sides with run 1. */
function disagreeingCampaign(referenceRuns: number) {
  const dir = mkdtempSync(join(tmpdir(), 'kperturb-learn-majority-'));
  const file = writeMirrorConfig(dir, ['a', 'b', 'c']);
  const counter = join(dir, 'starts');
  writeFileSync(
    file,
    readFileSync(file, 'utf8').replace(
      /^(controller: \{ command: .*), args: (\[.*\]) \}$/m,
      `$1, args: $2, env: { MIRROR_START_COUNTER: ${JSON.stringify(counter)} } }`,
    ),
  );
  const config = { ...loadConfig(file), referenceRuns };
  return { dir, config, out: join(dir, 'out') };
}

test('reference runs that disagree on most triggers get another run, and the plans come from the majority', async (t) => {
  // Three reference runs and a plan, with no result before the end (AVA's bound is 120 s of silence).
  t.timeout(hangBound(120_000));
  const { dir, config, out } = disagreeingCampaign(2);
  t.teardown(() => removeIfPassed(t, dir));
  const lines: string[] = [];
  const [learned] = await learn(config, { out, log: (l) => void lines.push(l) });
  t.deepEqual(
    learned!.runs.map((r) => [r.name, r.ok]),
    [
      ['ref-1', true],
      ['ref-2', true],
      ['ref-3', true],
    ],
    lines.join('\n'),
  );
  t.true(lines.some((l) => /the 2 reference runs disagree on most triggers; one more run, for a majority/.test(l)));
  const layout = new CampaignLayout(out, 'mirror');
  t.false(existsSync(layout.referenceRun('w', 4)), 'three runs made a majority');
  const [planned] = await plan(config, { out, log: () => undefined });
  const pruning = JSON.parse(readFileSync(join(planned!.dir, 'pruning.json'), 'utf8')) as { referenceRuns: unknown[] };
  t.is(pruning.referenceRuns.length, 3);
  const creates = planned!.plans.flatMap((p) => p.spec.faults.flatMap((f) => ('after' in f && f.after ? [f.after.key] : [])));
  // Plans on the majority's own writes (which of the mirrors keep a trigger depends on the order the
  // runs made them in, which load may change) and none on the odd run's.
  t.true(
    creates.some((k) => k.startsWith('ConfigMap/default/mirror-src-')),
    JSON.stringify(creates),
  );
  t.false(
    creates.some((k) => k.startsWith('ConfigMap/default/echo-')),
    'the odd run out names no trigger',
  );
});

test('runs that agree are not repeated', async (t) => {
  t.timeout(hangBound(120_000));
  const { dir, config, out } = disagreeingCampaign(3);
  t.teardown(() => removeIfPassed(t, dir));
  const [learned] = await learn(config, { out, log: () => undefined });
  t.is(learned!.runs.length, 3, 'runs 1 and 3 are a majority of three already');
});
