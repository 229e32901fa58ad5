/**
 * The emulated Kubernetes release (`kubernetesVersion`) and the older group-versions it serves, with
 * conversion to and from the stored form: apiextensions.k8s.io/v1beta1 CRDs, policy/v1beta1
 * PodDisruptionBudgets, batch/v1beta1 CronJobs, admissionregistration webhook configurations.
 */
import test from 'ava';
import { EmbeddedCluster } from '../../src/cluster/index.js';
import { clusterAuth, openWatch, raw, startCluster } from './helpers.js';
import { kubectlFor, ok } from './kubectl-helper.js';
import { kubernetesBody } from './protobuf/encode.js';

const CRDS_V1BETA1 = '/apis/apiextensions.k8s.io/v1beta1/customresourcedefinitions';
const CRDS_V1 = '/apis/apiextensions.k8s.io/v1/customresourcedefinitions';

/** Shaped like the CRDs operator-sdk 0.17 generated (zookeeper-operator's): every v1beta1-only field. */
function zooCrdV1beta1(): Record<string, unknown> {
  return {
    apiVersion: 'apiextensions.k8s.io/v1beta1',
    kind: 'CustomResourceDefinition',
    metadata: { name: 'zoos.example.com' },
    spec: {
      additionalPrinterColumns: [
        { JSONPath: '.spec.replicas', description: 'desired members', name: 'Replicas', type: 'integer' },
        { JSONPath: '.metadata.creationTimestamp', name: 'Age', type: 'date' },
      ],
      group: 'example.com',
      names: { kind: 'Zoo', listKind: 'ZooList', plural: 'zoos', shortNames: ['zo'], singular: 'zoo' },
      scope: 'Namespaced',
      subresources: { status: {} },
      validation: {
        openAPIV3Schema: { type: 'object', properties: { spec: { type: 'object', properties: { replicas: { type: 'integer', format: 'int32' } } } } },
      },
      version: 'v1beta1',
      versions: [{ name: 'v1beta1', served: true, storage: true }],
    },
  };
}

test('a v1beta1 CRD reads back as v1: top-level schema, subresources and columns in each version, preserveUnknownFields defaulted true', async (t) => {
  const { cluster } = await startCluster(t, { kubernetesVersion: '1.18' });
  const created = await raw(cluster, 'POST', CRDS_V1BETA1, JSON.stringify(zooCrdV1beta1()));
  t.is(created.status, 201, JSON.stringify(created.json));
  t.is(created.json.apiVersion, 'apiextensions.k8s.io/v1beta1');
  t.is(created.json.spec.version, 'v1beta1');
  t.is(created.json.spec.preserveUnknownFields, true, 'v1beta1 defaults preserveUnknownFields to true');
  t.deepEqual(created.json.spec.conversion, { strategy: 'None' });
  t.deepEqual(created.json.spec.subresources, { status: {} });
  t.is(created.json.spec.additionalPrinterColumns[0].JSONPath, '.spec.replicas');

  const v1 = await raw(cluster, 'GET', `${CRDS_V1}/zoos.example.com`);
  t.is(v1.json.apiVersion, 'apiextensions.k8s.io/v1');
  const spec = v1.json.spec;
  for (const gone of ['version', 'validation', 'subresources', 'additionalPrinterColumns']) t.false(gone in spec, `${gone} is not a v1 field`);
  t.is(spec.preserveUnknownFields, true);
  t.is(spec.versions.length, 1);
  t.like(spec.versions[0], { name: 'v1beta1', served: true, storage: true, subresources: { status: {} } });
  t.is(spec.versions[0].schema.openAPIV3Schema.properties.spec.properties.replicas.type, 'integer');
  t.deepEqual(spec.versions[0].additionalPrinterColumns[0], { name: 'Replicas', type: 'integer', description: 'desired members', jsonPath: '.spec.replicas' });
  t.like(v1.json.status, { storedVersions: ['v1beta1'] });
  t.truthy(v1.json.status.conditions.find((c: { type: string; status: string }) => c.type === 'Established' && c.status === 'True'));

  // Its custom resources are served, with the status subresource the top level declared.
  const zoos = '/apis/example.com/v1beta1/namespaces/default/zoos';
  const zoo = await raw(
    cluster,
    'POST',
    zoos,
    JSON.stringify({ apiVersion: 'example.com/v1beta1', kind: 'Zoo', metadata: { name: 'z1' }, spec: { replicas: 3 } }),
  );
  t.is(zoo.status, 201, JSON.stringify(zoo.json));
  const status = await raw(cluster, 'PUT', `${zoos}/z1/status`, JSON.stringify({ ...zoo.json, status: { readyReplicas: 3 } }));
  t.is(status.status, 200);
  t.deepEqual(status.json.status, { readyReplicas: 3 });
});

