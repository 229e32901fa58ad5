/**
 * kperturb.yaml: one file per controller under test.
 *
 *   apiVersion: kperturb.dev/v1
 *   kind: ControllerUnderTest
 *   metadata: { name: secret-marker }
 *   controller:
 *     command: node
 *     args: [controller.js]
 *     env: { LOG_LEVEL: info }      # KUBECONFIG is set by kperturb; $(VAR) expands (var-expansion.ts)
 *     workingDir: .                 # default: this file's directory
 *     maxParallel: 1                # at most this many runs at once (a controller that binds fixed ports)
 *     ports: [8080]                 # fixed TCP ports it binds: one run per port at a time on this machine
 *     warmSpare: false              # restarts and a campaign's runs start it anew (default: started ahead, waiting at a door; off with ports)
 *     hostAliases: [{ ip: 127.0.0.1, hostnames: [db.example] }]   # extra /etc/hosts entries, as in a Pod spec
 *     clusterDNS: true              # <svc>.<ns>.svc.cluster.local etc. resolve as CoreDNS answers in a pod
 *     namespace: default            # with clusterDNS: also <svc>, <pod>.<svc> (relative to it) and <svc>.<ns>
 *     podNamespaceFile: true        # /var/run/secrets/kubernetes.io/serviceaccount/namespace holds namespace, as in a pod
 *     webhookServer: { port: 9443 } # it serves admission webhooks: a certificate for it, the cluster calls them (also a `ports` entry)
 *   setup: [crd.yaml]               # manifests applied before the controller starts
 *   crds: [crd.yaml]                # kperturb explore: the CRDs to generate operations from (default: those in setup)
 *   seeds: [db.yaml]                # kperturb explore: custom resources to start from (also the workloads' applied ones)
 *   workloads:
 *     e2e: { chainsaw: tests/e2e/basic }   # or kuttl: DIR: a chainsaw test or KUTTL test case (src/config/import)
 *     create:
 *       steps:
 *         - apply: db.yaml
 *         - waitFor: { key: Database/default/db1, field: status.phase, equals: Ready, timeoutSeconds: 30 }
 *         - patch: { key: Database/default/db1, type: merge, patch: { spec: { replicas: 2 } } }
 *         - delete: { key: Database/default/db1 }
 *         - sleep: 0.5
 *   referenceRuns: 2
 *   settle: { quietMs: 1000, timeoutSeconds: 30 }
 *   cluster: { kubernetesVersion: "1.18", podReadiness: probe }  # embedded cluster: emulate this release's API surface; pods ready after their readiness probes' initial delay
 *   masks: [{ key: "ConfigMap/default/*", paths: [data.generatedAt] }]
 *   countUpdates: [{ key: "StatefulSet/default/*", paths: [spec.replicas] }]   # update-summary oracle
 *   exec:                           # pods/exec and pods/attach answers; first match wins, default exit 0, no output
 *     - { container: rabbitmq, command: [rabbitmqctl, "*"], exitCode: 0, stdout: "ok\n" }
 *     - { pod: "rabbitmq-cluster-server-*", commandContains: rabbitmq-queues, exitCode: 69, stderr: "not ready\n" }
 *   logs:                           # pods/log answers; default empty
 *     - { pod: "db-*", container: db, text: "ready\n" }
 *   applications:                   # stub applications on pod and Service IPs (src/stubs)
 *     - name: zookeeper
 *       protocol: zookeeper         # or http, with http: { rules: [{ method, path, bodyContains, state, setState, status, json|text, headers }], default: {...} }
 *       port: 2181
 *       namespace: default          # default: default
 *       pods: { matchLabels: { app: zookeeper-cluster } }
 *       services: [zookeeper-cluster-client]
 *
 * Relative paths are relative to the file's directory.
 */
import { basename, dirname, resolve } from 'node:path';
import { existsSync, statSync } from 'node:fs';
import { isObject, parseKey, type KubeObject, type ObjectKey } from '../model/object-key.js';
import { Validator, cut, describe, join, quote } from '../model/validate.js';
import { readYamlFile } from '../io/yaml-file.js';
import type { ExecRule, LogRule } from '../model/exec-rules.js';
import { KUBERNETES_VERSION_EXPECTED, parseKubernetesVersion } from '../model/kube-version.js';
import { POD_READINESS, type PodReadiness } from '../model/pod-readiness.js';
import { isIP } from 'node:net';
import { DEFAULT_HTTP_ANSWER, type ApplicationConfig, type HostAlias, type HttpAnswer, type HttpRule } from '../model/applications.js';
import type { LabelSelector, LabelSelectorRequirement } from '../model/label-selector.js';
import { FieldPathSyntaxError, parseFieldPath, parseFieldPattern } from '../model/field-path.js';
import { allowedKeys } from '../io/schemas.js';
import { importChainsaw } from './import/chainsaw.js';
import { importKuttl } from './import/kuttl.js';
import { readDocuments } from './import/suite.js';

export const CONFIG_API_VERSION = 'kperturb.dev/v1';

export type WorkloadStep =
  | { apply: string | InlineResource }
  | { patch: PatchStep }
  | { delete: { key: ObjectKey; propagationPolicy?: 'Orphan' | 'Background' | 'Foreground' } }
  | { waitFor: WaitCondition }
  | { sleep: number }
  | { settle: { timeoutSeconds: number } }
  | { assert: ExpectedObjects }
  | { error: ExpectedObjects }
  | { command: ProcessStep }
  | { script: ProcessStep };

export interface PatchStep {
  key: ObjectKey;
  type: 'merge' | 'json' | 'strategic';
  patch: unknown;
  subresource?: string;
  /**
   * `continue`: a patch the API server refuses (4xx) is recorded (the step's `rejected`) and the
   * workload goes on with the object unchanged, as `kperturb explore`'s generated operations need.
   * Default `fail`.
   */
  onError?: 'fail' | 'continue';
}

