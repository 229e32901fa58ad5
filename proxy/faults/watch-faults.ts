/**
 * Faults on watch delivery: holding a key's or a kind's watch events (the holds themselves are
 * ../watch-holds.ts), the unobserved-state fault (hold from one change, expire at another), and
 * watch-end (end the controller's watch streams of a kind; with `expire`, answer its resumed watch
 * 410 Expired). Also tracks which resources the controller must relist after an expiry, which
 * the coordinator's quiet detection reads.
 */
import { describeChange, describeWatchEnd, type HoldUntilFault, type WatchEndFault } from '../../src/model/plan.js';
import type { FaultEvent } from '../../src/model/trace.js';
import { isFoldedKey } from '../../src/model/generated-names.js';
import type { Exchange, RequestPlan } from '../exchange.js';
import { WatchHolds, type WatchHold, type WatchHoldSelector } from '../watch-holds.js';
import type { WatchEventStage } from '../watch-relay.js';
import { faultIndexField, type FaultContext } from './context.js';
import type { ConnectionFaults } from './delays-disconnects.js';
import type { ArmedTrigger, TriggerBoard } from './triggers.js';

export interface HoldUntilState {
  /** armed -> holding (from matched) -> expired (until matched, held streams ended with 410). */
  readonly state: 'armed' | 'holding' | 'expired';
  /** Streams that were ended with 410 Expired. */
  readonly expiredStreams: number[];
  /** Did the fault change what the controller saw (some stream held and expired)? */
  readonly injected: boolean;
  /** The cancelling change did not come in time and the hold was expired anyway (recorded in the trace). */
  readonly timedOut: boolean;
  /** Why the change it waits for (`from` while armed, `until` while holding) has not come, from what came closest. */
  whyNotFired(): string | undefined;
}

/** How long a hold-until fault holds at most when its cancelling change does not come. */
export const DEFAULT_MAX_HOLD_MS = 10_000;

/** How long a hold-until whose cancelling change came first waits for a controller stream to deliver the change it holds from. */
const UNTIL_BEFORE_HELD_MS = 2_000;

/**
 * A watch that resumes from a resourceVersion, which can be too old: one that has a resourceVersion
 * other than "0" and does not ask for `sendInitialEvents` (a WatchList watch's resourceVersion is a
 * lower bound, never too old, and its validation comes first upstream).
 */
function resumesFrom(query: Record<string, string>): boolean {
  const rv = query.resourceVersion ?? '';
  return rv !== '' && rv !== '0' && query.sendInitialEvents === undefined;
}

export class WatchFaults {
  private readonly holds = new WatchHolds();
  /** watch-end with expire: kinds whose next watch is answered 410 Expired (the resumed watch's resourceVersion is "too old"). */
  private readonly expireNextWatch = new Map<string, number | undefined>();
  /** Watch stream id -> its resource (`group/resource`), and the resources expired streams await a new watch of. */
  private readonly watchResource = new Map<number, string>();
  private readonly awaitingRelist = new Set<string>();
  /** Watch requests answered 410 Expired by a fault (they do not end awaitingRelist). */
  private readonly expiredWatches = new Set<number>();
  /**
   * Resource (`group/resource`) -> the newest resourceVersion an expired hold dropped, and the fault
   * that dropped it: a watch from an older resourceVersion is answered 410 Expired, as kube-apiserver
   * answers a watch from a compacted resourceVersion. Without it a client that re-watches from its
   * last resourceVersion after a 410 (the official Python client's `Watch().stream` does, once) is
   * served the history the fault hid.
   */
  private readonly expiredBelow = new Map<string, { resourceVersion: bigint; fault: FaultEvent['fault']; faultIndex: number | undefined }>();

  constructor(
    private readonly ctx: FaultContext,
    private readonly triggers: TriggerBoard,
    private readonly connections: ConnectionFaults,
  ) {}

  /** Watch holds hiding events from the controller right now. */
  get holdsInPlace(): number {
    return this.holds.activeCount;
  }

  /** Resources whose watch was expired and that the controller has not watched again since. */
  get awaitingRelistCount(): number {
    return this.awaitingRelist.size;
  }

  /** A new controller process lists everything afresh. */
  forgetRelists(): void {
    this.awaitingRelist.clear();
  }

  /** A watch of `resource` (`group/resource`) opened as stream `id`: a relist of it if it was expired. */
  watchOpened(id: number, resource: string): void {
    this.watchResource.set(id, resource);
    // A re-watch answered 410 Expired is not the controller watching again: it relists first.
    if (!this.expiredWatches.delete(id)) this.awaitingRelist.delete(resource);
  }

