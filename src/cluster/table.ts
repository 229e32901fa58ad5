/**
 * The Table format (`Accept: application/json;as=Table;v=v1;g=meta.k8s.io`) that `kubectl get` asks
 * for: kube-apiserver's columns for built-in kinds (pkg/printers/internalversion/printers.go, v1.32),
 * a CRD version's `additionalPrinterColumns` (apiextensions-apiserver's tableconvertor, default `Age`),
 * and the generic registry's default (`Name`, `Created At`) for any other kind. Without it kubectl
 * prints only NAME and AGE.
 *
 * The server always fills every column, priority 1 (`-o wide`) ones included; kubectl hides those
 * without `-o wide`.
 */
import { controllerRef, isObject, type KubeObject } from '../model/object-key.js';
import type { PrinterColumn, ResourceDefinition } from './registry.js';

type Obj = Record<string, unknown>;
type Cell = string | number | boolean | null;

export interface TableColumn {
  name: string;
  type: string;
  format: string;
  description: string;
  priority: number;
}

/** What the client asked for: the Table's version and what each row carries as `object`. */
export interface TableRequest {
  version: 'v1' | 'v1beta1';
  includeObject: 'None' | 'Metadata' | 'Object';
}

/**
 * The Table version the Accept header asks for, or undefined when the client wants the object itself.
 * Media ranges are taken in order (kubectl lists Table v1, Table v1beta1, then plain JSON), as the
 * server's content negotiation picks the first it can serve.
 */
export function tableRequestOf(accept: string | undefined, includeObject: string | null): TableRequest | undefined {
  if (!accept) return undefined;
  for (const range of accept.split(',')) {
    const [type, ...params] = range.split(';').map((s) => s.trim());
    if (type !== 'application/json' && type !== '*/*' && type !== 'application/*') continue;
    const p = new Map(params.map((kv) => kv.split('=').map((s) => s.trim()) as [string, string]));
    if (p.get('as') === undefined) return undefined;
    if (p.get('as') === 'Table' && p.get('g') === 'meta.k8s.io' && (p.get('v') === 'v1' || p.get('v') === 'v1beta1')) {
      const include = includeObject === 'None' || includeObject === 'Object' ? includeObject : 'Metadata';
      return { version: p.get('v') as 'v1' | 'v1beta1', includeObject: include };
    }
  }
  return undefined;
}

// --- formatting helpers, as k8s.io/apimachinery and the printers write them -------------------

/** duration.HumanDuration. */
export function humanDuration(ms: number): string {
  const seconds = Math.floor(ms / 1000);
  if (seconds < -1) return '<invalid>';
  if (seconds < 0) return '0s';
  if (seconds < 120) return `${seconds}s`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 10) return seconds % 60 === 0 ? `${minutes}m` : `${minutes}m${seconds % 60}s`;
  if (minutes < 180) return `${minutes}m`;
  const hours = Math.floor(minutes / 60);
  if (hours < 8) return minutes % 60 === 0 ? `${hours}h` : `${hours}h${minutes % 60}m`;
  if (hours < 48) return `${hours}h`;
  if (hours < 24 * 8) return hours % 24 === 0 ? `${Math.floor(hours / 24)}d` : `${Math.floor(hours / 24)}d${hours % 24}h`;
  if (hours < 24 * 365 * 2) return `${Math.floor(hours / 24)}d`;
  if (hours < 24 * 365 * 8) {
    const days = Math.floor(hours / 24) % 365;
    return days === 0 ? `${Math.floor(hours / 24 / 365)}y` : `${Math.floor(hours / 24 / 365)}y${days}d`;
  }
  return `${Math.floor(hours / 24 / 365)}y`;
}

/** translateTimestampSince: `<unknown>` for an unset time. */
function since(timestamp: unknown, now: number): string {
  if (typeof timestamp !== 'string' || timestamp === '') return '<unknown>';
  const t = Date.parse(timestamp);
  return Number.isNaN(t) ? '<unknown>' : humanDuration(now - t);
}

const obj = (v: unknown): Obj => (isObject(v) ? v : {});
const arr = (v: unknown): Obj[] => (Array.isArray(v) ? v.filter(isObject) : []);
const str = (v: unknown): string => (typeof v === 'string' ? v : '');
const num = (v: unknown): number => (typeof v === 'number' ? v : 0);

/** labels.FormatLabels: sorted `k=v` pairs, `<none>` when empty. */
function formatLabels(labels: unknown): string {
  const entries = Object.entries(obj(labels)).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return entries.length === 0 ? '<none>' : entries.map(([k, v]) => `${k}=${String(v)}`).join(',');
}

/** metav1.FormatLabelSelector: the selector's string form, requirements sorted by key. */
function formatLabelSelector(selector: unknown): string {
  const s = obj(selector);
  const requirements: Array<[string, string]> = Object.entries(obj(s.matchLabels)).map(([k, v]) => [k, `${k}=${String(v)}`]);
  for (const e of arr(s.matchExpressions)) {
    const key = str(e.key);
    const values = (Array.isArray(e.values) ? e.values.map(String) : []).sort();
    switch (e.operator) {
      case 'In':
        requirements.push([key, `${key} in (${values.join(',')})`]);
        break;
      case 'NotIn':
        requirements.push([key, `${key} notin (${values.join(',')})`]);
        break;
      case 'Exists':
        requirements.push([key, key]);
        break;
      case 'DoesNotExist':
        requirements.push([key, `!${key}`]);
        break;
    }
  }
  requirements.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return requirements.length === 0 ? '<none>' : requirements.map(([, r]) => r).join(',');
}

