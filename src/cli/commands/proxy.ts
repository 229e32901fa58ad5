/** `kperturb proxy`: run the intercepting proxy stand-alone in front of a cluster; give the written kubeconfig to your controller. */
import { Command } from 'commander';
import { listeningOnPort, log, parsePort, untilSignal, PROXY_UPSTREAM_CHECK_MS } from '../common.js';

export function registerProxy(program: Command): void {
  program
    .command('proxy')
    .description('run the intercepting proxy stand-alone in front of a cluster; give the written kubeconfig to your controller')
    .option(
      '--upstream-kubeconfig <file>',
      'kubeconfig of the API server to forward to (default: $KUBECONFIG, a path list, or ~/.kube/config, as kubectl loads them)',
    )
    .option('--context <name>', 'the context of that kubeconfig to use (default: its current context)')
    .option('-p, --port <port>', 'port on 127.0.0.1 (default: a free port)', parsePort)
    .option('--kubeconfig-out <file>', "write the controller-side kubeconfig here (it trusts the proxy's own CA)")
    .option('--trace <file>', 'write the controller trace (JSON lines) here')
    .option('--cluster-trace <file>', 'also watch every resource of the cluster and write the cluster trace here')
    .option('--no-redact-secrets', 'write Secret values into the traces as they are (default: a stable hash)')
    .option('--plain-http', 'serve the controller plain HTTP/1.1 instead of TLS (HTTP/2 and HTTP/1.1)')
    .option(
      '--secret-hash-key <file>',
      "hash Secret values with the key in this file (made if missing), e.g. a campaign's secret-hash.key (default: a key of this process only)",
    )
    .action(
      async (opts: {
        upstreamKubeconfig?: string;
        context?: string;
        port?: number;
        kubeconfigOut?: string;
        trace?: string;
        clusterTrace?: string;
        redactSecrets: boolean;
        plainHttp?: boolean;
        secretHashKey?: string;
      }) => {
        const { runStandaloneProxy } = await import('../../../proxy/standalone.js');
        const { ExistingCluster } = await import('../../realcluster/index.js');
        const { kubeconfigSource } = await import('../../kube/kubeconfig-source.js');
        const upstream = kubeconfigSource(
          {
            ...(opts.upstreamKubeconfig !== undefined ? { kubeconfig: opts.upstreamKubeconfig } : {}),
            ...(opts.context !== undefined ? { context: opts.context } : {}),
          },
          process.env,
          undefined,
          '--upstream-kubeconfig',
        );
        // One bounded GET /version first: an unreachable server or refused credentials fail here, not in the controller.
        await (await ExistingCluster.connect(upstream)).check(PROXY_UPSTREAM_CHECK_MS);
        const running = await listeningOnPort(opts.port, () =>
          runStandaloneProxy({
            upstreamKubeconfig: upstream,
            ...(opts.port !== undefined ? { port: opts.port } : {}),
            ...(opts.kubeconfigOut ? { kubeconfigOut: opts.kubeconfigOut } : {}),
            ...(opts.trace ? { traceFile: opts.trace } : {}),
            ...(opts.clusterTrace ? { clusterTraceFile: opts.clusterTrace } : {}),
            redactSecrets: opts.redactSecrets,
            ...(opts.secretHashKey ? { secretHashKeyFile: opts.secretHashKey } : {}),
            tls: !opts.plainHttp,
            log,
          }),
        );
        log(`proxy listening on ${running.proxy.url} (Ctrl-C to stop)`);
        await untilSignal();
        await running.close();
      },
    );
}
