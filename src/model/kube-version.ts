/**
 * The Kubernetes releases kperturb knows (the embedded API server emulates one: src/cluster/kube-version.ts
 * applies this to its kinds): which group-versions of each built-in kind
 * it serves (2020-21 operators, built with client-go v0.17-v0.20, call policy/v1beta1,
 * apiextensions.k8s.io/v1beta1, batch/v1beta1..., which 1.22 and 1.25 stopped serving), whether it
 * answers aggregated discovery, and what /version says. Objects are always stored in the newest form a
 * kind has here; a version a release serves converts to and from it (see each kind's
 * `versionConversions`), as kube-apiserver converts through its internal version.
 *
 * Sources: the "Deprecated API Migration Guide" (kubernetes.io/docs/reference/using-api/
 * deprecation-guide) for removals, and each API's GA release for additions.
 */
/** Releases the embedded server can emulate: "1.18" ... "1.32". */
export const OLDEST_KUBERNETES_MINOR = 18;
export const NEWEST_KUBERNETES_MINOR = 32;
export const DEFAULT_KUBERNETES_VERSION = `1.${NEWEST_KUBERNETES_MINOR}`;

/** A release as `1.<minor>`, checked by `parseKubernetesVersion`. */
export interface KubernetesVersion {
  major: 1;
  minor: number;
}

/**
 * Parses "1.18" or "v1.18" (a patch level, "1.18.20", is accepted and ignored: the API surface is
 * the minor release's). Undefined for anything else or a release outside the supported range.
 */
export function parseKubernetesVersion(text: string): KubernetesVersion | undefined {
  const m = /^v?1\.(\d{1,2})(?:\.\d+)?$/.exec(text.trim());
  if (!m) return undefined;
  const minor = Number(m[1]);
  if (minor < OLDEST_KUBERNETES_MINOR || minor > NEWEST_KUBERNETES_MINOR) return undefined;
  return { major: 1, minor };
}

/**
 * kube-apiserver's default for the WatchList feature gate in a release: beta and on in 1.32 (off in
 * 1.27-1.31, alpha, and again in 1.33, kubernetes/kubernetes#131359).
 */
export function watchListByDefault(v: KubernetesVersion): boolean {
  return v.minor === 32;
}

export function formatKubernetesVersion(v: KubernetesVersion): string {
  return `${v.major}.${v.minor}`;
}

/** What a user may write, for error messages. */
export const KUBERNETES_VERSION_EXPECTED = `a Kubernetes release from "1.${OLDEST_KUBERNETES_MINOR}" to "1.${NEWEST_KUBERNETES_MINOR}", as a string (e.g. "1.18")`;

/** A version of a kind, served from release `from` (inclusive) until `until` (exclusive, the removal). */
export interface ServedSpan {
  version: string;
  from?: number;
  until?: number;
}

/**
 * Lifecycles of the built-in versions that changed between 1.18 and 1.32, keyed by `resource.group`.
 * Kinds not listed are served at their definition's versions in every emulated release.
 */
export const LIFECYCLES: Readonly<Record<string, readonly ServedSpan[]>> = {
  'customresourcedefinitions.apiextensions.k8s.io': [{ version: 'v1' }, { version: 'v1beta1', until: 22 }],
  'mutatingwebhookconfigurations.admissionregistration.k8s.io': [{ version: 'v1' }, { version: 'v1beta1', until: 22 }],
  'validatingwebhookconfigurations.admissionregistration.k8s.io': [{ version: 'v1' }, { version: 'v1beta1', until: 22 }],
  'poddisruptionbudgets.policy': [
    { version: 'v1', from: 21 },
    { version: 'v1beta1', until: 25 },
  ],
  'cronjobs.batch': [
    { version: 'v1', from: 21 },
    { version: 'v1beta1', until: 25 },
  ],
  'events.events.k8s.io': [
    { version: 'v1', from: 19 },
    { version: 'v1beta1', until: 25 },
  ],
  'leases.coordination.k8s.io': [{ version: 'v1' }, { version: 'v1beta1', until: 22 }],
  'roles.rbac.authorization.k8s.io': [{ version: 'v1' }, { version: 'v1beta1', until: 22 }],
  'rolebindings.rbac.authorization.k8s.io': [{ version: 'v1' }, { version: 'v1beta1', until: 22 }],
  'clusterroles.rbac.authorization.k8s.io': [{ version: 'v1' }, { version: 'v1beta1', until: 22 }],
  'clusterrolebindings.rbac.authorization.k8s.io': [{ version: 'v1' }, { version: 'v1beta1', until: 22 }],
  'storageclasses.storage.k8s.io': [{ version: 'v1' }, { version: 'v1beta1', until: 22 }],
  // Only the GA versions are served (their betas are not modelled): from the release they went GA.
  'ingresses.networking.k8s.io': [{ version: 'v1', from: 19 }],
  'ingressclasses.networking.k8s.io': [{ version: 'v1', from: 19 }],
  'endpointslices.discovery.k8s.io': [{ version: 'v1', from: 21 }],
  'horizontalpodautoscalers.autoscaling': [{ version: 'v2', from: 23 }, { version: 'v1' }],
};

/**
 * The releases (minor numbers, inclusive) that serve a built-in kind's version whose lifecycle is
 * listed; undefined for a kind or version whose lifecycle is not (custom resources, versions never
 * served).
 */
export function servingReleases(kind: string, apiVersion: string): { from: number; to: number } | undefined {
  const slash = apiVersion.lastIndexOf('/');
  const group = slash < 0 ? '' : apiVersion.slice(0, slash);
  const version = apiVersion.slice(slash + 1);
  const plural = kind.toLowerCase();
  const spans = LIFECYCLES[`${plural}s.${group}`] ?? LIFECYCLES[`${plural}es.${group}`];
  const span = spans?.find((s) => s.version === version);
  if (!span) return undefined;
  const from = Math.max(span.from ?? OLDEST_KUBERNETES_MINOR, OLDEST_KUBERNETES_MINOR);
  const to = Math.min((span.until ?? NEWEST_KUBERNETES_MINOR + 1) - 1, NEWEST_KUBERNETES_MINOR);
  return { from, to };
}

/**
 * For a built-in kind's version that some emulated releases do not serve: the ones that do, as a
 * hint for an error ("Kubernetes 1.18-1.21 serve it"). Undefined for a kind or version whose
 * lifecycle is not listed (custom resources, versions never served).
 */
export function releasesServing(kind: string, apiVersion: string): string | undefined {
  const span = servingReleases(kind, apiVersion);
  if (!span) return undefined;
  return span.from === span.to ? `Kubernetes 1.${span.from} serves it` : `Kubernetes 1.${span.from}-1.${span.to} serve it`;
}
