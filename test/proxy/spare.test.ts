/**
 * The warm spare's door (proxy/spare-door.ts): a spare's requests wait, unseen and uncounted, until
 * the restart admits them into the new epoch; the controller it replaces is served meanwhile.
 */
import http from 'node:http';
import http2 from 'node:http2';
import test from 'ava';
import { CoreV1Api } from '@kubernetes/client-node';
import { kubeConfigOf, startCluster, startProxy, waitFor } from './helpers.js';

for (const tls of [false, true]) {
  test(`a spare's requests wait at its door, out of the trace and the activity, until the restart admits them (${tls ? 'TLS, HTTP/2' : 'plain HTTP'})`, async (t) => {
    const cluster = await startCluster(t);
    const { proxy, trace } = await startProxy(t, cluster, { tls });
    const controller = kubeConfigOf(proxy.kubeconfigYaml()).makeApiClient(CoreV1Api);
    await controller.listNamespacedConfigMap({ namespace: 'default' });

    const spareYaml = await proxy.prepareSpare();
    t.not(spareYaml, proxy.kubeconfigYaml(), 'the spare goes through a door of its own');
    const spare = kubeConfigOf(spareYaml).makeApiClient(CoreV1Api);
    let answered = false;
    const spareList = spare.listNamespacedConfigMap({ namespace: 'kube-system' }).then((list) => {
      answered = true;
      return list;
    });
    await waitFor('the spare request to wait at the door', () => proxy.spareRequestsWaiting() === 1);

    // The controller in place is served as before; nothing of the spare shows.
    await controller.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'meanwhile' } } });
    t.false(answered, 'the spare was not answered');
    t.is(proxy.activity().inFlight, 0, 'a waiting spare is no activity');
    t.false(
      trace.ofType('request').some((r) => r.path?.includes('kube-system')),
      'nor in the trace',
    );

    // The restart: a new incarnation, the spare's epoch, then its requests.
    proxy.incarnation = 2;
    proxy.startNewEpoch();
    proxy.admitSpare();
    const list = await spareList;
    t.true(Array.isArray(list.items));
    t.is(proxy.spareRequestsWaiting(), 0);
    const request = trace.ofType('request').find((r) => r.path?.includes('kube-system'));
    t.is(request?.incarnation, 2, 'taken as the new incarnation');
    // Once admitted, the door is an ordinary one.
    await spare.readNamespacedConfigMap({ name: 'meanwhile', namespace: 'default' });
  });
}

/** Sends a GET through `kubeconfigYaml`'s server and cancels it once `parked` holds; resolves when cancelled. */
async function cancelWhile(kubeconfigYaml: string, caPem: string | undefined, path: string, parked: () => boolean): Promise<void> {
  const kc = kubeConfigOf(kubeconfigYaml);
  const server = kc.getCurrentCluster()!.server;
  const token = kc.getCurrentUser()?.token;
  if (caPem === undefined) {
    const req = http.get(`${server}${path}`, token ? { headers: { authorization: `Bearer ${token}` } } : {});
    req.on('error', () => {});
    await waitFor('the request to wait at the door', parked);
    req.destroy();
    return;
  }
  const session = http2.connect(server, { ca: caPem });
  session.on('error', () => {});
  const stream = session.request({ ':path': path, authorization: `Bearer ${token}` });
  stream.on('error', () => {});
  await waitFor('the request to wait at the door', parked);
  await new Promise<void>((resolve) => stream.close(http2.constants.NGHTTP2_CANCEL, resolve));
  session.close();
}

for (const tls of [false, true]) {
  test(`a spare's request its client gave up while it waited at the door is not sent on when the door opens, nor left in flight (${tls ? 'TLS, HTTP/2' : 'plain HTTP'})`, async (t) => {
    const cluster = await startCluster(t);
    const { proxy, trace } = await startProxy(t, cluster, { tls });
    const spareYaml = await proxy.prepareSpare();
    // client-go's leader election gives up on its GET of the Lease after 5 s: a spare started ahead
    // asks while its door is shut.
    await cancelWhile(spareYaml, proxy.caPem, '/api/v1/namespaces/kube-system/configmaps', () => proxy.spareRequestsWaiting() === 1);
    // Its connection's close reaches the proxy (a later request on a new connection comes after it).
    const controller = kubeConfigOf(proxy.kubeconfigYaml()).makeApiClient(CoreV1Api);
    await controller.listNamespacedConfigMap({ namespace: 'default' });
    proxy.incarnation = 2;
    proxy.startNewEpoch();
    proxy.admitSpare();
    t.is(proxy.activity().inFlight, 0);
    t.deepEqual(proxy.describeInFlight(), []);
    t.false(
      trace.ofType('request').some((r) => r.path?.includes('kube-system')),
      'the request its client gave up is not sent to the API server',
    );
  });
}
