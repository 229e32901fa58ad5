/**
 * Value validation of custom resources against their CRD schema (crd-validation.ts, crd-cel.ts): each
 * bad write of the fixture's table gets kube-apiserver's 422 (message and causes, checked against a
 * real kube-apiserver by test/real/crd-validation.real.ts); good writes, ratcheting of unchanged
 * invalid values and the transition rules' create-time skip are accepted.
 */
import test from 'ava';
import { gadget, gadgetCrd, GADGETS, goodGadget, VALIDATION_CASES, writeCase, type Requester } from './crd-validation-fixture.js';
import { raw, startCluster, type TestCluster } from './helpers.js';
import { customResourceSchemas } from '../../src/cluster/crd-schema.js';
import { validateCustomResource } from '../../src/cluster/crd-validation.js';
import type { KubeObject } from '../../src/model/object-key.js';

const CRDS = '/apis/apiextensions.k8s.io/v1/customresourcedefinitions';

function requester(c: TestCluster): Requester {
  return (method, path, body, contentType) => raw(c.cluster, method, path, body === undefined ? undefined : JSON.stringify(body), contentType);
}

async function withGadgets(t: Parameters<typeof startCluster>[0], crd: unknown = gadgetCrd()): Promise<{ c: TestCluster; req: Requester }> {
  const c = await startCluster(t);
  const req = requester(c);
  const res = await req('POST', CRDS, crd);
  if (res.status !== 201) throw new Error(`CRD create failed: ${JSON.stringify(res.json)}`);
  // The CRD controller serves the kind on its next turn.
  for (let i = 0; i < 100 && (await req('GET', GADGETS)).status !== 200; i++) await new Promise((resolve) => setImmediate(resolve));
  return { c, req };
}

for (const kase of VALIDATION_CASES) {
  test(`refused as kube-apiserver refuses it: ${kase.name}`, async (t) => {
    const { req } = await withGadgets(t);
    const answer = await writeCase(req, kase);
    t.is(answer.status, 422, JSON.stringify(answer.json));
    t.is(answer.json.reason, 'Invalid');
    t.is(answer.json.message, kase.message);
    t.deepEqual(
      answer.json.details.causes.map((c: { reason: string; field: string }) => [c.reason, c.field]),
      kase.causes,
    );
    t.deepEqual(answer.json.details.kind, 'Gadget');
    t.deepEqual(answer.json.details.group, 'valid.example.com');
    // Each cause's message is the message's part for its field.
    for (const cause of answer.json.details.causes) t.true(kase.message.includes(`${cause.field}: ${cause.message}`));
  });
}

test('a write within every constraint is stored, and dryRun answers the same 422 without storing', async (t) => {
  const { req } = await withGadgets(t);
  const good = goodGadget('ok');
  const created = await req('POST', GADGETS, good);
  t.is(created.status, 201, JSON.stringify(created.json));
  t.is((await req('PATCH', `${GADGETS}/ok`, { spec: { replicas: 1, size: 3 } }, 'application/merge-patch+json')).status, 200);
  const dry = await req('PATCH', `${GADGETS}/ok?dryRun=All`, { spec: { replicas: 0 } }, 'application/merge-patch+json');
  t.is(dry.status, 422);
  t.is((await req('GET', `${GADGETS}/ok`)).json.spec.replicas, 1);
});

test('a transition rule is not run on create; an unchanged value passes it on update', async (t) => {
  const { req } = await withGadgets(t);
  t.is((await req('POST', GADGETS, gadget('t', { immutable: 'a' }))).status, 201);
  t.is((await req('PATCH', `${GADGETS}/t`, { spec: { replicas: 2 } }, 'application/merge-patch+json')).status, 200);
});

test('ratcheting: an invalid value stored under an older schema may stay while other fields change, not be changed to another invalid value', async (t) => {
  const loose = gadgetCrd();
  const spec = loose.spec.versions[0].schema.openAPIV3Schema.properties.spec;
  delete spec.properties.replicas.maximum;
  const { req } = await withGadgets(t, loose);
  t.is((await req('POST', GADGETS, gadget('r', { replicas: 9 }))).status, 201);
  const crd = (await req('GET', `${CRDS}/gadgets.valid.example.com`)).json;
  crd.spec.versions[0].schema.openAPIV3Schema.properties.spec.properties.replicas.maximum = 5;
  t.is((await req('PUT', `${CRDS}/gadgets.valid.example.com`, crd)).status, 200);
  for (let i = 0; i < 100; i++) {
    const probe = await req('POST', `${GADGETS}?dryRun=All`, gadget('probe', { replicas: 9 }));
    if (probe.status === 422) break;
    await new Promise((resolve) => setImmediate(resolve));
  }
  t.is((await req('PATCH', `${GADGETS}/r`, { spec: { name: 'abc' } }, 'application/merge-patch+json')).status, 200);
  const changed = await req('PATCH', `${GADGETS}/r`, { spec: { replicas: 8 } }, 'application/merge-patch+json');
  t.is(changed.status, 422);
  t.is(
    changed.json.message,
    'Gadget.valid.example.com "r" is invalid: spec.replicas: Invalid value: 8: spec.replicas in body should be less than or equal to 5',
  );
});

test('each subschema of a CRD is compiled once for validation, however deep (RabbitmqCluster nests a pod template 15 levels down)', (t) => {
  // The deepest schema counts how often it is read; compiling every level twice read it 2^depth times.
  let reads = 0;
  const deepest: Record<string, unknown> = { properties: { leaf: { type: 'string' } } };
  Object.defineProperty(deepest, 'type', { enumerable: true, get: () => (reads++, 'object') });
  let schema: Record<string, unknown> = deepest;
  for (let i = 0; i < 20; i++) schema = { type: 'object', properties: { a: schema }, additionalProperties: false };
  const crd = {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: 'deeps.valid.example.com' },
    spec: { versions: [{ name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: { type: 'object', properties: { spec: schema } } } }] },
  } as unknown as KubeObject;
  const schemas = customResourceSchemas(crd)!;
  const before = reads;
  const result = validateCustomResource(
    schemas,
    { apiVersion: 'valid.example.com/v1', kind: 'Deep', metadata: { name: 'd' }, spec: {} } as KubeObject,
    undefined,
    'v1',
  );
  t.deepEqual(result.errors, []);
  // One compile reads its `type` three times (the int-or-string test, the check, the value).
  t.true(reads - before <= 3, `the deepest schema was read ${reads - before} times`);
});
