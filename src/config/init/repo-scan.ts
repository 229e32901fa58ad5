/**
 * What `kperturb init` reads of an operator's repository, without running anything: its CRDs, the
 * sample CRs, the manager's Deployment (command, args, env), the Go main packages (the flags they
 * define, the environment they read, ports they bind), and go.mod (the client-go release it was
 * built against). Layouts: kubebuilder and operator-sdk >= 1 (PROJECT, config/crd/bases,
 * config/samples, config/manager), operator-sdk 0.x (deploy/crds, deploy/operator.yaml,
 * cmd/manager), Helm charts' crds/ folders and plain manifests. Every fact keeps the file it came
 * from, so the proposal can say where each choice came from.
 */
import { readdirSync, readFileSync, statSync, existsSync } from 'node:fs';
import { join, relative, sep, posix, dirname } from 'node:path';
import jsonpatch from 'fast-json-patch';
import { parseAllDocuments } from 'yaml';
import { escapeRegExp } from '../../model/regexp.js';
import { customResourceSchemas, decodeCustomResource } from '../../cluster/crd-schema.js';
import type { KubeObject } from '../../model/object-key.js';

export type Layout = 'kubebuilder' | 'operator-sdk-0.x' | 'helm' | 'manifests';

export interface CrdFact {
  file: string;
  name: string;
  group: string;
  kind: string;
  /** apiextensions.k8s.io/v1 or v1beta1 */
  apiVersion: string;
  versions: string[];
  storageVersion: string | undefined;
  /** Size of the CRD's schemas as JSON: an operator's main resource has the largest. */
  schemaBytes: number;
  /**
   * The CRD as `kustomize build` of its folder makes it, when that folder's kustomization applies
   * JSON 6902 patches to it (cass-operator's config/crd removes `spec.config`'s schema, a string,
   * so that the object its samples give passes): the patch files, and the patched CRD.
   */
  kustomized?: { kustomization: string; patches: string[]; doc: Record<string, unknown> };
}

export interface SampleFact {
  file: string;
  apiVersion: string;
  kind: string;
  name: string;
  namespace: string | undefined;
  /**
   * The fields of the sample its CRD's structural schema prunes (the API server drops them on
   * create), or `refused` when the codec refuses it: cass-operator's config/samples puts a pod
   * template's `containers` beside its `spec`, and the operator's update of the CR then lacks them.
   */
  pruned: string[] | 'refused';
  /** The string values of its spec: the names of objects it refers to are among them. */
  strings: string[];
}

/**
 * A file of the repository that holds only ConfigMaps and Secrets, with their names: a sample that
 * names one needs it (OT-CONTAINER-KIT/redis-operator's example/redis-cluster.yaml mounts the
 * ConfigMap redis-external-config, which example/external_config/configmap.yaml declares; without it
 * the pods wait in ContainerCreating).
 */
export interface ConfigFileFact {
  file: string;
  names: string[];
}

export interface EnvFact {
  name: string;
  value?: string;
  /** `fieldRef:metadata.namespace`, `secretKeyRef`, ... */
  valueFrom?: string;
}

export interface ManagerFact {
  file: string;
  deployment: string;
  namespace: string | undefined;
  container: string;
  /** The container's image (a stand-in for the operator's own Pod names it). */
  image: string | undefined;
  command: string[];
  args: string[];
  env: EnvFact[];
  /**
   * The strategic merge patches its folder's kustomization applies to it (`patchesStrategicMerge`,
   * and `patches` entries without a target), merged in as `kustomize build` does: cockroach-operator's
   * config/manager/patches/image.yaml adds the RELATED_IMAGE_COCKROACH_* env the operator takes
   * each cockroachDBVersion's image from.
   */
  patches?: string[];
}

export interface MainPackageFact {
  /** `./cmd/manager`, `.` */
  dir: string;
  usesControllerRuntime: boolean;
  /** Flag names the package defines (flag and pflag). */
  flags: string[];
  /** What each flag's definition says, where the source gives it as literals: its type, default and usage text. */
  flagDefs: FlagDef[];
  /** Port numbers written as literals in the package, with the line they came from. */
  literalPorts: { port: number; line: string }[];
  /** The package sets controller-runtime's LeaderElectionNamespace (else, outside a pod, the manager cannot find one). */
  leaderElectionNamespace: boolean;
  /**
   * The package makes a controller-runtime manager whose options name no metrics address, so it
   * serves metrics on controller-runtime's default ":8080" (pkg/metrics DefaultBindAddress since
   * v0.2; pkg/metrics/server since v0.16): percona-xtradb-cluster-operator's cmd/manager/main.go.
   */
  defaultMetricsPort: boolean;
  /**
   * The cobra subcommand that runs the operator, when main's root command runs nothing itself and
   * only dispatches (elastic/cloud-on-k8s: `elastic-operator manager`; without it the binary prints
   * its usage and exits 0), with the file that defines it.
   */
  subcommand: { name: string; file: string } | undefined;
  /**
   * The port of the admission webhook server, when the package registers webhooks with its manager
   * (`SetupWebhookWithManager`, `GetWebhookServer()`) and gives the manager's options a literal
   * `Port:` (cockroach-operator: `Port: 9443`; the server binds it at start whatever the flags say).
   */
  webhookPort: { port: number; line: string } | undefined;
  /**
   * The package registers admission webhooks with its manager the kubebuilder way, a type's
   * `SetupWebhookWithManager` (serving what config/webhook declares, with the certificate it is
   * given); `GetWebhookServer()` alone (percona's operators make and register their own) is not it.
   */
  setsUpWebhooks: boolean;
}

