/**
 * Legacy (unaggregated) discovery documents: /version, /api, /api/v1, /apis, /apis/{group},
 * /apis/{group}/{version}. client-go asks for aggregated discovery first and falls back to these when
 * the response is plain `application/json`, which is what this server sends.
 */
import { groupVersion } from '../model/api-path.js';
import type { ResourceDefinition, ResourceRegistry } from './registry.js';
import { SUBRESOURCE_VERBS } from './registry.js';

/** The Kubernetes version the embedded server presents (its behaviour follows this release). */
export const SERVER_VERSION = { major: '1', minor: '32', gitVersion: 'v1.32.0+kperturb' } as const;

export function versionInfo(): Record<string, string> {
  return {
    major: SERVER_VERSION.major,
    minor: SERVER_VERSION.minor,
    gitVersion: SERVER_VERSION.gitVersion,
    gitCommit: '0000000000000000000000000000000000000000',
    gitTreeState: 'clean',
    buildDate: '2025-01-01T00:00:00Z',
    goVersion: 'go1.23.0',
    compiler: 'gc',
    platform: 'linux/amd64',
  };
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
  const subs = def.subresources.map((sub) => ({
    name: `${def.resource}/${sub}`,
    singularName: '',
    namespaced: def.namespaced,
    kind: def.kind,
    verbs: [...SUBRESOURCE_VERBS],
  }));
  return [main, ...subs];
}

export function apiResourceList(registry: ResourceRegistry, group: string, version: string): Record<string, unknown> | undefined {
  const defs = registry.resourcesIn(group, version);
  if (defs.length === 0) return undefined;
  return { kind: 'APIResourceList', apiVersion: 'v1', groupVersion: groupVersion(group, version), resources: defs.flatMap(resourceEntries) };
}
