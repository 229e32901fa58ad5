/** Built-in kinds through client-node's typed APIs: registration, defaults clients read back, generation and status rules. */
import test from 'ava';
import * as k8s from '@kubernetes/client-node';
import { mergePatch, raw, startCluster, statusOf } from './helpers.js';

const labels = { app: 'web' };
const podSpec = (image = 'nginx:1.25'): k8s.V1PodSpec => ({ containers: [{ name: 'web', image, ports: [{ containerPort: 80 }] }] });
const template = (): k8s.V1PodTemplateSpec => ({ metadata: { labels }, spec: podSpec() });

test('every built-in kind of the issue is served with its scope, verbs and subresources', async (t) => {
  const { objects, cluster } = await startCluster(t);
  const expected: Array<[string, string, boolean, string[]]> = [
    ['v1', 'Namespace', false, ['status', 'finalize']],
    ['v1', 'Pod', true, ['status', 'binding', 'eviction', 'exec', 'attach', 'log', 'portforward']],
    ['v1', 'Service', true, ['status']],
    ['v1', 'Endpoints', true, []],
    ['v1', 'ConfigMap', true, []],
    ['v1', 'Secret', true, []],
    ['v1', 'ServiceAccount', true, []],
    ['v1', 'PersistentVolumeClaim', true, ['status']],
    ['v1', 'PersistentVolume', false, ['status']],
    ['v1', 'Event', true, []],
    ['v1', 'Node', false, ['status']],
    ['events.k8s.io/v1', 'Event', true, []],
    ['apps/v1', 'Deployment', true, ['status', 'scale']],
    ['apps/v1', 'ReplicaSet', true, ['status', 'scale']],
    ['apps/v1', 'StatefulSet', true, ['status', 'scale']],
    ['apps/v1', 'DaemonSet', true, ['status']],
    ['batch/v1', 'Job', true, ['status']],
    ['policy/v1', 'PodDisruptionBudget', true, ['status']],
    ['coordination.k8s.io/v1', 'Lease', true, []],
    ['rbac.authorization.k8s.io/v1', 'Role', true, []],
    ['rbac.authorization.k8s.io/v1', 'RoleBinding', true, []],
    ['rbac.authorization.k8s.io/v1', 'ClusterRole', false, []],
    ['rbac.authorization.k8s.io/v1', 'ClusterRoleBinding', false, []],
    ['apiextensions.k8s.io/v1', 'CustomResourceDefinition', false, ['status']],
  ];
  for (const [apiVersion, kind, namespaced, subresources] of expected) {
    // KubernetesObjectApi resolves kinds through discovery, as client-go's REST mapper does.
    const list = await objects.list(apiVersion, kind, namespaced ? 'default' : undefined);
    t.true(Array.isArray(list.items), `${apiVersion} ${kind}`);
    const doc = await raw(cluster, 'GET', apiVersion === 'v1' ? '/api/v1' : `/apis/${apiVersion}`);
    const main = doc.json.resources.find((r: any) => r.kind === kind && !r.name.includes('/'));
    t.is(main.namespaced, namespaced, `${kind} scope`);
    const subs = doc.json.resources.filter((r: any) => r.name.startsWith(`${main.name}/`)).map((r: any) => r.name.split('/')[1]);
    t.deepEqual(subs.sort(), [...subresources].sort(), `${kind} subresources`);
  }
  const v1 = await raw(cluster, 'GET', '/apis/apps/v1');
  t.like(
    v1.json.resources.find((r: any) => r.name === 'deployments/scale'),
    { group: 'autoscaling', version: 'v1', kind: 'Scale', verbs: ['get', 'patch', 'update'] },
  );
  t.like(
    v1.json.resources.find((r: any) => r.name === 'deployments'),
    { shortNames: ['deploy'], categories: ['all'] },
  );
  const core = await raw(cluster, 'GET', '/api/v1');
  t.like(
    core.json.resources.find((r: any) => r.name === 'pods/binding'),
    { kind: 'Binding', verbs: ['create'] },
  );
  t.like(
    core.json.resources.find((r: any) => r.name === 'pods/eviction'),
    { group: 'policy', version: 'v1', kind: 'Eviction' },
  );
  t.deepEqual(core.json.resources.find((r: any) => r.name === 'namespaces').verbs.sort(), ['create', 'delete', 'get', 'list', 'patch', 'update', 'watch']);
});

