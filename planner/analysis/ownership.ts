/**
 * Who owns whom (ownerReferences) as the trace goes, the owners objects had before being orphaned,
 * and every key seen: what relates a write to earlier deliveries of other objects (`family`) and
 * tells a controller's own echoes from news (`isEcho`).
 */
import { isBookkeepingKey } from '../../src/model/bookkeeping.js';
import { formatKey, isObject, parseKey, type KubeObject, type ObjectKey } from '../../src/model/object-key.js';
import type { RequestEvent } from '../../src/model/trace.js';

/** Walks of the ownership graph stop at this many objects. */
export const MAX_FAMILY = 256;

export class Ownership {
  private readonly owners = new Map<ObjectKey, ObjectKey[]>();
  private readonly owned = new Map<ObjectKey, Set<ObjectKey>>();
  private readonly pastOwners = new Map<ObjectKey, Set<ObjectKey>>();
  private readonly seenKeys = new Set<ObjectKey>();

  /** The key appeared in the trace (a change or a delivery): owners are preferably resolved to seen keys. */
  see(key: ObjectKey): void {
    this.seenKeys.add(key);
  }

  ownersOf(key: ObjectKey): ObjectKey[] | undefined {
    return this.owners.get(key);
  }

  update(key: ObjectKey, obj: KubeObject | undefined): void {
    if (!obj) return;
    const parents = this.ownerKeys(obj, parseKey(key)?.namespace);
    const old = this.owners.get(key);
    if (old && old.length === parents.length && old.every((o, i) => o === parents[i])) return;
    for (const o of old ?? []) {
      this.owned.get(o)?.delete(key);
      // Orphaning removes owner references: the change is still the owner's deletion echoing.
      if (!parents.includes(o)) {
        let past = this.pastOwners.get(key);
        if (!past) this.pastOwners.set(key, (past = new Set()));
        past.add(o);
      }
    }
    if (parents.length > 0) this.owners.set(key, parents);
    else this.owners.delete(key);
    for (const o of parents) {
      let set = this.owned.get(o);
      if (!set) {
        set = new Set();
        this.owned.set(o, set);
      }
      set.add(key);
    }
  }

  /** Is a change of `rawKey` the cluster's answer to writes of `wrote` (the object, or one owning or having owned it)? */
  isEcho(rawKey: ObjectKey, wrote: ReadonlySet<ObjectKey>): boolean {
    if (isBookkeepingKey(rawKey)) return true;
    const seen = new Set<ObjectKey>();
    const up: ObjectKey[] = [rawKey];
    while (up.length > 0 && seen.size < MAX_FAMILY) {
      const k = up.pop()!;
      if (seen.has(k)) continue;
      seen.add(k);
      if (wrote.has(k)) return true;
      up.push(...(this.owners.get(k) ?? []), ...(this.pastOwners.get(k) ?? []));
    }
    return false;
  }

  /** The object, its owners and owned objects (transitively), and objects sharing an owner with it. */
  family(key: ObjectKey, req: RequestEvent): Set<ObjectKey> {
    const members = new Set<ObjectKey>([key]);
    const parents = new Set(this.owners.get(key) ?? []);
    if (req.verb === 'create' && isObject(req.body)) for (const o of this.ownerKeys(req.body as KubeObject, parseKey(key)?.namespace)) parents.add(o);
    const add = (k: ObjectKey) => members.size < MAX_FAMILY && !members.has(k) && (members.add(k), true);
    // Owners, transitively.
    const up = [...parents];
    while (up.length > 0) {
      const k = up.pop()!;
      if (add(k)) up.push(...(this.owners.get(k) ?? []));
    }
    // Objects sharing a direct owner.
    for (const p of parents) for (const sibling of this.owned.get(p) ?? []) add(sibling);
    // Owned objects, transitively.
    const down = [key];
    const visited = new Set<ObjectKey>();
    while (down.length > 0) {
      const k = down.pop()!;
      if (visited.has(k)) continue;
      visited.add(k);
      for (const child of this.owned.get(k) ?? []) {
        if (members.size >= MAX_FAMILY) return members;
        add(child);
        down.push(child);
      }
    }
    return members;
  }

  private ownerKeys(obj: KubeObject, namespace: string | undefined): ObjectKey[] {
    const refs = obj.metadata?.ownerReferences;
    if (!Array.isArray(refs)) return [];
    const out: ObjectKey[] = [];
    for (const ref of refs) {
      if (!isObject(ref) || typeof ref.kind !== 'string' || typeof ref.name !== 'string') continue;
      // Owners live in the owned object's namespace or are cluster-scoped; prefer whichever was seen.
      const namespaced = namespace ? formatKey(ref.kind, namespace, ref.name) : undefined;
      const clusterScoped = formatKey(ref.kind, undefined, ref.name);
      out.push(namespaced && (this.seenKeys.has(namespaced) || !this.seenKeys.has(clusterScoped)) ? namespaced : clusterScoped);
    }
    return out.sort();
  }
}
