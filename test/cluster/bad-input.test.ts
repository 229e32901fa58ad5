/** Bad input gets the status codes and reasons a real API server gives, and never changes or corrupts the store. */
import test from 'ava';
import * as k8s from '@kubernetes/client-node';
import { configMap, raw, startCluster, statusOf } from './helpers.js';

const CM = '/api/v1/namespaces/default/configmaps';

test("oversized bodies get 413 before decoding; objects over etcd's 1.5 MiB get 413 too; nothing is stored", async (t) => {
  const { core, cluster } = await startCluster(t);
  const before = cluster.resourceVersion;
  const huge = JSON.stringify({ metadata: { name: 'huge' }, data: { x: 'a'.repeat(3 * 1024 * 1024 + 10) } });
  const tooBig = await raw(cluster, 'POST', CM, huge);
  t.like(tooBig, { status: 413, json: { kind: 'Status', reason: 'RequestEntityTooLarge', code: 413, message: 'Request entity too large: limit is 3145728' } });
  // A Pod has no data limit of its own (a ConfigMap's 1 MiB would answer first): etcd's limit decides.
  const pod = { metadata: { name: 'big' }, spec: { containers: [{ name: 'c', image: 'x', env: [{ name: 'BIG', value: 'b'.repeat(1600 * 1024) }] }] } };
  const big = await t.throwsAsync(core.createNamespacedPod({ namespace: 'default', body: pod }));
  t.like(statusOf(big), { code: 413, reason: 'RequestEntityTooLarge' });
  await core.createNamespacedConfigMap({ namespace: 'default', body: configMap('grows', { x: 'small' }) });
  const grow = await t.throwsAsync(
    core.replaceNamespacedConfigMap({ name: 'grows', namespace: 'default', body: configMap('grows', { x: 'c'.repeat(1600 * 1024) }) }),
  );
  t.like(statusOf(grow), { code: 422, reason: 'Invalid' });
  t.deepEqual((await core.readNamespacedConfigMap({ name: 'grows', namespace: 'default' })).data, { x: 'small' });
  t.is(cluster.resourceVersion, before + 1, 'only the small create was committed');
});

test('ConfigMap and Secret data over 1 MiB: 422 Invalid as kube-apiserver words it; exactly 1 MiB is stored', async (t) => {
  const { core } = await startCluster(t);
  const MiB = 1024 * 1024;
  // 1.5 MB (decimal): under etcd's 1.5 MiB, over the 1 MiB kube-apiserver allows a ConfigMap's data.
  const over = await t.throwsAsync(
    core.createNamespacedConfigMap({ namespace: 'default', body: configMap('x', { a: 'a'.repeat(1_000_000), b: 'b'.repeat(500_000) }) }),
  );
  t.like(statusOf(over), {
    code: 422,
    reason: 'Invalid',
    message: 'ConfigMap "x" is invalid: []: Too long: may not be more than 1048576 bytes',
    details: { name: 'x', kind: 'ConfigMap', causes: [{ reason: 'FieldValueTooLong', field: '[]' }] },
  });
  // binaryData counts its decoded bytes, together with data.
  const binary = Buffer.alloc(MiB / 2).toString('base64');
  const mixed = await t.throwsAsync(
    core.createNamespacedConfigMap({
      namespace: 'default',
      body: { metadata: { name: 'mixed' }, data: { a: 'a'.repeat(MiB / 2 + 1) }, binaryData: { b: binary } },
    }),
  );
  t.like(statusOf(mixed), { code: 422, reason: 'Invalid' });
  await core.createNamespacedConfigMap({
    namespace: 'default',
    body: { metadata: { name: 'full' }, data: { a: 'a'.repeat(MiB / 2) }, binaryData: { b: binary } },
  });
  // A Secret's data is counted decoded too, stringData included (it is folded into data first).
  const secret = await t.throwsAsync(
    core.createNamespacedSecret({
      namespace: 'default',
      body: { metadata: { name: 's' }, data: { a: Buffer.alloc(MiB).toString('base64') }, stringData: { b: 'b' } },
    }),
  );
  t.like(statusOf(secret), { code: 422, reason: 'Invalid', message: 'Secret "s" is invalid: data: Too long: may not be more than 1048576 bytes' });
  await core.createNamespacedSecret({ namespace: 'default', body: { metadata: { name: 'full' }, data: { a: Buffer.alloc(MiB).toString('base64') } } });
  const names = (await core.listNamespacedConfigMap({ namespace: 'default' })).items.map((o) => o.metadata?.name);
  t.deepEqual(
    names.filter((n) => n !== 'kube-root-ca.crt'),
    ['full'],
  );
});

