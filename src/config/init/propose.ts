/**
 * From the facts `repo-scan.ts` read to the kperturb.yaml `kperturb init` proposes: which main
 * package to build, the controller's args and environment (from the manager's Deployment, with the
 * metrics and health listeners turned off so that plans run in parallel), the CRDs to install, the
 * seed CRs, the Kubernetes release to emulate, and the questions it could not answer. Every choice
 * carries a `why` naming the file it came from, which the rendered file shows as a comment.
 */
import { posix } from 'node:path';
import { stringify } from 'yaml';
import { APPLICATION_CLIENTS, POD_NAMESPACE_FILE } from './repo-scan.js';
import type { ComponentConfigFact, ConfigFileFact, CrdFact, MainPackageFact, ManagerFact, RepoFacts, SampleFact, WebhookConfigFact } from './repo-scan.js';

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** A value with the reason for it, shown as a comment above it. */
export interface Chosen<T> {
  value: T;
  why: string;
}

export interface InitProposal {
  name: string;
  layout: string;
  main: Chosen<string> | undefined;
  /** Relative to the repository (and to kperturb.yaml, which init writes at its root). */
  binary: string;
  args: Chosen<string[]>;
  env: { name: string; value: string; why: string }[];
  ports: Chosen<number[]> | undefined;
  kubernetesVersion: Chosen<string> | undefined;
  crdFiles: Chosen<string[]>;
  /**
   * Files init writes beside kperturb.yaml: the seeds' Namespace (applied first in setup), the
   * controller's `--config` file (`controller: true`, not applied); and files of the repository set
   * up as they are (`existing: true`, not written: the ConfigMaps and Secrets the seeds name).
   */
  extraFiles: { file: string; text: string; why: string; controller?: true; existing?: true }[];
  seeds: Chosen<string[]>;
  /** Seeds of other kinds, listed in a comment for the user to add. */
  otherSamples: string[];
  namespace: string;
  leaderElection: boolean;
  /** controller.podNamespaceFile with controller.namespace: the code reads the pod's namespace file. */
  podNamespaceFile: Chosen<string> | undefined;
  /** controller.webhookServer: the operator's validating webhooks run, called by the embedded cluster. */
  webhookServer: Chosen<{ port: number }> | undefined;
  /** Environment variables the code reads that kperturb left unset. */
  unsetEnv: string[];
  /** Stubs of the applications the operator's code is a client of (with controller.clusterDNS, so that their Service names resolve). */
  applications: Chosen<{ name: string; protocol: 'zookeeper'; port: number; namespace: string }>[];
  questions: string[];
}

export const BINARY = '.kperturb/bin/manager';
/** The oldest release the embedded cluster emulates. */
const OLDEST_MINOR = 18;
/** The last release that stopped serving group-versions operators use (policy/v1beta1, batch/v1beta1). */
const LAST_REMOVAL_MINOR = 25;

const NOT_THE_OPERATOR =
  /(^|[/_-])(exporter|health|healthcheck|backup|restore|monitor|peer-list|pitr|sidecar|tools?|hack|tests?|e2e|examples?|docs|gen|bench|cli|probe|agent|mocks?|xtrabackup|state|init|migrat\w*|scripts?)($|[/_-])/;

function pathScore(file: string, order: [RegExp, number][]): number {
  let score = 10;
  for (const [re, s] of order) if (re.test(file)) score = Math.min(score, s);
  if (/(^|\/)(tests?|e2e|testdata|hack|docs?|olm|bundle|catalog|manifests\/)/.test(file)) score += 10;
  return score;
}