/** layoutContainerCells: container names and images, comma-joined. */
function containerCells(podSpec: unknown): [string, string] {
  const containers = arr(obj(podSpec).containers);
  return [containers.map((c) => str(c.name)).join(','), containers.map((c) => str(c.image)).join(',')];
}

function templateSpec(o: KubeObject): Obj {
  return obj(obj(obj(o.spec).template).spec);
}

/** GetAccessModesAsString: RWO, ROX, RWX, RWOP in this order. */
function accessModes(modes: unknown): string {
  const list = Array.isArray(modes) ? modes : [];
  const short: Array<[string, string]> = [
    ['ReadWriteOnce', 'RWO'],
    ['ReadOnlyMany', 'ROX'],
    ['ReadWriteMany', 'RWX'],
    ['ReadWriteOncePod', 'RWOP'],
  ];
  return short
    .filter(([mode]) => list.includes(mode))
    .map(([, s]) => s)
    .join(',');
}

// --- column definitions ---------------------------------------------------------------------

const NAME_DOC =
  'Name must be unique within a namespace. Is required when creating resources, although some resources may allow a client to request the generation of an appropriate name automatically. Name is primarily intended for creation idempotence and configuration definition. Cannot be updated. More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/names#names';
const AGE_DOC =
  'CreationTimestamp is a timestamp representing the server time when this object was created. It is not guaranteed to be set in happens-before order across separate operations. Clients may not set this value. It is represented in RFC3339 form and is in UTC.\n\nPopulated by the system. Read-only. Null for lists. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata';

/** `name:type` or `name:type:1` (priority 1, shown by -o wide). */
function columns(...specs: string[]): TableColumn[] {
  return specs.map((spec) => {
    const [name, type, priority] = spec.split(':') as [string, string, string | undefined];
    const description = name === 'Name' ? NAME_DOC : name === 'Age' ? AGE_DOC : name;
    return { name, type, format: name === 'Name' ? 'name' : '', description, priority: priority === '1' ? 1 : 0 };
  });
}

interface Printer {
  columns: TableColumn[];
  cells(o: KubeObject, now: number): Cell[];
  conditions?(o: KubeObject): Obj[] | undefined;
}

const name = (o: KubeObject): string => o.metadata?.name ?? '';
const age = (o: KubeObject, now: number): string => since(o.metadata?.creationTimestamp, now);

/** printPod: READY, STATUS (the reason kubectl users know: ContainerCreating, Completed, Terminating...), RESTARTS. */
function podCells(pod: KubeObject, now: number): Cell[] {
  const spec = obj(pod.spec);
  const status = obj(pod.status);
  const initContainers = arr(spec.initContainers);
  const restartable = new Set(initContainers.filter((c) => c.restartPolicy === 'Always').map((c) => str(c.name)));
  const total = arr(spec.containers).length + restartable.size;
  let ready = 0;
  let restarts = 0;
  let restartableRestarts = 0;
  let lastRestart = 0;
  let lastRestartableRestart = 0;
  const phase = str(status.phase);
  let reason = str(status.reason) || phase;
  for (const c of arr(status.conditions)) if (c.type === 'PodScheduled' && c.reason === 'SchedulingGated') reason = 'SchedulingGated';
  const terminatedAt = (c: Obj): number => {
    const t = obj(obj(c.lastState).terminated).finishedAt;
    return typeof t === 'string' ? Date.parse(t) || 0 : 0;
  };
  let initializing = false;
  const initStatuses = arr(status.initContainerStatuses);
  for (let i = 0; i < initStatuses.length; i++) {
    const c = initStatuses[i]!;
    const state = obj(c.state);
    restarts += num(c.restartCount);
    lastRestart = Math.max(lastRestart, terminatedAt(c));
    const isRestartable = restartable.has(str(c.name));
    if (isRestartable) {
      restartableRestarts += num(c.restartCount);
      lastRestartableRestart = Math.max(lastRestartableRestart, terminatedAt(c));
    }
    const terminated = isObject(state.terminated) ? state.terminated : undefined;
    const waiting = isObject(state.waiting) ? state.waiting : undefined;
    if (terminated && num(terminated.exitCode) === 0) continue;
    if (isRestartable && c.started === true) {
      if (c.ready === true) ready++;
      continue;
    }
    if (terminated) {
      if (str(terminated.reason) === '')
        reason = num(terminated.signal) !== 0 ? `Init:Signal:${num(terminated.signal)}` : `Init:ExitCode:${num(terminated.exitCode)}`;
      else reason = `Init:${str(terminated.reason)}`;
    } else if (waiting && str(waiting.reason) !== '' && waiting.reason !== 'PodInitializing') {
      reason = `Init:${str(waiting.reason)}`;
    } else {
      reason = `Init:${i}/${initContainers.length}`;
    }
    initializing = true;
    break;
  }
  const initialized = arr(status.conditions).some((c) => c.type === 'Initialized' && c.status === 'True');
  if (!initializing || initialized) {
    restarts = restartableRestarts;
    lastRestart = lastRestartableRestart;
    let hasRunning = false;
    const statuses = arr(status.containerStatuses);
    for (let i = statuses.length - 1; i >= 0; i--) {
      const c = statuses[i]!;
      const state = obj(c.state);
      restarts += num(c.restartCount);
      lastRestart = Math.max(lastRestart, terminatedAt(c));
      const waiting = isObject(state.waiting) ? state.waiting : undefined;
      const terminated = isObject(state.terminated) ? state.terminated : undefined;
      if (waiting && str(waiting.reason) !== '') reason = str(waiting.reason);
      else if (terminated && str(terminated.reason) !== '') reason = str(terminated.reason);
      else if (terminated) reason = num(terminated.signal) !== 0 ? `Signal:${num(terminated.signal)}` : `ExitCode:${num(terminated.exitCode)}`;
      else if (c.ready === true && isObject(state.running)) {
        hasRunning = true;
        ready++;
      }
    }
    if (reason === 'Completed' && hasRunning) {
      reason = arr(status.conditions).some((c) => c.type === 'Ready' && c.status === 'True') ? 'Running' : 'NotReady';
    }
  }
  if (pod.metadata?.deletionTimestamp && status.reason === 'NodeLost') reason = 'Unknown';
  else if (pod.metadata?.deletionTimestamp && phase !== 'Succeeded' && phase !== 'Failed') reason = 'Terminating';
  const restartsText = restarts !== 0 && lastRestart > 0 ? `${restarts} (${humanDuration(now - lastRestart)} ago)` : String(restarts);
  const podIPs = arr(status.podIPs);
  const gates = arr(spec.readinessGates);
  const conditions = arr(status.conditions);
  const gatesText =
    gates.length === 0 ? '<none>' : `${gates.filter((g) => conditions.find((c) => c.type === g.conditionType)?.status === 'True').length}/${gates.length}`;
  return [
    name(pod),
    `${ready}/${total}`,
    reason,
    restartsText,
    age(pod, now),
    str(podIPs[0]?.ip) || '<none>',
    str(spec.nodeName) || '<none>',
    str(status.nominatedNodeName) || '<none>',
    gatesText,
  ];
}