test('a v1 CRD reads back as v1beta1: identical per-version fields move to the top level, different ones stay', async (t) => {
  const { cluster } = await startCluster(t, { kubernetesVersion: '1.20' });
  const schema = { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } };
  const other = { openAPIV3Schema: { type: 'object', properties: { spec: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } } } };
  const column = { name: 'Size', type: 'integer', jsonPath: '.spec.size' };
  const body = {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: 'gadgets.example.com' },
    spec: {
      group: 'example.com',
      scope: 'Cluster',
      names: { plural: 'gadgets', kind: 'Gadget' },
      versions: [
        { name: 'v2', served: true, storage: true, schema, subresources: { status: {} }, additionalPrinterColumns: [column] },
        { name: 'v1', served: true, storage: false, schema: other, subresources: { status: {} }, additionalPrinterColumns: [column] },
      ],
    },
  };
  t.is((await raw(cluster, 'POST', CRDS_V1, JSON.stringify(body))).status, 201);
  const beta = (await raw(cluster, 'GET', `${CRDS_V1BETA1}/gadgets.example.com`)).json;
  t.is(beta.spec.version, 'v2', 'version is versions[0]');
  t.deepEqual(beta.spec.subresources, { status: {} });
  t.deepEqual(beta.spec.additionalPrinterColumns, [{ name: 'Size', type: 'integer', JSONPath: '.spec.size' }]);
  t.is(beta.spec.validation, undefined, 'schemas differ, so they stay per version');
  t.deepEqual(
    beta.spec.versions.map((v: { schema?: unknown }) => v.schema),
    [schema, other],
  );
  t.false('subresources' in beta.spec.versions[0]);
  t.is(beta.spec.preserveUnknownFields, false, 'v1beta1 shows the v1 default false');

  // A v1beta1 client writing back what it read changes nothing.
  const again = await raw(cluster, 'PUT', `${CRDS_V1BETA1}/gadgets.example.com`, JSON.stringify(beta));
  t.is(again.status, 200, JSON.stringify(again.json));
  t.is(again.json.metadata.resourceVersion, beta.metadata.resourceVersion, 'a round trip through v1beta1 is a no-op');
  t.is(again.json.metadata.generation, 1);
});

