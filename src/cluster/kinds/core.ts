/**
 * Built-in core/v1 kinds beyond the walking skeleton's: pods, services, endpoints, service accounts,
 * persistent volume claims and volumes, events and nodes, each with the strategy rules of its registry
 * in pkg/registry/core/* (status subresource, defaults, what a status write may change, deletion).
 */
import { isObject, type KubeObject } from '../../model/object-key.js';
import { builtinKind, specField, statusField } from './define.js';
import { child, defaultClaimSpec, defaultPersistentVolume, defaultPod, podQosClass } from './defaults.js';
import { CONDITIONS_LIST_RULES, NODE_LIST_RULES, POD_LIST_RULES, SERVICE_LIST_RULES } from './list-rules.js';
import type { ResourceDefinition } from '../registry.js';
import { DEFAULT_NETWORK, type ClusterNetwork } from '../network.js';
import { validatePod, validatePodUpdate, validateService, validateClaim, validateEvent } from './validation.js';

type Obj = Record<string, unknown>;

/**
 * The DefaultStorageClass admission plugin: a claim created without spec.storageClassName (nil, not
 * "") and without the beta storage-class annotation gets the default StorageClass (annotated
 * storageclass.kubernetes.io/is-default-class "true"; of several, the newest, then by name).
 */
export function defaultStorageClass(claim: KubeObject, classes: readonly KubeObject[]): void {
  const spec = child(claim as Obj, 'spec');
  if (
    (spec.storageClassName !== undefined && spec.storageClassName !== null) ||
    claim.metadata?.annotations?.['volume.beta.kubernetes.io/storage-class'] !== undefined
  )
    return;
  const isDefault = (c: KubeObject) =>
    c.metadata?.annotations?.['storageclass.kubernetes.io/is-default-class'] === 'true' ||
    c.metadata?.annotations?.['storageclass.beta.kubernetes.io/is-default-class'] === 'true';
  const defaults = classes
    .filter(isDefault)
    .sort(
      (a, b) =>
        String(b.metadata?.creationTimestamp ?? '').localeCompare(String(a.metadata?.creationTimestamp ?? '')) ||
        String(a.metadata?.name).localeCompare(String(b.metadata?.name)),
    );
  if (defaults.length > 0) spec.storageClassName = defaults[0]!.metadata!.name;
}

/**
 * The StorageObjectInUseProtection admission plugin (on by default): a created claim or volume gets
 * its protection finalizer, which the pvc-protection / pv-protection controllers remove once nothing
 * uses it (src/cluster/sim/volume-controller.ts; without the simulation the object stays terminating,
 * as on a control plane without kube-controller-manager).
 */
function storageObjectInUseProtection(obj: Obj, finalizer: string): void {
  const metadata = child(obj, 'metadata');
  const finalizers = Array.isArray(metadata.finalizers) ? (metadata.finalizers as unknown[]) : [];
  if (!finalizers.includes(finalizer)) metadata.finalizers = [...finalizers, finalizer];
}

function podDefinition(): ResourceDefinition {
  return builtinKind({
    resource: 'pods',
    kind: 'Pod',
    namespaced: true,
    shortNames: ['po'],
    categories: ['all'],
    subresources: ['status', 'binding', 'eviction', 'exec', 'attach', 'log', 'portforward'],
    strategy: {
      // Kubernetes 1.32 (the version presented): pods have no metadata.generation (added in 1.33).
      tracksGeneration: false,
      listRules: POD_LIST_RULES,
      returnDeletedObject: true,
      statusWrite: 'status-and-metadata',
      selectableFields: {
        'spec.nodeName': (o) => (isObject(o.spec) && typeof o.spec.nodeName === 'string' ? o.spec.nodeName : ''),
        'spec.restartPolicy': specField('restartPolicy'),
        'spec.schedulerName': specField('schedulerName'),
        'spec.serviceAccountName': specField('serviceAccountName'),
        'spec.hostNetwork': (o) => (isObject(o.spec) && o.spec.hostNetwork === true ? 'true' : 'false'),
        'status.phase': statusField('phase'),
        'status.podIP': statusField('podIP'),
        'status.nominatedNodeName': statusField('nominatedNodeName'),
      },
      prepareForCreate(obj) {
        defaultPod(obj);
      },
      initialStatus: (obj) => ({ phase: 'Pending', qosClass: podQosClass(child(obj, 'spec')) }),
      prepareForUpdate(obj) {
        defaultPod(obj);
      },
      validate: (obj, old) => (old ? validatePodUpdate(obj, old) : validatePod(obj)),
      gracefulDeletion: podGracePeriod,
    },
  });
}

