/**
 * The warm spare's door (proxy/spare-door.ts): a spare's requests wait, unseen and uncounted, until
 * the restart admits them into the new epoch; the controller it replaces is served meanwhile.
 */
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
