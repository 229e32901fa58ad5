/**
 * Workload kinds: apps/v1 (Deployment, ReplicaSet, StatefulSet, DaemonSet), batch/v1 (Job, CronJob),
 * policy/v1 PodDisruptionBudget, plus coordination.k8s.io/v1 Lease and the rbac.authorization.k8s.io/v1
 * kinds, each with the v1beta1 version older releases served (kube-version.ts picks the emulated
 * release's). Strategy rules after pkg/registry/{apps,batch,policy,coordination,rbac}.
 */
import { isObject, type KubeObject } from '../../model/object-key.js';
import type { ResourceDefinition } from '../registry.js';
import { builtinKind, WORKLOAD_SCALE } from './define.js';
import { child, defaultDaemonSet, defaultDeployment, defaultJob, defaultPodSpec, defaultReplicaSet, defaultStatefulSet } from './defaults.js';
import { CONDITIONS_LIST_RULES, JOB_LIST_RULES, WORKLOAD_LIST_RULES, podSpecRules } from './list-rules.js';
import { PDB_V1BETA1_CONVERSION } from './legacy.js';
import { validateDaemonSet, validateDeployment, validateJob, validatePdb, validateReplicaSet, validateRoleBinding, validateStatefulSet } from './validation.js';

const ROLLBACK_ANNOTATION = 'deprecated.deployment.rollback.to';

function deploymentDefinition(): ResourceDefinition {
  return builtinKind({
    group: 'apps',
    resource: 'deployments',
    kind: 'Deployment',
    namespaced: true,
    shortNames: ['deploy'],
    categories: ['all'],
    subresources: ['status', 'scale'],
    scale: WORKLOAD_SCALE,
    strategy: {
      tracksGeneration: true,
      // A change of the (deprecated) rollback annotation also bumps generation (deployment strategy).
      generationAnnotations: [ROLLBACK_ANNOTATION],
      listRules: WORKLOAD_LIST_RULES,
      statusWrite: 'status-and-annotations',
      prepareForCreate: defaultDeployment,
      prepareForUpdate: defaultDeployment,
      initialStatus: () => ({}),
      validate: validateDeployment,
    },
  });
}

function replicaSetDefinition(): ResourceDefinition {
  return builtinKind({
    group: 'apps',
    resource: 'replicasets',
    kind: 'ReplicaSet',
    namespaced: true,
    shortNames: ['rs'],
    categories: ['all'],
    subresources: ['status', 'scale'],
    scale: WORKLOAD_SCALE,
    strategy: {
      tracksGeneration: true,
      listRules: WORKLOAD_LIST_RULES,
      statusWrite: 'status-and-annotations',
      selectableFields: { 'status.replicas': (o) => String(isObject(o.status) ? (o.status.replicas ?? 0) : 0) },
      prepareForCreate: defaultReplicaSet,
      prepareForUpdate: defaultReplicaSet,
      initialStatus: () => ({ replicas: 0 }),
      validate: validateReplicaSet,
    },
  });
}

function statefulSetDefinition(): ResourceDefinition {
  return builtinKind({
    group: 'apps',
    resource: 'statefulsets',
    kind: 'StatefulSet',
    namespaced: true,
    shortNames: ['sts'],
    categories: ['all'],
    subresources: ['status', 'scale'],
    scale: WORKLOAD_SCALE,
    strategy: {
      tracksGeneration: true,
      listRules: WORKLOAD_LIST_RULES,
      statusWrite: 'status-and-annotations',
      prepareForCreate: defaultStatefulSet,
      prepareForUpdate: defaultStatefulSet,
      initialStatus: () => ({ replicas: 0, availableReplicas: 0 }),
      validate: validateStatefulSet,
    },
  });
}

function daemonSetDefinition(): ResourceDefinition {
  return builtinKind({
    group: 'apps',
    resource: 'daemonsets',
    kind: 'DaemonSet',
    namespaced: true,
    shortNames: ['ds'],
    categories: ['all'],
    subresources: ['status'],
    strategy: {
      tracksGeneration: true,
      listRules: WORKLOAD_LIST_RULES,
      statusWrite: 'status-and-annotations',
      prepareForCreate: defaultDaemonSet,
      prepareForUpdate: defaultDaemonSet,
      initialStatus: () => ({ currentNumberScheduled: 0, numberMisscheduled: 0, desiredNumberScheduled: 0, numberReady: 0 }),
      validate: validateDaemonSet,
    },
  });
}

const JOB_UID_LABEL = 'batch.kubernetes.io/controller-uid';
const JOB_NAME_LABEL = 'batch.kubernetes.io/job-name';

/** The selector and template labels the job strategy generates unless spec.manualSelector is true. */
function generateJobSelector(obj: KubeObject): void {
  const spec = child(obj, 'spec');
  if (spec.manualSelector === true) return;
  const uid = obj.metadata?.uid ?? '';
  const name = obj.metadata?.name ?? '';
  const template = child(spec, 'template');
  const meta = child(template, 'metadata');
  const labels = isObject(meta.labels) ? meta.labels : {};
  meta.labels = { ...labels, [JOB_UID_LABEL]: uid, [JOB_NAME_LABEL]: name, 'controller-uid': uid, 'job-name': name };
  if (spec.selector === undefined) spec.selector = { matchLabels: { [JOB_UID_LABEL]: uid } };
}