test('a fresh cluster has the default namespaces and the kubernetes Service', async (t) => {
  const { core } = await startCluster(t);
  const svc = await core.readNamespacedService({ name: 'kubernetes', namespace: 'default' });
  t.is(svc.spec?.clusterIP, '10.96.0.1');
  t.like(svc.spec?.ports?.[0], { name: 'https', port: 443, protocol: 'TCP' });
});

test('defaults clients read back: Pod, Service, PVC, PV', async (t) => {
  const { core } = await startCluster(t);
  const pod = await core.createNamespacedPod({ namespace: 'default', body: { metadata: { name: 'p' }, spec: podSpec('nginx') } });
  t.is(pod.metadata?.generation, undefined, 'Kubernetes 1.32 pods have no metadata.generation');
  t.like(pod.status, { phase: 'Pending', qosClass: 'BestEffort' });
  t.like(pod.spec, {
    restartPolicy: 'Always',
    dnsPolicy: 'ClusterFirst',
    terminationGracePeriodSeconds: 30,
    schedulerName: 'default-scheduler',
    serviceAccountName: 'default',
    enableServiceLinks: true,
    priority: 0,
  });
  t.like(pod.spec?.containers[0], { imagePullPolicy: 'Always', terminationMessagePath: '/dev/termination-log', terminationMessagePolicy: 'File' });
  t.is(pod.spec?.containers[0]?.ports?.[0]?.protocol, 'TCP');
  t.deepEqual(
    pod.spec?.tolerations?.map((x) => x.key),
    ['node.kubernetes.io/not-ready', 'node.kubernetes.io/unreachable'],
  );
  const tagged = await core.createNamespacedPod({
    namespace: 'default',
    body: { metadata: { name: 'g' }, spec: { containers: [{ name: 'c', image: 'nginx:1.25', resources: { limits: { cpu: '1', memory: '1Gi' } } }] } },
  });
  t.is(tagged.spec?.containers[0]?.imagePullPolicy, 'IfNotPresent');
  t.deepEqual(tagged.spec?.containers[0]?.resources?.requests, { cpu: '1', memory: '1Gi' }, 'requests default to limits');
  t.is(tagged.status?.qosClass, 'Guaranteed');

  const svc = await core.createNamespacedService({
    namespace: 'default',
    body: { metadata: { name: 's' }, spec: { selector: labels, ports: [{ port: 80 }] } },
  });
  t.like(svc.spec, { type: 'ClusterIP', sessionAffinity: 'None', ipFamilyPolicy: 'SingleStack', internalTrafficPolicy: 'Cluster' });
  t.regex(svc.spec?.clusterIP ?? '', /^10\.96\.\d+\.\d+$/);
  t.deepEqual(svc.spec?.clusterIPs, [svc.spec?.clusterIP]);
  t.like(svc.spec?.ports?.[0], { port: 80, protocol: 'TCP', targetPort: 80 });
  const second = await core.createNamespacedService({
    namespace: 'default',
    body: { metadata: { name: 's2' }, spec: { type: 'NodePort', ports: [{ port: 80 }] } },
  });
  t.not(second.spec?.clusterIP, svc.spec?.clusterIP, 'cluster IPs are unique');
  const nodePort = second.spec?.ports?.[0]?.nodePort ?? 0;
  t.true(nodePort >= 30000 && nodePort <= 32767);
  // A replace that leaves out the allocated clusterIP keeps it.
  const replaced = await core.replaceNamespacedService({
    name: 's',
    namespace: 'default',
    body: {
      metadata: { name: 's', ...(svc.metadata?.resourceVersion ? { resourceVersion: svc.metadata.resourceVersion } : {}) },
      spec: { selector: labels, ports: [{ port: 80 }] },
    },
  });
  t.is(replaced.spec?.clusterIP, svc.spec?.clusterIP);
  const changeIp = await t.throwsAsync(
    core.patchNamespacedService({ name: 's', namespace: 'default', body: { spec: { clusterIP: '10.96.9.9', clusterIPs: ['10.96.9.9'] } } }, mergePatch),
  );
  t.like(statusOf(changeIp), { code: 422, reason: 'Invalid' });
  const headless = await core.createNamespacedService({
    namespace: 'default',
    body: { metadata: { name: 'h' }, spec: { clusterIP: 'None', selector: labels } },
  });
  t.deepEqual(headless.spec?.clusterIPs, ['None']);

  const pvc = await core.createNamespacedPersistentVolumeClaim({
    namespace: 'default',
    body: { metadata: { name: 'data' }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } } },
  });
  t.is(pvc.spec?.volumeMode, 'Filesystem');
  t.is(pvc.status?.phase, 'Pending');
  // A claim not yet bound cannot be resized (kube-apiserver: "... for bound claims"); a bound one can.
  const grow = (name: string) =>
    core.patchNamespacedPersistentVolumeClaim({ name, namespace: 'default', body: { spec: { resources: { requests: { storage: '2Gi' } } } } }, mergePatch);
  const pendingResize = await t.throwsAsync(grow('data'));
  t.like(statusOf(pendingResize), { code: 422, reason: 'Invalid' });
  t.regex(statusOf(pendingResize)?.message ?? '', /spec is immutable after creation except resources\.requests and volumeAttributesClassName for bound claims/);
  await core.patchNamespacedPersistentVolumeClaimStatus({ name: 'data', namespace: 'default', body: { status: { phase: 'Bound' } } }, mergePatch);
  t.is((await grow('data')).spec?.resources?.requests?.storage, '2Gi');
  const pv = await core.createPersistentVolume({
    body: { metadata: { name: 'pv1' }, spec: { capacity: { storage: '1Gi' }, accessModes: ['ReadWriteOnce'], hostPath: { path: '/tmp/x' } } },
  });
  t.like(pv.spec, { persistentVolumeReclaimPolicy: 'Retain', volumeMode: 'Filesystem' });
  t.is(pv.status?.phase, 'Pending');
});

