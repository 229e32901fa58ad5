/**
 * Waiting out a controller that went silent while changes of its custom resource were shown to it.
 * A learn run settles when the controller has been quiet for the window; one that sits in a long
 * silent wait (percona-server-mongodb-operator dials a mongod no kperturb cluster runs, 10-20 s each)
 * is quiet too, and its run would end inside that wait, never showing the silence-then-write that
 * sizes the window (src/campaign/quiet-window.ts SizedSettleWindow). With `RunOptions.awaitAnswer`
 * such a run, once settled, goes on until the controller sends its next request (the wait ended: the
 * trace now shows the whole silence) or the settle timeout (it is stuck: a bug, or waiting on
 * something that never comes). The rule of "unanswered" is planner/quiet-window.ts's
 * (SpecChangesSinceRequest), applied live as the proxy records the controller trace.
 */
import { SpecChangesSinceRequest } from '../../planner/index.js';
import type { KubeObject, ObjectKey } from '../model/object-key.js';
import { watchDeliveryEvent, type SharedTextSlot, type TraceSink, type WatchEventType } from '../model/trace.js';
import { sleep } from '../workload/runner.js';

/** Between the proxy and the controller trace: the spec changes shown to the controller since its last request. */
export class UnansweredChanges {
  /** The sink to give the proxy in place of `inner`. */
  readonly sink: TraceSink;
  private readonly changes = new SpecChangesSinceRequest();

  constructor(inner: TraceSink) {
    const sink: TraceSink = {
      append: (event) => {
        if (event.type === 'request') this.changes.request(event.key, Date.now());
        else if (event.type === 'watch-event') this.changes.watchEvent(event.eventType, event.key, event.object, Date.now());
        return inner.append(event);
      },
    };
    const answer = inner.appendAnswer?.bind(inner);
    if (answer) sink.appendAnswer = answer;
    sink.appendWatchEvent = (
      id: number,
      eventType: WatchEventType,
      key: ObjectKey | undefined,
      resourceVersion: string | undefined,
      object: KubeObject,
      shared?: SharedTextSlot,
    ) => {
      this.changes.watchEvent(eventType, key, object, Date.now());
      return inner.appendWatchEvent
        ? inner.appendWatchEvent(id, eventType, key, resourceVersion, object, shared)
        : inner.append(watchDeliveryEvent(id, eventType, key, resourceVersion, object));
    };
    this.sink = sink;
  }

  /** The controller has let at least two spec changes go by since its last request: how long it has been silent, in ms; else undefined. */
  silentFor(now = Date.now()): number | undefined {
    return this.changes.unanswered ? now - this.changes.lastRequestTs! : undefined;
  }

  /**
   * Until the controller sends a request (true), exits, or `deadline` (ms since the epoch) passes
   * (false). Polled, as settle is: a request is at most 50 ms late to be seen.
   */
  async answered(deadline: number, running: () => boolean): Promise<boolean> {
    for (;;) {
      if (!this.changes.unanswered) return true;
      const now = Date.now();
      if (now >= deadline || !running()) return false;
      await sleep(Math.min(50, deadline - now));
    }
  }
}
