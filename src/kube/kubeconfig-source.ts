/**
 * Which kubeconfig and context a command uses, by kubectl's loading rules (client-go's clientcmd):
 * `--kubeconfig FILE` alone if given (it must exist); else the files of `$KUBECONFIG`, a path list
 * (`:`-separated), merged so that the first file to set a cluster, user or context name, or the
 * current context, wins, and files that do not exist are skipped; else `~/.kube/config`.
 * `--context NAME` then picks a context instead of the current one.
 */
import { existsSync } from 'node:fs';
import { homedir } from 'node:os';
import { delimiter, join, resolve } from 'node:path';
import type { KubeConfig } from '@kubernetes/client-node';
import { KubeconfigError } from '../model/errors.js';

export interface KubeconfigSource {
  /** The files, in precedence order (one for `--kubeconfig`). */
  files: string[];
  /** How a message names the source: the file, or `KUBECONFIG (a:b)`. */
  label: string;
  /** `--context`: absent means the merged current-context. */
  context?: string;
  /** Set when nothing named a kubeconfig and ~/.kube/config was assumed: the option that names one. */
  defaultedFor?: string;
}

/** The source kubectl would use given these flags and this environment; `option` is the command's name for `--kubeconfig`. */
export function kubeconfigSource(
  flags: { kubeconfig?: string; context?: string },
  env: NodeJS.ProcessEnv = process.env,
  home: string = homedir(),
  option = '--kubeconfig',
): KubeconfigSource {
  const context = flags.context !== undefined ? { context: flags.context } : {};
  if (flags.kubeconfig !== undefined) {
    const file = resolve(flags.kubeconfig);
    return { files: [file], label: flags.kubeconfig, ...context };
  }
  const list = (env.KUBECONFIG ?? '').split(delimiter).filter((f) => f !== '');
  if (list.length > 0) return { files: list.map((f) => resolve(f)), label: `KUBECONFIG (${env.KUBECONFIG})`, ...context };
  const file = join(home, '.kube', 'config');
  return { files: [file], label: file, ...context, defaultedFor: option };
}

/**
 * Loads and merges the source's files, and selects its context. A file that cannot be read or
 * parsed, no file at all, or a context that is not there is a UserInputError naming the source.
 * client-node is loaded here, when a kubeconfig is read: loading it takes about 0.3 s, which every
 * command on the embedded cluster would otherwise pay at its start.
 */
export async function loadKubeconfig(source: KubeconfigSource): Promise<KubeConfig> {
  const { KubeConfig } = await import('@kubernetes/client-node');
  if (source.defaultedFor !== undefined && !existsSync(source.files[0]!)) {
    throw new KubeconfigError(undefined, source.defaultedFor, `a kubeconfig file (none given, KUBECONFIG is not set and ${source.label} does not exist)`);
  }
  const present = source.files.length === 1 ? source.files : source.files.filter((f) => existsSync(f));
  if (present.length === 0) throw new KubeconfigError(source.label, undefined, 'at least one existing kubeconfig file (none of the list exists)');
  const merged = {
    clusters: new Map<string, KubeConfig['clusters'][number]>(),
    users: new Map<string, KubeConfig['users'][number]>(),
    contexts: new Map<string, KubeConfig['contexts'][number]>(),
    currentContext: '',
  };
  for (const file of present) {
    const kc = new KubeConfig();
    try {
      // client-node resolves the file's relative paths (certificate-authority, token files) against its directory.
      kc.loadFromFile(file);
    } catch (err) {
      throw new KubeconfigError(file, undefined, `a readable kubeconfig (${(err as Error).message})`);
    }
    // The first file to set a name wins, as in kubectl.
    for (const c of kc.clusters) if (!merged.clusters.has(c.name)) merged.clusters.set(c.name, c);
    for (const u of kc.users) if (!merged.users.has(u.name)) merged.users.set(u.name, u);
    for (const c of kc.contexts) if (!merged.contexts.has(c.name)) merged.contexts.set(c.name, c);
    if (merged.currentContext === '' && kc.currentContext) merged.currentContext = kc.currentContext;
  }
  const current = source.context ?? merged.currentContext;
  if (source.context !== undefined && !merged.contexts.has(source.context)) {
    const known = [...merged.contexts.keys()];
    throw new KubeconfigError(
      source.label,
      'contexts',
      `a context named ${JSON.stringify(source.context)} (--context); it has ${known.length === 0 ? 'none' : known.map((k) => JSON.stringify(k)).join(', ')}`,
    );
  }
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [...merged.clusters.values()],
    users: [...merged.users.values()],
    contexts: [...merged.contexts.values()],
    currentContext: current,
  });
  return kc;
}
