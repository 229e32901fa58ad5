/**
 * Shared by the real-control-plane tier (test/real/, run by `npm run test:real`, never by `npm test`):
 * kubectl and @kubernetes/client-node set up against a started cluster, and polling helpers.
 */
import type { ExecutionContext } from 'ava';
import { EmbeddedCluster } from '../../src/cluster/index.js';
import { startRealControlPlane } from '../../src/realcluster/index.js';
import { execFile } from 'node:child_process';
import http from 'node:http';
import https from 'node:https';
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import * as k8s from '@kubernetes/client-node';
import type { KubeClient, KubeClientOptions } from '../../src/kube/client.js';
import { scratchDir } from '../_scratch-dir.js';

export const KUBECTL = process.env.KUBECTL ?? '/usr/bin/kubectl';

export interface Kubectl {
  (...args: string[]): Promise<{ code: number; stdout: string; stderr: string }>;
  /** Writes a file in kubectl's scratch directory and returns its path. */
  file(name: string, content: string): string;
  kubeconfig: string;
}

/** kubectl with its own HOME (no cache shared with other tests) and a kubeconfig for the cluster. */
export function kubectlFor(t: ExecutionContext, kubeconfigYaml: string): Kubectl {
  if (!existsSync(KUBECTL)) {
    t.fail(`kubectl not found at ${KUBECTL}: install it or set KUBECTL to its path (these tests cannot run without it)`);
    throw new Error('kubectl missing');
  }
  const dir = scratchDir(t, 'kperturb-real-kubectl-');
  const kubeconfig = join(dir, 'kubeconfig');
  writeFileSync(kubeconfig, kubeconfigYaml, { mode: 0o600 });
  const run = ((...args: string[]) =>
    new Promise((resolve) => {
      execFile(KUBECTL, ['--kubeconfig', kubeconfig, ...args], { env: { ...process.env, HOME: dir }, timeout: 60_000 }, (err, stdout, stderr) => {
        const code = err ? (typeof (err as { code?: unknown }).code === 'number' ? (err as { code: number }).code : 1) : 0;
        resolve({ code, stdout, stderr });
      });
    })) as Kubectl;
  run.file = (name, content) => {
    const path = join(dir, name);
    writeFileSync(path, content);
    return path;
  };
  run.kubeconfig = kubeconfig;
  return run;
}

export async function kubectlOk(t: ExecutionContext, kubectl: Kubectl, ...args: string[]): Promise<string> {
  const res = await kubectl(...args);
  t.is(res.code, 0, `kubectl ${args.join(' ')} failed: ${res.stderr}`);
  return res.stdout;
}

export function clientNodeConfig(kubeconfigYaml: string): k8s.KubeConfig {
  const kc = new k8s.KubeConfig();
  kc.loadFromString(kubeconfigYaml);
  return kc;
}

