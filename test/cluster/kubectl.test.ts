/** kubectl against the embedded cluster: apply, get, patch, delete, for a ConfigMap and a CRD + CR. */
import test from 'ava';
import { writeFileSync } from 'node:fs';
import { kubectlFor, ok } from './kubectl-helper.js';

test('kubectl version, apply, get, patch and delete a ConfigMap', async (t) => {
  const kubectl = await kubectlFor(t);
  t.regex(await ok(t, kubectl, 'version'), /Server Version: v1\.\d+/);
  const file = kubectl.file('cm.yaml', 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: app\n  labels: {tier: web}\ndata:\n  a: "1"\n');

  t.regex(await ok(t, kubectl, 'apply', '-f', file), /configmap\/app created/);
  const got = JSON.parse(await ok(t, kubectl, 'get', 'configmap', 'app', '-o', 'json'));
  t.like(got, { kind: 'ConfigMap', apiVersion: 'v1', metadata: { name: 'app', namespace: 'default', labels: { tier: 'web' } }, data: { a: '1' } });
  t.regex(await ok(t, kubectl, 'get', 'configmaps'), /^NAME\s+.*\napp\s/m);
  t.regex(await ok(t, kubectl, 'apply', '-f', file), /configmap\/app unchanged/);

  writeFileSync(file, 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: app\ndata:\n  a: "2"\n');
  t.regex(await ok(t, kubectl, 'apply', '-f', file), /configmap\/app configured/);
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
  t.regex(await ok(t, kubectl, 'apply', '-f', crd), /customresourcedefinition.apiextensions.k8s.io\/widgets.example.com created/);
  await ok(t, kubectl, 'wait', '--for', 'condition=Established', 'crd/widgets.example.com', '--timeout=90s');
  t.regex(await ok(t, kubectl, 'apply', '-f', cr), /widget.example.com\/w1 created/);
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

test('kubectl and a structural CRD schema: defaults come back, unknown fields fail (fieldValidation=Strict), server-side apply too', async (t) => {
  const kubectl = await kubectlFor(t);
  const crd = kubectl.file(
    'crd.yaml',
    `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: queues.example.com
spec:
  group: example.com
  scope: Namespaced
  names: {plural: queues, singular: queue, kind: Queue}
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
              replicas: {type: integer, default: 1}
              terminationGracePeriodSeconds: {type: integer, default: 604800}
              service: {type: object, default: {}, properties: {type: {type: string, default: ClusterIP}}}
`,
  );
  await ok(t, kubectl, 'apply', '-f', crd);
  await ok(t, kubectl, 'wait', '--for', 'condition=Established', 'crd/queues.example.com', '--timeout=90s');
  const typo = await kubectl(
    'apply',
    '-f',
    kubectl.file('typo.yaml', 'apiVersion: example.com/v1\nkind: Queue\nmetadata:\n  name: q\nspec:\n  replicas: 3\n  replica: 3\n'),
  );
  t.not(typo.code, 0);
  t.regex(
    typo.stderr,
    /Error from server \(BadRequest\): error when creating ".*typo.yaml": Queue in version "v1" cannot be handled as a Queue: strict decoding error: unknown field "spec.replica"/,
  );
  const ssa = await kubectl(
    'apply',
    '--server-side',
    '-f',
    kubectl.file('typo.yaml', 'apiVersion: example.com/v1\nkind: Queue\nmetadata:\n  name: q\nspec:\n  replica: 3\n'),
  );
  t.not(ssa.code, 0);
  t.regex(ssa.stderr, /failed to create typed patch object \(default\/q; example.com\/v1, Kind=Queue\): \.spec\.replica: field not declared in schema/);
  t.regex(
    await ok(t, kubectl, 'apply', '-f', kubectl.file('q.yaml', 'apiVersion: example.com/v1\nkind: Queue\nmetadata:\n  name: q\nspec:\n  replicas: 3\n')),
    /queue.example.com\/q created/,
  );
  const got = JSON.parse(await ok(t, kubectl, 'get', 'queue', 'q', '-o', 'json'));
  t.deepEqual(got.spec, { replicas: 3, terminationGracePeriodSeconds: 604800, service: { type: 'ClusterIP' } });
  const relaxed = await kubectl(
    'apply',
    '--validate=false',
    '-f',
    kubectl.file('typo.yaml', 'apiVersion: example.com/v1\nkind: Queue\nmetadata:\n  name: q\nspec:\n  replicas: 3\n  replica: 3\n'),
  );
  t.is(relaxed.code, 0, relaxed.stderr);
  t.false('replica' in JSON.parse(await ok(t, kubectl, 'get', 'queue', 'q', '-o', 'json')).spec, 'without strict validation the unknown field is pruned');
});

const DEPLOYMENT = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  replicas: 2
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
      - name: nginx
        image: nginx:1.25
        ports: [{containerPort: 80}]
      - name: sidecar
        image: busybox:1.36
`;

test('kubectl apply (validated), strategic patch, scale and wait on a Deployment', async (t) => {
  const kubectl = await kubectlFor(t);
  const file = kubectl.file('deploy.yaml', DEPLOYMENT);
  t.regex(await ok(t, kubectl, 'apply', '-f', file), /deployment\.apps\/web created/);
  const images = async (): Promise<string> =>
    ok(t, kubectl, 'get', 'deploy', 'web', '-o', 'jsonpath={range .spec.template.spec.containers[*]}{.name}={.image} {end}');
  t.is(await images(), 'nginx=nginx:1.25 sidecar=busybox:1.36 ');

  // Client-side apply computes a three-way strategic merge patch ($setElementOrder) from its Go types.
  writeFileSync(file, DEPLOYMENT.replace('busybox:1.36', 'busybox:1.37'));
  t.regex(await ok(t, kubectl, 'apply', '-f', file), /deployment\.apps\/web configured/);
  t.is(await images(), 'nginx=nginx:1.25 sidecar=busybox:1.37 ');
  t.regex(
    await ok(t, kubectl, 'patch', 'deploy', 'web', '-p', '{"spec":{"template":{"spec":{"containers":[{"name":"nginx","image":"nginx:1.26"}]}}}}'),
    /patched/,
  );
  t.is(await images(), 'nginx=nginx:1.26 sidecar=busybox:1.37 ', 'a strategic patch of one container keeps the other');
  t.is(await ok(t, kubectl, 'get', 'deploy', 'web', '-o', 'jsonpath={.metadata.generation}'), '3');

  t.regex(await ok(t, kubectl, 'scale', 'deploy', 'web', '--replicas=5'), /scaled/);
  await ok(t, kubectl, 'wait', '--for=jsonpath={.spec.replicas}=5', 'deploy/web', '--timeout=90s');
  await ok(
    t,
    kubectl,
    'patch',
    'deploy',
    'web',
    '--subresource=status',
    '--type=merge',
    '-p',
    '{"status":{"conditions":[{"type":"Available","status":"True","reason":"MinimumReplicasAvailable"}]}}',
  );
  t.regex(await ok(t, kubectl, 'wait', '--for=condition=Available', 'deploy/web', '--timeout=90s'), /condition met/);

  const invalid = await kubectl(
    'apply',
    '-f',
    kubectl.file('bad.yaml', DEPLOYMENT.replace('name: web\n', 'name: bad\n').replace('labels: {app: web}', 'labels: {app: other}')),
  );
  t.not(invalid.code, 0);
  t.regex(invalid.stderr, /The Deployment "bad" is invalid: spec\.template\.metadata\.labels: Invalid value: .*`selector` does not match template `labels`/);
});

test('kubectl apply --server-side with a conflict, get -w, delete --cascade and wait --for=delete', async (t) => {
  const kubectl = await kubectlFor(t);
  const watch = kubectl.spawn(
    'get',
    'configmaps',
    '-w',
    '--output-watch-events',
    '-o',
    'custom-columns=EVENT:.type,NAME:.object.metadata.name,A:.object.data.a',
  );
  const file = kubectl.file('cm.yaml', 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: shared}\ndata: {a: "1", b: "2"}\n');
  t.regex(await ok(t, kubectl, 'apply', '--server-side', '--field-manager=alice', '-f', file), /serverside-applied/);
  writeFileSync(file, 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: shared}\ndata: {a: "9"}\n');
  const conflict = await kubectl('apply', '--server-side', '--field-manager=bob', '-f', file);
  t.not(conflict.code, 0);
  t.regex(conflict.stderr, /Apply failed with 1 conflict: conflict with "alice": \.data\.a/);
  t.regex(await ok(t, kubectl, 'apply', '--server-side', '--field-manager=bob', '--force-conflicts', '-f', file), /serverside-applied/);
  const cm = JSON.parse(await ok(t, kubectl, 'get', 'cm', 'shared', '-o', 'json', '--show-managed-fields'));
  t.deepEqual(cm.data, { a: '9', b: '2' });
  t.deepEqual(
    cm.metadata.managedFields.map((m: any) => `${m.manager}:${m.operation}:${Object.keys(m.fieldsV1['f:data']).join(',')}`),
    ['alice:Apply:f:b', 'bob:Apply:f:a'],
  );

  t.regex(await ok(t, kubectl, 'delete', 'cm', 'shared', '--cascade=foreground', '--wait=false'), /deleted/);
  const marked = JSON.parse(await ok(t, kubectl, 'get', 'cm', 'shared', '-o', 'json'));
  t.deepEqual(marked.metadata.finalizers, ['foregroundDeletion'], 'the API records foreground deletion; the garbage collector finishes it');
  t.truthy(marked.metadata.deletionTimestamp);
  const waiting = kubectl('wait', '--for=delete', 'cm/shared', '--timeout=90s');
  await ok(t, kubectl, 'patch', 'cm', 'shared', '--type=merge', '-p', '{"metadata":{"finalizers":null}}');
  t.is((await waiting).code, 0);

  const deadline = Date.now() + 10_000;
  while (!/DELETED\s+shared/.test(watch.output()) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
  const lines = (await watch.stop())
    .split('\n')
    .filter((l) => l.includes('shared'))
    .map((l) => l.trim().split(/\s+/).join(' '));
  t.deepEqual([...new Set(lines)], ['ADDED shared 1', 'MODIFIED shared 9', 'DELETED shared 9']);
});

test('kubectl api-resources reads aggregated discovery: every built-in kind with short names and scope', async (t) => {
  const kubectl = await kubectlFor(t);
  const table = await ok(t, kubectl, 'api-resources', '--no-headers');
  const rows = new Map(
    table
      .trim()
      .split('\n')
      .map((l) => [l.trim().split(/\s+/)[0], l.trim().split(/\s+/).join(' ')]),
  );
  for (const [name, row] of [
    ['pods', 'pods po v1 true Pod'],
    ['services', 'services svc v1 true Service'],
    ['persistentvolumeclaims', 'persistentvolumeclaims pvc v1 true PersistentVolumeClaim'],
    ['nodes', 'nodes no v1 false Node'],
    ['deployments', 'deployments deploy apps/v1 true Deployment'],
    ['statefulsets', 'statefulsets sts apps/v1 true StatefulSet'],
    ['jobs', 'jobs batch/v1 true Job'],
    ['poddisruptionbudgets', 'poddisruptionbudgets pdb policy/v1 true PodDisruptionBudget'],
    ['leases', 'leases coordination.k8s.io/v1 true Lease'],
    ['clusterroles', 'clusterroles rbac.authorization.k8s.io/v1 false ClusterRole'],
    ['customresourcedefinitions', 'customresourcedefinitions crd,crds apiextensions.k8s.io/v1 false CustomResourceDefinition'],
  ] as const) {
    t.is(rows.get(name), row);
  }
  const { raw } = await import('./helpers.js');
  const aggregated = await raw(kubectl.env.cluster, 'GET', '/apis', undefined, undefined, {
    Accept: 'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json',
  });
  t.is(aggregated.headers.get('content-type'), 'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList');
  t.is(aggregated.json.kind, 'APIGroupDiscoveryList');
  const apps = aggregated.json.items.find((g: any) => g.metadata.name === 'apps');
  const deployments = apps.versions[0].resources.find((r: any) => r.resource === 'deployments');
  t.like(deployments, { responseKind: { group: 'apps', version: 'v1', kind: 'Deployment' }, scope: 'Namespaced', singularResource: 'deployment' });
  t.deepEqual(
    deployments.subresources.map((s: any) => `${s.subresource}:${s.responseKind.kind}`),
    ['status:Deployment', 'scale:Scale'],
  );
  const legacy = await raw(kubectl.env.cluster, 'GET', '/api', undefined, undefined, { Accept: 'application/json' });
  t.is(legacy.json.kind, 'APIVersions');
  const openapi = await raw(kubectl.env.cluster, 'GET', '/openapi/v3');
  const url = openapi.json.paths['apis/apps/v1'].serverRelativeURL;
  const doc = await raw(kubectl.env.cluster, 'GET', url);
  const patch = doc.json.paths['/apis/apps/v1/namespaces/{namespace}/deployments/{name}'].patch;
  t.deepEqual(patch['x-kubernetes-group-version-kind'], { group: 'apps', version: 'v1', kind: 'Deployment' });
  t.true(
    patch.parameters.some((p: any) => p.name === 'fieldValidation'),
    'kubectl leaves validation to the server',
  );
});
