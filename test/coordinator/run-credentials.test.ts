/**
 * A run's credentials: the controller reaches the embedded cluster only through the proxy with the
 * token of the kubeconfig the run wrote for it (0600), and the proxy reaches the cluster with the
 * cluster's own token.
 */
import { readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import test from 'ava';
import { parse } from 'yaml';
import type { Workload } from '../../src/config/config.js';
import { executeRun } from '../../src/coordinator/run.js';
import { mirrorControllerConfig } from '../proxy/fixtures/mirror-config.js';
import { scratchDir } from '../_scratch-dir.js';

test('the controller kubeconfig is 0600 and carries the proxy token; the controller works through proxy and cluster auth', async (t) => {
  const dir = scratchDir(t, 'kperturb-run-credentials-');
  const source = join(dir, 'src.yaml');
  writeFileSync(source, 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: src-a, namespace: default}\ndata: {v: "1"}\n');
  const workload: Workload = { name: 'mirror', steps: [{ apply: source }, { waitFor: { key: 'ConfigMap/default/mirror-src-a', timeoutSeconds: 20 } }] };
  const config = mirrorControllerConfig(dir, workload);

  const runDir = join(dir, 'run');
  const { record } = await executeRun({ config, workload, runDir });
  t.is(record.error, undefined);
  t.true(record.workloadOutcome.ok, record.workloadOutcome.error);
  const kubeconfig = join(runDir, 'controller.kubeconfig');
  t.is(statSync(kubeconfig).mode & 0o777, 0o600);
  const doc = parse(readFileSync(kubeconfig, 'utf8')) as { users: Array<{ user: { token?: string } }> };
  t.regex(doc.users[0]!.user.token ?? '', /^[0-9a-f]{64}$/);
});
