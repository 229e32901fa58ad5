/**
 * Holding watch delivery for one object key or one kind, within the API contract.
 *
 * A real API server delivers each watch stream's events in resourceVersion order, so a proxy that
 * holds one event must hold everything after it on that stream too (a slow server), BOOKMARKs
 * included: forwarding a later event or bookmark would move the client's last-seen resourceVersion
 * past the held event, and a client that re-watches from there would lose it for good. So on each
 * stream, the first event that matches a hold starts holding that stream; `release()` delivers what
 * was queued in order (stopping again at an event another active hold matches); `expire()` drops it
 * and ends the stream with an in-stream `ERROR 410 Expired`, after which the client relists and sees
 * only the current state (the unobserved-state fault).
 */
import { parseKey, type KubeObject, type ObjectKey } from '../src/model/object-key.js';
import type { WatchEventStage } from './watch-relay.js';
import type { RelayedWatchEvent } from './watch-lines.js';

export interface WatchHoldSelector {
  /** Hold the events of this object... */
  key?: ObjectKey;
  /** ...or of every object of this kind. */
  kind?: string;
}

/** A watch stream as the holds see it. */
export interface HoldableStream {
  readonly id: number;
  readonly alive: boolean;
  /** Ends the stream with this event now (dropping what the stages still hold). */
  endWith(event: RelayedWatchEvent): void;
}

export const EXPIRED_MESSAGE = 'The resourceVersion for the provided watch is too old.';

export function expiredStatus(): KubeObject {
  return { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: EXPIRED_MESSAGE, reason: 'Expired', code: 410 };
}

/** What expiring a hold did. */
export interface ExpiredHold {
  streams: number[];
  droppedEvents: number;
  /** Stream id -> the newest resourceVersion among the events dropped from it. */
  newestDropped: Map<number, string>;
}

/** The newest of some resourceVersions (the numeric ones kube-apiserver and the embedded cluster give); undefined if none is numeric. */
export function newestResourceVersion(versions: Iterable<string | undefined>): string | undefined {
  let newest: bigint | undefined;
  for (const v of versions) {
    if (v === undefined || !/^\d+$/.test(v)) continue;
    const n = BigInt(v);
    if (newest === undefined || n > newest) newest = n;
  }
  return newest?.toString();
}

interface Queued {
  event: RelayedWatchEvent;
  next: (event: RelayedWatchEvent) => void;
}

class HeldStream {
  readonly queue: Queued[] = [];
  heldBy: WatchHold | undefined;

  constructor(
    readonly stream: HoldableStream,
    private readonly registry: WatchHolds,
  ) {}

  readonly stage: WatchEventStage = (event, next) => {
    if (this.heldBy || this.queue.length > 0) {
      this.queue.push({ event, next });
      return;
    }
    const hold = this.registry.matching(event);
    if (!hold) {
      next(event);
      return;
    }
    this.queue.push({ event, next });
    hold.adopt(this);
  };

  /** Delivers the queue in order until an event that another active hold matches. */
  flush(): void {
    this.heldBy = undefined;
    while (this.queue.length > 0) {
      const { event, next } = this.queue[0]!;
      const hold = this.registry.matching(event);
      if (hold) {
        hold.adopt(this);
        return;
      }
      this.queue.shift();
      next(event);
    }
  }

  /** Ends the stream with 410 Expired; returns how many events it dropped and the newest resourceVersion among them. */
  expire(): { dropped: number; newestDropped: string | undefined } {
    const droppedEvents = this.queue.filter((q) => q.event.type !== undefined && q.event.type !== 'BOOKMARK').map((q) => q.event);
    this.queue.length = 0;
    this.heldBy = undefined;
    this.stream.endWith({
      raw: Buffer.from(JSON.stringify({ type: 'ERROR', object: expiredStatus() }) + '\n'),
      type: 'ERROR',
      object: expiredStatus(),
    });
    return { dropped: droppedEvents.length, newestDropped: newestResourceVersion(droppedEvents.map((e) => e.resourceVersion)) };
  }
}

export class WatchHold {
  readonly streams = new Set<HeldStream>();
  private active = true;
  private heldEvents = 0;

  constructor(
    readonly selector: WatchHoldSelector,
    private readonly registry: WatchHolds,
    private readonly onFirstHeld?: (streamId: number, event: RelayedWatchEvent) => void,
  ) {}

  get isActive(): boolean {
    return this.active;
  }

  /** Request ids of the streams this hold has held. */
  get streamIds(): number[] {
    return [...this.streams].map((s) => s.stream.id);
  }

  /** Events queued on the streams this hold holds. */
  get queuedEvents(): number {
    let n = 0;
    for (const s of this.streams) n += s.queue.length;
    return n;
  }

  get everHeld(): number {
    return this.heldEvents;
  }

  matches(event: RelayedWatchEvent): boolean {
    if (!this.active || !event.key || event.type === 'BOOKMARK' || event.type === 'ERROR') return false;
    if (this.selector.key !== undefined && event.key !== this.selector.key) return false;
    if (this.selector.kind !== undefined && parseKey(event.key)?.kind !== this.selector.kind) return false;
    return true;
  }

  adopt(stream: HeldStream): void {
    stream.heldBy = this;
    this.heldEvents++;
    const first = !this.streams.has(stream);
    this.streams.add(stream);
    if (first) this.onFirstHeld?.(stream.stream.id, stream.queue[0]!.event);
  }

  /** Stops holding and delivers every held stream's queue in order. */
  release(): void {
    if (!this.active) return;
    this.active = false;
    this.registry.remove(this);
    for (const s of [...this.streams]) if (s.heldBy === this && s.stream.alive) s.flush();
  }

  /**
   * Stops holding; every stream this hold holds is ended with an in-stream 410 Expired (what it
   * queued is dropped). Returns the ids of the streams ended, how many events were dropped, and for
   * each ended stream the newest resourceVersion it dropped (a real server's 410 means the history
   * up to there is gone: a re-watch from before it must be refused too).
   */
  expire(): ExpiredHold {
    const ended: number[] = [];
    const newestDropped = new Map<number, string>();
    let dropped = 0;
    this.active = false;
    this.registry.remove(this);
    for (const s of [...this.streams]) {
      if (s.heldBy !== this || !s.stream.alive) continue;
      const result = s.expire();
      dropped += result.dropped;
      ended.push(s.stream.id);
      if (result.newestDropped !== undefined) newestDropped.set(s.stream.id, result.newestDropped);
    }
    return { streams: ended, droppedEvents: dropped, newestDropped };
  }
}

export class WatchHolds {
  private readonly holds: WatchHold[] = [];

  get activeCount(): number {
    return this.holds.length;
  }

  hold(selector: WatchHoldSelector, onFirstHeld?: (streamId: number, event: RelayedWatchEvent) => void): WatchHold {
    if (selector.key === undefined && selector.kind === undefined) throw new Error('a watch hold needs a key or a kind');
    const h = new WatchHold(selector, this, onFirstHeld);
    this.holds.push(h);
    return h;
  }

  /** The stage for one stream. */
  stageFor(stream: HoldableStream): WatchEventStage {
    return new HeldStream(stream, this).stage;
  }

  matching(event: RelayedWatchEvent): WatchHold | undefined {
    // A loop, not find(): this runs per event and stream, and a closure per call is garbage.
    for (let i = 0; i < this.holds.length; i++) if (this.holds[i]!.matches(event)) return this.holds[i];
    return undefined;
  }

  remove(hold: WatchHold): void {
    const i = this.holds.indexOf(hold);
    if (i >= 0) this.holds.splice(i, 1);
  }
}
