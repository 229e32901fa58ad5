/**
 * Controllers started ahead of their runs. In a campaign, every plan's run starts the controller and
 * waits for it to load before its first request: about 0.35 s for a Node controller (its modules),
 * more for a large Go operator. A campaign with more plans of a controller to run starts the next
 * one's process while the current run's workload goes on; the next run takes it instead of starting
 * one, and its first request comes at once.
 *
 * Such a standby is isolated from the run it waits beside: its kubeconfig points at a door of its own
 * (proxy/standby-door.ts) that leaves its connections unread, so it has sent nothing anywhere and seen
 * nothing when its run's proxy takes it, exactly as a process that has just started; its output is
 * kept until then and goes into the run's controller.log as incarnation 1's. What differs is only
 * when its process began: a standby older than STANDBY_MAX_AGE_MS is not used (a client may give up
 * its TLS handshake: client-go after 10 s), nor one that exited meanwhile; the run then starts the
 * controller itself. `run.json` says how long before its run a standby was started
 * (`controllerStartedAheadMs`).
 *
 * Not for a controller that must not run twice at once on this machine (`controller.ports`,
 * `controller.warmSpare: false`), nor one started through a wrapper made per run (clusterDNS,
 * hostAliases, podNamespaceFile).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { StandbyDoor } from '../../proxy/standby-door.js';
import { sharedProxyCertificates } from '../../proxy/tls.js';
import type { ControllerUnderTest } from '../config/config.js';
import { writePrivateFile } from '../io/private-file.js';
import { kubeconfigYaml } from '../kube/kubeconfig.js';
import { StartedController } from './controller-process.js';

/** How old a standby may be when its run takes it. */
export const STANDBY_MAX_AGE_MS = 5000;

/** A controller process waiting behind its door for a run. */
export interface Standby {
  door: StandbyDoor;
  process: StartedController;
}

/** Can runs of this controller take standbys? (see the header) */
export function standbysAllowed(config: ControllerUnderTest, tls: boolean): boolean {
  const c = config.controller;
  return tls && c.warmSpare !== false && c.ports.length === 0 && !c.clusterDNS && c.hostAliases.length === 0 && !c.podNamespaceFile;
}

/** The standbys of one controller in one campaign. */
export class ControllerStandbys {
  private readonly ready: Standby[] = [];
  private readonly preparing = new Set<Promise<void>>();
  private closed = false;
  private dir: string | undefined;
  private made = 0;

  /**
   * `runs`: how many runs will take one (no standby is started for a run that will not come).
   * `preparesAt`: when a run starts the standby of a later one: once its controller is up (runs of
   * a few seconds, a campaign's plans), or once its workload is done (longer runs, such as learn's
   * serialized ones, which a standby started earlier would outlive STANDBY_MAX_AGE_MS).
   */
  constructor(
    private readonly config: ControllerUnderTest,
    private runs: number,
    readonly preparesAt: 'controller-started' | 'workload-done' = 'controller-started',
    private readonly maxAgeMs = STANDBY_MAX_AGE_MS,
  ) {}

  /** A standby for a run starting now, if one is ready, alive and young enough. */
  take(): Standby | undefined {
    this.runs = Math.max(0, this.runs - 1);
    for (;;) {
      const standby = this.ready.shift();
      if (!standby) return undefined;
      if (this.usable(standby)) return standby;
      void discard(standby);
    }
  }

  /** Starts a standby for a later run, unless every later run has one already. */
  prepare(): void {
    if (this.closed || this.ready.length + this.preparing.size >= this.runs) return;
    const preparing: Promise<void> = this.start()
      .then(async (standby) => {
        if (this.closed) await discard(standby);
        else this.ready.push(standby);
      })
      .catch(() => undefined /* the run then starts its controller itself, and says why if it cannot */)
      .finally(() => this.preparing.delete(preparing));
    this.preparing.add(preparing);
  }

  /** Resolves once every standby being started is ready (or failed to start). */
  async prepared(): Promise<void> {
    await Promise.all([...this.preparing]);
  }

  /** Standbys started and waiting, usable or not. */
  get readyCount(): number {
    return this.ready.length;
  }

  /** Standbys a run starting now could take: alive and young enough. */
  get usableCount(): number {
    return this.ready.filter((s) => this.usable(s)).length;
  }

  private usable(standby: Standby): boolean {
    return standby.process.alive && Date.now() - standby.process.startedAt <= this.maxAgeMs;
  }

  private async start(): Promise<Standby> {
    const [door, certs] = await Promise.all([StandbyDoor.open(), sharedProxyCertificates()]);
    this.dir ??= mkdtempSync(join(tmpdir(), 'kperturb-standby-'));
    const kubeconfigFile = join(this.dir, `standby-${++this.made}.kubeconfig`);
    writePrivateFile(kubeconfigFile, kubeconfigYaml(`https://127.0.0.1:${door.port}`, { name: 'kperturb-proxy', caPem: certs.caPem, token: door.token }));
    return { door, process: new StartedController(this.config, kubeconfigFile) };
  }

  /** Ends the standbys no run took (the campaign is over, or interrupted). */
  async close(): Promise<void> {
    this.closed = true;
    await this.prepared();
    await Promise.all(this.ready.splice(0).map(discard));
    if (this.dir) rmSync(this.dir, { recursive: true, force: true });
  }
}

async function discard(standby: Standby): Promise<void> {
  standby.door.close();
  await standby.process.kill();
}