test('malformed bodies, wrong kinds and media types: 400 and 415, the server keeps serving', async (t) => {
  const { core, cluster } = await startCluster(t);
  await core.createNamespacedConfigMap({ namespace: 'default', body: configMap('app', { a: '1' }) });
  const before = cluster.resourceVersion;
  const cases: Array<[string, string, string | undefined, string | undefined, number, string]> = [
    ['POST', CM, '{"metadata": {', 'application/json', 400, 'BadRequest'],
    ['POST', CM, 'metadata: [unclosed', 'application/yaml', 400, 'BadRequest'],
    ['POST', CM, '{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"x"}}', 'application/json', 400, 'BadRequest'],
    ['POST', CM, '{"kind":"Secret","metadata":{"name":"x"}}', 'application/json', 400, 'BadRequest'],
    ['POST', CM, '"a string"', 'application/json', 400, 'BadRequest'],
    ['POST', CM, '<xml/>', 'application/xml', 415, 'UnsupportedMediaType'],
    ['PUT', `${CM}/app`, '{"metadata":{"name":"other"}}', 'application/json', 400, 'BadRequest'],
    ['PATCH', `${CM}/app`, '{"data":', 'application/merge-patch+json', 400, 'BadRequest'],
    ['PATCH', `${CM}/app`, '{"op":"add"}', 'application/json-patch+json', 400, 'BadRequest'],
    ['PATCH', `${CM}/app`, '[{"op":"replace","path":"/nope/x","value":1}]', 'application/json-patch+json', 422, 'Invalid'],
    ['PATCH', `${CM}/app`, '{"data":{"a":"2"}}', 'text/plain', 415, 'UnsupportedMediaType'],
    ['PATCH', `${CM}/app?fieldManager=m`, 'kind: ConfigMap\nmetadata: {name: app}\n', 'application/apply-patch+yaml', 400, 'BadRequest'],
    [
      'PATCH',
      `${CM}/fresh?fieldManager=m`,
      'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: fresh}\ndata: {a: [1]}\n',
      'application/apply-patch+yaml',
      422,
      'Invalid',
    ],
    ['PATCH', `${CM}/app?force=true`, '{"data":{"a":"2"}}', 'application/merge-patch+json', 422, 'Invalid'],
    ['DELETE', `${CM}/app`, '{"propagationPolicy":"Sideways"}', 'application/json', 422, 'Invalid'],
    ['DELETE', `${CM}/app`, '{not json', 'application/json', 400, 'BadRequest'],
    // ValidateCreateOptions: 422 CreateOptions.meta.k8s.io "" is invalid: dryRun: Unsupported value: []string{"Some"}
    ['POST', `${CM}?dryRun=Some`, '{"metadata":{"name":"x"}}', 'application/json', 422, 'Invalid'],
    ['GET', `${CM}?resourceVersion=abc`, undefined, undefined, 400, 'BadRequest'],
    ['GET', `${CM}?labelSelector=a%20in%20`, undefined, undefined, 400, 'BadRequest'],
    ['GET', `${CM}?watch=true&resourceVersionMatch=Exact&resourceVersion=1`, undefined, undefined, 422, 'Invalid'],
    ['POST', '/api/v1/namespaces/default/widgets', '{}', 'application/json', 404, 'NotFound'],
    ['GET', '/apis/apps/v2/deployments', undefined, undefined, 404, 'NotFound'],
    ['POST', '/api/v1/namespaces/default/pods/nope/binding', '{"target":{"name":"n"}}', 'application/json', 404, 'NotFound'],
    ['GET', '/api/v1/namespaces/default/configmaps/app/scale', undefined, undefined, 404, 'NotFound'],
    ['PUT', '/api/v1/namespaces', '{}', 'application/json', 405, 'MethodNotAllowed'],
    ['DELETE', '/api/v1/namespaces', undefined, undefined, 405, 'MethodNotAllowed'],
    ['POST', '/apis', '{}', 'application/json', 405, 'MethodNotAllowed'],
  ];
  for (const [method, path, body, type, code, reason] of cases) {
    const res = await raw(cluster, method, path, body, type);
    t.like(res, { status: code, json: { kind: 'Status', status: 'Failure', reason, code } }, `${method} ${path} ${body ?? ''}`);
  }
  t.is(cluster.resourceVersion, before, 'no bad request changed anything');
  t.deepEqual((await core.readNamespacedConfigMap({ name: 'app', namespace: 'default' })).data, { a: '1' });
});

