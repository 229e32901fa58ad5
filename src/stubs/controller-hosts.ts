/**
 * The hosts file the controller under test resolves names with (`controller.hostAliases`,
 * `controller.clusterDNS`): the machine's /etc/hosts, then the aliases, then, with clusterDNS, the
 * names CoreDNS would answer for a pod of the cluster (src/model/applications.ts clusterDnsEntries),
 * rewritten as Services and pods come and go. The controller sees it as its /etc/hosts through a bind
 * mount in a private mount namespace (src/coordinator/hosts-namespace.ts).
 *
 * The file is rewritten in place, never replaced: a bind mount follows the inode, so a rename would
 * leave the controller with the old file. Go's resolver re-reads /etc/hosts when its modification
 * time or size changes (checked at most every 5 s); glibc reads it on every lookup.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { clusterDnsEntries, hostsFileText, type HostAlias } from '../model/applications.js';
import { PodsAndServices, type PodsAndServicesView } from './cluster-objects.js';

export const SYSTEM_HOSTS_FILE = '/etc/hosts';

export class ControllerHosts {
  private readonly base: string;
  private objects: PodsAndServices | undefined;
  private written = '';

  /**
   * Writes `file` now. `view`: follow the cluster's Services and pods (clusterDNS); without it the
   * file holds the aliases only.
   */
  constructor(
    readonly file: string,
    private readonly aliases: readonly HostAlias[],
    view: PodsAndServicesView | undefined,
    baseFile = SYSTEM_HOSTS_FILE,
    /** The controller's namespace (`controller.namespace`): names relative to it resolve too. */
    private readonly namespace?: string,
  ) {
    let base: string;
    try {
      base = readFileSync(baseFile, 'utf8');
    } catch {
      base = '127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost ip6-loopback\n';
    }
    this.base = base;
    if (view) this.objects = new PodsAndServices(view, () => this.write());
    this.write();
  }

  /** The entries kperturb adds for the cluster now. */
  clusterEntries(): HostAlias[] {
    return this.objects ? clusterDnsEntries(this.objects.services.values(), this.objects.pods.values(), this.namespace) : [];
  }

  private write(): void {
    const text = hostsFileText(this.base, this.aliases, this.clusterEntries());
    if (text === this.written) return;
    // writeFileSync opens with O_TRUNC: same inode, so the bind mount sees the new content.
    writeFileSync(this.file, text);
    this.written = text;
  }

  stop(): void {
    this.objects?.stop();
    this.objects = undefined;
  }
}
