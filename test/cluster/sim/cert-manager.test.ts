/**
 * The simulated cert-manager (src/cluster/sim/cert-manager.ts): once cert-manager's CRDs are applied
 * (fixtures/operators/cert-manager.yaml, the kinds of v0.15.1 that Sieve's run-cert-manager workloads
 * install), a selfSigned Issuer turns Ready and a Certificate gets its kubernetes.io/tls Secret, with a
 * key and certificate that node:crypto reads back, and its Ready status, as the Percona operators
 * wait for them.
 */
import test from 'ava';
import { createPrivateKey, X509Certificate } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { readManifests } from '../../../src/workload/runner.js';
import { eventually, getJson, send, startSimCluster, type SimCluster } from './helpers.js';

const CRDS = fileURLToPath(new URL('../../../../fixtures/operators/cert-manager.yaml', import.meta.url));
const CM = '/apis/cert-manager.io/v1alpha2/namespaces/default';
const SECRETS = '/api/v1/namespaces/default/secrets';

async function installCertManager(env: SimCluster): Promise<void> {
  for (const crd of readManifests(CRDS)) await env.client.apply(crd);
  for (const crd of readManifests(CRDS))
    await eventually(`CRD ${crd.metadata!.name} established`, async () => {
      const got = await getJson(env.cluster, `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${crd.metadata!.name}`);
      return got?.status?.conditions?.some((c: { type: string; status: string }) => c.type === 'Established' && c.status === 'True');
    });
}

async function create(env: SimCluster, path: string, body: unknown): Promise<any> {
  const res = await send(env.cluster, 'POST', path, body);
  if (res.status !== 201) throw new Error(`POST ${path}: ${res.status} ${JSON.stringify(res.json)}`);
  return res.json;
}

const issuer = (name: string) => ({ apiVersion: 'cert-manager.io/v1alpha2', kind: 'Issuer', metadata: { name }, spec: { selfSigned: {} } });
const certificate = (name: string, issuerName: string) => ({
  apiVersion: 'cert-manager.io/v1alpha2',
  kind: 'Certificate',
  metadata: { name },
  spec: {
    secretName: `${name}-tls`,
    commonName: 'db-proxysql',
    organization: ['PSMDB'],
    dnsNames: ['db-pxc', '*.db-pxc'],
    isCA: true,
    issuerRef: { name: issuerName, kind: 'Issuer' },
  },
});

function readyOf(obj: any): { status: string; reason: string; message?: string } | undefined {
  return obj?.status?.conditions?.find((c: { type: string }) => c.type === 'Ready');
}

test('a Certificate of a selfSigned Issuer gets its TLS Secret and Ready status, as cert-manager issues it', async (t) => {
  const env = await startSimCluster(t);
  await installCertManager(env);
  await create(env, `${CM}/issuers`, issuer('db-ca'));
  await create(env, `${CM}/certificates`, certificate('db-ssl', 'db-ca'));

  const secret = await eventually('the Secret of the Certificate', () => getJson(env.cluster, `${SECRETS}/db-ssl-tls`), 5000, env.log);
  t.is(secret.type, 'kubernetes.io/tls');
  t.deepEqual(secret.metadata.annotations, {
    'cert-manager.io/alt-names': 'db-pxc,*.db-pxc',
    'cert-manager.io/certificate-name': 'db-ssl',
    'cert-manager.io/common-name': 'db-proxysql',
    'cert-manager.io/ip-sans': '',
    'cert-manager.io/issuer-kind': 'Issuer',
    'cert-manager.io/issuer-name': 'db-ca',
    'cert-manager.io/uri-sans': '',
  });
  t.is(secret.metadata.ownerReferences, undefined, 'cert-manager does not own the Secrets it writes (by default)');
  const pem = (key: string) => Buffer.from(secret.data[key], 'base64').toString();
  const cert = new X509Certificate(pem('tls.crt'));
  t.is(cert.subject, 'O=PSMDB\nCN=db-proxysql');
  t.is(cert.subjectAltName, 'DNS:db-pxc, DNS:*.db-pxc');
  t.true(cert.ca, 'spec.isCA: a CA certificate');
  t.true(cert.verify(cert.publicKey), 'self-signed: signed with its own key');
  t.true(cert.checkPrivateKey(createPrivateKey(pem('tls.key'))), 'tls.key is the certificate key');
  t.is(pem('ca.crt'), pem('tls.crt'), "a selfSigned issuer's ca.crt is the certificate itself");

  const issued = await eventually('the Certificate Ready', async () => {
    const c = await getJson(env.cluster, `${CM}/certificates/db-ssl`);
    return readyOf(c)?.status === 'True' ? c : undefined;
  });
  t.like(readyOf(issued), { reason: 'Ready', message: 'Certificate is up to date and has not expired' });
  t.is(issued.status.notAfter, new Date(cert.validTo).toISOString().replace('.000Z', 'Z'));
  t.is(Date.parse(cert.validTo) - Date.parse(cert.validFrom), 90 * 24 * 3600 * 1000, "cert-manager's default duration");
  t.like(readyOf(await getJson(env.cluster, `${CM}/issuers/db-ca`)), { status: 'True', reason: 'IsReady' });
});

test('a Certificate whose Issuer does not exist yet is issued once the Issuer is ready, and a deleted Secret is issued again', async (t) => {
  const env = await startSimCluster(t);
  await installCertManager(env);
  await create(env, `${CM}/certificates`, certificate('early', 'late-ca'));
  const issuerCreated = await create(env, `${CM}/issuers`, issuer('late-ca'));
  const first = await eventually('the Secret', () => getJson(env.cluster, `${SECRETS}/early-tls`), 5000, env.log);
  t.true(Number(first.metadata.resourceVersion) > Number(issuerCreated.metadata.resourceVersion), 'issued only after its issuer came');

  t.is((await send(env.cluster, 'DELETE', `${SECRETS}/early-tls`)).status, 200);
  const again = await eventually('the Secret issued again', async () => {
    const s = await getJson(env.cluster, `${SECRETS}/early-tls`);
    return s && s.metadata.uid !== first.metadata.uid ? s : undefined;
  });
  t.not(again.data['tls.key'], first.data['tls.key'], 'a new key');
});

test('a ClusterIssuer issues Certificates in any namespace', async (t) => {
  const env = await startSimCluster(t);
  await installCertManager(env);
  await create(env, '/apis/cert-manager.io/v1alpha2/clusterissuers', { ...issuer('global-ca'), kind: 'ClusterIssuer' });
  const cert = certificate('web', 'global-ca');
  await create(env, `${CM}/certificates`, { ...cert, spec: { ...cert.spec, issuerRef: { name: 'global-ca', kind: 'ClusterIssuer' } } });
  const secret = await eventually('the Secret', () => getJson(env.cluster, `${SECRETS}/web-tls`), 5000, env.log);
  t.is(secret.metadata.annotations['cert-manager.io/issuer-kind'], 'ClusterIssuer');
});
