/**
 * Runs the controller with its own /etc/hosts (controller.hostAliases / controller.clusterDNS): in a
 * private mount namespace where /etc/hosts is a bind mount of a file kperturb writes
 * (src/stubs/controller-hosts.ts). No root-owned file changes and nothing leaks to other processes.
 *
 *   unshare --mount --propagation private sh -c 'mount --bind "$f" /etc/hosts && exec "$@"' ...
 *
 * As root the mount namespace suffices; otherwise `unshare -r` adds a user namespace (the controller
 * then runs as root of that namespace, mapped to the calling user). unshare without --fork, and sh
 * with `exec`, replace themselves: the controller keeps the pid kperturb spawned, so killing that pid
 * (a planned crash, the end of a run) kills the controller itself.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SetupError } from '../model/errors.js';

export type CommandWrapper = (command: string, args: readonly string[]) => { command: string; args: string[] };

const MOUNT_SCRIPT = 'f=$1; shift; mount --bind "$f" /etc/hosts && exec "$@"';

/** The unshare arguments to try, in order: the plain mount namespace (root), then with a user namespace. */
function candidates(): string[][] {
  const mountNs = ['--mount', '--propagation', 'private'];
  const asRoot = typeof process.getuid === 'function' && process.getuid() === 0;
  return asRoot ? [mountNs, ['--map-root-user', ...mountNs]] : [['--map-root-user', ...mountNs]];
}

function wrapperFor(unshareArgs: readonly string[], hostsFile: string): CommandWrapper {
  return (command, args) => ({ command: 'unshare', args: [...unshareArgs, 'sh', '-c', MOUNT_SCRIPT, 'kperturb-hosts', hostsFile, command, ...args] });
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
        const { command, args } = wrapperFor(unshareArgs, file)('cat', ['/etc/hosts']);
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

/** The wrapper that runs a command with `hostsFile` as its /etc/hosts; probes first (see probeHostsNamespace). */
export async function hostsNamespaceWrapper(hostsFile: string, option: string): Promise<CommandWrapper> {
  return wrapperFor(await probeHostsNamespace(option), hostsFile);
}