test('defaults clients read back: Deployment, StatefulSet, DaemonSet, Job', async (t) => {
  const { kc, apps } = await startCluster(t);
  const batch = kc.makeApiClient(k8s.BatchV1Api);
  const deploy = await apps.createNamespacedDeployment({
    namespace: 'default',
    body: { metadata: { name: 'd' }, spec: { selector: { matchLabels: labels }, template: template() } },
  });
  t.like(deploy.spec, {
    replicas: 1,
    revisionHistoryLimit: 10,
    progressDeadlineSeconds: 600,
    strategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: '25%', maxUnavailable: '25%' } },
  });
  t.like(deploy.spec?.template.spec, {
    restartPolicy: 'Always',
    dnsPolicy: 'ClusterFirst',
    terminationGracePeriodSeconds: 30,
    schedulerName: 'default-scheduler',
  });
  t.is(deploy.spec?.template.spec?.tolerations, undefined, 'admission defaults apply to pods, not templates');
  t.is(deploy.metadata?.generation, 1);
  t.deepEqual({ ...deploy.status }, {});

  const sts = await apps.createNamespacedStatefulSet({
    namespace: 'default',
    body: {
      metadata: { name: 'db' },
      spec: {
        serviceName: 'db',
        selector: { matchLabels: labels },
        // The pod template mounts a volume only the volumeClaimTemplates define: valid for a StatefulSet.
        template: {
          metadata: { labels },
          spec: { containers: [{ name: 'db', image: 'postgres:16', volumeMounts: [{ name: 'data', mountPath: '/var/lib/postgresql' }] }] },
        },
        volumeClaimTemplates: [{ metadata: { name: 'data' }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } } }],
      },
    },
  });
  t.like(sts.spec, {
    replicas: 1,
    podManagementPolicy: 'OrderedReady',
    revisionHistoryLimit: 10,
    updateStrategy: { type: 'RollingUpdate', rollingUpdate: { partition: 0 } },
    persistentVolumeClaimRetentionPolicy: { whenDeleted: 'Retain', whenScaled: 'Retain' },
  });
  t.like(sts.spec?.volumeClaimTemplates?.[0], {
    apiVersion: 'v1',
    kind: 'PersistentVolumeClaim',
    spec: { volumeMode: 'Filesystem' },
    status: { phase: 'Pending' },
  });
  t.deepEqual({ ...sts.status }, { replicas: 0, availableReplicas: 0 });

  const ds = await apps.createNamespacedDaemonSet({
    namespace: 'default',
    body: { metadata: { name: 'agent' }, spec: { selector: { matchLabels: labels }, template: template() } },
  });
  t.like(ds.spec, { revisionHistoryLimit: 10, updateStrategy: { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: 1, maxSurge: 0 } } });
  t.deepEqual({ ...ds.status }, { currentNumberScheduled: 0, desiredNumberScheduled: 0, numberMisscheduled: 0, numberReady: 0 });

  const job = await batch.createNamespacedJob({
    namespace: 'default',
    body: { metadata: { name: 'j' }, spec: { template: { spec: { ...podSpec(), restartPolicy: 'Never' } } } },
  });
  t.like(job.spec, { completions: 1, parallelism: 1, backoffLimit: 6, completionMode: 'NonIndexed', suspend: false });
  const uid = job.metadata?.uid ?? '';
  t.like(job.spec?.selector, { matchLabels: { 'batch.kubernetes.io/controller-uid': uid } });
  t.like(job.spec?.template.metadata?.labels, { 'batch.kubernetes.io/job-name': 'j', 'job-name': 'j', 'controller-uid': uid });
  const badJob = await t.throwsAsync(
    batch.createNamespacedJob({ namespace: 'default', body: { metadata: { name: 'bad' }, spec: { template: { spec: podSpec() } } } }),
  );
  t.like(statusOf(badJob), { code: 422, reason: 'Invalid', details: { kind: 'Job', group: 'batch' } });
  t.regex(statusOf(badJob).message ?? '', /spec\.template\.spec\.restartPolicy: Unsupported value: "Always"/);
});

