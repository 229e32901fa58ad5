/**
 * The quiet window a controller's runs settle on, learned from its reference runs. A run has settled
 * when the controller has been quiet (nothing in flight, nothing delivered) for `quietMs`; the
 * default (1 s) must cover any controller, so every plan waits a whole second several times (at the
 * controller's start, after the workload, after a restart) although most controllers, once they
 * fall silent for a few tens of milliseconds, make no further request.
 *
 * What the window must cover is the longest a controller stays silent and then, with nothing new
 * shown to it, makes another request: its processing between two writes, a short requeue, an
 * error back-off. A silence that a watch event ends is not one: something else woke it. So over
 * the reference traces: each silence before a request of the controller (from its last request,
 * answer or watch event, in the same process), shorter than the configured window (longer ones
 * already fall outside it: the reference runs settled across them). The learned window is
 * QUIET_WINDOW_FACTOR times the longest, at least QUIET_WINDOW_FLOOR_MS, at most the configured one.
 * Leader-election renewals (bookkeeping kinds) and watch bookmarks are not activity, as in settle.
 *
 * Except where the controller let UNANSWERED_CHANGES changes of a custom resource's spec go by
 * without a request: the later ones woke nothing (it was busy: percona-server-mongodb-operator's
 * 10-20 s mongod dial, during which each step's patch reached it), so the silence runs from the
 * first. Measured from the last of them, the dial showed only its remainder (4.5 s of 10 s), and
 * the window sized from it stayed shorter than the dial. Not from its last request: that may be
 * long before the first change (an idle controller's watch), and the window itself would be measured
 * (a run that settles on W before the changes would show W more each time). From the first change,
 * a silence outlasts the window exactly when a settle that began at that change ended before the
 * write, so sizing stops once the window covers the busy spell.
 *
 * A silence as long as the configured window that ends in a write (`pastWindow`) shows the window
 * too short: a settle that began in it would have ended, and the end state been read, before that
 * write. Learning cannot lengthen the window, so the campaign warns of it (src/campaign/quiet-window.ts).
 */
import { isBookkeepingKey } from '../src/model/bookkeeping.js';
import { WRITE_VERBS } from '../src/model/api-path.js';
import type { RequestEvent, TraceEvent } from '../src/model/trace.js';
import { isObject } from '../src/model/object-key.js';

/** A silence of at least the configured window, and the write that ended it. */
export interface SilenceBeforeWrite {
  ms: number;
  request: RequestEvent;
  /** The spec changes it let go by in the silence (it runs from the first of them; see above), if any. */
  unanswered?: number;
}

export const QUIET_WINDOW_FACTOR = 3;
export const QUIET_WINDOW_FLOOR_MS = 250;

/**
 * A silence that the run's end cut short: from the controller's last request to the end of its
 * trace, while it was shown `changes` (at least UNANSWERED_CHANGES) changes of a custom resource's
 * spec and sent nothing at all, not even a read. Either it was still busy (percona-server-mongodb-
 * operator sits 10-20 s in a dial to a mongod no cluster runs, and a run alone on the default window
 * ends inside it, never showing the silence-then-write that sizes the window) or it is stuck for
 * good (a bug: the version-rollback example's operator after a bad version). The trace cannot tell
 * which, so the campaign warns (src/campaign/quiet-window.ts) and sizes nothing from it (sizing the
 * window on it made the stuck example's runs settle on 27 s); learn's runs wait for such a
 * controller's next request instead (src/coordinator/unanswered.ts), which a busy one sends.
 */
export interface UnfinishedSilence {
  ms: number;
  changes: number;
}

/** How many spec changes a controller must have let go by without a request for its silence to count as unfinished. */
const UNANSWERED_CHANGES = 2;

/** A custom resource's group: with a dot, and not one of Kubernetes' own (`*.k8s.io`). */
function isCustomGroup(apiVersion: unknown): boolean {
  if (typeof apiVersion !== 'string' || !apiVersion.includes('/')) return false;
  const group = apiVersion.slice(0, apiVersion.indexOf('/'));
  return group.includes('.') && !group.endsWith('.k8s.io');
}

/**
 * The changes of a custom resource's spec (its generation going up, in an ADDED or MODIFIED watch
 * event) shown to a controller since its last request, leader-election renewals aside: what makes a
 * silence unfinished. Fed from a trace (SilenceMeter) or live, as the proxy records the controller
 * trace (src/coordinator/unanswered.ts).
 */
export class SpecChangesSinceRequest {
  /** The generation each custom resource's events showed last. */
  private readonly generations = new Map<string, number>();
  /** Spec changes shown since the controller's last request. */
  count = 0;
  /** When that request was (undefined: none yet, or none since the controller's start). */
  lastRequestTs: number | undefined;
  /** When the first of the spec changes since it was shown (undefined: none). */
  firstChangeTs: number | undefined;

