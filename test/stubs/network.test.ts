/**
 * Loopback networks: each cluster claims its own 127.X.0.0/16 block (parallel runs never hand out
 * the same pod or Service IP), the embedded cluster and its kubelets hand addresses out of it, and
 * a server can listen on them with no setup.
 */
import test from 'ava';
import { createServer, type AddressInfo } from 'node:net';
import { claimLoopbackNetwork, DEFAULT_NETWORK, loopbackNetwork } from '../../src/cluster/network.js';
import { EmbeddedCluster } from '../../src/cluster/index.js';
import { KubeClient } from '../../src/kube/client.js';
import { isObject } from '../../src/model/object-key.js';
import { waitFor } from '../proxy/helpers.js';

test('two claims with the same random order get different blocks; a released block can be claimed again', async (t) => {
  const first = () => 0.5;
  const a = await claimLoopbackNetwork(first);
  const b = await claimLoopbackNetwork(first);
  t.teardown(() => {
    a.release();
    b.release();
  });
  t.not(a.serviceCidr, b.serviceCidr);
  t.regex(a.serviceCidr, /^127\.\d+\.0\.0\/17$/);
  a.release();
  const c = await claimLoopbackNetwork(first);
  t.teardown(() => c.release());
  t.is(c.serviceCidr, a.serviceCidr);
});

test('addresses of a block: services in the lower half, a /20 of pods per node, no .0 or .255', (t) => {
  const n = loopbackNetwork(42);
  t.is(n.kubernetesServiceIp, '127.42.0.1');
  t.is(n.serviceIp(0), '127.42.0.2');
  t.is(n.serviceIp(253), '127.42.1.1');
  t.is(n.podCidr(1), '127.42.144.0/20');
  t.is(n.podIp(0, 0), '127.42.128.1');
  t.is(n.podIp(0, 254), '127.42.129.1');
  t.is(n.podIp(1, 0), '127.42.144.1');
  t.throws(() => n.podIp(8, 0), { message: /room for 8 nodes/ });
  // The default network is what it always was.
  t.is(DEFAULT_NETWORK.serviceIp(0), '10.96.0.10');
  t.is(DEFAULT_NETWORK.podIp(0, 0), '10.244.0.2');
});

async function podAndServiceIps(cluster: EmbeddedCluster): Promise<{ podIP: string; clusterIP: string }> {
  const client = new KubeClient(cluster.url, cluster.clientOptions());
  try {
    await client.request('POST', '/api/v1/namespaces/default/services', {
      body: { metadata: { name: 's' }, spec: { ports: [{ port: 80 }], selector: { app: 'a' } } },
    });
    await client.request('POST', '/api/v1/namespaces/default/pods', {
      body: { metadata: { name: 'p', labels: { app: 'a' } }, spec: { containers: [{ name: 'c', image: 'x' }] } },
    });
    let podIP = '';
    await waitFor(
      'the pod to run',
      async () => {
        const res = await client.request('GET', '/api/v1/namespaces/default/pods/p');
        const status = isObject(res.body) && isObject(res.body.status) ? res.body.status : {};
        podIP = typeof status.podIP === 'string' ? status.podIP : '';
        return podIP !== '';
      },
      15_000,
    );
    const svc = await client.request('GET', '/api/v1/namespaces/default/services/s');
    const spec = isObject(svc.body) && isObject(svc.body.spec) ? svc.body.spec : {};
    return { podIP, clusterIP: String(spec.clusterIP) };
  } finally {
    client.close();
  }
}

test('two loopback clusters at once hand out pod and Service IPs from different blocks, and a server can listen on them', async (t) => {
  const one = await EmbeddedCluster.start({ network: 'loopback' });
  const two = await EmbeddedCluster.start({ network: 'loopback' });
  t.teardown(async () => {
    await one.stop();
    await two.stop();
  });
  const a = await podAndServiceIps(one);
  const b = await podAndServiceIps(two);
  const block = (ip: string) => ip.split('.').slice(0, 2).join('.');
  t.regex(a.podIP, /^127\./);
  t.regex(a.clusterIP, /^127\./);
  t.is(block(a.podIP), block(a.clusterIP));
  t.is(block(a.podIP), one.network.serviceCidr.split('.').slice(0, 2).join('.'));
  t.not(block(a.podIP), block(b.podIP));
  for (const ip of [a.podIP, a.clusterIP, b.podIP]) {
    const server = createServer();
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, ip, resolve);
    });
    t.is((server.address() as AddressInfo).address, ip);
    server.close();
  }
});

test('the default network keeps the 10.x addresses', async (t) => {
  const cluster = await EmbeddedCluster.start();
  t.teardown(() => cluster.stop());
  const { podIP, clusterIP } = await podAndServiceIps(cluster);
  t.regex(podIP, /^10\.244\.0\./);
  t.regex(clusterIP, /^10\.96\./);
});
