import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import https from 'node:https';
import type { TLSSocket } from 'node:tls';
import { join } from 'node:path';
import test from 'ava';
import { kubeconfigSource } from '../../src/kube/kubeconfig-source.js';
import { stringify } from 'yaml';
import { CoreV1Api } from '@kubernetes/client-node';
import { runStandaloneProxy } from '../../proxy/standalone.js';
import { readTraceAll } from '../../src/io/trace-io.js';
import { kubeConfigOf, waitFor } from './helpers.js';
import { scratchDir } from '../_scratch-dir.js';

/** A CA, a server certificate for 127.0.0.1 and a client certificate, made with the openssl CLI. */
function makeCertificates(dir: string): Record<'ca' | 'serverCert' | 'serverKey' | 'clientCert' | 'clientKey', string> {
  const run = (...args: string[]) => execFileSync('openssl', args, { cwd: dir, stdio: 'pipe' });
  run('req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', 'ca.key', '-out', 'ca.crt', '-days', '1', '-subj', '/CN=test-ca');
  writeFileSync(join(dir, 'san.ext'), 'subjectAltName=IP:127.0.0.1\n');
  run('req', '-newkey', 'rsa:2048', '-nodes', '-keyout', 'server.key', '-out', 'server.csr', '-subj', '/CN=apiserver');
  run('x509', '-req', '-in', 'server.csr', '-CA', 'ca.crt', '-CAkey', 'ca.key', '-CAcreateserial', '-out', 'server.crt', '-days', '1', '-extfile', 'san.ext');
  run('req', '-newkey', 'rsa:2048', '-nodes', '-keyout', 'client.key', '-out', 'client.csr', '-subj', '/CN=kperturb-client');
  run('x509', '-req', '-in', 'client.csr', '-CA', 'ca.crt', '-CAkey', 'ca.key', '-CAcreateserial', '-out', 'client.crt', '-days', '1');
  const read = (f: string) => readFileSync(join(dir, f), 'utf8');
  return { ca: read('ca.crt'), serverCert: read('server.crt'), serverKey: read('server.key'), clientCert: read('client.crt'), clientKey: read('client.key') };
}

