/**
 * The controller's writes and their effects: each write request as a WriteRecord with how a plan
 * names it (its trigger and occurrence), whether it changed the cluster (the change it caused, or
 * a no-op), the deliveries it may react to, and the first later change that re-issuing it would
 * undo (stale state).
 */
import { isBookkeepingKey, isBookkeepingResource, isLeaderElectionRecord } from '../../src/model/bookkeeping.js';
import {
  WriteOccurrenceCounter,
  isDryRun,
  isSuccessStatus,
  isTriggerWriteVerb,
  triggerFor,
  writeIdentity,
  writeIdentityKey,
  type WriteIdentity,
} from '../../src/model/controller-write.js';
import { isObject, type KubeObject, type ObjectKey } from '../../src/model/object-key.js';
import type { RequestEvent, ResponseEvent } from '../../src/model/trace.js';
import { createdPaths, pathsOverlap as overlaps, segmentsKey, writtenPaths, type PathKey } from '../paths.js';
import type { ChangeLog } from './changes.js';
import type { DeliveryLog } from './delivery.js';
import { isSuccess, pushTo, type ChangeRecord, type WriteRecord } from './records.js';

/** A write request as the api-error fault counts it: its identity (folded key) and whether it succeeded. */
interface CountedRequest {
  seq: number;
  id: string;
  success: boolean;
}

export class WriteLog {
  readonly writes: WriteRecord[] = [];
  /** Successful writes per identity (folded key), counted as the proxy counts them at test time. */
  readonly counter = new WriteOccurrenceCounter();
  /** A `triggers` analysis's write requests (see `count`); a full one has them in `writes`. */
  private readonly counted: CountedRequest[] = [];
  private readonly lastWriteSeq = new Map<ObjectKey, number>();

  // Writes waiting for a later change: by the resourceVersion their answer carried, by object (any
  // change), and those still searching for their conflict.
  private readonly pendingWriteByRv = new Map<string, number[]>();
  private readonly pendingWriteAnyChange = new Map<ObjectKey, number[]>();
  private readonly pendingConflicts = new Map<ObjectKey, number[]>();

  constructor(
    private readonly changes: ChangeLog,
    private readonly delivery: DeliveryLog,
  ) {}

  /** A write request: its record, with the deliveries it may react to. */
  record(req: RequestEvent): WriteRecord {
    const window = this.delivery.causeWindow();
    const w: WriteRecord = {
      index: this.writes.length,
      requestSeq: req.seq,
      id: req.id,
      incarnation: req.incarnation,
      verb: req.verb,
      dryRun: isDryRun(req.query),
      named: req.key !== undefined,
      bookkeeping: isBookkeepingResource(req.resource) || isLeaderElectionRecord(req.body) || (req.key !== undefined && isBookkeepingKey(req.key)),
      effect: 'pending',
      effectChange: -1,
      burst: window.burst,
      reconcile: window.reconcile,
      causeFrom: window.causeFrom,
      causeTo: window.causeTo,
      causeExtra: [],
      deliveriesBefore: window.causeTo,
      conflict: -1,
      firstLater: -1,
      conflictAfterSeq: -1,
    };
    if (req.resource?.subresource) w.subresource = req.resource.subresource;
    if (req.key) {
      this.delivery.noteWrite(req.key, w.reconcile);
      w.rawKey = req.key;
      w.key = this.changes.folder.fold(req.key);
      w.causeExtra = this.delivery.relatedDeliveries(req.key, req, window.causeFrom, this.lastWriteSeq.get(req.key) ?? -1);
      this.lastWriteSeq.set(req.key, req.seq);
    }
    if (req.verb === 'update' || req.verb === 'patch') {
      w.written = writtenPaths(req.verb, req.body);
      // The status subresource takes the status from the body and ignores every other field (spec,
      // metadata): re-issued, such a write can revert the status only.
      if (w.subresource === 'status') w.written = statusPaths(w.written);
      const rv = isObject(req.body) ? (req.body as KubeObject).metadata?.resourceVersion : undefined;
      if (typeof rv === 'string' && rv !== '') w.basedOn = rv;
    }
    // A create sets the fields of its body (all of them when the proxy could not read it).
    else if (req.verb === 'create' && !req.resource?.subresource) w.written = createdPaths(req.body);
    this.writes.push(w);
    return w;
  }

  /** Only counting writes (a `triggers` analysis): the answer to a write request. */
  count(req: RequestEvent, res: ResponseEvent): void {
    const id = isSuccessStatus(res.status) ? writeIdentity(req, res.object) : undefined;
    if (id) {
      const counted = { ...id, key: this.foldWriteKey(req, id.key, res.object) };
      this.counter.record(counted);
      this.counted.push({ seq: req.seq, id: writeIdentityKey(counted), success: true });
    } else if (req.key && isTriggerWriteVerb(req.verb) && !isDryRun(req.query)) {
      const subresource = req.resource?.subresource;
      const failed = { verb: req.verb, key: this.changes.folder.fold(req.key), ...(subresource ? { subresource } : {}) };
      this.counted.push({ seq: req.seq, id: writeIdentityKey(failed), success: false });
    }
  }