test('v1beta1 CRD defaulting and validation: versions from version, no schema needed; v1 still requires one', async (t) => {
  const { cluster } = await startCluster(t, { kubernetesVersion: '1.18' });
  const minimal = {
    apiVersion: 'apiextensions.k8s.io/v1beta1',
    kind: 'CustomResourceDefinition',
    metadata: { name: 'bare.example.com' },
    spec: { group: 'example.com', version: 'v1alpha1', names: { plural: 'bare', kind: 'Bare' } },
  };
  const created = await raw(cluster, 'POST', CRDS_V1BETA1, JSON.stringify(minimal));
  t.is(created.status, 201, JSON.stringify(created.json));
  t.deepEqual(created.json.spec.versions, [{ name: 'v1alpha1', served: true, storage: true }]);
  t.is(created.json.spec.scope, 'Namespaced', 'v1beta1 defaults the scope');
  t.like(created.json.spec.names, { singular: 'bare', listKind: 'BareList' });

  const noSchemaV1 = {
    ...minimal,
    apiVersion: 'apiextensions.k8s.io/v1',
    metadata: { name: 'bones.example.com' },
    spec: { group: 'example.com', scope: 'Namespaced', names: { plural: 'bones', kind: 'Bone' }, versions: [{ name: 'v1', served: true, storage: true }] },
  };
  const refused = await raw(cluster, 'POST', CRDS_V1, JSON.stringify(noSchemaV1));
  t.is(refused.status, 422);
  t.regex(refused.json.message, /spec\.versions\[0\]\.schema\.openAPIV3Schema: Required value: schemas are required/);

  const mismatch = zooCrdV1beta1();
  (mismatch.spec as Record<string, unknown>).version = 'v1';
  const badVersion = await raw(cluster, 'POST', CRDS_V1BETA1, JSON.stringify(mismatch));
  t.is(badVersion.status, 422);
  t.regex(badVersion.json.message, /spec\.version: Invalid value: "v1": must match the first version in spec\.versions/);

  const both = zooCrdV1beta1();
  (both.spec as Record<string, unknown>).versions = [{ name: 'v1beta1', served: true, storage: true, schema: { openAPIV3Schema: { type: 'object' } } }];
  const exclusive = await raw(cluster, 'POST', CRDS_V1BETA1, JSON.stringify(both));
  t.is(exclusive.status, 422);
  t.regex(exclusive.json.message, /spec\.validation: Forbidden: top-level and per-version schemas are mutually exclusive/);
});

test('a v1beta1 CRD watch streams v1beta1 objects', async (t) => {
  const { cluster } = await startCluster(t, { kubernetesVersion: '1.18' });
  const watch = await openWatch(t, cluster, `${CRDS_V1BETA1}?watch=1`);
  await raw(
    cluster,
    'POST',
    CRDS_V1,
    JSON.stringify({
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'CustomResourceDefinition',
      metadata: { name: 'things.example.com' },
      spec: {
        group: 'example.com',
        scope: 'Namespaced',
        names: { plural: 'things', kind: 'Thing' },
        versions: [{ name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: { type: 'object' } } }],
      },
    }),
  );
  const [added] = await watch.waitFor(1);
  t.is(added!.type, 'ADDED');
  t.is(added!.object.apiVersion, 'apiextensions.k8s.io/v1beta1');
  t.is(added!.object.spec.version, 'v1');
  t.deepEqual(added!.object.spec.validation, { openAPIV3Schema: { type: 'object' } });
});

const PDBS_V1BETA1 = '/apis/policy/v1beta1/namespaces/default/poddisruptionbudgets';
const PDBS_V1 = '/apis/policy/v1/namespaces/default/poddisruptionbudgets';

test('policy/v1beta1 PodDisruptionBudget: created as zookeeper-operator does, read back unchanged as v1beta1 and v1', async (t) => {
  const { cluster } = await startCluster(t, { kubernetesVersion: '1.21' });
  // zk.MakePodDisruptionBudget: maxUnavailable 1, selector app=<cluster>.
  const pdb = {
    apiVersion: 'policy/v1beta1',
    kind: 'PodDisruptionBudget',
    metadata: { name: 'zk' },
    spec: { maxUnavailable: 1, selector: { matchLabels: { app: 'zk' } } },
  };
  const created = await raw(cluster, 'POST', PDBS_V1BETA1, JSON.stringify(pdb));
  t.is(created.status, 201, JSON.stringify(created.json));
  t.is(created.json.apiVersion, 'policy/v1beta1');
  t.deepEqual(created.json.spec, pdb.spec);
  const v1 = await raw(cluster, 'GET', `${PDBS_V1}/zk`);
  t.is(v1.json.apiVersion, 'policy/v1');
  t.deepEqual(v1.json.spec, pdb.spec);
  const list = await raw(cluster, 'GET', PDBS_V1BETA1);
  t.is(list.json.apiVersion, 'policy/v1beta1');
  t.is(list.json.kind, 'PodDisruptionBudgetList');
  t.is(list.json.items.length, 1);
  // Strategic merge patch through v1beta1 (kubectl and client-go send one for built-in kinds).
  const patched = await raw(
    cluster,
    'PATCH',
    `${PDBS_V1BETA1}/zk`,
    JSON.stringify({ spec: { selector: { matchLabels: { tier: 'db' } } } }),
    'application/strategic-merge-patch+json',
  );
  t.is(patched.status, 200, JSON.stringify(patched.json));
  t.deepEqual(patched.json.spec.selector, { matchLabels: { app: 'zk', tier: 'db' } });
  t.is(patched.json.metadata.generation, 2);
});