test('generation bumps on spec changes only; status writes change only status (and annotations for apps/v1)', async (t) => {
  const { apps } = await startCluster(t);
  const created = await apps.createNamespacedDeployment({
    namespace: 'default',
    body: { metadata: { name: 'd', labels: { v: '1' } }, spec: { selector: { matchLabels: labels }, template: template() } },
  });
  const labelled = await apps.patchNamespacedDeployment({ name: 'd', namespace: 'default', body: { metadata: { labels: { v: '2' } } } }, mergePatch);
  t.is(labelled.metadata?.generation, 1, 'a label change is not a spec change');
  const scaled = await apps.patchNamespacedDeployment({ name: 'd', namespace: 'default', body: { spec: { replicas: 3 } } }, mergePatch);
  t.is(scaled.metadata?.generation, 2);
  const same = await apps.patchNamespacedDeployment({ name: 'd', namespace: 'default', body: { spec: { replicas: 3 } } }, mergePatch);
  t.is(same.metadata?.resourceVersion, scaled.metadata?.resourceVersion, 'a no-op patch is not a write');

  const status = await apps.replaceNamespacedDeploymentStatus({
    name: 'd',
    namespace: 'default',
    body: {
      ...scaled,
      metadata: { ...scaled.metadata, labels: { v: 'from-status' }, annotations: { note: 'x' } },
      spec: { ...scaled.spec!, replicas: 9 },
      status: { observedGeneration: 2, replicas: 3, readyReplicas: 1 },
    },
  });
  t.like(status.status, { observedGeneration: 2, replicas: 3, readyReplicas: 1 });
  t.is(status.spec?.replicas, 3, 'a status write does not change spec');
  t.is(status.metadata?.generation, 2, 'a status write does not bump generation');
  t.deepEqual(status.metadata?.labels, { v: '2' }, 'apps/v1 status writes keep labels');
  t.deepEqual(status.metadata?.annotations, { note: 'x' }, 'but may change annotations');
  const main = await apps.replaceNamespacedDeployment({ name: 'd', namespace: 'default', body: { ...status, status: { replicas: 0 } } });
  t.like(main.status, { replicas: 3 }, 'a main write keeps the stored status');
  t.true(Number(created.metadata?.resourceVersion) < Number(main.metadata?.resourceVersion));
  const selector = await t.throwsAsync(
    apps.patchNamespacedDeployment(
      {
        name: 'd',
        namespace: 'default',
        body: { spec: { selector: { matchLabels: { app: 'other' } }, template: { metadata: { labels: { app: 'other' } } } } },
      },
      mergePatch,
    ),
  );
  t.like(statusOf(selector), { code: 422, reason: 'Invalid' });
  t.regex(statusOf(selector).message ?? '', /spec\.selector: Invalid value: .*field is immutable/);
});