  /**
   * For each write identity (folded key), the request ordinal of each of its successful writes: the
   * how-many-th write request of that verb, key and subresource it was, failed ones included, in
   * the order the requests came. The api-error fault counts requests so (proxy/faults/api-error-fault.ts).
   */
  successOrdinals(): Map<string, number[]> {
    // A full analysis has its requests in `writes`, a `triggers` one in `counted`: one of the two is empty.
    const fromWrites = this.writes.flatMap((w): CountedRequest[] =>
      !w.dryRun && w.key && isTriggerWriteVerb(w.verb)
        ? [
            {
              seq: w.requestSeq,
              id: writeIdentityKey({ verb: w.verb, key: w.key, ...(w.subresource ? { subresource: w.subresource } : {}) }),
              success: isSuccess(w),
            },
          ]
        : [],
    );
    const requests = [...fromWrites, ...this.counted].sort((a, b) => a.seq - b.seq);
    const seen = new Map<string, number>();
    const out = new Map<string, number[]>();
    for (const r of requests) {
      const n = (seen.get(r.id) ?? 0) + 1;
      seen.set(r.id, n);
      if (r.success) pushTo(out, r.id, n);
    }
    return out;
  }

  answered(w: WriteRecord, req: RequestEvent, res: ResponseEvent): void {
    w.status = res.status;
    if (!isSuccess(w)) {
      w.effect = 'no-op';
      return;
    }
    // Counted as controller-write.ts counts (per verb, key, subresource), as the proxy counts at test
    // time: a create under the key of the object the answer returns (the request may not name it:
    // generateName, a protobuf or YAML body), under the folded key.
    const counted = writeIdentity(req, res.object);
    if (counted) {
      // A create the request did not name (generateName): its echo is the reconcile's own, not news.
      if (!w.rawKey) this.delivery.noteWrite(counted.key, w.reconcile);
      w.rawKey = counted.key;
    }
    if (!w.rawKey || w.verb === 'deletecollection') {
      // Nothing a trigger can name, nothing to prove a no-op.
      w.effect = 'effective';
      return;
    }
    w.key = this.foldWriteKey(req, w.rawKey, res.object);
    if (counted) {
      const id: WriteIdentity = { ...counted, key: w.key };
      w.trigger = triggerFor(id, this.counter.record(id));
    }
    const rawKey = w.rawKey;
    if (w.verb === 'delete' || (w.verb === 'create' && w.subresource)) {
      // Effective iff the object changed after the request (a delete: removed or marked for deletion).
      const found = this.changes.findAfter(rawKey, w.requestSeq, (c) => w.verb !== 'delete' || c.eventType !== 'ADDED');
      if (found >= 0) this.resolveEffect(w, found);
      else {
        pushTo(this.pendingWriteAnyChange, rawKey, w.index);
        // Even a no-op, re-issued later, can undo a newer state: look for conflicts from the answer on.
        this.searchConflicts(w, res.seq);
      }
      return;
    }
    const rv = res.object?.metadata?.resourceVersion;
    if (w.verb === 'create') w.effect = 'effective'; // a successful create always stores an object
    if (typeof rv !== 'string' || rv === '') {
      // An answer without a resourceVersion cannot prove a no-op: keep the write.
      w.effect = 'effective';
      this.searchConflicts(w, res.seq);
      return;
    }
    const c = this.changes.findByRv(rawKey, rv);
    if (c >= 0 && this.changes.changes[c]!.seq > w.requestSeq) this.resolveEffect(w, c);
    else {
      pushTo(this.pendingWriteByRv, rv, w.index);
      this.searchConflicts(w, res.seq);
    }
  }

  /** A change was recorded: the writes waiting for it learn their effect. */
  changeRecorded(c: ChangeRecord): void {
    const waitingWrites = this.pendingWriteByRv.get(c.resourceVersion);
    if (waitingWrites) {
      this.pendingWriteByRv.delete(c.resourceVersion);
      for (const wi of waitingWrites) {
        const w = this.writes[wi]!;
        if (w.rawKey === c.rawKey && c.seq > w.requestSeq) this.resolveEffect(w, c.index);
      }
    }
    const waitingAny = this.pendingWriteAnyChange.get(c.rawKey);
    if (waitingAny) {
      const still: number[] = [];
      for (const wi of waitingAny) {
        const w = this.writes[wi]!;
        if (c.seq > w.requestSeq && (w.verb !== 'delete' || c.eventType !== 'ADDED')) this.resolveEffect(w, c.index);
        else still.push(wi);
      }
      if (still.length > 0) this.pendingWriteAnyChange.set(c.rawKey, still);
      else this.pendingWriteAnyChange.delete(c.rawKey);
    }
  }