/** An object written in the workload itself rather than in a manifest file. */
export interface InlineResource {
  resource: KubeObject;
}

/**
 * What an `assert` step waits to see (every object matches, partially: src/workload/partial-match.ts)
 * or an `error` step waits to stop seeing (no object matches), as KUTTL's assert and errors files and
 * chainsaw's assert and error operations mean them.
 */
export interface ExpectedObjects {
  /** The manifest file they came from (absolute), absent when written inline. */
  file?: string;
  objects: KubeObject[];
  timeoutSeconds: number;
}

/** A process a `command` or `script` step runs, with KUBECONFIG set to the cluster's. */
export interface ProcessStep {
  /** What runs: `[entrypoint, ...args]`, or `[shell, ...shellArgs, content]` for a script. */
  argv: string[];
  env: Record<string, string>;
  workingDir: string;
  timeoutSeconds: number;
}

export interface WaitCondition {
  key: ObjectKey;
  /** Wait until the object exists (default), is absent, or `field` equals `equals`. */
  absent?: boolean;
  /**
   * A path in the syntax of masks and alarms (`status.phase`, `status.conditions[type=Ready].status`,
   * `metadata.labels["app.kubernetes.io/name"]`).
   */
  field?: string;
  equals?: unknown;
  /** `condition: Ready` waits as `kubectl wait --for=condition=Ready` does (sets field and equals). */
  condition?: string;
  timeoutSeconds: number;
  /**
   * `continue`: when the timeout passes, go on with the next step (as Sieve's soft timeouts do), so a
   * fault that keeps the condition from ever holding still lets the rest of the workload run. Default
   * `fail`: the workload fails there.
   */
  onTimeout?: 'fail' | 'continue';
}

export interface Workload {
  name: string;
  steps: WorkloadStep[];
}

export interface MaskConfig {
  /** Only for this workload (all workloads when absent). */
  workload?: string;
  /** Object key glob, `*` matches within a segment, e.g. `ConfigMap/default/*`. */
  key: string;
  /** Dotted field paths; empty means the whole object. */
  paths: string[];
}

export interface ControllerUnderTest {
  /** Absolute path of the kperturb.yaml. */
  file: string;
  /** Directory relative paths resolve against. */
  dir: string;
  name: string;
  controller: {
    command: string;
    args: string[];
    env: Record<string, string>;
    workingDir: string;
    /** At most this many runs of the controller at once (`test -j` is capped to it); absent: no cap. */
    maxParallel?: number;
    /** Fixed TCP ports the controller binds: runs take a machine-wide lock on each (coordinator/port-locks.ts). */
    ports: number[];
    /**
     * false: restarts start the controller anew. Default (absent): a warm spare is started ahead of
     * a plan's restart (src/coordinator/controller-process.ts), unless `ports` are set (it would
     * find them taken).
     */
    warmSpare?: boolean;
    /** Extra names for the controller's /etc/hosts, as a Pod spec's hostAliases. */
    hostAliases: HostAlias[];
    /** Resolve the cluster's Service and pod names for the controller as CoreDNS would for a pod. */
    clusterDNS: boolean;
    /** The namespace the controller's pod would run in: with clusterDNS, names relative to it resolve; podNamespaceFile holds it. */
    namespace?: string;
    /** Run the controller where /var/run/secrets/kubernetes.io/serviceaccount/namespace holds `namespace` (default "default"), as in a pod. */
    podNamespaceFile?: boolean;
    /**
     * The controller's admission webhook server (its port is in `ports` too): each run writes it a
     * serving certificate (src/coordinator/webhook-certs.ts) and the embedded cluster sends it the
     * validating webhooks its configurations name by Service (src/cluster/admission-webhooks.ts).
     * certDir: absolute; absent: controller-runtime's default under the TMPDIR each run gets.
     */
    webhookServer?: { port: number; certDir?: string };
  };
  setup: string[];
  /** `kperturb explore`: CRD manifest files (absolute) to generate operations from; empty: the CRDs among `setup`. */
  crds?: string[];
  /** `kperturb explore`: manifest files of custom resources to start from (absolute). */
  seeds?: string[];
  workloads: Map<string, Workload>;
  referenceRuns: number;
  /** quietMsGiven: false when kperturb.yaml leaves quietMs to its default (test runs then learn it from the reference runs). */
  settle: { quietMs: number; timeoutSeconds: number; quietMsGiven?: boolean };
  masks: MaskConfig[];
  /** Fields whose changes the update-summary oracle counts (same shape as masks; paths required). */
  countUpdates: MaskConfig[];
  /** What pods/exec and pods/attach answer (src/model/exec-rules.ts); first match wins. */
  exec: ExecRule[];
  /** What pods/log answers. */
  logs: LogRule[];
  /** Stub applications listening on pod and Service IPs (src/stubs). */
  applications: ApplicationConfig[];
  /** How the embedded cluster is started for this controller (absent: the defaults). */
  cluster?: ClusterConfig;
}

export interface ClusterConfig {
  /**
   * The Kubernetes release whose API surface the embedded cluster serves ("1.18" ... "1.32"; default
   * the newest), for controllers built against APIs later releases removed (policy/v1beta1, ...).
   */
  kubernetesVersion?: string;
  /**
   * When the simulated kubelets report a started pod ready: 'immediate' (default) at Running, or
   * 'probe' after its readiness probes' initialDelaySeconds, as a kubelet does (slower, and what a
   * controller does while its pods start is then seen: rabbitmq-operator#653 needs it).
   */
  podReadiness?: PodReadiness;
}

/** Does the config need the cluster's pod and Service IPs to be reachable (a loopback network)? */
export function needsReachableAddresses(config: ControllerUnderTest): boolean {
  return config.applications.length > 0 || config.controller.clusterDNS;
}

export function loadConfig(file: string): ControllerUnderTest {
  const abs = resolve(file);
  return validateConfig(readYamlFile(abs, 'KP_E_CONFIG'), abs);
}

