/**
 * Structural-schema pruning and defaulting of custom resources (apiextensions-apiserver's codec):
 * defaults on create, update, patches, server-side apply, status writes and reads; pruning with the
 * preserve-unknown-fields and embedded-resource exceptions; fieldValidation for unknown fields.
 */
import test from 'ava';
import { customResourceSchemas, customResourceView, decodeCustomResource } from '../../src/cluster/crd-schema.js';
import type { KubeObject } from '../../src/model/object-key.js';
import { brokerCrd } from './crd-schema-fixture.js';
import { mergePatch, jsonPatch, openWatch, raw, startCluster, type TestCluster } from './helpers.js';

const BASE = '/apis/example.com/v1/namespaces/default/brokers';

const SPEC_DEFAULTS = {
  replicas: 1,
  image: 'broker:3.8',
  terminationGracePeriodSeconds: 604800,
  persistence: { storage: '10Gi' },
  resources: { limits: { cpu: '2000m', memory: '2Gi' }, requests: { cpu: '1000m', memory: '2Gi' } },
  service: { annotations: { a: 'b' }, type: 'ClusterIP' },
};

function broker(name: string, spec: Record<string, unknown>, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { apiVersion: 'example.com/v1', kind: 'Broker', metadata: { name }, spec, ...extra };
}

/** Creates a CRD through raw JSON (client-node's typed serializer would drop the x-kubernetes-* keys). */
async function createCrd(c: TestCluster, crd: Record<string, unknown>): Promise<void> {
  const res = await raw(c.cluster, 'POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', JSON.stringify(crd));
  if (res.status !== 201) throw new Error(`CRD create failed: ${JSON.stringify(res.json)}`);
  await new Promise((resolve) => setTimeout(resolve, 20));
}

async function post(c: TestCluster, body: unknown, query = ''): Promise<{ status: number; json: any; headers: Headers }> {
  return raw(c.cluster, 'POST', `${BASE}${query}`, JSON.stringify(body));
}

test('create: scalar defaults, default objects defaulted deeper, as for a RabbitmqCluster with only spec.replicas', async (t) => {
  const c = await startCluster(t);
  await createCrd(c, brokerCrd());
  const res = await post(c, broker('b', { replicas: 3 }));
  t.is(res.status, 201);
  t.deepEqual(res.json.spec, { ...SPEC_DEFAULTS, replicas: 3 });
  t.is(res.json.status, undefined, 'status is reset on create; status defaults need a status object');
  const got = (await c.custom.getNamespacedCustomObject({ group: 'example.com', version: 'v1', namespace: 'default', plural: 'brokers', name: 'b' })) as any;
  t.deepEqual(got.spec, res.json.spec);
  const fields = got.metadata.managedFields[0].fieldsV1['f:spec'];
  t.truthy(fields['f:terminationGracePeriodSeconds'], 'defaults applied on a create belong to its manager, as in Kubernetes');
});

test('create: defaults inside array items and map values; not applied where the field is present; nulls', async (t) => {
  const c = await startCluster(t);
  await createCrd(c, brokerCrd());
  const res = await post(
    c,
    broker('b', {
      image: 'custom:1',
      terminationGracePeriodSeconds: 0,
      persistence: {},
      service: { type: 'NodePort' },
      ports: [
        { name: 'amqp', port: 5672 },
        { name: 'tls', port: 5671, protocol: 'UDP' },
      ],
      plugins: { mqtt: {}, stomp: { enabled: false } },
      image2: 'dropped',
      note: null,
      tls: null,
      replicas: null,
    }),
  );
  t.is(res.status, 201);
  const spec = res.json.spec;
  t.is(spec.image, 'custom:1', 'a present field keeps its value');
  t.is(spec.terminationGracePeriodSeconds, 0, 'a zero value is present');
  t.deepEqual(spec.persistence, { storage: '10Gi' }, 'an empty object present: its fields are defaulted, not the object');
  t.deepEqual(spec.service, { type: 'NodePort' }, 'a present object does not take the default object');
  t.deepEqual(spec.ports, [
    { name: 'amqp', port: 5672, protocol: 'TCP' },
    { name: 'tls', port: 5671, protocol: 'UDP' },
  ]);
  t.deepEqual(spec.plugins, { mqtt: { enabled: true }, stomp: { enabled: false } });
  t.false('image2' in spec, 'unknown fields are pruned');
  t.is(spec.note, null, 'null stays in a nullable field');
  t.false('tls' in spec, 'null in a non-nullable field without a default is dropped');
  t.is(spec.replicas, 1, 'null in a non-nullable field with a default takes the default');
});