/** A flag's definition: `flag.StringVar(&c.ListenAddr, "listen-address", ":9710", "Address to listen on for metrics.")`. */
export interface FlagDef {
  name: string;
  /** `String`, `Bool`, `Int`, ... (the flag package's function, without Var and P). */
  type: string;
  /** A string literal's value, or the expression as written (`true`, `8080`, `kubehome`); undefined when the call is not all literals. */
  default?: string;
  usage?: string;
}

export interface GoModuleFact {
  path: string;
  clientGo: string | undefined;
  controllerRuntime: string | undefined;
  vendored: boolean;
  /** go.mod or go.sum names modules the Go module proxy refuses (vanity paths). */
  vanityModules: string[];
  /** go.mod or go.sum names modules of GO_TOOLCHAIN_FIXES at a version before the fixed one. */
  toolchainFixes: string[];
}

/**
 * A controller-runtime component config (ControllerManagerConfiguration and the operators' own
 * kinds built on it: a document with `health.healthProbeBindAddress` or `metrics.bindAddress`), the
 * file kubebuilder v3 scaffolds mount from a ConfigMap and pass as `--config`.
 */
export interface ComponentConfigFact {
  file: string;
  doc: Record<string, unknown>;
}

/**
 * An admission webhook configuration of the repository's manifests that the operator's code names
 * (cockroach-operator's SetupWebhookTLS gets `cockroach-operator-mutating-webhook-configuration` and
 * patches its caBundle at start, and exits when it is not there): `name` is the one the code uses,
 * the manifest's own or the one a kustomization's namePrefix makes of it.
 */
export interface WebhookConfigFact {
  file: string;
  name: string;
  /** The kustomization whose namePrefix made the name, if one did. */
  namePrefixFrom: string | undefined;
  /** The Go files that name it. */
  namedIn: string[];
  doc: Record<string, unknown>;
}

export interface RepoFacts {
  dir: string;
  layout: Layout;
  module: GoModuleFact | undefined;
  crds: CrdFact[];
  samples: SampleFact[];
  managers: ManagerFact[];
  mains: MainPackageFact[];
  /** Environment variable names the operator's Go code reads (os.Getenv / os.LookupEnv, and string constants named like *EnvVar). */
  envReads: string[];
  /**
   * Of those, the ones read as a kubeconfig path (a KUBE_CONFIG-like name, in a file that builds a
   * client configuration with clientcmd): rabbitmq/cluster-operator's main.go passes
   * os.Getenv("KUBE_CONFIG") to clientcmd.BuildConfigFromFlags, else takes the in-cluster configuration.
   */
  kubeconfigEnv: string[];
  /** Go client libraries of applications kperturb can stub (APPLICATION_CLIENTS) that the operator's code imports, with the files. */
  applicationClients: { module: string; files: string[] }[];
  componentConfigs: ComponentConfigFact[];
  /** Go files (not tests) that read the pod's namespace file (POD_NAMESPACE_FILE), which only a pod has. */
  podNamespaceFile: string[];
  webhookConfigs: WebhookConfigFact[];
  /** Manifest files (not tests) that declare admission webhook configurations, with the kinds each declares. */
  webhookManifests: { file: string; kinds: string[] }[];
  configFiles: ConfigFileFact[];
}

/** Folders never read: dependencies, build output, VCS data, kperturb's own output. */
/**
 * Go clients of the applications kperturb has a stub protocol for: an operator that imports one talks
 * to that application (pravega's zookeeper-operator stores the cluster size in a znode before every
 * scale change, and refuses to scale without an answer).
 */
export const APPLICATION_CLIENTS: Record<string, { name: string; protocol: 'zookeeper'; port: number }> = {
  'github.com/samuel/go-zookeeper/zk': { name: 'zookeeper', protocol: 'zookeeper', port: 2181 },
  'github.com/go-zookeeper/zk': { name: 'zookeeper', protocol: 'zookeeper', port: 2181 },
};

const SKIP_DIRS = new Set(['.git', 'vendor', 'node_modules', 'third_party', 'testdata', '.kperturb', 'bin', 'dist', '.github', '.idea', '.vscode']);
const MAX_FILES = 20000;
const MAX_YAML_BYTES = 2 * 1024 * 1024;

/** Module paths that 2019-20 Kubernetes libraries require and the Go module proxy refuses, with the GitHub twin it serves. */
export const VANITY_MODULES: Record<string, string> = {
  'vbom.ml/util': 'github.com/fvbommel/util@v0.0.0-20160121211510-db5cfe13f5cc',
  'bou.ke/monkey': 'github.com/bouk/monkey@v1.0.1',
};

/**
 * Modules whose old versions crash when built with a current Go, with the first version that works:
 * modern-go/reflect2 before v1.0.2 (under json-iterator, which client-go < 0.23 and controller-runtime
 * < 0.11 use) iterates maps through runtime internals Go 1.18 changed, and panics with a nil pointer
 * dereference in reflect.mapiternext on the first map it encodes.
 */