export function validateConfig(doc: unknown, file: string): ControllerUnderTest {
  const v = new Validator(file, 'KP_E_CONFIG');
  const dir = dirname(file);
  const top = v.object(doc, '');
  // apiVersion and kind first: a plan or a manifest given as a config is told so, not that its fields are unknown.
  if (top.apiVersion !== CONFIG_API_VERSION) v.fail('apiVersion', `"${CONFIG_API_VERSION}" (got ${quote(top.apiVersion)})`);
  if (top.kind !== 'ControllerUnderTest') v.fail('kind', `"ControllerUnderTest" (got ${quote(top.kind)})`);
  v.onlyKeys(top, '', allowedKeys('config', ''));
  const metadata = v.object(top.metadata, 'metadata');
  const name = v.string(metadata.name, 'metadata.name');
  if (!/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/.test(name)) v.fail('metadata.name', 'a lowercase name of letters, digits and dashes');

  const c = v.object(top.controller, 'controller');
  v.onlyKeys(c, 'controller', allowedKeys('config', 'controller'));
  const env: Record<string, string> = {};
  if (c.env !== undefined) {
    for (const [k, val] of Object.entries(v.object(c.env, 'controller.env'))) {
      if (typeof val !== 'string' && typeof val !== 'number' && typeof val !== 'boolean') v.fail(join('controller.env', k), 'a string value');
      env[k] = String(val);
    }
  }
  const controller = {
    command: v.string(c.command, 'controller.command'),
    args: c.args === undefined ? [] : v.stringArray(c.args, 'controller.args'),
    env,
    workingDir: existingDirectory(v, resolve(dir, v.optionalString(c.workingDir, 'controller.workingDir') ?? '.'), 'controller.workingDir'),
    hostAliases: (c.hostAliases === undefined ? [] : v.array(c.hostAliases, 'controller.hostAliases')).map((a, i) =>
      validateHostAlias(v, a, join('controller.hostAliases', i)),
    ),
    clusterDNS: c.clusterDNS === undefined ? false : v.boolean(c.clusterDNS, 'controller.clusterDNS'),
    ports: (c.ports === undefined ? [] : v.array(c.ports, 'controller.ports')).map((port, i) =>
      v.number(port, join('controller.ports', i), { min: 1, max: 65535, integer: true }),
    ),
  };
  if (c.warmSpare !== undefined) Object.assign(controller, { warmSpare: v.boolean(c.warmSpare, 'controller.warmSpare') });
  const maxParallel = v.optionalNumber(c.maxParallel, 'controller.maxParallel', { min: 1, integer: true });
  if (maxParallel !== undefined) Object.assign(controller, { maxParallel });
  const namespace = v.optionalString(c.namespace, 'controller.namespace');
  if (namespace !== undefined) {
    if (!/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/.test(namespace)) v.fail('controller.namespace', 'a namespace name (lowercase letters, digits and dashes)');
    if (!controller.clusterDNS && c.podNamespaceFile !== true)
      v.fail(
        'controller.namespace',
        "clusterDNS: true or podNamespaceFile: true as well (the namespace decides which names resolve, and what the pod's namespace file holds)",
      );
    Object.assign(controller, { namespace });
  }
  if (c.podNamespaceFile !== undefined) Object.assign(controller, { podNamespaceFile: v.boolean(c.podNamespaceFile, 'controller.podNamespaceFile') });
  if (c.webhookServer !== undefined) {
    const w = v.object(c.webhookServer, 'controller.webhookServer');
    v.onlyKeys(w, 'controller.webhookServer', allowedKeys('config', 'controller/webhookServer'));
    const port = v.number(w.port, 'controller.webhookServer.port', { min: 1, max: 65535, integer: true });
    const certDir = v.optionalString(w.certDir, 'controller.webhookServer.certDir');
    Object.assign(controller, { webhookServer: { port, ...(certDir !== undefined ? { certDir: resolve(controller.workingDir, certDir) } : {}) } });
    // The server binds the port whatever else runs: runs of this controller take turns on it.
    if (!controller.ports.includes(port)) controller.ports.push(port);
  }

  const setup = (top.setup === undefined ? [] : v.stringArray(top.setup, 'setup')).map((p, i) => existingFile(v, dir, p, join('setup', i)));

  const crds = fileList(v, dir, top.crds, 'crds');
  crds.forEach((file, i) => {
    loadManifestObjects(file).forEach((o, j) => {
      if (o.kind !== 'CustomResourceDefinition' || !String(o.apiVersion).startsWith('apiextensions.k8s.io/'))
        v.fail(join('crds', i), `a file of CustomResourceDefinitions (${file} document ${j + 1} is a ${o.kind})`);
    });
  });
  const seeds = fileList(v, dir, top.seeds, 'seeds');
  seeds.forEach((file) => loadManifestObjects(file));

  // A config made for `kperturb explore` may give only seeds: its workloads are the generated ones.
  if (top.workloads === undefined && seeds.length === 0) v.fail('workloads', 'a mapping of workloads by name (or seeds, for kperturb explore)');
  const workloadsRaw = top.workloads === undefined ? {} : v.object(top.workloads, 'workloads');
  if (Object.keys(workloadsRaw).length === 0 && seeds.length === 0) v.fail('workloads', 'at least one workload (or seeds, for kperturb explore)');
  const workloads = new Map<string, Workload>();
  for (const [wname, wraw] of Object.entries(workloadsRaw)) {
    const wpath = join('workloads', wname);
    if (!/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/.test(wname)) v.fail(wpath, 'a workload name of lowercase letters, digits and dashes');
    const w = v.object(wraw, wpath);
    v.onlyKeys(w, wpath, allowedKeys('config', 'workloads/*'));
    const suite = suiteReference(v, dir, w, wpath);
    if (suite) {
      workloads.set(wname, { name: wname, steps: suite.steps.map((s, i) => validateStep(v, dir, s, `${suite.path} (imported step ${i + 1})`)) });
      continue;
    }
    const steps = v.array(w.steps, join(wpath, 'steps'));
    if (steps.length === 0) v.fail(join(wpath, 'steps'), 'at least one step');
    workloads.set(wname, { name: wname, steps: steps.map((s, i) => validateStep(v, dir, s, join(join(wpath, 'steps'), i))) });
  }

  // Each reference run is a whole run of the workload: a hundred is already hours.
  const referenceRuns = v.optionalNumber(top.referenceRuns, 'referenceRuns', { min: 1, max: 100, integer: true }) ?? 2;
  const settleRaw = top.settle === undefined ? {} : v.object(top.settle, 'settle');
  v.onlyKeys(settleRaw, 'settle', allowedKeys('config', 'settle'));
  const settle = {
    quietMs: v.optionalDuration(settleRaw.quietMs, 'settle.quietMs', 'ms', 50) ?? 1000,
    timeoutSeconds: v.optionalDuration(settleRaw.timeoutSeconds, 'settle.timeoutSeconds', 'seconds', 1) ?? 30,
    quietMsGiven: settleRaw.quietMs !== undefined,
  };
  const keyPathRules = (section: 'masks' | 'countUpdates') =>
    (top[section] === undefined ? [] : v.array(top[section], section)).map((m, i) => {
      const p = join(section, i);
      const mo = v.object(m, p);
      v.onlyKeys(mo, p, allowedKeys('config', `${section}/*`));
      const workload = v.optionalString(mo.workload, join(p, 'workload'));
      if (workload !== undefined && !workloads.has(workload))
        v.fail(join(p, 'workload'), `the name of a workload in this file (${[...workloads.keys()].join(', ')})`);
      const mask: MaskConfig = { key: v.string(mo.key, join(p, 'key')), paths: mo.paths === undefined ? [] : v.stringArray(mo.paths, join(p, 'paths')) };
      // The oracles parse these paths at judging time; a typo must not wait until then.
      mask.paths.forEach((path, j) => {
        try {
          parseFieldPattern(path);
        } catch (err) {
          if (!(err instanceof FieldPathSyntaxError)) throw err;
          v.fail(join(join(p, 'paths'), j), `a field path such as status.conditions[type=Ready].status or spec.containers[*].image (${err.expected})`);
        }
      });
      if (section === 'countUpdates' && mask.paths.length === 0) v.fail(join(p, 'paths'), 'at least one field path whose changes to count');
      if (workload !== undefined) mask.workload = workload;
      return mask;
    });
  const masks = keyPathRules('masks');
  const countUpdates = keyPathRules('countUpdates');
  const exec = (top.exec === undefined ? [] : v.array(top.exec, 'exec')).map((r, i) => validateExecRule(v, r, join('exec', i)));
  const logs = (top.logs === undefined ? [] : v.array(top.logs, 'logs')).map((r, i) => validateLogRule(v, r, join('logs', i)));
  const applications = (top.applications === undefined ? [] : v.array(top.applications, 'applications')).map((a, i) =>
    validateApplication(v, a, join('applications', i)),
  );
  const appNames = new Set<string>();
  applications.forEach((a, i) => {
    if (appNames.has(a.name)) v.fail(join(join('applications', i), 'name'), `a name no other application has (${quote(a.name)} is taken)`);
    appNames.add(a.name);
  });
  const cluster = validateClusterSection(v, top.cluster);
  return { file, dir, name, controller, setup, crds, seeds, workloads, referenceRuns, settle, masks, countUpdates, exec, logs, applications, cluster };
}

