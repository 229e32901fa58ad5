/** Shared set-up for the embedded cluster tests: a fresh cluster per test, stopped by t.teardown. */
import type { ExecutionContext } from 'ava';
import * as k8s from '@kubernetes/client-node';
import { EmbeddedCluster, type EmbeddedClusterOptions } from '../../src/cluster/index.js';

export interface TestCluster {
  cluster: EmbeddedCluster;
  kc: k8s.KubeConfig;
  core: k8s.CoreV1Api;
  apps: k8s.AppsV1Api;
  custom: k8s.CustomObjectsApi;
  ext: k8s.ApiextensionsV1Api;
  objects: k8s.KubernetesObjectApi;
}

/**
 * A bare API server (no simulated controllers, scheduler or kubelets) unless `options.simulation`
 * says otherwise: these tests pin API semantics, and the simulation has its own tests.
 */
export async function startCluster(t: ExecutionContext, options: EmbeddedClusterOptions = {}): Promise<TestCluster> {
  const cluster = await EmbeddedCluster.start({ simulation: false, ...options });
  t.teardown(() => cluster.stop());
  const kc = new k8s.KubeConfig();
  kc.loadFromString(cluster.kubeconfigYaml());
  return {
    cluster,
    kc,
    core: kc.makeApiClient(k8s.CoreV1Api),
    apps: kc.makeApiClient(k8s.AppsV1Api),
    custom: kc.makeApiClient(k8s.CustomObjectsApi),
    ext: kc.makeApiClient(k8s.ApiextensionsV1Api),
    objects: k8s.KubernetesObjectApi.makeApiClient(kc),
  };
}

export interface StatusBody {
  kind?: string;
  status?: string;
  reason?: string;
  code?: number;
  message?: string;
  details?: { name?: string; group?: string; kind?: string; causes?: Array<{ field?: string; reason?: string }> };
}

/** The metav1.Status carried by a client-node ApiException. */
export function statusOf(err: unknown): StatusBody {
  const body = (err as { body?: unknown }).body;
  if (typeof body === 'string') return JSON.parse(body) as StatusBody;
  return (body ?? {}) as StatusBody;
}

export const mergePatch = k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch);
export const jsonPatch = k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.JsonPatch);
export const strategicPatch = k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.StrategicMergePatch);

/** The cluster's bearer token as a header, for raw requests. */
export function clusterAuth(cluster: EmbeddedCluster): Record<string, string> {
  return cluster.token === undefined ? {} : { authorization: `Bearer ${cluster.token}` };
}

/** Raw HTTP against the cluster, for what typed clients cannot send (malformed bodies, odd paths). */
export async function raw(
  cluster: EmbeddedCluster,
  method: string,
  path: string,
  body?: string | Uint8Array,
  contentType = 'application/json',
  headers: Record<string, string> = {},
): Promise<{ status: number; json: any; headers: Headers }> {
  const res = await fetch(cluster.url + path, {
    method,
    ...(body === undefined ? {} : { body: body as BodyInit }),
    headers: { ...clusterAuth(cluster), ...(body === undefined ? {} : { 'Content-Type': contentType }), ...headers },
  });
  const text = await res.text();
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = text;
  }
  return { status: res.status, json, headers: res.headers };
}

export interface WatchLine {
  type: string;
  object: any;
}

/**
 * A raw watch stream: collects parsed lines; `next(n)` waits for n more events.
 * Closed by t.teardown (and by the cluster stopping).
 */
export async function openWatch(
  t: ExecutionContext,
  cluster: EmbeddedCluster,
  path: string,
): Promise<{
  events: WatchLine[];
  status: number;
  waitFor(count: number, timeoutMs?: number): Promise<WatchLine[]>;
  ended: Promise<void>;
  close(): void;
}> {
  const controller = new AbortController();
  t.teardown(() => controller.abort());
  const res = await fetch(cluster.url + path, { signal: controller.signal, headers: clusterAuth(cluster) });
  const events: WatchLine[] = [];
  const waiters: Array<() => void> = [];
  const ended = (async () => {
    if (!res.body) return;
    const decoder = new TextDecoder();
    let buffer = '';
    try {
      for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
        buffer += decoder.decode(chunk, { stream: true });
        let nl: number;
        while ((nl = buffer.indexOf('\n')) >= 0) {
          const line = buffer.slice(0, nl);
          buffer = buffer.slice(nl + 1);
          if (line.trim()) events.push(JSON.parse(line) as WatchLine);
        }
        for (const w of waiters.splice(0)) w();
      }
    } catch {
      // aborted
    }
    for (const w of waiters.splice(0)) w();
  })();
  let done = false;
  void ended.then(() => (done = true));
  return {
    events,
    status: res.status,
    ended,
    close: () => controller.abort(),
    async waitFor(count: number, timeoutMs = 5000): Promise<WatchLine[]> {
      const deadline = Date.now() + timeoutMs;
      while (events.length < count) {
        if (done) throw new Error(`watch ended with ${events.length} events, expected ${count}: ${JSON.stringify(events)}`);
        const left = deadline - Date.now();
        if (left <= 0) throw new Error(`timed out waiting for ${count} watch events, got ${events.length}: ${JSON.stringify(events)}`);
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, left);
          waiters.push(() => {
            clearTimeout(timer);
            resolve();
          });
        });
      }
      return events.slice(0, count);
    },
  };
}

export function configMap(name: string, data: Record<string, string> = {}, labels?: Record<string, string>): k8s.V1ConfigMap {
  return { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, ...(labels ? { labels } : {}) }, data };
}

export const WIDGET_CRD = {
  apiVersion: 'apiextensions.k8s.io/v1',
  kind: 'CustomResourceDefinition',
  metadata: { name: 'widgets.example.com' },
  spec: {
    group: 'example.com',
    scope: 'Namespaced',
    names: { plural: 'widgets', singular: 'widget', kind: 'Widget', shortNames: ['wd'] },
    versions: [
      {
        name: 'v1',
        served: true,
        storage: true,
        subresources: { status: {} },
        // client-node's typed serializer spells the extension x_kubernetes_preserve_unknown_fields (it drops
        // the YAML spelling): without it the server would prune spec and status away.
        schema: { openAPIV3Schema: { type: 'object', x_kubernetes_preserve_unknown_fields: true } },
      },
    ],
  },
};

export function until(predicate: () => boolean, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  return new Promise((resolve, reject) => {
    const tick = (): void => {
      if (predicate()) resolve();
      else if (Date.now() > deadline) reject(new Error('condition not met in time'));
      else setTimeout(tick, 10);
    };
    tick();
  });
}

/** A watch through @kubernetes/client-node's Watch: collected events and a promise for its end. */
export async function clientWatch(
  t: ExecutionContext,
  kc: k8s.KubeConfig,
  path: string,
  params: Record<string, string | number | boolean>,
): Promise<{ events: WatchLine[]; ended: Promise<unknown>; waitFor(count: number): Promise<WatchLine[]>; abort(): void }> {
  const events: WatchLine[] = [];
  let finish: (err: unknown) => void = () => undefined;
  const ended = new Promise<unknown>((resolve) => (finish = resolve));
  const request = await new k8s.Watch(kc).watch(
    path,
    params,
    (type, object) => events.push({ type, object }),
    (err) => finish(err),
  );
  t.teardown(() => request.abort());
  return {
    events,
    ended,
    abort: () => request.abort(),
    async waitFor(count: number): Promise<WatchLine[]> {
      await until(() => events.length >= count);
      return events.slice(0, count);
    },
  };
}
