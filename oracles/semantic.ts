/**
 * Value equality the way Kubernetes means it:
 * - map key order never matters;
 * - lists of named items (containers, env, ports, volumes, conditions by type...) are keyed by that
 *   field, so their order does not matter; other lists are compared in order;
 * - quantities are compared by amount ("1Gi" = "1073741824", "500m" = "0.5").
 * The end-state oracle and the mask learner walk values with `childSlots`, so both see keyed lists
 * the same way and name their items `[name=web]`.
 */
import { isObject } from '../src/model/object-key.js';
import { isIpAddress } from '../src/model/ip-address.js';
import type { PathSegment } from '../src/model/field-path.js';
import { quantitiesEqual } from './quantity.js';

/**
 * The field that identifies list items, by the list's field name (as in Kubernetes' strategic merge
 * keys); lists not named here are keyed by `name` when every item has a unique one.
 */
const LIST_KEYS: Record<string, readonly string[]> = {
  conditions: ['type'],
  volumeMounts: ['mountPath'],
  volumeDevices: ['devicePath'],
  ports: ['name', 'containerPort', 'port'],
  hostAliases: ['ip'],
  topologySpreadConstraints: ['topologyKey'],
};
const DEFAULT_LIST_KEYS: readonly string[] = ['name'];

/**
 * The key field of a list named `field` whose values are `lists`, or undefined when the lists are
 * compared by position: every item of every list must be a map with a unique string or number key.
 */
export function listKeyField(field: string | undefined, lists: readonly unknown[][]): string | undefined {
  if (field === undefined || lists.every((l) => l.length === 0)) return undefined;
  const candidates = LIST_KEYS[field] ?? DEFAULT_LIST_KEYS;
  return candidates.find((k) =>
    lists.every((list) => {
      const seen = new Set<string>();
      for (const item of list) {
        if (!isObject(item)) return false;
        const v = item[k];
        if (typeof v !== 'string' && typeof v !== 'number') return false;
        if (seen.has(String(v))) return false;
        seen.add(String(v));
      }
      return true;
    }),
  );
}

function itemWithKey(list: readonly unknown[], key: string, value: string | number): unknown {
  return list.find((item) => isObject(item) && String(item[key]) === String(value));
}

export interface ChildSlot {
  segment: PathSegment;
  /** The child of one of the walked values (or `missing` when that value has no such child). */
  pick: (value: unknown) => unknown;
}

/**
 * How to descend into `values` (one per run; `missing` marks "no value in this run"): their map
 * keys, list positions or list keys, in a stable order. Undefined when the values are leaves (or
 * empty, or of different types), which the caller then compares as a whole.
 */
export function childSlots(values: readonly unknown[], field: string | undefined, missing: unknown): ChildSlot[] | undefined {
  const present = values.filter((v) => v !== missing);
  if (present.length === 0) return undefined;
  if (present.every(isObject)) {
    const keys = new Set<string>();
    for (const v of present) for (const k of Object.keys(v)) keys.add(k);
    if (keys.size === 0) return undefined;
    return [...keys].sort().map((k) => ({
      segment: k,
      pick: (v: unknown) => (isObject(v) && Object.prototype.hasOwnProperty.call(v, k) ? v[k] : missing),
    }));
  }
  if (present.every(Array.isArray)) {
    const lists = present as unknown[][];
    const keyField = listKeyField(field, lists);
    if (keyField !== undefined) {
      const seen = new Map<string, string | number>();
      for (const list of lists)
        for (const item of list) {
          const v = (item as Record<string, string | number>)[keyField]!;
          if (!seen.has(String(v))) seen.set(String(v), v);
        }
      return [...seen.keys()].sort().map((id) => {
        const value = seen.get(id)!;
        return {
          segment: { key: keyField, value },
          pick: (v: unknown) => (Array.isArray(v) ? (itemWithKey(v, keyField, value) ?? missing) : missing),
        };
      });
    }
    const len = Math.max(...lists.map((a) => a.length));
    if (len === 0) return undefined;
    return Array.from({ length: len }, (_, i) => ({ segment: i, pick: (v: unknown) => (Array.isArray(v) && i < v.length ? v[i] : missing) }));
  }
  return undefined;
}

/** `field`: the name of the map key holding a and b (it decides whether a list is keyed). */
export function semanticEqual(a: unknown, b: unknown, field?: string): boolean {
  if (a === b) return true;
  if (Array.isArray(a) && Array.isArray(b)) {
    if (a.length !== b.length) return false;
    const keyField = listKeyField(field, [a, b]);
    if (keyField !== undefined) {
      return a.every((item) => semanticEqual(item, itemWithKey(b, keyField, (item as Record<string, string | number>)[keyField]!)));
    }
    return a.every((x, i) => semanticEqual(x, b[i]));
  }
  if (isObject(a) && isObject(b)) {
    const ka = Object.keys(a);
    if (ka.length !== Object.keys(b).length) return false;
    return ka.every((k) => Object.prototype.hasOwnProperty.call(b, k) && semanticEqual(a[k], b[k], k));
  }
  return quantitiesEqual(a, b);
}

/** A stable text form: map keys sorted (for hashing and grouping; keyed lists keep their order). */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(sortKeys(value)) ?? 'undefined';
}

function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (!isObject(value)) return value;
  const out: Record<string, unknown> = {};
  for (const k of Object.keys(value).sort()) out[k] = sortKeys(value[k]);
  return out;
}

/** One entry per semantically distinct value, in first-seen order. */
export function distinctValues(values: readonly unknown[], field?: string): unknown[] {
  const out: unknown[] = [];
  for (const v of values) if (!out.some((o) => semanticEqual(o, v, field))) out.push(v);
  return out;
}

const RFC3339 = /^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/;

export function looksLikeTimestamp(value: unknown): boolean {
  return typeof value === 'string' && RFC3339.test(value);
}

/**
 * An IPv4 or IPv6 address, optionally with a CIDR suffix, or an address with a port (`10.0.0.5:2181`,
 * `[fd00::1]:2181`): an operator's status often names a Service by its cluster IP and port.
 */
export function looksLikeIP(value: unknown): boolean {
  if (typeof value !== 'string') return false;
  const withPort = /^(?:\[([^\]]+)\]|([^:]+)):(\d{1,5})$/.exec(value);
  if (withPort) return Number(withPort[3]) <= 65_535 && isIpAddress(withPort[1] ?? withPort[2]!);
  const slash = value.indexOf('/');
  const addr = slash < 0 ? value : value.slice(0, slash);
  if (slash >= 0 && !/^\d{1,3}$/.test(value.slice(slash + 1))) return false;
  return isIpAddress(addr);
}

/**
 * Field names under which an address is expected (podIP, hostIPs, clusterIP, addresses, host,
 * a node's podCIDR...). IP-looking values elsewhere (a version "1.2.3.4") are compared as usual.
 */
export function namesAnAddress(segment: PathSegment): boolean {
  return typeof segment === 'string' && /ip|addr|host|endpoint|server|cidr/i.test(segment);
}