/**
 * `chainsaw: DIR` or `kuttl: DIR` instead of `steps`: the one test in DIR, imported as
 * `kperturb import` does (src/config/import/); its refusals name the test's own file.
 */
function suiteReference(
  v: Validator,
  dir: string,
  w: Record<string, unknown>,
  wpath: string,
): { steps: Array<Record<string, unknown>>; path: string } | undefined {
  const given = (['steps', 'chainsaw', 'kuttl'] as const).filter((k) => w[k] !== undefined);
  if (given.length === 0) v.fail(join(wpath, 'steps'), 'a list of steps (or chainsaw: DIR, or kuttl: DIR, instead of steps)');
  if (given.length > 1) v.fail(wpath, `one of steps, chainsaw (a chainsaw test directory) or kuttl (a KUTTL test case directory) (got ${given.join(', ')})`);
  const format = given[0]!;
  if (format === 'steps') return undefined;
  const path = join(wpath, format);
  const target = existingDirectory(v, resolve(dir, v.string(w[format], path)), path);
  const result = format === 'chainsaw' ? importChainsaw(target) : importKuttl(target);
  if (result.workloads.length !== 1)
    v.fail(path, `a directory of one test (${target} holds ${result.workloads.length}: ${result.workloads.map((x) => x.name).join(', ')}); name one of them`);
  return { steps: result.workloads[0]!.steps, path };
}

const HOSTNAME = /^[a-zA-Z0-9]([-a-zA-Z0-9]*[a-zA-Z0-9])?(\.[a-zA-Z0-9]([-a-zA-Z0-9]*[a-zA-Z0-9])?)*$/;

function validateHostAlias(v: Validator, raw: unknown, path: string): HostAlias {
  const a = v.object(raw, path);
  v.onlyKeys(a, path, allowedKeys('config', 'definitions/hostAlias'));
  const ip = v.string(a.ip, join(path, 'ip'));
  if (isIP(ip) === 0) v.fail(join(path, 'ip'), `an IPv4 or IPv6 address (got ${quote(ip)})`);
  const hostnames = v.stringArray(a.hostnames, join(path, 'hostnames'));
  if (hostnames.length === 0) v.fail(join(path, 'hostnames'), 'at least one host name');
  hostnames.forEach((h, i) => {
    if (!HOSTNAME.test(h)) v.fail(join(join(path, 'hostnames'), i), `a host name of letters, digits, dashes and dots (got ${quote(h)})`);
  });
  return { ip, hostnames };
}

