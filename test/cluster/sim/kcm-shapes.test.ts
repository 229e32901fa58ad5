/**
 * The simulated controllers write what kube-controller-manager and kube-apiserver's admission write, in
 * the same order, so that a plan whose trigger names one of those writes transfers between the
 * embedded and a real cluster (test/real/cross-check.real.ts). The expected sequences and the revision
 * name below were read off a real v1.33 control plane (`kperturb learn --real`, cluster traces).
 */
import test from 'ava';
import * as k8s from '@kubernetes/client-node';
import { Watch } from '@kubernetes/client-node';
import { revisionHash } from '../../../src/cluster/sim/statefulset-controller.js';
import { KubeClient } from '../../../src/kube/client.js';
import { eventually, FAST, mergePatch, podTemplate, startSimCluster } from './helpers.js';

/** spec.template of the decommission example's StatefulSet dc1 as a real API server stored it. */
const REAL_TEMPLATE = {
  metadata: {
    creationTimestamp: null,
    labels: { 'app.kubernetes.io/instance': 'dc1', 'app.kubernetes.io/managed-by': 'decommission-operator', 'app.kubernetes.io/name': 'cassandra' },
  },
  spec: {
    volumes: [{ name: 'config', configMap: { name: 'dc1-config', defaultMode: 420 } }],
    containers: [
      {
        name: 'cassandra',
        image: 'cassandra:4.1',
        ports: [
          { name: 'intra-node', containerPort: 7000, protocol: 'TCP' },
          { name: 'cql', containerPort: 9042, protocol: 'TCP' },
        ],
        resources: {},
        volumeMounts: [
          { name: 'data', mountPath: '/var/lib/cassandra' },
          { name: 'config', mountPath: '/etc/cassandra' },
        ],
        terminationMessagePath: '/dev/termination-log',
        terminationMessagePolicy: 'File',
        imagePullPolicy: 'IfNotPresent',
      },
    ],
    restartPolicy: 'Always',
    terminationGracePeriodSeconds: 30,
    dnsPolicy: 'ClusterFirst',
    securityContext: {},
    schedulerName: 'default-scheduler',
  },
};

test('StatefulSet revision names are the ones kube-controller-manager computes', (t) => {
  // The real control plane named this template's revision dc1-74c6c5c87c (collision count 0).
  t.is(revisionHash(REAL_TEMPLATE, 0), '74c6c5c87c');
  // The embedded cluster stores the template without the null creationTimestamp: same name.
  const { creationTimestamp: _drop, ...metadata } = REAL_TEMPLATE.metadata;
  t.is(revisionHash({ ...REAL_TEMPLATE, metadata }, 0), '74c6c5c87c');
  t.not(revisionHash(REAL_TEMPLATE, 1), '74c6c5c87c');
});

/** The status fields each status write changed, in order. */
function statusChanges(events: Array<Record<string, unknown> | undefined>): string[] {
  const out: string[] = [];
  for (let i = 1; i < events.length; i++) {
    const before = events[i - 1] ?? {};
    const after = events[i] ?? {};
    const changed = [...new Set([...Object.keys(before), ...Object.keys(after)])].filter((k) => JSON.stringify(before[k]) !== JSON.stringify(after[k])).sort();
    if (changed.length > 0) out.push(changed.join(','));
  }
  return out;
}

test('StatefulSet scale-down: status writes in kube-controller-manager order (counts from the pods the sync started with)', async (t) => {
  const { apps, kc, log } = await startSimCluster(t, FAST);
  const statuses: Array<Record<string, unknown> | undefined> = [];
  const watch = await new Watch(kc).watch(
    '/apis/apps/v1/namespaces/default/statefulsets',
    {},
    (_type: string, o: k8s.V1StatefulSet) => statuses.push(o.status as Record<string, unknown> | undefined),
    () => undefined,
  );
  t.teardown(() => watch.abort());
  await apps.createNamespacedStatefulSet({
    namespace: 'default',
    body: { metadata: { name: 's' }, spec: { replicas: 2, serviceName: 's', selector: { matchLabels: { app: 's' } }, template: podTemplate({ app: 's' }) } },
  });
  // Waits on the watch, not a read: the watch's events of a write may reach the client after a GET
  // that already shows it (the cluster flushes each watch stream once per event-loop turn).
  const last = () => statuses[statuses.length - 1] ?? {};
  await eventually('2 available, as the watch shows it', async () => last().availableReplicas === 2, 8000, log);
  const scaleUp = statusChanges(statuses);
  const from = statuses.length;
  await apps.patchNamespacedStatefulSet({ name: 's', namespace: 'default', body: { spec: { replicas: 1 } } }, mergePatch);
  await eventually('1 replica, as the watch shows it', async () => last().replicas === 1, 8000, log);
  await new Promise((r) => setTimeout(r, 200));
  // As on a real control plane: a created pod is counted by the next sync (replicas 0 -> 1 after the
  // create), and on scale-down the first write only observes the new generation (the pod it deleted
  // was counted as it was when the sync started), then terminating, not ready, gone.
  t.deepEqual(scaleUp, [
    'collisionCount,currentRevision,observedGeneration,updateRevision',
    'currentReplicas,replicas,updatedReplicas',
    'availableReplicas,readyReplicas',
    'currentReplicas,replicas,updatedReplicas',
    'availableReplicas,readyReplicas',
  ]);
  t.deepEqual(statusChanges(statuses.slice(from - 1)), [
    'observedGeneration',
    'currentReplicas,updatedReplicas',
    'availableReplicas,readyReplicas',
    'replicas',
  ]);
});

