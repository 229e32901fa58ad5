/** Writing kubeconfig files for the servers kperturb starts (embedded cluster, proxy). */
import { readFileSync } from 'node:fs';
import { isMap, isSeq, parse as parseYaml, parseDocument, stringify } from 'yaml';
import { KubeconfigError } from '../model/errors.js';
import { writePrivateFile } from '../io/private-file.js';

export interface KubeconfigOptions {
  name?: string;
  /** PEM of the CA that signed the server's certificate (https servers). */
  caPem?: string;
  token?: string;
  /** Client certificate and key (PEM) for servers that authenticate by certificate. */
  clientCertPem?: string;
  clientKeyPem?: string;
}

export function kubeconfigYaml(server: string, options: KubeconfigOptions = {}): string {
  const name = options.name ?? 'kperturb';
  const cluster: Record<string, unknown> = { server };
  // @kubernetes/client-node refuses http:// servers without it; kubectl and client-go ignore it there.
  if (server.startsWith('http://')) cluster['insecure-skip-tls-verify'] = true;
  if (options.caPem) cluster['certificate-authority-data'] = Buffer.from(options.caPem).toString('base64');
  const user: Record<string, unknown> = options.token ? { token: options.token } : {};
  if (options.clientCertPem && options.clientKeyPem) {
    user['client-certificate-data'] = Buffer.from(options.clientCertPem).toString('base64');
    user['client-key-data'] = Buffer.from(options.clientKeyPem).toString('base64');
  }
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

const KUBECONFIG_LISTS = ['clusters', 'users', 'contexts'] as const;

/**
 * Writes the kubeconfig `yaml` (one cluster, user and context, as kubeconfigYaml makes) to `file`
 * with mode 0600. A file that is there already is merged into as kind does: its other clusters,
 * users and contexts stay (comments too), entries of the same names are replaced, and the new
 * context becomes the current one. A file that is not a kubeconfig is left alone (UserInputError).
 */
export function writeKubeconfigFile(file: string, yaml: string): void {
  let existing: string | undefined;
  try {
    existing = readFileSync(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT')
      throw new KubeconfigError(file, undefined, `a kubeconfig file kperturb can read and add its context to (${(err as Error).message})`);
  }
  const text = existing === undefined || existing.trim() === '' ? yaml : mergeKubeconfig(file, existing, yaml);
  try {
    writePrivateFile(file, text);
  } catch (err) {
    throw new KubeconfigError(file, undefined, `a path where the kubeconfig can be written (${(err as Error).message})`);
  }
}

function mergeKubeconfig(file: string, existing: string, yaml: string): string {
  const notOverwritten = 'it was not changed';
  const doc = parseDocument(existing);
  if (doc.errors.length > 0 || !isMap(doc.contents))
    throw new KubeconfigError(file, undefined, `a kubeconfig (YAML map) to add the context to; the file is not one, so ${notOverwritten}`);
  const kind = doc.get('kind');
  if (kind !== undefined && kind !== null && kind !== 'Config')
    throw new KubeconfigError(file, 'kind', `"Config" (a kubeconfig) to add the context to; ${notOverwritten}`);
  const ours = parseYaml(yaml) as Record<(typeof KUBECONFIG_LISTS)[number], Array<{ name: string }>> & { 'current-context': string };
  for (const list of KUBECONFIG_LISTS) {
    let seq = doc.get(list);
    if (seq === undefined || seq === null) {
      doc.set(list, doc.createNode([]));
      seq = doc.get(list);
    }
    if (!isSeq(seq)) throw new KubeconfigError(file, list, `a list; ${notOverwritten}`);
    if (seq.items.length === 0) seq.flow = false;
    for (const entry of ours[list]) {
      const at = seq.items.findIndex((item) => isMap(item) && item.get('name') === entry.name);
      const node = doc.createNode(entry);
      if (at >= 0) seq.items[at] = node;
      else seq.items.push(node);
    }
  }
  doc.set('current-context', ours['current-context']);
  if (!doc.has('apiVersion')) doc.set('apiVersion', 'v1');
  if (!doc.has('kind')) doc.set('kind', 'Config');
  return doc.toString();
}