function validateLabelSelector(v: Validator, raw: unknown, path: string): LabelSelector {
  const s = v.object(raw, path);
  v.onlyKeys(s, path, allowedKeys('config', 'definitions/labelSelector'));
  const selector: LabelSelector = {};
  if (s.matchLabels !== undefined) {
    const labels: Record<string, string> = {};
    for (const [k, val] of Object.entries(v.object(s.matchLabels, join(path, 'matchLabels')))) labels[k] = text(v, val, join(join(path, 'matchLabels'), k));
    selector.matchLabels = labels;
  }
  if (s.matchExpressions !== undefined) {
    selector.matchExpressions = v.array(s.matchExpressions, join(path, 'matchExpressions')).map((e, i) => {
      const p = join(join(path, 'matchExpressions'), i);
      const eo = v.object(e, p);
      v.onlyKeys(eo, p, allowedKeys('config', 'definitions/labelSelector/matchExpressions/*'));
      const req: LabelSelectorRequirement = {
        key: v.string(eo.key, join(p, 'key')),
        operator: v.oneOf(eo.operator, join(p, 'operator'), ['In', 'NotIn', 'Exists', 'DoesNotExist'] as const),
      };
      if (eo.values !== undefined) req.values = v.stringArray(eo.values, join(p, 'values'));
      if ((req.operator === 'In' || req.operator === 'NotIn') && !req.values?.length)
        v.fail(join(p, 'values'), `at least one value for operator ${req.operator}`);
      return req;
    });
  }
  if (!selector.matchLabels && !selector.matchExpressions)
    v.fail(path, 'matchLabels and/or matchExpressions (a label selector; an empty one would select every pod)');
  return selector;
}

function validateHttpAnswer(v: Validator, a: Record<string, unknown>, path: string): HttpAnswer {
  const answer: HttpAnswer = { status: 200, headers: {} };
  if (a.status !== undefined) {
    answer.status = v.number(a.status, join(path, 'status'), { min: 100, integer: true });
    if (answer.status > 599) v.fail(join(path, 'status'), `an HTTP status from 100 to 599 (got ${answer.status})`);
  }
  if (a.json !== undefined && a.text !== undefined) v.fail(path, 'either json or text as the body, not both');
  if (a.text !== undefined) answer.text = text(v, a.text, join(path, 'text'));
  else answer.json = a.json === undefined ? {} : a.json;
  if (a.headers !== undefined) {
    for (const [k, val] of Object.entries(v.object(a.headers, join(path, 'headers')))) answer.headers[k] = text(v, val, join(join(path, 'headers'), k));
  }
  return answer;
}

function validateApplication(v: Validator, raw: unknown, path: string): ApplicationConfig {
  const a = v.object(raw, path);
  v.onlyKeys(a, path, allowedKeys('config', 'definitions/application'));
  const name = v.string(a.name, join(path, 'name'));
  if (!/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/.test(name)) v.fail(join(path, 'name'), 'a lowercase name of letters, digits and dashes');
  const protocol = v.oneOf(a.protocol, join(path, 'protocol'), ['zookeeper', 'http'] as const);
  const port = v.number(a.port, join(path, 'port'), { min: 1, integer: true });
  if (port > 65535) v.fail(join(path, 'port'), `a TCP port from 1 to 65535 (got ${port})`);
  const app: ApplicationConfig = {
    name,
    protocol,
    port,
    namespace: v.optionalString(a.namespace, join(path, 'namespace')) ?? 'default',
    services: a.services === undefined ? [] : v.stringArray(a.services, join(path, 'services')),
  };
  if (a.pods !== undefined) app.pods = validateLabelSelector(v, a.pods, join(path, 'pods'));
  if (a.matchPort !== undefined) app.matchPort = v.boolean(a.matchPort, join(path, 'matchPort'));
  if (!app.pods && app.services.length === 0 && !app.matchPort)
    v.fail(path, 'pods (a label selector), services (Service names) and/or matchPort: true (every pod and Service with that port): where the stub listens');
  if (a.http !== undefined) {
    if (protocol !== 'http') v.fail(join(path, 'http'), 'no http section for protocol ' + protocol);
    const h = v.object(a.http, join(path, 'http'));
    v.onlyKeys(h, join(path, 'http'), allowedKeys('config', 'definitions/application/http'));
    const rules = (h.rules === undefined ? [] : v.array(h.rules, join(path, 'http.rules'))).map((r, i): HttpRule => {
      const p = join(join(path, 'http.rules'), i);
      const ro = v.object(r, p);
      v.onlyKeys(ro, p, allowedKeys('config', 'definitions/application/http/rules/*'));
      const rule: HttpRule = { ...validateHttpAnswer(v, ro, p), path: v.string(ro.path, join(p, 'path')) };
      for (const field of ['bodyContains', 'state', 'setState'] as const) {
        const value = v.optionalString(ro[field], join(p, field));
        if (value !== undefined) rule[field] = value;
      }
      if (!rule.path.startsWith('/') && !rule.path.startsWith('*')) v.fail(join(p, 'path'), `a path glob starting with / (got ${quote(rule.path)})`);
      const method = v.optionalString(ro.method, join(p, 'method'));
      if (method !== undefined) rule.method = method.toUpperCase();
      return rule;
    });
    let answer = DEFAULT_HTTP_ANSWER;
    if (h.default !== undefined) {
      const d = v.object(h.default, join(path, 'http.default'));
      v.onlyKeys(d, join(path, 'http.default'), allowedKeys('config', 'definitions/application/http/default'));
      answer = validateHttpAnswer(v, d, join(path, 'http.default'));
    }
    app.http = { rules, default: answer };
  } else if (protocol === 'http') {
    app.http = { rules: [], default: DEFAULT_HTTP_ANSWER };
  }
  return app;
}

