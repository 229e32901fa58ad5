/**
 * Where the real control plane's binaries (kube-apiserver, kube-controller-manager, etcd) are. They are
 * built once per machine by realcp/setup.sh, which alone decides the cache directory (by version; see
 * the script's header); this module asks it, or takes KPERTURB_REAL_CP_BIN_DIR, a directory holding
 * binaries you built or downloaded yourself (e.g. an envtest KUBEBUILDER_ASSETS directory plus a
 * kube-controller-manager).
 */
import { spawnSync } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { InterruptedError, SetupError } from '../model/errors.js';
import { ProcessGroup } from '../process/groups.js';

export interface ControlPlaneBinaries {
  dir: string;
  kubeApiserver: string;
  kubeControllerManager: string;
  etcd: string;
}

export const BIN_DIR_ENV = 'KPERTURB_REAL_CP_BIN_DIR';

/** realcp/setup.sh, from dist/src/realcluster/ or src/realcluster/. */
export const SETUP_SCRIPT = fileURLToPath(new URL('../../../realcp/setup.sh', import.meta.url));

function binariesIn(dir: string): ControlPlaneBinaries {
  const found = { dir, kubeApiserver: join(dir, 'kube-apiserver'), kubeControllerManager: join(dir, 'kube-controller-manager'), etcd: join(dir, 'etcd') };
  for (const file of [found.kubeApiserver, found.kubeControllerManager, found.etcd]) {
    try {
      accessSync(file, constants.X_OK);
    } catch {
      throw new SetupError(`${file}: not an executable file (the real control plane needs kube-apiserver, kube-controller-manager and etcd in ${dir})`);
    }
  }
  return found;
}

/**
 * The binaries if they are built and up to date, without building anything (a few milliseconds).
 * Throws a SetupError that says to run `npm run setup:real` otherwise.
 */
export function locateControlPlaneBinaries(): ControlPlaneBinaries {
  const fromEnv = process.env[BIN_DIR_ENV];
  if (fromEnv) return binariesIn(fromEnv);
  const result = spawnSync('sh', [SETUP_SCRIPT, '--print-bin-dir'], { encoding: 'utf8' });
  if (result.status === 0) return binariesIn(result.stdout.trim());
  const why = (result.stderr || result.error?.message || '').trim();
  throw new SetupError(`the real control plane is not built: ${why || `${SETUP_SCRIPT} exited with ${result.status}`}`);
}

/**
 * Builds the binaries if needed (the first time on a machine: several minutes; see realcp/README.md)
 * and returns them. The script's progress lines go to `log`. The build runs in a process group of its
 * own (src/process/groups.ts), which `signal` stops (InterruptedError).
 */
export async function ensureControlPlaneBinaries(
  log: (line: string) => void = (line) => process.stderr.write(line + '\n'),
  signal?: AbortSignal,
): Promise<ControlPlaneBinaries> {
  const fromEnv = process.env[BIN_DIR_ENV];
  if (fromEnv) return binariesIn(fromEnv);
  const group = new ProcessGroup('sh', [SETUP_SCRIPT], { stdio: ['ignore', 'pipe', 'pipe'] });
  const child = group.child;
  const stop = () => void group.stop(2000);
  signal?.addEventListener('abort', stop, { once: true });
  let stdout = '';
  child.stdout?.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  let pending = '';
  child.stderr?.setEncoding('utf8').on('data', (chunk: string) => {
    pending += chunk;
    const lines = pending.split('\n');
    pending = lines.pop() ?? '';
    for (const line of lines) log(line);
  });
  const code = await new Promise<number | null>((resolve, reject) => {
    child.once('error', reject);
    child.once('close', (status) => resolve(status));
  });
  signal?.removeEventListener('abort', stop);
  if (pending) log(pending);
  if (signal?.aborted) throw new InterruptedError(`the real control plane's build (${SETUP_SCRIPT}) was stopped`);
  if (code !== 0) throw new SetupError(`building the real control plane failed (${SETUP_SCRIPT} exited with ${code}); see the lines above`);
  return binariesIn(stdout.trim().split('\n').pop() ?? '');
}
