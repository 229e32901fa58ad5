/**
 * Helpers over Kubernetes objects shared by the simulated controllers: label selectors, owner
 * references, pod state (as k8s.io/kubernetes/pkg/api/v1/pod and pkg/controller do), conditions,
 * timestamps and the template hash used in names.
 */
import { asLabelSelector, matchesLabelSelector } from '../../model/label-selector.js';
import { controllerRef, isObject, type KubeObject, type OwnerReference } from '../../model/object-key.js';

export type Labels = Record<string, string>;

export function now(): string {
  return new Date().toISOString().replace(/\.\d+Z$/, 'Z');
}

export function spec(obj: KubeObject): Record<string, unknown> {
  return isObject(obj.spec) ? obj.spec : {};
}

export function status(obj: KubeObject): Record<string, unknown> {
  return isObject(obj.status) ? obj.status : {};
}

export function num(value: unknown, fallback: number): number {
  return typeof value === 'number' && Number.isFinite(value) ? value : fallback;
}

export function str(value: unknown, fallback = ''): string {
  return typeof value === 'string' ? value : fallback;
}

export function clone<T>(value: T): T {
  return structuredClone(value);
}

/** metav1.LabelSelectorAsSelector + Matches: an empty selector matches everything, a missing one nothing. */
export function selectorMatches(selector: unknown, labels: Labels | undefined): boolean {
  return matchesLabelSelector(asLabelSelector(selector), labels);
}

/** A Service's spec.selector (a plain map): empty or missing selects nothing. */
export function mapSelectorMatches(selector: unknown, labels: Labels | undefined): boolean {
  if (!isObject(selector) || Object.keys(selector).length === 0) return false;
  const l = labels ?? {};
  return Object.entries(selector).every(([k, v]) => l[k] === v);
}

/** The model's definition, re-exported beside the other object helpers the simulated controllers use. */
export { controllerRef };

export function isControlledBy(obj: KubeObject, owner: KubeObject): boolean {
  return controllerRef(obj)?.uid === owner.metadata?.uid;
}

/** metav1.NewControllerRef. */
export function newControllerRef(owner: KubeObject): OwnerReference {
  return {
    apiVersion: owner.apiVersion ?? '',
    kind: owner.kind ?? '',
    name: owner.metadata?.name ?? '',
    uid: owner.metadata?.uid ?? '',
    controller: true,
    blockOwnerDeletion: true,
  };
}

export function isBeingDeleted(obj: KubeObject): boolean {
  return typeof obj.metadata?.deletionTimestamp === 'string' && obj.metadata.deletionTimestamp !== '';
}

export function hasFinalizer(obj: KubeObject, finalizer: string): boolean {
  return (obj.metadata?.finalizers ?? []).includes(finalizer);
}

// ---- pods ----

export function podPhase(pod: KubeObject): string {
  return str(status(pod).phase);
}

export function isPodTerminal(pod: KubeObject): boolean {
  const phase = podPhase(pod);
  return phase === 'Succeeded' || phase === 'Failed';
}

/** controller.IsPodActive: not terminal and not being deleted. */
export function isPodActive(pod: KubeObject): boolean {
  return !isPodTerminal(pod) && !isBeingDeleted(pod);
}

export interface Condition {
  type: string;
  status: string;
  reason?: string | undefined;
  message?: string | undefined;
  lastTransitionTime?: string | undefined;
  lastUpdateTime?: string | undefined;
  lastProbeTime?: string | null | undefined;
  [field: string]: unknown;
}

export function conditions(obj: KubeObject): Condition[] {
  const c = status(obj).conditions;
  return Array.isArray(c) ? (c.filter(isObject) as Condition[]) : [];
}

export function condition(obj: KubeObject, type: string): Condition | undefined {
  return conditions(obj).find((c) => c.type === type);
}

export function isPodReady(pod: KubeObject): boolean {
  return condition(pod, 'Ready')?.status === 'True';
}

/** podutil.IsPodAvailable: ready for at least minReadySeconds. */
export function isPodAvailable(pod: KubeObject, minReadySeconds: number, at = Date.now()): boolean {
  const ready = condition(pod, 'Ready');
  if (ready?.status !== 'True') return false;
  if (minReadySeconds <= 0) return true;
  const since = Date.parse(ready.lastTransitionTime ?? '');
  return Number.isFinite(since) && since + minReadySeconds * 1000 <= at;
}

/** Milliseconds until a ready pod becomes available, or undefined if it is not ready. */
export function msUntilAvailable(pod: KubeObject, minReadySeconds: number, at = Date.now()): number | undefined {
  const ready = condition(pod, 'Ready');
  if (ready?.status !== 'True') return undefined;
  const since = Date.parse(ready.lastTransitionTime ?? '');
  if (!Number.isFinite(since)) return 0;
  return Math.max(0, since + minReadySeconds * 1000 - at);
}

/**
 * Sets a condition the way controllers do: lastTransitionTime moves only when the status changes;
 * `stampUpdate` also maintains lastUpdateTime (Deployment conditions carry it).
 */
export function setCondition(list: Condition[], next: Condition, stampUpdate = false): Condition[] {
  const at = now();
  const existing = list.find((c) => c.type === next.type);
  const merged: Condition = { ...next };
  if (stampUpdate) {
    const unchanged = existing && existing.status === next.status && existing.reason === next.reason && existing.message === next.message;
    merged.lastUpdateTime = unchanged ? existing.lastUpdateTime : at;
  }
  merged.lastTransitionTime = existing && existing.status === next.status ? existing.lastTransitionTime : at;
  if (existing && stampUpdate) {
    // keep the field order a Deployment condition has on the wire
    return list.map((c) =>
      c.type === next.type
        ? {
            type: merged.type,
            status: merged.status,
            lastUpdateTime: merged.lastUpdateTime,
            lastTransitionTime: merged.lastTransitionTime,
            reason: merged.reason,
            message: merged.message,
          }
        : c,
    );
  }
  if (existing) return list.map((c) => (c.type === next.type ? merged : c));
  return [...list, merged];
}