function eventCells(e: KubeObject, now: number): Cell[] {
  // core/v1 and events.k8s.io/v1 name the same fields differently; the server prints both alike.
  const involved = obj(e.involvedObject ?? e.regarding);
  const source = obj(e.source ?? e.deprecatedSource);
  const series = isObject(e.series) ? e.series : undefined;
  const firstTimestamp = e.firstTimestamp ?? e.deprecatedFirstTimestamp;
  const lastTimestamp = e.lastTimestamp ?? e.deprecatedLastTimestamp;
  const first = firstTimestamp ? since(firstTimestamp, now) : since(e.eventTime, now);
  let last = lastTimestamp ? since(lastTimestamp, now) : first;
  let count = num(e.count ?? e.deprecatedCount);
  if (series) {
    last = since(series.lastObservedTime, now);
    count = num(series.count);
  } else if (count === 0) {
    count = 1;
  }
  const kind = str(involved.kind).toLowerCase();
  const target = str(involved.name) ? `${kind}/${str(involved.name)}` : kind;
  const component = str(source.component) || str(e.reportingController ?? e.reportingComponent);
  const instance = str(source.host) || str(e.reportingInstance);
  return [
    last,
    str(e.type),
    str(e.reason),
    target,
    str(involved.fieldPath),
    instance ? `${component}, ${instance}` : component,
    str(e.message ?? e.note).trim(),
    first,
    count,
    name(e),
  ];
}

function nodeCells(n: KubeObject, now: number): Cell[] {
  const status = obj(n.status);
  const readyCondition = arr(status.conditions).find((c) => c.type === 'Ready');
  const states = readyCondition ? [readyCondition.status === 'True' ? 'Ready' : 'NotReady'] : ['Unknown'];
  if (obj(n.spec).unschedulable === true) states.push('SchedulingDisabled');
  const roles = new Set<string>();
  for (const [k, v] of Object.entries(n.metadata?.labels ?? {})) {
    if (k.startsWith('node-role.kubernetes.io/') && k.length > 'node-role.kubernetes.io/'.length) roles.add(k.slice('node-role.kubernetes.io/'.length));
    else if (k === 'kubernetes.io/role' && v !== '') roles.add(v);
  }
  const info = obj(status.nodeInfo);
  const address = (type: string): string => str(arr(status.addresses).find((a) => a.type === type)?.address) || '<none>';
  return [
    name(n),
    states.join(','),
    roles.size ? [...roles].sort().join(',') : '<none>',
    age(n, now),
    str(info.kubeletVersion),
    address('InternalIP'),
    address('ExternalIP'),
    str(info.osImage) || '<unknown>',
    str(info.kernelVersion) || '<unknown>',
    str(info.containerRuntimeVersion) || '<unknown>',
  ];
}

function serviceCells(s: KubeObject, now: number): Cell[] {
  const spec = obj(s.spec);
  const type = str(spec.type);
  const externalIPs = Array.isArray(spec.externalIPs) ? spec.externalIPs.map(String) : [];
  let external: string;
  if (type === 'ClusterIP' || type === 'NodePort') external = externalIPs.length ? externalIPs.join(',') : '<none>';
  else if (type === 'LoadBalancer') {
    const lb = [
      ...new Set(
        arr(obj(obj(s.status).loadBalancer).ingress)
          .map((i) => str(i.ip) || str(i.hostname))
          .filter(Boolean),
      ),
    ]
      .sort()
      .join(',');
    const all = [...(lb ? lb.split(',') : []), ...externalIPs];
    external = all.length ? all.join(',') : '<pending>';
  } else if (type === 'ExternalName') external = str(spec.externalName);
  else external = '<unknown>';
  const ports = arr(spec.ports)
    .map((p) => (num(p.nodePort) > 0 ? `${num(p.port)}:${num(p.nodePort)}/${str(p.protocol)}` : `${num(p.port)}/${str(p.protocol)}`))
    .join(',');
  const clusterIPs = Array.isArray(spec.clusterIPs) ? spec.clusterIPs : [];
  return [name(s), type, typeof clusterIPs[0] === 'string' ? clusterIPs[0] : '<none>', external, ports || '<none>', age(s, now), formatLabels(spec.selector)];
}