/** Output text: unlike names, it may be empty. */
function text(v: Validator, value: unknown, path: string): string {
  if (typeof value !== 'string') v.fail(path, `a string (got ${describe(value)})`);
  return value;
}

/** The pod/container/namespace globs both rule kinds share. */
function ruleTarget(v: Validator, r: Record<string, unknown>, path: string): { namespace?: string; pod?: string; container?: string } {
  const target: { namespace?: string; pod?: string; container?: string } = {};
  for (const field of ['namespace', 'pod', 'container'] as const) {
    const value = v.optionalString(r[field], join(path, field));
    if (value !== undefined) target[field] = value;
  }
  return target;
}

function validateExecRule(v: Validator, raw: unknown, path: string): ExecRule {
  const r = v.object(raw, path);
  v.onlyKeys(r, path, allowedKeys('config', 'definitions/execRule'));
  const rule: ExecRule = {
    ...ruleTarget(v, r, path),
    exitCode: 0,
    stdout: r.stdout === undefined ? '' : text(v, r.stdout, join(path, 'stdout')),
    stderr: r.stderr === undefined ? '' : text(v, r.stderr, join(path, 'stderr')),
  };
  if (r.command !== undefined) {
    const command = v.stringArray(r.command, join(path, 'command'));
    if (command.length === 0) v.fail(join(path, 'command'), 'a non-empty argv pattern, e.g. [rabbitmqctl, "*"]');
    rule.command = command;
  }
  const contains = v.optionalString(r.commandContains, join(path, 'commandContains'));
  if (contains !== undefined) rule.commandContains = contains;
  if (r.exitCode !== undefined) {
    // The v4 error stream carries it as an 8-bit unsigned number (client-go parses it so).
    rule.exitCode = v.number(r.exitCode, join(path, 'exitCode'), { min: 0, integer: true });
    if (rule.exitCode > 255) v.fail(join(path, 'exitCode'), `an exit code from 0 to 255 (got ${rule.exitCode})`);
  }
  return rule;
}

function validateLogRule(v: Validator, raw: unknown, path: string): LogRule {
  const r = v.object(raw, path);
  v.onlyKeys(r, path, allowedKeys('config', 'definitions/logRule'));
  if (r.text === undefined) v.fail(join(path, 'text'), 'the log text (a string, may be empty)');
  return { ...ruleTarget(v, r, path), text: text(v, r.text, join(path, 'text')) };
}

function validateClusterSection(v: Validator, raw: unknown): ClusterConfig {
  if (raw === undefined) return {};
  const c = v.object(raw, 'cluster');
  v.onlyKeys(c, 'cluster', allowedKeys('config', 'cluster'));
  const out: ClusterConfig = {};
  if (c.kubernetesVersion !== undefined) {
    const path = 'cluster.kubernetesVersion';
    // YAML reads 1.20 as the number 1.2: only a quoted string says which release was meant.
    if (typeof c.kubernetesVersion === 'number') v.fail(path, `${KUBERNETES_VERSION_EXPECTED}; quote it, YAML reads ${c.kubernetesVersion} as a number`);
    const text = v.string(c.kubernetesVersion, path);
    const release = parseKubernetesVersion(text);
    if (!release) v.fail(path, `${KUBERNETES_VERSION_EXPECTED} (got ${quote(text)})`);
    out.kubernetesVersion = `${release.major}.${release.minor}`;
  }
  if (c.podReadiness !== undefined) out.podReadiness = v.oneOf(c.podReadiness, 'cluster.podReadiness', POD_READINESS);
  return out;
}

function existingFile(v: Validator, dir: string, p: string, path: string): string {
  const abs = resolve(dir, p);
  if (!existsSync(abs)) v.fail(path, `a manifest file that exists (${abs} not found)`);
  const stat = statSync(abs);
  if (!stat.isFile()) v.fail(path, `a manifest file (${abs} is ${stat.isDirectory() ? 'a directory' : 'not a regular file'})`);
  return abs;
}

/** An optional list of manifest files (relative to the config), each of which must exist. */
function fileList(v: Validator, dir: string, raw: unknown, section: string): string[] {
  if (raw === undefined) return [];
  const files = v.stringArray(raw, section).map((p, i) => existingFile(v, dir, p, join(section, i)));
  if (files.length === 0) v.fail(section, 'at least one manifest file (or leave it out)');
  return files;
}

function existingDirectory(v: Validator, abs: string, path: string): string {
  if (!existsSync(abs)) v.fail(path, `a directory that exists (${abs} not found)`);
  if (!statSync(abs).isDirectory()) v.fail(path, `a directory (${abs} is not one)`);
  return abs;
}

function objectKey(v: Validator, raw: unknown, path: string): ObjectKey {
  const key = v.string(raw, path);
  if (!parseKey(key)) v.fail(path, `an object key Kind/namespace/name or Kind/name (got ${quote(key)})`);
  return key;
}

const STEP_KINDS = ['apply', 'patch', 'delete', 'waitFor', 'sleep', 'settle', 'assert', 'error', 'command', 'script'] as const;

/** KUTTL's and chainsaw's default for an assert or error. */
export const DEFAULT_EXPECT_TIMEOUT_SECONDS = 30;
export const DEFAULT_PROCESS_TIMEOUT_SECONDS = 60;
/** How long a `settle` step waits for the controller to go quiet before the workload goes on. */
export const DEFAULT_SETTLE_STEP_SECONDS = 30;

