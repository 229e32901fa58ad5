/**
 * The controller of test/cli/interrupt.test.ts, one that does not go quietly: it ignores SIGTERM,
 * starts a child of its own (`sleep`, in its process group, as controllers start helpers), and copies
 * ConfigMap default/in's data to ConfigMap default/out. Each incarnation appends "<pid> <child pid>"
 * to the file named by its first argument once both run.
 */
import * as k8s from '@kubernetes/client-node';
import { spawn } from 'node:child_process';
import { appendFileSync } from 'node:fs';

process.on('SIGTERM', () => undefined);
const helper = spawn('sleep', ['1000'], { stdio: 'ignore' });
appendFileSync(process.argv[2]!, `${process.pid} ${helper.pid}\n`);

const kc = new k8s.KubeConfig();
kc.loadFromDefault();
const core = kc.makeApiClient(k8s.CoreV1Api);
const namespace = 'default';
const informer = k8s.makeInformer(kc, `/api/v1/namespaces/${namespace}/configmaps`, () => core.listNamespacedConfigMap({ namespace }));

const copy = async (cm: k8s.V1ConfigMap) => {
  if (cm.metadata?.name !== 'in') return;
  const existing = informer.get('out', namespace);
  try {
    if (!existing) await core.createNamespacedConfigMap({ namespace, body: { metadata: { name: 'out' }, data: cm.data ?? {} } });
    else if (JSON.stringify(existing.data ?? {}) !== JSON.stringify(cm.data ?? {})) {
      await core.replaceNamespacedConfigMap({ name: 'out', namespace, body: { ...existing, data: cm.data ?? {} } });
    }
  } catch {
    /* the next event retries */
  }
};
informer.on('add', (cm) => void copy(cm));
informer.on('update', (cm) => void copy(cm));
informer.on('error', () => setTimeout(() => void informer.start(), 200));
await informer.start();
