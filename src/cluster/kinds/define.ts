/**
 * A compact way to declare a built-in kind: everything a `ResourceDefinition` needs, with the
 * defaults most built-in registries share (all verbs, DNS-1123 subdomain names, strategic merge patch
 * with the ObjectMeta list rules, deletes answered with a Status).
 */
import { isObject, type KubeObject } from '../../model/object-key.js';
import { ALL_VERBS, type ResourceDefinition, type ResourceStrategy, type ScalePaths } from '../registry.js';
import { OBJECT_META_LIST_RULES } from './list-rules.js';

export interface BuiltinKind {
  group?: string;
  versions?: readonly string[];
  resource: string;
  kind: string;
  namespaced: boolean;
  shortNames?: readonly string[];
  categories?: readonly string[];
  verbs?: readonly string[];
  subresources?: readonly string[];
  scale?: ScalePaths;
  storageResource?: string;
  conversion?: ResourceDefinition['conversion'];
  versionConversions?: ResourceDefinition['versionConversions'];
  versionListRules?: ResourceDefinition['versionListRules'];
  strategy?: Partial<ResourceStrategy>;
}

export function builtinKind(k: BuiltinKind): ResourceDefinition {
  return {
    group: k.group ?? '',
    versions: k.versions ?? ['v1'],
    resource: k.resource,
    singularName: k.kind.toLowerCase(),
    kind: k.kind,
    listKind: `${k.kind}List`,
    namespaced: k.namespaced,
    shortNames: k.shortNames ?? [],
    categories: k.categories ?? [],
    verbs: k.verbs ?? [...ALL_VERBS],
    subresources: k.subresources ?? [],
    ...(k.scale ? { scale: k.scale } : {}),
    ...(k.storageResource ? { storageResource: k.storageResource } : {}),
    ...(k.conversion ? { conversion: k.conversion } : {}),
    ...(k.versionConversions ? { versionConversions: k.versionConversions } : {}),
    ...(k.versionListRules ? { versionListRules: k.versionListRules } : {}),
    listItemsCarryTypeMeta: false,
    definedBy: 'builtin',
    strategy: {
      tracksGeneration: false,
      listRules: OBJECT_META_LIST_RULES,
      strategicMerge: true,
      statusWrite: 'status-and-metadata',
      returnDeletedObject: false,
      nameRule: 'dns1123-subdomain',
      ...k.strategy,
    },
  };
}

/** Built-in replica-based scale paths (apps/v1 workloads): the selector is a metav1.LabelSelector. */
export const WORKLOAD_SCALE: ScalePaths = {
  specReplicasPath: '.spec.replicas',
  statusReplicasPath: '.status.replicas',
  labelSelectorPath: '.spec.selector',
};

/** A `status.phase` getter for field selectors. */
export function statusField(field: string): (o: KubeObject) => string | undefined {
  return (o) => (isObject(o.status) && typeof o.status[field] === 'string' ? (o.status[field] as string) : undefined);
}

export function specField(field: string): (o: KubeObject) => string | undefined {
  return (o) => (isObject(o.spec) && o.spec[field] !== undefined && o.spec[field] !== null ? String(o.spec[field]) : undefined);
}
