/**
 * The controller's side of what it saw and when: each delivery (a watch event, or an object state it
 * read for the first time) as a DeliveryRecord tied to the change it showed; its incarnations; its
 * activity in bursts (quiet gaps) or episodes (serialized delivery); its reconciles; and from those
 * the window of deliveries each write may react to (see ../trace-analysis.ts for the rules).
 */
import { HousekeepingRequests } from '../../src/model/bookkeeping.js';
import { isObject, keyOf, type KubeObject, type ObjectKey } from '../../src/model/object-key.js';
import type { EpisodeEvent, RequestEvent, ResponseEvent, WatchDeliveryEvent } from '../../src/model/trace.js';
import type { ChangeLog } from './changes.js';
import type { Ownership } from './ownership.js';
import { isSuccess, pushTo, type AnalyzerOptions, type CausalityMode, type ChangeRecord, type DeliveryRecord, type WriteRecord } from './records.js';

/** Where a write made now sits: its burst and reconcile, and the deliveries [causeFrom, causeTo) it may react to. */
export interface CauseWindow {
  burst: number;
  reconcile: number;
  causeFrom: number;
  causeTo: number;
}

export class DeliveryLog {
  readonly deliveries: DeliveryRecord[] = [];

  // What the current incarnation has been shown, and the latest delivery per object.
  private readonly seenRv = new Map<ObjectKey, string>();
  private readonly lastDelivery = new Map<ObjectKey, number>();
  /** Deliveries of a resourceVersion whose change is not recorded yet. */
  private readonly pendingDeliveries = new Map<string, number[]>();

  // Incarnations, bursts and episodes.
  private incarnation = 0;
  private incarnationFirstDelivery = 0;
  private inFlight = 0;
  private lastActivityTs: number | undefined;
  private burstNumber = 0;
  private forceNewBurst = false;
  // Reconciles: the current one, the raw keys it wrote, and whether something not of its own making
  // happened since its last request (then the next burst starts a new reconcile).
  private reconcile = 0;
  private readonly reconcileWrote = new Set<ObjectKey>();
  private readonly housekeeping = new HousekeepingRequests();
  private reconcileInterrupted = false;
  private readonly burstEndDeliveries: number[] = [0];
  private episodeMode = false;
  private episodeWindowStart = 0;
  private previousEpisodeQuiet = true;
  private lastWatchDelivery = -1;

  constructor(
    private readonly options: AnalyzerOptions,
    private readonly changes: ChangeLog,
    private readonly ownership: Ownership,
  ) {}

  get causality(): CausalityMode {
    return this.episodeMode ? 'serialized-episodes' : 'quiet-gap-bursts';
  }

  /** The current burst (or episode). */
  get burst(): number {
    return this.burstNumber;
  }

  get currentIncarnation(): number {
    return this.incarnation;
  }

  startIncarnation(n: number): void {
    if (n === this.incarnation) return;
    const first = this.incarnation === 0;
    this.incarnation = n;
    if (first) return; // the first process: everything so far was shown to it
    // A new process remembers nothing: only what it is shown from now on can cause its writes.
    this.incarnationFirstDelivery = this.deliveries.length;
    this.seenRv.clear();
    this.forceNewBurst = true;
    this.reconcileInterrupted = true;
    this.inFlight = 0;
  }

  private startBurst(): void {
    this.burstNumber++;
    this.burstEndDeliveries[this.burstNumber] = this.deliveries.length;
    this.forceNewBurst = false;
    if (this.reconcileInterrupted) {
      this.reconcile++;
      this.reconcileWrote.clear();
      this.reconcileInterrupted = false;
    }
  }

  /** A workload step wrote (or said nothing of what it does): news to the controller, a new reconcile. */
  interruptReconcile(): void {
    this.reconcileInterrupted = true;
  }