test('the standalone proxy reads an https kubeconfig (CA, client certificate, token) and writes a kubeconfig and a trace', async (t) => {
  const dir = scratchDir(t, 'kperturb-proxy-');
  const pems = makeCertificates(dir);

  const seen: Array<{ path: string; authorization?: string; clientCn?: string }> = [];
  const server = https.createServer({ key: pems.serverKey, cert: pems.serverCert, ca: pems.ca, requestCert: true, rejectUnauthorized: true }, (req, res) => {
    const peer = (req.socket as TLSSocket).getPeerCertificate();
    seen.push({ path: req.url ?? '', ...(req.headers.authorization ? { authorization: req.headers.authorization } : {}), clientCn: String(peer.subject?.CN) });
    res.writeHead(200, { 'content-type': 'application/json' });
    if (req.url === '/api/v1') {
      res.end(
        JSON.stringify({ kind: 'APIResourceList', groupVersion: 'v1', resources: [{ name: 'configmaps', kind: 'ConfigMap', namespaced: true, verbs: [] }] }),
      );
    } else {
      res.end(JSON.stringify({ kind: 'ConfigMapList', apiVersion: 'v1', metadata: { resourceVersion: '7' }, items: [] }));
    }
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  t.teardown(() => {
    server.closeAllConnections();
    server.close();
  });
  const port = (server.address() as { port: number }).port;
  const b64 = (s: string) => Buffer.from(s).toString('base64');
  const upstreamKubeconfig = join(dir, 'upstream.kubeconfig');
  writeFileSync(
    upstreamKubeconfig,
    stringify({
      apiVersion: 'v1',
      kind: 'Config',
      clusters: [{ name: 'c', cluster: { server: `https://127.0.0.1:${port}`, 'certificate-authority-data': b64(pems.ca) } }],
      users: [{ name: 'u', user: { 'client-certificate-data': b64(pems.clientCert), 'client-key-data': b64(pems.clientKey), token: 'upstream-token' } }],
      contexts: [{ name: 'x', context: { cluster: 'c', user: 'u' } }],
      'current-context': 'x',
    }),
  );

  const logs: string[] = [];
  const kubeconfigOut = join(dir, 'controller.kubeconfig');
  const traceFile = join(dir, 'controller.trace.jsonl');
  const { proxy, close } = await runStandaloneProxy({
    upstreamKubeconfig: kubeconfigSource({ kubeconfig: upstreamKubeconfig }),
    kubeconfigOut,
    traceFile,
    log: (l) => logs.push(l),
  });
  t.teardown(close);

  const api = kubeConfigOf(readFileSync(kubeconfigOut, 'utf8')).makeApiClient(CoreV1Api);
  const list = await api.listNamespacedConfigMap({ namespace: 'default' });
  t.is(list.metadata?.resourceVersion, '7');
  const listed = seen.find((s) => s.path.startsWith('/api/v1/namespaces/default/configmaps'));
  t.like(listed, { authorization: 'Bearer upstream-token', clientCn: 'kperturb-client' });
  t.true(logs.some((l) => l.includes(proxy.url)));

  await close();
  const events = await readTraceAll(traceFile);
  t.deepEqual(
    events.map((e) => e.type),
    ['header', 'request', 'response'],
  );
  t.like(events[1], { verb: 'list', resource: { kind: 'ConfigMap' } });
  t.like(events[2], { status: 200, object: { kind: 'ConfigMapList' } });
});

test('a kubeconfig that cannot be read is a user input error naming the file', async (t) => {
  const err = await t.throwsAsync(runStandaloneProxy({ upstreamKubeconfig: kubeconfigSource({ kubeconfig: '/nonexistent/kubeconfig' }), log: () => {} }));
  t.regex(err!.message, /\/nonexistent\/kubeconfig/);
});

test('the standalone proxy writes the cluster trace from its own watch, sharing sequence numbers; --no-redact-secrets keeps Secret values', async (t) => {
  const { EmbeddedCluster } = await import('../../src/cluster/index.js');
  const { hashSecretValue } = await import('../../src/model/secret-hash.js');
  const cluster = await EmbeddedCluster.start();
  t.teardown(() => cluster.stop());
  const dir = scratchDir(t, 'kperturb-proxy-');
  writeFileSync(join(dir, 'upstream.kubeconfig'), cluster.kubeconfigYaml());
  const value = Buffer.from('s3cret').toString('base64');
  const runOnce = async (redactSecrets: boolean, name: string) => {
    const traceFile = join(dir, `${name}.controller.jsonl`);
    const clusterTraceFile = join(dir, `${name}.cluster.jsonl`);
    const kubeconfigOut = join(dir, `${name}.kubeconfig`);
    const { proxy, close } = await runStandaloneProxy({
      upstreamKubeconfig: kubeconfigSource({ kubeconfig: join(dir, 'upstream.kubeconfig') }),
      kubeconfigOut,
      traceFile,
      clusterTraceFile,
      redactSecrets,
      log: () => {},
    });
    t.regex(proxy.url, /^https:/, 'TLS by default');
    const api = kubeConfigOf(readFileSync(kubeconfigOut, 'utf8')).makeApiClient(CoreV1Api);
    await api.createNamespacedSecret({ namespace: 'default', body: { metadata: { name }, data: { password: value } } });
    await new Promise((r) => setTimeout(r, 200));
    await close();
    return { controller: await readTraceAll(traceFile), cluster: await readTraceAll(clusterTraceFile) };
  };
  const redacted = await runOnce(true, 'redacted');
  const change = redacted.cluster.find((e) => e.type === 'cluster-change' && e.key === 'Secret/default/redacted');
  t.truthy(change, 'the cluster trace holds the Secret the controller created');
  t.like(change, { object: { data: { password: hashSecretValue(value) } } });
  const create = redacted.controller.find((e) => e.type === 'request' && e.verb === 'create')!;
  t.like(create, { body: { data: { password: hashSecretValue(value) } } });
  t.true(change!.seq > create.seq, 'one sequence across both traces');

  const raw = await runOnce(false, 'raw');
  t.like(
    raw.cluster.find((e) => e.type === 'cluster-change' && e.key === 'Secret/default/raw'),
    { object: { data: { password: value } } },
  );
  t.like(
    raw.controller.find((e) => e.type === 'request' && e.verb === 'create'),
    { body: { data: { password: value } } },
  );
});

test('an exec-plugin upstream token is used, and refreshed after the API server answers 401', async (t) => {
  const { startHttpServer, rawRequest } = await import('./helpers.js');
  const dir = scratchDir(t, 'kperturb-proxy-');
  // The plugin hands out token-1, token-2... (a counter file), each expired when it is made, so that
  // client-node runs the plugin again whenever the proxy asks (no waiting for an expiry).
  const counter = join(dir, 'counter');
  writeFileSync(counter, '0');
  const plugin = join(dir, 'plugin.cjs');
  writeFileSync(
    plugin,
    `const fs = require('fs'); const n = Number(fs.readFileSync(${JSON.stringify(counter)}, 'utf8')) + 1; fs.writeFileSync(${JSON.stringify(counter)}, String(n));
     process.stdout.write(JSON.stringify({ apiVersion: 'client.authentication.k8s.io/v1', kind: 'ExecCredential', status: { token: 'token-' + n, expirationTimestamp: new Date(Date.now() - 1000).toISOString() } }));`,
  );
  const pluginRuns = () => Number(readFileSync(counter, 'utf8'));
  const seen: string[] = [];
  let rejected: string | undefined;
  const upstream = await startHttpServer(t, (req, res) => {
    seen.push(String(req.headers.authorization));
    const auth = String(req.headers.authorization);
    const ok = auth.startsWith('Bearer token-') && auth !== rejected;
    res.writeHead(ok ? 200 : 401, { 'content-type': 'application/json' });
    res.end(JSON.stringify(ok ? { kind: 'ConfigMapList', apiVersion: 'v1', metadata: {}, items: [] } : { kind: 'Status', code: 401 }));
  });
  writeFileSync(
    join(dir, 'upstream.kubeconfig'),
    stringify({
      apiVersion: 'v1',
      kind: 'Config',
      clusters: [{ name: 'c', cluster: { server: upstream, 'insecure-skip-tls-verify': true } }],
      users: [
        { name: 'u', user: { exec: { apiVersion: 'client.authentication.k8s.io/v1', command: process.execPath, args: [plugin], interactiveMode: 'Never' } } },
      ],
      contexts: [{ name: 'x', context: { cluster: 'c', user: 'u' } }],
      'current-context': 'x',
    }),
  );
  const { proxy, close } = await runStandaloneProxy({
    upstreamKubeconfig: kubeconfigSource({ kubeconfig: join(dir, 'upstream.kubeconfig') }),
    tls: false,
    log: () => {},
  });
  t.teardown(close);
  const headers = { authorization: `Bearer ${proxy.controllerToken}` };
  t.is((await rawRequest(proxy.url, { path: '/api/v1/configmaps', headers })).status, 200);
  t.is(seen.at(-1), 'Bearer token-1', 'the plugin token, not the controller token, goes upstream');
  t.is(pluginRuns(), 1, 'the proxy keeps its token until the API server refuses it');
  // The API server stops accepting token-1: the proxy relays the 401 and runs the plugin again in
  // the background (a process to start: wait for it to have run, however long a loaded machine takes).
  rejected = 'Bearer token-1';
  t.is((await rawRequest(proxy.url, { path: '/api/v1/configmaps', headers })).status, 401);
  await waitFor('the plugin to run after the 401', () => pluginRuns() >= 2, 60_000);
  // The proxy takes the plugin's token once the plugin has exited and client-node has read it.
  let status = 401;
  await waitFor(
    'a request with the fresh token',
    async () => (status = (await rawRequest(proxy.url, { path: '/api/v1/configmaps', headers })).status) === 200,
    60_000,
  );
  t.is(status, 200);
  const used = Number(seen.at(-1)!.match(/^Bearer token-(\d+)$/)?.[1]);
  t.true(used >= 2, `a token the plugin made after the 401 went upstream, not ${seen.at(-1)}`);
});