function endpointsCells(e: KubeObject, now: number): Cell[] {
  const list: string[] = [];
  let count = 0;
  for (const subset of arr(e.subsets)) {
    const addresses = arr(subset.addresses);
    const ports = arr(subset.ports);
    const add = (text: string): void => {
      if (list.length < 3) list.push(text);
      count++;
    };
    if (ports.length === 0) for (const a of addresses) add(str(a.ip));
    else for (const p of ports) for (const a of addresses) add(str(a.ip).includes(':') ? `[${str(a.ip)}]:${num(p.port)}` : `${str(a.ip)}:${num(p.port)}`);
  }
  const text = arr(e.subsets).length === 0 ? '<none>' : count > 3 ? `${list.join(',')} + ${count - 3} more...` : list.join(',');
  return [name(e), text, age(e, now)];
}

function pvCells(pv: KubeObject, now: number): Cell[] {
  const spec = obj(pv.spec);
  const claim = isObject(spec.claimRef) ? `${str(spec.claimRef.namespace)}/${str(spec.claimRef.name)}` : '';
  const className = str(spec.storageClassName) || str(pv.metadata?.annotations?.['volume.beta.kubernetes.io/storage-class']);
  return [
    name(pv),
    str(obj(spec.capacity).storage),
    accessModes(spec.accessModes),
    str(spec.persistentVolumeReclaimPolicy),
    pv.metadata?.deletionTimestamp ? 'Terminating' : str(obj(pv.status).phase),
    claim,
    className,
    str(spec.volumeAttributesClassName) || '<unset>',
    str(obj(pv.status).reason),
    age(pv, now),
    str(spec.volumeMode) || '<unset>',
  ];
}

function pvcCells(pvc: KubeObject, now: number): Cell[] {
  const spec = obj(pvc.spec);
  const status = obj(pvc.status);
  const bound = str(spec.volumeName) !== '';
  const className = str(spec.storageClassName) || str(pvc.metadata?.annotations?.['volume.beta.kubernetes.io/storage-class']);
  return [
    name(pvc),
    pvc.metadata?.deletionTimestamp ? 'Terminating' : str(status.phase),
    str(spec.volumeName),
    bound ? str(obj(status.capacity).storage) : '',
    bound ? accessModes(status.accessModes) : '',
    className,
    str(spec.volumeAttributesClassName) || '<unset>',
    age(pvc, now),
    str(spec.volumeMode) || '<unset>',
  ];
}

function jobCells(j: KubeObject, now: number): Cell[] {
  const spec = obj(j.spec);
  const status = obj(j.status);
  const succeeded = num(status.succeeded);
  let completions: string;
  if (typeof spec.completions === 'number') completions = `${succeeded}/${spec.completions}`;
  else completions = num(spec.parallelism) > 1 ? `${succeeded}/1 of ${num(spec.parallelism)}` : `${succeeded}/1`;
  const start = typeof status.startTime === 'string' ? Date.parse(status.startTime) : NaN;
  const end = typeof status.completionTime === 'string' ? Date.parse(status.completionTime) : NaN;
  const duration = Number.isNaN(start) ? '' : humanDuration((Number.isNaN(end) ? now : end) - start);
  return [name(j), jobStatus(j), completions, duration, age(j, now), ...containerCells(templateSpec(j)), formatLabelSelector(spec.selector)];
}

/** The STATUS column of Jobs (printJob). */
function jobStatus(j: KubeObject): string {
  const has = (type: string): boolean => arr(obj(j.status).conditions).some((c) => c.type === type && c.status === 'True');
  if (has('Complete')) return 'Complete';
  if (has('Failed')) return 'Failed';
  if (j.metadata?.deletionTimestamp) return 'Terminating';
  if (has('Suspended')) return 'Suspended';
  if (has('FailureTarget')) return 'FailureTarget';
  return 'Running';
}

function storageClassCells(sc: KubeObject, now: number): Cell[] {
  const annotations = sc.metadata?.annotations ?? {};
  const isDefault =
    annotations['storageclass.kubernetes.io/is-default-class'] === 'true' || annotations['storageclass.beta.kubernetes.io/is-default-class'] === 'true';
  return [
    isDefault ? `${name(sc)} (default)` : name(sc),
    str(sc.provisioner),
    str(sc.reclaimPolicy) || 'Delete',
    str(sc.volumeBindingMode) || 'Immediate',
    sc.allowVolumeExpansion === true,
    age(sc, now),
  ];
}

function bindingCells(b: KubeObject, now: number): Cell[] {
  const roleRef = obj(b.roleRef);
  const subjects = arr(b.subjects);
  const of = (kind: string): string =>
    subjects
      .filter((s) => s.kind === kind)
      .map((s) => (kind === 'ServiceAccount' ? `${str(s.namespace)}/${str(s.name)}` : str(s.name)))
      .join(', ');
  return [name(b), `${str(roleRef.kind)}/${str(roleRef.name)}`, age(b, now), of('User'), of('Group'), of('ServiceAccount')];
}

function controllerRevisionCells(r: KubeObject, now: number): Cell[] {
  const owner = controllerRef(r);
  let controller = '<none>';
  if (owner) {
    const group = owner.apiVersion.includes('/') ? owner.apiVersion.split('/')[0]! : '';
    controller = `${(group ? `${owner.kind}.${group}` : owner.kind).toLowerCase()}/${owner.name}`;
  }
  return [name(r), controller, num(r.revision), age(r, now)];
}

/** At most three items, then `+ N more...`, as the printers shorten lists. */
function firstThree(items: readonly string[], empty: string): string {
  if (items.length === 0) return empty;
  return items.length > 3 ? `${items.slice(0, 3).join(',')} + ${items.length - 3} more...` : items.join(',');
}