export const GO_TOOLCHAIN_FIXES: Record<string, string> = {
  'github.com/modern-go/reflect2': 'github.com/modern-go/reflect2@v1.0.2',
};

function walk(dir: string): string[] {
  const out: string[] = [];
  const stack = [dir];
  while (stack.length > 0 && out.length < MAX_FILES) {
    const d = stack.pop()!;
    let entries;
    try {
      entries = readdirSync(d, { withFileTypes: true });
    } catch {
      continue;
    }
    entries.sort((a, b) => (a.name < b.name ? 1 : a.name > b.name ? -1 : 0));
    for (const e of entries) {
      if (e.isDirectory()) {
        if (!SKIP_DIRS.has(e.name)) stack.push(join(d, e.name));
      } else if (e.isFile()) out.push(join(d, e.name));
    }
  }
  return out.map((f) => relative(dir, f).split(sep).join(posix.sep)).sort();
}

function readText(file: string, limit = MAX_YAML_BYTES): string | undefined {
  try {
    if (statSync(file).size > limit) return undefined;
    return readFileSync(file, 'utf8');
  } catch {
    return undefined;
  }
}

type Doc = Record<string, unknown>;
const isObject = (v: unknown): v is Doc => typeof v === 'object' && v !== null && !Array.isArray(v);
const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);

/** The YAML documents of a file, or none when it is templated (Helm) or not YAML. */
function yamlDocs(text: string): Doc[] {
  if (text.includes('{{')) return [];
  try {
    return parseAllDocuments(text)
      .flatMap((d) => ('errors' in d && d.errors.length === 0 ? [d.toJSON() as unknown] : []))
      .flatMap((d) => (isObject(d) && d.kind === 'List' && Array.isArray(d.items) ? d.items : [d]))
      .filter(isObject);
  } catch {
    return [];
  }
}

/**
 * The JSON 6902 patches a kustomization applies to a CRD among its resources (`patchesJson6902`, and
 * `patches` entries whose file is a list of operations), applied in order to that CRD's document, as
 * `kustomize build` does. A patch that does not apply leaves the CRD as it is (kustomize would fail).
 */
function applyKustomizePatches(root: string, file: string, crds: CrdFact[], crdDocs: ReadonlyMap<CrdFact, Doc>): void {
  const k = yamlDocs(readText(join(root, file)) ?? '')[0];
  if (!k) return;
  const base = posix.dirname(file);
  const resources = new Set((Array.isArray(k.resources) ? k.resources : []).filter((r) => typeof r === 'string').map((r) => posix.join(base, r as string)));
  const entries = [...(Array.isArray(k.patchesJson6902) ? k.patchesJson6902 : []), ...(Array.isArray(k.patches) ? k.patches : [])];
  for (const e of entries) {
    if (!isObject(e) || !isObject(e.target) || e.target.kind !== 'CustomResourceDefinition' || typeof e.path !== 'string') continue;
    const target = e.target;
    const crd = crds.find((c) => c.name === target.name && resources.has(c.file));
    const doc = crd && (crd.kustomized?.doc ?? crdDocs.get(crd));
    const patchFile = posix.join(base, e.path);
    const ops = parseAllDocuments(readText(join(root, patchFile)) ?? '')[0]?.toJSON() as unknown;
    if (!crd || !doc || !Array.isArray(ops)) continue;
    try {
      const patched = jsonpatch.applyPatch(structuredClone(doc), ops as jsonpatch.Operation[], true, false).newDocument;
      crd.kustomized = { kustomization: file, patches: [...(crd.kustomized?.patches ?? []), patchFile], doc: patched };
    } catch {
      // kustomize build fails on it too; the CRD stays as its file gives it.
    }
  }
}

/** A container of a Deployment patch merged into the manager's, as a strategic merge patch does: env by name, the rest replaced. */
function mergeContainer(m: ManagerFact, c: Doc): void {
  if (Array.isArray(c.command)) m.command = c.command.map(String);
  if (Array.isArray(c.args)) m.args = c.args.map(String);
  if (typeof c.image === 'string') m.image = c.image;
  for (const e of envFacts(c.env)) {
    const i = m.env.findIndex((x) => x.name === e.name);
    if (i >= 0) m.env[i] = e;
    else m.env.push(e);
  }
}

/**
 * The strategic merge patches a kustomization applies to a Deployment among its resource files
 * (`patchesStrategicMerge`, and `patches` entries whose file is a Deployment), merged into that
 * Deployment's manager facts by container name, in order. Returns the patch files (they are not
 * Deployments of their own).
 */