test('pruning: unknown fields, preserve-unknown-fields subtrees, embedded resources and their ObjectMeta, top-level metadata', async (t) => {
  const c = await startCluster(t);
  await createCrd(c, brokerCrd());
  const res = await post(
    c,
    broker(
      'b',
      {
        replicas: 1,
        persistence: { storage: 5, unknown: 1 },
        template: {
          apiVersion: 'v1',
          kind: 'Pod',
          metadata: { name: 'x', labels: { app: 'y' }, annotations: {}, bogus: 'z' },
          spec: { paused: true, containers: [] },
          other: 1,
        },
        extra: { anything: { deep: [1, { x: 2 }] }, known: { a: 'kept', b: 'pruned' } },
        resources: { limits: { cpu: 1 } },
      },
      { topLevel: 'dropped' },
    ),
  );
  t.is(res.status, 201);
  const { spec } = res.json;
  t.false('topLevel' in res.json);
  t.deepEqual(spec.persistence, { storage: 5 }, 'an int-or-string field keeps an integer; the unknown field is pruned');
  t.deepEqual(spec.template, { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'x', labels: { app: 'y' } }, spec: { paused: true } });
  t.deepEqual(spec.extra, { anything: { deep: [1, { x: 2 }] }, known: { a: 'kept' } }, 'specified properties under preserve-unknown-fields are pruned again');
  t.deepEqual(spec.resources, { limits: { cpu: 1 } });

  const withMeta = await post(c, { ...broker('m', {}), metadata: { name: 'm', labels: {}, bogus: 1, finalizers: [] } });
  t.is(withMeta.status, 201);
  t.is(withMeta.json.metadata.bogus, undefined, 'unknown metadata fields are dropped (metadata goes through ObjectMeta)');
  t.is(withMeta.json.metadata.labels, undefined, 'empty (omitempty) metadata fields are dropped');
  t.is(withMeta.json.metadata.finalizers, undefined);
});

test('embedded resources need a string apiVersion and kind: 422 as objectmeta.Validate words it, 400 for a wrong type', async (t) => {
  const c = await startCluster(t);
  await createCrd(c, brokerCrd());
  const missing = await post(c, broker('a', { template: { metadata: {} } }));
  t.is(missing.status, 422);
  t.is(
    missing.json.message,
    'Broker.example.com "a" is invalid: [spec.template.apiVersion: Required value: must not be empty, spec.template.kind: Required value: must not be empty]',
  );
  const bad = await post(c, broker('b', { template: { apiVersion: 'a/b/c', kind: 'Pod_x' } }));
  t.is(bad.status, 422);
  t.deepEqual(
    bad.json.details.causes.map((c: any) => `${c.field}: ${c.message}`),
    [
      'spec.template.apiVersion: Invalid value: "a/b/c": unexpected GroupVersion string: a/b/c',
      `spec.template.kind: Invalid value: "Pod_x": may have mixed case, but should otherwise match: a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')`,
    ],
  );
  const wrongType = await post(c, broker('c', { template: { apiVersion: 'v1', kind: 3 } }));
  t.is(wrongType.status, 400);
  t.is(wrongType.json.message, 'Broker in version "v1" cannot be handled as a Broker: spec.template.kind: Invalid value: 3: must be a string');
  const nullMeta = await post(c, broker('d', { template: { apiVersion: 'v1', kind: 'Pod', metadata: null } }));
  t.is(nullMeta.status, 201);
  t.deepEqual(nullMeta.json.spec.template, { apiVersion: 'v1', kind: 'Pod', metadata: {} });
});

