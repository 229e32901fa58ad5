/**
 * kubectl get prints the server's Table columns (as=Table): kube-apiserver's printers for built-in
 * kinds, a CRD's additionalPrinterColumns, and the default Name / Created At for other kinds.
 */
import test from 'ava';
import { applyCrds, exampleCrd, kubectlFor, ok } from './kubectl-helper.js';

/** The header line of kubectl's table output, as a list of column names. */
function header(output: string): string[] {
  return output
    .split('\n')[0]!
    .trim()
    .split(/\s{2,}/);
}

/** The row of `name`, as a list of cells (cells are separated by at least two spaces). */
function row(output: string, name: RegExp): string[] {
  const line = output.split('\n').find((l) => name.test(l.split(/\s+/)[0] ?? ''));
  return line === undefined ? [] : line.trim().split(/\s{2,}/);
}

test('kubectl get shows kube-apiserver columns for pods (and -o wide), nodes, deployments, replicasets, services, jobs, PVCs', async (t) => {
  const kubectl = await kubectlFor(t, { simulation: {} });
  await ok(t, kubectl, 'create', 'deployment', 'web', '--image=nginx:1.27', '--replicas=2');
  await ok(t, kubectl, 'create', 'service', 'clusterip', 'web', '--tcp=80:8080');
  await ok(t, kubectl, 'create', 'job', 'once', '--image=busybox');
  const pvc = kubectl.file(
    'pvc.yaml',
    'apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {name: data}\nspec:\n  accessModes: [ReadWriteOnce]\n  resources: {requests: {storage: 1Gi}}\n',
  );
  await ok(t, kubectl, 'apply', '-f', pvc);
  await ok(t, kubectl, 'wait', '--for=condition=Available', 'deployment/web', '--timeout=90s');
  await ok(t, kubectl, 'wait', '--for=condition=Complete', 'job/once', '--timeout=90s');
  await ok(t, kubectl, 'wait', '--for=jsonpath={.status.phase}=Bound', 'pvc/data', '--timeout=90s');

  const pods = await ok(t, kubectl, 'get', 'pods');
  t.deepEqual(header(pods), ['NAME', 'READY', 'STATUS', 'RESTARTS', 'AGE']);
  t.deepEqual(row(pods, /^web-/).slice(1, 4), ['1/1', 'Running', '0']);
  t.deepEqual(row(pods, /^once-/).slice(1, 4), ['0/1', 'Completed', '0']);
  const wide = await ok(t, kubectl, 'get', 'pods', '-o', 'wide', '-l', 'app=web');
  t.deepEqual(header(wide), ['NAME', 'READY', 'STATUS', 'RESTARTS', 'AGE', 'IP', 'NODE', 'NOMINATED NODE', 'READINESS GATES']);
  const webRow = row(wide, /^web-/);
  t.regex(webRow[5] ?? '', /^10\.244\.\d+\.\d+$/);
  t.deepEqual(webRow.slice(6), ['node-1', '<none>', '<none>']);
  t.regex(await ok(t, kubectl, 'get', 'pods', '-A'), /^NAMESPACE\s+NAME\s+READY\s+STATUS\s+RESTARTS\s+AGE\ndefault\s+/);

  const nodes = await ok(t, kubectl, 'get', 'nodes');
  t.deepEqual(header(nodes), ['NAME', 'STATUS', 'ROLES', 'AGE', 'VERSION']);
  t.deepEqual(row(nodes, /^node-1$/).slice(0, 3), ['node-1', 'Ready', '<none>']);

  const deployments = await ok(t, kubectl, 'get', 'deployments', '-o', 'wide');
  t.deepEqual(header(deployments), ['NAME', 'READY', 'UP-TO-DATE', 'AVAILABLE', 'AGE', 'CONTAINERS', 'IMAGES', 'SELECTOR']);
  const web = row(deployments, /^web$/);
  t.deepEqual([...web.slice(0, 4), ...web.slice(5)], ['web', '2/2', '2', '2', 'nginx', 'nginx:1.27', 'app=web']);
  const replicaSets = await ok(t, kubectl, 'get', 'replicasets');
  t.deepEqual(header(replicaSets), ['NAME', 'DESIRED', 'CURRENT', 'READY', 'AGE']);
  t.deepEqual(row(replicaSets, /^web-/).slice(1, 4), ['2', '2', '2']);

  const services = await ok(t, kubectl, 'get', 'services');
  t.deepEqual(header(services), ['NAME', 'TYPE', 'CLUSTER-IP', 'EXTERNAL-IP', 'PORT(S)', 'AGE']);
  t.deepEqual(row(services, /^kubernetes$/).slice(0, 5), ['kubernetes', 'ClusterIP', '10.96.0.1', '<none>', '443/TCP']);
  t.deepEqual(row(services, /^web$/).slice(3, 5), ['<none>', '80/TCP']);

  const jobs = await ok(t, kubectl, 'get', 'jobs');
  t.deepEqual(header(jobs), ['NAME', 'STATUS', 'COMPLETIONS', 'DURATION', 'AGE']);
  t.deepEqual(row(jobs, /^once$/).slice(0, 3), ['once', 'Complete', '1/1']);

  const claims = await ok(t, kubectl, 'get', 'pvc');
  t.deepEqual(header(claims), ['NAME', 'STATUS', 'VOLUME', 'CAPACITY', 'ACCESS MODES', 'STORAGECLASS', 'VOLUMEATTRIBUTESCLASS', 'AGE']);
  const data = row(claims, /^data$/);
  t.is(data[1], 'Bound');
  t.regex(data[2] ?? '', /^pvc-/);
  t.deepEqual(data.slice(3, 5), ['1Gi', 'RWO']);

  const namespaces = await ok(t, kubectl, 'get', 'namespaces');
  t.deepEqual(header(namespaces), ['NAME', 'STATUS', 'AGE']);
  t.deepEqual(row(namespaces, /^default$/).slice(0, 2), ['default', 'Active']);
  await ok(t, kubectl, 'create', 'configmap', 'settings', '--from-literal=a=1', '--from-literal=b=2');
  const configMaps = await ok(t, kubectl, 'get', 'configmaps', '-A');
  t.deepEqual(header(configMaps), ['NAMESPACE', 'NAME', 'DATA', 'AGE']);
  t.deepEqual(row(configMaps, /^default$/).slice(0, 3), ['default', 'settings', '2']);
});