  /** The delivery stage that holds a stream's events while a hold selects them. */
  stageFor(stream: Parameters<WatchHolds['stageFor']>[0]): WatchEventStage {
    return this.holds.stageFor(stream);
  }

  /**
   * A resumed watch of a kind a watch-end fault expires is answered 410 Expired, and so is a watch
   * from a resourceVersion older than what an expired hold dropped.
   */
  planExpiredWatch(ex: Exchange): RequestPlan | undefined {
    return this.planWatchEndExpiry(ex) ?? this.planCompactedWatch(ex);
  }

  private planCompactedWatch(ex: Exchange): RequestPlan | undefined {
    const f = ex.facts!;
    const from = f.query.resourceVersion ?? '';
    if (!f.isWatch || !f.resource || !resumesFrom(f.query) || !/^\d+$/.test(from)) return undefined;
    const floor = this.expiredBelow.get(`${f.resource.group}/${f.resource.resource}`);
    if (!floor || BigInt(from) >= floor.resourceVersion) return undefined;
    this.expiredWatches.add(ex.id);
    this.ctx.record({
      fault: floor.fault,
      phase: 'expired',
      requestId: ex.id,
      ...faultIndexField(floor.faultIndex),
      detail: `answered the controller's re-watch of ${f.resource.resource} from resourceVersion ${from} with 410 Expired: the fault dropped events up to ${floor.resourceVersion}; it relists`,
    });
    return { expireWatch: true };
  }

  private planWatchEndExpiry(ex: Exchange): RequestPlan | undefined {
    const f = ex.facts!;
    if (!(f.isWatch && f.resource?.kind && this.expireNextWatch.has(f.resource.kind) && resumesFrom(f.query))) return undefined;
    // Only a resumed watch (from a resourceVersion) can be too old; a fresh one is answered live.
    const faultIndex = this.expireNextWatch.get(f.resource.kind);
    this.expireNextWatch.delete(f.resource.kind);
    this.expiredWatches.add(ex.id);
    this.ctx.record({
      fault: 'watch-end',
      phase: 'expired',
      requestId: ex.id,
      ...faultIndexField(faultIndex),
      detail: `answered the controller's re-watch of ${f.resource.kind} from resourceVersion ${f.query.resourceVersion} with 410 Expired; it relists`,
    });
    return { expireWatch: true };
  }

  /**
   * watch-end: when `fault.at` fires, end the controller's open watch streams of `fault.kind`
   * (cleanly or with a reset); with `expire`, its next resumed watch of that kind gets 410 Expired.
   */
  armWatchEnd(fault: WatchEndFault, faultIndex?: number, onFired: (streams: number[]) => void = () => {}): ArmedTrigger {
    return this.triggers.arm(fault.at, () => {
      const idx = faultIndex !== undefined ? { faultIndex } : {};
      this.ctx.record({ fault: 'watch-end', phase: 'triggered', ...idx, detail: describeWatchEnd(fault) });
      if (fault.expire) this.expireNextWatch.set(fault.kind, faultIndex);
      const { streams } = this.connections.disconnect({ target: 'watches', mode: fault.mode === 'close' ? 'graceful' : 'reset', kind: fault.kind });
      // The run has not settled until the controller watches that kind again (client-go backs off
      // for about a second before it re-watches or relists): a quiet controller meanwhile is blind.
      for (const id of streams) {
        const resource = this.watchResource.get(id);
        if (resource !== undefined) this.awaitingRelist.add(resource);
      }
      onFired(streams);
    });
  }

