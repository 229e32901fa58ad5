/**
 * The in-memory object store: every object of every kind, one global resourceVersion counter (as etcd's
 * revision), and a bounded history of changes so that watches can resume from a resourceVersion.
 *
 * The store knows nothing about validation or strategies; it commits what the operations layer hands it,
 * stamps the new resourceVersion and tells its listeners (watch streams, built-in controllers) synchronously.
 * Objects handed in are owned by the store afterwards; objects handed out must not be mutated.
 */
import type { KubeObject } from '../model/object-key.js';

export type ChangeType = 'ADDED' | 'MODIFIED' | 'DELETED';

export interface StoreChange {
  type: ChangeType;
  resourceVersion: number;
  /** Registry key of the resource (`configmaps`, `widgets.example.com`). */
  resource: string;
  namespace: string | undefined;
  name: string;
  /** The new state; for DELETED the last state, stamped with the deletion's resourceVersion. */
  object: KubeObject;
  /** The state before the change (MODIFIED and DELETED). */
  previous?: KubeObject;
}

export type ChangeListener = (change: StoreChange) => void;

/** Fixed-capacity FIFO of changes in resourceVersion order. */
class ChangeHistory {
  private readonly buffer: Array<StoreChange | undefined>;
  private start = 0;
  private size = 0;

  constructor(readonly capacity: number) {
    this.buffer = new Array<StoreChange | undefined>(capacity);
  }

  /** Appends, returning the change that fell out of the window, if any. */
  push(change: StoreChange): StoreChange | undefined {
    if (this.capacity === 0) return change;
    if (this.size < this.capacity) {
      this.buffer[(this.start + this.size) % this.capacity] = change;
      this.size++;
      return undefined;
    }
    const evicted = this.buffer[this.start];
    this.buffer[this.start] = change;
    this.start = (this.start + 1) % this.capacity;
    return evicted;
  }

  /** Forgets changes with resourceVersion <= rv; returns the newest one forgotten. */
  dropThrough(rv: number): number | undefined {
    let last: number | undefined;
    while (this.size > 0 && this.at(0).resourceVersion <= rv) {
      last = this.at(0).resourceVersion;
      this.buffer[this.start] = undefined;
      this.start = (this.start + 1) % this.capacity;
      this.size--;
    }
    return last;
  }

  private at(i: number): StoreChange {
    return this.buffer[(this.start + i) % this.capacity]!;
  }

  /** Changes with resourceVersion > rv, oldest first. */
  after(rv: number): StoreChange[] {
    let lo = 0;
    let hi = this.size;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (this.at(mid).resourceVersion <= rv) lo = mid + 1;
      else hi = mid;
    }
    const out: StoreChange[] = [];
    for (let i = lo; i < this.size; i++) out.push(this.at(i));
    return out;
  }
}

function objectKey(namespace: string | undefined, name: string): string {
  return `${namespace ?? ''}/${name}`;
}

export class ObjectStore {
  private revision = 0;
  /** Every change with resourceVersion <= this may be missing from the history. */
  private compactedThrough = 0;
  private readonly buckets = new Map<string, Map<string, KubeObject>>();
  private readonly history: ChangeHistory;
  private readonly listeners = new Set<ChangeListener>();

  constructor(historySize: number) {
    this.history = new ChangeHistory(historySize);
  }

  /** The resourceVersion of the latest change (the list resourceVersion). */
  get resourceVersion(): number {
    return this.revision;
  }

  /** Changes up to and including this resourceVersion may have left the history. */
  get compactedResourceVersion(): number {
    return this.compactedThrough;
  }

  get(resource: string, namespace: string | undefined, name: string): KubeObject | undefined {
    return this.buckets.get(resource)?.get(objectKey(namespace, name));
  }