test('policy/v1beta1 empty selector selects nothing: it reads as a match-none selector in v1, and v1 match-all reads as match-all in v1beta1', async (t) => {
  const { cluster } = await startCluster(t, { kubernetesVersion: '1.21' });
  const beta = await raw(cluster, 'POST', PDBS_V1BETA1, JSON.stringify({ metadata: { name: 'none' }, spec: { minAvailable: 1, selector: {} } }));
  t.is(beta.status, 201);
  t.deepEqual(beta.json.spec.selector, {}, 'v1beta1 shows what it was sent');
  const asV1 = await raw(cluster, 'GET', `${PDBS_V1}/none`);
  t.deepEqual(asV1.json.spec.selector, { matchExpressions: [{ key: 'pdb.kubernetes.io/deprecated-v1beta1-empty-selector-match', operator: 'Exists' }] });

  await raw(cluster, 'POST', PDBS_V1, JSON.stringify({ metadata: { name: 'all' }, spec: { minAvailable: 1, selector: {} } }));
  const asBeta = await raw(cluster, 'GET', `${PDBS_V1BETA1}/all`);
  t.deepEqual(asBeta.json.spec.selector, {
    matchExpressions: [{ key: 'pdb.kubernetes.io/deprecated-v1beta1-empty-selector-match', operator: 'DoesNotExist' }],
  });
  t.deepEqual((await raw(cluster, 'GET', `${PDBS_V1}/all`)).json.spec.selector, {});
  // Written back as read, the v1beta1 match-all form is the v1 empty selector again.
  const back = await raw(cluster, 'PUT', `${PDBS_V1BETA1}/all`, JSON.stringify(asBeta.json));
  t.is(back.json.metadata.resourceVersion, asBeta.json.metadata.resourceVersion, 'no-op');
});

