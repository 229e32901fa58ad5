/**
 * The cluster side of a run analysis: every change of the cluster (from kperturb's own watch) as a
 * ChangeRecord with its normalised diff and its rank among the object's changes, each object's
 * history, which later change cancels which (unobserved state), and optionally a hash of the whole
 * normalised cluster state after each change (uids included: an object's next life is another state).
 */
import { createHash } from '../../src/model/hash.js';
import { isBookkeepingKey, isLeaderElectionRecord } from '../../src/model/bookkeeping.js';
import { diffForTrigger, normalizeForTrigger, uidsOf, type ChangeDiff } from '../../src/model/change-match.js';
import { GeneratedNameFolder } from '../../src/model/generated-names.js';
import type { ObjectKey } from '../../src/model/object-key.js';
import type { ClusterChangeEvent } from '../../src/model/trace.js';
import { pathKey, pathsOverlap as overlaps, type PathKey } from '../paths.js';
import type { Ownership } from './ownership.js';
import { pushTo, upperBound, type AnalyzerOptions, type ChangeRecord, type KeyHistory } from './records.js';

export class ChangeLog {
  readonly changes: ChangeRecord[] = [];
  readonly keys = new Map<ObjectKey, KeyHistory>();
  /** Folds generated names as the proxy's triggers do; writes fold their keys with it too. */
  readonly folder = new GeneratedNameFolder();

  // Latest known state of each object (normalised) and the changes of each raw key.
  private readonly lastState = new Map<ObjectKey, Record<string, unknown>>();
  private readonly rawKeyChanges = new Map<ObjectKey, number[]>();

  // Cluster state hash: four 32-bit lanes, each the sum over objects of that lane of the object's md5
  // (over its uids and its normalised state: the same fields in another life are another state).
  private stateHashes: Uint32Array;
  private readonly objectHash = new Map<ObjectKey, [number, number, number, number]>();
  private readonly lanes: [number, number, number, number] = [0, 0, 0, 0];
  // Per change, the md5 lanes of the object's new state (zeros: deleted), so that the state of a subset
  // of the objects can be hashed after the run (viewStateReader).
  private changeObjectHashes: Uint32Array;

  // Changes not cancelled yet, by raw key (see trackCancellation).
  private readonly pendingCreate = new Map<ObjectKey, number>();
  private readonly pendingDelete = new Map<ObjectKey, number>();
  private readonly pendingUpdates = new Map<ObjectKey, Map<PathKey, number[]>>();

  constructor(
    private readonly options: AnalyzerOptions,
    private readonly ownership: Ownership,
  ) {
    this.stateHashes = new Uint32Array(options.stateHashes ? 4096 : 0);
    this.changeObjectHashes = new Uint32Array(options.stateHashes ? 4096 : 0);
  }

  /**
   * Records a change. `started`: the controller trace has begun (changes before it are not counted,
   * as the proxy's trigger counters start with the controller). Without `full` only the record and
   * the latest state are kept (enough to judge triggers).
   */
  record(e: ClusterChangeEvent, started: boolean, full: boolean): ChangeRecord {
    const index = this.changes.length;
    const rawKey = e.key;
    const prev = this.lastState.get(rawKey);
    const next = e.eventType === 'DELETED' ? undefined : normalizeForTrigger(e.object);
    let diff: ChangeDiff | undefined;
    if (e.eventType === 'ADDED') diff = diffForTrigger(undefined, next);
    else if (e.eventType === 'DELETED') diff = diffForTrigger(prev ?? normalizeForTrigger(e.object), undefined);
    else if (prev) diff = diffForTrigger(prev, next);
    // A MODIFIED of an object never seen created cannot be named reliably: it stays invisible to triggers.