/** Polls `check` every 200 ms until it returns a value other than undefined; fails with `what` after the timeout. */
export async function eventually<T>(what: string, timeoutMs: number, check: () => Promise<T | undefined>): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  for (;;) {
    try {
      const value = await check();
      if (value !== undefined) return value;
    } catch (err) {
      lastError = err;
    }
    if (Date.now() >= deadline) {
      throw new Error(`${what}: not within ${timeoutMs / 1000} s${lastError ? ` (last error: ${(lastError as Error).message})` : ''}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

export { processExists } from '../../src/process/groups.js';

/** A namespaced CRD `widgets.<group>` (kind Widget, v1, status subresource); one group per test keeps tests apart. */
export const crdYaml = (group: string): string => `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.${group}
spec:
  group: ${group}
  scope: Namespaced
  names: { plural: widgets, singular: widget, kind: Widget, listKind: WidgetList }
  versions:
    - name: v1
      served: true
      storage: true
      schema:
        openAPIV3Schema:
          type: object
          properties:
            spec:
              type: object
              properties:
                size: { type: integer }
            status:
              type: object
              properties:
                phase: { type: string }
      subresources: { status: {} }
`;

/**
 * A client-node watch that is retried while the server answers 429: a real kube-apiserver refuses
 * watches with "Too Many Requests" while the watch cache of a resource initializes (e.g. right after
 * its CRD is Established), and clients are expected to retry, as client-go's reflector does.
 * `onEnd` is called if an established watch ends.
 */
export async function watchWithRetry<T>(
  kc: k8s.KubeConfig,
  path: string,
  onEvent: (type: string, object: T) => void,
  onEnd: (reason: string) => void,
  timeoutMs = 30_000,
): Promise<{ controller: AbortController; retries: number }> {
  const deadline = Date.now() + timeoutMs;
  for (let retries = 0; ; retries++) {
    let established = false;
    let refused: { statusCode?: number; message?: string } | undefined;
    const controller = await new k8s.Watch(kc).watch(path, {}, onEvent, (err: unknown) => {
      const reason = err ? String((err as Error).message ?? err) : 'closed by the server';
      if (established) onEnd(reason);
      else refused = (err ?? { message: reason }) as { statusCode?: number; message?: string };
    });
    if (!refused) {
      established = true;
      return { controller, retries };
    }
    if (refused.statusCode !== 429 || Date.now() >= deadline) throw new Error(`watch ${path}: ${refused.message} (after ${retries} retries)`);
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
}

/** The median of some numbers (undefined for none). */
export function median(values: readonly number[]): number | undefined {
  if (values.length === 0) return undefined;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/**
 * Every object the cluster serves, as `<resource>.<group> <namespace>/<name> <uid>` (Events left
 * out: the cluster's own components write them all the time). Two inventories differ exactly by the
 * objects created or deleted in between.
 */
/**
 * Waits (up to 30 s) until a freshly started control plane has published its own objects that come
 * after start-up: kube-controller-manager's root-CA publisher creates `kube-root-ca.crt` in every
 * namespace a moment after the namespaces exist. An inventory taken before that would count them as
 * objects the runs left behind.
 */
export async function waitForBootstrapObjects(client: KubeClient, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  const namespaces = await client.resolveKind('Namespace', 'v1');
  for (;;) {
    const { items } = await client.list(namespaces);
    const missing: string[] = [];
    for (const ns of items) {
      const name = String(ns.metadata?.name);
      if (!(await client.get(`ConfigMap/${name}/kube-root-ca.crt`))) missing.push(name);
    }
    if (missing.length === 0) return;
    if (Date.now() > deadline) throw new Error(`kube-root-ca.crt not published in namespace(s) ${missing.join(', ')} after ${timeoutMs / 1000} s`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

export async function clusterInventory(client: KubeClient): Promise<Set<string>> {
  client.resources.invalidate();
  const entries = new Set<string>();
  for (const info of await client.resources.all()) {
    if (info.resource === 'events' || !info.verbs.includes('list')) continue;
    const { items } = await client.list(info);
    for (const item of items) {
      const md = item.metadata ?? {};
      entries.add(
        `${info.resource}${info.group ? `.${info.group}` : ''} ${md.namespace ? `${String(md.namespace)}/` : ''}${String(md.name)} ${String(md.uid)}`,
      );
    }
  }
  return entries;
}

export interface Answer {
  status: number;
  warning?: string;
  json: any;
}
export type Request = (method: string, path: string, body?: unknown, contentType?: string) => Promise<Answer>;

/** Raw HTTP requests to a cluster at `url` (token or client certificate from `opts`), answers parsed. */
export function requester(url: string, opts: KubeClientOptions = {}): Request {
  return (method, path, body, contentType = 'application/json') =>
    new Promise((resolve, reject) => {
      const target = new URL(url + path);
      const data = body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body);
      const headers: Record<string, string> = {};
      if (data !== undefined) headers['Content-Type'] = contentType;
      if (opts.token) headers.Authorization = `Bearer ${opts.token}`;
      const mod = target.protocol === 'https:' ? https : http;
      const req = mod.request(target, { method, headers, ca: opts.caPem, cert: opts.clientCertPem, key: opts.clientKeyPem }, (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (d: string) => (text += d));
        res.on('end', () => {
          let json: unknown = text;
          try {
            json = JSON.parse(text);
          } catch {
            // not JSON
          }
          const warning = res.headers.warning;
          resolve({ status: res.statusCode ?? 0, ...(warning ? { warning: String(warning) } : {}), json });
        });
      });
      req.on('error', reject);
      if (data !== undefined) req.write(data);
      req.end();
    });
}

/** A JSON value with object keys sorted, for comparing answers. */
export const sortKeys = (v: unknown): unknown =>
  Array.isArray(v)
    ? v.map(sortKeys)
    : v && typeof v === 'object'
      ? Object.fromEntries(
          Object.keys(v)
            .sort()
            .map((k) => [k, sortKeys((v as any)[k])]),
        )
      : v;

/**
 * Runs `scenarios` against a bare embedded cluster, then against a real control plane, and compares
 * the named answers they record.
 */
export async function compareWithRealControlPlane(t: ExecutionContext, scenarios: (req: Request) => Promise<Map<string, unknown>>): Promise<void> {
  const embedded = await EmbeddedCluster.start({ simulation: false });
  let mine: Map<string, unknown>;
  try {
    mine = await scenarios(requester(embedded.url, embedded.clientOptions()));
  } finally {
    await embedded.stop();
  }
  const cp = await startRealControlPlane();
  let theirs: Map<string, unknown>;
  try {
    theirs = await scenarios(requester(cp.url, cp.clientOptions()));
  } finally {
    await cp.stop();
  }
  t.deepEqual([...mine.keys()], [...theirs.keys()]);
  for (const [name, answer] of theirs) t.deepEqual(mine.get(name), answer, name);
}
