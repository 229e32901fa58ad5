/**
 * Serialized delivery, the causality learning mode: watch events reach the controller one at a time,
 * across all its streams, in the order they came from the API server; after each, the proxy waits
 * until the controller is quiet (no request in flight, none started or finished for `quietMs`, and
 * at least CACHE_SYNC_POLL_MS more after a watch it opened in the episode) before it delivers the
 * next. Each delivered event opens an `episode` in the trace; every request the controller makes
 * before the episode ends is most likely its reaction to that event (or to earlier ones), which is
 * the causality signal the planner uses.
 *
 * A controller that repeats a write the API server refuses (an update or status patch with its
 * cached resourceVersion, 409 each time) is waiting for news only the next events bring (often the
 * echo of its own write, queued behind the episode), so the episode ends once it has made the same
 * refused write RETRY_LOOP_ROUNDS times with no write succeeding in between (`retrying` on the
 * episode's end): decommission's first reference run spent 11 of its 28 s in such 2 s episodes.
 * The episode is not quiet, but the planner closes its window there as after a quiet one
 * (planner/analysis/delivery.ts): the controller has done all this event makes it do.
 *
 * Only ADDED/MODIFIED/DELETED events open episodes; BOOKMARKs, ERRORs and stream ends keep their
 * place in the order but pass without waiting.
 */
import type { TraceSink } from '../src/model/trace.js';
import type { PassOn, WatchEventStage } from './watch-relay.js';
import type { RelayedWatchEvent } from './watch-lines.js';
import { RETRY_LOOP_ROUNDS } from '../src/model/retry-loop.js';

export interface SerializeDeliveryOptions {
  /** How long the controller must be quiet after an event before the next one is delivered. */
  quietMs: number;
  /** An episode ends after this long even if the controller is still busy (default 10 x quietMs, at least 2 s). */
  maxEpisodeMs?: number;
  /**
   * The clock quiet and episode length are measured on, in milliseconds (default Date.now). Tests
   * pass a manual clock, so that an episode ends once they have seen the controller's reaction, however
   * long a loaded machine takes to produce it.
   */
  now?: () => number;
}

/** What the serializer needs to know about the controller's requests. */
export interface RequestActivity {
  /** Non-watch requests in flight. */
  inFlight: number;
  /** When the last non-watch request started or finished, or a watch opened, on the serializer's clock. */
  lastRequestAt: number;
  /** Requests started so far (a counter). */
  requestsStarted: number;
  /** Watches opened so far (a counter), and when the last one was, on the serializer's clock. */
  watchesStarted: number;
  lastWatchStartedAt: number;
}

/**
 * client-go's WaitForCacheSync looks at a new informer every 100 ms (syncedPollPeriod). A controller
 * that opens a watch in reaction to an event (controller-runtime's cache starts an informer on the
 * first read of a kind, and the read waits for it to sync) may stay silent that long before it goes
 * on: under load it did, and the episode ended before the writes the event caused.
 */
export const CACHE_SYNC_POLL_MS = 100;

interface Pending {
  streamId: number;
  alive: () => boolean;
  event: RelayedWatchEvent;
  next: PassOn;
}

export class DeliverySerializer {
  private readonly queue: Pending[] = [];
  private pumping = false;
  private episodes = 0;
  private stopped = false;
  private readonly maxEpisodeMs: number;
  private readonly now: () => number;
  /** The episode's refused writes (signature and status -> times) since its last successful write. */
  private readonly refused = new Map<string, number>();
  private retrying = false;

  constructor(
    private readonly options: SerializeDeliveryOptions,
    private readonly activity: () => RequestActivity,
    private readonly trace: TraceSink,
  ) {
    this.maxEpisodeMs = options.maxEpisodeMs ?? Math.max(2000, options.quietMs * 10);
    this.now = options.now ?? Date.now;
  }

  get episodeCount(): number {
    return this.episodes;
  }

  /** Events waiting for their turn. */
  get backlog(): number {
    return this.queue.length;
  }

  stageFor(streamId: number, alive: () => boolean): WatchEventStage {
    return (event, next) => {
      this.queue.push({ streamId, alive, event, next });
      void this.pump();
    };
  }

  stop(): void {
    this.stopped = true;
  }

  /** One of the controller's requests (not a watch) was answered; see `retrying` above. */
  answered(signature: string, status: number, write: boolean): void {
    if (!write) return;
    if (status < 400) {
      this.refused.clear();
      return;
    }
    const what = `${signature} ${status}`;
    const times = (this.refused.get(what) ?? 0) + 1;
    this.refused.set(what, times);
    if (times >= RETRY_LOOP_ROUNDS) this.retrying = true;
  }

  private async pump(): Promise<void> {
    if (this.pumping) return;
    this.pumping = true;
    try {
      while (this.queue.length > 0 && !this.stopped) {
        const item = this.queue.shift()!;
        if (!item.alive()) continue;
        const { event } = item;
        const opensEpisode = event.type === 'ADDED' || event.type === 'MODIFIED' || event.type === 'DELETED';
        if (!opensEpisode) {
          item.next(event);
          continue;
        }
        const { requestsStarted: before, watchesStarted } = this.activity();
        const deliveredAt = this.now();
        this.refused.clear();
        this.retrying = false;
        const watchEventSeq = item.next(event);
        const index = ++this.episodes;
        this.trace.append({
          type: 'episode',
          phase: 'start',
          index,
          id: item.streamId,
          ...(watchEventSeq !== undefined ? { watchEventSeq } : {}),
          ...(event.key ? { key: event.key } : {}),
          eventType: event.type!,
          ...(event.resourceVersion !== undefined ? { resourceVersion: event.resourceVersion } : {}),
        });
        const ended = await this.waitQuiet(deliveredAt, watchesStarted);
        const requests = this.activity().requestsStarted - before;
        this.trace.append({
          type: 'episode',
          phase: 'end',
          index,
          id: item.streamId,
          quiet: ended === 'quiet',
          ...(ended === 'retrying' ? { retrying: true } : {}),
          requests,
        });
      }
    } finally {
      this.pumping = false;
    }
  }

  /**
   * The end of one event's episode. Not the run's quiet (src/coordinator/settle.ts, `isQuiet`): the
   * serializer is the backlog that notion waits on, holds are not armed while learning, and only the
   * controller's requests count (its own deliveries are what the episode measures from).
   * `watchesBefore`: the watches opened before the episode (those opened in it extend it).
   */
  private async waitQuiet(deliveredAt: number, watchesBefore: number): Promise<'quiet' | 'retrying' | 'timeout'> {
    const { quietMs } = this.options;
    const deadline = deliveredAt + this.maxEpisodeMs;
    const tick = Math.max(2, Math.min(20, Math.floor(quietMs / 5)));
    for (;;) {
      if (this.stopped) return 'timeout';
      const a = this.activity();
      const now = this.now();
      const syncing = a.watchesStarted > watchesBefore ? a.lastWatchStartedAt + CACHE_SYNC_POLL_MS : -Infinity;
      if (a.inFlight === 0 && now - Math.max(deliveredAt, a.lastRequestAt, syncing) >= quietMs) return 'quiet';
      if (this.retrying) return 'retrying';
      if (now >= deadline) return 'timeout';
      await new Promise((r) => setTimeout(r, tick));
    }
  }
}
