/**
 * /openapi/v2 and /openapi/v3 with kube-apiserver's schemas for the built-in kinds (vendored, see
 * vendor/kubernetes-openapi/): `kubectl explain` on built-in kinds and CRDs, and `kubectl apply
 * --validate=strict|warn|false`, which kubectl 1.32 leaves to the server's fieldValidation. The
 * expected messages are those a v1.33 kube-apiserver gave for the same manifests (compared by hand
 * against `npm run setup:real`'s control plane).
 */
import test, { type ExecutionContext } from 'ava';
import { WIRE_LENGTH_DELIMITED, readWireMessage, type WireMessage } from '../../src/wire/wire.js';
import { clusterAuth, raw, startCluster } from './helpers.js';
import { applyCrds, exampleCrd, kubectlFor, ok } from './kubectl-helper.js';

/** kubectl's stderr holds `lines`, in order (klog may add throttling notes on a loaded machine). */
function hasLines(t: ExecutionContext, stderr: string, lines: readonly string[]): void {
  const seen = stderr.split('\n').filter((line) => lines.includes(line));
  t.deepEqual(seen, lines, stderr);
}

const DEPLOYMENT_WITH_TYPOS = `apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  replicas: 1
  foo: bar
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec: {containers: [{name: web, image: nginx, bogus: 1}]}
`;

test('kubectl explain prints the fields and descriptions of built-in kinds', async (t) => {
  const kubectl = await kubectlFor(t);
  const containers = await ok(t, kubectl, 'explain', 'pods.spec.containers');
  t.regex(containers, /^KIND:\s+Pod$/m);
  t.regex(containers, /^FIELD: containers <\[\]Container>$/m);
  t.regex(containers, /List of containers belonging to the pod\./);
  t.regex(containers, /^\s+image\s+<string>\n\s+Container image name\./m);
  const strategy = await ok(t, kubectl, 'explain', 'deployment.spec.strategy');
  t.regex(strategy, /^GROUP:\s+apps$/m);
  t.regex(strategy, /^\s+rollingUpdate\s+<RollingUpdateDeployment>$/m);
  t.regex(await ok(t, kubectl, 'explain', 'hpa.spec.metrics'), /^VERSION:\s+v2$/m);
});

test('kubectl explain of a CRD kind shows its metadata as ObjectMeta', async (t) => {
  const kubectl = await kubectlFor(t);
  await applyCrds(
    t,
    kubectl,
    exampleCrd('Widget', 'widgets', 'Namespaced', '\n    schema:\n      openAPIV3Schema: {type: object, properties: {spec: {type: object}}}'),
  );
  const metadata = await ok(t, kubectl, 'explain', 'widget.metadata');
  t.regex(metadata, /^FIELD: metadata <ObjectMeta>$/m);
  t.regex(metadata, /^\s+labels\s+<map\[string\]string>$/m);
});

test('kubectl apply --validate=strict fails on unknown fields of a built-in kind with the server message, warn warns, false passes', async (t) => {
  const kubectl = await kubectlFor(t);
  const file = kubectl.file('web.yaml', DEPLOYMENT_WITH_TYPOS);
  const strict = await kubectl('apply', '--validate=strict', '-f', file);
  t.is(strict.code, 1);
  hasLines(t, strict.stderr, [
    `Error from server (BadRequest): error when creating "${file}": Deployment in version "v1" cannot be handled as a Deployment: strict decoding error: unknown field "spec.foo", unknown field "spec.template.spec.containers[0].bogus"`,
  ]);
  t.is((await kubectl('get', 'deployment', 'web')).code, 1, 'nothing was created');

  const warn = await kubectl('apply', '--validate=warn', '-f', file);
  t.is(warn.code, 0, warn.stderr);
  hasLines(t, warn.stderr, ['Warning: unknown field "spec.foo"', 'Warning: unknown field "spec.template.spec.containers[0].bogus"']);
  t.is((await ok(t, kubectl, 'get', 'deployment', 'web', '-o', 'jsonpath={.spec.foo}')).trim(), '', 'unknown fields are dropped, as decoding does');
  await ok(t, kubectl, 'delete', 'deployment', 'web');

  t.regex(await ok(t, kubectl, 'apply', '--validate=false', '-f', file), /deployment\.apps\/web created/);
  // The stored object lacks the unknown fields, so the next apply (strict by default) patches them in and fails.
  const again = await kubectl('apply', '-f', file);
  t.is(again.code, 1);
  t.regex(
    again.stderr,
    /^The request is invalid: patch: Invalid value: "map\[spec:map\[.*\]\]": strict decoding error: unknown field "spec.foo", unknown field "spec.template.spec.containers\[0\].bogus"$/m,
  );
});

