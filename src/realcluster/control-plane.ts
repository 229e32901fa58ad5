/**
 * A real Kubernetes control plane on loopback: etcd (fresh data directory), kube-apiserver (generated
 * CA and serving certificate, an admin bearer token in group system:masters, RBAC, the default
 * admission plugins) and kube-controller-manager (every default controller, as the admin). No
 * kubelets and no scheduler: pods stay Pending unless the simulated scheduler and kubelets
 * (src/cluster/sim/) run against it as clients.
 *
 *   const cp = await startRealControlPlane();
 *   writeFileSync(kubeconfigPath, cp.kubeconfigYaml());
 *   const client = new KubeClient(cp.url, cp.clientOptions());
 *   ...
 *   await cp.stop();   // ends the three processes, deletes the data directory
 *
 * Every start makes a new working directory, data directory and credentials, so two control planes
 * never share state: that is how plans are isolated from each other on the real tier.
 */
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import https from 'node:https';
import http from 'node:http';
import { createServer } from 'node:net';
import { listenOnLoopback } from '../kube/loopback-listen.js';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { SetupError } from '../model/errors.js';
import type { KubeClientOptions } from '../kube/client.js';
import { kubeconfigYaml } from '../kube/kubeconfig.js';
import { locateControlPlaneBinaries, type ControlPlaneBinaries } from './binaries.js';
import { ComponentProcess } from './component-process.js';
import { ADMIN_USER, generateControlPlaneCredentials, type ControlPlaneCredentials } from './pki.js';

export interface RealControlPlaneOptions {
  /** Default: locateControlPlaneBinaries() (built by `npm run setup:real`). */
  binaries?: ControlPlaneBinaries;
  /** kube-apiserver's port on 127.0.0.1; default: a free port. */
  apiserverPort?: number;
  /** Start kube-controller-manager (default true). Without it nothing garbage-collects, scales or deletes namespaces. */
  controllerManager?: boolean;
  /** kube-controller-manager's --controllers (default ['*']: every controller enabled by default upstream). */
  controllers?: readonly string[];
  /** Directory for the components' logs (etcd.log, kube-apiserver.log, kube-controller-manager.log), kept after stop(). Default: the working directory, deleted by stop(). */
  logDir?: string;
  /** Parent of the working directory (credentials, etcd data, kubeconfig). Default: the OS temp dir. */
  workDirParent?: string;
  /** Extra flags per component, appended last (so they override ours). */
  extraArgs?: { etcd?: readonly string[]; apiserver?: readonly string[]; controllerManager?: readonly string[] };
  /** How long each component may take to become ready (default 60 s). */
  readyTimeoutMs?: number;
  log?: (line: string) => void;
}

/** Milliseconds each start-up phase took. */
export interface ControlPlaneStartTimes {
  /** Generating the CA, certificates and keys (while etcd starts). */
  credentials: number;
  /** From the start until etcd is ready (includes `credentials`). */
  etcd: number;
  apiserver: number;
  controllerManager: number;
  total: number;
}

export interface RealControlPlane {
  /** https://127.0.0.1:<port> */
  readonly url: string;
  /** PEM of the CA that signed kube-apiserver's certificate. */
  readonly caPem: string;
  /** The admin's bearer token (user kperturb-admin, group system:masters). */
  readonly token: string;
  /** The admin kubeconfig, written in the working directory (gone after stop()). */
  readonly kubeconfigPath: string;
  readonly workDir: string;
  readonly startTimes: ControlPlaneStartTimes;
  readonly pids: { etcd?: number | undefined; apiserver?: number | undefined; controllerManager?: number | undefined };
  /** Admin kubeconfig (context `kperturb-real`, namespace default), CA embedded. */
  kubeconfigYaml(): string;
  /** What KubeClient needs to talk to the API server as the admin. */
  clientOptions(): KubeClientOptions;
  /**
   * Kills kube-controller-manager, kube-apiserver and etcd (SIGKILL, by pid) and deletes the working
   * directory. Idempotent (the first call's options count).
   */
  stop(options?: ControlPlaneStopOptions): Promise<void>;
}