function validateStep(v: Validator, dir: string, raw: unknown, path: string): WorkloadStep {
  const s = v.object(raw, path);
  const kinds = Object.keys(s);
  if (kinds.length !== 1 || !(STEP_KINDS as readonly string[]).includes(kinds[0]!)) {
    v.fail(path, `exactly one of ${STEP_KINDS.join(', ')} (got ${kinds.length === 0 ? 'none' : kinds.join(', ')})`);
  }
  const kind = kinds[0] as (typeof STEP_KINDS)[number];
  const p = join(path, kind);
  switch (kind) {
    case 'apply':
      if (isObject(s.apply)) {
        v.onlyKeys(s.apply, p, allowedKeys('config', 'definitions/step/apply'));
        return { apply: { resource: manifestObject(v, s.apply.resource, join(p, 'resource')) } };
      }
      return { apply: existingFile(v, dir, v.string(s.apply, p), p) };
    case 'assert':
    case 'error':
      return kind === 'assert' ? { assert: validateExpected(v, dir, s.assert, p) } : { error: validateExpected(v, dir, s.error, p) };
    case 'command': {
      const d = v.object(s.command, p);
      v.onlyKeys(d, p, allowedKeys('config', 'definitions/step/command'));
      const argv = [
        v.string(d.entrypoint, join(p, 'entrypoint')),
        ...(d.args === undefined ? [] : v.array(d.args, join(p, 'args')).map((a, i) => text(v, a, join(join(p, 'args'), i)))),
      ];
      return { command: processStep(v, dir, d, p, argv) };
    }
    case 'script': {
      const d = v.object(s.script, p);
      v.onlyKeys(d, p, allowedKeys('config', 'definitions/step/script'));
      const shell = v.optionalString(d.shell, join(p, 'shell')) ?? 'sh';
      const shellArgs = d.shellArgs === undefined ? ['-c'] : v.stringArray(d.shellArgs, join(p, 'shellArgs'));
      return { script: processStep(v, dir, d, p, [shell, ...shellArgs, v.string(d.content, join(p, 'content'))]) };
    }
    case 'sleep':
      return { sleep: v.duration(s.sleep, p, 'seconds') };
    case 'settle': {
      const d = s.settle === null ? {} : v.object(s.settle, p);
      v.onlyKeys(d, p, allowedKeys('config', 'definitions/step/settle'));
      return { settle: { timeoutSeconds: v.optionalDuration(d.timeoutSeconds, join(p, 'timeoutSeconds'), 'seconds', 0.1) ?? DEFAULT_SETTLE_STEP_SECONDS } };
    }
    case 'delete': {
      const d = v.object(s.delete, p);
      v.onlyKeys(d, p, allowedKeys('config', 'definitions/step/delete'));
      const step: { key: ObjectKey; propagationPolicy?: 'Orphan' | 'Background' | 'Foreground' } = { key: objectKey(v, d.key, join(p, 'key')) };
      if (d.propagationPolicy !== undefined)
        step.propagationPolicy = v.oneOf(d.propagationPolicy, join(p, 'propagationPolicy'), ['Orphan', 'Background', 'Foreground'] as const);
      return { delete: step };
    }
    case 'patch': {
      const d = v.object(s.patch, p);
      v.onlyKeys(d, p, allowedKeys('config', 'definitions/step/patch'));
      if (d.patch === undefined) v.fail(join(p, 'patch'), 'the patch body (a mapping, or a list for type json)');
      const type = d.type === undefined ? 'merge' : v.oneOf(d.type, join(p, 'type'), ['merge', 'json', 'strategic'] as const);
      if (type === 'json') v.array(d.patch, join(p, 'patch'));
      else v.object(d.patch, join(p, 'patch'));
      const step: PatchStep = {
        key: objectKey(v, d.key, join(p, 'key')),
        type,
        patch: d.patch,
      };
      const sub = v.optionalString(d.subresource, join(p, 'subresource'));
      if (sub !== undefined) step.subresource = sub;
      if (d.onError !== undefined) step.onError = v.oneOf(d.onError, join(p, 'onError'), ['fail', 'continue'] as const);
      return { patch: step };
    }
    case 'waitFor': {
      const d = v.object(s.waitFor, p);
      v.onlyKeys(d, p, allowedKeys('config', 'definitions/step/waitFor'));
      const cond: WaitCondition = {
        key: objectKey(v, d.key, join(p, 'key')),
        timeoutSeconds: v.optionalDuration(d.timeoutSeconds, join(p, 'timeoutSeconds'), 'seconds', 0.1) ?? 60,
      };
      if (d.absent !== undefined) cond.absent = v.boolean(d.absent, join(p, 'absent'));
      if (d.condition !== undefined) {
        // kubectl wait --for=condition=Ready: the condition of that type has status "True".
        const type = v.string(d.condition, join(p, 'condition'));
        if (!/^[A-Za-z0-9_./-]+$/.test(type)) v.fail(join(p, 'condition'), `a condition type such as Ready (got ${JSON.stringify(type)})`);
        if (d.field !== undefined || 'equals' in d) v.fail(p, 'either condition or field/equals, not both');
        cond.condition = type;
        cond.field = `status.conditions[type=${type}].status`;
        cond.equals = 'True';
      } else if (d.field !== undefined) {
        cond.field = v.string(d.field, join(p, 'field'));
        if (!cond.field.includes('\\')) {
          try {
            parseFieldPath(cond.field);
          } catch (err) {
            if (!(err instanceof FieldPathSyntaxError)) throw err;
            v.fail(join(p, 'field'), `a field path such as status.conditions[type=Ready].status (${err.expected})`);
          }
        }
        if (!('equals' in d)) v.fail(join(p, 'equals'), 'the value the field must equal (with field)');
        cond.equals = d.equals;
      } else if ('equals' in d) {
        v.fail(join(p, 'field'), 'a field path (equals needs field)');
      }
      if (cond.absent && cond.field) v.fail(p, 'either absent or field/equals, not both');
      if (d.onTimeout !== undefined) cond.onTimeout = v.oneOf(d.onTimeout, join(p, 'onTimeout'), ['fail', 'continue'] as const);
      return { waitFor: cond };
    }
  }
}