test('claims: DefaultStorageClass and StorageObjectInUseProtection admission; the provisioner annotation comes before binding', async (t) => {
  const { client, core, kc, log } = await startSimCluster(t, FAST);
  const post = async (path: string, body: unknown) => {
    const res = await client.request('POST', path, { body });
    t.is(res.status, 201, JSON.stringify(res.body));
    return res.body as k8s.V1PersistentVolumeClaim;
  };
  const claimSpec = { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } };
  // Without a default class a claim keeps no class.
  const before = await post('/api/v1/namespaces/default/persistentvolumeclaims', { metadata: { name: 'early' }, spec: claimSpec });
  t.is(before.spec?.storageClassName, undefined);
  t.deepEqual(before.metadata?.finalizers, ['kubernetes.io/pvc-protection']);
  await post('/apis/storage.k8s.io/v1/storageclasses', {
    metadata: { name: 'standard', annotations: { 'storageclass.kubernetes.io/is-default-class': 'true' } },
    provisioner: 'kperturb.dev/simulated-provisioner',
  });

  const changes: string[] = [];
  let last: Record<string, string> = {};
  const watch = await new Watch(kc).watch(
    '/api/v1/namespaces/default/persistentvolumeclaims',
    { fieldSelector: 'metadata.name=data' },
    (type: string, o: k8s.V1PersistentVolumeClaim) => {
      const now = { ...(o.metadata?.annotations ?? {}), volumeName: o.spec?.volumeName ?? '', phase: o.status?.phase ?? '' };
      const changed = Object.keys(now)
        .filter((k) => now[k as keyof typeof now] !== last[k])
        .sort();
      last = now;
      changes.push(`${type} ${changed.join(',')}`);
    },
    () => undefined,
  );
  t.teardown(() => watch.abort());

  const claim = await post('/api/v1/namespaces/default/persistentvolumeclaims', { metadata: { name: 'data' }, spec: claimSpec });
  t.is(claim.spec?.storageClassName, 'standard', 'the default class');
  const explicit = await post('/api/v1/namespaces/default/persistentvolumeclaims', {
    metadata: { name: 'static' },
    spec: { ...claimSpec, storageClassName: '' },
  });
  t.is(explicit.spec?.storageClassName, '', '"" is kept: static binding only');

  const bound = await eventually(
    'bound',
    async () => {
      const c = await core.readNamespacedPersistentVolumeClaim({ name: 'data', namespace: 'default' });
      return c.status?.phase === 'Bound' ? c : undefined;
    },
    8000,
    log,
  );
  await new Promise((r) => setTimeout(r, 100));
  // As the real PV controller and an external provisioner: name the provisioner, provision, bind, mark Bound.
  t.deepEqual(changes, [
    'ADDED phase,volumeName',
    'MODIFIED volume.beta.kubernetes.io/storage-provisioner,volume.kubernetes.io/storage-provisioner',
    'MODIFIED pv.kubernetes.io/bind-completed,pv.kubernetes.io/bound-by-controller,volumeName',
    'MODIFIED phase',
  ]);
  const pv = await core.readPersistentVolume({ name: bound.spec!.volumeName! });
  t.deepEqual(pv.metadata?.finalizers, ['kubernetes.io/pv-protection']);
});

test('KubeClient sends a DELETE body with its length, so DeleteOptions (preconditions) reach the server', async (t) => {
  const { cluster } = await startSimCluster(t, FAST);
  const client = new KubeClient(cluster.url, cluster.clientOptions());
  t.teardown(() => client.close());
  const created = await client.request('POST', '/api/v1/namespaces/default/configmaps', { body: { metadata: { name: 'cm' } } });
  t.is(created.status, 201);
  const wrongUid = await client.request('DELETE', '/api/v1/namespaces/default/configmaps/cm', {
    body: { kind: 'DeleteOptions', apiVersion: 'v1', preconditions: { uid: 'not-the-uid' } },
  });
  t.is(wrongUid.status, 409, JSON.stringify(wrongUid.body));
  const rightUid = await client.request('DELETE', '/api/v1/namespaces/default/configmaps/cm', {
    body: { kind: 'DeleteOptions', apiVersion: 'v1', preconditions: { uid: (created.body as k8s.V1ConfigMap).metadata!.uid } },
  });
  t.is(rightUid.status, 200, JSON.stringify(rightUid.body));
});
