/**
 * Defaulting that clients read back, after k8s.io/kubernetes/pkg/apis/{core,apps,batch}/v1/defaults.go
 * (and, for Pods, the default admission plugins ServiceAccount, DefaultTolerationSeconds and
 * Priority). Only fields a client can observe are defaulted; defaults that need other objects (the
 * service account token volume) are documented in docs/embedded-cluster.md as differences.
 */
import { isObject } from '../../model/object-key.js';

type Obj = Record<string, unknown>;

function setDefault(obj: Obj, field: string, value: unknown): void {
  if (obj[field] === undefined || obj[field] === null) obj[field] = value;
}

/** The object at `obj[field]`, created when absent. */
export function child(obj: Obj, field: string): Obj {
  const value = obj[field];
  if (isObject(value)) return value;
  const created: Obj = {};
  obj[field] = created;
  return created;
}

function objects(value: unknown): Obj[] {
  return Array.isArray(value) ? value.filter(isObject) : [];
}

function defaultProbe(probe: unknown): void {
  if (!isObject(probe)) return;
  setDefault(probe, 'timeoutSeconds', 1);
  setDefault(probe, 'periodSeconds', 10);
  setDefault(probe, 'successThreshold', 1);
  setDefault(probe, 'failureThreshold', 3);
  if (isObject(probe.httpGet)) setDefault(probe.httpGet, 'scheme', 'HTTP');
  if (isObject(probe.grpc)) setDefault(probe.grpc, 'service', '');
}

/** `latest` or no tag means Always, anything else IfNotPresent (SetDefaults_Container). */
function pullPolicyFor(image: unknown): string {
  if (typeof image !== 'string') return 'IfNotPresent';
  if (image.includes('@')) return 'IfNotPresent';
  const lastSlash = image.lastIndexOf('/');
  const tagAt = image.indexOf(':', lastSlash + 1);
  const tag = tagAt >= 0 ? image.slice(tagAt + 1) : '';
  return tag === '' || tag === 'latest' ? 'Always' : 'IfNotPresent';
}

function defaultContainer(c: Obj): void {
  setDefault(c, 'imagePullPolicy', pullPolicyFor(c.image));
  setDefault(c, 'terminationMessagePath', '/dev/termination-log');
  setDefault(c, 'terminationMessagePolicy', 'File');
  setDefault(c, 'resources', {});
  for (const port of objects(c.ports)) setDefault(port, 'protocol', 'TCP');
  for (const env of objects(c.env)) {
    if (isObject(env.valueFrom) && isObject(env.valueFrom.fieldRef)) setDefault(env.valueFrom.fieldRef, 'apiVersion', 'v1');
  }
  defaultProbe(c.livenessProbe);
  defaultProbe(c.readinessProbe);
  defaultProbe(c.startupProbe);
  // Limits without requests: requests default to the limits (SetDefaults_Pod).
  const resources = c.resources;
  if (isObject(resources) && isObject(resources.limits)) {
    const requests = isObject(resources.requests) ? resources.requests : {};
    let added = false;
    for (const [k, v] of Object.entries(resources.limits)) {
      if (requests[k] === undefined) {
        requests[k] = v;
        added = true;
      }
    }
    if (added || isObject(resources.requests)) resources.requests = requests;
  }
}

function defaultVolume(v: Obj): void {
  for (const source of ['configMap', 'secret', 'projected', 'downwardAPI'] as const) {
    if (isObject(v[source])) setDefault(v[source], 'defaultMode', 420);
  }
  if (isObject(v.hostPath)) setDefault(v.hostPath, 'type', '');
}

/** SetDefaults_PodSpec and the container defaults; for pods and pod templates alike. */
export function defaultPodSpec(spec: Obj): void {
  setDefault(spec, 'restartPolicy', 'Always');
  setDefault(spec, 'dnsPolicy', 'ClusterFirst');
  setDefault(spec, 'terminationGracePeriodSeconds', 30);
  setDefault(spec, 'securityContext', {});
  setDefault(spec, 'schedulerName', 'default-scheduler');
  for (const c of [...objects(spec.containers), ...objects(spec.initContainers)]) defaultContainer(c);
  for (const v of objects(spec.volumes)) defaultVolume(v);
}

const DEFAULT_TOLERATIONS = [
  { key: 'node.kubernetes.io/not-ready', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 300 },
  { key: 'node.kubernetes.io/unreachable', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 300 },
];

/** Pod-only defaults (defaulting plus the admission plugins a default kube-apiserver runs). */
export function defaultPod(pod: Obj): void {
  const spec = child(pod, 'spec');
  defaultPodSpec(spec);
  setDefault(spec, 'enableServiceLinks', true);
  setDefault(spec, 'serviceAccountName', typeof spec.serviceAccount === 'string' && spec.serviceAccount ? spec.serviceAccount : 'default');
  spec.serviceAccount = spec.serviceAccountName;
  setDefault(spec, 'priority', 0);
  setDefault(spec, 'preemptionPolicy', 'PreemptLowerPriority');
  const tolerations = objects(spec.tolerations);
  for (const t of DEFAULT_TOLERATIONS) {
    const covered = tolerations.some((x) => x.key === t.key && (x.effect === undefined || x.effect === '' || x.effect === t.effect));
    if (!covered) tolerations.push({ ...t });
  }
  spec.tolerations = tolerations;
}