function ingressCells(i: KubeObject, now: number): Cell[] {
  const spec = obj(i.spec);
  const rules = arr(spec.rules);
  const hosts = rules
    .slice(0, 3)
    .map((r) => str(r.host))
    .filter(Boolean);
  const hostsText = hosts.length === 0 ? '*' : rules.length > 3 ? `${hosts.join(',')} + ${rules.length - 3} more...` : hosts.join(',');
  const addresses = [
    ...new Set(
      arr(obj(obj(i.status).loadBalancer).ingress)
        .map((a) => str(a.ip) || str(a.hostname))
        .filter(Boolean),
    ),
  ]
    .sort()
    .join(',');
  return [name(i), str(spec.ingressClassName) || '<none>', hostsText, addresses, arr(spec.tls).length ? '80, 443' : '80', age(i, now)];
}

function endpointSliceCells(e: KubeObject, now: number): Cell[] {
  const ports = arr(e.ports).map((p) => (typeof p.port === 'number' ? String(p.port) : str(p.name) || '*'));
  const addresses = arr(e.endpoints).flatMap((ep) => (Array.isArray(ep.addresses) ? ep.addresses.map(String) : []));
  return [name(e), str(e.addressType), firstThree(ports, '<unset>'), firstThree(addresses, '<unset>'), age(e, now)];
}

/** printHorizontalPodAutoscaler's TARGETS: each metric's current value against its target. */
function hpaTargets(spec: Obj, status: Obj): string {
  const metrics = arr(spec.metrics);
  if (metrics.length === 0) return '<none>';
  const current = arr(status.currentMetrics);
  const texts = metrics.map((m) => {
    if (m.type !== 'Resource' && m.type !== 'ContainerResource') return '<unknown>/<unknown>';
    const source = obj(m.type === 'Resource' ? m.resource : m.containerResource);
    const target = obj(source.target);
    const observed = obj(
      obj(
        current.find((c) => c.type === m.type && str(obj(c.type === 'Resource' ? c.resource : c.containerResource).name) === str(source.name))?.[
          m.type === 'Resource' ? 'resource' : 'containerResource'
        ],
      ).current,
    );
    if (typeof target.averageUtilization === 'number') {
      const now = typeof observed.averageUtilization === 'number' ? `${observed.averageUtilization}%` : '<unknown>';
      return `${str(source.name)}: ${now}/${target.averageUtilization}%`;
    }
    const now = observed.averageValue !== undefined ? String(observed.averageValue) : '<unknown>';
    return `${str(source.name)}: ${now}/${String(target.averageValue ?? '<unknown>')}`;
  });
  return texts.length > 4 ? `${texts.slice(0, 4).join(', ')} + ${texts.length - 4} more...` : texts.join(', ');
}

function hpaCells(h: KubeObject, now: number): Cell[] {
  const spec = obj(h.spec);
  const status = obj(h.status);
  const ref = obj(spec.scaleTargetRef);
  return [
    name(h),
    `${str(ref.kind)}/${str(ref.name)}`,
    hpaTargets(spec, status),
    typeof spec.minReplicas === 'number' ? String(spec.minReplicas) : '<unset>',
    String(num(spec.maxReplicas)),
    String(num(status.currentReplicas)),
    age(h, now),
  ];
}

function createdAt(o: KubeObject): string {
  const t = Date.parse(o.metadata?.creationTimestamp ?? '');
  return Number.isNaN(t) ? '0001-01-01T00:00:00Z' : new Date(t).toISOString().replace(/\.\d{3}Z$/, 'Z');
}

const POD_TERMINAL_CONDITIONS: Record<string, Obj[]> = {
  Succeeded: [{ type: 'Completed', status: 'True', reason: 'Succeeded', message: 'The pod has completed successfully.' }],
  Failed: [{ type: 'Completed', status: 'True', reason: 'Failed', message: 'The pod failed.' }],
};

