/**
 * kubectl and @kubernetes/client-node against the real control plane (admin kubeconfig: https, CA,
 * bearer token): create, list and watch a ConfigMap, a CRD and a custom resource; and kubectl through
 * kperturb's proxy in front of it. One control plane for the file; each test uses its own names and
 * CRD group.
 */
import test from 'ava';
import { kubeconfigSource } from '../../src/kube/kubeconfig-source.js';
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import * as k8s from '@kubernetes/client-node';
import { runStandaloneProxy } from '../../proxy/standalone.js';
import { startRealControlPlane, type RealControlPlane } from '../../src/realcluster/index.js';
import { clientNodeConfig, crdYaml, eventually, KUBECTL, kubectlFor, kubectlOk, watchWithRetry } from './_helpers.js';
import { scratchDir } from '../_scratch-dir.js';

let cp: RealControlPlane;

test.before(async (t) => {
  cp = await startRealControlPlane();
  t.log(`control plane started in ${cp.startTimes.total} ms`);
});

test.after.always(async () => {
  await cp?.stop();
});

test('kubectl: version, apply/get/watch a ConfigMap, a CRD and a custom resource', async (t) => {
  const kubectl = kubectlFor(t, cp.kubeconfigYaml());
  t.regex(await kubectlOk(t, kubectl, 'version'), /Server Version: v1\.\d+\.\d+/);

  // The real server publishes OpenAPI, so kubectl's client-side validation runs (no --validate=false).
  const cm = kubectl.file('cm.yaml', 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: kubectl-cm\n  labels: {tier: web}\ndata:\n  a: "1"\n');
  t.regex(await kubectlOk(t, kubectl, 'apply', '-f', cm), /configmap\/kubectl-cm created/);
  const got = JSON.parse(await kubectlOk(t, kubectl, 'get', 'configmap', 'kubectl-cm', '-o', 'json'));
  t.like(got, { kind: 'ConfigMap', metadata: { name: 'kubectl-cm', namespace: 'default', labels: { tier: 'web' } }, data: { a: '1' } });

  // Watch: kubectl get -w prints each event; a patch must show up as MODIFIED.
  const watcher = spawn(KUBECTL, ['--kubeconfig', kubectl.kubeconfig, 'get', 'configmap', 'kubectl-cm', '--watch', '--output-watch-events'], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  t.teardown(() => {
    watcher.kill('SIGKILL');
  });
  let watched = '';
  watcher.stdout.setEncoding('utf8').on('data', (chunk: string) => (watched += chunk));
  await eventually('kubectl get --watch lists the ConfigMap', 30_000, async () => (/ADDED\s+kubectl-cm/.test(watched) ? true : undefined));
  await kubectlOk(t, kubectl, 'patch', 'configmap', 'kubectl-cm', '--type=merge', '-p', '{"data":{"a":"2"}}');
  await eventually('kubectl get --watch shows the patch', 30_000, async () => (/MODIFIED\s+kubectl-cm/.test(watched) ? true : undefined));

  // CRD and a custom resource.
  t.regex(await kubectlOk(t, kubectl, 'apply', '-f', kubectl.file('crd.yaml', crdYaml('kubectl.kperturb.dev'))), /customresourcedefinition.* created/);
  await kubectlOk(t, kubectl, 'wait', '--for=condition=Established', '--timeout=30s', 'crd/widgets.kubectl.kperturb.dev');
  const cr = kubectl.file('cr.yaml', 'apiVersion: kubectl.kperturb.dev/v1\nkind: Widget\nmetadata:\n  name: w1\nspec:\n  size: 3\n');
  t.regex(await kubectlOk(t, kubectl, 'apply', '-f', cr), /widget.kubectl.kperturb.dev\/w1 created/);
  const widgets = JSON.parse(await kubectlOk(t, kubectl, 'get', 'widgets.kubectl.kperturb.dev', '-o', 'json')) as {
    items: Array<{ metadata: { name: string }; spec: { size: number } }>;
  };
  t.deepEqual(
    widgets.items.map((w) => [w.metadata.name, w.spec.size]),
    [['w1', 3]],
  );
  // The structural schema is enforced by the real server.
  const invalid = await kubectl(
    'apply',
    '-f',
    kubectl.file('bad.yaml', 'apiVersion: kubectl.kperturb.dev/v1\nkind: Widget\nmetadata:\n  name: w2\nspec:\n  size: "three"\n'),
  );
  t.not(invalid.code, 0);
  t.regex(invalid.stderr, /spec\.size/);
});

test('@kubernetes/client-node: create, list and watch a ConfigMap', async (t) => {
  const kc = clientNodeConfig(cp.kubeconfigYaml());
  const core = kc.makeApiClient(k8s.CoreV1Api);
  await core.createNamespace({ body: { metadata: { name: 'client-node' } } });

  const events: Array<{ type: string; name: string; data: Record<string, string> | undefined }> = [];
  const watch = new k8s.Watch(kc);
  const controller = await watch.watch(
    '/api/v1/namespaces/client-node/configmaps',
    {},
    (type, obj: k8s.V1ConfigMap) => {
      events.push({ type, name: obj.metadata?.name ?? '', data: obj.data });
    },
    () => undefined,
  );
  t.teardown(() => controller.abort());

  const created = await core.createNamespacedConfigMap({ namespace: 'client-node', body: { metadata: { name: 'cm1' }, data: { a: '1' } } });
  t.truthy(created.metadata?.uid);
  t.regex(created.metadata?.resourceVersion ?? '', /^\d+$/);
  const list = await core.listNamespacedConfigMap({ namespace: 'client-node' });
  // kube-controller-manager publishes kube-root-ca.crt in every namespace, so the list has that too.
  t.true(list.items.some((c) => c.metadata?.name === 'cm1'));
  await core.patchNamespacedConfigMap(
    { namespace: 'client-node', name: 'cm1', body: { data: { a: '2' } } },
    k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch),
  );
  await core.deleteNamespacedConfigMap({ namespace: 'client-node', name: 'cm1' });

  await eventually('the watch delivers ADDED, MODIFIED and DELETED for cm1', 30_000, async () => {
    const seen = events.filter((e) => e.name === 'cm1').map((e) => e.type);
    return seen.includes('DELETED') ? seen : undefined;
  });
  t.deepEqual(
    events.filter((e) => e.name === 'cm1').map((e) => [e.type, e.data?.a]),
    [
      ['ADDED', '1'],
      ['MODIFIED', '2'],
      ['DELETED', '2'],
    ],
  );
});

test('@kubernetes/client-node: a CRD, then create, list and watch its custom resources', async (t) => {
  const kc = clientNodeConfig(cp.kubeconfigYaml());
  const ext = kc.makeApiClient(k8s.ApiextensionsV1Api);
  const custom = kc.makeApiClient(k8s.CustomObjectsApi);
  const group = 'client-node.kperturb.dev';
  const { parse } = await import('yaml');
  await ext.createCustomResourceDefinition({ body: parse(crdYaml(group)) as k8s.V1CustomResourceDefinition });
  await eventually('the CRD is Established', 30_000, async () => {
    const crd = await ext.readCustomResourceDefinition({ name: `widgets.${group}` });
    return crd.status?.conditions?.some((c) => c.type === 'Established' && c.status === 'True') ? true : undefined;
  });

  const events: Array<{ type: string; name: string; size: unknown }> = [];
  let watchEnded: string | undefined;
  // Right after Established the server may refuse the watch with 429 while its watch cache starts.
  const { controller, retries } = await watchWithRetry(
    kc,
    `/apis/${group}/v1/namespaces/default/widgets`,
    (type, obj: { metadata?: { name?: string }; spec?: { size?: unknown } }) => events.push({ type, name: obj.metadata?.name ?? '', size: obj.spec?.size }),
    (reason) => (watchEnded = reason),
  );
  t.teardown(() => controller.abort());
  if (retries > 0) t.log(`the widgets watch was refused with 429 ${retries} time(s) before the watch cache was ready`);

  const body = { apiVersion: `${group}/v1`, kind: 'Widget', metadata: { name: 'w1' }, spec: { size: 1 } };
  const created = (await custom.createNamespacedCustomObject({ group, version: 'v1', namespace: 'default', plural: 'widgets', body })) as {
    metadata: { generation: number };
  };
  t.is(created.metadata.generation, 1);
  await custom.patchNamespacedCustomObjectStatus(
    { group, version: 'v1', namespace: 'default', plural: 'widgets', name: 'w1', body: { status: { phase: 'Ready' } } },
    k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch),
  );
  const list = (await custom.listNamespacedCustomObject({ group, version: 'v1', namespace: 'default', plural: 'widgets' })) as {
    items: Array<{ metadata: { name: string; generation: number }; status?: { phase?: string } }>;
  };
  t.deepEqual(
    list.items.map((w) => [w.metadata.name, w.metadata.generation, w.status?.phase]),
    [['w1', 1, 'Ready']],
    'a status write does not bump the generation',
  );

  await eventually('the watch delivers ADDED and the status MODIFIED', 30_000, async () => {
    if (events.length >= 2) return true;
    if (watchEnded) throw new Error(`the watch ended: ${watchEnded}; events so far: ${JSON.stringify(events)}`);
    return undefined;
  });
  t.deepEqual(
    events.map((e) => [e.type, e.name, e.size]),
    [
      ['ADDED', 'w1', 1],
      ['MODIFIED', 'w1', 1],
    ],
  );
});

test('kubectl through the proxy in front of the real control plane: writes pass and are traced', async (t) => {
  const dir = scratchDir(t, 'kperturb-real-proxy-');
  const traceFile = join(dir, 'controller.trace.jsonl');
  const proxied = await runStandaloneProxy({ upstreamKubeconfig: kubeconfigSource({ kubeconfig: cp.kubeconfigPath }), traceFile, log: () => undefined });
  t.teardown(() => proxied.close());
  const kubectl = kubectlFor(t, proxied.proxy.kubeconfigYaml());

  const cm = kubectl.file('cm.yaml', 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: via-proxy\ndata:\n  a: "1"\n');
  t.regex(await kubectlOk(t, kubectl, 'apply', '-f', cm), /configmap\/via-proxy created/);
  t.regex(await kubectlOk(t, kubectl, 'get', 'configmaps'), /^via-proxy\s/m);
  await proxied.close();

  const requests = readFileSync(traceFile, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as { type: string; method?: string; verb?: string; key?: string });
  t.true(
    requests.some((e) => e.type === 'request' && e.verb === 'create' && e.method === 'POST'),
    "the proxy traced kubectl's create of the ConfigMap",
  );
});
