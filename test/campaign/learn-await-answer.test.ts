/**
 * learn on a learned window: a run whose controller, once settled, has let two or more changes of
 * its custom resource's spec go by without a request waits for its next request (RunOptions.awaitAnswer,
 * src/coordinator/unanswered.ts). A busy controller (a long silent dial) then shows its whole silence
 * and a write, which sizes the window (SizedSettleWindow.grow); a stuck one waits to the settle
 * timeout once, and later runs do not wait for it. The controller is test/proxy/fixtures/dial-controller.ts.
 */
import test from 'ava';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { learn } from '../../src/campaign/campaign.js';
import { CampaignLayout } from '../../src/campaign/layout.js';
import { loadConfig } from '../../src/config/config.js';
import type { RunRecord } from '../../src/model/results.js';
import { readEndState } from '../../src/io/run-dir.js';
import { scratchDir } from '../_scratch-dir.js';
import { dialConfigHead, WIDGET_CRD } from './_dial-widget.js';

/**
 * The dial controller's campaign: workload `w` creates Widget `w` (and settles, with `settleFirst`)
 * and changes its spec twice; no settle.quietMs, so the runs settle on the default 1 s window and
 * learn their own.
 */
function campaign(dir: string, env: Record<string, string>, referenceRuns: number, timeoutSeconds: number, settleFirst = false) {
  writeFileSync(join(dir, 'crd.yaml'), WIDGET_CRD);
  writeFileSync(join(dir, 'widget.yaml'), 'apiVersion: test.kperturb.dev/v1\nkind: Widget\nmetadata: { name: w, namespace: default }\nspec: { size: 1 }\n');
  const size = (n: number) => `      - patch: { key: Widget/default/w, type: merge, patch: { spec: { size: ${n} } } }\n`;
  const file = join(dir, 'kperturb.yaml');
  writeFileSync(
    file,
    `${dialConfigHead(env)}workloads:
  w:
    steps:
      - apply: widget.yaml
${settleFirst ? '      - settle: { timeoutSeconds: 10 }\n' : ''}${size(2)}${size(3)}referenceRuns: ${referenceRuns}
settle: { timeoutSeconds: ${timeoutSeconds} }
`,
  );
  return loadConfig(file);
}

const recordOf = (runDir: string) => JSON.parse(readFileSync(join(runDir, 'run.json'), 'utf8')) as RunRecord;

test('a run whose controller sits in a silent dial across the steps waits for its next request, and the window is sized from the silence', async (t) => {
  // Each change is dialed for 3 s, silent: the run settles (1 s) inside the first dial, and without
  // the wait it would end there, its silence never ended by a write.
  const dir = scratchDir(t, 'kperturb-await-answer-');
  const config = campaign(dir, { DIAL_MS: '3000' }, 1, 20);
  const lines: string[] = [];
  const [learned] = await learn(config, { out: join(dir, 'out'), log: (l) => void lines.push(l) });
  const log = lines.join('\n');
  t.regex(log, /the controller has sent nothing for \d+ ms, though changes of a custom resource's spec were shown to it: waiting for its next request/);
  t.regex(log, /it sent a request after \d+ ms of silence; settling again/);
  // Measured from the first change it let go by (planner/quiet-window.ts), not from the second.
  t.regex(
    log,
    /silent for \d+ ms, from the first of 2 changes of a custom resource's spec it let go by \(busy\), and then sent patch Widget\/default\/w.* so runs settle after \d+ ms of quiet from now on/,
  );
  t.true((learned!.sizedQuietMs ?? 0) > 1000, log);
  t.true(
    learned!.runs.every((r) => r.ok),
    log,
  );
  const runDir = new CampaignLayout(join(dir, 'out'), 'dial').referenceRun('w', 1);
  t.is(recordOf(runDir).quietMs, learned!.sizedQuietMs, 'the run kept is the one run again on the sized window');
  // Its end state has the controller's answer to the last change.
  const widget = readEndState(join(runDir, 'end-state.json')).objects['Widget/default/w'] as { status?: { observedGeneration?: number; size?: number } };
  t.deepEqual(widget.status, { observedGeneration: 3, size: 3 }, log);
});

test('a stuck controller is waited for to the settle timeout once; later runs do not wait, and nothing is sized', async (t) => {
  // Its first change is answered after 0.3 s, before the step settles; every later dial never ends.
  const dir = scratchDir(t, 'kperturb-await-stuck-');
  const config = campaign(dir, { DIAL_MS: '300', DIAL_STUCK: '1' }, 2, 4, true);
  const lines: string[] = [];
  const [learned] = await learn(config, { out: join(dir, 'out'), log: (l) => void lines.push(l) });
  const log = lines.join('\n');
  const layout = new CampaignLayout(join(dir, 'out'), 'dial');
  const [first, second] = [1, 2].map((n) => recordOf(layout.referenceRun('w', n)));
  t.false(first!.awaitedAnswer?.answered ?? true, log);
  t.true(first!.settled, 'the wait does not make a run unsettled');
  t.is(second!.awaitedAnswer, undefined, log);
  t.regex(log, /the controller sent nothing for \d+ ms, to the settle timeout, .*stuck, not busy; later runs do not wait for it/);
  t.is(learned!.sizedQuietMs, undefined);
});

test('a window set in kperturb.yaml is never waited past', async (t) => {
  const dir = scratchDir(t, 'kperturb-await-given-');
  const loaded = campaign(dir, { DIAL_MS: '300', DIAL_STUCK: '1' }, 1, 4, true);
  const config = { ...loaded, settle: { quietMs: 1000, timeoutSeconds: 4, quietMsGiven: true } };
  await learn(config, { out: join(dir, 'out'), log: () => undefined });
  t.is(recordOf(new CampaignLayout(join(dir, 'out'), 'dial').referenceRun('w', 1)).awaitedAnswer, undefined);
});