/** Built-in printers by `group/resource` (group empty for core). */
const PRINTERS: Readonly<Record<string, Printer>> = {
  '/pods': {
    columns: columns(
      'Name:string',
      'Ready:string',
      'Status:string',
      'Restarts:string',
      'Age:string',
      'IP:string:1',
      'Node:string:1',
      'Nominated Node:string:1',
      'Readiness Gates:string:1',
    ),
    cells: podCells,
    conditions: (p) => POD_TERMINAL_CONDITIONS[str(obj(p.status).phase)],
  },
  '/nodes': {
    columns: columns(
      'Name:string',
      'Status:string',
      'Roles:string',
      'Age:string',
      'Version:string',
      'Internal-IP:string:1',
      'External-IP:string:1',
      'OS-Image:string:1',
      'Kernel-Version:string:1',
      'Container-Runtime:string:1',
    ),
    cells: nodeCells,
  },
  '/namespaces': { columns: columns('Name:string', 'Status:string', 'Age:string'), cells: (o, now) => [name(o), str(obj(o.status).phase), age(o, now)] },
  '/services': {
    columns: columns('Name:string', 'Type:string', 'Cluster-IP:string', 'External-IP:string', 'Port(s):string', 'Age:string', 'Selector:string:1'),
    cells: serviceCells,
  },
  '/endpoints': { columns: columns('Name:string', 'Endpoints:string', 'Age:string'), cells: endpointsCells },
  '/configmaps': {
    columns: columns('Name:string', 'Data:string', 'Age:string'),
    cells: (o, now) => [name(o), Object.keys(obj(o.data)).length + Object.keys(obj(o.binaryData)).length, age(o, now)],
  },
  '/secrets': {
    columns: columns('Name:string', 'Type:string', 'Data:string', 'Age:string'),
    cells: (o, now) => [name(o), str(o.type), Object.keys(obj(o.data)).length, age(o, now)],
  },
  '/serviceaccounts': { columns: columns('Name:string', 'Secrets:string', 'Age:string'), cells: (o, now) => [name(o), arr(o.secrets).length, age(o, now)] },
  '/persistentvolumes': {
    columns: columns(
      'Name:string',
      'Capacity:string',
      'Access Modes:string',
      'Reclaim Policy:string',
      'Status:string',
      'Claim:string',
      'StorageClass:string',
      'VolumeAttributesClass:string',
      'Reason:string',
      'Age:string',
      'VolumeMode:string:1',
    ),
    cells: pvCells,
  },
  '/persistentvolumeclaims': {
    columns: columns(
      'Name:string',
      'Status:string',
      'Volume:string',
      'Capacity:string',
      'Access Modes:string',
      'StorageClass:string',
      'VolumeAttributesClass:string',
      'Age:string',
      'VolumeMode:string:1',
    ),
    cells: pvcCells,
  },
  '/events': {
    columns: columns(
      'Last Seen:string',
      'Type:string',
      'Reason:string',
      'Object:string',
      'Subobject:string:1',
      'Source:string:1',
      'Message:string',
      'First Seen:string:1',
      'Count:string:1',
      'Name:string:1',
    ),
    cells: eventCells,
  },
  'apps/deployments': {
    columns: columns(
      'Name:string',
      'Ready:string',
      'Up-to-date:string',
      'Available:string',
      'Age:string',
      'Containers:string:1',
      'Images:string:1',
      'Selector:string:1',
    ),
    cells: (o, now) => {
      const status = obj(o.status);
      return [
        name(o),
        `${num(status.readyReplicas)}/${num(obj(o.spec).replicas)}`,
        num(status.updatedReplicas),
        num(status.availableReplicas),
        age(o, now),
        ...containerCells(templateSpec(o)),
        formatLabelSelector(obj(o.spec).selector),
      ];
    },
  },
  'apps/replicasets': {
    columns: columns(
      'Name:string',
      'Desired:integer',
      'Current:integer',
      'Ready:integer',
      'Age:string',
      'Containers:string:1',
      'Images:string:1',
      'Selector:string:1',
    ),
    cells: (o, now) => {
      const status = obj(o.status);
      return [
        name(o),
        num(obj(o.spec).replicas),
        num(status.replicas),
        num(status.readyReplicas),
        age(o, now),
        ...containerCells(templateSpec(o)),
        formatLabelSelector(obj(o.spec).selector),
      ];
    },
  },
  'apps/statefulsets': {
    columns: columns('Name:string', 'Ready:string', 'Age:string', 'Containers:string:1', 'Images:string:1'),
    cells: (o, now) => [name(o), `${num(obj(o.status).readyReplicas)}/${num(obj(o.spec).replicas)}`, age(o, now), ...containerCells(templateSpec(o))],
  },
  'apps/daemonsets': {
    columns: columns(
      'Name:string',
      'Desired:integer',
      'Current:integer',
      'Ready:integer',
      'Up-to-date:integer',
      'Available:integer',
      'Node Selector:string',
      'Age:string',
      'Containers:string:1',
      'Images:string:1',
      'Selector:string:1',
    ),
    cells: (o, now) => {
      const s = obj(o.status);
      return [
        name(o),
        num(s.desiredNumberScheduled),
        num(s.currentNumberScheduled),
        num(s.numberReady),
        num(s.updatedNumberScheduled),
        num(s.numberAvailable),
        formatLabels(templateSpec(o).nodeSelector),
        age(o, now),
        ...containerCells(templateSpec(o)),
        formatLabelSelector(obj(o.spec).selector),
      ];
    },
  },
  'apps/controllerrevisions': { columns: columns('Name:string', 'Controller:string', 'Revision:string', 'Age:string'), cells: controllerRevisionCells },
  'batch/jobs': {
    columns: columns(
      'Name:string',
      'Status:string',
      'Completions:string',
      'Duration:string',
      'Age:string',
      'Containers:string:1',
      'Images:string:1',
      'Selector:string:1',
    ),
    cells: jobCells,
  },
  'batch/cronjobs': {
    columns: columns(
      'Name:string',
      'Schedule:string',
      'Timezone:string',
      'Suspend:boolean',
      'Active:integer',
      'Last Schedule:string',
      'Age:string',
      'Containers:string:1',
      'Images:string:1',
      'Selector:string:1',
    ),
    cells: (o, now) => {
      const spec = obj(o.spec);
      const status = obj(o.status);
      const jobSpec = obj(obj(spec.jobTemplate).spec);
      return [
        name(o),
        str(spec.schedule),
        str(spec.timeZone) || '<none>',
        typeof spec.suspend === 'boolean' ? (spec.suspend ? 'True' : 'False') : '<unset>',
        arr(status.active).length,
        status.lastScheduleTime ? since(status.lastScheduleTime, now) : '<none>',
        age(o, now),
        ...containerCells(obj(obj(jobSpec.template).spec)),
        formatLabelSelector(jobSpec.selector),
      ];
    },
  },
  'policy/poddisruptionbudgets': {
    columns: columns('Name:string', 'Min Available:string', 'Max Unavailable:string', 'Allowed Disruptions:integer', 'Age:string'),
    cells: (o, now) => {
      const spec = obj(o.spec);
      const text = (v: unknown): string => (v === undefined || v === null ? 'N/A' : String(v));
      return [name(o), text(spec.minAvailable), text(spec.maxUnavailable), num(obj(o.status).disruptionsAllowed), age(o, now)];
    },
  },
  'coordination.k8s.io/leases': {
    columns: columns('Name:string', 'Holder:string', 'Age:string'),
    cells: (o, now) => [name(o), str(obj(o.spec).holderIdentity), age(o, now)],
  },
  'storage.k8s.io/storageclasses': {
    columns: columns('Name:string', 'Provisioner:string', 'ReclaimPolicy:string', 'VolumeBindingMode:string', 'AllowVolumeExpansion:string', 'Age:string'),
    cells: storageClassCells,
  },
  'rbac.authorization.k8s.io/roles': { columns: columns('Name:string', 'Created At:date'), cells: (o) => [name(o), createdAt(o)] },
  'rbac.authorization.k8s.io/clusterroles': { columns: columns('Name:string', 'Created At:date'), cells: (o) => [name(o), createdAt(o)] },
  'rbac.authorization.k8s.io/rolebindings': {
    columns: columns('Name:string', 'Role:string', 'Age:string', 'Users:string:1', 'Groups:string:1', 'ServiceAccounts:string:1'),
    cells: bindingCells,
  },
  'rbac.authorization.k8s.io/clusterrolebindings': {
    columns: columns('Name:string', 'Role:string', 'Age:string', 'Users:string:1', 'Groups:string:1', 'ServiceAccounts:string:1'),
    cells: bindingCells,
  },
  'admissionregistration.k8s.io/mutatingwebhookconfigurations': {
    columns: columns('Name:string', 'Webhooks:integer', 'Age:string'),
    cells: (o, now) => [name(o), arr(o.webhooks).length, age(o, now)],
  },
  'admissionregistration.k8s.io/validatingwebhookconfigurations': {
    columns: columns('Name:string', 'Webhooks:integer', 'Age:string'),
    cells: (o, now) => [name(o), arr(o.webhooks).length, age(o, now)],
  },
  'networking.k8s.io/ingresses': {
    columns: columns('Name:string', 'Class:string', 'Hosts:string', 'Address:string', 'Ports:string', 'Age:string'),
    cells: ingressCells,
  },
  'networking.k8s.io/ingressclasses': {
    columns: columns('Name:string', 'Controller:string', 'Parameters:string', 'Age:string'),
    cells: (o, now) => {
      const p = isObject(obj(o.spec).parameters) ? obj(obj(o.spec).parameters) : undefined;
      const parameters = p ? `${str(p.kind)}${typeof p.apiGroup === 'string' ? `.${p.apiGroup}` : ''}/${str(p.name)}` : '<none>';
      return [name(o), str(obj(o.spec).controller), parameters, age(o, now)];
    },
  },
  'networking.k8s.io/networkpolicies': {
    columns: columns('Name:string', 'Pod-Selector:string', 'Age:string'),
    cells: (o, now) => [name(o), formatLabelSelector(obj(o.spec).podSelector), age(o, now)],
  },
  'discovery.k8s.io/endpointslices': {
    columns: columns('Name:string', 'AddressType:string', 'Ports:string', 'Endpoints:string', 'Age:string'),
    cells: endpointSliceCells,
  },
  'autoscaling/horizontalpodautoscalers': {
    columns: columns('Name:string', 'Reference:string', 'Targets:string', 'MinPods:string', 'MaxPods:string', 'Replicas:string', 'Age:string'),
    cells: hpaCells,
  },
};
// events.k8s.io Events are printed through the core Event printer, as kube-apiserver converts them.
const EVENTS_PRINTER = PRINTERS['/events']!;