test('fieldValidation: Warn (the default) answers warnings, Strict fails with the real messages, Ignore says nothing', async (t) => {
  const c = await startCluster(t);
  await createCrd(c, brokerCrd());
  const body = broker('w', { replicas: 1, zzz: 1, template: { apiVersion: 'v1', kind: 'Pod', metadata: { foo: 1 } }, ports: [{ name: 'a', x: 1 }] });
  const warned = await post(c, body);
  t.is(warned.status, 201);
  t.is(
    warned.headers.get('warning'),
    '299 - "unknown field \\"spec.ports[0].x\\"", 299 - "unknown field \\"spec.zzz\\"", 299 - "unknown field \\"spec.template.metadata.foo\\""',
  );
  const ignored = await post(c, { ...body, metadata: { name: 'i' } }, '?fieldValidation=Ignore');
  t.is(ignored.status, 201);
  t.is(ignored.headers.get('warning'), null);

  const strict = await post(c, { ...body, metadata: { name: 's' } }, '?fieldValidation=Strict');
  t.is(strict.status, 400);
  t.like(strict.json, {
    reason: 'BadRequest',
    message:
      'Broker in version "v1" cannot be handled as a Broker: strict decoding error: unknown field "spec.ports[0].x", unknown field "spec.zzz", unknown field "spec.template.metadata.foo"',
  });
  const put = await raw(c.cluster, 'PUT', `${BASE}/w?fieldValidation=Strict`, JSON.stringify({ ...warned.json, spec: { ...warned.json.spec, bad: 1 } }));
  t.is(put.status, 400);
  t.regex(put.json.message, /cannot be handled as a Broker: strict decoding error: unknown field "spec.bad"$/);

  const patch = await raw(c.cluster, 'PATCH', `${BASE}/w?fieldValidation=Strict`, JSON.stringify({ spec: { bad: 1 } }), 'application/merge-patch+json');
  t.is(patch.status, 422);
  t.like(patch.json, { reason: 'Invalid', details: { causes: [{ reason: 'FieldValueInvalid', field: 'patch' }] } });
  t.regex(patch.json.message, /^ "" is invalid: patch: Invalid value: ".*": strict decoding error: unknown field "spec.bad"$/);
  const warnedPatch = await raw(c.cluster, 'PATCH', `${BASE}/w`, JSON.stringify({ spec: { bad: 1 } }), 'application/merge-patch+json');
  t.is(warnedPatch.status, 200);
  t.is(warnedPatch.headers.get('warning'), '299 - "unknown field \\"spec.bad\\""');
  t.false('bad' in warnedPatch.json.spec);
});

test('patches: merge and JSON patch results are pruned and defaulted; removing a defaulted field brings the default back', async (t) => {
  const c = await startCluster(t);
  await createCrd(c, brokerCrd());
  await post(c, broker('b', { image: 'custom:1' }));
  const P = { group: 'example.com', version: 'v1', namespace: 'default', plural: 'brokers', name: 'b' };
  const merged = (await c.custom.patchNamespacedCustomObject({ ...P, body: { spec: { image: null, ports: [{ name: 'x' }], unknown: 1 } } }, mergePatch)) as any;
  t.is(merged.spec.image, 'broker:3.8');
  t.deepEqual(merged.spec.ports, [{ name: 'x', protocol: 'TCP' }]);
  t.false('unknown' in merged.spec);
  t.is(merged.metadata.generation, 2);
  const json = (await c.custom.patchNamespacedCustomObject(
    {
      ...P,
      body: [
        { op: 'remove', path: '/spec/service' },
        { op: 'add', path: '/spec/ports/-', value: { name: 'y' } },
      ],
    },
    jsonPatch,
  )) as any;
  t.deepEqual(json.spec.service, SPEC_DEFAULTS.service);
  t.deepEqual(json.spec.ports, [
    { name: 'x', protocol: 'TCP' },
    { name: 'y', protocol: 'TCP' },
  ]);
  t.is(json.metadata.generation, 3);
  const noop = (await c.custom.patchNamespacedCustomObject({ ...P, body: { spec: { image: null } } }, mergePatch)) as any;
  t.is(noop.metadata.resourceVersion, json.metadata.resourceVersion, 'removing a field that defaults back to its value is a no-op');
});

test('status writes are pruned and defaulted (update and patch); main writes keep the stored status', async (t) => {
  const c = await startCluster(t);
  await createCrd(c, brokerCrd());
  const created = (await post(c, broker('b', {}))).json;
  const P = { group: 'example.com', version: 'v1', namespace: 'default', plural: 'brokers', name: 'b' };
  const updated = (await c.custom.replaceNamespacedCustomObjectStatus({
    ...P,
    body: { ...created, status: { conditions: [{ type: 'Ready' }], junk: 1 } },
  })) as any;
  t.deepEqual(updated.status, { phase: 'Pending', conditions: [{ type: 'Ready', status: 'Unknown' }] });
  const patched = (await c.custom.patchNamespacedCustomObjectStatus(
    { ...P, body: { status: { phase: null, conditions: [{ type: 'Synced', status: 'True' }] } } },
    mergePatch,
  )) as any;
  t.deepEqual(patched.status, { phase: 'Pending', conditions: [{ type: 'Synced', status: 'True' }] });
  t.is(patched.metadata.generation, 1);
});

