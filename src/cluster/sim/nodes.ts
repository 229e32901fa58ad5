/**
 * Simulated nodes: what a kubelet does when it registers (creates its Node with labels, capacity,
 * addresses and a Ready condition) and, when asked, its heartbeat (renewing its Lease in
 * kube-node-lease, which a real kube-controller-manager's node lifecycle controller watches: without
 * it, nodes turn NotReady after 40 s and their pods are evicted).
 *
 * Node IPs are 172.18.0.<2+i> and pod CIDRs 10.244.<i>.0/24 for the i-th simulated node (or the
 * node's range of a loopback network, src/cluster/network.ts), so that addresses are the same in
 * every run.
 */
import type { KubeObject } from '../../model/object-key.js';
import type { ResourceInfo } from '../../kube/discovery.js';
import { clone, now } from './objects.js';
import { isStatus, type SimContext } from './runtime.js';
import type { ClusterNetwork } from '../network.js';

export const KUBELET_VERSION = 'v1.33.0-kperturb-sim';

export function nodeIp(nodes: readonly string[], node: string): string {
  return `172.18.0.${2 + Math.max(0, nodes.indexOf(node))}`;
}

export function nodeIndex(nodes: readonly string[], node: string): number {
  return Math.max(0, nodes.indexOf(node));
}

function nodeObject(nodes: readonly string[], name: string, network: ClusterNetwork): KubeObject {
  const capacity = { cpu: '8', 'ephemeral-storage': '100Gi', 'hugepages-2Mi': '0', memory: '16Gi', pods: '110' };
  const at = now();
  const cond = (type: string, status: string, reason: string, message: string) => ({
    type,
    status,
    lastHeartbeatTime: at,
    lastTransitionTime: at,
    reason,
    message,
  });
  return {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: {
      name,
      labels: {
        'beta.kubernetes.io/arch': 'amd64',
        'beta.kubernetes.io/os': 'linux',
        'kubernetes.io/arch': 'amd64',
        'kubernetes.io/hostname': name,
        'kubernetes.io/os': 'linux',
      },
      annotations: { 'node.alpha.kubernetes.io/ttl': '0', 'volumes.kubernetes.io/controller-managed-attach-detach': 'true' },
    },
    spec: { podCIDR: network.podCidr(nodeIndex(nodes, name)), podCIDRs: [network.podCidr(nodeIndex(nodes, name))] },
    status: {
      capacity,
      allocatable: capacity,
      conditions: [
        cond('MemoryPressure', 'False', 'KubeletHasSufficientMemory', 'kubelet has sufficient memory available'),
        cond('DiskPressure', 'False', 'KubeletHasNoDiskPressure', 'kubelet has no disk pressure'),
        cond('PIDPressure', 'False', 'KubeletHasSufficientPID', 'kubelet has sufficient PID available'),
        cond('Ready', 'True', 'KubeletReady', 'kubelet is posting ready status'),
      ],
      addresses: [
        { type: 'InternalIP', address: nodeIp(nodes, name) },
        { type: 'Hostname', address: name },
      ],
      daemonEndpoints: { kubeletEndpoint: { Port: 10250 } },
      nodeInfo: {
        architecture: 'amd64',
        bootID: '',
        containerRuntimeVersion: 'containerd://1.7.0-kperturb-sim',
        kernelVersion: '6.1.0',
        kubeProxyVersion: KUBELET_VERSION,
        kubeletVersion: KUBELET_VERSION,
        machineID: '',
        operatingSystem: 'linux',
        osImage: 'kperturb simulated node',
        systemUUID: '',
      },
    },
  };
}

/** Registers the simulated nodes; keeps their Leases renewed when a heartbeat interval is set. */
export class NodeAgent {
  private timer: NodeJS.Timeout | undefined;

  private constructor(private readonly ctx: SimContext) {}

  static async start(ctx: SimContext): Promise<NodeAgent | undefined> {
    const info = await ctx.client.resources.byKind('Node', 'v1');
    if (!info) return undefined;
    const agent = new NodeAgent(ctx);
    for (const name of ctx.nodes) await agent.register(info, name);
    const leaseInfo = await ctx.client.resources.byKind('Lease', 'coordination.k8s.io/v1');
    if (leaseInfo && ctx.timing.nodeHeartbeatMs > 0) {
      const beat = async () => {
        for (const name of ctx.nodes) await agent.renewLease(leaseInfo, name).catch((err: Error) => ctx.log(`node: lease ${name}: ${err.message}`));
      };
      await beat();
      agent.timer = setInterval(() => void beat(), ctx.timing.nodeHeartbeatMs);
    }
    return agent;
  }

  /** kubelet registration: create the Node, then post its status (the status is not settable on create). */
  private async register(info: ResourceInfo, name: string): Promise<void> {
    const desired = nodeObject(this.ctx.nodes, name, this.ctx.network);
    let node = await this.ctx.api.get(info, undefined, name);
    if (!node) {
      try {
        node = await this.ctx.api.create(info, undefined, desired);
      } catch (err) {
        if (!isStatus(err, 409)) throw err;
        node = await this.ctx.api.get(info, undefined, name);
      }
    }
    if (!node) return;
    const st = node.status as Record<string, unknown> | undefined;
    const ready =
      Array.isArray(st?.conditions) && (st!.conditions as Array<{ type?: string; status?: string }>).some((c) => c.type === 'Ready' && c.status === 'True');
    if (ready && Array.isArray(st?.addresses)) return;
    const next = clone(node);
    next.status = desired.status;
    await this.ctx.api.update(info, next, 'status');
  }

  private async renewLease(info: ResourceInfo, name: string): Promise<void> {
    const at = new Date().toISOString().replace('Z', '000Z');
    const lease = await this.ctx.api.get(info, 'kube-node-lease', name);
    if (!lease) {
      await this.ctx.api.create(info, 'kube-node-lease', {
        metadata: { name, namespace: 'kube-node-lease' },
        spec: { holderIdentity: name, leaseDurationSeconds: 40, renewTime: at },
      });
      return;
    }
    const next = clone(lease);
    next.spec = { ...(next.spec as Record<string, unknown>), holderIdentity: name, leaseDurationSeconds: 40, renewTime: at };
    await this.ctx.api.update(info, next);
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
  }
}
