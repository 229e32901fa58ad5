/**
 * A soft wait (`onTimeout: continue`) longer than the proxy's hold limit is said at `learn` and
 * `plan` time, naming the file, the step's path and the limit, not found as not-injected plans at
 * test time.
 */
import test from 'ava';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { plan } from '../../src/campaign/campaign.js';
import { validateConfig } from '../../src/config/config.js';
import { removeIfPassed } from '../_scratch-dir.js';

function configWith(waits: Array<Record<string, unknown>>) {
  const dir = mkdtempSync(join(tmpdir(), 'kperturb-soft-wait-'));
  const steps = [{ sleep: 0 }, ...waits.map((w) => ({ waitFor: { key: 'ConfigMap/default/a', ...w } }))];
  const doc = {
    apiVersion: 'kperturb.dev/v1',
    kind: 'ControllerUnderTest',
    metadata: { name: 'x' },
    controller: { command: 'true' },
    workloads: { scale: { steps } },
  };
  return { dir, file: join(dir, 'kperturb.yaml'), config: validateConfig(doc, join(dir, 'kperturb.yaml')) };
}

async function planWarnings(config: ReturnType<typeof configWith>['config'], out: string): Promise<string[]> {
  const warnings: string[] = [];
  // No reference runs: plan fails after its warnings.
  await plan(config, { out, log: () => undefined, warn: (w) => void warnings.push(w) }).catch(() => undefined);
  return warnings;
}

test('plan warns of a soft wait longer than the 10 s hold limit', async (t) => {
  const { dir, file, config } = configWith([{ timeoutSeconds: 20, onTimeout: 'continue' }]);
  t.teardown(() => removeIfPassed(t, dir));
  t.deepEqual(await planWarnings(config, join(dir, 'out')), [
    `kperturb: warning: ${file} at workloads.scale.steps[1].waitFor.timeoutSeconds: a soft wait (onTimeout: continue) of at most 10 s (got 20 s): the proxy ends a hold after 10 s, so an unobserved-state plan that holds the controller's view across this wait ends not-injected`,
  ]);
});

test('a soft wait within the limit, or a hard wait of any length, is not warned of', async (t) => {
  const { dir, config } = configWith([{ timeoutSeconds: 10, onTimeout: 'continue' }, { timeoutSeconds: 60 }, { timeoutSeconds: 60, onTimeout: 'fail' }]);
  t.teardown(() => removeIfPassed(t, dir));
  t.deepEqual(await planWarnings(config, join(dir, 'out')), []);
});