test('invalid names and fields: 422 Invalid with causes naming each field', async (t) => {
  const { core, apps, cluster } = await startCluster(t);
  const before = cluster.resourceVersion;
  const pod = await t.throwsAsync(
    core.createNamespacedPod({ namespace: 'default', body: { metadata: { name: 'Web_1' }, spec: { containers: [{ name: 'Bad Name', image: '' }] } } }),
  );
  const status = statusOf(pod);
  t.like(status, { code: 422, reason: 'Invalid', details: { name: 'Web_1', kind: 'Pod' } });
  t.deepEqual(
    status.details?.causes?.map((c) => `${c.reason} ${c.field}`),
    ['FieldValueInvalid metadata.name', 'FieldValueInvalid spec.containers[0].name', 'FieldValueRequired spec.containers[0].image'],
  );
  t.regex(status.message ?? '', /^Pod "Web_1" is invalid: \[metadata\.name: Invalid value: "Web_1": a lowercase RFC 1123 subdomain/);
  const svc = await t.throwsAsync(
    core.createNamespacedService({ namespace: 'default', body: { metadata: { name: '1svc' }, spec: { ports: [{ port: 70000 }] } } }),
  );
  t.deepEqual(
    statusOf(svc).details?.causes?.map((c) => c.field),
    ['metadata.name', 'spec.ports[0].port'],
  );
  t.regex(statusOf(svc).message ?? '', /a DNS-1035 label must consist of/);
  const ns = await t.throwsAsync(core.createNamespace({ body: { metadata: { name: 'a.b' } } }));
  t.regex(statusOf(ns).message ?? '', /a lowercase RFC 1123 label must consist of/);
  const deploy = await t.throwsAsync(
    apps.createNamespacedDeployment({
      namespace: 'default',
      body: {
        metadata: { name: 'd' },
        spec: {
          replicas: -1,
          selector: { matchLabels: { a: 'b' } },
          template: { metadata: { labels: { a: 'c' } }, spec: { containers: [{ name: 'c', image: 'x' }] } },
        },
      },
    }),
  );
  t.deepEqual(
    statusOf(deploy).details?.causes?.map((c) => c.field),
    ['spec.replicas', 'spec.template.metadata.labels'],
  );
  const label = await t.throwsAsync(core.createNamespacedConfigMap({ namespace: 'default', body: configMap('x', {}, { 'bad key!': 'v' }) }));
  t.like(statusOf(label), { code: 422, details: { causes: [{ field: 'metadata.labels' }] } });
  t.is(cluster.resourceVersion, before);
});

test('unknown kinds: KubernetesObjectApi cannot map them, raw requests get 404; concurrent writers keep the store consistent', async (t) => {
  const { objects, core, cluster } = await startCluster(t);
  await t.throwsAsync(objects.create({ apiVersion: 'example.com/v1', kind: 'Gadget', metadata: { name: 'g', namespace: 'default' } }), {
    message: /Gadget|example\.com/,
  });
  const res = await raw(cluster, 'GET', '/apis/example.com/v1/gadgets');
  t.like(res, { status: 404, json: { reason: 'NotFound', message: 'the server could not find the requested resource' } });

  await core.createNamespacedConfigMap({ namespace: 'default', body: configMap('counter', { n: '0' }) });
  // 20 read-modify-write loops in parallel: optimistic concurrency makes every increment count once.
  const increment = async (): Promise<number> => {
    for (let attempt = 1; attempt <= 100; attempt++) {
      const cm = await core.readNamespacedConfigMap({ name: 'counter', namespace: 'default' });
      cm.data = { n: String(Number(cm.data!.n) + 1) };
      try {
        await core.replaceNamespacedConfigMap({ name: 'counter', namespace: 'default', body: cm });
        return attempt;
      } catch (err) {
        if ((err as k8s.ApiException<unknown>).code !== 409) throw err;
      }
    }
    throw new Error('too many conflicts');
  };
  await Promise.all(Array.from({ length: 20 }, increment));
  t.is((await core.readNamespacedConfigMap({ name: 'counter', namespace: 'default' })).data?.n, '20');
});
