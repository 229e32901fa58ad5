/**
 * How the oracles name objects across runs. Objects with server-generated names (`generateName`)
 * get a different name in every run, so they are folded into `Kind/namespace/<prefix>*` and only
 * counted; so are objects whose name embeds a UID (`PersistentVolume/pvc-<uid>`, named after the
 * claim that a provisioner bound it to), as `Kind/namespace/pvc-*`; and IPAddresses (Kubernetes 1.31+
 * records every Service cluster IP as one, named after the address, which the allocator picks at
 * random), as `IPAddress/*`. A Deployment's ReplicaSets and their pods are named after the
 * pod-template-hash, a digest of the pod template, which may hold per-run values (an annotation with a
 * TLS Secret's digest, as the Percona operators write): they are counted with the hash folded too,
 * `ReplicaSet/namespace/<deployment>-*` and `Pod/namespace/<deployment>-*-*` (foldTemplateHash), the
 * Deployment itself compared field by field. Bookkeeping objects (leader election, Events) are not
 * compared at all.
 */
import { isBookkeepingKey, isLeaderElectionRecord } from '../src/model/bookkeeping.js';
import { formatKey, parseKey, type KubeObject, type ObjectKey } from '../src/model/object-key.js';
import { foldTemplateHash, GENERATED_NAME_ALPHABET, GENERATED_SUFFIX_LENGTH, isGeneratedName } from '../src/model/generated-names.js';

const UID_IN_TEXT = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/i;

/** `pvc-5b01...-a38660c957a9` -> `pvc-*`: a name or value with every UID in it replaced by `*`. */
export function withoutUids(text: string): string {
  return text.replace(new RegExp(UID_IN_TEXT.source, 'gi'), '*');
}

export function containsUid(value: unknown): boolean {
  return typeof value === 'string' && UID_IN_TEXT.test(value);
}

export type ComparableIdentity = { key: ObjectKey; generated: boolean } | undefined;

/** undefined: the oracles ignore this object. */
export function comparableIdentity(key: ObjectKey, obj: KubeObject | undefined): ComparableIdentity {
  if (isBookkeepingKey(key) || isLeaderElectionRecord(obj)) return undefined;
  const prefix = obj?.metadata?.generateName;
  const name = obj?.metadata?.name;
  const parts = parseKey(key);
  if (parts && prefix && isGeneratedName(name, prefix)) {
    return { key: foldTemplateHash(formatKey(parts.kind, parts.namespace, `${prefix}*`)), generated: true };
  }
  const withoutHash = foldTemplateHash(key);
  if (withoutHash !== key) return { key: withoutHash, generated: true };
  if (parts && parts.kind === 'IPAddress' && parts.namespace === undefined) return { key: 'IPAddress/*', generated: true };
  if (parts && UID_IN_TEXT.test(parts.name)) {
    return { key: formatKey(parts.kind, parts.namespace, withoutUids(parts.name)), generated: true };
  }
  return { key, generated: false };
}

export interface EndStateView {
  /** Objects with stable names. */
  named: Map<ObjectKey, KubeObject>;
  /** Number of objects per folded generated-name key. */
  generated: Map<ObjectKey, number>;
}

export function endStateView(endState: Record<ObjectKey, KubeObject>): EndStateView {
  const view: EndStateView = { named: new Map(), generated: new Map() };
  for (const [key, obj] of Object.entries(endState)) {
    const id = comparableIdentity(key, obj);
    if (!id) continue;
    if (id.generated) view.generated.set(id.key, (view.generated.get(id.key) ?? 0) + 1);
    else view.named.set(id.key, withoutGeneratedVolumeNames(obj));
  }
  return view;
}

const TOKEN_VOLUME = new RegExp(`^kube-api-access-[${GENERATED_NAME_ALPHABET}]{${GENERATED_SUFFIX_LENGTH}}$`);
const TOKEN_VOLUME_FOLDED = 'kube-api-access-*';

/**
 * A pod's service-account token volume is named by the API server (ServiceAccount admission:
 * `kube-api-access-` plus 5 random characters), so every run names it differently; the pod's
 * volumes and its containers' mounts name it folded, as generated object names are. Others are kept.
 */
export function withoutGeneratedVolumeNames(obj: KubeObject): KubeObject {
  const spec = (obj as { spec?: Record<string, unknown> }).spec;
  const volumes = spec?.volumes;
  if (!spec || obj.kind !== 'Pod' || !Array.isArray(volumes) || !volumes.some((v) => TOKEN_VOLUME.test(String((v as { name?: unknown }).name)))) return obj;
  const fold = (items: unknown) =>
    Array.isArray(items)
      ? items.map((v) => (TOKEN_VOLUME.test(String((v as { name?: unknown })?.name)) ? { ...(v as object), name: TOKEN_VOLUME_FOLDED } : v))
      : items;
  const containers = (list: unknown) =>
    Array.isArray(list)
      ? list.map((c) => (c && typeof c === 'object' && 'volumeMounts' in c ? { ...c, volumeMounts: fold((c as { volumeMounts: unknown }).volumeMounts) } : c))
      : list;
  return {
    ...obj,
    spec: {
      ...spec,
      volumes: fold(volumes),
      ...(spec.containers !== undefined ? { containers: containers(spec.containers) } : {}),
      ...(spec.initContainers !== undefined ? { initContainers: containers(spec.initContainers) } : {}),
    },
  } as KubeObject;
}
