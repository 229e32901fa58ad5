/**
 * A controller that never watches is named as such (issue 38): one that lists in a tight loop, its
 * "watches" answered as lists, makes `learn` fail at once with the request it sent and what kperturb
 * answered, instead of "did not open a watch and go quiet within 30s".
 */
import test from 'ava';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { learn } from '../../src/campaign/campaign.js';
import { mirrorControllerConfig } from '../proxy/helpers.js';
import { scratchDir } from '../_scratch-dir.js';

test('learn names a controller that lists in a loop and never watches, with its request and the answer', async (t) => {
  const dir = scratchDir(t, 'kperturb-never-watches-');
  const config = mirrorControllerConfig(dir, { name: 'w', steps: [] });
  config.controller.args = [fileURLToPath(new URL('./fixtures/list-loop-controller.js', import.meta.url))];
  const [learned] = await learn(config, { out: join(dir, 'out'), log: () => undefined });
  const errors = learned!.runs.map((r) => r.error);
  t.deepEqual(errors, [
    'the controller never watches: it sent GET /api/v1/namespaces/default/configmaps?watch=false at least 100 times and no watch request, ' +
      'and kperturb answered each with a list (last answer: 200 ConfigMapList): its watch=false asks for a list ' +
      '(kube-apiserver reads only "0", "false" and no value at all as false); kperturb needs a controller that lists, then watches (see controller.log)',
  ]);
});