test('discovery under 1.18 lists the v1beta1 APIs with the preferred versions 1.18 reported; the default lists none', async (t) => {
  const old = await startCluster(t, { kubernetesVersion: '1.18' });
  const version = await raw(old.cluster, 'GET', '/version');
  t.like(version.json, { major: '1', minor: '18', gitVersion: 'v1.18.0+kperturb' });
  t.is(old.cluster.kubernetesVersion, '1.18');
  const groups = Object.fromEntries(
    (await raw(old.cluster, 'GET', '/apis')).json.groups.map(
      (g: { name: string; versions: Array<{ version: string }>; preferredVersion: { version: string } }) => [
        g.name,
        { versions: g.versions.map((v) => v.version), preferred: g.preferredVersion.version },
      ],
    ),
  );
  t.deepEqual(groups.policy, { versions: ['v1beta1'], preferred: 'v1beta1' });
  t.deepEqual(groups['apiextensions.k8s.io'], { versions: ['v1', 'v1beta1'], preferred: 'v1' });
  t.deepEqual(groups.batch, { versions: ['v1', 'v1beta1'], preferred: 'v1' });
  t.deepEqual(groups['events.k8s.io'], { versions: ['v1beta1'], preferred: 'v1beta1' });
  t.deepEqual(groups['admissionregistration.k8s.io'], { versions: ['v1', 'v1beta1'], preferred: 'v1' });
  t.deepEqual(groups['rbac.authorization.k8s.io'], { versions: ['v1', 'v1beta1'], preferred: 'v1' });
  const batchV1 = (await raw(old.cluster, 'GET', '/apis/batch/v1')).json.resources.map((r: { name: string }) => r.name);
  t.false(batchV1.includes('cronjobs'), 'batch/v1 CronJob came in 1.21');
  const batchBeta = (await raw(old.cluster, 'GET', '/apis/batch/v1beta1')).json.resources.map((r: { name: string }) => r.name);
  t.deepEqual(batchBeta, ['cronjobs', 'cronjobs/status']);
  t.is((await raw(old.cluster, 'GET', '/apis/policy/v1')).status, 404);
  t.is((await raw(old.cluster, 'GET', '/apis/policy/v1/namespaces/default/poddisruptionbudgets')).status, 404);
  // A 1.18 server predates aggregated discovery: the client's fallback (plain JSON) is what it gets.
  const accept =
    'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList,application/json';
  const aggregated = await raw(old.cluster, 'GET', '/apis', undefined, 'application/json', { Accept: accept });
  t.is(aggregated.json.kind, 'APIGroupList');

  const current = await startCluster(t);
  t.like((await raw(current.cluster, 'GET', '/version')).json, { minor: '32' });
  const currentGroups = (await raw(current.cluster, 'GET', '/apis')).json.groups as Array<{ name: string; versions: Array<{ version: string }> }>;
  const notV1 = currentGroups.flatMap((g) => g.versions.filter((v) => v.version !== 'v1').map((v) => `${g.name}/${v.version}`));
  t.deepEqual(notV1, ['autoscaling/v2'], 'v1.32 serves only v1 of the built-in groups here, and autoscaling/v2 (HorizontalPodAutoscaler)');
  t.is((await raw(current.cluster, 'GET', PDBS_V1BETA1)).status, 404);
  t.is((await raw(current.cluster, 'GET', CRDS_V1BETA1)).status, 404);
  t.is((await raw(current.cluster, 'GET', '/apis', undefined, 'application/json', { Accept: accept })).json.kind, 'APIGroupDiscoveryList');
  const currentAggregated = (await raw(current.cluster, 'GET', '/apis', undefined, 'application/json', { Accept: accept })).json;
  const policy = currentAggregated.items.find((i: { metadata: { name: string } }) => i.metadata.name === 'policy');
  t.deepEqual(
    policy.versions.map((v: { version: string }) => v.version),
    ['v1'],
  );
});

test('1.28 answers aggregated discovery only as v2beta1; 1.24 still serves policy/v1beta1 beside v1', async (t) => {
  const { cluster } = await startCluster(t, { kubernetesVersion: '1.28' });
  const accept =
    'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList,application/json';
  const res = await raw(cluster, 'GET', '/apis', undefined, 'application/json', { Accept: accept });
  t.is(res.json.apiVersion, 'apidiscovery.k8s.io/v2beta1');
  t.is((await raw(cluster, 'GET', PDBS_V1BETA1)).status, 404, 'policy/v1beta1 was removed in 1.25');

  const older = await startCluster(t, { kubernetesVersion: 'v1.24' });
  const policy = (await raw(older.cluster, 'GET', '/apis/policy')).json;
  t.deepEqual(
    policy.versions.map((v: { version: string }) => v.version),
    ['v1', 'v1beta1'],
  );
  t.is(policy.preferredVersion.version, 'v1');
  t.is((await raw(older.cluster, 'GET', CRDS_V1BETA1)).status, 404, 'apiextensions v1beta1 was removed in 1.22');
});

test('an unsupported release is refused when the cluster starts', async (t) => {
  await t.throwsAsync(EmbeddedCluster.start({ kubernetesVersion: '1.17', simulation: false }), {
    instanceOf: RangeError,
    message: /1\.17.*"1\.18" to "1\.32"/,
  });
  await t.throwsAsync(EmbeddedCluster.start({ kubernetesVersion: 'latest', simulation: false }), { instanceOf: RangeError });
});