test('kubectl apply --server-side of undeclared fields of a built-in kind fails as structured-merge-diff words it', async (t) => {
  const kubectl = await kubectlFor(t);
  const manifest = (container: string, podSpec: string): string => `apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec: {containers: [{name: web, image: nginx${container}}]${podSpec}}
`;
  const typo = await kubectl(
    'apply',
    '--server-side',
    '-f',
    kubectl.file('typo.yaml', manifest(', bogus: 1, ports: [{containerPort: 80, zz: 1}]', ', zork: 2')),
  );
  t.is(typo.code, 1);
  // The first undeclared field of each object only (the container's ports are not visited), as kube-apiserver 1.33 answered.
  hasLines(t, typo.stderr, [
    'Error from server: failed to create typed patch object (default/web; apps/v1, Kind=Deployment): errors:',
    '  .spec.template.spec.containers[name="web"].bogus: field not declared in schema',
    '  .spec.template.spec.zork: field not declared in schema',
  ]);
  t.regex(await ok(t, kubectl, 'apply', '--server-side', '-f', kubectl.file('ok.yaml', manifest(', ports: [{containerPort: 80}]', ''))), /serverside-applied/);
});

test('fieldValidation on raw writes of built-in kinds: Strict refuses, Ignore drops, unset keeps the field', async (t) => {
  const { cluster } = (await kubectlFor(t)).env;
  const body = (name: string): string => JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, labelz: {} }, data: { a: 'b' } });
  const strict = await raw(cluster, 'POST', '/api/v1/namespaces/default/configmaps?fieldValidation=Strict', body('s'));
  t.like(strict, {
    status: 400,
    json: {
      reason: 'BadRequest',
      message: 'ConfigMap in version "v1" cannot be handled as a ConfigMap: strict decoding error: unknown field "metadata.labelz"',
    },
  });
  const ignored = await raw(cluster, 'POST', '/api/v1/namespaces/default/configmaps?fieldValidation=Ignore', body('i'));
  t.is(ignored.status, 201);
  t.is(ignored.json.metadata.labelz, undefined);
  t.is(ignored.headers.get('warning'), null);
  const unset = await raw(cluster, 'POST', '/api/v1/namespaces/default/configmaps', body('u'));
  t.is(unset.status, 201);
  t.deepEqual(unset.json.metadata.labelz, {}, 'not checked without fieldValidation (see docs/embedded-cluster.md)');

  // A strict update is charged only with the unknown fields it adds to the stored object, and drops all.
  const put = (extra: Record<string, unknown>) =>
    raw(cluster, 'PUT', '/api/v1/namespaces/default/configmaps/u?fieldValidation=Strict', JSON.stringify({ ...unset.json, ...extra }));
  const added = await put({ extra: 1 });
  t.like(added, { status: 400, json: { message: 'ConfigMap in version "v1" cannot be handled as a ConfigMap: strict decoding error: unknown field "extra"' } });
  const same = await put({});
  t.is(same.status, 200, JSON.stringify(same.json));
  t.is(same.json.metadata.labelz, undefined);
});

test('/openapi/v2 serves JSON with built-in and CRD definitions', async (t) => {
  const kubectl = await kubectlFor(t);
  await applyCrds(
    t,
    kubectl,
    exampleCrd('Widget', 'widgets', 'Namespaced', '\n    schema:\n      openAPIV3Schema: {type: object, properties: {spec: {type: object, nullable: true}}}'),
  );
  const { cluster } = kubectl.env;
  const v2 = await raw(cluster, 'GET', '/openapi/v2', undefined, undefined, { Accept: 'application/json' });
  t.is(v2.status, 200);
  t.is(v2.json.swagger, '2.0');
  t.deepEqual(v2.json.definitions['io.k8s.api.core.v1.Pod']['x-kubernetes-group-version-kind'], [{ group: '', kind: 'Pod', version: 'v1' }]);
  t.is(v2.json.definitions['io.k8s.api.core.v1.PodSpec'].properties.containers.items.$ref, '#/definitions/io.k8s.api.core.v1.Container');
  const widget = v2.json.definitions['com.example.v1.Widget'];
  t.deepEqual(widget['x-kubernetes-group-version-kind'], [{ group: 'example.com', version: 'v1', kind: 'Widget' }]);
  t.deepEqual(widget.properties.spec, { type: 'object' }, 'v2 has no nullable');
  t.truthy(v2.json.paths['/apis/example.com/v1/namespaces/{namespace}/widgets/{name}'].patch);
  t.is((await raw(cluster, 'GET', '/openapi/v2', undefined, undefined, { Accept: 'text/html' })).status, 406);
});

/** One field of a protobuf message, as a string (length-delimited) or a nested message. */
const field = (message: WireMessage, n: number): Uint8Array => {
  const value = message.get(n)?.[0];
  if (value?.wireType !== WIRE_LENGTH_DELIMITED) throw new Error(`field ${n} is not length-delimited`);
  return value.value;
};
const text = (bytes: Uint8Array): string => Buffer.from(bytes).toString('utf8');