test('kubectl get -w prints table rows for each change', async (t) => {
  const kubectl = await kubectlFor(t, { simulation: {} });
  await ok(t, kubectl, 'create', 'deployment', 'web', '--image=nginx', '--replicas=1');
  await ok(t, kubectl, 'wait', '--for=condition=Available', 'deployment/web', '--timeout=90s');
  const watch = kubectl.spawn('get', 'pods', '-w');
  // The watch starts from the list it printed: only once the running pod is printed does scaling
  // show the new pod from its creation on (otherwise a loaded machine can list it already Running).
  const running = (output: string): number => (output.match(/^web-\S+\s+1\/1\s+Running/gm) ?? []).length;
  await watch.until((output) => running(output) >= 1, 'the running pod is listed');
  await ok(t, kubectl, 'scale', 'deployment/web', '--replicas=2');
  await ok(t, kubectl, 'wait', '--for=jsonpath={.status.availableReplicas}=2', 'deployment/web', '--timeout=90s');
  // The deployment is available once both pods run; wait for the watch to print the second one.
  await watch.until((output) => running(output) >= 2, 'the second pod is shown running');
  const output = await watch.stop();
  t.regex(output, /^NAME\s+READY\s+STATUS\s+RESTARTS\s+AGE\n/);
  t.regex(output, /^web-\S+\s+0\/1\s+(Pending|ContainerCreating)\s+0\s+\S+$/m, 'the new pod is shown with its status, not as NAME AGE');
  t.true((output.match(/^web-\S+\s+1\/1\s+Running\s+0\s+\S+$/gm) ?? []).length >= 2, output);
});

test('kubectl get shows a CRD version additionalPrinterColumns, Age when it has none, and CREATED AT for CRDs themselves', async (t) => {
  const kubectl = await kubectlFor(t);
  await applyCrds(
    t,
    kubectl,
    exampleCrd(
      'Widget',
      'widgets',
      'Namespaced',
      `
    subresources: {status: {}}
    schema:
      openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}
    additionalPrinterColumns:
    - {name: Replicas, type: integer, jsonPath: .spec.replicas}
    - {name: Phase, type: string, jsonPath: .status.phase}
    - {name: Ready, type: string, jsonPath: '.status.conditions[?(@.type=="Ready")].status'}
    - {name: Owner, type: string, jsonPath: '.metadata.labels.owner', priority: 1}
    - {name: Age, type: date, jsonPath: .metadata.creationTimestamp}`,
    ),
    exampleCrd('Gadget', 'gadgets', 'Cluster', '    schema:\n      openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}'),
  );
  const crs = kubectl.file(
    'crs.yaml',
    `apiVersion: example.com/v1
kind: Widget
metadata: {name: w1, labels: {owner: alice}}
spec: {replicas: 3}
---
apiVersion: example.com/v1
kind: Widget
metadata: {name: w2}
spec: {}
---
apiVersion: example.com/v1
kind: Gadget
metadata: {name: g1}
`,
  );
  await ok(t, kubectl, 'apply', '-f', crs);
  await ok(
    t,
    kubectl,
    'patch',
    'widget',
    'w1',
    '--subresource=status',
    '--type=merge',
    '-p',
    '{"status":{"phase":"Ready","conditions":[{"type":"Synced","status":"False"},{"type":"Ready","status":"True"}]}}',
  );

  const widgets = await ok(t, kubectl, 'get', 'widgets');
  t.deepEqual(header(widgets), ['NAME', 'REPLICAS', 'PHASE', 'READY', 'AGE']);
  t.deepEqual(row(widgets, /^w1$/).slice(0, 4), ['w1', '3', 'Ready', 'True']);
  t.regex(widgets, /^w2\s+\s{2,}\d+s$/m, 'missing fields print as empty cells');
  const wide = await ok(t, kubectl, 'get', 'widgets', '-o', 'wide');
  t.deepEqual(header(wide), ['NAME', 'REPLICAS', 'PHASE', 'READY', 'OWNER', 'AGE']);
  t.is(row(wide, /^w1$/)[4], 'alice');

  t.deepEqual(header(await ok(t, kubectl, 'get', 'gadgets')), ['NAME', 'AGE']);
  const crds = await ok(t, kubectl, 'get', 'crds');
  t.deepEqual(header(crds), ['NAME', 'CREATED AT']);
  t.regex(row(crds, /^widgets\.example\.com$/)[1] ?? '', /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
});
