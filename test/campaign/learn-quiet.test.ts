/**
 * learn: the first reference run of a workload settles on the configured quiet window (1 s by
 * default); later runs settle on the window the runs before them learned (planner/quiet-window.ts),
 * as test runs do, unless kperturb.yaml sets settle.quietMs.
 */
import test from 'ava';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { learn } from '../../src/campaign/campaign.js';
import { CampaignLayout } from '../../src/campaign/layout.js';
import { loadConfig } from '../../src/config/config.js';
import { readTrace } from '../../src/io/trace-io.js';
import type { RunRecord } from '../../src/model/results.js';
import { learnedQuietMs, SilenceMeter } from '../../planner/index.js';
import { writeMirrorConfig } from './_mirror-campaign.js';

/** The mirror controller's campaign with 3 reference runs and `quietMs` set in kperturb.yaml, or not (the default, 1 s). */
function campaign(quietMs?: number) {
  const dir = mkdtempSync(join(tmpdir(), 'kperturb-learn-quiet-'));
  const written = loadConfig(writeMirrorConfig(dir, ['a']));
  const settle = quietMs === undefined ? { quietMs: 1000, timeoutSeconds: 20, quietMsGiven: false } : { quietMs, timeoutSeconds: 20, quietMsGiven: true };
  return { dir, config: { ...written, referenceRuns: 3, settle }, out: join(dir, 'out') };
}

const recordOf = (runDir: string) => JSON.parse(readFileSync(join(runDir, 'run.json'), 'utf8')) as RunRecord;

async function silenceOf(runDir: string): Promise<number> {
  const meter = new SilenceMeter(1000);
  for await (const e of readTrace(join(runDir, 'controller.trace.jsonl'))) meter.add(e);
  return meter.result();
}

test('later reference runs settle on the window the runs before them learned', async (t) => {
  const { dir, config, out } = campaign();
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const lines: string[] = [];
  await learn(config, { out, log: (l) => void lines.push(l) });
  const layout = new CampaignLayout(out, 'mirror');
  const runs = [1, 2, 3].map((n) => layout.referenceRun('w', n));
  t.is(recordOf(runs[0]!).quietMs, 1000, 'the first: the default window');
  const silences = [await silenceOf(runs[0]!)];
  t.is(recordOf(runs[1]!).quietMs, learnedQuietMs(silences, 1000), 'the second: learned from the first');
  silences.push(await silenceOf(runs[1]!));
  t.is(recordOf(runs[2]!).quietMs, learnedQuietMs(silences, 1000), 'the third: learned from both');
  t.true(recordOf(runs[1]!).quietMs! < 1000, `the mirror controller acts within a few ms: ${lines.join('\n')}`);
});

test('a window set in kperturb.yaml is every reference run’s', async (t) => {
  const { dir, config, out } = campaign(600);
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  await learn({ ...config, referenceRuns: 2 }, { out, log: () => undefined });
  const layout = new CampaignLayout(out, 'mirror');
  t.deepEqual(
    [1, 2].map((n) => recordOf(layout.referenceRun('w', n)).quietMs),
    [600, 600],
  );
});