test('server-side apply: the result is defaulted, defaults are not owned by the applier; an undeclared field fails as in kube-apiserver', async (t) => {
  const c = await startCluster(t);
  await createCrd(c, brokerCrd());
  const apply = (yaml: string, manager = 'mgr') => raw(c.cluster, 'PATCH', `${BASE}/b?fieldManager=${manager}`, yaml, 'application/apply-patch+yaml');
  const created = await apply(
    'apiVersion: example.com/v1\nkind: Broker\nmetadata:\n  name: b\n  namespace: default\nspec:\n  replicas: 3\n  ports:\n  - name: a\n',
  );
  t.is(created.status, 201);
  t.deepEqual(created.json.spec, { ...SPEC_DEFAULTS, replicas: 3, ports: [{ name: 'a', protocol: 'TCP' }] });
  const owned = created.json.metadata.managedFields.find((m: any) => m.manager === 'mgr');
  t.deepEqual(owned.fieldsV1, { 'f:spec': { 'f:ports': {}, 'f:replicas': {} } }, 'the applier owns what it applied, not the defaults');

  const updated = await apply('apiVersion: example.com/v1\nkind: Broker\nmetadata:\n  name: b\n  namespace: default\nspec:\n  replicas: 3\n');
  t.is(updated.status, 200);
  t.is(updated.json.spec.ports, undefined, 'the applier dropped the list it owned');
  t.is(updated.json.spec.image, 'broker:3.8');

  const bad = await apply(
    'apiVersion: example.com/v1\nkind: Broker\nmetadata:\n  name: b\n  namespace: default\nspec:\n  replicas: 3\n  bogus: 1\n  template:\n    metadata:\n      nope: 1\n  extra:\n    free: 1\n',
  );
  t.is(bad.status, 500);
  t.deepEqual(bad.json, {
    kind: 'Status',
    apiVersion: 'v1',
    metadata: {},
    status: 'Failure',
    message:
      'failed to create typed patch object (default/b; example.com/v1, Kind=Broker): errors:\n  .spec.bogus: field not declared in schema\n  .spec.template.metadata.nope: field not declared in schema',
    code: 500,
  });
});