test('pods: spec is immutable except images; status writes may change labels but not ownerReferences', async (t) => {
  const { core } = await startCluster(t);
  await core.createNamespacedPod({ namespace: 'default', body: { metadata: { name: 'p' }, spec: podSpec() } });
  const image = await core.patchNamespacedPod(
    { name: 'p', namespace: 'default', body: { spec: { containers: [{ name: 'web', image: 'nginx:1.26' }] } } },
    k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.StrategicMergePatch),
  );
  t.is(image.spec?.containers[0]?.image, 'nginx:1.26');
  const err = await t.throwsAsync(core.patchNamespacedPod({ name: 'p', namespace: 'default', body: { spec: { restartPolicy: 'Never' } } }, mergePatch));
  t.like(statusOf(err), { code: 422, reason: 'Invalid', details: { kind: 'Pod', causes: [{ field: 'spec', reason: 'FieldValueForbidden' }] } });
  const status = await core.patchNamespacedPodStatus(
    {
      name: 'p',
      namespace: 'default',
      body: {
        metadata: { labels: { ready: 'yes' }, ownerReferences: [{ apiVersion: 'v1', kind: 'Node', name: 'n', uid: 'u' }] },
        status: { phase: 'Running' },
      },
    },
    mergePatch,
  );
  t.is(status.status?.phase, 'Running');
  t.deepEqual(status.metadata?.labels, { ready: 'yes' });
  t.is(status.metadata?.ownerReferences, undefined);
});

