/**
 * Runs the controller with its own /etc/hosts (controller.hostAliases / controller.clusterDNS), and
 * the pod's namespace file (controller.podNamespaceFile), in a private mount namespace: /etc/hosts is
 * a bind mount of a file kperturb writes (src/stubs/controller-hosts.ts); the namespace file,
 * /var/run/secrets/kubernetes.io/serviceaccount/namespace, comes from a read-only overlay of the
 * deepest folder of that path the machine has (/run, through the /var/run link) with a folder kperturb
 * writes on top. No root-owned file changes and nothing leaks to other processes.
 *
 *   unshare --mount --propagation private sh -c 'mount --bind "$h" /etc/hosts && exec "$@"' ...
 *
 * As root the mount namespace suffices; otherwise `unshare -r` adds a user namespace (the controller
 * then runs as root of that namespace, mapped to the calling user). unshare without --fork, and sh
 * with `exec`, replace themselves: the controller keeps the pid kperturb spawned, so killing that pid
 * (a planned crash, the end of a run) kills the controller itself.
 */
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { SetupError } from '../model/errors.js';

export type CommandWrapper = (command: string, args: readonly string[]) => { command: string; args: string[] };

/** $1 the hosts file or "", $2 the overlay's upper folder or "", $3 the folder it goes over; then the command. */
const MOUNT_SCRIPT =
  'h=$1 l=$2 r=$3; shift 3; { [ -z "$h" ] || mount --bind "$h" /etc/hosts; } && { [ -z "$l" ] || mount -t overlay kperturb-pod -o "lowerdir=$l:$r" "$r"; } && exec "$@"';

/** The service-account folder of a pod, where client-go and controller-runtime read the pod's namespace. */
export const POD_SERVICE_ACCOUNT_DIR = '/var/run/secrets/kubernetes.io/serviceaccount';

/** What the controller's mount namespace changes: the hosts file, and a folder laid over `root` (the pod's files). */
export interface ControllerMounts {
  hostsFile?: string | undefined;
  podFiles?: { upper: string; root: string } | undefined;
}

/**
 * Writes, under `dir`, the files a pod's service account gives that the controller reads: the
 * namespace file. The folder goes over the deepest existing folder of POD_SERVICE_ACCOUNT_DIR, so
 * the path resolves in the controller's mount namespace whatever of it the machine has.
 */
export function writePodFiles(dir: string, namespace: string): { upper: string; root: string } {
  let existing = POD_SERVICE_ACCOUNT_DIR;
  while (!existsSync(existing)) existing = dirname(existing);
  const root = realpathSync(existing);
  if (root === '/')
    throw new SetupError(`controller.podNamespaceFile: no folder of ${POD_SERVICE_ACCOUNT_DIR} exists here but /, which kperturb does not overlay`);
  const upper = join(dir, 'pod-files');
  const target = join(upper, relative(existing, POD_SERVICE_ACCOUNT_DIR));
  mkdirSync(target, { recursive: true });
  writeFileSync(join(target, 'namespace'), namespace);
  return { upper, root };
}

/** The unshare arguments to try, in order: the plain mount namespace (root), then with a user namespace. */
function candidates(): string[][] {
  const mountNs = ['--mount', '--propagation', 'private'];
  const asRoot = typeof process.getuid === 'function' && process.getuid() === 0;
  return asRoot ? [mountNs, ['--map-root-user', ...mountNs]] : [['--map-root-user', ...mountNs]];
}

function wrapperFor(unshareArgs: readonly string[], mounts: ControllerMounts): CommandWrapper {
  const mountArgs = [mounts.hostsFile ?? '', mounts.podFiles?.upper ?? '', mounts.podFiles?.root ?? ''];
  return (command, args) => ({ command: 'unshare', args: [...unshareArgs, 'sh', '-c', MOUNT_SCRIPT, 'kperturb-mounts', ...mountArgs, command, ...args] });
}

function run(command: string, args: readonly string[]): Promise<{ ok: boolean; output: string }> {
  return new Promise((resolve) => {
    execFile(command, args, { timeout: 10_000 }, (err, stdout, stderr) => resolve({ ok: !err, output: `${stdout}${stderr}`.trim() || (err?.message ?? '') }));
  });
}

let probed: Promise<string[]> | undefined;

/**
 * Finds how this machine can give a process its own /etc/hosts (once per kperturb process), by
 * running `cat /etc/hosts` under each candidate with a marker file. Throws SetupError naming
 * `option` (the kperturb.yaml setting that asked for it) when none works.
 */
export async function probeHostsNamespace(option: string): Promise<string[]> {
  probed ??= (async () => {
    const dir = mkdtempSync(join(tmpdir(), 'kperturb-hosts-probe-'));
    const file = join(dir, 'hosts');
    const marker = '127.3.2.1\tkperturb-hosts-probe.invalid';
    writeFileSync(file, marker + '\n');
    const failures: string[] = [];
    try {
      for (const unshareArgs of candidates()) {
        const { command, args } = wrapperFor(unshareArgs, { hostsFile: file })('cat', ['/etc/hosts']);
        const result = await run(command, args);
        if (result.ok && result.output.includes('kperturb-hosts-probe.invalid')) return unshareArgs;
        failures.push(`unshare ${unshareArgs.join(' ')}: ${result.output || 'no output'}`);
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
    throw new Error(failures.join('; '));
  })();
  try {
    return await probed;
  } catch (err) {
    throw new SetupError(
      `${option} needs the controller to run with its own /etc/hosts (a private mount namespace: unshare --mount as root, or unshare -r -m with user namespaces enabled), and neither works here: ${(err as Error).message}`,
    );
  }
}

/**
 * The wrapper that runs a command with `mounts` (its /etc/hosts, the pod's files); probes first (see
 * probeHostsNamespace), and reads the namespace file through it once, so that a machine whose kernel
 * refuses the overlay fails the run with a setup error naming `option`, not the controller.
 */
export async function hostsNamespaceWrapper(mounts: ControllerMounts, option: string): Promise<CommandWrapper> {
  const wrap = wrapperFor(await probeHostsNamespace(option), mounts);
  if (mounts.podFiles) {
    const { command, args } = wrap('cat', [join(POD_SERVICE_ACCOUNT_DIR, 'namespace')]);
    const result = await run(command, args);
    if (!result.ok)
      throw new SetupError(
        `${option} needs an overlay mount over ${mounts.podFiles.root} in the controller's mount namespace, and it failed: ${result.output}`,
      );
  }
  return wrap;
}
