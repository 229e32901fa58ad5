/**
 * Any running cluster a kubeconfig names (kind, k3s, a cloud cluster, or `kperturb cluster --real`
 * in another terminal), behind the same surface as EmbeddedCluster and RealCluster. kperturb starts
 * nothing and stop() stops nothing: runs on such a cluster share its state, so executeRun isolates
 * them by deleting what each run created (run-cleanup.ts).
 */
import { upstreamFromKubeconfig } from '../../proxy/standalone.js';
import { loadKubeconfig, type KubeconfigSource } from '../kube/kubeconfig-source.js';
import type { ControllerProxyOptions } from '../../proxy/index.js';
import { KubeClient, type KubeClientOptions } from '../kube/client.js';
import { SetupError } from '../model/errors.js';

/** What the proxy needs to reach a cluster: its url and the credentials to present upstream. */
export type ProxyUpstreamOptions = Pick<
  ControllerProxyOptions,
  'upstream' | 'upstreamCaPem' | 'upstreamToken' | 'upstreamTokenProvider' | 'upstreamClientCertPem' | 'upstreamClientKeyPem'
>;

/** The proxy's upstream options for a cluster reached with these client options. */
export function proxyUpstreamFor(url: string, options: KubeClientOptions): ProxyUpstreamOptions {
  return {
    upstream: url,
    ...(options.caPem ? { upstreamCaPem: options.caPem } : {}),
    ...(options.token ? { upstreamToken: options.token } : {}),
    ...(options.clientCertPem ? { upstreamClientCertPem: options.clientCertPem } : {}),
    ...(options.clientKeyPem ? { upstreamClientKeyPem: options.clientKeyPem } : {}),
  };
}

export class ExistingCluster {
  private constructor(
    readonly url: string,
    private readonly options: KubeClientOptions,
    private readonly kubeconfig: string,
    /** How messages name the kubeconfig: its file, or the KUBECONFIG list. */
    readonly kubeconfigLabel: string,
    private readonly tokenProvider: ProxyUpstreamOptions['upstreamTokenProvider'],
  ) {}

  /**
   * Reads the server and credentials (CA, bearer token or token file or exec plugin, client
   * certificate) of the source's context (`--context`, else the current one). Throws UserInputError
   * naming the file for what it cannot use.
   */
  static async connect(source: KubeconfigSource): Promise<ExistingCluster> {
    const upstream = await upstreamFromKubeconfig(source);
    // One self-contained kubeconfig of the chosen context (merged from a KUBECONFIG list, if it was one).
    const kc = await loadKubeconfig(source);
    const text = kc.exportConfig();
    const options: KubeClientOptions = {
      ...(upstream.upstreamCaPem ? { caPem: upstream.upstreamCaPem } : {}),
      ...(upstream.upstreamToken ? { token: upstream.upstreamToken } : {}),
      ...(upstream.upstreamClientCertPem ? { clientCertPem: upstream.upstreamClientCertPem } : {}),
      ...(upstream.upstreamClientKeyPem ? { clientKeyPem: upstream.upstreamClientKeyPem } : {}),
    };
    return new ExistingCluster(upstream.upstream, options, text, source.label, upstream.upstreamTokenProvider);
  }

  /**
   * Asks the API server for /version: a SetupError naming the kubeconfig if it cannot be reached or
   * refuses the credentials, so that a campaign fails before its first run rather than in every run.
   */
  async check(timeoutMs = 10_000): Promise<void> {
    const client = new KubeClient(this.url, { ...this.options, timeoutMs });
    try {
      const res = await client.request('GET', '/version');
      if (res.status !== 200) {
        throw new SetupError(
          `${this.kubeconfigLabel}: the API server at ${this.url} answered GET /version with HTTP ${res.status}${res.status === 401 || res.status === 403 ? ' (check the credentials of the current context)' : ''}`,
        );
      }
    } catch (err) {
      if (err instanceof SetupError) throw err;
      throw new SetupError(`${this.kubeconfigLabel}: could not reach the API server at ${this.url}: ${(err as Error).message}`);
    } finally {
      client.close();
    }
  }

  /** The proxy's upstream: the same credentials, with token refresh for exec plugins and token files. */
  proxyUpstream(): ProxyUpstreamOptions {
    return { ...proxyUpstreamFor(this.url, this.options), ...(this.tokenProvider ? { upstreamTokenProvider: this.tokenProvider } : {}) };
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