    const key = e.eventType === 'ADDED' ? this.folder.observeCreate(rawKey, e.object) : this.folder.fold(rawKey);
    let history = this.keys.get(key);
    if (!history) {
      history = { creates: 0, deletes: 0, updates: [] };
      this.keys.set(key, history);
    }
    let ordinal = 0;
    let updatePos = -1;
    if (!started) {
      // Not counted: the proxy's trigger counters start with the controller.
    } else if (diff?.change === 'create') ordinal = ++history.creates;
    else if (diff?.change === 'delete') ordinal = ++history.deletes;
    else if (diff?.change === 'update') {
      updatePos = history.updates.length;
      history.updates.push(index);
      ordinal = history.updates.length;
    }
    const c: ChangeRecord = {
      index,
      seq: e.seq,
      key,
      rawKey,
      eventType: e.eventType,
      resourceVersion: e.resourceVersion,
      diff,
      diffKeys: diff ? diff.fields.map((f) => pathKey(f.path)) : [],
      ordinal,
      updatePos,
      beforeStart: !started,
      terminating: e.eventType !== 'DELETED' && typeof e.object?.metadata?.deletionTimestamp === 'string',
      bookkeeping: isBookkeepingKey(rawKey) || isLeaderElectionRecord(e.object),
      delivered: false,
      watched: false,
      cancelledBy: -1,
      causal: 0,
      owners: undefined,
    };
    this.changes.push(c);
    if (next) this.lastState.set(rawKey, next);
    else this.lastState.delete(rawKey);
    if (!full) return c;
    if (this.options.stateHashes) this.updateStateHash(index, rawKey, next ? `${uidsOf(e.object)}\n${JSON.stringify(next)}` : undefined);
    pushTo(this.rawKeyChanges, rawKey, index);
    this.ownership.see(rawKey);
    this.ownership.update(rawKey, e.eventType === 'DELETED' ? undefined : e.object);
    if (e.eventType === 'ADDED') c.owners = this.ownership.ownersOf(rawKey);
    return c;
  }

  /** The changes (indices, in order) of an object by its raw key. */
  changesOf(rawKey: ObjectKey): readonly number[] {
    return this.rawKeyChanges.get(rawKey) ?? [];
  }

  /** Did the object exist right after `change`? Its latest change at or before it (binary search over its change indices). */
  existsAfter(rawKey: ObjectKey, change: number): boolean {
    const list = this.rawKeyChanges.get(rawKey) ?? [];
    const lo = upperBound(list, change);
    return lo > 0 && this.changes[list[lo - 1]!]!.eventType !== 'DELETED';
  }

  /** The recorded change of `rawKey` with this resourceVersion (-1: not recorded yet, or long ago). */
  findByRv(rawKey: ObjectKey, rv: string): number {
    const list = this.rawKeyChanges.get(rawKey);
    if (!list) return -1;
    // Deliveries and answers trail their change by a few events at most; a list shows the latest state.
    for (let i = list.length - 1; i >= 0 && i >= list.length - 64; i--) {
      if (this.changes[list[i]!]!.resourceVersion === rv) return list[i]!;
    }
    return -1;
  }

  /** The first change of `rawKey` after `afterSeq` that `accept` takes (-1: none yet). */
  findAfter(rawKey: ObjectKey, afterSeq: number, accept: (c: ChangeRecord) => boolean): number {
    const list = this.rawKeyChanges.get(rawKey);
    if (!list) return -1;
    let first = -1;
    for (let i = list.length - 1; i >= 0; i--) {
      const c = this.changes[list[i]!]!;
      if (c.seq <= afterSeq) break;
      if (accept(c)) first = c.index;
    }
    return first;
  }

  /** The state hash after each change, as hex, computed on demand (undefined without `stateHashes`). */
  stateHashReader(): (change: number) => string | undefined {
    const hashes = this.stateHashes;
    const stateStrings = new Map<number, string>();
    return (i) => {
      if (!this.options.stateHashes || i < 0 || i >= this.changes.length) return undefined;
      let h = stateStrings.get(i);
      if (h === undefined) {
        const b = i * 4;
        h = `${hex(hashes[b]!)}${hex(hashes[b + 1]!)}${hex(hashes[b + 2]!)}${hex(hashes[b + 3]!)}`;
        stateStrings.set(i, h);
      }
      return h;
    };
  }

