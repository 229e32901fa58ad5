/**
 * The addresses a cluster hands out: pod IPs (the simulated kubelets), Service cluster IPs (the
 * embedded API server's allocator) and node pod CIDRs.
 *
 * The default network is a real cluster's: pods in 10.244.<node>.0/24, Services in 10.96.0.0/12.
 * Nothing on this machine answers there. A loopback network (`claimLoopbackNetwork`) puts both in one
 * 127.X.0.0/16 block instead: every 127.0.0.0/8 address is local on Linux, so a stub application
 * (src/stubs) can listen on a pod's or a Service's own IP with no setup, and the controller under test
 * reaches it there as an in-cluster operator reaches its pods. Each cluster claims its own block, so
 * that runs in parallel (one embedded cluster each) never hand out the same address.
 */
import { createServer, type Server } from 'node:net';

export interface ClusterNetwork {
  /** e.g. "10.96.0.0/12" or "127.37.0.0/17". */
  readonly serviceCidr: string;
  /** The `kubernetes` Service's cluster IP: the first address of the service range. */
  readonly kubernetesServiceIp: string;
  /** The n-th cluster IP handed out (n >= 0), after the `kubernetes` Service's. */
  serviceIp(n: number): string;
  /** The pod CIDR of the i-th node. */
  podCidr(nodeIndex: number): string;
  /** The n-th pod IP (n >= 0) handed out on the i-th node. */
  podIp(nodeIndex: number, n: number): string;
  /** Gives the block back (loopback networks); idempotent. */
  release(): void;
}

/** 10.244.<i>.0/24 per node and 10.96.0.0/12, as kind and kubeadm clusters use. */
export const DEFAULT_NETWORK: ClusterNetwork = {
  serviceCidr: '10.96.0.0/12',
  kubernetesServiceIp: '10.96.0.1',
  // 10.96.0.2-9 stay free, as kube-dns usually takes 10.96.0.10.
  serviceIp: (n) => `10.96.${((n + 10) >> 8) & 0xff}.${(n + 10) & 0xff}`,
  podCidr: (i) => `10.244.${i}.0/24`,
  // Addresses wrap within the node's /24: IPs are labels here, nothing listens on them.
  podIp: (i, n) => `10.244.${i}.${(n % 253) + 2}`,
  release: () => undefined,
};

/** Loopback layout inside 127.X.0.0/16: Services in the lower half, pods in the upper, a /20 per node. */
const NODE_BLOCKS = 8;
const ADDRESSES_PER_NODE = 16 * 256;
/** The claim socket of a block listens on 127.X.255.254 at this port (see claimLoopbackNetwork). */
const CLAIM_PORT = 42_424;

/**
 * Addresses of 127.`block`.0.0/16. The n-th address of a range skips x.y.z.0 and x.y.z.255, which
 * read as network/broadcast addresses to people (and to some programs) although loopback accepts them.
 */
export function loopbackNetwork(block: number, release: () => void = () => undefined): ClusterNetwork {
  if (!Number.isInteger(block) || block < 1 || block > 254) throw new Error(`loopback block must be 1..254 (got ${block})`);
  const nth = (base: number, n: number) => {
    const offset = Math.floor(n / 254) * 256 + (n % 254) + 1;
    const value = base + offset;
    return `127.${block}.${(value >> 8) & 0xff}.${value & 0xff}`;
  };
  let released = false;
  return {
    serviceCidr: `127.${block}.0.0/17`,
    kubernetesServiceIp: nth(0, 0),
    serviceIp: (n) => {
      if (n + 1 >= 127 * 254) throw new Error(`the loopback service range 127.${block}.0.0/17 is exhausted`);
      return nth(0, n + 1);
    },
    podCidr: (i) => `127.${block}.${128 + 16 * i}.0/20`,
    podIp: (i, n) => {
      if (i >= NODE_BLOCKS) throw new Error(`a loopback network has room for ${NODE_BLOCKS} nodes (node index ${i})`);
      // The last address of node 7's range is the block's claim address.
      if (n >= (ADDRESSES_PER_NODE / 256) * 254 - 1) throw new Error(`the loopback pod range of node ${i} is exhausted`);
      return nth((128 + 16 * i) << 8, n);
    },
    release: () => {
      if (released) return;
      released = true;
      release();
    },
  };
}

/**
 * Claims a 127.X.0.0/16 block no other cluster on this machine holds, by listening on 127.X.255.254
 * at a fixed port for as long as the network lives: a second claim of the same block (another run,
 * in this or another process) fails to bind and tries another X. Blocks are tried in random order;
 * 127.0.x.x (127.0.0.1, 127.0.0.53 of systemd-resolved) is never used.
 */
export async function claimLoopbackNetwork(random: () => number = Math.random): Promise<ClusterNetwork> {
  const candidates = Array.from({ length: 254 }, (_, i) => i + 1);
  for (let i = candidates.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [candidates[i], candidates[j]] = [candidates[j]!, candidates[i]!];
  }
  let lastError: Error | undefined;
  for (const block of candidates) {
    const server = createServer();
    const claimed = await new Promise<boolean>((resolve) => {
      server.once('error', (err) => {
        lastError = err;
        resolve(false);
      });
      server.listen(CLAIM_PORT, `127.${block}.255.254`, () => resolve(true));
    });
    if (claimed) {
      server.unref();
      return loopbackNetwork(block, () => closeQuietly(server));
    }
  }
  throw new Error(`no free 127.X.0.0/16 block to claim for pod and service addresses (last error: ${lastError?.message ?? 'none'})`);
}

function closeQuietly(server: Server): void {
  server.close(() => undefined);
}
