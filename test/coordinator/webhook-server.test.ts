/**
 * controller.webhookServer: a run writes the controller a serving certificate where controller-runtime
 * looks by default ($TMPDIR/k8s-webhook-server/serving-certs, TMPDIR a folder of the run), and the
 * embedded cluster sends the controller's validating webhook the requests its configuration names
 * by Service: a workload's patch the webhook refuses is refused, and the object keeps its value.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import test from 'ava';
import type { Workload } from '../../src/config/config.js';
import { executeRun } from '../../src/coordinator/run.js';
import { mirrorControllerConfig } from '../proxy/fixtures/mirror-config.js';
import { scratchDir } from '../_scratch-dir.js';
import { freePort } from '../_free-port.js';

const CONFIGURATION = `apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingWebhookConfiguration
metadata: { name: mirror-validation }
webhooks:
  - name: v.mirror.example.com
    admissionReviewVersions: [v1]
    sideEffects: None
    clientConfig: { service: { namespace: system, name: webhook-service, path: /validate } }
    rules: [{ apiGroups: [""], apiVersions: [v1], operations: [UPDATE], resources: [configmaps] }]
`;

test("the controller's webhook gets its certificate from the run, and the cluster calls it: a patch it refuses is refused", async (t) => {
  const dir = scratchDir(t, 'kperturb-webhook-server-');
  writeFileSync(join(dir, 'webhook.yaml'), CONFIGURATION);
  writeFileSync(join(dir, 'src.yaml'), 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: src-a, namespace: default}\ndata: {v: "1"}\n');
  const workload: Workload = {
    name: 'refused',
    steps: [
      { apply: join(dir, 'src.yaml') },
      { waitFor: { key: 'ConfigMap/default/mirror-src-a', field: 'data.v', equals: '1', timeoutSeconds: 20 } },
      { patch: { key: 'ConfigMap/default/src-a', type: 'merge', patch: { data: { v: 'forbidden' } }, onError: 'continue' } },
      { patch: { key: 'ConfigMap/default/src-a', type: 'merge', patch: { data: { v: '2' } } } },
      { waitFor: { key: 'ConfigMap/default/mirror-src-a', field: 'data.v', equals: '2', timeoutSeconds: 20 } },
    ],
  };
  const port = await freePort();
  const base = mirrorControllerConfig(dir, workload, { setup: [join(dir, 'webhook.yaml')], env: { WEBHOOK_PORT: String(port) } });
  const config = {
    ...base,
    controller: {
      ...base.controller,
      args: [fileURLToPath(new URL('./fixtures/webhook-controller.js', import.meta.url))],
      webhookServer: { port },
      ports: [port],
    },
  };
  const runDir = join(dir, 'run');
  const { record } = await executeRun({ config, workload, runDir });
  t.is(record.error, undefined);
  t.true(record.workloadOutcome.ok, record.workloadOutcome.error);
  const log = readFileSync(join(runDir, 'controller.log'), 'utf8');
  t.regex(log, /webhook: UPDATE src-a denied/);
  t.regex(log, /webhook: UPDATE src-a allowed/);
  const history = JSON.stringify(JSON.parse(readFileSync(join(runDir, 'end-state.json'), 'utf8')));
  t.false(history.includes('forbidden'), 'the refused value never reached the cluster');
});
