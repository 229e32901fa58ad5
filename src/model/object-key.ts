/**
 * Object keys: the one way every stage names a Kubernetes object.
 *
 * Namespaced objects are `Kind/namespace/name`, cluster-scoped ones `Kind/name`
 * (e.g. `ConfigMap/default/app`, `Namespace/default`). Kinds are the API kind
 * (`StatefulSet`, not `statefulsets`), so keys read the way users write them.
 */
export type ObjectKey = string;

export interface ObjectKeyParts {
  kind: string;
  namespace?: string;
  name: string;
}

export function formatKey(kind: string, namespace: string | undefined, name: string): ObjectKey {
  return namespace ? `${kind}/${namespace}/${name}` : `${kind}/${name}`;
}

export function parseKey(key: string): ObjectKeyParts | undefined {
  const parts = key.split('/');
  if (parts.length === 2 && parts[0] && parts[1]) return { kind: parts[0], name: parts[1] };
  if (parts.length === 3 && parts[0] && parts[1] && parts[2]) {
    return { kind: parts[0], namespace: parts[1], name: parts[2] };
  }
  return undefined;
}

/** Minimal shape of any Kubernetes object as it travels on the wire. */
export interface KubeObject {
  apiVersion?: string | undefined;
  kind?: string | undefined;
  metadata?:
    | {
        name?: string | undefined;
        generateName?: string | undefined;
        namespace?: string | undefined;
        uid?: string | undefined;
        resourceVersion?: string | undefined;
        generation?: number | undefined;
        creationTimestamp?: string | undefined;
        deletionTimestamp?: string | undefined;
        deletionGracePeriodSeconds?: number | undefined;
        labels?: Record<string, string> | undefined;
        annotations?: Record<string, string> | undefined;
        finalizers?: string[] | undefined;
        ownerReferences?: OwnerReference[] | undefined;
        managedFields?: unknown[] | undefined;
        [field: string]: unknown;
      }
    | undefined;
  [field: string]: unknown;
}

export interface OwnerReference {
  apiVersion: string;
  kind: string;
  name: string;
  uid: string;
  controller?: boolean;
  blockOwnerDeletion?: boolean;
}

/** The object's controlling owner reference (`ownerReferences[].controller: true`), if any. */
export function controllerRef(obj: KubeObject | undefined): OwnerReference | undefined {
  const refs: unknown = obj?.metadata?.ownerReferences;
  if (!Array.isArray(refs)) return undefined;
  return (refs as unknown[]).find((r): r is OwnerReference => isObject(r) && r.controller === true);
}

/** The key of the object's controlling owner, in the object's namespace (owners are never in another one). */
export function controllerKey(obj: KubeObject | undefined): ObjectKey | undefined {
  const ref = controllerRef(obj);
  if (!ref || typeof ref.kind !== 'string' || typeof ref.name !== 'string') return undefined;
  return formatKey(ref.kind, obj?.metadata?.namespace || undefined, ref.name);
}

/** Key of an object that carries its own kind (objects inside lists may not: pass `kind`). */
export function keyOf(obj: KubeObject, kind?: string): ObjectKey | undefined {
  const k = kind ?? obj.kind;
  const name = obj.metadata?.name;
  if (!k || !name) return undefined;
  return formatKey(k, obj.metadata?.namespace || undefined, name);
}

export function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
