/**
 * The PATCH content types: JSON patch (RFC 6902, via fast-json-patch), JSON merge patch (RFC 7386) and
 * strategic merge patch.
 *
 * Strategic merge patch is implemented without OpenAPI schemas: it is a merge patch that also honours
 * the `$patch: replace|delete` directives, `$deleteFromPrimitiveList/<field>`, and merges (instead of
 * replacing) the lists a kind declares mergeable, e.g. `metadata.finalizers` (a set of strings) and
 * `metadata.ownerReferences` (merged by `uid`). `$setElementOrder/` and `$retainKeys` directives are
 * accepted and ignored. That is exact for kinds whose only mergeable lists are the declared ones
 * (namespaces, configmaps, secrets) and is not offered for custom resources (415, as a real server).
 */
import jsonpatch from 'fast-json-patch';
import { isObject } from '../model/object-key.js';
import { cloneJson } from '../model/json-value.js';
import { badRequest, unprocessable } from './api-error.js';
import type { StrategicListRules } from './registry.js';

export type PatchType = 'json' | 'merge' | 'strategic' | 'apply';

export const PATCH_MEDIA_TYPES: Readonly<Record<string, PatchType>> = {
  'application/json-patch+json': 'json',
  'application/merge-patch+json': 'merge',
  'application/strategic-merge-patch+json': 'strategic',
  'application/apply-patch+yaml': 'apply',
  'application/apply-patch+cbor': 'apply',
};

export function patchTypeOf(contentType: string): PatchType | undefined {
  return PATCH_MEDIA_TYPES[contentType];
}

export function applyMergePatch(target: unknown, patch: unknown): unknown {
  if (!isObject(patch)) return cloneJson(patch);
  const result: Record<string, unknown> = isObject(target) ? { ...target } : {};
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) delete result[key];
    else result[key] = applyMergePatch(result[key], value);
  }
  return result;
}

export function applyJsonPatch(target: unknown, patch: unknown): unknown {
  if (!Array.isArray(patch)) throw badRequest('json: cannot unmarshal object into Go value of type jsonpatch.Patch');
  for (const op of patch) {
    if (!isObject(op) || typeof op.op !== 'string' || typeof op.path !== 'string') {
      throw badRequest(`the server rejected our request due to an error in our request: invalid JSON patch operation ${JSON.stringify(op)}`);
    }
  }
  try {
    return jsonpatch.applyPatch(cloneJson(target), patch as jsonpatch.Operation[], true, true, true).newDocument;
  } catch (err) {
    const message = err instanceof Error ? err.message.split('\n')[0]! : String(err);
    throw unprocessable(`the server rejected our request due to an error in our request: ${message}`);
  }
}

const SET_ELEMENT_ORDER = '$setElementOrder/';
const DELETE_FROM_PRIMITIVE_LIST = '$deleteFromPrimitiveList/';

export function applyStrategicMergePatch(target: unknown, patch: unknown, rules: StrategicListRules, path = ''): unknown {
  if (!isObject(patch)) return cloneJson(patch);
  const directive = patch.$patch;
  if (directive === 'replace') {
    const { $patch: _ignored, ...rest } = patch;
    return cloneJson(rest);
  }
  if (directive !== undefined && directive !== 'merge') throw badRequest(`Unknown patch type: ${String(directive)}`);
  const result: Record<string, unknown> = isObject(target) ? { ...target } : {};
  for (const [key, value] of Object.entries(patch)) {
    if (key === '$patch' || key === '$retainKeys' || key.startsWith(SET_ELEMENT_ORDER)) continue;
    if (key.startsWith(DELETE_FROM_PRIMITIVE_LIST)) {
      const field = key.slice(DELETE_FROM_PRIMITIVE_LIST.length);
      if (Array.isArray(result[field]) && Array.isArray(value)) {
        result[field] = (result[field] as unknown[]).filter((item) => !value.includes(item));
      }
      continue;
    }
    const fieldPath = path ? `${path}.${key}` : key;
    if (value === null) {
      delete result[key];
    } else if (isObject(value) && value.$patch === 'delete') {
      delete result[key];
    } else if (Array.isArray(value) && rules[fieldPath]) {
      result[key] = mergeList(result[key], value, rules[fieldPath]!.mergeKey);
    } else if (isObject(value)) {
      result[key] = applyStrategicMergePatch(result[key], value, rules, fieldPath);
    } else {
      result[key] = cloneJson(value);
    }
  }
  return result;
}

function mergeList(current: unknown, patch: unknown[], mergeKey: string | undefined): unknown[] {
  const base = Array.isArray(current) ? [...current] : [];
  if (patch.some((item) => isObject(item) && item.$patch === 'replace')) {
    return patch.filter((item) => !(isObject(item) && item.$patch === 'replace')).map(cloneJson);
  }
  if (mergeKey === undefined) {
    for (const item of patch) if (!base.includes(item)) base.push(item);
    return base;
  }
  for (const item of patch) {
    if (!isObject(item)) throw badRequest(`the patch of a list merged by "${mergeKey}" must contain objects`);
    const idx = base.findIndex((b) => isObject(b) && b[mergeKey] === item[mergeKey]);
    if (item.$patch === 'delete') {
      if (idx >= 0) base.splice(idx, 1);
    } else if (idx >= 0) {
      base[idx] = applyMergePatch(base[idx], item);
    } else {
      base.push(cloneJson(item));
    }
  }
  return base;
}