/** The generic registry's default: Name and Created At (RFC 3339), for kinds without a printer. */
const DEFAULT_PRINTER: Printer = { columns: columns('Name:string', 'Created At:date'), cells: (o) => [name(o), createdAt(o)] };
DEFAULT_PRINTER.columns[1]!.description = AGE_DOC;

// --- CRD additionalPrinterColumns ----------------------------------------------------------------

/**
 * Evaluates a printer column's JSONPath (the subset CRDs use: `.a.b`, `['a.b']`, `[n]`, `[*]`,
 * `[?(@.k=="v")]`) and returns every match, as client-go's jsonpath with AllowMissingKeys.
 */
export function evaluateJsonPath(path: string, root: unknown): unknown[] {
  let current: unknown[] = [root];
  let i = 0;
  const p = path
    .trim()
    .replace(/^\{(.*)\}$/, '$1')
    .replace(/^\$/, '');
  while (i < p.length) {
    if (p[i] === '.') {
      i++;
      if (p[i] === '.') throw new Error('recursive descent is not supported');
      const m = /^[^.[\]]+/.exec(p.slice(i));
      if (!m) continue;
      i += m[0].length;
      const key = m[0];
      current = current.flatMap((v) => (key === '*' ? (isObject(v) ? Object.values(v) : Array.isArray(v) ? v : []) : isObject(v) && key in v ? [v[key]] : []));
    } else if (p[i] === '[') {
      const close = p.indexOf(']', i);
      if (close < 0) throw new Error(`unclosed [ in ${path}`);
      let inner = p.slice(i + 1, close);
      // A filter may contain ']' only inside quotes; the CRD columns in practice do not.
      i = close + 1;
      if (/^['"].*['"]$/.test(inner)) {
        const key = inner.slice(1, -1);
        current = current.flatMap((v) => (isObject(v) && key in v ? [v[key]] : []));
      } else if (inner === '*') {
        current = current.flatMap((v) => (Array.isArray(v) ? v : isObject(v) ? Object.values(v) : []));
      } else if (/^-?\d+$/.test(inner)) {
        const n = Number(inner);
        current = current.flatMap((v) => (Array.isArray(v) && (n < 0 ? v.length + n : n) in v ? [v[n < 0 ? v.length + n : n]] : []));
      } else if (inner.startsWith('?(') && inner.endsWith(')')) {
        inner = inner.slice(2, -1);
        const m = /^@((?:\.[^.=!<>\s]+)+)\s*(==|!=)\s*(?:"([^"]*)"|'([^']*)'|(-?\d+(?:\.\d+)?)|(true|false))$/.exec(inner.trim());
        const exists = /^@((?:\.[^.=!<>\s]+)+)$/.exec(inner.trim());
        if (!m && !exists) throw new Error(`unsupported filter ${inner}`);
        current = current.flatMap((v) =>
          (Array.isArray(v) ? v : []).filter((item) => {
            const found = evaluateJsonPath((m ?? exists)![1]!, item);
            if (!m) return found.length > 0;
            const literal = m[3] ?? m[4] ?? (m[5] !== undefined ? Number(m[5]) : m[6] === 'true');
            const equal = found.length > 0 && found[0] === literal;
            return m[2] === '==' ? equal : !equal;
          }),
        );
      } else {
        throw new Error(`unsupported subscript [${inner}]`);
      }
    } else {
      throw new Error(`unexpected ${p[i]} in ${path}`);
    }
  }
  return current;
}