  /** The controller (re)started: nothing shown to it is unanswered yet. */
  restart(): void {
    this.count = 0;
    this.lastRequestTs = undefined;
    this.firstChangeTs = undefined;
  }

  /** A request of the controller at `ts` (leader-election renewals are no answer and are skipped). */
  request(key: string | undefined, ts: number): void {
    if (key !== undefined && isBookkeepingKey(key)) return;
    this.count = 0;
    this.lastRequestTs = ts;
    this.firstChangeTs = undefined;
  }

  /** A watch event delivered to the controller at `ts`. */
  watchEvent(eventType: string, key: string | undefined, object: unknown, ts: number): void {
    if (key === undefined || (eventType !== 'ADDED' && eventType !== 'MODIFIED') || !isObject(object)) return;
    const generation = isObject(object.metadata) ? object.metadata.generation : undefined;
    if (!isCustomGroup(object.apiVersion) || typeof generation !== 'number') return;
    const before = this.generations.get(key);
    if (before !== undefined && generation > before && this.lastRequestTs !== undefined && this.count++ === 0) this.firstChangeTs = ts;
    this.generations.set(key, generation);
  }

  /** At least UNANSWERED_CHANGES changes were shown since the last request. */
  get unanswered(): boolean {
    return this.lastRequestTs !== undefined && this.count >= UNANSWERED_CHANGES;
  }
}

/** Fed one controller trace in order: the longest silence before a request, below a cap. */
export class SilenceMeter {
  private readonly incarnationOf = new Map<number, number>();
  private last: { ts: number; incarnation: number } | undefined;
  private longest = 0;
  private longestPastWindow: SilenceBeforeWrite | undefined;
  private readonly changes = new SpecChangesSinceRequest();
  private endTs = 0;

  constructor(private readonly capMs: number) {}

  add(e: TraceEvent): void {
    this.endTs = Math.max(this.endTs, e.ts);
    if (e.type === 'controller' && e.action === 'start') this.changes.restart();
    if (e.type === 'watch-event') this.changes.watchEvent(e.eventType, e.key, e.object, e.ts);
    if (e.type === 'request') {
      if (e.key !== undefined && isBookkeepingKey(e.key)) return;
      // The spec changes it let go by after the first did not wake it: the silence runs from the first.
      const unanswered = this.changes.unanswered ? this.changes.count : undefined;
      const busySince = unanswered !== undefined ? this.changes.firstChangeTs : undefined;
      this.changes.request(e.key, e.ts);
      this.incarnationOf.set(e.id, e.incarnation);
      if (this.last && this.last.incarnation === e.incarnation) {
        const silence = e.ts - (busySince ?? this.last.ts);
        if (silence < this.capMs) this.longest = Math.max(this.longest, silence);
        else if (WRITE_VERBS.has(e.verb) && silence > (this.longestPastWindow?.ms ?? -1))
          this.longestPastWindow = { ms: silence, request: e, ...(unanswered !== undefined ? { unanswered } : {}) };
      }
      this.last = { ts: e.ts, incarnation: e.incarnation };
    } else if (e.type === 'response' || (e.type === 'watch-event' && e.eventType !== 'BOOKMARK' && !(e.key !== undefined && isBookkeepingKey(e.key)))) {
      const incarnation = this.incarnationOf.get(e.id);
      if (incarnation !== undefined) this.last = { ts: e.ts, incarnation };
    }
  }

  /** The longest silence before a request, in ms (0: none seen). */
  result(): number {
    return this.longest;
  }

  /** The longest silence of at least the window (the cap) that a write of the controller ended, if any. */
  pastWindow(): SilenceBeforeWrite | undefined {
    return this.longestPastWindow;
  }

  /** The silence the trace ended in, when the controller let UNANSWERED_CHANGES spec changes go by in it without a request. */
  unfinished(): UnfinishedSilence | undefined {
    const { changes } = this;
    if (!changes.unanswered) return undefined;
    return { ms: this.endTs - changes.lastRequestTs!, changes: changes.count };
  }
}

/** The window for test runs, from each reference run's longest silence (see above). */
export function learnedQuietMs(longestSilences: readonly number[], configuredMs: number): number {
  const longest = Math.max(0, ...longestSilences);
  return Math.min(configuredMs, Math.max(QUIET_WINDOW_FLOOR_MS, Math.ceil(longest * QUIET_WINDOW_FACTOR)));
}

/**
 * How much longer than a measured silence-then-write a sized window is: a controller whose runs show
 * such silences (percona-server-mongodb-operator dials mongod for 10-20 s, silent, then writes the
 * CR's status) settles only after a quiet longer than the longest of them.
 */
export const SIZED_WINDOW_FACTOR = 1.25;

/** The window sized from a silence of `silenceMs` that ended in a write, at most the settle's timeout (a longer one could never be met). */
export function sizedQuietMs(silenceMs: number, timeoutMs: number): number {
  return Math.min(timeoutMs, Math.ceil(silenceMs * SIZED_WINDOW_FACTOR));
}