  /** Objects of one resource, in one namespace or all, ordered by namespace then name (as etcd keys are). */
  list(resource: string, namespace?: string): KubeObject[] {
    const bucket = this.buckets.get(resource);
    if (!bucket) return [];
    const entries = [...bucket.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    const items = entries.map(([, obj]) => obj);
    return namespace === undefined ? items : items.filter((o) => o.metadata?.namespace === namespace);
  }

  create(resource: string, obj: KubeObject): KubeObject {
    const meta = obj.metadata!;
    this.bucket(resource).set(objectKey(meta.namespace, meta.name!), obj);
    meta.resourceVersion = String(++this.revision);
    this.emit({ type: 'ADDED', resourceVersion: this.revision, resource, namespace: meta.namespace, name: meta.name!, object: obj });
    return obj;
  }

  update(resource: string, obj: KubeObject, previous: KubeObject): KubeObject {
    const meta = obj.metadata!;
    this.bucket(resource).set(objectKey(meta.namespace, meta.name!), obj);
    meta.resourceVersion = String(++this.revision);
    this.emit({ type: 'MODIFIED', resourceVersion: this.revision, resource, namespace: meta.namespace, name: meta.name!, object: obj, previous });
    return obj;
  }

  /** Removes `current` and returns its last state stamped with the deletion's resourceVersion. */
  delete(resource: string, current: KubeObject): KubeObject {
    const meta = current.metadata!;
    this.bucket(resource).delete(objectKey(meta.namespace, meta.name!));
    const last: KubeObject = { ...current, metadata: { ...meta, resourceVersion: String(++this.revision) } };
    this.emit({ type: 'DELETED', resourceVersion: this.revision, resource, namespace: meta.namespace, name: meta.name!, object: last, previous: current });
    return last;
  }

  /**
   * The objects of one resource as they were at resourceVersion `rv` (an exact read), rebuilt by undoing
   * the retained changes after it; undefined when `rv` is older than the retained history.
   */
  listAt(resource: string, namespace: string | undefined, rv: number): KubeObject[] | undefined {
    if (rv >= this.revision) return this.list(resource, namespace);
    const changes = this.changesAfter(rv);
    if (changes === undefined) return undefined;
    const state = new Map(this.buckets.get(resource) ?? []);
    for (let i = changes.length - 1; i >= 0; i--) {
      const change = changes[i]!;
      if (change.resource !== resource) continue;
      const key = objectKey(change.namespace, change.name);
      if (change.type === 'ADDED') state.delete(key);
      else state.set(key, change.previous!);
    }
    const items = [...state.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, obj]) => obj);
    return namespace === undefined ? items : items.filter((o) => o.metadata?.namespace === namespace);
  }

  /** Compacts the history through `rv` (default: everything): older resourceVersions get 410 Expired. */
  compact(rv: number = this.revision): void {
    const through = Math.min(rv, this.revision);
    this.history.dropThrough(through);
    if (through > this.compactedThrough) this.compactedThrough = through;
  }

  /** Number of objects stored, over all resources. */
  get size(): number {
    let n = 0;
    for (const bucket of this.buckets.values()) n += bucket.size;
    return n;
  }

  /** Forgets a resource's objects without events (its kind is gone; callers delete objects first). */
  drop(resource: string): void {
    this.buckets.delete(resource);
  }

  /**
   * Every change after `rv`, oldest first, or undefined when some of them have left the history
   * (the caller answers 410 Expired).
   */
  changesAfter(rv: number): StoreChange[] | undefined {
    if (rv < this.compactedThrough) return undefined;
    return this.history.after(rv);
  }

  subscribe(listener: ChangeListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  private bucket(resource: string): Map<string, KubeObject> {
    let bucket = this.buckets.get(resource);
    if (!bucket) this.buckets.set(resource, (bucket = new Map()));
    return bucket;
  }

  private emit(change: StoreChange): void {
    const evicted = this.history.push(change);
    if (evicted) this.compactedThrough = evicted.resourceVersion;
    for (const listener of [...this.listeners]) {
      try {
        listener(change);
      } catch {
        // A failing listener (a watch whose socket broke) must not undo or block the committed change.
      }
    }
  }
}
