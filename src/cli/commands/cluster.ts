/** `kperturb cluster`: run the embedded in-memory Kubernetes API server in the foreground. */
import { Command } from 'commander';
import { resolve } from 'node:path';
import { UserInputError } from '../../model/errors.js';
import { listeningOnPort, log, parsePort, parseKubernetesRelease, writeKubeconfigOrStop, untilSignal } from '../common.js';

export function registerCluster(program: Command): void {
  program
    .command('cluster')
    .description('run the embedded in-memory Kubernetes API server in the foreground')
    .option('-p, --port <port>', 'port on 127.0.0.1 (default: a free port)', parsePort)
    .option('--kubeconfig-out <file>', 'write a kubeconfig for it here')
    .option('--real', 'run a real control plane instead (etcd, kube-apiserver, kube-controller-manager built by `npm run setup:real`, plus simulated kubelets)')
    .option('--log-dir <dir>', "with --real: keep the components' logs here")
    .option(
      '--kubernetes-version <release>',
      'serve the API surface of this Kubernetes release, "1.18" to "1.32" (default: 1.32); e.g. 1.18-1.21 serve apiextensions.k8s.io/v1beta1 and policy/v1beta1',
      parseKubernetesRelease,
    )
    .option('--insecure-no-auth', 'serve anyone who reaches the port, without the bearer token of the written kubeconfig')
    .action(async (opts: { port?: number; kubeconfigOut?: string; real?: boolean; logDir?: string; kubernetesVersion?: string; insecureNoAuth?: boolean }) => {
      if (opts.real && opts.kubernetesVersion !== undefined)
        throw new UserInputError(undefined, '--kubernetes-version', 'no --kubernetes-version with --real: a real control plane serves its own release');
      if (opts.real && opts.insecureNoAuth)
        throw new UserInputError(undefined, '--insecure-no-auth', 'no --insecure-no-auth with --real: a real control plane always authenticates');
      if (opts.real) {
        const { RealCluster, ensureControlPlaneBinaries } = await import('../../realcluster/index.js');
        const cluster = await RealCluster.start({
          binaries: await ensureControlPlaneBinaries(log),
          log,
          ...(opts.port !== undefined ? { apiserverPort: opts.port } : {}),
          ...(opts.logDir ? { logDir: resolve(opts.logDir) } : {}),
        });
        await writeKubeconfigOrStop(opts.kubeconfigOut, cluster);
        log(`real control plane listening on ${cluster.url}${opts.kubeconfigOut ? `; kubeconfig in ${opts.kubeconfigOut}` : ''} (Ctrl-C to stop)`);
        await untilSignal();
        await cluster.stop();
        return;
      }
      const { EmbeddedCluster } = await import('../../cluster/index.js');
      const cluster = await listeningOnPort(opts.port, () =>
        EmbeddedCluster.start({
          ...(opts.port !== undefined ? { port: opts.port } : {}),
          ...(opts.kubernetesVersion !== undefined ? { kubernetesVersion: opts.kubernetesVersion } : {}),
          ...(opts.insecureNoAuth ? { insecureNoAuth: true } : {}),
        }),
      );
      await writeKubeconfigOrStop(opts.kubeconfigOut, cluster);
      log(
        `embedded cluster (Kubernetes ${cluster.kubernetesVersion} API) listening on ${cluster.url}${opts.kubeconfigOut ? `; kubeconfig in ${opts.kubeconfigOut}` : ''} (Ctrl-C to stop)`,
      );
      await untilSignal();
      await cluster.stop();
    });
}