function applyKustomizeManagerPatches(root: string, file: string, managers: ManagerFact[]): string[] {
  const k = yamlDocs(readText(join(root, file)) ?? '')[0];
  if (!k) return [];
  const base = posix.dirname(file);
  const list = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);
  const resources = new Set(list(k.resources).flatMap((r) => (typeof r === 'string' ? [posix.join(base, r)] : [])));
  const patchFiles = [
    ...list(k.patchesStrategicMerge).flatMap((p) => (typeof p === 'string' ? [p] : [])),
    ...list(k.patches).flatMap((p) => (isObject(p) && typeof p.path === 'string' && p.target === undefined ? [p.path] : [])),
  ].map((p) => posix.join(base, p));
  const used: string[] = [];
  for (const patchFile of patchFiles) {
    for (const d of yamlDocs(readText(join(root, patchFile)) ?? '')) {
      const name = isObject(d.metadata) ? str(d.metadata.name) : undefined;
      const podSpec = isObject(d.spec) && isObject(d.spec.template) && isObject(d.spec.template.spec) ? d.spec.template.spec : {};
      if (d.kind !== 'Deployment' || !name) continue;
      used.push(patchFile);
      for (const c of list(podSpec.containers).filter(isObject)) {
        for (const m of managers.filter((m) => resources.has(m.file) && m.deployment === name && m.container === c.name)) {
          mergeContainer(m, c);
          m.patches = [...(m.patches ?? []), patchFile];
        }
      }
    }
  }
  return used;
}

const WEBHOOK_CONFIG_KINDS = new Set(['MutatingWebhookConfiguration', 'ValidatingWebhookConfiguration']);

/** The names a webhook configuration can have once built: its own, and each namePrefix of a kustomization whose resources hold its file. */
function webhookConfigNames(root: string, file: string, name: string, kustomizations: readonly string[]): { name: string; prefixFrom: string | undefined }[] {
  const out: { name: string; prefixFrom: string | undefined }[] = [{ name, prefixFrom: undefined }];
  for (const k of kustomizations) {
    const doc = yamlDocs(readText(join(root, k)) ?? '')[0];
    const prefix = doc && str(doc.namePrefix);
    if (!doc || !prefix || !Array.isArray(doc.resources)) continue;
    const base = posix.dirname(k);
    const covers = doc.resources.some((r) => typeof r === 'string' && (posix.join(base, r) === file || file.startsWith(`${posix.join(base, r)}/`)));
    if (covers) out.push({ name: `${prefix}${name}`, prefixFrom: k });
  }
  return out;
}

/** The fields of `doc` that the CRD's schema for its version prunes, as the API server would on create (nothing without a structural schema). */
function prunedFields(doc: Doc, crd: Doc | undefined): string[] | 'refused' {
  const schemas = crd && customResourceSchemas(crd as KubeObject);
  const version = String(doc.apiVersion).split('/')[1] ?? '';
  if (!schemas || !schemas.versions.has(version)) return [];
  try {
    return decodeCustomResource(schemas, structuredClone(doc) as KubeObject, version, true).filter((p) => !p.startsWith('metadata.'));
  } catch {
    return 'refused';
  }
}

function stringValues(v: unknown, out: string[] = []): string[] {
  if (typeof v === 'string') out.push(v);
  else if (Array.isArray(v)) for (const x of v) stringValues(x, out);
  else if (isObject(v)) for (const x of Object.values(v)) stringValues(x, out);
  return out;
}

function crdFact(file: string, d: Doc): CrdFact | undefined {
  const spec = isObject(d.spec) ? d.spec : undefined;
  const names = spec && isObject(spec.names) ? spec.names : undefined;
  const group = str(spec?.group);
  const kind = str(names?.kind);
  if (!spec || !group || !kind) return undefined;
  const versions: string[] = [];
  let storageVersion: string | undefined;
  if (Array.isArray(spec.versions)) {
    for (const v of spec.versions) {
      if (!isObject(v) || !str(v.name)) continue;
      versions.push(v.name as string);
      if (v.storage === true) storageVersion = v.name as string;
    }
  }
  const single = str(spec.version);
  if (single && !versions.includes(single)) versions.push(single);
  storageVersion ??= single ?? versions[0];
  const meta = isObject(d.metadata) ? d.metadata : {};
  // v1beta1 keeps one schema for all versions in spec.validation, and may list the versions beside it
  // without schemas (instaclustr cassandra-operator): both count.
  const schemaBytes = JSON.stringify([spec.versions ?? [], spec.validation ?? {}]).length;
  return {
    file,
    name: str(meta.name) ?? `${str(names?.plural) ?? kind.toLowerCase()}.${group}`,
    group,
    kind,
    apiVersion: String(d.apiVersion),
    versions,
    storageVersion,
    schemaBytes,
  };
}

function isComponentConfig(d: Doc): boolean {
  const health = isObject(d.health) ? d.health : {};
  const metrics = isObject(d.metrics) ? d.metrics : {};
  return typeof d.kind === 'string' && (typeof health.healthProbeBindAddress === 'string' || typeof metrics.bindAddress === 'string');
}

function envFacts(env: unknown): EnvFact[] {
  if (!Array.isArray(env)) return [];
  return env.filter(isObject).flatMap((e): EnvFact[] => {
    const name = str(e.name);
    if (!name) return [];
    if (e.value !== undefined) return [{ name, value: String(e.value) }];
    const from = isObject(e.valueFrom) ? e.valueFrom : {};
    const fieldRef = isObject(from.fieldRef) ? str(from.fieldRef.fieldPath) : undefined;
    return [{ name, valueFrom: fieldRef ? `fieldRef:${fieldRef}` : (Object.keys(from)[0] ?? 'unknown') }];
  });
}