export interface ControlPlaneStopOptions {
  /**
   * Copy the components' logs into this directory before the working directory is deleted: for a
   * control plane started before anyone knew where its logs belong (ControlPlanePool).
   */
  keepLogsIn?: string;
}

export const KUBECONFIG_CONTEXT = 'kperturb-real';
const SERVICE_CIDR = '10.0.0.0/24';
const SERVICE_IP = '10.0.0.1';
/** Bind races (another process takes a port between our probe and the component's bind) are retried this often. */
const START_ATTEMPTS = 3;

export async function startRealControlPlane(options: RealControlPlaneOptions = {}): Promise<RealControlPlane> {
  const binaries = options.binaries ?? locateControlPlaneBinaries();
  for (let attempt = 1; ; attempt++) {
    try {
      return await startOnce(binaries, options);
    } catch (err) {
      if (!(err instanceof PortInUseError) || attempt >= START_ATTEMPTS) throw err;
      options.log?.(`real control plane: ${err.message}; retrying with other ports`);
    }
  }
}

class PortInUseError extends SetupError {}

async function startOnce(binaries: ControlPlaneBinaries, options: RealControlPlaneOptions): Promise<RealControlPlane> {
  const log = options.log ?? (() => undefined);
  const readyTimeoutMs = options.readyTimeoutMs ?? 60_000;
  const started = Date.now();
  const workDir = mkdtempSync(join(options.workDirParent ?? tmpdir(), 'kperturb-realcp-'));
  const logDir = options.logDir ?? workDir;
  mkdirSync(logDir, { recursive: true });
  const components: ComponentProcess[] = [];
  let stopping: Promise<void> | undefined;
  const stopAll = (stopOptions: ControlPlaneStopOptions = {}): Promise<void> =>
    (stopping ??= (async () => {
      // SIGKILL, all at once: the data directory is deleted next, so a graceful shutdown saves
      // nothing and cost about 1.1 s per plan (kube-apiserver drains its requests and watches).
      // Reverse start order, so etcd's kill is the last signal sent.
      await Promise.all([...components].reverse().map((component) => component.kill()));
      if (stopOptions.keepLogsIn !== undefined && stopOptions.keepLogsIn !== logDir) {
        mkdirSync(stopOptions.keepLogsIn, { recursive: true });
        for (const component of components) copyFileSync(component.logFile, join(stopOptions.keepLogsIn, basename(component.logFile)));
      }
      rmSync(workDir, { recursive: true, force: true });
    })());

  try {
    // etcd needs no credentials: it starts while they are made.
    const [etcdClientPort, etcdPeerPort, apiserverPort] = await freePorts(3);
    const etcdUrl = `http://127.0.0.1:${etcdClientPort}`;
    const etcd = new ComponentProcess(
      'etcd',
      binaries.etcd,
      [
        '--name=kperturb',
        `--data-dir=${join(workDir, 'etcd-data')}`,
        `--listen-client-urls=${etcdUrl}`,
        `--advertise-client-urls=${etcdUrl}`,
        `--listen-peer-urls=http://127.0.0.1:${etcdPeerPort}`,
        `--initial-advertise-peer-urls=http://127.0.0.1:${etcdPeerPort}`,
        `--initial-cluster=kperturb=http://127.0.0.1:${etcdPeerPort}`,
        '--initial-cluster-state=new',
        // The data directory is thrown away after the run: durability buys nothing and costs an fsync per write.
        '--unsafe-no-fsync',
        '--log-level=warn',
        ...(options.extraArgs?.etcd ?? []),
      ],
      join(logDir, 'etcd.log'),
    );
    components.push(etcd);
    const credentials = await generateControlPlaneCredentials(SERVICE_IP);
    const files = writeCredentials(workDir, credentials);
    const tCredentials = Date.now();
    await waitUntil(etcd, readyTimeoutMs, async () => {
      const r = await probe(`${etcdUrl}/health`, {});
      return r.status === 200 && /"health":\s*"true"/.test(r.body);
    });
    const tEtcd = Date.now();
    log(`real control plane: etcd ready on ${etcdUrl} (pid ${etcd.pid}, ${tEtcd - started} ms after the start)`);

    // kube-apiserver
    const port = options.apiserverPort ?? apiserverPort!;
    const url = `https://127.0.0.1:${port}`;
    const apiserver = new ComponentProcess(
      'kube-apiserver',
      binaries.kubeApiserver,
      [
        '--bind-address=127.0.0.1',
        '--advertise-address=127.0.0.1',
        `--secure-port=${port}`,
        `--tls-cert-file=${files.servingCert}`,
        `--tls-private-key-file=${files.servingKey}`,
        `--client-ca-file=${files.ca}`,
        `--token-auth-file=${files.tokens}`,
        '--authorization-mode=RBAC',
        `--etcd-servers=${etcdUrl}`,
        `--service-cluster-ip-range=${SERVICE_CIDR}`,
        '--service-account-issuer=https://kubernetes.default.svc.cluster.local',
        `--service-account-key-file=${files.serviceAccountPublicKey}`,
        `--service-account-signing-key-file=${files.serviceAccountKey}`,
        '--allow-privileged=true',
        // The default reconciler would publish 127.0.0.1 as the endpoint of Service default/kubernetes,
        // which Endpoints validation rejects (loopback), logging an error every 10 s. No pod here
        // reaches the API server through that Service anyway.
        '--endpoint-reconciler-type=none',
        '--profiling=false',
        ...(options.extraArgs?.apiserver ?? []),
      ],
      join(logDir, 'kube-apiserver.log'),
    );
    components.push(apiserver);
    await waitUntil(
      apiserver,
      readyTimeoutMs,
      async () => (await probe(`${url}/readyz`, { caPem: credentials.caPem, token: credentials.adminToken })).status === 200,
    );
    const tApiserver = Date.now();
    log(`real control plane: kube-apiserver ready on ${url} (pid ${apiserver.pid}, ${tApiserver - tEtcd} ms)`);

    const kubeconfig = kubeconfigYaml(url, { name: KUBECONFIG_CONTEXT, caPem: credentials.caPem, token: credentials.adminToken });
    const kubeconfigPath = join(workDir, 'admin.kubeconfig');
    writeFileSync(kubeconfigPath, kubeconfig, { mode: 0o600 });

    // kube-controller-manager
    let controllerManager: ComponentProcess | undefined;
    if (options.controllerManager ?? true) {
      controllerManager = new ComponentProcess(
        'kube-controller-manager',
        binaries.kubeControllerManager,
        [
          `--kubeconfig=${kubeconfigPath}`,
          `--controllers=${(options.controllers ?? ['*']).join(',')}`,
          // One process per control plane: leader election would only add a Lease renewal every 2 s.
          '--leader-elect=false',
          // No HTTPS endpoint: nothing scrapes it, and readiness is observed through the API below.
          '--secure-port=0',
          `--service-account-private-key-file=${files.serviceAccountKey}`,
          `--root-ca-file=${files.ca}`,
          `--cluster-signing-cert-file=${files.ca}`,
          `--cluster-signing-key-file=${files.caKey}`,
          `--service-cluster-ip-range=${SERVICE_CIDR}`,
          '--cluster-name=kperturb',
          // Otherwise it creates /usr/libexec/kubernetes/kubelet-plugins/volume/exec on the host.
          `--flex-volume-plugin-dir=${join(workDir, 'flexvolume')}`,
          ...(options.extraArgs?.controllerManager ?? []),
        ],
        join(logDir, 'kube-controller-manager.log'),
      );
      components.push(controllerManager);
      // The serviceaccount controller creates default/default once its informers have synced; the
      // ServiceAccount admission plugin rejects pods in a namespace without it, so this is also the
      // moment the cluster can run workloads.
      await waitUntil(
        controllerManager,
        readyTimeoutMs,
        async () =>
          (await probe(`${url}/api/v1/namespaces/default/serviceaccounts/default`, { caPem: credentials.caPem, token: credentials.adminToken })).status === 200,
      );
      log(`real control plane: kube-controller-manager ready (pid ${controllerManager.pid}, ${Date.now() - tApiserver} ms)`);
    }
    const tDone = Date.now();

    return {
      url,
      caPem: credentials.caPem,
      token: credentials.adminToken,
      kubeconfigPath,
      workDir,
      startTimes: {
        credentials: tCredentials - started,
        etcd: tEtcd - started,
        apiserver: tApiserver - tEtcd,
        controllerManager: tDone - tApiserver,
        total: tDone - started,
      },
      pids: { etcd: etcd.pid, apiserver: apiserver.pid, controllerManager: controllerManager?.pid },
      kubeconfigYaml: () => kubeconfig,
      clientOptions: () => ({ caPem: credentials.caPem, token: credentials.adminToken }),
      stop: stopAll,
    };
  } catch (err) {
    await stopAll();
    throw err;
  }
}

