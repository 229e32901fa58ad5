/**
 * Any running cluster a kubeconfig names (kind, k3s, a cloud cluster, or `kperturb cluster --real`
 * in another terminal), behind the same surface as EmbeddedCluster and RealCluster. kperturb starts
 * nothing and stop() stops nothing: runs on such a cluster share its state, so isolating plans from
 * each other (a namespace per run, or deleting what a run created) is up to the caller.
 */
import { readFileSync } from 'node:fs';
import { upstreamFromKubeconfig } from '../../proxy/standalone.js';
import type { KubeClientOptions } from '../kube/client.js';
import { UserInputError } from '../model/errors.js';

export class ExistingCluster {
  private constructor(
    readonly url: string,
    private readonly options: KubeClientOptions,
    private readonly kubeconfig: string,
    readonly kubeconfigFile: string,
  ) {}

  /**
   * Reads the current context's server and credentials (CA, bearer token or token file or exec
   * plugin, client certificate). Throws UserInputError naming the file for what it cannot use.
   */
  static async connect(kubeconfigFile: string): Promise<ExistingCluster> {
    let text: string;
    try {
      text = readFileSync(kubeconfigFile, 'utf8');
    } catch (err) {
      throw new UserInputError(kubeconfigFile, undefined, `a readable kubeconfig (${(err as Error).message})`);
    }
    const upstream = await upstreamFromKubeconfig(kubeconfigFile);
    const options: KubeClientOptions = {
      ...(upstream.upstreamCaPem ? { caPem: upstream.upstreamCaPem } : {}),
      ...(upstream.upstreamToken ? { token: upstream.upstreamToken } : {}),
      ...(upstream.upstreamClientCertPem ? { clientCertPem: upstream.upstreamClientCertPem } : {}),
      ...(upstream.upstreamClientKeyPem ? { clientKeyPem: upstream.upstreamClientKeyPem } : {}),
    };
    return new ExistingCluster(upstream.upstream, options, text, kubeconfigFile);
  }

  kubeconfigYaml(): string {
    return this.kubeconfig;
  }

  clientOptions(): KubeClientOptions {
    return { ...this.options };
  }

  /** Nothing to stop: the cluster is not kperturb's. */
  async stop(): Promise<void> {}
}
