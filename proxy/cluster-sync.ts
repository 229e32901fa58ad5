/**
 * Change triggers fire from the proxy's own watch of the cluster (the cluster view), while the
 * controller hears of the same change on its own streams; the two race. For a fault that must be in
 * place before the controller sees the change that triggers it (hold from change N, freeze the view
 * at a change), each controller watch event waits, in stream order, until the cluster view has seen
 * its resourceVersion: by then every change trigger up to that change has been evaluated. When no
 * change trigger is pending the stage costs nothing. The wait is bounded so that a broken view can
 * only delay events, never swallow them.
 */
import type { ClusterView } from '../src/recorder/cluster-recorder.js';
import type { WatchEventStage } from './watch-relay.js';
import type { RelayedWatchEvent } from './watch-lines.js';

export interface SyncedStream {
  alive: () => boolean;
  group: string;
  resource: string;
}

function rvOf(event: RelayedWatchEvent): number | undefined {
  if (event.type !== 'ADDED' && event.type !== 'MODIFIED' && event.type !== 'DELETED') return undefined;
  const n = Number(event.resourceVersion);
  return Number.isFinite(n) && n > 0 ? n : undefined;
}

export function clusterSyncStage(stream: SyncedStream, view: ClusterView, needed: () => boolean, timeoutMs = 2000): WatchEventStage {
  const queue: Array<{ event: RelayedWatchEvent; next: (e: RelayedWatchEvent) => void }> = [];
  let draining = false;
  const drain = async () => {
    if (draining) return;
    draining = true;
    try {
      while (queue.length > 0) {
        const { event, next } = queue[0]!;
        const rv = rvOf(event);
        if (rv !== undefined && needed()) await view.caughtUp(stream.group, stream.resource, rv, timeoutMs);
        queue.shift();
        if (stream.alive()) next(event);
      }
    } finally {
      draining = false;
    }
  };
  return (event, next) => {
    if (queue.length === 0 && (!needed() || rvOf(event) === undefined)) {
      next(event);
      return;
    }
    queue.push({ event, next });
    void drain();
  };
}