interface CredentialFiles {
  ca: string;
  caKey: string;
  servingCert: string;
  servingKey: string;
  serviceAccountKey: string;
  serviceAccountPublicKey: string;
  tokens: string;
}

function writeCredentials(workDir: string, c: ControlPlaneCredentials): CredentialFiles {
  const dir = join(workDir, 'pki');
  mkdirSync(dir, { mode: 0o700 });
  const files: CredentialFiles = {
    ca: join(dir, 'ca.crt'),
    caKey: join(dir, 'ca.key'),
    servingCert: join(dir, 'apiserver.crt'),
    servingKey: join(dir, 'apiserver.key'),
    serviceAccountKey: join(dir, 'sa.key'),
    serviceAccountPublicKey: join(dir, 'sa.pub'),
    tokens: join(dir, 'tokens.csv'),
  };
  writeFileSync(files.ca, c.caPem);
  writeFileSync(files.caKey, c.caKeyPem, { mode: 0o600 });
  writeFileSync(files.servingCert, c.servingCertPem);
  writeFileSync(files.servingKey, c.servingKeyPem, { mode: 0o600 });
  writeFileSync(files.serviceAccountKey, c.serviceAccountKeyPem, { mode: 0o600 });
  writeFileSync(files.serviceAccountPublicKey, c.serviceAccountPublicKeyPem);
  // token,user,uid,"group1,group2"
  writeFileSync(files.tokens, `${c.adminToken},${ADMIN_USER},${ADMIN_USER},"system:masters"\n`, { mode: 0o600 });
  return files;
}

