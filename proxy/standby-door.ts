/**
 * A door for a controller started before its run's proxy exists (a standby: src/coordinator/standby.ts).
 *
 * A Node controller spends about 0.4 s loading its modules before its first request, a large Go
 * operator longer; a campaign that starts the next plan's controller while the current plan runs
 * saves that on every plan. But the next plan's cluster and proxy do not exist yet, so the standby's
 * kubeconfig points at this door instead: a loopback listener that accepts connections and leaves
 * them unread (paused on connect: not even the TLS handshake starts), so the standby waits for its
 * first answer exactly as a process that has not started talking yet. When the run's proxy is ready
 * and the run starts its controller, `attach` hands every waiting connection, and every later one, to
 * the proxy's server as if it had accepted them itself: from there on they are the controller's
 * ordinary connections (TLS with the proxy's certificate, which the kubeconfig trusts: it is the
 * process-wide proxy CA; the token is the door's, which the proxy takes as its own).
 */
import net, { type Socket } from 'node:net';
import { newBearerToken } from '../src/kube/bearer-auth.js';
import { listenOnLoopback } from '../src/kube/loopback-listen.js';

export class StandbyDoor {
  private readonly waiting: Array<{ socket: Socket; onClose: () => void }> = [];
  private server: net.Server | undefined;
  private resumeOnAttach = false;

  private constructor(
    private readonly listener: net.Server,
    /** The door's port on 127.0.0.1. */
    readonly port: number,
    /** The bearer token of the standby's kubeconfig; the proxy it is attached to requires it. */
    readonly token: string,
  ) {}

  /** Listens on a new loopback port; connections wait there until `attach`. */
  static async open(): Promise<StandbyDoor> {
    const listener = net.createServer({ pauseOnConnect: true });
    const door = new StandbyDoor(listener, await listenOnLoopback(listener), newBearerToken());
    listener.on('connection', (socket) => door.accept(socket));
    return door;
  }

  /** Connections waiting for the proxy (the standby's first requests). */
  get connectionsWaiting(): number {
    return this.waiting.length;
  }

  private accept(socket: Socket): void {
    socket.setNoDelay(true);
    if (!this.server) {
      // A standby that gives up (or is killed) leaves nothing behind.
      const onClose = () => {
        const i = this.waiting.findIndex((w) => w.socket === socket);
        if (i >= 0) this.waiting.splice(i, 1);
      };
      socket.once('close', onClose);
      this.waiting.push({ socket, onClose });
      return;
    }
    this.server.emit('connection', socket);
    // A TLS server reads the socket itself; a plain HTTP server needs it flowing again.
    if (this.resumeOnAttach) socket.resume();
  }

  /**
   * From now on the proxy's `server` takes the door's connections, those waiting first, in the order
   * they came. `tls`: whether that server terminates TLS.
   */
  attach(server: net.Server, tls: boolean): void {
    if (this.server) throw new Error('the standby door is already attached');
    this.server = server;
    this.resumeOnAttach = !tls;
    for (const { socket, onClose } of this.waiting.splice(0)) {
      socket.off('close', onClose);
      this.accept(socket);
    }
  }

  /** Stops listening and drops connections still waiting (attached ones belong to the proxy). */
  close(): void {
    this.listener.close();
    for (const { socket } of this.waiting.splice(0)) socket.destroy();
  }
}