/** QoS class of a pod (pkg/apis/core/helper/qos): Guaranteed, Burstable or BestEffort. */
export function podQosClass(spec: Obj): string {
  const containers = [...objects(spec.containers), ...objects(spec.initContainers)];
  let any = false;
  let guaranteed = containers.length > 0;
  for (const c of containers) {
    const resources = isObject(c.resources) ? c.resources : {};
    const requests = isObject(resources.requests) ? resources.requests : {};
    const limits = isObject(resources.limits) ? resources.limits : {};
    const relevant = (m: Obj): string[] => Object.keys(m).filter((k) => k === 'cpu' || k === 'memory');
    if (relevant(requests).length > 0 || relevant(limits).length > 0) any = true;
    for (const r of ['cpu', 'memory']) {
      if (limits[r] === undefined || (requests[r] !== undefined && String(requests[r]) !== String(limits[r]))) guaranteed = false;
    }
  }
  if (!any) return 'BestEffort';
  return guaranteed ? 'Guaranteed' : 'Burstable';
}

function defaultTemplate(spec: Obj): void {
  const template = child(spec, 'template');
  defaultPodSpec(child(template, 'spec'));
}

/** SetDefaults_Deployment (apps/v1). */
export function defaultDeployment(obj: Obj): void {
  const spec = child(obj, 'spec');
  setDefault(spec, 'replicas', 1);
  const strategy = child(spec, 'strategy');
  setDefault(strategy, 'type', 'RollingUpdate');
  if (strategy.type === 'RollingUpdate') {
    const rolling = child(strategy, 'rollingUpdate');
    setDefault(rolling, 'maxUnavailable', '25%');
    setDefault(rolling, 'maxSurge', '25%');
  }
  setDefault(spec, 'revisionHistoryLimit', 10);
  setDefault(spec, 'progressDeadlineSeconds', 600);
  defaultTemplate(spec);
}

export function defaultReplicaSet(obj: Obj): void {
  const spec = child(obj, 'spec');
  setDefault(spec, 'replicas', 1);
  defaultTemplate(spec);
}

export function defaultStatefulSet(obj: Obj): void {
  const spec = child(obj, 'spec');
  setDefault(spec, 'replicas', 1);
  setDefault(spec, 'podManagementPolicy', 'OrderedReady');
  const strategy = child(spec, 'updateStrategy');
  setDefault(strategy, 'type', 'RollingUpdate');
  if (strategy.type === 'RollingUpdate') setDefault(child(strategy, 'rollingUpdate'), 'partition', 0);
  setDefault(spec, 'revisionHistoryLimit', 10);
  const retention = child(spec, 'persistentVolumeClaimRetentionPolicy');
  setDefault(retention, 'whenDeleted', 'Retain');
  setDefault(retention, 'whenScaled', 'Retain');
  for (const claim of objects(spec.volumeClaimTemplates)) {
    setDefault(claim, 'apiVersion', 'v1');
    setDefault(claim, 'kind', 'PersistentVolumeClaim');
    defaultClaimSpec(child(claim, 'spec'));
    setDefault(claim, 'status', { phase: 'Pending' });
  }
  defaultTemplate(spec);
}

export function defaultDaemonSet(obj: Obj): void {
  const spec = child(obj, 'spec');
  const strategy = child(spec, 'updateStrategy');
  setDefault(strategy, 'type', 'RollingUpdate');
  if (strategy.type === 'RollingUpdate') {
    const rolling = child(strategy, 'rollingUpdate');
    setDefault(rolling, 'maxUnavailable', 1);
    setDefault(rolling, 'maxSurge', 0);
  }
  setDefault(spec, 'revisionHistoryLimit', 10);
  defaultTemplate(spec);
}

/** SetDefaults_Job (batch/v1): completions/parallelism 1 when both unset, backoffLimit 6. */
export function defaultJob(obj: Obj): void {
  const spec = child(obj, 'spec');
  if (spec.completions === undefined && spec.parallelism === undefined) {
    spec.completions = 1;
    spec.parallelism = 1;
  }
  setDefault(spec, 'parallelism', 1);
  setDefault(spec, 'backoffLimit', 6);
  setDefault(spec, 'completionMode', 'NonIndexed');
  setDefault(spec, 'suspend', false);
  setDefault(spec, 'podReplacementPolicy', 'TerminatingOrFailed');
  defaultTemplate(spec);
}

export function defaultClaimSpec(spec: Obj): void {
  setDefault(spec, 'volumeMode', 'Filesystem');
}

export function defaultPersistentVolume(obj: Obj): void {
  const spec = child(obj, 'spec');
  setDefault(spec, 'persistentVolumeReclaimPolicy', 'Retain');
  setDefault(spec, 'volumeMode', 'Filesystem');
}
