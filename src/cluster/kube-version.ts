/**
 * The release the embedded API server emulates, applied to its kinds: which versions of each built-in
 * definition it serves, whether it answers aggregated discovery, and what /version says. The
 * releases and each kind's lifecycle are src/model/kube-version.ts.
 */
import type { ResourceDefinition } from './registry.js';
import { compareKubeVersions, resourceKey } from './registry.js';
import { LIFECYCLES, type KubernetesVersion } from '../model/kube-version.js';

/** The versions of a built-in kind the release serves, highest priority first. */
export function servedVersions(def: ResourceDefinition, release: KubernetesVersion): string[] {
  const spans = LIFECYCLES[resourceKey(def)];
  if (!spans) return [...def.versions];
  return spans
    .filter((s) => (s.from === undefined || release.minor >= s.from) && (s.until === undefined || release.minor < s.until))
    .map((s) => s.version)
    .sort(compareKubeVersions);
}

/**
 * The built-in definitions as `release` serves them: each with the versions it served then, stored
 * in its newest form (`storageVersion`), and kinds served in no version left out. The definitions
 * list every version any supported release serves (with their conversions); this only narrows them.
 */
export function definitionsForRelease(defs: readonly ResourceDefinition[], release: KubernetesVersion): ResourceDefinition[] {
  const out: ResourceDefinition[] = [];
  for (const def of defs) {
    const versions = servedVersions(def, release);
    if (versions.length === 0) continue;
    out.push({ ...def, versions, storageVersion: def.storageVersion ?? def.versions[0]! });
  }
  return out;
}

/**
 * Aggregated discovery (KEP-3352): beta and on by default from 1.27 (apidiscovery.k8s.io/v2beta1),
 * GA in 1.30 (v2). An older server ignores the Accept parameters it does not know and answers the
 * legacy documents, which is what clients fall back to.
 */
export function servesAggregatedDiscovery(release: KubernetesVersion, version: 'v2' | 'v2beta1'): boolean {
  return version === 'v2' ? release.minor >= 30 : release.minor >= 27;
}

/** The /version document of the emulated release. */
export function versionInfoFor(release: KubernetesVersion): Record<string, string> {
  return {
    major: String(release.major),
    minor: String(release.minor),
    gitVersion: `v${release.major}.${release.minor}.0+kperturb`,
    gitCommit: '0000000000000000000000000000000000000000',
    gitTreeState: 'clean',
    buildDate: '2025-01-01T00:00:00Z',
    goVersion: 'go1.23.0',
    compiler: 'gc',
    platform: 'linux/amd64',
  };
}