function managerFacts(file: string, d: Doc): ManagerFact[] {
  if (d.kind !== 'Deployment') return [];
  const meta = isObject(d.metadata) ? d.metadata : {};
  const spec = isObject(d.spec) ? d.spec : {};
  const template = isObject(spec.template) ? spec.template : {};
  const podSpec = isObject(template.spec) ? template.spec : {};
  const containers = Array.isArray(podSpec.containers) ? podSpec.containers.filter(isObject) : [];
  return containers.flatMap((c) => {
    const command = Array.isArray(c.command) ? c.command.map(String) : [];
    const args = Array.isArray(c.args) ? c.args.map(String) : [];
    // A sidecar (kube-rbac-proxy) is not the manager.
    if (/rbac-proxy/.test(String(c.image ?? '')) || /rbac-proxy/.test(String(c.name ?? ''))) return [];
    return [
      {
        file,
        deployment: str(meta.name) ?? '',
        namespace: str(meta.namespace),
        container: str(c.name) ?? '',
        image: str(c.image),
        command,
        args,
        env: envFacts(c.env),
      },
    ];
  });
}

/**
 * A flag's definition; its name a string literal (group 3) or a constant (group 4, `operator.MetricsPortFlag`:
 * elastic/cloud-on-k8s names every flag by a constant of pkg/controller/common/operator/flags.go).
 */
const FLAG_RE =
  /\b(?:flag|pflag|fs|flags|f|cmd\.Flags\(\)|cmd\.PersistentFlags\(\)|pflag\.CommandLine|flag\.CommandLine)\.(String|Bool|Int|Int32|Int64|Uint|Duration|Float64|StringSlice)(?:Var)?(P)?\(\s*(?:&[\w.]+\s*,\s*)?(?:"([A-Za-z0-9][\w.-]*)"|(?:[A-Za-z_]\w*\.)?([A-Za-z_]\w*)\s*,)/g;
/** A string constant (`MetricsPortFlag = "metrics-port"`, in a const block or not). */
const STRING_CONST_RE = /^\s*(?:const\s+)?([A-Za-z_]\w*)\s*(?:string\s*)?=\s*"([A-Za-z0-9][\w.-]*)"\s*(?:\/\/.*)?$/gm;
/** After a flag's name: the shorthand (P variants), the default (a string literal or a simple expression) and the usage string. */
const FLAG_SHORTHAND_RE = /^\s*,\s*"[^"]*"/;
const FLAG_REST_RE = /^\s*,\s*("(?:[^"\\\n]|\\.)*"|[^,"()\n]+?)\s*,\s*"((?:[^"\\\n]|\\.)*)"/;

function flagDef(m: RegExpMatchArray, name: string, text: string): FlagDef {
  // A constant's match ends past its comma: the rest is read from the name's end, as for a literal.
  let after = text.slice(m.index! + m[0].length - (m[4] ? 1 : 0), m.index! + m[0].length + 1000);
  if (m[2]) after = after.replace(FLAG_SHORTHAND_RE, '');
  const rest = FLAG_REST_RE.exec(after);
  const def: FlagDef = { name, type: m[1]! };
  if (!rest) return def;
  const raw = rest[1]!.trim();
  def.default = raw.startsWith('"') ? raw.slice(1, -1) : raw;
  def.usage = rest[2]!;
  return def;
}
/** The namespace file a pod's service account mounts; outside a pod it does not exist. */
export const POD_NAMESPACE_FILE = '/var/run/secrets/kubernetes.io/serviceaccount/namespace';
const ENV_RE = /\bos\.(?:Getenv|LookupEnv)\(\s*"([A-Za-z_][A-Za-z0-9_]*)"\s*\)/g;
const ENV_CONST_RE = /\b\w*(?:EnvVar|EnvVariable|Env|EnvName)\w*\s*(?:string\s*)?=\s*"([A-Z][A-Z0-9_]+)"/g;
/** An environment variable named as a kubeconfig path other than KUBECONFIG itself (which kperturb sets). */
const KUBECONFIG_ENV = /^(KUBE_CONFIG|KUBECONFIG_PATH|KUBE_CONFIG_PATH|KUBECONFIG_FILE|KUBE_CONFIG_FILE)$/;
const PORT_LINE_RE = /(metric|probe|health|pprof|webhook|port)/i;
/** A controller-runtime manager made (`ctrl.NewManager(`, `manager.New(`), and options that name its metrics address. */
const NEW_MANAGER_RE = /\b(?:ctrl|controllerruntime|manager)\.(?:NewManager|New)\(/;
const METRICS_ADDRESS_RE = /\bMetricsBindAddress\b|\bMetrics\s*:|metricsserver\.Options/;
const PORT_RE = /(?:":(\d{2,5})"|\b\w*[Pp]ort\w*\s*(?:int32|int)?\s*=\s*(\d{2,5})\b)/g;

/** At most this many of the module's own packages are read behind a main package. */
const MAX_IMPORTED_PACKAGES = 64;

/**
 * The Go files of the module's own packages a main package imports, directly or through each other
 * (`packages`: every package directory of the repository and its files): a thin main that runs a
 * cobra command defined elsewhere (OT-CONTAINER-KIT/redis-operator v0.26.0: internal/cmd/manager)
 * registers its flags and starts its manager there.
 */
function importedFiles(root: string, mainFiles: string[], module: string | undefined, packages: Map<string, string[]>): string[] {
  if (!module) return [];
  const out: string[] = [];
  const seen = new Set<string>();
  const queue = [...mainFiles];
  const importRe = new RegExp(`"${escapeRegExp(module)}/([^"]+)"`, 'g');
  while (queue.length > 0 && seen.size < MAX_IMPORTED_PACKAGES) {
    const text = readText(join(root, queue.shift()!), 1024 * 1024) ?? '';
    for (const m of text.matchAll(importRe)) {
      const dir = m[1]!;
      if (seen.has(dir) || !packages.has(dir)) continue;
      seen.add(dir);
      out.push(...packages.get(dir)!);
      queue.push(...packages.get(dir)!);
    }
  }
  return out;
}

/** The body of the brace block that opens at `open` (the index of its `{`), or the rest of the text. */
function braceBlock(text: string, open: number): string {
  let depth = 0;
  for (let i = open; i < text.length; i++) {
    if (text[i] === '{') depth++;
    else if (text[i] === '}' && --depth === 0) return text.slice(open, i + 1);
  }
  return text.slice(open);
}

interface CobraCommand {
  name: string;
  file: string;
  /** It has a Run or RunE of its own (a root without one only dispatches to its subcommands). */
  runs: boolean;
}

/** The `&cobra.Command{...}` literals of a file: their `Use` (its first word) and whether they run. */
function cobraCommands(file: string, text: string): CobraCommand[] {
  const out: CobraCommand[] = [];
  for (const m of text.matchAll(/&cobra\.Command\s*{/g)) {
    const block = braceBlock(text, m.index! + m[0].length - 1);
    const use = /\bUse:\s*"([^"\s]*)/.exec(block)?.[1] ?? '';
    out.push({ name: use, file, runs: /\bRunE?\s*:/.test(block) });
  }
  return out;
}