const CRD_ORDER: [RegExp, number][] = [
  [/^config\/crd\/bases\//, 0],
  [/^deploy\/crds\//, 1],
  [/(^|\/)charts?\/[^/]+\/crds\//, 2],
  [/^config\//, 3],
  [/^deploy\//, 4],
];
const SAMPLE_ORDER: [RegExp, number][] = [
  [/^config\/samples\//, 0],
  [/^deploy\/crds\/.*_cr\.ya?ml$/, 0],
  [/^examples?\//, 1],
  [/^deploy\//, 2],
  [/^config\//, 2],
  [/(^|\/)charts?\//, 3],
];

/**
 * A sample named as the plain case (`basic.yaml`, `cr.yaml`, `*_cr.yaml`, `sample.yaml`) before its
 * variants in the same place: spotahome/redis-operator's example/redisfailover/ has 21, and the
 * shortest name, pmem.yaml, needs a pmem-CSI storage class and a `pmem/redis` image.
 */
const PLAIN_SAMPLE = /(^|[/_.-])(basic|simple|minimal|sample|default|example|cr)\.ya?ml$/;

function byScore<T>(items: T[], score: (t: T) => number, name: (t: T) => string): T[] {
  return [...items].sort((a, b) => score(a) - score(b) || name(a).length - name(b).length || (name(a) < name(b) ? -1 : name(a) > name(b) ? 1 : 0));
}

/**
 * One file per CRD name, from the most canonical place (config/crd/bases before deploy/ before
 * charts). CRDs found only under tests, docs or OLM bundles (another project's CRDs a test installs,
 * an old release's) are left out when the canonical places have any.
 */
export function chooseCrds(crds: CrdFact[]): CrdFact[] {
  const score = (c: CrdFact): number => pathScore(c.file, CRD_ORDER);
  const canonical = crds.filter((c) => score(c) < 10);
  const best = new Map<string, CrdFact>();
  for (const c of byScore(canonical.length > 0 ? canonical : crds, score, (c) => c.file)) if (!best.has(c.name)) best.set(c.name, c);
  return [...best.values()].sort((a, b) => (a.name < b.name ? -1 : 1));
}

/** The operator's main package: controller-runtime, named like a manager or the repository, not a side tool. */
export function chooseMain(mains: MainPackageFact[], manager: ManagerFact | undefined, repoName: string): MainPackageFact | undefined {
  const binary = manager ? posix.basename(manager.command[0] ?? '') : '';
  const score = (m: MainPackageFact): number =>
    (m.usesControllerRuntime ? 5 : 0) +
    (/manager|operator|controller/.test(m.dir) ? 3 : 0) +
    (m.dir === '.' || m.dir === './cmd' ? 2 : 0) +
    (repoName && m.dir.includes(repoName) ? 2 : 0) +
    (binary && binary !== 'manager' && posix.basename(m.dir) === binary ? 4 : 0) +
    (NOT_THE_OPERATOR.test(m.dir.replace(/^\.\//, '')) ? -6 : 0);
  return [...mains].sort((a, b) => score(b) - score(a) || a.dir.length - b.dir.length || (a.dir < b.dir ? -1 : 1))[0];
}

/**
 * The operator's Deployment: from the canonical places first, one named like a manager before
 * others; never a third-party Deployment the repository ships for its test clusters or recipes,
 * named neither like a controller nor after the repository by its image, container or name
 * (datastax/cass-operator's operator/k8s-flavors/kind/rancher-local-path-storage.yaml beside its
 * own manifests under docs/).
 */
function chooseManager(managers: ManagerFact[], repoName: string): ManagerFact | undefined {
  const named = (m: ManagerFact): boolean => /manager|operator|controller/.test(`${m.deployment} ${m.container}`);
  const ours = (m: ManagerFact): boolean => {
    const image = m.image
      ?.replace(/[:@].*$/, '')
      .split('/')
      .at(-1);
    return named(m) || (repoName !== '' && [image, m.container, m.deployment].includes(repoName));
  };
  const score = (m: ManagerFact): number =>
    pathScore(m.file, [
      [/^config\/manager\//, 0],
      [/^deploy\/operator\.ya?ml$/, 0],
      [/^deploy\//, 1],
      [/^config\//, 2],
    ]) - (named(m) ? 1 : 0);
  // Only third-party Deployments (elastic/cloud-on-k8s ships its own as a Helm-templated StatefulSet,
  // and Logstash recipes as Deployments): none is the operator's, and its flags would be wrong.
  return byScore(managers.filter(ours), score, (m) => m.file)[0];
}

const LISTENER_FLAG = /(metrics|probe|health|pprof|profil)[\w-]*(addr|address|port|bind)|(addr|address|port|bind)[\w-]*(metrics|probe|health|pprof)/;
/** A listener flag named for the address alone (`--listen-address`), told by its usage text (spotahome/redis-operator: "Address to listen on for metrics."). */
const ADDRESS_FLAG = /(^|[-_.])(addr|address|listen|port|bind)([-_.]|$)/;
const LISTENER_USAGE = /\b(metrics|health|probes?|pprof|profil\w*)\b/i;
/**
 * A boolean flag that makes the operator load its kubeconfig instead of the in-cluster one, told by
 * its usage text (spotahome/redis-operator's `--development`: "development flag will allow to run the
 * operator outside a kubernetes cluster"; without it, rest.InClusterConfig fails out of a pod).
 */
const OUT_OF_CLUSTER_USAGE = /\b(outside|out of|out-of)\s+(a\s+|the\s+)?(kubernetes\s+|k8s\s+)?cluster\b|\bout-of-cluster\b/i;

function isListener(main: MainPackageFact | undefined, name: string): boolean {
  if (LISTENER_FLAG.test(name)) return true;
  const def = main?.flagDefs.find((d) => d.name === name);
  return ADDRESS_FLAG.test(name) && def?.usage !== undefined && LISTENER_USAGE.test(def.usage);
}

/**
 * The value that turns a listener off, or at least off any fixed port: `0` for controller-runtime
 * (off), and for other code an address flag (its default `:9710`) gets `127.0.0.1:0` (any free port):
 * `http.ListenAndServe("0")` fails, "missing port in address", and redis-operator exits on it.
 */
function listenerOff(main: MainPackageFact | undefined, name: string): string {
  const def = main?.flagDefs.find((d) => d.name === name);
  return main && !main.usesControllerRuntime && def?.type === 'String' && def.default?.includes(':') ? '127.0.0.1:0' : '0';
}
const LEADER_FLAG = /^(leader-elect|enable-leader-election|leader-election)$/;
const LEADER_NAMESPACE_FLAG = /^leader-elect(ion)?-namespace$/;

function splitArg(arg: string): { name: string | undefined; value: string | undefined } {
  const m = /^--?([A-Za-z0-9][\w.-]*)(?:=(.*))?$/.exec(arg);
  return { name: m?.[1], value: m?.[2] };
}

/**
 * An operator that builds its client from the in-cluster configuration unless a flag says otherwise
 * gets that flag, and its kubeconfig flag the proxy's kubeconfig (`$(KUBECONFIG)`, expanded when the
 * controller starts): out of a pod the in-cluster configuration has no token and no host.
 */
function outOfCluster(main: MainPackageFact | undefined, seen: ReadonlySet<string>, out: string[], notes: string[]): void {
  const defs = main?.flagDefs ?? [];
  const switches = defs.filter(
    (d) => d.type === 'Bool' && d.default === 'false' && d.usage !== undefined && OUT_OF_CLUSTER_USAGE.test(d.usage) && !seen.has(d.name),
  );
  for (const d of switches) {
    out.push(`--${d.name}=true`);
    notes.push(`--${d.name}=true: "${d.usage}" (kperturb runs the operator out of a pod, with a kubeconfig)`);
  }
  const kubeconfig = defs.find((d) => d.name === 'kubeconfig' && d.type === 'String');
  // An empty default does not mean $KUBECONFIG either: clientcmd.BuildConfigFromFlags("", "") is the in-cluster configuration.
  if (kubeconfig && !seen.has('kubeconfig')) {
    out.push('--kubeconfig=$(KUBECONFIG)');
    notes.push(
      `--kubeconfig=$(KUBECONFIG): the proxy's kubeconfig (the flag's default is ${kubeconfig.default ? `\`${kubeconfig.default}\`` : 'empty'}, not the KUBECONFIG kperturb sets)`,
    );
  }
}

/** A flag naming the namespace the operator runs in (its Lease, its own Secrets): "Kubernetes namespace the operator runs in". */
const OPERATOR_NAMESPACE_USAGE = /\bnamespace\b.*\b(operator|manager|controller)\s+(runs|is running|is deployed|lives)\b/i;

/**
 * The operator's own namespace, for a flag that has no default and that a pod would get from the
 * downward API (elastic/cloud-on-k8s exits at start without `--operator-namespace`): the seeds' namespace.
 */
function operatorNamespace(main: MainPackageFact | undefined, seen: ReadonlySet<string>, namespace: string, out: string[], notes: string[]): void {
  for (const d of main?.flagDefs ?? []) {
    if (d.type !== 'String' || d.default || seen.has(d.name) || !/namespace/.test(d.name) || !OPERATOR_NAMESPACE_USAGE.test(d.usage ?? '')) continue;
    out.push(`--${d.name}=${namespace}`);
    notes.push(`--${d.name}=${namespace}: "${d.usage}" (the seeds' namespace)`);
  }
}

/** The manager's args, with listeners turned off and file paths made relative to the repository. */
function proposeArgs(
  manager: ManagerFact | undefined,
  main: MainPackageFact | undefined,
  namespace: string,
  fileExists: (p: string) => boolean,
  questions: string[],
): { args: string[]; notes: string[]; leader: boolean } {
  const raw = manager ? [...manager.command.slice(1), ...manager.args] : [];
  const notes: string[] = [];
  const out: string[] = [];
  let leader = false;
  const seen = new Set<string>();
  for (let i = 0; i < raw.length; i++) {
    const arg = raw[i]!;
    const { name, value } = splitArg(arg);
    if (!name) {
      out.push(arg);
      continue;
    }
    seen.add(name);
    // A manager flag the main package does not define: Go's flag package exits 2 at start on it. The
    // Deployment gives it for an older main, or the component config (--config) took its place.
    if ((LEADER_FLAG.test(name) || LISTENER_FLAG.test(name)) && main && main.flags.length > 0 && !main.flags.includes(name)) {
      notes.push(`${arg} left out: ${main.dir} defines no such flag (Go's flag package would exit at start)`);
      if (value === undefined && !LEADER_FLAG.test(name) && raw[i + 1] !== undefined && !raw[i + 1]!.startsWith('-')) i++;
      continue;
    }
    if (LEADER_FLAG.test(name)) leader = value !== 'false';
    if (isListener(main, name)) {
      out.push(`--${name}=${listenerOff(main, name)}`);
      if (value === undefined && raw[i + 1] !== undefined && !raw[i + 1]!.startsWith('-')) i++;
      continue;
    }
    if (value !== undefined && /\.(ya?ml|json|toml|conf|cfg|ini)$/.test(value)) {
      const candidates = [manager ? posix.join(posix.dirname(manager.file), value) : value, value.replace(/^\/+/, '')];
      const found = candidates.find((c) => !c.startsWith('..') && fileExists(c));
      if (found) {
        out.push(`--${name}=${found}`);
        notes.push(`--${name} points at ${found} (the file the Deployment mounts)`);
      } else {
        out.push(arg);
        questions.push(`controller.args: ${arg} names a file inside the operator's container; give a path in this repository or drop the flag`);
      }
      continue;
    }
    out.push(arg);
  }
  for (const f of main?.flagDefs ?? []) {
    if (isListener(main, f.name) && !seen.has(f.name)) out.push(`--${f.name}=${listenerOff(main, f.name)}`);
    // A leader election on by default is on unless the Deployment says otherwise (percona's operators: `leader-elect`, default true).
    if (LEADER_FLAG.test(f.name) && !seen.has(f.name) && f.type === 'Bool' && f.default === 'true') leader = true;
  }
  outOfCluster(main, seen, out, notes);
  operatorNamespace(main, seen, namespace, out, notes);
  // controller-runtime looks for the Lease's namespace in a pod's service-account files unless the code
  // names one: outside a pod the manager exits at start ("unable to find leader election namespace").
  const nsFlag = main?.flags.find((f) => LEADER_NAMESPACE_FLAG.test(f));
  if (leader && nsFlag) {
    if (!seen.has(nsFlag)) {
      out.push(`--${nsFlag}=${namespace}`);
      notes.push(`--${nsFlag}: the Lease in the seeds' namespace (outside a pod controller-runtime finds none)`);
    }
  } else if (leader && main?.usesControllerRuntime && !main.leaderElectionNamespace) {
    for (let i = out.length - 1; i >= 0; i--) if (LEADER_FLAG.test(splitArg(out[i]!).name ?? '')) out.splice(i, 1);
    for (const f of main.flagDefs) if (LEADER_FLAG.test(f.name) && f.type === 'Bool' && f.default === 'true') out.push(`--${f.name}=false`);
    leader = false;
    notes.push(
      `leader election off: ${main.dir} names no LeaderElectionNamespace, and outside a pod controller-runtime cannot find one ("unable to find leader election namespace")`,
    );
  }
  if (out.some((a) => /=(127\.0\.0\.1:)?0$/.test(a) && isListener(main, splitArg(a).name ?? '')))
    notes.push('metrics, health and profiling listeners off (=0): plans run several at once, and a fixed port would collide');
  const sub = main?.subcommand;
  if (sub && out[0] !== sub.name) {
    out.unshift(sub.name);
    notes.push(`${sub.name}: the subcommand that runs the operator (${sub.file}); ${main.dir}'s root command runs none by itself and prints its usage`);
  }
  return { args: out, notes, leader };
}

/** The controller's own copy of the operator's component config, written by init beside kperturb.yaml. */
export const COMPONENT_CONFIG_FILE = 'kperturb-manager-config.yaml';

/** The patched copy of a CRD its kustomization patches, written beside kperturb.yaml. */
export const kustomizedCrdFile = (c: CrdFact): string => `kperturb-crd-${c.name}.yaml`;

/**
 * A kubebuilder v3 operator reads its listeners, leader election and often its webhook switch from
 * a component config that the Deployment gets from a ConfigMap (`--config=/configs/...`, added by
 * config/default/manager_config_patch.yaml, so config/manager/manager.yaml has no such flag); run
 * without it, the operator takes its built-in defaults, which can mean admission webhooks that need
 * certificates (cass-operator exits at start: no tls.crt). The copy init writes keeps the file's
 * choices except: listeners off ("0", as the flags), webhooks off (a top-level `disable...Webhooks`
 * or `enable...Webhooks` switch; on when they run, `proposeWebhookServer`), and file paths inside the container pointed at the repository's
 * file of the same name beside it (the ConfigMap generator's other files).
 */
function deriveComponentConfig(
  fact: ComponentConfigFact,
  namespace: string,
  fileExists: (p: string) => boolean,
  questions: string[],
  webhooksOn: boolean,
): { text: string; changes: string[] } {
  const doc = structuredClone(fact.doc);
  const changes: string[] = [];
  const isObj = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
  const off = (section: string, key: string): void => {
    const s = doc[section];
    if (isObj(s) && typeof s[key] === 'string' && s[key] !== '0') {
      s[key] = '0';
      changes.push(`${section}.${key} "0" (off)`);
    }
  };
  off('health', 'healthProbeBindAddress');
  off('metrics', 'bindAddress');
  // Out of a cluster controller-runtime cannot find its own namespace for the Lease ("not running in-cluster, please specify LeaderElectionNamespace").
  const election = doc.leaderElection;
  if (isObj(election) && election.leaderElect === true && typeof election.resourceNamespace !== 'string') {
    election.resourceNamespace = namespace;
    changes.push(`leaderElection.resourceNamespace ${namespace} (the seeds' namespace: out of a cluster the manager cannot find its own)`);
  }
  for (const [k, v] of Object.entries(doc)) {
    if (typeof v !== 'boolean') continue;
    const disables = /^disable\w*webhooks?$/i.test(k);
    if (!disables && !/^enable\w*webhooks?$/i.test(k)) continue;
    const want = disables !== webhooksOn;
    if (v === want) continue;
    doc[k] = want;
    changes.push(
      `${k}: ${String(want)} (${webhooksOn ? 'its validating webhooks run, with the certificate kperturb gives it: controller.webhookServer' : 'webhooks need certificates and a Service the API server calls'})`,
    );
  }
  // The webhook server binds every interface by default; the embedded cluster calls it on 127.0.0.1 (controller-runtime's `webhook.host`).
  if (webhooksOn && isObj(doc.webhook) && doc.webhook.host === undefined) {
    doc.webhook.host = '127.0.0.1';
    changes.push('webhook.host 127.0.0.1 (the embedded cluster calls it there)');
  }
  const repoPaths = (node: unknown, path: string): void => {
    if (!isObj(node)) return;
    for (const [k, v] of Object.entries(node)) {
      const p = path ? `${path}.${k}` : k;
      if (isObj(v)) repoPaths(v, p);
      else if (typeof v === 'string' && v.startsWith('/') && /\.(ya?ml|json|toml|conf|cfg|ini)$/.test(v)) {
        const beside = posix.join(posix.dirname(fact.file), posix.basename(v));
        if (fileExists(beside)) {
          node[k] = beside;
          changes.push(`${p} ${beside} (mounted beside it in the container)`);
        } else questions.push(`${COMPONENT_CONFIG_FILE} at ${p}: ${v} is a file inside the operator's container; give a path in this repository`);
      }
    }
  };
  repoPaths(doc, '');
  return { text: `# Written by kperturb init from ${fact.file}: ${changes.join('; ') || 'unchanged'}.\n${stringify(doc)}`, changes };
}

/** Where the manager's facts came from: its Deployment's file, with the kustomization's patches merged in. */
const managerSource = (m: ManagerFact): string =>
  `${m.file} (container ${m.container}${m.patches ? `; with ${m.patches.join(', ')} merged in, as kustomize builds it` : ''})`;

/** controller-runtime's metrics address when a manager's options name none. */
const DEFAULT_METRICS_PORT = 8080;
const NAMESPACE_VARS = /^(WATCH_NAMESPACE|OPERATOR_NAMESPACE|POD_NAMESPACE|NAMESPACE|OPERATOR_POD_NAMESPACE|MY_POD_NAMESPACE)$/;
const NAME_VARS = /^(POD_NAME|OPERATOR_NAME|OPERATOR_POD_NAME|MY_POD_NAME)$/;

function proposeEnv(
  facts: RepoFacts,
  manager: ManagerFact | undefined,
  name: string,
  namespace: string,
  questions: string[],
  webhooksOn: boolean,
): { env: InitProposal['env']; unset: string[] } {
  const env: InitProposal['env'] = [];
  const podName = name.endsWith('operator') ? name : `${name}-operator`;
  const set = (n: string, value: string, why: string): void => {
    if (!env.some((e) => e.name === n)) env.push({ name: n, value, why });
  };
  for (const e of manager?.env ?? []) {
    const from = managerSource(manager!);
    if (e.value !== undefined) set(e.name, e.value, `${from}`);
    else if (e.valueFrom === 'fieldRef:metadata.namespace') set(e.name, namespace, `${from}: the pod's namespace; here the seeds' namespace`);
    else if (e.valueFrom === 'fieldRef:metadata.name') set(e.name, podName, `${from}: the pod's name`);
    else if (e.valueFrom?.startsWith('fieldRef:')) set(e.name, '', `${from}: ${e.valueFrom}, which no process outside a pod has`);
    else questions.push(`controller.env.${e.name}: ${manager!.file} takes it from a ${e.valueFrom}; set a value if the operator needs one`);
  }
  const unset: string[] = [];
  for (const v of facts.envReads) {
    if (env.some((e) => e.name === v) || v === 'KUBECONFIG' || v === 'HOME' || v === 'PATH') continue;
    if (facts.kubeconfigEnv.includes(v))
      set(
        v,
        '$(KUBECONFIG)',
        `the operator's code reads ${v} as its kubeconfig path (clientcmd), else the in-cluster configuration a process outside a pod has not`,
      );
    else if (NAMESPACE_VARS.test(v)) set(v, namespace, `the operator's code reads ${v}; the seeds' namespace`);
    else if (NAME_VARS.test(v)) set(v, podName, `the operator's code reads ${v}`);
    else if (v === 'HOSTNAME') set(v, podName, "the operator's code reads HOSTNAME, which in a pod is the pod's name");
    else if (v === 'ENABLE_WEBHOOKS')
      set(
        v,
        String(webhooksOn),
        webhooksOn
          ? 'the operator reads ENABLE_WEBHOOKS: its validating webhooks run (controller.webhookServer)'
          : 'the operator reads ENABLE_WEBHOOKS: admission webhooks need certificates and a Service the API server calls',
      );
    else unset.push(v);
  }
  return { env, unset };
}

/** controller-runtime's webhook server port when the manager's options name none. */
const DEFAULT_WEBHOOK_PORT = 9443;

/**
 * The operator's admission webhooks run as in its deployment when the embedded cluster can call them
 * all: the main package sets webhooks up the kubebuilder way (`SetupWebhookWithManager`), the repository's manifests declare validating webhook
 * configurations and no mutating ones (the embedded cluster calls no mutating webhook: without its
 * defaults the operator would see other objects), and the code names none of them (cockroach-operator
 * patches its own: `webhookConfigs`). kperturb then gives the manager a serving certificate, the
 * embedded cluster sends it the configurations' requests (controller.webhookServer), and the
 * configurations are set up; so a CR change the operator's webhook refuses is refused, as on a
 * real cluster, instead of reaching the controller.
 */
function proposeWebhookServer(
  facts: RepoFacts,
  main: MainPackageFact | undefined,
  componentConfig: ComponentConfigFact | undefined,
): { port: number; file: string; why: string } | undefined {
  if (!main?.setsUpWebhooks || facts.webhookConfigs.length > 0) return undefined;
  if (facts.webhookManifests.some((m) => m.kinds.includes('MutatingWebhookConfiguration'))) return undefined;
  const file = byScore(
    facts.webhookManifests.filter((m) => m.kinds.includes('ValidatingWebhookConfiguration')),
    (m) => pathScore(m.file, [[/^config\/webhook\//, 0]]),
    (m) => m.file,
  )[0]?.file;
  if (!file) return undefined;
  const section = componentConfig?.doc.webhook;
  const configPort = isObject(section) && typeof section.port === 'number' ? section.port : undefined;
  const port = configPort ?? main.webhookPort?.port ?? DEFAULT_WEBHOOK_PORT;
  const from =
    configPort !== undefined
      ? `${componentConfig!.file}'s webhook.port`
      : main.webhookPort
        ? `${main.dir}: ${main.webhookPort.line}`
        : "controller-runtime's default, the manager's options name none";
  return {
    port,
    file,
    why: `${main.dir} sets up admission webhooks (SetupWebhookWithManager) and ${file} declares validating ones: kperturb gives the manager a serving certificate and the embedded cluster calls them, so a change the operator's webhook refuses is refused (port ${port}: ${from})`,
  };
}

/** The webhook configurations the operator's code names, written beside kperturb.yaml. */
export const WEBHOOK_CONFIGS_FILE = 'kperturb-webhook-configurations.yaml';

/**
 * The admission webhook configurations the operator's code looks up by name (cockroach-operator
 * patches their caBundle at start and exits without them), as the repository's manifests declare
 * them and under the name the code uses (a kustomization's namePrefix). Their Service is put in the
 * seeds' namespace and their failurePolicy made Ignore: no Service routes to an operator that runs
 * out of a pod, and a real cluster would refuse every CR with `Fail` (the embedded one calls no webhook).
 */
function webhookConfigs(configs: readonly WebhookConfigFact[], namespace: string): InitProposal['extraFiles'][number] | undefined {
  if (configs.length === 0) return undefined;
  const docs = configs.map((w) => {
    const doc = structuredClone(w.doc) as { metadata?: Record<string, unknown>; webhooks?: unknown };
    doc.metadata = { name: w.name };
    if (Array.isArray(doc.webhooks))
      for (const hook of doc.webhooks as Record<string, unknown>[]) {
        const client = hook.clientConfig as { service?: Record<string, unknown> } | undefined;
        if (client?.service) client.service.namespace = namespace;
        hook.failurePolicy = 'Ignore';
      }
    return doc;
  });
  const named = configs.map((w) => `${w.name} (${w.file}${w.namePrefixFrom ? `, named by ${w.namePrefixFrom}'s namePrefix` : ''}; ${w.namedIn.join(', ')})`);
  const why = `the admission webhook configurations the operator's code names, which it looks up at start: ${named.join(', ')}; failurePolicy Ignore, as no Service reaches an operator out of a pod`;
  return { file: WEBHOOK_CONFIGS_FILE, text: `# Written by kperturb init: ${why}.\n${docs.map((d) => stringify(d)).join('---\n')}`, why };
}

/** The stand-in for the operator's own Pod, written beside kperturb.yaml. */
export const OPERATOR_POD_FILE = 'kperturb-operator-pod.yaml';

/**
 * Code that reads the pod's namespace file and is told its pod's name (HOSTNAME, POD_NAME, ...) looks
 * its own Pod up: percona's operators take the init image of the database pods from it
 * (percona-server-mongodb-operator psmdb_controller.go getOperatorPodImage: Get namespace/HOSTNAME,
 * exits at start without it). The stand-in has the name kperturb gives those variables and the
 * Deployment's containers (name and image), in the seeds' namespace; the simulated kubelet runs it.
 */
function operatorPod(manager: ManagerFact | undefined, env: InitProposal['env'], namespace: string): InitProposal['extraFiles'][number] | undefined {
  const named = env.find((e) => e.name === 'HOSTNAME' || NAME_VARS.test(e.name));
  if (!manager || !named || !named.value) return undefined;
  const pod = {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: named.value, namespace, labels: { 'app.kubernetes.io/managed-by': 'kperturb' } },
    spec: {
      containers: [{ name: manager.container || 'manager', image: manager.image ?? 'operator' }],
      // The operator runs outside the cluster and nothing would restart it in a new pod, as its
      // Deployment would: a node-not-ready fault must not evict its stand-in for good.
      tolerations: ['not-ready', 'unreachable'].map((taint) => ({ key: `node.kubernetes.io/${taint}`, operator: 'Exists', effect: 'NoExecute' })),
    },
  };
  const why = `a stand-in for the operator's own Pod (the code reads the pod's namespace file and ${named.name}), from ${manager.file} (container ${manager.container}); it tolerates the node taints for ever, as nothing would restart the operator elsewhere`;
  return { file: OPERATOR_POD_FILE, text: `# Written by kperturb init: ${why}.\n${stringify(pod)}`, why };
}

/** The Kubernetes release the operator was built against (client-go v0.M is release 1.M), as old as the embedded cluster goes. */
function proposeVersion(facts: RepoFacts, crds: CrdFact[]): Chosen<string> | undefined {
  const cg = facts.module?.clientGo;
  let minor: number | undefined;
  let why = '';
  const m = cg ? /^v0\.(\d+)\./.exec(cg) : null;
  if (m) {
    minor = Number(m[1]);
    why = `go.mod: k8s.io/client-go ${cg} (Kubernetes 1.${minor}): the API versions the operator was built against`;
  } else if (cg) {
    minor = OLDEST_MINOR;
    why = `go.mod: k8s.io/client-go ${cg}, a release before v0.x (Kubernetes 1.17 or older); 1.${OLDEST_MINOR} is the oldest the embedded cluster serves`;
  }
  const beta = crds.filter((c) => c.apiVersion === 'apiextensions.k8s.io/v1beta1');
  if (beta.length > 0 && (minor === undefined || minor > 21)) {
    minor = 21;
    why = `${beta[0]!.file} is an apiextensions.k8s.io/v1beta1 CRD, which Kubernetes 1.22 stopped serving`;
  }
  // From 1.25 on no group-version an operator calls was removed (policy/v1beta1 and batch/v1beta1 went
  // in 1.25, apiextensions/v1beta1 in 1.22): the newest release serves what it was built against.
  if (minor === undefined || minor >= LAST_REMOVAL_MINOR) return undefined;
  if (minor < OLDEST_MINOR) why += `; 1.${OLDEST_MINOR} is the oldest release the embedded cluster serves`;
  return { value: `1.${Math.max(OLDEST_MINOR, minor)}`, why };
}

/** Why the samples before the chosen one in init's order were passed over: their CRD prunes fields of them, or refuses them. */
function passedOver(list: readonly SampleFact[], chosen: SampleFact): string {
  const before = list.slice(0, list.indexOf(chosen)).filter((s) => s.pruned === 'refused' || s.pruned.length > 0);
  if (before.length === 0) return '';
  const what = (s: SampleFact): string =>
    s.pruned === 'refused'
      ? `${s.file} (the CRD's schema refuses it)`
      : `${s.file} (the CRD's schema prunes ${s.pruned.slice(0, 3).join(', ')}${s.pruned.length > 3 ? ', ...' : ''}: the API server drops ${s.pruned.length > 1 ? 'them' : 'it'} on create, and the operator never sees ${s.pruned.length > 1 ? 'them' : 'it'})`;
  return `; not ${before.slice(0, 2).map(what).join(', nor ')}`;
}

/**
 * The repository's files of ConfigMaps and Secrets that the seeds name (a string value of a seed's
 * spec is one of their names), nearest the seed's folder first, one per name: set up before the seed,
 * as the sample's README would have the user apply them.
 */
function seedConfigFiles(seeds: readonly SampleFact[], files: readonly ConfigFileFact[]): Chosen<string>[] {
  const out: Chosen<string>[] = [];
  for (const seed of seeds) {
    const dir = posix.dirname(seed.file);
    const near = (f: ConfigFileFact): number => (posix.dirname(f.file) === dir ? 0 : f.file.startsWith(`${dir}/`) ? 1 : 2);
    const ordered = [...files].sort((a, b) => near(a) - near(b) || a.file.length - b.file.length || (a.file < b.file ? -1 : 1));
    for (const name of [...new Set(seed.strings)]) {
      const f = ordered.find((f) => f.names.includes(name));
      if (!f) continue;
      const known = out.find((o) => o.value === f.file);
      if (known) known.why += `, ${name}`;
      else out.push({ value: f.file, why: `${seed.file} names ${name}` });
    }
  }
  return out;
}

/** The whole proposal; `fileExists` answers for paths relative to the repository. */
export function proposeConfig(facts: RepoFacts, fileExists: (p: string) => boolean): InitProposal {
  const questions: string[] = [];
  // github.com/rabbitmq/cluster-operator/v2 is cluster-operator.
  const modulePath = facts.module?.path.split('/').filter((s) => !/^v\d+$/.test(s)) ?? [];
  const repoName = modulePath[modulePath.length - 1] ?? posix.basename(facts.dir);
  const name =
    repoName
      .toLowerCase()
      .replace(/[^a-z0-9-]+/g, '-')
      .replace(/^-+|-+$/g, '') || 'operator';
  const crds = chooseCrds(facts.crds);
  if (crds.length === 0) questions.push('setup: no CustomResourceDefinition found; list the CRD files the operator needs under setup');
  // A CRD its kustomization patches (and alone in its file) is set up as kustomize builds it: a patched copy beside kperturb.yaml.
  const kustomized = crds.filter((c) => c.kustomized && facts.crds.filter((o) => o.file === c.file).length === 1);
  const crdFileOf = (c: CrdFact): string => (kustomized.includes(c) ? kustomizedCrdFile(c) : c.file);
  const crdFiles = [...new Set(crds.map(crdFileOf))];
  const crdCopies: InitProposal['extraFiles'] = kustomized.map((c) => {
    const why = `${c.file} with ${c.kustomized!.patches.join(', ')} applied, as ${c.kustomized!.kustomization} does (kustomize build)`;
    return { file: kustomizedCrdFile(c), text: `# Written by kperturb init: ${why}.\n${stringify(c.kustomized!.doc)}`, why };
  });

  // Seeds: the sample of each kind from the most canonical place; the kind with the largest schema first (an operator's main resource).
  const samplesByKind = new Map<string, SampleFact[]>();
  for (const s of byScore(
    facts.samples,
    (s) => pathScore(s.file, SAMPLE_ORDER) - (PLAIN_SAMPLE.test(s.file) ? 0.5 : 0),
    (s) => s.file,
  )) {
    samplesByKind.set(s.kind, [...(samplesByKind.get(s.kind) ?? []), s]);
  }
  const crdOf = (kind: string): CrdFact | undefined => crds.find((c) => c.kind === kind);
  const kinds = [...samplesByKind.keys()].sort((a, b) => (crdOf(b)?.schemaBytes ?? 0) - (crdOf(a)?.schemaBytes ?? 0) || (a < b ? -1 : 1));
  const primary = kinds[0];
  const pick = (kind: string): SampleFact => {
    const list = samplesByKind.get(kind)!;
    const storage = crdOf(kind)?.storageVersion;
    const atStorage = (s: SampleFact): boolean => s.apiVersion.endsWith(`/${storage}`);
    // A sample the schema keeps whole before one it prunes: what the operator reads back lacks the pruned fields.
    const whole = (s: SampleFact): boolean => Array.isArray(s.pruned) && s.pruned.length === 0;
    return list.find((s) => whole(s) && atStorage(s)) ?? list.find(whole) ?? list.find(atStorage) ?? list[0]!;
  };
  const seeds = primary ? [pick(primary)] : [];
  if (!primary && crds.length > 0)
    questions.push(`seeds: no sample CR of ${crds.map((c) => c.kind).join(', ')} found; write one and list it under seeds and in the workload`);
  const otherSamples = kinds.slice(1).map((k) => pick(k).file);
  const seedConfigs = seedConfigFiles(seeds, facts.configFiles);
  const namespace = seeds[0]?.namespace ?? 'default';

  const manager = chooseManager(facts.managers, repoName);
  const main = chooseMain(facts.mains, manager, repoName);
  if (!main) questions.push('controller.command: no Go main package found; build the operator and give its binary');
  if (!manager) questions.push("controller.args: no manager Deployment found (config/manager/manager.yaml, deploy/operator.yaml); give the operator's flags");
  const { args, notes, leader } = proposeArgs(manager, main, namespace, fileExists, questions);
  const componentConfig =
    main?.flags.includes('config') && !args.some((a) => /^--?config(=|$)/.test(a))
      ? byScore(
          facts.componentConfigs,
          (c) => pathScore(c.file, [[/^config\/manager\//, 0]]),
          (c) => c.file,
        )[0]
      : undefined;
  const webhookServer = proposeWebhookServer(facts, main, componentConfig);
  const controllerFiles: InitProposal['extraFiles'] = [];
  if (componentConfig) {
    const derived = deriveComponentConfig(componentConfig, namespace, fileExists, questions, webhookServer !== undefined);
    args.push(`--config=${COMPONENT_CONFIG_FILE}`);
    notes.push(`--config=${COMPONENT_CONFIG_FILE}: a copy of ${componentConfig.file}, the component config the main package reads with --config`);
    controllerFiles.push({
      file: COMPONENT_CONFIG_FILE,
      text: derived.text,
      why: `the operator's --config, from ${componentConfig.file}`,
      controller: true,
    });
  }
  const { env, unset } = proposeEnv(facts, manager, name, namespace, questions, webhookServer !== undefined);
  const fixedPorts = (main?.literalPorts ?? []).filter((p) => !main!.flags.some((f) => isListener(main, f) && p.line.includes(`"${f}"`)));
  const noListenerFlag = !(main?.flags ?? []).some((f) => isListener(main, f));
  const bound = noListenerFlag ? fixedPorts.map((p) => ({ port: p.port, why: `:${p.port} (${p.line.slice(0, 60)})` })) : [];
  // A component config init passes sets the metrics address (off): the manager's options come from it (cass-operator: options.AndFrom(ctrl.ConfigFile())).
  const metricsOffByConfig =
    componentConfig !== undefined && isObject(componentConfig.doc.metrics) && typeof componentConfig.doc.metrics.bindAddress === 'string';
  if (noListenerFlag && main?.defaultMetricsPort && !metricsOffByConfig && !bound.some((b) => b.port === DEFAULT_METRICS_PORT))
    bound.push({
      port: DEFAULT_METRICS_PORT,
      why: `:${DEFAULT_METRICS_PORT} (controller-runtime's metrics default: its manager's options name no MetricsBindAddress)`,
    });
  // The webhook server binds its port whatever the listener flags say (they turn off metrics and probes only).
  const webhook = main?.webhookPort;
  if (webhook && !webhookServer && !bound.some((b) => b.port === webhook.port))
    bound.push({ port: webhook.port, why: `:${webhook.port} (its admission webhook server: ${webhook.line}, and the package registers webhooks)` });
  const ports =
    bound.length > 0
      ? { value: bound.map((b) => b.port), why: `${main!.dir} binds ${bound.map((b) => b.why).join(', ')} with no flag to change it` }
      : undefined;
  if (ports)
    questions.push(`controller.ports: check that ${ports.value.join(', ')} are ports the operator listens on (one plan at a time while they are fixed)`);
  const podNamespaceFile =
    facts.podNamespaceFile.length > 0
      ? {
          value: namespace,
          why: `${facts.podNamespaceFile.join(', ')} ${facts.podNamespaceFile.length > 1 ? 'read' : 'reads'} ${POD_NAMESPACE_FILE}, a file only a pod has: kperturb runs the manager where it names the seeds' namespace`,
        }
      : undefined;
  const ownPod = podNamespaceFile ? operatorPod(manager, env, namespace) : undefined;
  for (const u of unset.filter((v) => /^RELATED_IMAGE|IMAGE$/.test(v)))
    questions.push(`controller.env.${u}: the operator reads it (an image name, most likely); set it if the operator refuses to start without it`);

  const applications = proposeApplications(facts, namespace);
  const webhooks = webhookConfigs(facts.webhookConfigs, namespace);
  const sourceNote = manager ? `from ${managerSource(manager)}` : 'no manager Deployment found';
  return {
    name,
    layout: facts.layout,
    main: main
      ? { value: main.dir, why: `the Go main package ${main.usesControllerRuntime ? 'that starts a controller-runtime manager' : 'named like the operator'}` }
      : undefined,
    binary: BINARY,
    args: { value: args, why: [sourceNote, ...notes].join('; ') },
    env,
    ports,
    kubernetesVersion: proposeVersion(facts, crds),
    extraFiles: [
      ...(namespace === 'default'
        ? []
        : [
            {
              file: 'kperturb-namespace.yaml',
              text: `apiVersion: v1\nkind: Namespace\nmetadata:\n  name: ${namespace}\n`,
              why: `the seeds' namespace, ${namespace}, written by kperturb init`,
            },
          ]),
      ...(ownPod ? [ownPod] : []),
      ...(webhooks ? [webhooks] : []),
      ...(webhookServer
        ? [{ file: webhookServer.file, text: '', why: `the validating webhook configurations (${webhookServer.file})`, existing: true as const }]
        : []),
      ...seedConfigs.map((c) => ({ file: c.value, text: '', why: `${c.why}, which this file declares`, existing: true as const })),
      ...crdCopies,
      ...controllerFiles,
    ],
    crdFiles: {
      value: crdFiles,
      why: crdFiles.length > 0 ? [`the CRDs (${crds.map((c) => c.kind).join(', ')})`, ...crdCopies.map((f) => `${f.file}: ${f.why}`)].join('; ') : '',
    },
    seeds: {
      value: seeds.map((s) => s.file),
      why: primary
        ? `the sample of ${primary}${kinds.length > 1 ? ', the kind with the largest schema' : ''}${passedOver(samplesByKind.get(primary)!, seeds[0]!)}`
        : '',
    },
    otherSamples,
    namespace,
    leaderElection: leader,
    applications,
    podNamespaceFile,
    webhookServer: webhookServer && { value: { port: webhookServer.port }, why: webhookServer.why },
    unsetEnv: unset,
    questions,
  };
}

/**
 * A stub of each application the operator's code is a client of, listening where the application
 * would (matchPort: every pod and Service with its port): the operator's pods and Services are
 * named only once it runs.
 */
function proposeApplications(facts: RepoFacts, namespace: string): InitProposal['applications'] {
  const out: InitProposal['applications'] = [];
  for (const c of facts.applicationClients) {
    const app = APPLICATION_CLIENTS[c.module]!;
    if (out.some((a) => a.value.name === app.name)) continue;
    out.push({
      value: { ...app, namespace },
      why: `${c.files.slice(0, 2).join(', ')}${c.files.length > 2 ? ', ...' : ''} ${c.files.length > 1 ? 'import' : 'imports'} ${c.module}: the operator talks to ${app.name} (port ${app.port}); a stub answers on every pod and Service with that port`,
    });
  }
  return out;
}
