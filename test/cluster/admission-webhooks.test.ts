/**
 * Validating admission webhooks (src/cluster/admission-webhooks.ts): a webhook server on 127.0.0.1
 * with a certificate made as kperturb makes it sees the writes its configuration's rules name, with
 * the object and the old one, and its denial refuses the write with kube-apiserver's message; a
 * webhook that cannot be called refuses under failurePolicy Fail and lets through under Ignore.
 */
import test, { type ExecutionContext } from 'ava';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { issueCertificate } from '../../src/cluster/sim/x509.js';
import { raw, startCluster } from './helpers.js';

interface Review {
  request: { uid: string; operation: string; name: string; namespace?: string; object: any; oldObject: any; dryRun: boolean };
}

/** A webhook server that refuses ConfigMaps whose data.mode is "forbidden", recording what it is sent. */
async function startWebhookServer(t: ExecutionContext): Promise<{ server: Server; port: number; caPem: string; reviews: Review[] }> {
  const now = Date.now();
  const cert = await issueCertificate({
    commonName: 'webhook',
    dnsNames: ['localhost'],
    isCA: false,
    notBefore: new Date(now - 60_000),
    notAfter: new Date(now + 3_600_000),
  });
  const reviews: Review[] = [];
  const server = createServer({ key: cert.keyPem, cert: cert.certPem }, (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const review = JSON.parse(Buffer.concat(chunks).toString('utf8')) as Review;
      reviews.push(review);
      const forbidden = req.url === '/validate' && review.request.object?.data?.mode === 'forbidden';
      const response = forbidden
        ? { uid: review.request.uid, allowed: false, status: { code: 403, reason: 'Forbidden', message: 'mode may not be forbidden' } }
        : { uid: review.request.uid, allowed: true, warnings: ['seen by the webhook'] };
      res.setHeader('Content-Type', 'application/json');
      res.end(JSON.stringify({ apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', response }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => new Promise<void>((resolve) => server.close(() => resolve())));
  return { server, port: (server.address() as AddressInfo).port, caPem: cert.certPem, reviews };
}

const configuration = (name: string, failurePolicy: 'Fail' | 'Ignore', path = '/validate') => ({
  apiVersion: 'admissionregistration.k8s.io/v1',
  kind: 'ValidatingWebhookConfiguration',
  metadata: { name },
  webhooks: [
    {
      name: `${name}.example.com`,
      admissionReviewVersions: ['v1'],
      sideEffects: 'None',
      failurePolicy,
      clientConfig: { service: { namespace: 'system', name: 'webhook-service', path } },
      rules: [{ apiGroups: [''], apiVersions: ['v1'], operations: ['CREATE', 'UPDATE'], resources: ['configmaps'] }],
    },
  ],
});

const CONFIGS = '/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations';
const CMS = '/api/v1/namespaces/default/configmaps';
const cm = (name: string, mode: string) => JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name }, data: { mode } });

test('a denial refuses the write with the webhook status and kube-apiserver message; the webhook sees object and oldObject', async (t) => {
  const hook = await startWebhookServer(t);
  const { cluster } = await startCluster(t, { webhookServer: { port: hook.port, caPem: hook.caPem } });
  t.is((await raw(cluster, 'POST', CONFIGS, JSON.stringify(configuration('deny', 'Fail')))).status, 201);

  const refused = await raw(cluster, 'POST', CMS, cm('a', 'forbidden'));
  t.is(refused.status, 403);
  t.is(refused.json.reason, 'Forbidden');
  t.is(refused.json.message, 'admission webhook "deny.example.com" denied the request: mode may not be forbidden');
  t.is((await raw(cluster, 'GET', `${CMS}/a`)).status, 404);

  const created = await raw(cluster, 'POST', CMS, cm('a', 'fine'));
  t.is(created.status, 201);
  t.regex(created.headers.get('warning') ?? '', /seen by the webhook/);
  const patched = await raw(cluster, 'PATCH', `${CMS}/a`, JSON.stringify({ data: { mode: 'forbidden' } }), 'application/merge-patch+json');
  t.is(patched.status, 403);
  t.is((await raw(cluster, 'GET', `${CMS}/a`)).json.data.mode, 'fine');

  const update = hook.reviews.at(-1)!.request;
  t.is(update.operation, 'UPDATE');
  t.is(update.name, 'a');
  t.is(update.namespace, 'default');
  t.is(update.object.data.mode, 'forbidden');
  t.is(update.oldObject.data.mode, 'fine');
  t.false(update.dryRun);
  // Kinds the rules do not name are not sent.
  const before = hook.reviews.length;
  t.is((await raw(cluster, 'POST', '/api/v1/namespaces/default/secrets', JSON.stringify({ metadata: { name: 's' } }))).status, 201);
  t.is(hook.reviews.length, before);
});

test('a dry run is sent as one and stores nothing', async (t) => {
  const hook = await startWebhookServer(t);
  const { cluster } = await startCluster(t, { webhookServer: { port: hook.port, caPem: hook.caPem } });
  await raw(cluster, 'POST', CONFIGS, JSON.stringify(configuration('deny', 'Fail')));
  t.is((await raw(cluster, 'POST', `${CMS}?dryRun=All`, cm('b', 'fine'))).status, 201);
  t.true(hook.reviews.at(-1)!.request.dryRun);
  t.is((await raw(cluster, 'GET', `${CMS}/b`)).status, 404);
});

test('a webhook that cannot be called refuses with 500 under Fail and lets the write through under Ignore', async (t) => {
  const hook = await startWebhookServer(t);
  await new Promise<void>((resolve) => hook.server.close(() => resolve()));
  const { cluster } = await startCluster(t, { webhookServer: { port: hook.port, caPem: hook.caPem } });
  await raw(cluster, 'POST', CONFIGS, JSON.stringify(configuration('ignored', 'Ignore')));
  t.is((await raw(cluster, 'POST', CMS, cm('c', 'forbidden'))).status, 201);
  await raw(cluster, 'POST', CONFIGS, JSON.stringify(configuration('strict', 'Fail')));
  const refused = await raw(cluster, 'POST', CMS, cm('d', 'fine'));
  t.is(refused.status, 500);
  t.regex(
    refused.json.message,
    /^Internal error occurred: failed calling webhook "strict.example.com": failed to call webhook: Post "https:\/\/127.0.0.1:\d+\/validate": /,
  );
});

test('without a webhook server, a webhook named by Service is not called', async (t) => {
  const hook = await startWebhookServer(t);
  const { cluster } = await startCluster(t);
  await raw(cluster, 'POST', CONFIGS, JSON.stringify(configuration('deny', 'Fail')));
  t.is((await raw(cluster, 'POST', CMS, cm('e', 'forbidden'))).status, 201);
  t.is(hook.reviews.length, 0);
});