/**
 * The subcommand to run when main's root cobra command only dispatches (no Run, subcommands added):
 * of the commands that run, one in a package that makes a controller-runtime manager, else one named
 * like a manager; undefined when main runs a command itself or none fits.
 */
function cobraSubcommand(root: string, mainFiles: string[], imported: string[]): MainPackageFact['subcommand'] {
  const texts = new Map([...mainFiles, ...imported].map((f) => [f, readText(join(root, f), 1024 * 1024) ?? '']));
  const roots = mainFiles.flatMap((f) => cobraCommands(f, texts.get(f)!));
  if (roots.length === 0 || roots.some((c) => c.runs) || !mainFiles.some((f) => texts.get(f)!.includes('.AddCommand('))) return undefined;
  const makesManager = (file: string): boolean => [...texts].some(([f, text]) => dirname(f) === dirname(file) && NEW_MANAGER_RE.test(text));
  const score = (c: CobraCommand): number => (makesManager(c.file) ? 2 : 0) + (/^(manager|operator|controller|run|start|serve)$/.test(c.name) ? 1 : 0);
  const runners = imported.flatMap((f) => cobraCommands(f, texts.get(f)!)).filter((c) => c.runs && c.name !== '' && score(c) > 0);
  return runners.sort((a, b) => score(b) - score(a) || (a.name < b.name ? -1 : 1)).map(({ name, file }) => ({ name, file }))[0];
}

/** The string constants of the files, by name: flags named by a constant are read through it. */
function stringConstants(texts: string[]): Map<string, string> {
  const out = new Map<string, string>();
  for (const text of texts) for (const m of text.matchAll(STRING_CONST_RE)) if (!out.has(m[1]!)) out.set(m[1]!, m[2]!);
  return out;
}