test('batch/v1beta1 CronJob is the same object as batch/v1 (1.21 serves both)', async (t) => {
  const { cluster } = await startCluster(t, { kubernetesVersion: '1.21' });
  const body = {
    metadata: { name: 'backup' },
    spec: {
      schedule: '0 * * * *',
      jobTemplate: { spec: { template: { spec: { restartPolicy: 'OnFailure', containers: [{ name: 'b', image: 'busybox' }] } } } },
    },
  };
  const created = await raw(cluster, 'POST', '/apis/batch/v1beta1/namespaces/default/cronjobs', JSON.stringify(body));
  t.is(created.status, 201, JSON.stringify(created.json));
  t.like(created.json.spec, { concurrencyPolicy: 'Allow', suspend: false, successfulJobsHistoryLimit: 3, failedJobsHistoryLimit: 1 });
  const v1 = await raw(cluster, 'GET', '/apis/batch/v1/namespaces/default/cronjobs/backup');
  t.is(v1.json.apiVersion, 'batch/v1');
  t.is(v1.json.metadata.uid, created.json.metadata.uid);
});

test('webhook configurations: v1beta1 defaults are kept when read as v1; v1 requires sideEffects', async (t) => {
  const { cluster } = await startCluster(t, { kubernetesVersion: '1.19' });
  const hook = {
    name: 'v.example.com',
    clientConfig: { service: { namespace: 'default', name: 'hooks' } },
    rules: [{ operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['pods'] }],
  };
  const beta = await raw(
    cluster,
    'POST',
    '/apis/admissionregistration.k8s.io/v1beta1/validatingwebhookconfigurations',
    JSON.stringify({ metadata: { name: 'legacy' }, webhooks: [hook] }),
  );
  t.is(beta.status, 201, JSON.stringify(beta.json));
  const v1 = (await raw(cluster, 'GET', '/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations/legacy')).json;
  t.like(v1.webhooks[0], {
    failurePolicy: 'Ignore',
    matchPolicy: 'Exact',
    sideEffects: 'Unknown',
    timeoutSeconds: 30,
    admissionReviewVersions: ['v1beta1'],
    namespaceSelector: {},
    objectSelector: {},
  });
  t.is(v1.webhooks[0].clientConfig.service.port, 443);
  t.is(v1.webhooks[0].rules[0].scope, '*');
  t.is(v1.metadata.generation, 1);

  const refused = await raw(
    cluster,
    'POST',
    '/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations',
    JSON.stringify({ metadata: { name: 'new' }, webhooks: [hook] }),
  );
  t.is(refused.status, 422);
  t.regex(refused.json.message, /webhooks\[0\]\.sideEffects: Required value/);
  const accepted = await raw(
    cluster,
    'POST',
    '/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations',
    JSON.stringify({ metadata: { name: 'new' }, webhooks: [{ ...hook, sideEffects: 'None', admissionReviewVersions: ['v1'] }] }),
  );
  t.is(accepted.status, 201, JSON.stringify(accepted.json));
  t.like(accepted.json.webhooks[0], { failurePolicy: 'Fail', matchPolicy: 'Equivalent', timeoutSeconds: 10, reinvocationPolicy: 'Never' });
});

