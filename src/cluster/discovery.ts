/**
 * Discovery documents: /version; legacy discovery (/api, /api/v1, /apis, /apis/{group},
 * /apis/{group}/{version}); and aggregated discovery (apidiscovery.k8s.io v2 and v2beta1
 * APIGroupDiscoveryList on /api and /apis), which kubectl >= 1.30 and client-go ask for first with
 * `Accept: application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,...`.
 */
import { groupVersion } from '../model/api-path.js';
import type { ResourceDefinition, ResourceRegistry } from './registry.js';
import { SUBRESOURCE_VERBS } from './registry.js';
import { versionInfoFor } from './kube-version.js';
import { DEFAULT_KUBERNETES_VERSION, parseKubernetesVersion, type KubernetesVersion } from '../model/kube-version.js';

/** What each subresource answers with, and its verbs (as kube-apiserver registers them). */
interface SubresourceInfo {
  /** Response kind; undefined means the parent's kind. */
  kind?: { group: string; version: string; kind: string };
  verbs: readonly string[];
}

const SUBRESOURCES: Readonly<Record<string, SubresourceInfo>> = {
  status: { verbs: SUBRESOURCE_VERBS },
  scale: { kind: { group: 'autoscaling', version: 'v1', kind: 'Scale' }, verbs: SUBRESOURCE_VERBS },
  binding: { kind: { group: '', version: 'v1', kind: 'Binding' }, verbs: ['create'] },
  eviction: { kind: { group: 'policy', version: 'v1', kind: 'Eviction' }, verbs: ['create'] },
  finalize: { verbs: ['update'] },
  // The streaming subresources (src/streaming/pod-streaming.ts): connect verbs, as kube-apiserver lists them.
  exec: { kind: { group: '', version: 'v1', kind: 'PodExecOptions' }, verbs: ['create', 'get'] },
  attach: { kind: { group: '', version: 'v1', kind: 'PodAttachOptions' }, verbs: ['create', 'get'] },
  log: { kind: { group: '', version: 'v1', kind: 'Pod' }, verbs: ['get'] },
  portforward: { kind: { group: '', version: 'v1', kind: 'PodPortForwardOptions' }, verbs: ['create', 'get'] },
};

function subresourceInfo(sub: string): SubresourceInfo {
  return SUBRESOURCES[sub] ?? { verbs: SUBRESOURCE_VERBS };
}

/** The /version document: the emulated release's (kube-version.ts; default the newest). */
export function versionInfo(release: KubernetesVersion = parseKubernetesVersion(DEFAULT_KUBERNETES_VERSION)!): Record<string, string> {
  return versionInfoFor(release);
}

export function apiVersions(serverAddress: string): Record<string, unknown> {
  return { kind: 'APIVersions', versions: ['v1'], serverAddressByClientCIDRs: [{ clientCIDR: '0.0.0.0/0', serverAddress }] };
}

function apiGroup(group: string, versions: string[]): Record<string, unknown> {
  const entries = versions.map((version) => ({ groupVersion: groupVersion(group, version), version }));
  return { name: group, versions: entries, preferredVersion: entries[0] };
}

export function apiGroupList(registry: ResourceRegistry): Record<string, unknown> {
  const groups = registry
    .groups()
    .filter((g) => g.group !== '')
    .sort((a, b) => builtinFirst(registry, a.group, b.group))
    .map((g) => apiGroup(g.group, g.versions));
  return { kind: 'APIGroupList', apiVersion: 'v1', groups };
}

function builtinFirst(registry: ResourceRegistry, a: string, b: string): number {
  const builtin = (g: string): number => (registry.all().some((d) => d.group === g && d.definedBy === 'builtin') ? 0 : 1);
  return builtin(a) - builtin(b) || a.localeCompare(b);
}

export function apiGroupDocument(registry: ResourceRegistry, group: string): Record<string, unknown> | undefined {
  const found = registry.groups().find((g) => g.group === group);
  if (!found || group === '') return undefined;
  return { kind: 'APIGroup', apiVersion: 'v1', ...apiGroup(group, found.versions) };
}