function scanGoPackage(root: string, dir: string, files: string[], imported: string[]): MainPackageFact {
  const flags = new Map<string, FlagDef>();
  const literalPorts: { port: number; line: string }[] = [];
  let usesControllerRuntime = false;
  let leaderElectionNamespace = false;
  let makesManager = false;
  let namesMetricsAddress = false;
  let registersWebhooks = false;
  let setsUpWebhooks = false;
  let webhookPort: { port: number; line: string } | undefined;
  const constants = stringConstants([...files, ...imported].map((f) => readText(join(root, f), 1024 * 1024) ?? ''));
  for (const f of [...files, ...imported]) {
    const text = readText(join(root, f), 1024 * 1024) ?? '';
    if (text.includes('"sigs.k8s.io/controller-runtime')) usesControllerRuntime = true;
    if (NEW_MANAGER_RE.test(text)) makesManager = true;
    if (METRICS_ADDRESS_RE.test(text)) namesMetricsAddress = true;
    if (/\.SetupWebhookWithManager\(|\.GetWebhookServer\(\)/.test(text)) registersWebhooks = true;
    if (/\.SetupWebhookWithManager\(/.test(text)) setsUpWebhooks = true;
    const portOption = files.includes(f) ? /^\s*Port:\s*(\d{2,5}),/m.exec(text) : null;
    if (portOption && !webhookPort) webhookPort = { port: Number(portOption[1]), line: `Port: ${portOption[1]}` };
    if (/\bLeaderElectionNamespace\s*(:|=)/.test(text)) leaderElectionNamespace = true;
    for (const m of text.matchAll(FLAG_RE)) {
      const name = m[3] ?? constants.get(m[4]!);
      if (name !== undefined && !flags.has(name)) flags.set(name, flagDef(m, name, text));
    }
    // Ports only where main is: the packages behind it hold their own servers' defaults too.
    if (!files.includes(f)) continue;
    for (const line of text.split('\n')) {
      if (!PORT_LINE_RE.test(line) || /^\s*\/\//.test(line)) continue;
      for (const m of line.matchAll(PORT_RE)) {
        const port = Number(m[1] ?? m[2]);
        if (port >= 1024 && port <= 65535 && !literalPorts.some((p) => p.port === port)) literalPorts.push({ port, line: line.trim() });
      }
    }
  }
  const names = [...flags.keys()].sort();
  return {
    dir: dir === '.' ? '.' : `./${dir}`,
    usesControllerRuntime,
    flags: names,
    flagDefs: names.map((n) => flags.get(n)!),
    literalPorts,
    leaderElectionNamespace,
    defaultMetricsPort: usesControllerRuntime && makesManager && !namesMetricsAddress,
    subcommand: cobraSubcommand(root, files, imported),
    webhookPort: registersWebhooks ? webhookPort : undefined,
    setsUpWebhooks,
  };
}

/** Compares `v1.2.3` style versions by their numbers (pre-release and build suffixes ignored). */
function compareSemver(a: string, b: string): number {
  const nums = (v: string) =>
    v
      .replace(/^v/, '')
      .split(/[-+]/)[0]!
      .split('.')
      .map((n) => Number(n) || 0);
  const [x, y] = [nums(a), nums(b)];
  for (let i = 0; i < 3; i++) if ((x[i] ?? 0) !== (y[i] ?? 0)) return (x[i] ?? 0) - (y[i] ?? 0);
  return 0;
}

function goModule(root: string): GoModuleFact | undefined {
  const mod = readText(join(root, 'go.mod'));
  if (mod === undefined) return undefined;
  const sum = readText(join(root, 'go.sum'), 16 * 1024 * 1024) ?? '';
  // A replace directive of the module by another version of itself wins (cockroach-operator requires
  // client-go v9.0.0+incompatible and replaces it by v0.20.2).
  const version = (path: string): string | undefined => {
    const p = path.replace(/\./g, '\\.');
    const replaced = new RegExp(`^\\s*(?:replace\\s+)?${p}(?:\\s+v\\S+)?\\s+=>\\s+${p}\\s+(v[^\\s]+)`, 'm').exec(mod)?.[1];
    return replaced ?? new RegExp(`^\\s*(?:require\\s+)?${p}\\s+(v[^\\s]+)`, 'm').exec(mod)?.[1];
  };
  return {
    path: /^module\s+(\S+)/m.exec(mod)?.[1] ?? '',
    clientGo: version('k8s.io/client-go'),
    controllerRuntime: version('sigs.k8s.io/controller-runtime'),
    vendored: existsSync(join(root, 'vendor', 'modules.txt')),
    vanityModules: Object.keys(VANITY_MODULES).filter((m) => mod.includes(m) || sum.includes(`${m} `)),
    // Required before the fixed version, or only in go.sum (an old go.mod that lists no indirect module).
    toolchainFixes: Object.keys(GO_TOOLCHAIN_FIXES).filter((m) => {
      const required = version(m);
      return required !== undefined ? compareSemver(required, GO_TOOLCHAIN_FIXES[m]!.split('@')[1]!) < 0 : sum.includes(`${m} `);
    }),
  };
}

/** Reads the repository at `dir` (nothing is run or written). */
export function scanOperatorRepo(dir: string): RepoFacts {
  const files = walk(dir);
  const crds: CrdFact[] = [];
  const objects: { file: string; doc: Doc }[] = [];
  const managers: ManagerFact[] = [];
  const componentConfigs: ComponentConfigFact[] = [];
  const crdDocs = new Map<CrdFact, Doc>();
  const webhookDocs: { file: string; name: string; doc: Doc }[] = [];
  const configFiles: ConfigFileFact[] = [];
  for (const f of files) {
    if (!/\.ya?ml$/.test(f)) continue;
    const text = readText(join(dir, f));
    if (text === undefined) continue;
    const docs = yamlDocs(text);
    if (docs.length > 0 && docs.every((d) => d.apiVersion === 'v1' && (d.kind === 'ConfigMap' || d.kind === 'Secret')) && !/(^|\/)(tests?|e2e|hack)\//.test(f))
      configFiles.push({ file: f, names: docs.flatMap((d) => (isObject(d.metadata) && str(d.metadata.name) ? [str(d.metadata.name)!] : [])) });
    for (const d of docs) {
      if (d.kind === 'CustomResourceDefinition' && String(d.apiVersion).startsWith('apiextensions.k8s.io/')) {
        const c = crdFact(f, d);
        if (c) crds.push(c);
        if (c) crdDocs.set(c, d);
      } else if (WEBHOOK_CONFIG_KINDS.has(String(d.kind)) && String(d.apiVersion).startsWith('admissionregistration.k8s.io/')) {
        const name = isObject(d.metadata) ? str(d.metadata.name) : undefined;
        if (name) webhookDocs.push({ file: f, name, doc: d });
      } else if (isComponentConfig(d)) {
        componentConfigs.push({ file: f, doc: d });
      } else if (typeof d.apiVersion === 'string' && typeof d.kind === 'string') {
        objects.push({ file: f, doc: d });
        managers.push(...managerFacts(f, d));
      }
    }
  }
  const managerPatches = new Set<string>();
  for (const f of files) {
    if (!/(^|\/)kustomization\.ya?ml$/.test(f)) continue;
    applyKustomizePatches(dir, f, crds, crdDocs);
    for (const p of applyKustomizeManagerPatches(dir, f, managers)) managerPatches.add(p);
  }
  const kinds = new Set(crds.map((c) => `${c.group}/${c.kind}`));
  const crdDoc = (group: string, kind: string): Doc | undefined => {
    const c = crds.find((c) => c.group === group && c.kind === kind);
    return c && (c.kustomized?.doc ?? crdDocs.get(c));
  };
  const samples: SampleFact[] = objects.flatMap(({ file, doc }) => {
    const group = String(doc.apiVersion).split('/')[0]!;
    if (!kinds.has(`${group}/${String(doc.kind)}`)) return [];
    const meta = isObject(doc.metadata) ? doc.metadata : {};
    const name = str(meta.name);
    if (!name) return [];
    const pruned = prunedFields(doc, crdDoc(group, String(doc.kind)));
    return [
      { file, apiVersion: String(doc.apiVersion), kind: String(doc.kind), name, namespace: str(meta.namespace), pruned, strings: stringValues(doc.spec) },
    ];
  });

  const kustomizations = files.filter((f) => /(^|\/)kustomization\.ya?ml$/.test(f));
  const webhookNames = webhookDocs.flatMap((w) =>
    webhookConfigNames(dir, w.file, w.name, kustomizations).map((n) => ({ ...w, ...n, namedIn: [] as string[] })),
  );
  const goFiles = files.filter((f) => f.endsWith('.go') && !f.endsWith('_test.go'));
  const byDir = new Map<string, string[]>();
  const packages = new Map<string, string[]>();
  const envReads = new Set<string>();
  const kubeconfigEnv = new Set<string>();
  const podNamespaceFile: string[] = [];
  const clients = new Map<string, string[]>();
  for (const f of goFiles) {
    const text = readText(join(dir, f), 1024 * 1024) ?? '';
    if (!/(^|\/)(tests?|e2e|hack)\//.test(f))
      for (const m of Object.keys(APPLICATION_CLIENTS)) if (text.includes(`"${m}"`)) clients.set(m, [...(clients.get(m) ?? []), f]);
    if (text.includes(`"${POD_NAMESPACE_FILE}"`) && !/(^|\/)(tests?|e2e|hack)\//.test(f)) podNamespaceFile.push(f);
    if (!/(^|\/)(tests?|e2e|hack)\//.test(f)) for (const w of webhookNames) if (text.includes(`"${w.name}"`)) w.namedIn.push(f);
    for (const m of text.matchAll(ENV_RE)) {
      envReads.add(m[1]!);
      if (KUBECONFIG_ENV.test(m[1]!) && text.includes('clientcmd.')) kubeconfigEnv.add(m[1]!);
    }
    for (const m of text.matchAll(ENV_CONST_RE)) envReads.add(m[1]!);
    const d = dirname(f);
    packages.set(d, [...(packages.get(d) ?? []), f]);
    if (/^package main\b/m.test(text)) byDir.set(d, [...(byDir.get(d) ?? []), f]);
  }
  const module = /^module\s+(\S+)/m.exec(readText(join(dir, 'go.mod')) ?? '')?.[1];
  const mains = [...byDir.entries()]
    .filter(([, fs]) => fs.some((f) => /\bfunc main\(\)/.test(readText(join(dir, f), 1024 * 1024) ?? '')))
    .map(([d, fs]) => scanGoPackage(dir, d, fs, importedFiles(dir, fs, module, packages)));

  const has = (p: string): boolean => existsSync(join(dir, p));
  const layout: Layout =
    has('PROJECT') || files.some((f) => f.startsWith('config/crd/'))
      ? 'kubebuilder'
      : files.some((f) => f.startsWith('deploy/crds/'))
        ? 'operator-sdk-0.x'
        : files.some((f) => /(^|\/)charts?\/[^/]+\/Chart\.yaml$/.test(f) || /^helm\//.test(f))
          ? 'helm'
          : 'manifests';
  return {
    dir,
    layout,
    module: goModule(dir),
    crds,
    samples,
    managers: managers.filter((m) => !managerPatches.has(m.file)),
    mains,
    envReads: [...envReads].sort(),
    kubeconfigEnv: [...kubeconfigEnv].sort(),
    applicationClients: [...clients].map(([module, files]) => ({ module, files })),
    componentConfigs,
    podNamespaceFile,
    configFiles,
    webhookManifests: [...new Set(webhookDocs.map((w) => w.file))]
      .filter((f) => !/(^|\/)(tests?|e2e|hack)\//.test(f))
      .map((file) => ({ file, kinds: [...new Set(webhookDocs.filter((w) => w.file === file).map((w) => String(w.doc.kind)))].sort() })),
    // One per kind and name: the first place that declares it (config/ before install/).
    webhookConfigs: webhookNames
      .filter((w, i) => w.namedIn.length > 0 && webhookNames.findIndex((o) => o.namedIn.length > 0 && o.name === w.name && o.doc.kind === w.doc.kind) === i)
      .map(({ file, name, prefixFrom, namedIn, doc }) => ({ file, name, namePrefixFrom: prefixFrom, namedIn, doc })),
  };
}
