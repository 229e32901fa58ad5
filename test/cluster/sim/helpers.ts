/** Shared set-up for the simulation tests: an embedded cluster with the simulation, and polling helpers. */
import type { ExecutionContext } from 'ava';
import * as k8s from '@kubernetes/client-node';
import { EmbeddedCluster } from '../../../src/cluster/index.js';
import type { SimulationOptions } from '../../../src/cluster/sim/index.js';
import { KubeClient } from '../../../src/kube/client.js';
import { clusterAuth } from '../helpers.js';

export interface SimCluster {
  cluster: EmbeddedCluster;
  kc: k8s.KubeConfig;
  core: k8s.CoreV1Api;
  apps: k8s.AppsV1Api;
  batch: k8s.BatchV1Api;
  custom: k8s.CustomObjectsApi;
  ext: k8s.ApiextensionsV1Api;
  client: KubeClient;
  /** What the simulated controllers logged (for failure messages). */
  log: string[];
}

/** Fast timings by default, so that a test takes well under a second of simulated time. */
export const FAST: SimulationOptions = { podStartDelayMs: 20, podStopDelayMs: 10, podRunToCompletionMs: 50 };

export async function startSimCluster(t: ExecutionContext, simulation: SimulationOptions = {}): Promise<SimCluster> {
  const log: string[] = [];
  const cluster = await EmbeddedCluster.start({ simulation: { ...FAST, ...simulation, log: (line) => log.push(line) } });
  const client = new KubeClient(cluster.url, cluster.clientOptions());
  t.teardown(async () => {
    client.close();
    await cluster.stop();
  });
  const kc = new k8s.KubeConfig();
  kc.loadFromString(cluster.kubeconfigYaml());
  return {
    cluster,
    kc,
    core: kc.makeApiClient(k8s.CoreV1Api),
    apps: kc.makeApiClient(k8s.AppsV1Api),
    batch: kc.makeApiClient(k8s.BatchV1Api),
    custom: kc.makeApiClient(k8s.CustomObjectsApi),
    ext: kc.makeApiClient(k8s.ApiextensionsV1Api),
    client,
    log,
  };
}

export const mergePatch = k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch);

/**
 * The least time `eventually` gives a condition before it fails: its timeout guards against a hang,
 * it does not measure speed, and a loaded 2-core machine may be many times slower than an idle one.
 */
const MIN_GUARD_MS = 30_000;

/**
 * Polls `probe` until it returns a value that is not undefined/false; fails with `what` (and the
 * simulation log) after `timeoutMs` (at least MIN_GUARD_MS).
 */
export async function eventually<T>(what: string, probe: () => Promise<T | undefined | false>, timeoutMs = 5000, log?: string[]): Promise<T> {
  const deadline = Date.now() + Math.max(timeoutMs, MIN_GUARD_MS);
  let last: unknown;
  for (;;) {
    try {
      const value = await probe();
      if (value !== undefined && value !== false) return value;
    } catch (err) {
      last = err;
    }
    if (Date.now() > deadline) {
      const tail = log ? `\nsimulation log:\n  ${log.slice(-30).join('\n  ')}` : '';
      throw new Error(`timed out waiting for ${what}${last ? ` (last error: ${(last as Error).message})` : ''}${tail}`);
    }
    await new Promise((r) => setTimeout(r, 15));
  }
}

/** GET as JSON, undefined on 404. */
export async function getJson(cluster: EmbeddedCluster, path: string): Promise<any> {
  const res = await fetch(cluster.url + path, { headers: clusterAuth(cluster) });
  if (res.status === 404) return undefined;
  if (res.status !== 200) throw new Error(`GET ${path}: HTTP ${res.status}: ${await res.text()}`);
  return res.json();
}

export async function send(
  cluster: EmbeddedCluster,
  method: string,
  path: string,
  body?: unknown,
  contentType = 'application/json',
): Promise<{ status: number; json: any }> {
  const res = await fetch(cluster.url + path, {
    method,
    headers: { ...clusterAuth(cluster), ...(body === undefined ? {} : { 'Content-Type': contentType }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await res.text();
  let json: unknown = text;
  try {
    json = JSON.parse(text);
  } catch {
    /* keep text */
  }
  return { status: res.status, json };
}

export function container(name = 'app', image = 'nginx:1.27'): k8s.V1Container {
  return { name, image, ports: [{ name: 'http', containerPort: 8080 }] };
}

export function podTemplate(labels: Record<string, string>, extra: Partial<k8s.V1PodSpec> = {}): k8s.V1PodTemplateSpec {
  return { metadata: { labels }, spec: { containers: [container()], ...extra } };
}

/** Names of the pods in a namespace that match a label selector (`app=web`), sorted. */
export async function podNames(core: k8s.CoreV1Api, namespace: string, labelSelector: string): Promise<string[]> {
  const list = await core.listNamespacedPod({ namespace, labelSelector });
  return list.items.map((p) => p.metadata!.name!).sort();
}

export function isReady(pod: k8s.V1Pod): boolean {
  return pod.status?.phase === 'Running' && (pod.status.conditions ?? []).some((c) => c.type === 'Ready' && c.status === 'True');
}