/** Ports the OS reports free on 127.0.0.1 right now (all held open together, so they differ). */
async function freePorts(count: number): Promise<number[]> {
  const servers = Array.from({ length: count }, () => createServer());
  const ports = await Promise.all(servers.map((s) => listenOnLoopback(s)));
  await Promise.all(servers.map((s) => new Promise<void>((resolve) => s.close(() => resolve()))));
  return ports;
}

/** Polls `ready` every 100 ms until it is true, the component exits, or the timeout passes. */
async function waitUntil(component: ComponentProcess, timeoutMs: number, ready: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (!component.alive) {
      const tail = component.logTail(40);
      const report = component.failureReport(`${component.describeExit()} during start-up`);
      if (/address already in use/i.test(tail)) throw new PortInUseError(report);
      throw new SetupError(report);
    }
    if (await ready().catch(() => false)) return;
    if (Date.now() >= deadline) throw new SetupError(component.failureReport(`${component.name} was not ready within ${timeoutMs / 1000} s`));
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** One GET, never throwing for HTTP statuses; 2 s timeout. */
function probe(url: string, auth: { caPem?: string; token?: string }): Promise<{ status: number; body: string }> {
  const target = new URL(url);
  const mod = target.protocol === 'https:' ? https : http;
  return new Promise((resolve, reject) => {
    const req = mod.request(
      target,
      {
        method: 'GET',
        headers: auth.token ? { Authorization: `Bearer ${auth.token}` } : {},
        ...(auth.caPem ? { ca: auth.caPem } : {}),
        timeout: 2000,
        agent: false,
      },
      (res) => {
        let body = '';
        res.setEncoding('utf8').on('data', (chunk: string) => (body += chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
        res.on('error', reject);
      },
    );
    req.on('timeout', () => req.destroy(new Error(`GET ${url}: timed out`)));
    req.on('error', reject);
    req.end();
  });
}