/** The cell of one CRD column, as apiextensions-apiserver's tableconvertor (cellForJSONValue) makes it. */
function crdCell(column: PrinterColumn, o: KubeObject, now: number): Cell {
  let results: unknown[];
  try {
    results = evaluateJsonPath(column.jsonPath, o);
  } catch {
    return null;
  }
  if (results.length === 0 || results[0] === undefined) return null;
  const value = results[0];
  if (value === null) return null;
  switch (column.type) {
    case 'string':
      return typeof value === 'string' ? value : JSON.stringify(value);
    case 'integer':
      return typeof value === 'number' ? Math.trunc(value) : null;
    case 'number':
      return typeof value === 'number' ? value : null;
    case 'boolean':
      return typeof value === 'boolean' ? value : null;
    case 'date': {
      if (typeof value !== 'string') return null;
      const t = Date.parse(value);
      return Number.isNaN(t) ? '<invalid>' : humanDuration(now - t);
    }
  }
  return null;
}

function crdPrinter(printerColumns: readonly PrinterColumn[]): Printer {
  const list: PrinterColumn[] = printerColumns.length
    ? [...printerColumns]
    : [{ name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp', description: AGE_DOC }];
  return {
    columns: [
      { name: 'Name', type: 'string', format: 'name', description: NAME_DOC, priority: 0 },
      ...list.map((c) => ({
        name: c.name,
        type: c.type,
        format: c.format ?? '',
        description: c.description || `Custom resource definition column (in JSONPath format): ${c.jsonPath}`,
        priority: c.priority ?? 0,
      })),
    ],
    cells: (o, now) => [name(o), ...list.map((c) => crdCell(c, o, now))],
  };
}

/** additionalPrinterColumns of each version of a v1 CRD object (for `ResourceDefinition.printerColumns`). */
export function printerColumnsOfCrd(crd: KubeObject): Record<string, PrinterColumn[]> {
  const out: Record<string, PrinterColumn[]> = {};
  for (const v of arr(obj(crd.spec).versions)) {
    if (typeof v.name !== 'string') continue;
    out[v.name] = arr(v.additionalPrinterColumns)
      .filter((c) => typeof c.name === 'string' && typeof c.type === 'string' && typeof c.jsonPath === 'string')
      .map((c) => ({
        name: c.name as string,
        type: c.type as string,
        jsonPath: c.jsonPath as string,
        ...(typeof c.format === 'string' ? { format: c.format } : {}),
        ...(typeof c.description === 'string' ? { description: c.description } : {}),
        ...(typeof c.priority === 'number' ? { priority: c.priority } : {}),
      }));
  }
  return out;
}

function printerFor(def: ResourceDefinition, version: string): Printer {
  if (def.definedBy !== 'builtin') return crdPrinter(def.printerColumns?.[version] ?? []);
  if (def.group === 'events.k8s.io') return EVENTS_PRINTER;
  return PRINTERS[`${def.group}/${def.resource}`] ?? DEFAULT_PRINTER;
}

/**
 * Converts a get or list answer into a metav1 Table. `body` is an object or a list in the requested
 * version's form; `apiVersion` is that version's `group/version` (for rows' objects).
 */
export function toTable(def: ResourceDefinition, version: string, body: KubeObject, request: TableRequest, now = Date.now()): Obj {
  const printer = printerFor(def, version);
  const isList = Array.isArray((body as Obj).items);
  const items = isList ? ((body as Obj).items as KubeObject[]) : [body];
  const apiVersion = def.group ? `${def.group}/${version}` : version;
  const rows = items.map((item) => {
    const row: Obj = { cells: printer.cells(item, now) };
    const conditions = printer.conditions?.(item);
    if (conditions) row.conditions = conditions;
    if (request.includeObject === 'Object') row.object = { kind: def.kind, apiVersion, ...item };
    else if (request.includeObject === 'Metadata') {
      row.object = { kind: 'PartialObjectMetadata', apiVersion: `meta.k8s.io/${request.version}`, metadata: item.metadata ?? {} };
    }
    return row;
  });
  const listMeta = isList ? obj((body as Obj).metadata) : {};
  const metadata: Obj = {};
  if (isList) {
    for (const key of ['resourceVersion', 'continue', 'remainingItemCount']) if (listMeta[key] !== undefined) metadata[key] = listMeta[key];
  } else if (body.metadata?.resourceVersion) {
    metadata.resourceVersion = body.metadata.resourceVersion;
  }
  return { kind: 'Table', apiVersion: `meta.k8s.io/${request.version}`, metadata, columnDefinitions: printer.columns, rows };
}