function jobDefinition(): ResourceDefinition {
  return builtinKind({
    group: 'batch',
    resource: 'jobs',
    kind: 'Job',
    namespaced: true,
    categories: ['all'],
    subresources: ['status'],
    strategy: {
      tracksGeneration: true,
      listRules: JOB_LIST_RULES,
      statusWrite: 'status-and-metadata',
      selectableFields: { 'status.successful': (o) => String(isObject(o.status) ? (o.status.succeeded ?? 0) : 0) },
      prepareForCreate(obj) {
        defaultJob(obj);
        generateJobSelector(obj);
      },
      prepareForUpdate: defaultJob,
      initialStatus: () => ({}),
      validate: validateJob,
    },
  });
}

function cronJobDefinition(): ResourceDefinition {
  const defaults = (obj: KubeObject): void => {
    const spec = child(obj, 'spec');
    if (spec.concurrencyPolicy === undefined) spec.concurrencyPolicy = 'Allow';
    if (spec.suspend === undefined) spec.suspend = false;
    if (spec.successfulJobsHistoryLimit === undefined) spec.successfulJobsHistoryLimit = 3;
    if (spec.failedJobsHistoryLimit === undefined) spec.failedJobsHistoryLimit = 1;
    const jobSpec = child(child(spec, 'jobTemplate'), 'spec');
    if (jobSpec.backoffLimit === undefined) jobSpec.backoffLimit = 6;
    defaultPodSpec(child(child(jobSpec, 'template'), 'spec'));
  };
  return builtinKind({
    group: 'batch',
    // batch/v1beta1 (served until 1.25) has the fields of batch/v1 but timeZone (1.25+).
    versions: ['v1', 'v1beta1'],
    resource: 'cronjobs',
    kind: 'CronJob',
    namespaced: true,
    shortNames: ['cj'],
    categories: ['all'],
    subresources: ['status'],
    strategy: {
      tracksGeneration: true,
      listRules: { ...CONDITIONS_LIST_RULES, ...podSpecRules('spec.jobTemplate.spec.template.spec') },
      prepareForCreate: defaults,
      prepareForUpdate: defaults,
      initialStatus: () => ({}),
    },
  });
}

function pdbDefinition(): ResourceDefinition {
  return builtinKind({
    group: 'policy',
    versions: ['v1', 'v1beta1'],
    resource: 'poddisruptionbudgets',
    kind: 'PodDisruptionBudget',
    namespaced: true,
    shortNames: ['pdb'],
    subresources: ['status'],
    versionConversions: { v1beta1: PDB_V1BETA1_CONVERSION },
    strategy: {
      // kube-apiserver validates only a PodDisruptionBudget's spec (pkg/apis/policy/validation
      // ValidatePodDisruptionBudget), so its name passes with the generic path-segment check:
      // 1.33 stores `my-cluster-name-mongos-`, the name percona-server-mongodb-operator v1.22.0
      // gives its mongos budget (checked on the real control plane).
      nameRule: 'path-segment',
      tracksGeneration: true,
      listRules: CONDITIONS_LIST_RULES,
      initialStatus: () => ({ disruptionsAllowed: 0, currentHealthy: 0, desiredHealthy: 0, expectedPods: 0 }),
      validate: validatePdb,
    },
  });
}

const RBAC = 'rbac.authorization.k8s.io';
/** Every version any supported release serves; kube-version.ts narrows them to the emulated release's. */
const BETA_TOO = ['v1', 'v1beta1'];

export function workloadDefinitions(): ResourceDefinition[] {
  return [
    deploymentDefinition(),
    replicaSetDefinition(),
    statefulSetDefinition(),
    daemonSetDefinition(),
    jobDefinition(),
    cronJobDefinition(),
    pdbDefinition(),
    // The v1beta1 versions of these kinds (served until 1.22) have exactly the v1 fields.
    builtinKind({ group: 'coordination.k8s.io', versions: BETA_TOO, resource: 'leases', kind: 'Lease', namespaced: true }),
    builtinKind({ group: RBAC, versions: BETA_TOO, resource: 'roles', kind: 'Role', namespaced: true, strategy: { nameRule: 'path-segment' } }),
    builtinKind({
      group: RBAC,
      versions: BETA_TOO,
      resource: 'rolebindings',
      kind: 'RoleBinding',
      namespaced: true,
      strategy: { nameRule: 'path-segment', validate: validateRoleBinding },
    }),
    builtinKind({ group: RBAC, versions: BETA_TOO, resource: 'clusterroles', kind: 'ClusterRole', namespaced: false, strategy: { nameRule: 'path-segment' } }),
    builtinKind({
      group: RBAC,
      versions: BETA_TOO,
      resource: 'clusterrolebindings',
      kind: 'ClusterRoleBinding',
      namespaced: false,
      strategy: { nameRule: 'path-segment', validate: validateRoleBinding },
    }),
    // Stored and served only: no DefaultStorageClass or PersistentVolumeClaimResize admission (see
    // docs/embedded-cluster.md); the simulated provisioner provisions every class.
    builtinKind({ group: 'storage.k8s.io', versions: BETA_TOO, resource: 'storageclasses', kind: 'StorageClass', namespaced: false, shortNames: ['sc'] }),
  ];
}
