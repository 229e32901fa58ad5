/** kubectl against the embedded cluster: apply, get, patch, delete, for a ConfigMap and a CRD + CR. */
import test, { type ExecutionContext } from 'ava';
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startCluster } from './helpers.js';

const KUBECTL = process.env.KUBECTL ?? '/usr/bin/kubectl';

interface Kubectl {
  (...args: string[]): Promise<{ code: number; stdout: string; stderr: string }>;
  file(name: string, content: string): string;
}

async function kubectlFor(t: ExecutionContext): Promise<Kubectl> {
  if (!existsSync(KUBECTL)) {
    t.fail(`kubectl not found at ${KUBECTL}: install it or set KUBECTL to its path (these tests cannot run without it)`);
    throw new Error('kubectl missing');
  }
  const { cluster } = await startCluster(t);
  const dir = mkdtempSync(join(tmpdir(), 'kperturb-kubectl-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const kubeconfig = join(dir, 'kubeconfig');
  writeFileSync(kubeconfig, cluster.kubeconfigYaml());
  const run = ((...args: string[]) =>
    new Promise((resolve) => {
      execFile(KUBECTL, ['--kubeconfig', kubeconfig, ...args], { env: { ...process.env, HOME: dir }, timeout: 30_000 }, (err, stdout, stderr) => {
        const code = err ? (typeof (err as { code?: unknown }).code === 'number' ? ((err as { code: number }).code) : 1) : 0;
        resolve({ code, stdout, stderr });
      });
    })) as Kubectl;
  run.file = (name, content) => {
    const path = join(dir, name);
    writeFileSync(path, content);
    return path;
  };
  return run;
}

async function ok(t: ExecutionContext, kubectl: Kubectl, ...args: string[]): Promise<string> {
  const res = await kubectl(...args);
  t.is(res.code, 0, `kubectl ${args.join(' ')} failed: ${res.stderr}`);
  return res.stdout;
}

test('kubectl version, apply, get, patch and delete a ConfigMap', async (t) => {
  const kubectl = await kubectlFor(t);
  t.regex(await ok(t, kubectl, 'version'), /Server Version: v1\.\d+/);
  const file = kubectl.file('cm.yaml', 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: app\n  labels: {tier: web}\ndata:\n  a: "1"\n');

  // Without OpenAPI documents kubectl's client-side validation cannot run: plain apply needs --validate=false.
  const strict = await kubectl('apply', '-f', file);
  t.not(strict.code, 0);
  t.regex(strict.stderr, /--validate=false/);

  t.regex(await ok(t, kubectl, 'apply', '--validate=false', '-f', file), /configmap\/app created/);
  const got = JSON.parse(await ok(t, kubectl, 'get', 'configmap', 'app', '-o', 'json'));
  t.like(got, { kind: 'ConfigMap', apiVersion: 'v1', metadata: { name: 'app', namespace: 'default', labels: { tier: 'web' } }, data: { a: '1' } });
  t.regex(await ok(t, kubectl, 'get', 'configmaps'), /^NAME\s+.*\napp\s/m);
  t.regex(await ok(t, kubectl, 'apply', '--validate=false', '-f', file), /configmap\/app unchanged/);

  writeFileSync(file, 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: app\ndata:\n  a: "2"\n');
  t.regex(await ok(t, kubectl, 'apply', '--validate=false', '-f', file), /configmap\/app configured/);
  t.regex(await ok(t, kubectl, 'patch', 'configmap', 'app', '--type', 'merge', '-p', '{"data":{"b":"3"}}'), /patched/);
  const patched = JSON.parse(await ok(t, kubectl, 'get', 'cm', 'app', '-o', 'json'));
  t.deepEqual(patched.data, { a: '2', b: '3' });
  t.is(patched.metadata.labels, undefined, 'apply removed the label it no longer declares');

  t.regex(await ok(t, kubectl, 'delete', 'configmap', 'app'), /configmap "app" deleted/);
  const missing = await kubectl('get', 'configmap', 'app');
  t.not(missing.code, 0);
  t.regex(missing.stderr, /NotFound.*configmaps "app" not found/);
});

test('kubectl apply a CRD, then a custom resource; get, patch and delete them', async (t) => {
  const kubectl = await kubectlFor(t);
  const crd = kubectl.file(
    'crd.yaml',
    `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.example.com
spec:
  group: example.com
  scope: Namespaced
  names: {plural: widgets, singular: widget, kind: Widget, shortNames: [wd]}
  versions:
  - name: v1
    served: true
    storage: true
    subresources: {status: {}}
    schema:
      openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}
`,
  );
  const cr = kubectl.file('cr.yaml', 'apiVersion: example.com/v1\nkind: Widget\nmetadata:\n  name: w1\nspec:\n  size: 3\n');
  t.regex(await ok(t, kubectl, 'apply', '--validate=false', '-f', crd), /customresourcedefinition.apiextensions.k8s.io\/widgets.example.com created/);
  await ok(t, kubectl, 'wait', '--for', 'condition=Established', 'crd/widgets.example.com', '--timeout=10s');
  t.regex(await ok(t, kubectl, 'apply', '--validate=false', '-f', cr), /widget.example.com\/w1 created/);
  t.regex(await ok(t, kubectl, 'get', 'widgets'), /^w1\s/m);
  const got = JSON.parse(await ok(t, kubectl, 'get', 'wd', 'w1', '-o', 'json'));
  t.like(got, { apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'w1', generation: 1 }, spec: { size: 3 } });

  await ok(t, kubectl, 'patch', 'widget', 'w1', '--type', 'merge', '-p', '{"spec":{"size":4}}');
  await ok(t, kubectl, 'patch', 'widget', 'w1', '--subresource', 'status', '--type', 'merge', '-p', '{"status":{"ready":true}}');
  const patched = JSON.parse(await ok(t, kubectl, 'get', 'widget', 'w1', '-o', 'json'));
  t.like(patched, { metadata: { generation: 2 }, spec: { size: 4 }, status: { ready: true } });
  const smp = await kubectl('patch', 'widget', 'w1', '-p', '{"spec":{"size":5}}');
  t.not(smp.code, 0, 'strategic merge patch is refused for custom resources');
  t.regex(smp.stderr, /strategic-merge-patch/);

  t.regex(await ok(t, kubectl, 'delete', 'widget', 'w1'), /deleted/);
  t.regex(await ok(t, kubectl, 'delete', '-f', crd), /deleted/);
  const gone = await kubectl('get', 'widgets');
  t.not(gone.code, 0);
  t.regex(gone.stderr, /doesn't have a resource type "widgets"|the server could not find the requested resource/);
});
