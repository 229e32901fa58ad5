/**
 * A quiet window the reference runs show too short is said at `learn` and `plan` time: the controller
 * was silent for at least the window, with nothing new shown to it, and then wrote (a requeue after a
 * delay). A run can settle in such a silence and read its end state before the write; learning only
 * ever shortens the window, so only the user can lengthen it.
 */
import test from 'ava';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { plan } from '../../src/campaign/campaign.js';
import { CampaignLayout } from '../../src/campaign/layout.js';
import { validateConfig } from '../../src/config/config.js';
import { TRACE_FORMAT } from '../../src/model/trace.js';
import { useSecretHashKeyFile } from '../../src/io/secret-hash-key.js';
import { removeIfPassed } from '../_scratch-dir.js';

function campaign(settle?: { quietMs: number }) {
  const dir = mkdtempSync(join(tmpdir(), 'kperturb-settle-window-'));
  const doc = {
    apiVersion: 'kperturb.dev/v1',
    kind: 'ControllerUnderTest',
    metadata: { name: 'x' },
    controller: { command: 'true' },
    workloads: { w: { steps: [{ sleep: 0 }] } },
    ...(settle ? { settle } : {}),
  };
  return { dir, file: join(dir, 'kperturb.yaml'), config: validateConfig(doc, join(dir, 'kperturb.yaml')), out: join(dir, 'out') };
}

/** A reference run's controller trace: a list and its answer, then `pauseMs` of silence and a patch of `key` (or none). */
function writeReference(out: string, n: number, pauseMs: number, key = 'ConfigMap/default/out'): string {
  const layout = new CampaignLayout(out, 'x');
  const runDir = layout.referenceRun('w', n);
  mkdirSync(runDir, { recursive: true });
  // As learn leaves it: the key the runs' Secret values are hashed with, beside them.
  useSecretHashKeyFile(layout.secretHashKeyFile);
  const events = [
    { type: 'header', seq: 0, ts: 1000, format: TRACE_FORMAT, source: 'controller' },
    { type: 'request', seq: 1, ts: 1000, id: 1, incarnation: 1, method: 'GET', path: '/api/v1/configmaps', query: {}, verb: 'list' },
    { type: 'response', seq: 2, ts: 1010, id: 1, status: 200, durationMs: 10 },
    {
      type: 'request',
      seq: 3,
      ts: 1010 + pauseMs,
      id: 2,
      incarnation: 1,
      method: 'PATCH',
      path: '/api/v1/namespaces/default/configmaps/out',
      query: {},
      verb: 'patch',
      key,
    },
    { type: 'response', seq: 4, ts: 1020 + pauseMs, id: 2, status: 200, durationMs: 10 },
  ];
  writeFileSync(join(runDir, 'controller.trace.jsonl'), events.map((e) => JSON.stringify(e)).join('\n') + '\n');
  writeFileSync(join(runDir, 'run.json'), '{}');
  return runDir;
}

async function planWarnings(config: ReturnType<typeof campaign>['config'], out: string): Promise<string[]> {
  const warnings: string[] = [];
  // Controller traces alone: plan may fail after its warnings.
  await plan(config, { out, log: () => undefined, warn: (w) => void warnings.push(w) }).catch(() => undefined);
  return warnings;
}

test('plan warns when a reference run shows the controller silent for the whole window and then writing', async (t) => {
  const { dir, file, config, out } = campaign({ quietMs: 500 });
  t.teardown(() => removeIfPassed(t, dir));
  writeReference(out, 1, 120);
  const ref2 = writeReference(out, 2, 1800);
  t.deepEqual(await planWarnings(config, out), [
    `kperturb: warning: ${file} at settle.quietMs: a quiet window longer than the controller's pauses (got 500 ms): in ${ref2} it was silent for 1800 ms, nothing new shown to it, and then sent patch ConfigMap/default/out, so a run can settle and read its end state before such a write; set settle.quietMs above 1800`,
  ]);
});

test('the default window is named as the default', async (t) => {
  const { dir, file, config, out } = campaign();
  t.teardown(() => removeIfPassed(t, dir));
  const ref1 = writeReference(out, 1, 2500);
  t.deepEqual(await planWarnings(config, out), [
    `kperturb: warning: ${file} at settle.quietMs: a quiet window longer than the controller's pauses (got the default 1000 ms): in ${ref1} it was silent for 2500 ms, nothing new shown to it, and then sent patch ConfigMap/default/out, so a run can settle and read its end state before such a write; set settle.quietMs above 2500`,
  ]);
});

test('pauses within the window, and a lease renewal after a long one, are not warned of', async (t) => {
  const { dir, config, out } = campaign({ quietMs: 500 });
  t.teardown(() => removeIfPassed(t, dir));
  writeReference(out, 1, 400);
  writeReference(out, 2, 5000, 'Lease/default/leader');
  t.deepEqual(await planWarnings(config, out), []);
});