/** `assert` and `error`: a manifest file (`FILE` or `{ file }`), inline `resource` or `resources`, and a timeout. */
function validateExpected(v: Validator, dir: string, raw: unknown, path: string): ExpectedObjects {
  if (typeof raw === 'string') {
    const file = existingFile(v, dir, raw, path);
    return { file, objects: loadManifestObjects(file), timeoutSeconds: DEFAULT_EXPECT_TIMEOUT_SECONDS };
  }
  const d = v.object(raw, path);
  v.onlyKeys(d, path, allowedKeys('config', 'definitions/step/assert'));
  const timeoutSeconds = v.optionalDuration(d.timeoutSeconds, join(path, 'timeoutSeconds'), 'seconds', 0.1) ?? DEFAULT_EXPECT_TIMEOUT_SECONDS;
  const given = (['file', 'resource', 'resources'] as const).filter((k) => d[k] !== undefined);
  if (given.length !== 1)
    v.fail(
      path,
      `one of file (a manifest file), resource (one object) or resources (a list of objects) (got ${given.length === 0 ? 'none' : given.join(', ')})`,
    );
  if (d.resource !== undefined) return { objects: [manifestObject(v, d.resource, join(path, 'resource'))], timeoutSeconds };
  if (d.resources !== undefined) {
    const list = v.array(d.resources, join(path, 'resources'));
    if (list.length === 0) v.fail(join(path, 'resources'), 'at least one object');
    return { objects: list.map((o, i) => manifestObject(v, o, join(join(path, 'resources'), i))), timeoutSeconds };
  }
  const file = existingFile(v, dir, v.string(d.file, join(path, 'file')), join(path, 'file'));
  return { file, objects: loadManifestObjects(file), timeoutSeconds };
}

/** An object to apply or expect: apiVersion and kind say which resource; the rest is its content. */
function manifestObject(v: Validator, raw: unknown, path: string): KubeObject {
  const o = v.object(raw, path);
  v.string(o.apiVersion, join(path, 'apiVersion'));
  v.string(o.kind, join(path, 'kind'));
  if (o.metadata !== undefined) {
    const md = v.object(o.metadata, join(path, 'metadata'));
    v.optionalString(md.name, join(path, 'metadata.name'));
    v.optionalString(md.namespace, join(path, 'metadata.namespace'));
    if (md.labels !== undefined) {
      for (const [k, value] of Object.entries(v.object(md.labels, join(path, 'metadata.labels')))) text(v, value, join(join(path, 'metadata.labels'), k));
    }
  }
  return o as KubeObject;
}

/** The objects of a manifest file, each checked as manifestObject does; errors name the document. */
export function loadManifestObjects(file: string): KubeObject[] {
  const v = new Validator(file, 'KP_E_CONFIG');
  const objects = readDocuments(file).map((doc, i) => manifestObject(v, doc, `document ${i + 1}`));
  if (objects.length === 0) v.fail('', 'at least one object');
  return objects;
}

function processStep(v: Validator, dir: string, d: Record<string, unknown>, path: string, argv: string[]): ProcessStep {
  const env: Record<string, string> = {};
  if (d.env !== undefined) {
    for (const [k, value] of Object.entries(v.object(d.env, join(path, 'env')))) {
      if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(k)) v.fail(join(join(path, 'env'), k), 'an environment variable name of letters, digits and underscores');
      env[k] = text(v, value, join(join(path, 'env'), k));
    }
  }
  const workingDir =
    d.workingDir === undefined ? dir : existingDirectory(v, resolve(dir, v.string(d.workingDir, join(path, 'workingDir'))), join(path, 'workingDir'));
  const timeoutSeconds = v.optionalDuration(d.timeoutSeconds, join(path, 'timeoutSeconds'), 'seconds', 0.1) ?? DEFAULT_PROCESS_TIMEOUT_SECONDS;
  return { argv, env, workingDir, timeoutSeconds };
}

export function describeStep(step: WorkloadStep): string {
  if ('apply' in step) return typeof step.apply === 'string' ? `apply ${basename(step.apply)}` : `apply ${describeObject(step.apply.resource)}`;
  if ('assert' in step || 'error' in step) {
    const [verb, e] = 'assert' in step ? ['assert', step.assert] : ['error', step.error];
    const what = e.file ? basename(e.file) : e.objects.map(describeObject).join(', ');
    return `${verb} ${what} (${e.timeoutSeconds}s)`;
  }
  if ('command' in step) return `command ${cut(step.command.argv.join(' '))}`;
  if ('script' in step) return `script ${cut(step.script.argv.at(-1)!.split('\n')[0]!)}`;
  if ('patch' in step) return `patch ${step.patch.key}${step.patch.subresource ? '/' + step.patch.subresource : ''} (${step.patch.type})`;
  if ('delete' in step) return `delete ${step.delete.key}`;
  if ('sleep' in step) return `sleep ${step.sleep}s`;
  if ('settle' in step) return `settle (up to ${step.settle.timeoutSeconds}s)`;
  const w = step.waitFor;
  const what = w.absent ? 'absent' : w.condition ? `condition ${w.condition}` : w.field ? `${w.field} == ${JSON.stringify(w.equals)}` : 'exists';
  return `wait for ${w.key} ${what} (${w.timeoutSeconds}s${w.onTimeout === 'continue' ? ', then go on' : ''})`;
}

/** `Kind/name` (or `Kind` with its labels when it names none), for step descriptions. */
export function describeObject(obj: KubeObject): string {
  const name = obj.metadata?.name;
  if (name) return `${obj.kind}/${obj.metadata?.namespace ? obj.metadata.namespace + '/' : ''}${name}`;
  const labels = Object.entries(obj.metadata?.labels ?? {}).map(([k, v]) => `${k}=${v}`);
  return `${obj.kind}${labels.length > 0 ? `[${labels.join(',')}]` : ''}`;
}
