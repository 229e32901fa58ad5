/**
 * Stub applications (kperturb.yaml `applications:`) and name resolution for the controller
 * (`controller.hostAliases`, `controller.clusterDNS`): the shapes the config validates into, and the
 * pure parts that decide what a stub answers (HTTP rules) and which names resolve where (the hosts
 * entries CoreDNS would answer for a pod). The servers themselves are in src/stubs.
 */
import { globMatches } from './exec-rules.js';
import { isObject, type KubeObject } from './object-key.js';
import { matchesLabelSelector, type LabelSelector } from './label-selector.js';

/** One entry of a Pod spec's `hostAliases`: these names resolve to `ip`. */
export interface HostAlias {
  ip: string;
  hostnames: string[];
}

export interface HttpAnswer {
  status: number;
  /** Sent as application/json unless the headers say otherwise. */
  json?: unknown;
  /** Sent as text/plain unless the headers say otherwise. */
  text?: string;
  headers: Record<string, string>;
}

export interface HttpRule extends HttpAnswer {
  /** Upper-case method; any method when absent. */
  method?: string;
  /** Glob on the path without the query (`*` matches any characters, `/` included). */
  path: string;
  /** A substring of the request body (APIs that take every call on one path, such as Jolokia's). */
  bodyContains?: string;
  /** Matches only while the listener is in this state (set by an earlier call's `setState`). */
  state?: string;
  /** After answering, the listener (one pod's or Service's address) is in this state. */
  setState?: string;
}

export interface HttpStubConfig {
  rules: HttpRule[];
  /** What a request no rule matches gets. */
  default: HttpAnswer;
}

export const DEFAULT_HTTP_ANSWER: HttpAnswer = { status: 200, json: {}, headers: {} };

export type ApplicationProtocol = 'zookeeper' | 'http';

export interface ApplicationConfig {
  name: string;
  protocol: ApplicationProtocol;
  port: number;
  /** The namespace of the selected pods and Services. */
  namespace: string;
  /** Pods whose labels match get a listener on their IP while they run. */
  pods?: LabelSelector;
  /** Services (by name) that get a listener on their cluster IP while they exist. */
  services: string[];
  /**
   * Also every pod with a container port `port` and every Service with a port `port`, in the
   * namespace: the stub where the application would listen, without naming its pods or Services
   * (what `kperturb init` proposes when it knows the protocol from the operator's client library).
   */
  matchPort?: boolean;
  /** protocol http only. */
  http?: HttpStubConfig;
}

/**
 * The rule that answers a request (its index), or the default answer. `body` and `state` (the
 * listener's state, absent before any `setState`) are matched by rules that name them.
 */
export function answerHttp(config: HttpStubConfig, method: string, path: string, body = '', state?: string): { answer: HttpAnswer; rule?: number } {
  const bare = path.split('?')[0] ?? path;
  const index = config.rules.findIndex(
    (r) =>
      (r.method === undefined || r.method === method.toUpperCase()) &&
      globMatches(r.path, bare) &&
      (r.bodyContains === undefined || body.includes(r.bodyContains)) &&
      (r.state === undefined || r.state === state),
  );
  return index >= 0 ? { answer: config.rules[index]!, rule: index } : { answer: config.default };
}

/**
 * Is this pod one of the application's and running, not being deleted, with an IP, and (when its
 * status lists its containers) with a container running? A pod whose containers crashed (waiting
 * in CrashLoopBackOff) has no process to answer.
 */
export function isServingPod(app: ApplicationConfig, pod: KubeObject): boolean {
  if (pod.metadata?.namespace !== app.namespace) return false;
  const selected = (app.pods !== undefined && matchesLabelSelector(app.pods, pod.metadata?.labels)) || (app.matchPort === true && declaresPort(pod, app.port));
  return selected && podServingIp(pod) !== undefined && hasRunningContainer(pod);
}

/** Is this Service one of the application's: named in `services`, or (`matchPort`) with a port `port`? */
export function isApplicationService(app: ApplicationConfig, svc: KubeObject): boolean {
  if (svc.metadata?.namespace !== app.namespace) return false;
  if (app.services.includes(svc.metadata?.name ?? '')) return true;
  const ports = isObject(svc.spec) && Array.isArray(svc.spec.ports) ? svc.spec.ports.filter(isObject) : [];
  return app.matchPort === true && ports.some((p) => p.port === app.port);
}

/** A container of the pod (init containers aside) lists `port` among its `ports[].containerPort`. */
function declaresPort(pod: KubeObject, port: number): boolean {
  const containers = isObject(pod.spec) && Array.isArray(pod.spec.containers) ? pod.spec.containers.filter(isObject) : [];
  return containers.some((c) => Array.isArray(c.ports) && c.ports.some((p) => isObject(p) && p.containerPort === port));
}

function hasRunningContainer(pod: KubeObject): boolean {
  const status = isObject(pod.status) ? pod.status : {};
  const containers = Array.isArray(status.containerStatuses) ? status.containerStatuses.filter(isObject) : [];
  return containers.length === 0 || containers.some((c) => isObject(c.state) && isObject(c.state.running));
}

