/**
 * The PATCH content types: JSON patch (RFC 6902, via fast-json-patch), JSON merge patch (RFC 7386) and
 * strategic merge patch.
 *
 * Strategic merge patch follows the kind's list rules (kinds/list-rules.ts: containers by name, ports by
 * containerPort, volumeMounts by mountPath, conditions by type, finalizers as a set, ...) instead of Go
 * struct tags; it is not offered for custom resources (415, as a real server).
 */
import jsonpatch from 'fast-json-patch';
import { isObject } from '../model/object-key.js';
import { cloneJson, jsonEqual } from '../model/json-value.js';
import { badRequest, unprocessable } from './api-error.js';
import type { ListRules } from './registry.js';

export type PatchType = 'json' | 'merge' | 'strategic' | 'apply';

export const PATCH_MEDIA_TYPES: Readonly<Record<string, PatchType>> = {
  'application/json-patch+json': 'json',
  'application/merge-patch+json': 'merge',
  'application/strategic-merge-patch+json': 'strategic',
  'application/apply-patch+yaml': 'apply',
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
const RETAIN_KEYS = '$retainKeys';

/**
 * Strategic merge patch (k8s.io/apimachinery/pkg/util/strategicpatch) driven by the kind's list rules:
 * maps merge recursively (null deletes), lists with a merge rule merge by key or as sets, other lists are
 * replaced; directives `$patch` (replace, delete, merge), `$retainKeys`, `$deleteFromPrimitiveList/` and
 * `$setElementOrder/` are honoured.
 */
export function applyStrategicMergePatch(target: unknown, patch: unknown, rules: ListRules, rulePath = ''): unknown {
  if (!isObject(patch)) return cloneJson(patch);
  const directive = patch.$patch;
  if (directive === 'replace') {
    const { $patch: _ignored, ...rest } = patch;
    return stripDirectives(rest);
  }
  if (directive === 'delete') return undefined;
  if (directive !== undefined && directive !== 'merge') throw badRequest(`Unknown patch type: ${String(directive)}`);
  const result: Record<string, unknown> = isObject(target) ? { ...target } : {};
  const orders = new Map<string, unknown[]>();
  for (const [key, value] of Object.entries(patch)) {
    if (key === '$patch' || key === RETAIN_KEYS) continue;
    if (key.startsWith(SET_ELEMENT_ORDER)) {
      if (!Array.isArray(value)) throw badRequest(`invalid value for ${key}: must be a list`);
      orders.set(key.slice(SET_ELEMENT_ORDER.length), value);
      continue;
    }
    if (key.startsWith(DELETE_FROM_PRIMITIVE_LIST)) {
      const field = key.slice(DELETE_FROM_PRIMITIVE_LIST.length);
      if (Array.isArray(result[field]) && Array.isArray(value)) {
        result[field] = (result[field] as unknown[]).filter((item) => !value.some((v) => jsonEqual(v, item)));
      }
      continue;
    }
    const fieldPath = rulePath ? `${rulePath}.${key}` : key;
    const rule = rules[fieldPath];
    if (value === null) {
      delete result[key];
    } else if (Array.isArray(value) && rule?.patchMerge) {
      result[key] = mergeList(result[key], value, rule.patchMerge.key, rules, `${fieldPath}[]`);
    } else if (Array.isArray(value)) {
      result[key] = stripDirectives(value);
    } else if (isObject(value)) {
      const merged = applyStrategicMergePatch(result[key], value, rules, fieldPath);
      if (merged === undefined) delete result[key];
      else result[key] = merged;
    } else {
      result[key] = value;
    }
  }
  for (const [field, order] of orders) {
    const rule = rules[rulePath ? `${rulePath}.${field}` : field];
    if (Array.isArray(result[field])) result[field] = applyElementOrder(result[field] as unknown[], order, rule?.patchMerge?.key);
  }
  const retain = patch[RETAIN_KEYS];
  if (Array.isArray(retain)) {
    for (const key of Object.keys(result)) if (!retain.includes(key)) delete result[key];
  }
  return result;
}

function stripDirectives(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(stripDirectives);
  if (!isObject(value)) return value;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) {
    if (k === '$patch' || k === RETAIN_KEYS || k.startsWith(SET_ELEMENT_ORDER) || k.startsWith(DELETE_FROM_PRIMITIVE_LIST)) continue;
    out[k] = stripDirectives(v);
  }
  return out;
}

function mergeList(current: unknown, patch: unknown[], mergeKey: string | undefined, rules: ListRules, itemRulePath: string): unknown[] {
  const base = Array.isArray(current) ? [...current] : [];
  if (patch.some((item) => isObject(item) && item.$patch === 'replace')) {
    return patch.filter((item) => !(isObject(item) && item.$patch === 'replace')).map(stripDirectives);
  }
  if (mergeKey === undefined) {
    for (const item of patch) if (!base.some((b) => jsonEqual(b, item))) base.push(cloneJson(item));
    return base;
  }
  for (const item of patch) {
    if (!isObject(item)) throw badRequest(`unable to find api field in struct for the merge key "${mergeKey}": the patch items must be objects`);
    if (!(mergeKey in item)) throw badRequest(`map: ${JSON.stringify(item)} does not contain declared merge key: ${mergeKey}`);
    const idx = base.findIndex((b) => isObject(b) && jsonEqual(b[mergeKey], item[mergeKey]));
    if (item.$patch === 'delete') {
      if (idx >= 0) base.splice(idx, 1);
    } else if (idx >= 0) {
      base[idx] = applyStrategicMergePatch(base[idx], item, rules, itemRulePath);
    } else {
      base.push(applyStrategicMergePatch({}, item, rules, itemRulePath));
    }
  }
  return base;
}

/**
 * `$setElementOrder/<field>`: items named in the order come in that order; items only the server has
 * keep their place after the item that preceded them.
 */
function applyElementOrder(list: unknown[], order: unknown[], mergeKey: string | undefined): unknown[] {
  const identity = (item: unknown): string => JSON.stringify(mergeKey !== undefined && isObject(item) ? item[mergeKey] : item);
  const wanted = order.map(identity);
  const result: unknown[] = wanted.map((id) => list.find((x) => identity(x) === id)).filter((x) => x !== undefined);
  list.forEach((item, i) => {
    if (wanted.includes(identity(item))) return;
    let at = 0;
    for (let j = i - 1; j >= 0; j--) {
      const pos = result.indexOf(list[j]);
      if (pos >= 0) {
        at = pos + 1;
        break;
      }
    }
    result.splice(at, 0, item);
  });
  return result;
}
