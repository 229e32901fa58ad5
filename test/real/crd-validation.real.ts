/**
 * Value validation of custom resources side by side: the fixture's table of bad writes (and a good
 * write, ratcheting after a schema change) against the embedded cluster and a real kube-apiserver,
 * the answers compared: status, reason, code, message and causes. Several errors of one object come
 * in Go map order on the real side, so their order is normalized (sorted) on both.
 */
import test from 'ava';
import { gadget, gadgetCrd, GADGETS, goodGadget, VALIDATION_CASES, writeCase } from '../cluster/crd-validation-fixture.js';
import { compareWithRealControlPlane, sortKeys, type Answer, type Request } from './_helpers.js';

const CRDS = '/apis/apiextensions.k8s.io/v1/customresourcedefinitions';
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

function normalize(a: Answer): unknown {
  const json = a.json;
  if (a.status < 400 || !json || typeof json !== 'object') return { status: a.status };
  const causes = [...(json.details?.causes ?? [])]
    .map((c: { reason?: string; field?: string; message?: string }) => `${c.reason} ${c.field}: ${c.message}`)
    .sort();
  let message: string = json.message ?? '';
  const m = /^(.*? is invalid: )\[(.*)\]$/s.exec(message);
  if (m)
    message = `${m[1]}[${m[2]!
      .split(/, (?=[a-z<][\w.[\]<>-]*: )/)
      .sort()
      .join(', ')}]`;
  return sortKeys({
    status: a.status,
    reason: json.reason,
    code: json.code,
    message,
    causes,
    kind: json.details?.kind,
    group: json.details?.group,
    name: json.details?.name,
  });
}

async function scenarios(req: Request): Promise<Map<string, unknown>> {
  const out = new Map<string, unknown>();
  out.set('CRD create', (await req('POST', CRDS, gadgetCrd())).status);
  for (let i = 0; i < 100 && (await req('GET', GADGETS)).status !== 200; i++) await sleep(100);
  for (const kase of VALIDATION_CASES) out.set(kase.name, normalize(await writeCase(req, kase)));
  out.set('good object', normalize(await req('POST', GADGETS, goodGadget('ok'))));
  // Ratcheting: a value valid when stored, invalid under the tightened schema.
  out.set('stored under the loose schema', normalize(await req('POST', GADGETS, gadget('r', { replicas: 5, name: 'abc' }))));
  const crd = (await req('GET', `${CRDS}/gadgets.valid.example.com`)).json;
  crd.spec.versions[0].schema.openAPIV3Schema.properties.spec.properties.replicas.maximum = 4;
  out.set('CRD update', (await req('PUT', `${CRDS}/gadgets.valid.example.com`, crd)).status);
  for (let i = 0; i < 100 && (await req('POST', `${GADGETS}?dryRun=All`, gadget('probe', { replicas: 5 }))).status !== 422; i++) await sleep(100);
  out.set('ratcheting: another field changes', normalize(await req('PATCH', `${GADGETS}/r`, { spec: { name: 'abcd' } }, 'application/merge-patch+json')));
  out.set('ratcheting: the invalid field changes', normalize(await req('PATCH', `${GADGETS}/r`, { spec: { replicas: 6 } }, 'application/merge-patch+json')));
  return out;
}

test('custom resources are validated against their schema as kube-apiserver does', async (t) => {
  await compareWithRealControlPlane(t, scenarios);
});
