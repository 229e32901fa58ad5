/**
 * explore's runs settle on one window: when a later run of the exploration sizes it past the window
 * a sequence's run settled on (SizedSettleWindow; percona-server-mongodb-operator's rollback run
 * showed its 20 s mongod dial, which its sequence's run, cut short by its steps' patches, had not),
 * that sequence runs again on the sized window and every step is judged again: its steps may have
 * been judged before the controller acted. The controller is test/proxy/fixtures/dial-controller.ts,
 * dialing 2.5 s for Widget `b` only.
 */
import test from 'ava';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { explore, staleSequences } from '../../src/campaign/explore.js';
import { CampaignLayout } from '../../src/campaign/layout.js';
import { loadConfig } from '../../src/config/config.js';
import { readRunRecord } from '../../src/io/run-dir.js';
import { scratchDir } from '../_scratch-dir.js';
import { dialConfigHead, WIDGET_CRD } from './_dial-widget.js';

const widget = (name: string) => `apiVersion: test.kperturb.dev/v1\nkind: Widget\nmetadata: { name: ${name}, namespace: default }\nspec: { size: 2 }\n`;

test('a sequence whose run settled on a shorter window than a later run of the exploration sized runs again on it', async (t) => {
  const dir = scratchDir(t, 'kperturb-explore-stale-');
  writeFileSync(join(dir, 'crd.yaml'), WIDGET_CRD);
  writeFileSync(join(dir, 'seeds.yaml'), `${widget('a')}---\n${widget('b')}`);
  writeFileSync(
    join(dir, 'kperturb.yaml'),
    `${dialConfigHead({ DIAL_MS: '2500', DIAL_ONLY: 'b' })}seeds: [seeds.yaml]
`,
  );
  const config = loadConfig(join(dir, 'kperturb.yaml'));
  const lines: string[] = [];
  const out = join(dir, 'out');
  // Widget a's sequence first: its controller answers at once, and its run settles on the default second.
  const { results } = await explore(config, {
    out,
    log: (l) => void lines.push(l),
    seed: 1,
    maxSteps: 2,
    sequences: ['explore-widget-a-1', 'explore-widget-b-3'],
  });
  const log = lines.join('\n');
  t.regex(log, /later runs sized the settle window to \d+ ms, past the window 1 sequence\(s\) settled on/);
  const layout = new CampaignLayout(out, 'dial');
  const [a, b] = ['explore-widget-a-1', 'explore-widget-b-3'].map((s) => readRunRecord(join(layout.referenceRun(s, 1), 'run.json')));
  t.true(b!.quietMs! > 2500, log);
  t.is(a!.quietMs, b!.quietMs, 'the run judged is the one run again on the sized window');
  t.deepEqual(
    results.sequences.map((s) => s.steps.map((st) => st.verdict)),
    [['ok'], ['ok']],
    log,
  );
});

test('the stale sequences are those whose run settled on less than the sized window', (t) => {
  const runs = [
    { sequence: { name: 's1' }, quietMs: 1000 },
    { sequence: { name: 's2' }, quietMs: 10_742 },
    { sequence: { name: 's3' }, quietMs: 25_017 },
  ];
  t.deepEqual(staleSequences(runs, 25_017), ['s1', 's2']);
  t.deepEqual(staleSequences(runs, 0), []);
});