// ---- hashing and names ----

const SAFE_ALPHABET = 'bcdfghjklmnpqrstvwxz2456789';

/** fnv-1a 32-bit. */
export function fnv32a(text: string): number {
  let hash = 0x811c9dc5;
  for (const byte of Buffer.from(text, 'utf8')) {
    hash ^= byte;
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash >>> 0;
}

/** hash/fnv New32 (FNV-1, 32 bit) of the UTF-8 bytes of `text`. */
export function fnv32(text: string): number {
  let hash = 0x811c9dc5;
  for (const byte of Buffer.from(text, 'utf8')) {
    hash = Math.imul(hash, 0x01000193) >>> 0;
    hash ^= byte;
  }
  return hash >>> 0;
}

/**
 * What Go's encoding/json (Go 1.22 and later) writes for a value decoded into interface{}: map keys
 * sorted, `<`, `>`, `&`, U+2028 and U+2029 escaped (they only occur inside strings), the rest as JSON.stringify.
 */
export function goJson(value: unknown): string {
  return canonicalJson(value).replace(/[<>&\u2028\u2029]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/** rand.SafeEncodeString: maps each character onto an alphabet without vowels or look-alikes. */
export function safeEncode(text: string): string {
  let out = '';
  for (const ch of text) out += SAFE_ALPHABET[ch.charCodeAt(0) % SAFE_ALPHABET.length];
  return out;
}

function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (isObject(value)) {
    return `{${Object.keys(value)
      .filter((k) => value[k] !== undefined)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonicalJson(value[k])}`)
      .join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

/**
 * controller.ComputeHash: a stable hash of a pod template (and collision count), encoded as Kubernetes
 * encodes the pod-template-hash label. The digits differ from a real cluster's (which hashes Go's
 * in-memory representation) but are equally stable.
 */
export function templateHash(template: unknown, collisionCount?: number): string {
  const text = canonicalJson(asGoTemplate(template)) + (collisionCount ? `#${collisionCount}` : '');
  return safeEncode(String(fnv32a(text)));
}

/**
 * A pod template as the Go types see it: `metadata.creationTimestamp: null` is dropped, as Go decodes
 * null and absent to the same zero time (and encodes both as null). Clients differ on sending it
 * (kubectl create does, kubectl apply does not, `rollout undo` copies it from the ReplicaSet), so the
 * hash and template comparisons must not see it, or `rollout undo` would create a new ReplicaSet.
 */
export function asGoTemplate(template: unknown): unknown {
  if (!isObject(template) || !isObject(template.metadata) || template.metadata.creationTimestamp !== null) return template;
  const { creationTimestamp: _dropped, ...metadata } = template.metadata;
  return { ...template, metadata };
}

export function shortHash(text: string): string {
  return safeEncode(String(fnv32a(text))).padEnd(5, 'b');
}

export function deepEqual(a: unknown, b: unknown): boolean {
  return canonicalJson(a) === canonicalJson(b);
}

/** Pod template (metadata + spec) of a workload, as a fresh object. */
export function podTemplate(owner: KubeObject): { metadata: Record<string, unknown>; spec: Record<string, unknown> } {
  const tpl = spec(owner).template;
  const t = isObject(tpl) ? clone(tpl) : {};
  return { metadata: isObject(t.metadata) ? t.metadata : {}, spec: isObject(t.spec) ? t.spec : {} };
}

/** controller.GetPodFromTemplate: labels, annotations and finalizers of the template, spec as is. */
export function podFromTemplate(
  owner: KubeObject,
  template: { metadata: Record<string, unknown>; spec: Record<string, unknown> },
  extraLabels: Labels = {},
): KubeObject {
  const md = template.metadata;
  const labels = { ...(isObject(md.labels) ? (md.labels as Labels) : {}), ...extraLabels };
  const metadata: NonNullable<KubeObject['metadata']> = {
    namespace: owner.metadata?.namespace,
    labels,
    ownerReferences: [newControllerRef(owner)],
  };
  if (isObject(md.annotations)) metadata.annotations = clone(md.annotations as Labels);
  if (Array.isArray(md.finalizers)) metadata.finalizers = [...(md.finalizers as string[])];
  return { apiVersion: 'v1', kind: 'Pod', metadata, spec: clone(template.spec) };
}

/** The PVC names a pod mounts. */
export function claimNames(pod: KubeObject): string[] {
  const volumes = spec(pod).volumes;
  if (!Array.isArray(volumes)) return [];
  const names: string[] = [];
  for (const v of volumes) {
    if (isObject(v) && isObject(v.persistentVolumeClaim) && typeof v.persistentVolumeClaim.claimName === 'string')
      names.push(v.persistentVolumeClaim.claimName);
  }
  return names;
}

/** intstr percentages and numbers: "25%" of total, rounded up or down. */
export function intOrPercent(value: unknown, total: number, roundUp: boolean, fallback: number): number {
  if (typeof value === 'number') return value;
  if (typeof value === 'string') {
    const m = /^(\d+)%$/.exec(value);
    if (m) {
      const exact = (Number(m[1]) * total) / 100;
      return roundUp ? Math.ceil(exact) : Math.floor(exact);
    }
    if (/^\d+$/.test(value)) return Number(value);
  }
  return fallback;
}