  /** A non-watch request started: it may start a burst (after a quiet gap) and extends it. Returns whether it is housekeeping. */
  requestStarted(req: RequestEvent): boolean {
    // Leader-election renewals and Events are housekeeping: they neither start nor extend a burst
    // (a controller renews every 2 s, which would otherwise make one burst of a whole run).
    const housekeeping = this.housekeeping.isHousekeeping(req.resource, req.key, req.body);
    if (!housekeeping) {
      if (
        this.forceNewBurst ||
        (!this.episodeMode && this.inFlight === 0 && this.lastActivityTs !== undefined && req.ts - this.lastActivityTs >= this.options.quietMs)
      ) {
        this.startBurst();
      }
      // What was shown before this request is this burst's business, not a reason to split it later.
      this.reconcileInterrupted = false;
      this.inFlight++;
      this.lastActivityTs = Math.max(this.lastActivityTs ?? req.ts, req.ts);
      this.burstEndDeliveries[this.burstNumber] = this.deliveries.length;
    }
    return housekeeping;
  }

  /** The answer to a non-watch request of burst `burst` came. */
  requestAnswered(request: RequestEvent | undefined, burst: number, res: ResponseEvent): void {
    this.housekeeping.noteAnswer(request?.key, res.object);
    if (this.inFlight > 0) this.inFlight--;
    this.lastActivityTs = Math.max(this.lastActivityTs ?? res.ts, res.ts);
    if (burst === this.burstNumber) this.burstEndDeliveries[this.burstNumber] = this.deliveries.length;
  }

  /** The window of deliveries a write made now may react to. */
  causeWindow(): CauseWindow {
    const from = this.episodeMode ? this.episodeWindowStart : this.burstNumber >= 2 ? (this.burstEndDeliveries[this.burstNumber - 2] ?? 0) : 0;
    const causeFrom = Math.min(Math.max(from, this.incarnationFirstDelivery), this.deliveries.length);
    return { burst: this.burstNumber, reconcile: this.reconcile, causeFrom, causeTo: this.deliveries.length };
  }

  /** Reconcile `reconcile` wrote `rawKey`: while it is the current one, its changes are echoes, not news. */
  noteWrite(rawKey: ObjectKey, reconcile: number): void {
    if (reconcile === this.reconcile) this.reconcileWrote.add(rawKey);
  }

  /** The latest delivery of each object related to `key`, after `since` (seq), below `before`. */
  relatedDeliveries(key: ObjectKey, req: RequestEvent, before: number, since: number): number[] {
    const out: number[] = [];
    for (const member of this.ownership.family(key, req)) {
      const d = this.lastDelivery.get(member);
      if (d === undefined || d >= before || d < this.incarnationFirstDelivery) continue;
      if (this.deliveries[d]!.seq > since) out.push(d);
    }
    return out.sort((a, b) => a - b);
  }

  /** A successful read's answer: each object in it not shown in this state before is a delivery. */
  onRead(obj: KubeObject, kind: string | undefined, seq: number): void {
    const items = (obj as { items?: unknown }).items;
    if (Array.isArray(items)) {
      const itemKind = typeof obj.kind === 'string' && obj.kind.endsWith('List') ? obj.kind.slice(0, -4) : kind;
      for (const item of items) if (isObject(item)) this.readObject(item as KubeObject, itemKind, seq);
    } else {
      this.readObject(obj, kind, seq);
    }
  }

  private readObject(obj: KubeObject, kind: string | undefined, seq: number): void {
    const key = keyOf(obj, obj.kind ?? kind);
    const rv = obj.metadata?.resourceVersion;
    if (!key || typeof rv !== 'string' || obj.kind === 'Status') return;
    if (this.seenRv.get(key) === rv) return; // already shown this state
    this.addDelivery(key, rv, seq, 'read');
  }

  onWatchEvent(e: WatchDeliveryEvent): void {
    if (e.eventType !== 'ADDED' && e.eventType !== 'MODIFIED' && e.eventType !== 'DELETED') return;
    const key = e.key ?? keyOf(e.object);
    if (!key) return;
    if (!this.reconcileInterrupted && !this.housekeeping.isHousekeepingObject(key, e.object) && !this.ownership.isEcho(key, this.reconcileWrote))
      this.reconcileInterrupted = true;
    this.lastWatchDelivery = this.addDelivery(key, e.resourceVersion ?? e.object?.metadata?.resourceVersion, e.seq, 'watch');
  }

