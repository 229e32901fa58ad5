/**
 * Generic object-metadata validation (k8s.io/apimachinery/pkg/api/validation), worded like the
 * real server so that messages a controller logs read the same against the embedded cluster.
 */
import { isObject, type KubeObject } from '../model/object-key.js';
import type { FieldError } from './api-error.js';
import { dns1123SubdomainErrors, labelKeyErrors, labelValueErrors, lengthAndPatternErrors } from './selectors.js';

const DNS1123_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
export { dns1123SubdomainErrors };

const DNS1035_LABEL = /^[a-z]([-a-z0-9]*[a-z0-9])?$/;

/** Service names are DNS-1035 labels: they must start with a letter. */
export const dns1035LabelErrors = (value: string): string[] =>
  lengthAndPatternErrors(
    value,
    63,
    DNS1035_LABEL,
    "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')",
  );

export const dns1123LabelErrors = (value: string): string[] =>
  lengthAndPatternErrors(
    value,
    63,
    DNS1123_LABEL,
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')",
  );

/** path.IsValidPathSegmentName: names that can appear as one URL path segment (RBAC objects). */
export function pathSegmentErrors(value: string): string[] {
  if (value === '.' || value === '..') return [`may not be '${value}'`];
  for (const bad of ['/', '%']) if (value.includes(bad)) return [`may not contain '${bad}'`];
  return [];
}

export interface MetaRules {
  namespaced: boolean;
  nameRule: 'dns1123-subdomain' | 'dns1123-label' | 'dns1035-label' | 'path-segment';
}

function stringMap(value: unknown, field: string, errors: FieldError[]): Record<string, string> | undefined {
  if (value === undefined || value === null) return undefined;
  if (!isObject(value) || Object.values(value).some((v) => typeof v !== 'string')) {
    errors.push({ type: 'Invalid', field, value, detail: 'must be a map of string keys to string values' });
    return undefined;
  }
  return value as Record<string, string>;
}

/** Validates metadata of an object about to be stored (after name generation and defaulting). */
export function validateObjectMeta(obj: KubeObject, rules: MetaRules): FieldError[] {
  const errors: FieldError[] = [];
  const meta = obj.metadata ?? {};
  const name = meta.name;
  if (name === undefined || name === '') {
    errors.push({ type: 'Required', field: 'metadata.name', detail: 'name or generateName is required' });
  } else if (typeof name !== 'string') {
    errors.push({ type: 'Invalid', field: 'metadata.name', value: name, detail: 'must be a string' });
  } else {
    const nameErrors =
      rules.nameRule === 'dns1123-label'
        ? dns1123LabelErrors(name)
        : rules.nameRule === 'dns1035-label'
          ? dns1035LabelErrors(name)
          : rules.nameRule === 'path-segment'
            ? pathSegmentErrors(name)
            : dns1123SubdomainErrors(name);
    for (const detail of nameErrors) errors.push({ type: 'Invalid', field: 'metadata.name', value: name, detail });
  }
  if (rules.namespaced) {
    if (!meta.namespace) errors.push({ type: 'Required', field: 'metadata.namespace', detail: '' });
  } else if (meta.namespace) {
    errors.push({ type: 'Forbidden', field: 'metadata.namespace', detail: 'not allowed on this type' });
  }
  const labels = stringMap(meta.labels, 'metadata.labels', errors);
  for (const [k, v] of Object.entries(labels ?? {})) {
    for (const detail of labelKeyErrors(k)) errors.push({ type: 'Invalid', field: 'metadata.labels', value: k, detail });
    for (const detail of labelValueErrors(v)) errors.push({ type: 'Invalid', field: `metadata.labels`, value: v, detail });
  }
  const annotations = stringMap(meta.annotations, 'metadata.annotations', errors);
  for (const k of Object.keys(annotations ?? {})) {
    for (const detail of labelKeyErrors(k.toLowerCase())) errors.push({ type: 'Invalid', field: 'metadata.annotations', value: k, detail });
  }
  if (meta.finalizers !== undefined && meta.finalizers !== null) {
    if (!Array.isArray(meta.finalizers) || meta.finalizers.some((f) => typeof f !== 'string')) {
      errors.push({ type: 'Invalid', field: 'metadata.finalizers', value: meta.finalizers, detail: 'must be a list of strings' });
    } else {
      meta.finalizers.forEach((f, i) => {
        for (const detail of labelKeyErrors(f)) errors.push({ type: 'Invalid', field: `metadata.finalizers[${i}]`, value: f, detail });
      });
    }
  }
  if (meta.ownerReferences !== undefined && meta.ownerReferences !== null) {
    if (!Array.isArray(meta.ownerReferences)) {
      errors.push({ type: 'Invalid', field: 'metadata.ownerReferences', value: meta.ownerReferences, detail: 'must be a list' });
    } else {
      meta.ownerReferences.forEach((ref, i) => {
        const r = ref as unknown as Record<string, unknown>;
        for (const f of ['apiVersion', 'kind', 'name', 'uid']) {
          if (typeof r?.[f] !== 'string' || r[f] === '') {
            errors.push({ type: 'Invalid', field: `metadata.ownerReferences[${i}].${f}`, value: r?.[f] ?? '', detail: `${f} must not be empty` });
          }
        }
      });
    }
  }
  return errors;
}

/** Update-only rules: no new finalizers on an object being deleted. */
export function validateMetaUpdate(obj: KubeObject, old: KubeObject): FieldError[] {
  if (!old.metadata?.deletionTimestamp) return [];
  const before = new Set(old.metadata.finalizers ?? []);
  const added = (obj.metadata?.finalizers ?? []).filter((f) => !before.has(f));
  if (added.length === 0) return [];
  return [
    {
      type: 'Forbidden',
      field: 'metadata.finalizers',
      detail: `no new finalizers can be added if the object is being deleted, found new finalizers ${JSON.stringify(added)}`,
    },
  ];
}