test('Events: core/v1 and events.k8s.io/v1 are two views of the same objects', async (t) => {
  const { core, kc } = await startCluster(t);
  const events = kc.makeApiClient(k8s.EventsV1Api);
  await core.createNamespacedEvent({
    namespace: 'default',
    body: {
      metadata: { name: 'e1' },
      involvedObject: { kind: 'Pod', name: 'p', namespace: 'default' },
      reason: 'Started',
      message: 'hello',
      type: 'Normal',
      count: 2,
    },
  });
  const viaEvents = await events.readNamespacedEvent({ name: 'e1', namespace: 'default' });
  t.like(viaEvents, { reason: 'Started', note: 'hello', type: 'Normal', deprecatedCount: 2, regarding: { kind: 'Pod', name: 'p' } });
  await events.createNamespacedEvent({
    namespace: 'default',
    body: {
      metadata: { name: 'e2' },
      eventTime: new Date('2025-01-01T00:00:00.123Z') as unknown as k8s.V1MicroTime,
      reportingController: 'me',
      reportingInstance: 'me-1',
      action: 'Do',
      reason: 'Done',
      regarding: { kind: 'Pod', name: 'p' },
      note: 'n',
      type: 'Normal',
    },
  });
  const viaCore = await core.readNamespacedEvent({ name: 'e2', namespace: 'default' });
  t.like(viaCore, { message: 'n', reportingComponent: 'me', involvedObject: { kind: 'Pod', name: 'p' } });
  const list = await core.listNamespacedEvent({ namespace: 'default', fieldSelector: 'involvedObject.name=p,reason=Done' });
  t.deepEqual(
    list.items.map((e) => e.metadata?.name),
    ['e2'],
  );
});

test('a PodDisruptionBudget name need not be a DNS subdomain (kube-apiserver checks only its spec)', async (t) => {
  const { kc } = await startCluster(t);
  const policy = kc.makeApiClient(k8s.PolicyV1Api);
  const pdb = await policy.createNamespacedPodDisruptionBudget({
    namespace: 'default',
    body: { metadata: { name: 'my-cluster-name-mongos-' }, spec: { maxUnavailable: 1, selector: { matchLabels: { app: 'x' } } } },
  });
  t.is(pdb.metadata?.name, 'my-cluster-name-mongos-');
  const slash = await t.throwsAsync(
    policy.createNamespacedPodDisruptionBudget({
      namespace: 'default',
      body: { metadata: { name: 'a%b' }, spec: { maxUnavailable: 1, selector: { matchLabels: { app: 'x' } } } },
    }),
  );
  t.regex(statusOf(slash).message ?? '', /may not contain '%'/);
});

test('RBAC names may use colons; Lease and ServiceAccount round-trip', async (t) => {
  const { kc, core } = await startCluster(t);
  const rbac = kc.makeApiClient(k8s.RbacAuthorizationV1Api);
  const coordination = kc.makeApiClient(k8s.CoordinationV1Api);
  const role = await rbac.createClusterRole({
    body: { metadata: { name: 'system:my-operator' }, rules: [{ apiGroups: [''], resources: ['pods'], verbs: ['get'] }] },
  });
  t.is(role.metadata?.name, 'system:my-operator');
  const binding = await rbac.createNamespacedRoleBinding({
    namespace: 'default',
    body: {
      metadata: { name: 'b' },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'system:my-operator' },
      subjects: [{ kind: 'ServiceAccount', name: 'op', namespace: 'default' }],
    },
  });
  const changed = await t.throwsAsync(
    rbac.replaceNamespacedRoleBinding({ name: 'b', namespace: 'default', body: { ...binding, roleRef: { ...binding.roleRef, name: 'other' } } }),
  );
  t.regex(statusOf(changed).message ?? '', /roleRef: Invalid value: .*cannot change roleRef/);
  const lease = await coordination.createNamespacedLease({
    namespace: 'default',
    body: {
      metadata: { name: 'leader' },
      spec: { holderIdentity: 'a', leaseDurationSeconds: 15, renewTime: new Date('2025-01-01T00:00:00.5Z') as unknown as k8s.V1MicroTime },
    },
  });
  t.is(lease.spec?.holderIdentity, 'a');
  const rawLease = await raw((await startCluster(t)).cluster, 'GET', '/apis/coordination.k8s.io/v1/namespaces/default/leases');
  t.is(rawLease.status, 200);
  const sa = await core.createNamespacedServiceAccount({ namespace: 'default', body: { metadata: { name: 'op' } } });
  t.is(sa.metadata?.name, 'op');
});