/**
 * Pod graceful deletion (pkg/registry/core/pod/strategy.go CheckGracefulTerminationWithOptions): the
 * requested grace period or spec.terminationGracePeriodSeconds, but 0 (immediate) for pods that are
 * not scheduled or already terminal.
 */
function podGracePeriod(obj: KubeObject, requested: number | undefined): number {
  const spec = isObject(obj.spec) ? obj.spec : {};
  const status = isObject(obj.status) ? obj.status : {};
  if (!spec.nodeName || status.phase === 'Succeeded' || status.phase === 'Failed') return 0;
  if (requested !== undefined) return Math.max(requested, 0);
  const configured = spec.terminationGracePeriodSeconds;
  return typeof configured === 'number' && configured >= 0 ? configured : 30;
}

/** Sequential allocators for cluster IPs (the network's service range) and node ports (30000-32767), per cluster. */
class ServiceAllocator {
  private nextIp = 0;
  private nextPort = 30000;
  private readonly usedPorts = new Set<number>();

  constructor(private readonly network: ClusterNetwork) {}

  clusterIp(): string {
    return this.network.serviceIp(this.nextIp++);
  }

  nodePort(): number {
    while (this.usedPorts.has(this.nextPort)) this.nextPort = this.nextPort >= 32767 ? 30000 : this.nextPort + 1;
    this.usedPorts.add(this.nextPort);
    return this.nextPort;
  }

  reserve(port: number): void {
    this.usedPorts.add(port);
  }
}

function portsOf(spec: Obj): Obj[] {
  return Array.isArray(spec.ports) ? spec.ports.filter(isObject) : [];
}

function defaultService(obj: KubeObject, allocator: ServiceAllocator, old: KubeObject | undefined): void {
  const spec = child(obj, 'spec');
  const oldSpec = old && isObject(old.spec) ? old.spec : undefined;
  if (spec.type === undefined) spec.type = 'ClusterIP';
  if (spec.sessionAffinity === undefined) spec.sessionAffinity = 'None';
  for (const port of portsOf(spec)) {
    if (port.protocol === undefined) port.protocol = 'TCP';
    if (port.targetPort === undefined && port.port !== undefined) port.targetPort = port.port;
  }
  if (spec.type === 'ExternalName') return;
  // An update that omits allocated values keeps them (service REST patchAllocatedValues).
  if (oldSpec && (spec.clusterIP === undefined || spec.clusterIP === '') && typeof oldSpec.clusterIP === 'string') {
    spec.clusterIP = oldSpec.clusterIP;
    if (spec.clusterIPs === undefined && Array.isArray(oldSpec.clusterIPs)) spec.clusterIPs = oldSpec.clusterIPs;
  }
  if (spec.clusterIP === undefined || spec.clusterIP === '') spec.clusterIP = allocator.clusterIp();
  if (spec.clusterIPs === undefined) spec.clusterIPs = [spec.clusterIP];
  if (spec.clusterIP !== 'None') {
    if (spec.ipFamilies === undefined) spec.ipFamilies = ['IPv4'];
    if (spec.ipFamilyPolicy === undefined) spec.ipFamilyPolicy = 'SingleStack';
  } else {
    if (spec.ipFamilies === undefined) spec.ipFamilies = ['IPv4'];
    if (spec.ipFamilyPolicy === undefined) spec.ipFamilyPolicy = 'SingleStack';
  }
  if (spec.internalTrafficPolicy === undefined) spec.internalTrafficPolicy = 'Cluster';
  if (spec.type === 'NodePort' || spec.type === 'LoadBalancer') {
    if (spec.externalTrafficPolicy === undefined) spec.externalTrafficPolicy = 'Cluster';
    if (spec.type === 'LoadBalancer' && spec.allocateLoadBalancerNodePorts === undefined) spec.allocateLoadBalancerNodePorts = true;
    const oldPorts = oldSpec ? portsOf(oldSpec) : [];
    for (const port of portsOf(spec)) {
      if (typeof port.nodePort === 'number' && port.nodePort !== 0) {
        allocator.reserve(port.nodePort);
        continue;
      }
      const previous = oldPorts.find((p) => p.port === port.port && (p.protocol ?? 'TCP') === port.protocol);
      port.nodePort = typeof previous?.nodePort === 'number' ? previous.nodePort : allocator.nodePort();
    }
  }
}

