/**
 * Connection epochs: every controller connection belongs to the epoch current when it was accepted.
 * Killing a controller process ends its epoch: its connections are destroyed, their upstream requests
 * aborted and their held work dropped, while the restarted controller's connections start afresh.
 */
import type { ClientConnection } from './client-conn.js';
import { DeliveryGate } from './gate.js';

/** Anything that must be torn down with its epoch (an exchange, an upgraded tunnel). */
export interface EpochMember {
  terminate(reason: string): void;
}

export class Epoch {
  /** Holding this gate holds everything of the controller connected in this epoch. */
  readonly gate = new DeliveryGate();
  private readonly connections = new Set<ClientConnection>();
  private readonly members = new Set<EpochMember>();
  private endedFlag = false;

  constructor(readonly number: number) {}

  get ended(): boolean {
    return this.endedFlag;
  }

  adopt(connection: ClientConnection): void {
    if (this.endedFlag) {
      connection.destroy();
      return;
    }
    this.connections.add(connection);
    connection.once('close', () => this.connections.delete(connection));
  }

  /** The controller connections of this epoch still open. */
  openConnections(): ClientConnection[] {
    return [...this.connections];
  }

  /** Members (exchanges, tunnels) still running. */
  activeMembers(): EpochMember[] {
    return [...this.members];
  }

  join(member: EpochMember): void {
    if (this.endedFlag) {
      member.terminate('connection epoch already ended');
      return;
    }
    this.members.add(member);
  }

  leave(member: EpochMember): void {
    this.members.delete(member);
  }

  /** Tears down everything of this epoch. Idempotent. */
  end(reason: string): void {
    if (this.endedFlag) return;
    this.endedFlag = true;
    this.gate.drop();
    for (const m of [...this.members]) m.terminate(reason);
    this.members.clear();
    for (const c of [...this.connections]) c.destroy();
    this.connections.clear();
  }
}