  /**
   * A hash of the state of the objects whose changes `include` takes right after each change, as hex,
   * computed in one pass on first use (undefined without `stateHashes`). The same sum of per-object
   * md5 lanes as the whole state's hash, over fewer objects.
   */
  subsetStateReader(include: (c: ChangeRecord) => boolean): (change: number) => string | undefined {
    let hashes: Uint32Array | undefined;
    const strings = new Map<number, string>();
    const compute = () => {
      const objectHashes = this.changeObjectHashes;
      const out = new Uint32Array(this.changes.length * 4);
      const lanes = [0, 0, 0, 0];
      const current = new Map<ObjectKey, number>(); // raw key -> change index of its current state
      this.changes.forEach((c, i) => {
        if (include(c)) {
          const old = current.get(c.rawKey);
          if (old !== undefined) for (let l = 0; l < 4; l++) lanes[l] = (lanes[l]! - objectHashes[old * 4 + l]!) >>> 0;
          if (c.eventType === 'DELETED') current.delete(c.rawKey);
          else {
            for (let l = 0; l < 4; l++) lanes[l] = (lanes[l]! + objectHashes[i * 4 + l]!) >>> 0;
            current.set(c.rawKey, i);
          }
        }
        out.set(lanes, i * 4);
      });
      return out;
    };
    return (i) => {
      if (!this.options.stateHashes || i < 0 || i >= this.changes.length) return undefined;
      let h = strings.get(i);
      if (h === undefined) {
        hashes ??= compute();
        const b = i * 4;
        h = `${hex(hashes[b]!)}${hex(hashes[b + 1]!)}${hex(hashes[b + 2]!)}${hex(hashes[b + 3]!)}`;
        strings.set(i, h);
      }
      return h;
    };
  }

  /**
   * Unobserved state: a creation is cancelled by the deletion, a deletion by the re-creation, an update
   * by the deletion or by the first later update that changes one of its fields again.
   */
  trackCancellation(c: ChangeRecord): void {
    const key = c.rawKey;
    const cancel = (n: number) => {
      const prev = this.changes[n]!;
      if (prev.cancelledBy < 0) prev.cancelledBy = c.index;
    };
    if (c.eventType === 'DELETED') {
      const created = this.pendingCreate.get(key);
      if (created !== undefined) cancel(created);
      this.pendingCreate.delete(key);
      for (const list of this.pendingUpdates.get(key)?.values() ?? []) list.forEach(cancel);
      this.pendingUpdates.delete(key);
      this.pendingDelete.set(key, c.index);
      return;
    }
    if (c.eventType === 'ADDED') {
      const deleted = this.pendingDelete.get(key);
      if (deleted !== undefined) cancel(deleted);
      this.pendingDelete.delete(key);
      this.pendingUpdates.delete(key);
      this.pendingCreate.set(key, c.index);
      return;
    }
    let buckets = this.pendingUpdates.get(key);
    if (buckets) {
      for (const [p, list] of buckets) {
        if (c.diffKeys.some((d) => overlaps(p, d))) {
          list.forEach(cancel);
          buckets.delete(p);
        }
      }
    } else {
      buckets = new Map();
      this.pendingUpdates.set(key, buckets);
    }
    for (const d of c.diffKeys) pushTo(buckets, d, c.index);
  }

  /** `next`: the object's new state as hashed (its uids and its normalised fields; undefined: deleted). */
  private updateStateHash(index: number, key: ObjectKey, next: string | undefined): void {
    const old = this.objectHash.get(key);
    if (old) for (let i = 0; i < 4; i++) this.lanes[i] = (this.lanes[i]! - old[i]!) >>> 0;
    if (next) {
      const d = createHash('md5').update(key).update('\n').update(next).digest();
      const h: [number, number, number, number] = [d.readUInt32LE(0), d.readUInt32LE(4), d.readUInt32LE(8), d.readUInt32LE(12)];
      for (let i = 0; i < 4; i++) this.lanes[i] = (this.lanes[i]! + h[i]!) >>> 0;
      this.objectHash.set(key, h);
      if ((index + 1) * 4 > this.changeObjectHashes.length) {
        const bigger = new Uint32Array(Math.max(4096, this.changeObjectHashes.length * 2, (index + 1) * 4));
        bigger.set(this.changeObjectHashes);
        this.changeObjectHashes = bigger;
      }
      this.changeObjectHashes.set(h, index * 4);
    } else {
      this.objectHash.delete(key);
    }
    if ((index + 1) * 4 > this.stateHashes.length) {
      const bigger = new Uint32Array(this.stateHashes.length * 2);
      bigger.set(this.stateHashes);
      this.stateHashes = bigger;
    }
    this.stateHashes.set(this.lanes, index * 4);
  }
}

function hex(n: number): string {
  return n.toString(16).padStart(8, '0');
}