  /** A visible change: is it the conflict some earlier write is searching for? */
  checkPendingConflicts(c: ChangeRecord): void {
    const list = this.pendingConflicts.get(c.rawKey);
    if (!list) return;
    const still: number[] = [];
    for (const wi of list) {
      const w = this.writes[wi]!;
      if (c.seq <= w.conflictAfterSeq || !this.checkConflict(w, c)) still.push(wi);
    }
    if (still.length > 0) this.pendingConflicts.set(c.rawKey, still);
    else this.pendingConflicts.delete(c.rawKey);
  }

  /** The end of the trace: writes still undecided are no-ops, unless nothing could have proved it. */
  settle(noClusterTrace: boolean): void {
    for (const w of this.writes) {
      if (w.effect !== 'pending') continue;
      // Without the cluster trace nothing can prove a write was a no-op: keep it.
      w.effect = noClusterTrace && isSuccess(w) ? 'effective' : 'no-op';
    }
  }

  /**
   * The folded key of a write's object. A create's answer is a sighting of the creation as good as the
   * cluster change (which the trace may hold only later): the proxy folds at whichever comes first,
   * and so does the planner, so both count the create under `<prefix>*#<n>`.
   */
  private foldWriteKey(req: Pick<RequestEvent, 'verb' | 'resource'>, rawKey: ObjectKey, answer: KubeObject | undefined): ObjectKey {
    if (req.verb === 'create' && !req.resource?.subresource && isObject(answer)) return this.changes.folder.observeCreate(rawKey, answer);
    return this.changes.folder.fold(rawKey);
  }

  private resolveEffect(w: WriteRecord, change: number): void {
    w.effect = 'effective';
    w.effectChange = change;
    const seq = this.changes.changes[change]!.seq;
    if (w.conflictAfterSeq >= 0 && w.conflictAfterSeq < seq) {
      // The search started at the answer, before the change the write caused was recorded: restart after it.
      if (w.conflict < 0 && w.rawKey) {
        const list = (this.pendingConflicts.get(w.rawKey) ?? []).filter((i) => i !== w.index);
        if (list.length > 0) this.pendingConflicts.set(w.rawKey, list);
        else this.pendingConflicts.delete(w.rawKey);
      }
      w.conflict = -1;
      w.firstLater = -1;
      w.conflictAfterSeq = -1;
    }
    this.searchConflicts(w, seq);
  }

  /** Starts looking for the first later change that re-issuing `w` would undo (and its first later change). */
  private searchConflicts(w: WriteRecord, afterSeq: number): void {
    if (!w.rawKey || w.conflictAfterSeq >= 0) return;
    w.conflictAfterSeq = afterSeq;
    // Changes already recorded after that point (the answer can arrive after the change it caused, or later ones).
    const list = this.changes.changesOf(w.rawKey);
    let from = list.length;
    while (from > 0 && this.changes.changes[list[from - 1]!]!.seq > afterSeq) from--;
    for (let i = from; i < list.length; i++) if (this.checkConflict(w, this.changes.changes[list[i]!]!)) return;
    pushTo(this.pendingConflicts, w.rawKey, w.index);
  }

  /** True when `c` is the conflict of `w` (it stops searching). */
  private checkConflict(w: WriteRecord, c: ChangeRecord): boolean {
    if (!c.diff || c.index === w.effectChange) return false;
    if (w.firstLater < 0) w.firstLater = c.index;
    let conflict: boolean;
    switch (w.verb) {
      case 'create': {
        // Re-creating would resurrect an object that was deleted since. And a controller that creates
        // what is missing re-asserts what it created when the object exists (create-or-update): from
        // a stale view it would revert a later change of a field its create set.
        const written = w.written ?? 'all';
        conflict =
          c.eventType === 'DELETED' ||
          (c.eventType === 'MODIFIED' && !c.terminating && (written === 'all' || c.diffKeys.some((d) => written.some((p) => overlaps(p, d)))));
        break;
      }
      case 'delete':
        // Re-deleting would remove a newer object (re-created, or updated while not being deleted).
        conflict = c.eventType === 'ADDED' || (c.eventType === 'MODIFIED' && !c.terminating);
        break;
      case 'update':
      case 'patch': {
        const written = w.written ?? 'all';
        conflict =
          c.eventType === 'ADDED' || (c.eventType === 'MODIFIED' && (written === 'all' || c.diffKeys.some((d) => written.some((p) => overlaps(p, d)))));
        break;
      }
      default:
        conflict = false;
    }
    if (conflict) w.conflict = c.index;
    return conflict;
  }
}

const STATUS = segmentsKey(['status']);

/** The paths a write to the status subresource sets: those of `written` under `status` (all of `status` for `all`). */
function statusPaths(written: PathKey[] | 'all'): PathKey[] {
  if (written === 'all') return [STATUS];
  return written.filter((p) => overlaps(p, STATUS) && p !== '');
}