function serviceDefinition(network: ClusterNetwork): ResourceDefinition {
  const allocator = new ServiceAllocator(network);
  return builtinKind({
    resource: 'services',
    kind: 'Service',
    namespaced: true,
    shortNames: ['svc'],
    categories: ['all'],
    subresources: ['status'],
    strategy: {
      listRules: SERVICE_LIST_RULES,
      returnDeletedObject: true,
      nameRule: 'dns1035-label',
      selectableFields: { 'spec.clusterIP': specField('clusterIP'), 'spec.type': specField('type') },
      prepareForCreate: (obj) => defaultService(obj, allocator, undefined),
      initialStatus: () => ({ loadBalancer: {} }),
      prepareForUpdate: (obj, old) => defaultService(obj, allocator, old),
      validate: validateService,
    },
  });
}

function claimDefinition(): ResourceDefinition {
  return builtinKind({
    resource: 'persistentvolumeclaims',
    kind: 'PersistentVolumeClaim',
    namespaced: true,
    shortNames: ['pvc'],
    subresources: ['status'],
    strategy: {
      listRules: CONDITIONS_LIST_RULES,
      returnDeletedObject: true,
      prepareForCreate: (obj) => {
        defaultClaimSpec(child(obj, 'spec'));
        storageObjectInUseProtection(obj, 'kubernetes.io/pvc-protection');
      },
      prepareForUpdate: (obj) => defaultClaimSpec(child(obj, 'spec')),
      initialStatus: () => ({ phase: 'Pending' }),
      validate: validateClaim,
    },
  });
}

function volumeDefinition(): ResourceDefinition {
  return builtinKind({
    resource: 'persistentvolumes',
    kind: 'PersistentVolume',
    namespaced: false,
    shortNames: ['pv'],
    subresources: ['status'],
    strategy: {
      returnDeletedObject: true,
      prepareForCreate: (obj) => {
        defaultPersistentVolume(obj);
        storageObjectInUseProtection(obj, 'kubernetes.io/pv-protection');
      },
      prepareForUpdate: defaultPersistentVolume,
      initialStatus: () => ({ phase: 'Pending' }),
    },
  });
}

function nodeDefinition(): ResourceDefinition {
  return builtinKind({
    resource: 'nodes',
    kind: 'Node',
    namespaced: false,
    shortNames: ['no'],
    subresources: ['status'],
    strategy: {
      listRules: NODE_LIST_RULES,
      keepsStatusOnCreate: true,
      selectableFields: { 'spec.unschedulable': (o) => (isObject(o.spec) && o.spec.unschedulable === true ? 'true' : 'false') },
    },
  });
}

const INVOLVED_OBJECT_FIELDS = ['kind', 'namespace', 'name', 'uid', 'apiVersion', 'resourceVersion', 'fieldPath'] as const;

