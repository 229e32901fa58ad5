/**
 * A second door into the proxy for a warm spare controller: a process started ahead of a restart so
 * that the restart does not wait for the controller's own start-up (a Node controller spends about
 * 0.4 s loading its modules, a large Go operator longer, before its first request).
 *
 * The spare's kubeconfig points at this door's port. Connections through it go to the proxy's
 * server as any other (TLS, HTTP/2), but belong to the epoch the spare will have once it replaces
 * the controller, and every request on them is parked before the proxy looks at it: not classified,
 * not planned, not counted as activity, not in the trace. The spare, waiting for its first answer,
 * does nothing a cold-started process would not do either. When the coordinator starts the next
 * incarnation, the door opens and the parked requests are taken in the order they came, in the new
 * epoch, with whatever faults are then armed (a stale view included), as if the process had just
 * made them. Later connections through the door are ordinary ones.
 */
import net, { type Socket } from 'node:net';
import { Epoch } from './epoch.js';
import { listenOnLoopback } from '../src/kube/loopback-listen.js';

export class SpareDoor {
  private readonly parked: Array<() => void> = [];
  private isOpen = false;

  private constructor(
    private readonly listener: net.Server,
    /** The door's port on 127.0.0.1. */
    readonly port: number,
    /** The epoch of the process behind the door, once it is the controller. */
    readonly epoch: Epoch,
  ) {}

  /** Listens on a new loopback port and hands each connection to `server`, as if it had accepted it. */
  static async open(server: net.Server, epochNumber: number): Promise<SpareDoor> {
    const listener = net.createServer((socket) => {
      socket.setNoDelay(true);
      server.emit('connection', socket);
    });
    return new SpareDoor(listener, await listenOnLoopback(listener), new Epoch(epochNumber));
  }

  /** Did this connection come through the door? */
  owns(socket: Socket | undefined): boolean {
    return socket?.localPort === this.port;
  }

  /** Is a request on a connection of `epoch` to wait? */
  parks(epoch: Epoch): boolean {
    return !this.isOpen && epoch === this.epoch;
  }

  /** Keeps `work` (taking one request) until the door opens. */
  park(work: () => void): void {
    this.parked.push(work);
  }

  /** Requests waiting behind the door. */
  get waiting(): number {
    return this.parked.length;
  }

  /** Opens the door: the parked requests are taken in the order they came; later ones pass at once. */
  admit(): void {
    if (this.isOpen) return;
    this.isOpen = true;
    for (const work of this.parked.splice(0)) work();
  }

  /** Stops listening (connections already in stay until their epoch ends). */
  close(): void {
    this.listener.close();
  }
}
