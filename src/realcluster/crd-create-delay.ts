/**
 * A real kube-apiserver holds every create of a custom resource for 2 s while the CRD's Established
 * condition is less than 2 s old (k8s.io/apiextensions-apiserver pkg/apiserver/customresource_handler.go,
 * `case "create"`: so that, with several API servers, the others have seen the CRD before a follow-up
 * request reaches them). With one API server it buys nothing, and it cost most runs on the real
 * control plane 2.0 s: the workload's first create came about 1 s after the setup's CRDs (the
 * controller's start in between) and then slept the full 2 s. Waiting out what is left of the window
 * instead costs at most that rest.
 */
import type { KubeClient } from '../kube/client.js';
import type { KubeObject } from '../model/object-key.js';

/** The window and the hold, both hard-coded upstream. */
export const CRD_CREATE_DELAY_MS = 2000;

/**
 * When (epoch ms) creates of the CRDs' custom resources are no longer held: the latest Established
 * transition plus 2 s, or 0 if none is established or readable. lastTransitionTime has whole seconds,
 * as the API server's own copy (it reads the CRD as stored), so the same instant ends its window.
 */
export async function crdCreateDelayEnd(client: KubeClient, crds: readonly KubeObject[]): Promise<number> {
  let end = 0;
  for (const crd of crds) {
    const name = crd.metadata?.name;
    if (typeof name !== 'string') continue;
    const res = await client.request('GET', `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${encodeURIComponent(name)}`).catch(() => undefined);
    const conditions = (res?.status === 200 ? (res.body as { status?: { conditions?: unknown } }).status?.conditions : undefined) ?? [];
    if (!Array.isArray(conditions)) continue;
    const established = conditions.find(
      (c): c is { lastTransitionTime: string } =>
        typeof c === 'object' && c !== null && (c as { type?: unknown }).type === 'Established' && (c as { status?: unknown }).status === 'True',
    );
    const at = Date.parse(established?.lastTransitionTime ?? '');
    if (Number.isFinite(at)) end = Math.max(end, at + CRD_CREATE_DELAY_MS);
  }
  return end;
}

/**
 * Resolves when creates of the CRDs' custom resources are no longer held (see crdCreateDelayEnd);
 * at once if they are not. Never waits longer than the hold itself, whatever the clocks say.
 */
export async function waitOutCrdCreateDelay(client: KubeClient, crds: readonly KubeObject[]): Promise<void> {
  const remaining = Math.min(CRD_CREATE_DELAY_MS, (await crdCreateDelayEnd(client, crds)) - Date.now());
  if (remaining > 0) await new Promise((resolve) => setTimeout(resolve, remaining));
}