function coreEventDefinition(): ResourceDefinition {
  const involved = (f: string) => (o: KubeObject) => (isObject(o.involvedObject) && o.involvedObject[f] !== undefined ? String(o.involvedObject[f]) : '');
  const top = (f: string) => (o: KubeObject) => (typeof o[f] === 'string' ? (o[f] as string) : '');
  return builtinKind({
    resource: 'events',
    kind: 'Event',
    namespaced: true,
    shortNames: ['ev'],
    strategy: {
      nameRule: 'dns1123-subdomain',
      selectableFields: {
        ...Object.fromEntries(INVOLVED_OBJECT_FIELDS.map((f) => [`involvedObject.${f}`, involved(f)])),
        reason: top('reason'),
        reportingComponent: top('reportingComponent'),
        source: (o) => (isObject(o.source) && typeof o.source.component === 'string' ? o.source.component : ''),
        type: top('type'),
      },
      validate: validateEvent,
    },
  });
}

/**
 * events.k8s.io/v1 Events are the same objects as core/v1 Events (one storage), renamed fields
 * (pkg/apis/events/v1/conversion.go).
 */
const EVENT_RENAMES: ReadonlyArray<readonly [core: string, events: string]> = [
  ['involvedObject', 'regarding'],
  ['message', 'note'],
  ['source', 'deprecatedSource'],
  ['firstTimestamp', 'deprecatedFirstTimestamp'],
  ['lastTimestamp', 'deprecatedLastTimestamp'],
  ['count', 'deprecatedCount'],
  ['reportingComponent', 'reportingController'],
];

function renameFields(obj: KubeObject, direction: 'toCore' | 'toEvents'): KubeObject {
  const out: KubeObject = { ...obj };
  for (const [core, events] of EVENT_RENAMES) {
    const [from, to] = direction === 'toCore' ? [events, core] : [core, events];
    if (from in out) {
      const value = out[from];
      delete out[from];
      if (value !== undefined && value !== null && value !== '' && value !== 0) out[to] = value;
    }
  }
  return out;
}

function eventsGroupDefinition(): ResourceDefinition {
  return builtinKind({
    group: 'events.k8s.io',
    // v1beta1 (1.8-1.24) has the v1 field names; v1 came in 1.19.
    versions: ['v1', 'v1beta1'],
    resource: 'events',
    kind: 'Event',
    namespaced: true,
    shortNames: ['ev'],
    storageResource: 'events',
    conversion: { toStorage: (o) => renameFields(o, 'toCore'), fromStorage: (o) => renameFields(o, 'toEvents') },
    strategy: {
      selectableFields: {
        ...Object.fromEntries(
          INVOLVED_OBJECT_FIELDS.map((f) => [
            `regarding.${f}`,
            (o: KubeObject) => (isObject(o.regarding) && o.regarding[f] !== undefined ? String(o.regarding[f]) : ''),
          ]),
        ),
        reason: (o) => (typeof o.reason === 'string' ? o.reason : ''),
        reportingController: (o) => (typeof o.reportingController === 'string' ? o.reportingController : ''),
        type: (o) => (typeof o.type === 'string' ? o.type : ''),
      },
    },
  });
}

/** `network`: where Service cluster IPs come from (src/cluster/network.ts). */
export function coreDefinitions(network: ClusterNetwork = DEFAULT_NETWORK): ResourceDefinition[] {
  return [
    podDefinition(),
    serviceDefinition(network),
    builtinKind({ resource: 'endpoints', kind: 'Endpoints', namespaced: true, shortNames: ['ep'] }),
    builtinKind({ resource: 'serviceaccounts', kind: 'ServiceAccount', namespaced: true, shortNames: ['sa'], strategy: { returnDeletedObject: true } }),
    claimDefinition(),
    volumeDefinition(),
    nodeDefinition(),
    coreEventDefinition(),
    eventsGroupDefinition(),
  ];
}