  /** Holds the controller's watch delivery for a key or a kind (see watch-holds.ts). */
  hold(selector: WatchHoldSelector, fault: FaultEvent['fault'] = 'watch-hold', faultIndex?: number, onStreamHeld?: () => void): WatchHold {
    const what = selector.key ?? `kind ${selector.kind}`;
    const hold = this.holds.hold(selector, (streamId, event) => {
      this.ctx.record({
        fault,
        phase: 'held',
        streams: [streamId],
        ...(event.key ? { key: event.key } : {}),
        ...(faultIndex !== undefined ? { faultIndex } : {}),
        detail: `holding watch stream ${streamId} from ${event.type} ${event.key} (resourceVersion ${event.resourceVersion})`,
      });
      onStreamHeld?.();
    });
    const release = hold.release.bind(hold);
    const expire = hold.expire.bind(hold);
    hold.release = () => {
      const streams = hold.streamIds;
      const queued = hold.queuedEvents;
      release();
      this.ctx.record({
        fault,
        phase: 'released',
        streams,
        ...(selector.key ? { key: selector.key } : {}),
        ...(faultIndex !== undefined ? { faultIndex } : {}),
        detail: `released ${queued} held event(s) of ${what} in order`,
      });
    };
    hold.expire = () => {
      const result = expire();
      for (const id of result.streams) {
        const resource = this.watchResource.get(id);
        if (resource !== undefined) this.awaitingRelist.add(resource);
        const dropped = result.newestDropped.get(id);
        if (resource === undefined || dropped === undefined) continue;
        const floor = this.expiredBelow.get(resource);
        if (!floor || BigInt(dropped) > floor.resourceVersion) this.expiredBelow.set(resource, { resourceVersion: BigInt(dropped), fault, faultIndex });
      }
      this.ctx.record({
        fault,
        phase: 'expired',
        streams: result.streams,
        ...(selector.key ? { key: selector.key } : {}),
        ...(faultIndex !== undefined ? { faultIndex } : {}),
        detail: `ended ${result.streams.length} held stream(s) with an in-stream 410 Expired, dropping ${result.droppedEvents} event(s); the controller relists`,
      });
      return result;
    };
    return hold;
  }

  /**
   * Unobserved state: from the change `from` on, hold the controller's watch events of `key`; once
   * the change `until` has happened, end the held streams with an in-stream 410 Expired so the
   * controller relists and never sees the states in between.
   */
  armHoldUntil(
    fault: HoldUntilFault,
    faultIndex?: number,
    callbacks: { onHeld?: () => void; onExpired?: (streams: number[]) => void; onTimedOut?: () => void } = {},
    /**
     * If `until` has not happened this long after `from`, expire the hold anyway (the controller
     * relists) and count the fault as not injected: `until` probably waits for the controller to
     * act on what is held, and holding on would only fail the workload.
     */
    maxHoldMs = DEFAULT_MAX_HOLD_MS,
  ): HoldUntilState {
    let state: HoldUntilState['state'] = 'armed';
    let hold: WatchHold | undefined;
    let expiredStreams: number[] = [];
    let timedOut = false;
    let timer: NodeJS.Timeout | undefined;
    // `until` came before the controller's stream delivered `from` (the cluster view runs ahead of
    // the streams): expire once a stream is held, so that the hold hides something (bounded).
    let expireWhenHeld = false;
    const idx = faultIndex !== undefined ? { faultIndex } : {};
    const expire = () => {
      if (!hold || state === 'expired') return;
      if (timer) clearTimeout(timer);
      expiredStreams = hold.expire().streams;
      state = 'expired';
      callbacks.onExpired?.(expiredStreams);
    };
    const fromArmed = this.triggers.arm({ change: fault.from }, (info) => {
      state = 'holding';
      // A folded key (`<prefix>*#<n>`) names no watch event: hold the object the change was of.
      hold = this.hold({ key: isFoldedKey(fault.key) && info.key ? info.key : fault.key }, 'hold-until', faultIndex, () => {
        if (expireWhenHeld) queueMicrotask(expire);
      });
      this.ctx.record({
        fault: 'hold-until',
        phase: 'triggered',
        key: fault.key,
        ...idx,
        ...(info.resourceVersion ? { resourceVersion: info.resourceVersion } : {}),
        detail: `${describeChange(fault.from)}: holding the controller's events of ${fault.key}`,
      });
      callbacks.onHeld?.();
      timer = setTimeout(() => {
        if (state !== 'holding') return;
        timedOut = true;
        callbacks.onTimedOut?.();
        this.ctx.record({
          fault: 'hold-until',
          phase: 'not-injected',
          key: fault.key,
          ...idx,
          detail: `${describeChange(fault.until)} did not happen within ${maxHoldMs / 1000} s of holding: expiring the hold anyway`,
        });
        expire();
      }, maxHoldMs);
      timer.unref();
    });
    const untilArmed = this.triggers.arm({ change: fault.until }, () => {
      if (hold && hold.everHeld === 0 && state === 'holding') {
        expireWhenHeld = true;
        setTimeout(expire, UNTIL_BEFORE_HELD_MS).unref();
        return;
      }
      expire();
    });
    return {
      get state() {
        return state;
      },
      get expiredStreams() {
        return expiredStreams;
      },
      get injected() {
        return state === 'expired' && !timedOut && expiredStreams.length > 0;
      },
      get timedOut() {
        return timedOut;
      },
      whyNotFired: () => (state === 'armed' ? fromArmed.whyNotFired() : state === 'holding' ? untilArmed.whyNotFired() : undefined),
    };
  }
}
