/**
 * Connection epochs: every controller connection belongs to the epoch current when it was accepted.
 * Killing a controller process ends its epoch: its connections are destroyed, their upstream requests
 * aborted and their held work dropped, while the restarted controller's connections start afresh.
 */
import type { ClientConnection } from './client-conn.js';
import { DeliveryGate } from './gate.js';
import { ShortLivedSet, type ShortLivedEntry } from './short-lived-set.js';

/** Anything that must be torn down with its epoch (an exchange, an upgraded tunnel). */
export interface EpochMember {
  terminate(reason: string): void;
}

/** A member's place in its epoch (see Epoch.join). */
export type EpochMembership = ShortLivedEntry<EpochMember>;

export class Epoch {
  /** Holding this gate holds everything of the controller connected in this epoch. */
  readonly gate = new DeliveryGate();
  private readonly connections = new Set<ClientConnection>();
  /** One per request in flight: a ShortLivedSet, see there why not a Set. */
  private readonly members = new ShortLivedSet<EpochMember>();
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
    return this.members.values();
  }

  /** Adds a member; what it returns is the member's to give to `leave` (undefined: the epoch has ended, the member is terminated already). */
  join(member: EpochMember): EpochMembership | undefined {
    if (this.endedFlag) {
      member.terminate('connection epoch already ended');
      return undefined;
    }
    return this.members.add(member);
  }

  leave(membership: EpochMembership | undefined): void {
    if (membership) this.members.delete(membership);
  }

  /** Tears down everything of this epoch. Idempotent. */
  end(reason: string): void {
    if (this.endedFlag) return;
    this.endedFlag = true;
    this.gate.drop();
    for (const m of this.members.values()) m.terminate(reason);
    this.members.clear();
    for (const c of [...this.connections]) c.destroy();
    this.connections.clear();
  }
}