  private addDelivery(rawKey: ObjectKey, rv: string | undefined, seq: number, source: DeliveryRecord['source']): number {
    const index = this.deliveries.length;
    const d: DeliveryRecord = { seq, rawKey, change: -1, source };
    if (rv !== undefined) {
      this.seenRv.set(rawKey, rv);
      const c = this.changes.findByRv(rawKey, rv);
      if (c >= 0) {
        d.change = c;
        this.changes.changes[c]!.delivered = true;
        if (source === 'watch') this.changes.changes[c]!.watched = true;
      } else {
        pushTo(this.pendingDeliveries, rv, index);
      }
    }
    this.deliveries.push(d);
    this.lastDelivery.set(rawKey, index);
    this.ownership.see(rawKey);
    return index;
  }

  /** A delivery recorded before its change (the watch ran ahead of the cluster trace) is tied to it now. */
  changeRecorded(c: ChangeRecord): void {
    const waitingDeliveries = this.pendingDeliveries.get(c.resourceVersion);
    if (!waitingDeliveries) return;
    this.pendingDeliveries.delete(c.resourceVersion);
    for (const d of waitingDeliveries) {
      if (this.deliveries[d]!.rawKey !== c.rawKey) continue;
      this.deliveries[d]!.change = c.index;
      c.delivered = true;
      if (this.deliveries[d]!.source === 'watch') c.watched = true;
    }
  }

  onEpisode(e: EpisodeEvent): void {
    if (e.phase === 'end') {
      // An episode ended because the controller kept repeating a refused write (proxy/serialize.ts)
      // has seen all this event makes it do: what it writes once the next events refresh its cache
      // reacts to them, as when a controller backing off between retries went quiet in between.
      this.previousEpisodeQuiet = e.quiet !== false || e.retrying === true;
      return;
    }
    this.episodeMode = true;
    let delivery = this.lastWatchDelivery;
    if (e.watchEventSeq !== undefined) {
      for (let i = this.deliveries.length - 1; i >= 0 && i >= this.deliveries.length - 64; i--) {
        if (this.deliveries[i]!.seq === e.watchEventSeq) {
          delivery = i;
          break;
        }
      }
    }
    if (this.previousEpisodeQuiet) {
      // The controller was quiet: whatever it does now reacts to this delivery.
      this.startBurst();
      this.episodeWindowStart = delivery >= 0 ? delivery : this.deliveries.length;
    }
    // Otherwise the previous episode's work is still going on: same burst, window still open from its delivery.
    this.previousEpisodeQuiet = true;
  }

  /** Marks changes whose deliveries may have caused a write (bit 1) or a successful, effective one (bit 2). */
  markCausalChanges(writes: readonly WriteRecord[]): void {
    const n = this.deliveries.length;
    const any = new Int32Array(n + 1);
    const effective = new Int32Array(n + 1);
    const extraAny = new Uint8Array(n);
    const extraEffective = new Uint8Array(n);
    for (const w of writes) {
      const eff = w.effect === 'effective' && isSuccess(w);
      if (w.causeTo > w.causeFrom) {
        any[w.causeFrom]!++;
        any[w.causeTo]!--;
        if (eff) {
          effective[w.causeFrom]!++;
          effective[w.causeTo]!--;
        }
      }
      for (const d of w.causeExtra) {
        extraAny[d] = 1;
        if (eff) extraEffective[d] = 1;
      }
    }
    let a = 0;
    let e = 0;
    for (let i = 0; i < n; i++) {
      a += any[i]!;
      e += effective[i]!;
      const d = this.deliveries[i]!;
      if (d.change < 0) continue;
      const c = this.changes.changes[d.change]!;
      if (a > 0 || extraAny[i]) c.causal |= 1;
      if (e > 0 || extraEffective[i]) c.causal |= 2;
    }
  }
}