test('defaults on read: a schema change gives stored objects their new defaults without writing them; pruning too', async (t) => {
  const c = await startCluster(t);
  const crd = brokerCrd();
  const spec = crd.spec.versions[0].schema.openAPIV3Schema.properties.spec;
  delete spec.properties.image.default;
  spec.properties.legacy = { type: 'string' };
  await createCrd(c, crd);
  const created = (await post(c, broker('b', { legacy: 'x' }))).json;
  t.is(created.spec.image, undefined);
  t.is(created.spec.legacy, 'x');

  const watch = await openWatch(t, c.cluster, `${BASE}?watch=true&resourceVersion=${created.metadata.resourceVersion}`);
  const current = (await raw(c.cluster, 'GET', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions/brokers.example.com')).json;
  const next = structuredClone(current);
  const nextSpec = next.spec.versions[0].schema.openAPIV3Schema.properties.spec;
  nextSpec.properties.image.default = 'broker:4.0';
  delete nextSpec.properties.legacy;
  t.is((await raw(c.cluster, 'PUT', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions/brokers.example.com', JSON.stringify(next))).status, 200);
  await new Promise((resolve) => setTimeout(resolve, 20));

  const got = (await raw(c.cluster, 'GET', `${BASE}/b`)).json;
  t.is(got.spec.image, 'broker:4.0', 'the new default shows on read');
  t.false('legacy' in got.spec, 'a field the schema no longer specifies is pruned on read');
  t.is(got.metadata.resourceVersion, created.metadata.resourceVersion, 'nothing was written');
  const list = (await raw(c.cluster, 'GET', BASE)).json;
  t.is(list.items[0].spec.image, 'broker:4.0');
  const fresh = await openWatch(t, c.cluster, `${BASE}?watch=true`);
  const [added] = await fresh.waitFor(1);
  t.is(added!.object.spec.image, 'broker:4.0');
  t.deepEqual(watch.events, [], 'a schema change is no event for the objects');

  // Writing the read object back persists the defaults (a new resourceVersion) but is no spec change.
  const P = { group: 'example.com', version: 'v1', namespace: 'default', plural: 'brokers', name: 'b' };
  const written = (await c.custom.replaceNamespacedCustomObject({ ...P, body: got })) as any;
  t.not(written.metadata.resourceVersion, got.metadata.resourceVersion);
  t.is(written.metadata.generation, 1, 'defaults applied on read are no spec change');
  const again = (await c.custom.replaceNamespacedCustomObject({ ...P, body: written })) as any;
  t.is(again.metadata.resourceVersion, written.metadata.resourceVersion, 'then a write-back is a no-op');
});

test('a request in another served version is defaulted with its schema, reads with the storage version schema', async (t) => {
  const c = await startCluster(t);
  const crd = brokerCrd();
  const v1 = crd.spec.versions[0];
  const v1beta1 = structuredClone(v1);
  v1beta1.name = 'v1beta1';
  v1beta1.storage = false;
  const betaSpec = v1beta1.schema.openAPIV3Schema.properties.spec;
  betaSpec.properties.image.default = 'beta:1';
  betaSpec.properties.betaOnly = { type: 'string', default: 'b' };
  crd.spec.versions.push(v1beta1);
  await createCrd(c, crd);
  const created = await raw(
    c.cluster,
    'POST',
    '/apis/example.com/v1beta1/namespaces/default/brokers',
    JSON.stringify({ ...broker('b', {}), apiVersion: 'example.com/v1beta1' }),
  );
  t.is(created.status, 201);
  t.is(created.json.apiVersion, 'example.com/v1beta1');
  t.is(created.json.spec.image, 'beta:1', 'defaulted with the request version schema');
  t.false('betaOnly' in created.json.spec, 'a field the storage version does not specify is pruned from what is stored');
  const asV1 = (await raw(c.cluster, 'GET', `${BASE}/b`)).json;
  t.is(asV1.spec.image, 'beta:1');
});

test('CRDs that preserve unknown fields are not pruned; a version without a schema is not pruned', (t) => {
  const obj = (): KubeObject => ({ apiVersion: 'example.com/v1', kind: 'X', metadata: { name: 'x' }, spec: { a: 1, b: { c: 2 } } }) as KubeObject;
  const legacy = customResourceSchemas({
    spec: {
      preserveUnknownFields: true,
      versions: [{ name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: { type: 'object', properties: { spec: { type: 'object' } } } } }],
    },
  } as unknown as KubeObject)!;
  const o1 = obj();
  t.deepEqual(decodeCustomResource(legacy, o1, 'v1', true), []);
  t.deepEqual(o1.spec, { a: 1, b: { c: 2 } });
  const noSchema = customResourceSchemas({ spec: { versions: [{ name: 'v1', served: true, storage: true }] } } as unknown as KubeObject)!;
  const o2 = obj();
  decodeCustomResource(noSchema, o2, 'v1');
  t.deepEqual(o2.spec, { a: 1, b: { c: 2 } });
  const stored = obj();
  t.is(customResourceView(noSchema, stored), stored, 'an unchanged view is the stored object itself');
});

test('defaults are pruned when the schema is loaded (CRDs from before kube-apiserver refused unknown fields in defaults)', (t) => {
  const schemas = customResourceSchemas({
    spec: {
      versions: [
        {
          name: 'v1',
          served: true,
          storage: true,
          schema: {
            openAPIV3Schema: {
              type: 'object',
              properties: {
                spec: {
                  type: 'object',
                  default: { a: { b: 1, junk: 2 }, junk: 3 },
                  properties: { a: { type: 'object', properties: { b: { type: 'integer' }, c: { type: 'string', default: 'c' } } } },
                },
              },
            },
          },
        },
      ],
    },
  } as unknown as KubeObject)!;
  const obj = { apiVersion: 'example.com/v1', kind: 'X', metadata: { name: 'x' } } as KubeObject;
  decodeCustomResource(schemas, obj, 'v1');
  t.deepEqual(obj.spec, { a: { b: 1, c: 'c' } });
});