/** The IP of a running pod that is not being deleted, as the stub listeners and DNS use it. */
export function podServingIp(pod: KubeObject): string | undefined {
  const status = isObject(pod.status) ? pod.status : {};
  if (pod.metadata?.deletionTimestamp || status.phase !== 'Running') return undefined;
  return typeof status.podIP === 'string' && status.podIP !== '' ? status.podIP : undefined;
}

/** A Service's cluster IP, when it has one (not headless, not ExternalName). */
export function serviceClusterIp(svc: KubeObject): string | undefined {
  const spec = isObject(svc.spec) ? svc.spec : {};
  if (spec.type === 'ExternalName') return undefined;
  const ip = spec.clusterIP;
  return typeof ip === 'string' && ip !== '' && ip !== 'None' ? ip : undefined;
}

export const CLUSTER_DOMAIN = 'cluster.local';

/**
 * The names CoreDNS (kubernetes plugin, cluster domain cluster.local) answers for Services and pods,
 * as /etc/hosts entries (ip -> names), for a resolver that reads the hosts file only:
 * - a Service with a cluster IP: `<svc>.<ns>.svc.cluster.local` and `<svc>.<ns>.svc` (the short
 *   form a pod reaches through its resolv.conf search list);
 * - a headless Service: the same names for every ready pod it selects (CoreDNS answers all their
 *   A records; a hosts file lists the name once per address, and resolvers return them all), and
 *   `<hostname>.<svc>.<ns>.svc.cluster.local` for each such pod whose `spec.subdomain` is the
 *   Service and that has a `spec.hostname` (StatefulSet pods get both).
 * With `namespace` (the controller's, `controller.namespace`), also the names a pod of that
 * namespace reaches through its search list (`<ns>.svc.cluster.local svc.cluster.local
 * cluster.local`; a hosts file is read without it): `<svc>` and `<hostname>.<svc>` for that
 * namespace's Services, `<svc>.<ns>` and `<hostname>.<svc>.<ns>` for every namespace's.
 * A pod counts while it runs, is not being deleted and has an IP. Entries are sorted, so that the
 * same cluster state gives the same file.
 */
export function clusterDnsEntries(services: Iterable<KubeObject>, pods: Iterable<KubeObject>, namespace?: string): HostAlias[] {
  const byIp = new Map<string, Set<string>>();
  const add = (ip: string, ...names: string[]) => {
    let set = byIp.get(ip);
    if (!set) byIp.set(ip, (set = new Set()));
    for (const n of names) set.add(n);
  };
  const podList = [...pods];
  for (const svc of services) {
    const name = svc.metadata?.name;
    const ns = svc.metadata?.namespace;
    if (!name || !ns) continue;
    const spec = isObject(svc.spec) ? svc.spec : {};
    const fqdn = `${name}.${ns}.svc.${CLUSTER_DOMAIN}`;
    const short = `${name}.${ns}.svc`;
    // The forms the search list completes, for a controller that says its namespace.
    const relative = namespace === undefined ? [] : namespace === ns ? [`${name}.${ns}`, name] : [`${name}.${ns}`];
    const clusterIp = serviceClusterIp(svc);
    if (clusterIp) {
      add(clusterIp, fqdn, short, ...relative);
      continue;
    }
    if (spec.clusterIP !== 'None' || !isObject(spec.selector)) continue;
    const selector: LabelSelector = { matchLabels: spec.selector as Record<string, string> };
    for (const pod of podList) {
      if (pod.metadata?.namespace !== ns || !matchesLabelSelector(selector, pod.metadata?.labels)) continue;
      const ip = podServingIp(pod);
      if (!ip) continue;
      add(ip, fqdn, short, ...relative);
      const podSpec = isObject(pod.spec) ? pod.spec : {};
      if (typeof podSpec.hostname === 'string' && podSpec.subdomain === name) {
        add(ip, `${podSpec.hostname}.${fqdn}`, `${podSpec.hostname}.${short}`, ...relative.map((r) => `${podSpec.hostname}.${r}`));
      }
    }
  }
  return [...byIp.entries()].map(([ip, names]) => ({ ip, hostnames: [...names].sort() })).sort((a, b) => compareIps(a.ip, b.ip));
}

function compareIps(a: string, b: string): number {
  const pa = a.split('.').map(Number);
  const pb = b.split('.').map(Number);
  for (let i = 0; i < 4; i++) if (pa[i] !== pb[i]) return (pa[i] ?? 0) - (pb[i] ?? 0);
  return a.localeCompare(b);
}

/**
 * The hosts file the controller sees: the machine's own, then kperturb's entries (hostAliases first,
 * as the kubelet writes a pod's hosts file, then the cluster's names).
 */
export function hostsFileText(base: string, aliases: readonly HostAlias[], cluster: readonly HostAlias[]): string {
  const lines = [base.endsWith('\n') || base === '' ? base : base + '\n'];
  if (aliases.length > 0) {
    lines.push('# kperturb: controller.hostAliases\n');
    for (const a of aliases) lines.push(`${a.ip}\t${a.hostnames.join(' ')}\n`);
  }
  if (cluster.length > 0) {
    lines.push('# kperturb: controller.clusterDNS (Services and pods of the cluster)\n');
    for (const a of cluster) lines.push(`${a.ip}\t${a.hostnames.join(' ')}\n`);
  }
  return lines.join('');
}