test("/openapi/v2 in protobuf is gnostic's Document with the JSON's ETag, as kube-openapi serves it", async (t) => {
  const kubectl = await kubectlFor(t);
  await applyCrds(
    t,
    kubectl,
    exampleCrd('Widget', 'widgets', 'Namespaced', '\n    schema:\n      openAPIV3Schema: {type: object, properties: {spec: {type: object}}}'),
  );
  const { cluster } = kubectl.env;
  const get = (accept: string, headers: Record<string, string> = {}) =>
    fetch(`${cluster.url}/openapi/v2`, { headers: { ...clusterAuth(cluster), Accept: accept, ...headers } });
  const json = await get('application/json');
  const res = await get('application/com.github.proto-openapi.spec.v2@v1.0+protobuf');
  t.is(res.status, 200);
  t.is(res.headers.get('content-type'), 'application/com.github.proto-openapi.spec.v2.v1.0+protobuf');
  t.is(res.headers.get('vary'), 'Accept');
  t.regex(res.headers.get('etag') ?? '', /^"[0-9A-F]{128}"$/);
  t.is(res.headers.get('etag'), json.headers.get('etag'), 'one ETag for both forms');
  t.is((await get('application/json', { 'If-None-Match': res.headers.get('etag')! })).status, 304);

  // Document {swagger = 1, info = 2, paths = 8, definitions = 9}; Definitions {repeated NamedSchema = 1}.
  const doc = readWireMessage(new Uint8Array(await res.arrayBuffer()));
  t.is(text(field(doc, 1)), '2.0');
  t.is(text(field(readWireMessage(field(doc, 2)), 1)), 'Kubernetes');
  const definitions = (readWireMessage(field(doc, 9)).get(1) ?? []).map((named) => readWireMessage(named.value as Uint8Array));
  const widget = definitions.find((named) => text(field(named, 1)) === 'com.example.v1.Widget');
  t.truthy(widget, 'the CRD kind is among the definitions');
  // Schema {vendor_extension = 31}: NamedAny {name = 1, value = Any {yaml = 2}}.
  const gvk = readWireMessage(field(readWireMessage(field(widget!, 2)), 31));
  t.is(text(field(gvk, 1)), 'x-kubernetes-group-version-kind');
  t.is(
    text(field(readWireMessage(field(gvk, 2)), 2)),
    '- group: example.com\n  version: v1\n  kind: Widget\n',
    'the YAML of the JSON value, in its order, as gnostic writes it',
  );
});

test('kubectl apply of an apiextensions.k8s.io/v1beta1 CRD on a 1.32 cluster says no matches for its kind, as kube-apiserver 1.32 does', async (t) => {
  // kubectl validates a group-version missing from /openapi/v3 against /openapi/v2, which it asks for in protobuf.
  const kubectl = await kubectlFor(t);
  const file = 'fixtures/init/operator-sdk-legacy/deploy/crds/app.example.com_things_crd.yaml';
  const legacy = await kubectl('apply', '--validate=strict', '-f', file);
  t.is(legacy.code, 1);
  hasLines(t, legacy.stderr, [
    `error: resource mapping not found for name: "things.app.example.com" namespace: "" from "${file}": no matches for kind "CustomResourceDefinition" in version "apiextensions.k8s.io/v1beta1"`,
    'ensure CRDs are installed first',
  ]);
  t.regex(await ok(t, kubectl, 'explain', 'pods.spec.containers.image', '--output', 'plaintext-openapiv2'), /Container image name\./);
});

test('OpenAPI follows the emulated release: 1.18 documents policy/v1beta1 (open schema), not policy/v1', async (t) => {
  const kubectl = await kubectlFor(t, { kubernetesVersion: '1.18' });
  const { cluster } = kubectl.env;
  const root = await raw(cluster, 'GET', '/openapi/v3');
  t.truthy(root.json.paths['apis/policy/v1beta1']);
  t.is(root.json.paths['apis/policy/v1'], undefined);
  t.is(root.json.paths['apis/discovery.k8s.io/v1'], undefined, 'EndpointSlice went GA in 1.21');
  t.truthy(root.json.paths['api/v1']);
  const v2 = await raw(cluster, 'GET', '/openapi/v2');
  t.is(v2.json.definitions['io.k8s.api.policy.v1.PodDisruptionBudget'], undefined);
  t.regex(await ok(t, kubectl, 'explain', 'pods.spec.containers.image'), /Container image name\./);
});

test("every built-in kind the newest release serves has kube-apiserver's schema (regenerate vendor/kubernetes-openapi when adding one)", async (t) => {
  const { cluster } = await startCluster(t);
  const root = await raw(cluster, 'GET', '/openapi/v3');
  const open: string[] = [];
  let kinds = 0;
  for (const { serverRelativeURL } of Object.values(root.json.paths) as Array<{ serverRelativeURL: string }>) {
    const doc = (await raw(cluster, 'GET', serverRelativeURL)).json;
    for (const schema of Object.values(doc.components.schemas) as Array<Record<string, any>>) {
      for (const gvk of schema['x-kubernetes-group-version-kind'] ?? []) {
        if (!serverRelativeURL.startsWith(`/openapi/v3/${gvk.group === '' ? 'api' : `apis/${gvk.group}`}/${gvk.version}?`)) continue;
        kinds++;
        if (schema['x-kubernetes-preserve-unknown-fields'] === true) open.push(`${gvk.group}/${gvk.version} ${gvk.kind}`);
      }
    }
  }
  t.true(kinds > 30, `${kinds} kinds documented`);
  t.deepEqual(open, []);
});
