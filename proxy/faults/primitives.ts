/**
 * What the proxy offers the coordinator's fault modules (src/coordinator/faults/): the primitives,
 * grouped by what they act on, and the request path as an ordered list of interceptors.
 *
 * - `triggers`: arm a write or change trigger, mark the resourceVersion of a change, resolve a plan's
 *   folded key of a generated name to this run's object (triggers.ts);
 * - `holdController` / `holdAfterWrite`: hold everything of the controller (its connection epoch),
 *   now or right after a write completes upstream, until the coordinator has killed it;
 * - `watches`: hold a key's or a kind's watch events, hold-until-then-expire, end a kind's watches
 *   (watch-faults.ts);
 * - `staleViews`: serve the current controller a view frozen at a resourceVersion (stale-views.ts);
 * - `apiErrors`: answer the n-th matching write request with an error, a lost or a slow answer;
 * - `connections`: latency for a class of requests, closing or resetting watches and connections.
 *
 * A fault kind that needs a new trick on the wire adds a primitive here (and, if it changes how a
 * request is answered, an interceptor to the proxy's list); the others only combine these.
 */
import type { WriteTrigger } from '../../src/model/plan.js';
import type { Exchange, RequestPlan } from '../exchange.js';
import type { StaleView } from '../stale-view.js';
import type { ApiErrorFaults } from './api-error-fault.js';
import type { CrashTriggered } from './crash-after-write.js';
import type { ConnectionFaults } from './delays-disconnects.js';
import type { ArmedTrigger, TriggerBoard } from './triggers.js';
import type { WatchFaults } from './watch-faults.js';

export interface FaultPrimitives {
  readonly triggers: Pick<TriggerBoard, 'arm' | 'markChange' | 'keys'>;
  /** Holds everything of the current controller (its epoch) until the next epoch starts. */
  holdController(): void;
  /** Right after the matching write completes upstream, holds the controller that made it (see crash-after-write.ts). */
  holdAfterWrite(trigger: WriteTrigger, onHeld: (info: CrashTriggered) => void, faultIndex?: number): ArmedTrigger;
  readonly watches: Pick<WatchFaults, 'hold' | 'armHoldUntil' | 'armWatchEnd'>;
  readonly staleViews: {
    /**
     * Serves the current epoch's controller (start it after this) a view frozen at `resourceVersion`
     * (see stale-view.ts) until the returned view is released; with `kinds`, only those kinds'
     * lists and watches are frozen.
     */
    serve(resourceVersion: string, faultIndex?: number, kinds?: readonly string[]): StaleView;
    /** Why what the views served went beyond the API contract, once per reason (empty: it stayed within). */
    beyondContract(): string[];
  };
  readonly apiErrors: Pick<ApiErrorFaults, 'arm'>;
  readonly connections: Pick<ConnectionFaults, 'addDelay' | 'disconnect'>;
}

/**
 * One step of the request path: how `ex` is answered, given how the steps after it would answer it
 * (`next`; a step that answers the request itself does not call it).
 */
export type RequestInterceptor = (ex: Exchange, body: Buffer, next: () => RequestPlan | undefined) => RequestPlan | undefined;

/** The request path: each interceptor in turn, the first one outermost (undici's `compose`). */
export function composeInterceptors(interceptors: readonly RequestInterceptor[]): (ex: Exchange, body: Buffer) => RequestPlan | undefined {
  return (ex, body) => {
    const step = (i: number): RequestPlan | undefined => (i < interceptors.length ? interceptors[i]!(ex, body, () => step(i + 1)) : undefined);
    return step(0);
  };
}