function resourceEntries(def: ResourceDefinition): Array<Record<string, unknown>> {
  const main: Record<string, unknown> = {
    name: def.resource,
    singularName: def.singularName,
    namespaced: def.namespaced,
    kind: def.kind,
    verbs: [...def.verbs],
  };
  if (def.shortNames.length > 0) main.shortNames = [...def.shortNames];
  if (def.categories.length > 0) main.categories = [...def.categories];
  const subs = def.subresources.map((sub) => {
    const info = subresourceInfo(sub);
    return {
      name: `${def.resource}/${sub}`,
      singularName: '',
      namespaced: def.namespaced,
      ...(info.kind ? { group: info.kind.group, version: info.kind.version } : {}),
      kind: info.kind?.kind ?? def.kind,
      verbs: [...info.verbs],
    };
  });
  return [main, ...subs];
}

export function apiResourceList(registry: ResourceRegistry, group: string, version: string): Record<string, unknown> | undefined {
  const defs = registry.resourcesIn(group, version);
  if (defs.length === 0) return undefined;
  return { kind: 'APIResourceList', apiVersion: 'v1', groupVersion: groupVersion(group, version), resources: defs.flatMap(resourceEntries) };
}

export type AggregatedVersion = 'v2' | 'v2beta1';

/**
 * The aggregated discovery version the Accept header asks for first among those the server serves
 * (`served`, default all), if any.
 */
export function wantsAggregatedDiscovery(
  accept: string | undefined,
  served: (version: AggregatedVersion) => boolean = () => true,
): { version: AggregatedVersion; contentType: string } | undefined {
  if (!accept) return undefined;
  for (const entry of accept.split(',')) {
    const params = new Map(
      entry
        .split(';')
        .slice(1)
        .map((p) => p.trim().split('=') as [string, string])
        .map(([k, v]) => [k?.trim(), v?.trim()]),
    );
    if (params.get('g') !== 'apidiscovery.k8s.io' || params.get('as') !== 'APIGroupDiscoveryList') continue;
    const version = params.get('v');
    if ((version === 'v2' || version === 'v2beta1') && served(version)) {
      return { version, contentType: `application/json;g=apidiscovery.k8s.io;v=${version};as=APIGroupDiscoveryList` };
    }
  }
  return undefined;
}

function discoveryResource(def: ResourceDefinition, version: string): Record<string, unknown> {
  const resource: Record<string, unknown> = {
    resource: def.resource,
    responseKind: { group: def.group, version, kind: def.kind },
    scope: def.namespaced ? 'Namespaced' : 'Cluster',
    singularResource: def.singularName,
    verbs: [...def.verbs],
  };
  if (def.shortNames.length > 0) resource.shortNames = [...def.shortNames];
  if (def.categories.length > 0) resource.categories = [...def.categories];
  if (def.subresources.length > 0) {
    resource.subresources = def.subresources.map((sub) => {
      const info = subresourceInfo(sub);
      return { subresource: sub, responseKind: info.kind ?? { group: def.group, version, kind: def.kind }, verbs: [...info.verbs] };
    });
  }
  return resource;
}

/** APIGroupDiscoveryList for /api (`legacy`: the core group) or /apis (every other group). */
export function aggregatedDiscovery(registry: ResourceRegistry, which: 'legacy' | 'apis', version: AggregatedVersion): Record<string, unknown> {
  const groups = registry
    .groups()
    .filter((g) => (which === 'legacy' ? g.group === '' : g.group !== ''))
    .sort((a, b) => builtinFirst(registry, a.group, b.group));
  const items = groups.map((g) => ({
    metadata: g.group === '' ? { creationTimestamp: null } : { name: g.group, creationTimestamp: null },
    versions: g.versions.map((v) => ({
      version: v,
      resources: registry.resourcesIn(g.group, v).map((def) => discoveryResource(def, v)),
      freshness: 'Current',
    })),
  }));
  return { kind: 'APIGroupDiscoveryList', apiVersion: `apidiscovery.k8s.io/${version}`, metadata: {}, items };
}
