/**
 * List merge rules of the built-in types, as k8s.io/api declares them: `patchStrategy:"merge"` with
 * `patchMergeKey` for strategic merge patch, `+listType`/`+listMapKey` for server-side apply. Only the
 * lists that merge are listed; every other list is replaced (SMP) or atomic (SSA).
 *
 * Rules are keyed by path with list items written as `[]`, so the PodSpec rules can be mounted at
 * `spec` (Pod), `spec.template.spec` (workloads) and `spec.jobTemplate.spec.template.spec`.
 */
import type { ListRule, ListRules } from '../registry.js';

const byKey = (key: string, keys: readonly string[] = [key], defaults?: Record<string, string | number>): ListRule => ({
  patchMerge: { key },
  listType: 'map',
  listMapKeys: keys,
  ...(defaults ? { listMapKeyDefaults: defaults } : {}),
});

const mergedSet: ListRule = { patchMerge: {}, listType: 'set' };

export const OBJECT_META_LIST_RULES: ListRules = {
  'metadata.finalizers': mergedSet,
  'metadata.ownerReferences': byKey('uid'),
};

const CONDITIONS: ListRule = byKey('type');

function mount(prefix: string, rules: ListRules): Record<string, ListRule> {
  const out: Record<string, ListRule> = {};
  for (const [path, rule] of Object.entries(rules)) out[prefix ? `${prefix}.${path}` : path] = rule;
  return out;
}

const CONTAINER_RULES: ListRules = {
  ports: byKey('containerPort', ['containerPort', 'protocol'], { protocol: 'TCP' }),
  env: byKey('name'),
  volumeMounts: byKey('mountPath'),
  volumeDevices: byKey('devicePath'),
};

const POD_SPEC_RULES: ListRules = {
  volumes: byKey('name'),
  containers: byKey('name'),
  initContainers: byKey('name'),
  ephemeralContainers: byKey('name'),
  imagePullSecrets: byKey('name'),
  hostAliases: byKey('ip'),
  topologySpreadConstraints: byKey('topologyKey', ['topologyKey', 'whenUnsatisfiable']),
  resourceClaims: byKey('name'),
  schedulingGates: byKey('name'),
  ...mount('containers[]', CONTAINER_RULES),
  ...mount('initContainers[]', CONTAINER_RULES),
  ...mount('ephemeralContainers[]', CONTAINER_RULES),
};

/** The PodSpec rules mounted at `prefix` (`spec`, `spec.template.spec`). */
export function podSpecRules(prefix: string): ListRules {
  return mount(prefix, POD_SPEC_RULES);
}

export const POD_LIST_RULES: ListRules = {
  ...OBJECT_META_LIST_RULES,
  ...podSpecRules('spec'),
  'status.conditions': CONDITIONS,
  'status.podIPs': byKey('ip'),
  'status.hostIPs': byKey('ip'),
};

/** Workloads with a pod template and status conditions (Deployment, ReplicaSet, StatefulSet, DaemonSet). */
export const WORKLOAD_LIST_RULES: ListRules = {
  ...OBJECT_META_LIST_RULES,
  ...podSpecRules('spec.template.spec'),
  ...mount('spec.template', OBJECT_META_LIST_RULES),
  'status.conditions': CONDITIONS,
};

export const JOB_LIST_RULES: ListRules = {
  ...OBJECT_META_LIST_RULES,
  ...podSpecRules('spec.template.spec'),
  ...mount('spec.template', OBJECT_META_LIST_RULES),
  // Job conditions merge by type for SMP but are atomic for SSA (+listType=atomic).
  'status.conditions': { patchMerge: { key: 'type' }, listType: 'atomic' },
};

export const SERVICE_LIST_RULES: ListRules = {
  ...OBJECT_META_LIST_RULES,
  'spec.ports': byKey('port', ['port', 'protocol'], { protocol: 'TCP' }),
  'status.conditions': CONDITIONS,
};

export const NODE_LIST_RULES: ListRules = {
  ...OBJECT_META_LIST_RULES,
  'spec.podCIDRs': mergedSet,
  'status.conditions': CONDITIONS,
  'status.addresses': byKey('type'),
};

/** Kinds whose only merging lists are metadata's and `status.conditions` (PVC, Namespace, PDB, CRD). */
export const CONDITIONS_LIST_RULES: ListRules = {
  ...OBJECT_META_LIST_RULES,
  'status.conditions': CONDITIONS,
};
