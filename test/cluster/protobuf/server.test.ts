/** The embedded API server accepts protobuf request bodies as controller-runtime sends them. */
import test from 'ava';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { EmbeddedCluster } from '../../../src/cluster/index.js';
import { kubernetesBody, type Field } from './encode.js';
import { clusterAuth } from '../helpers.js';

const vectors = fileURLToPath(new URL('../../../../test/cluster/protobuf/vectors/', import.meta.url));
const PROTOBUF = 'application/vnd.kubernetes.protobuf';

async function start(t: import('ava').ExecutionContext): Promise<EmbeddedCluster> {
  const cluster = await EmbeddedCluster.start();
  t.teardown(() => cluster.stop());
  return cluster;
}

async function send(
  cluster: EmbeddedCluster,
  method: string,
  path: string,
  body: Uint8Array,
): Promise<{ status: number; contentType: string | null; json: any }> {
  const res = await fetch(cluster.url + path, {
    method,
    body: new Uint8Array(body), // a copy backed by a plain ArrayBuffer, which BodyInit requires
    headers: { 'Content-Type': PROTOBUF, Accept: `${PROTOBUF}, application/json`, ...clusterAuth(cluster) },
  });
  return { status: res.status, contentType: res.headers.get('content-type'), json: await res.json() };
}

test('create a ConfigMap and a Secret from their protobuf bodies; the answer is JSON', async (t) => {
  const cluster = await start(t);
  const cm = await send(cluster, 'POST', '/api/v1/namespaces/default/configmaps', readFileSync(`${vectors}configmap-minimal.pb`));
  t.is(cm.status, 201, JSON.stringify(cm.json));
  t.regex(cm.contentType ?? '', /^application\/json/, 'asked for protobuf first, answered in JSON');
  t.is(cm.json.metadata.name, 'db1-config');
  t.deepEqual(cm.json.data, { 'postgresql.conf': 'max_connections = 200\n' });
  t.regex(cm.json.metadata.creationTimestamp, /^\d{4}-\d\d-\d\dT/, 'the server sets creationTimestamp, which arrived as null');

  const secret = await send(cluster, 'POST', '/api/v1/namespaces/default/secrets', readFileSync(`${vectors}secret-tls.pb`));
  t.is(secret.status, 201, JSON.stringify(secret.json));
  const expected = JSON.parse(readFileSync(`${vectors}secret-tls.json`, 'utf8')) as { data: Record<string, string> };
  t.deepEqual(secret.json.data, expected.data, 'binary values stay base64 of the same bytes');
  t.is(secret.json.type, 'kubernetes.io/tls');
});

test('update from a protobuf body, and a protobuf DeleteOptions body on delete', async (t) => {
  const cluster = await start(t);
  const meta = (...fields: Field[]): Field => ({ n: 1, message: [{ n: 1, bytes: 'cfg' }, { n: 3, bytes: 'default' }, ...fields] });
  const entry = (k: string, v: string): Field => ({
    n: 2,
    message: [
      { n: 1, bytes: k },
      { n: 2, bytes: v },
    ],
  });
  const created = await send(cluster, 'POST', '/api/v1/namespaces/default/configmaps', kubernetesBody('v1', 'ConfigMap', [meta(), entry('a', '1')]));
  t.is(created.status, 201, JSON.stringify(created.json));
  const rv: string = created.json.metadata.resourceVersion;
  const updated = await send(
    cluster,
    'PUT',
    '/api/v1/namespaces/default/configmaps/cfg',
    kubernetesBody('v1', 'ConfigMap', [meta({ n: 6, bytes: rv }), entry('a', '2')]),
  );
  t.is(updated.status, 200, JSON.stringify(updated.json));
  t.deepEqual(updated.json.data, { a: '2' });
  t.not(updated.json.metadata.resourceVersion, rv);
  const stale = await send(
    cluster,
    'PUT',
    '/api/v1/namespaces/default/configmaps/cfg',
    kubernetesBody('v1', 'ConfigMap', [meta({ n: 6, bytes: rv }), entry('a', '3')]),
  );
  t.is(stale.status, 409, 'the resourceVersion inside the protobuf body is honoured');

  // DeleteOptions: preconditions(2){uid(1)} that do not match.
  const wrongUid = kubernetesBody('v1', 'DeleteOptions', [{ n: 2, message: [{ n: 1, bytes: 'not-the-uid' }] }]);
  const refused = await send(cluster, 'DELETE', '/api/v1/namespaces/default/configmaps/cfg', wrongUid);
  t.is(refused.status, 409, JSON.stringify(refused.json));
  const deleted = await send(cluster, 'DELETE', '/api/v1/namespaces/default/configmaps/cfg', kubernetesBody('v1', 'DeleteOptions', [{ n: 1, varint: 0 }]));
  t.is(deleted.status, 200, JSON.stringify(deleted.json));
});

test('an undecodable protobuf body gets a 400 Status', async (t) => {
  const cluster = await start(t);
  const res = await send(cluster, 'POST', '/api/v1/namespaces/default/configmaps', Buffer.from('k8s\0\x0f', 'latin1'));
  t.is(res.status, 400);
  t.like(res.json, { kind: 'Status', status: 'Failure', reason: 'BadRequest', code: 400 });
  t.regex(res.json.message, /^the object provided is unrecognized \(must be of type ConfigMap\): runtime.Unknown: illegal wire type 7/);
});
