/** Writing kubeconfig files for the servers kperturb starts (embedded cluster, proxy). */
import { stringify } from 'yaml';

export interface KubeconfigOptions {
  name?: string;
  /** PEM of the CA that signed the server's certificate (https servers). */
  caPem?: string;
  token?: string;
}

export function kubeconfigYaml(server: string, options: KubeconfigOptions = {}): string {
  const name = options.name ?? 'kperturb';
  const cluster: Record<string, unknown> = { server };
  if (options.caPem) cluster['certificate-authority-data'] = Buffer.from(options.caPem).toString('base64');
  const user: Record<string, unknown> = options.token ? { token: options.token } : {};
  return stringify({
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name, cluster }],
    users: [{ name, user }],
    contexts: [{ name, context: { cluster: name, user: name, namespace: 'default' } }],
    'current-context': name,
    preferences: {},
  });
}