test('kubectl applies a v1beta1 CRD and a v1beta1 PDB to a 1.18 cluster and shows them', async (t) => {
  const kubectl = await kubectlFor(t, { kubernetesVersion: '1.18' });
  const crd = kubectl.file('crd.json', JSON.stringify(zooCrdV1beta1()));
  await ok(t, kubectl, 'apply', '-f', crd);
  const pdb = kubectl.file(
    'pdb.json',
    JSON.stringify({
      apiVersion: 'policy/v1beta1',
      kind: 'PodDisruptionBudget',
      metadata: { name: 'zk' },
      spec: { maxUnavailable: 1, selector: { matchLabels: { app: 'zk' } } },
    }),
  );
  await ok(t, kubectl, 'apply', '-f', pdb);
  const shown = JSON.parse(await ok(t, kubectl, 'get', 'pdb', 'zk', '-o', 'json'));
  t.is(shown.apiVersion, 'policy/v1beta1');
  const crdJson = JSON.parse(await ok(t, kubectl, 'get', 'crd', 'zoos.example.com', '-o', 'json'));
  t.is(crdJson.apiVersion, 'apiextensions.k8s.io/v1', 'kubectl reads the preferred version');
  await ok(t, kubectl, 'apply', '-f', crd);
  const zoo = kubectl.file('zoo.json', JSON.stringify({ apiVersion: 'example.com/v1beta1', kind: 'Zoo', metadata: { name: 'z1' }, spec: { replicas: 3 } }));
  await ok(t, kubectl, 'apply', '-f', zoo);
  const table = await ok(t, kubectl, 'get', 'zo');
  t.regex(table, /z1/);
});

test('a policy/v1beta1 PodDisruptionBudget arrives as protobuf from client-go (same messages as policy/v1)', async (t) => {
  const { cluster } = await startCluster(t, { kubernetesVersion: '1.20' });
  const body = kubernetesBody('policy/v1beta1', 'PodDisruptionBudget', [
    {
      n: 1,
      message: [
        { n: 1, bytes: 'zk' },
        { n: 3, bytes: 'default' },
      ],
    },
    {
      n: 2,
      message: [
        {
          n: 2,
          message: [
            {
              n: 1,
              message: [
                { n: 1, bytes: 'app' },
                { n: 2, bytes: 'zk' },
              ],
            },
          ],
        },
        {
          n: 3,
          message: [
            { n: 1, varint: 0 },
            { n: 2, varint: 1 },
          ],
        },
      ],
    },
  ]);
  const res = await fetch(cluster.url + PDBS_V1BETA1, {
    method: 'POST',
    body: new Uint8Array(body),
    headers: { 'Content-Type': 'application/vnd.kubernetes.protobuf', ...clusterAuth(cluster) },
  });
  const json = (await res.json()) as { apiVersion: string; spec: unknown };
  t.is(res.status, 201, JSON.stringify(json));
  t.is(json.apiVersion, 'policy/v1beta1');
  t.deepEqual(json.spec, { maxUnavailable: 1, selector: { matchLabels: { app: 'zk' } } });
});

test('a kind the default release does not serve is named with the releases that do', async (t) => {
  const { releasesServing } = await import('../../src/model/kube-version.js');
  t.is(releasesServing('CustomResourceDefinition', 'apiextensions.k8s.io/v1beta1'), 'Kubernetes 1.18-1.21 serve it');
  t.is(releasesServing('PodDisruptionBudget', 'policy/v1beta1'), 'Kubernetes 1.18-1.24 serve it');
  t.is(releasesServing('StorageClass', 'storage.k8s.io/v1beta1'), 'Kubernetes 1.18-1.21 serve it');
  t.is(releasesServing('HorizontalPodAutoscaler', 'autoscaling/v2'), 'Kubernetes 1.23-1.32 serve it');
  t.is(releasesServing('Widget', 'example.com/v1'), undefined);
  const { cluster } = await startCluster(t);
  const { KubeClient } = await import('../../src/kube/client.js');
  const client = new KubeClient(cluster.url, cluster.clientOptions());
  t.teardown(() => client.close());
  const err = await t.throwsAsync(client.resolveKind('CustomResourceDefinition', 'apiextensions.k8s.io/v1beta1'));
  t.is(
    err?.message,
    'the cluster serves no kind CustomResourceDefinition in apiextensions.k8s.io/v1beta1; Kubernetes 1.18-1.21 serve it (the embedded cluster emulates a release with cluster.kubernetesVersion in kperturb.yaml, or --kubernetes-version for kperturb cluster)',
  );
});
