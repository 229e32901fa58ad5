/**
 * How the oracles name objects across runs. Objects with server-generated names (`generateName`)
 * get a different name in every run, so they are folded into `Kind/namespace/<prefix>*` and only
 * counted. Bookkeeping objects (leader election, Events) are not compared at all.
 */
import { isBookkeepingKey, isLeaderElectionRecord } from '../src/model/bookkeeping.js';
import { formatKey, parseKey, type KubeObject, type ObjectKey } from '../src/model/object-key.js';

export type ComparableIdentity = { key: ObjectKey; generated: boolean } | undefined;

/** undefined: the oracles ignore this object. */
export function comparableIdentity(key: ObjectKey, obj: KubeObject | undefined): ComparableIdentity {
  if (isBookkeepingKey(key) || isLeaderElectionRecord(obj)) return undefined;
  const prefix = obj?.metadata?.generateName;
  const name = obj?.metadata?.name;
  const parts = parseKey(key);
  if (parts && prefix && name && name.length > prefix.length && name.startsWith(prefix)) {
    return { key: formatKey(parts.kind, parts.namespace, `${prefix}*`), generated: true };
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
    else view.named.set(id.key, obj);
  }
  return view;
}
