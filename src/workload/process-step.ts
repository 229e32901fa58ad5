/**
 * The `command` and `script` workload steps: run a process as the user would run kubectl, with
 * KUBECONFIG naming a kubeconfig of the cluster itself (not the proxy: the user's calls are not the
 * controller's), and fail the step unless it exits 0 within its timeout. Its output goes into the
 * step's trace event, so a run's record shows what the command said.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ProcessStep } from '../config/config.js';
import { writePrivateFile } from '../io/private-file.js';

/** The output kept of one process (its last part): enough for kubectl's answers, bounded for the trace. */
export const MAX_OUTPUT_CHARS = 16 * 1024;
/** After the timeout's SIGTERM, how long the process group gets before SIGKILL. */
const KILL_GRACE_MS = 2000;

/** A failed command or script; `output` is what it printed (stdout and stderr, interleaved). */
export class ProcessStepError extends Error {
  constructor(
    message: string,
    readonly output: string,
  ) {
    super(output.trim() ? `${message}; it printed: ${lastLines(output, 5)}` : message);
    this.name = 'ProcessStepError';
  }
}

export async function runProcessStep(step: ProcessStep, kubeconfigYaml: string): Promise<{ output: string }> {
  const dir = mkdtempSync(join(tmpdir(), 'kperturb-step-'));
  try {
    const kubeconfig = join(dir, 'kubeconfig');
    writePrivateFile(kubeconfig, kubeconfigYaml);
    return await run(step, kubeconfig);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

function run(step: ProcessStep, kubeconfig: string): Promise<{ output: string }> {
  const [file, ...args] = step.argv;
  return new Promise((resolve, reject) => {
    // Its own process group, so a timeout ends what a script started (kubectl under sh) as well.
    const child = spawn(file!, args, {
      cwd: step.workingDir,
      env: { ...process.env, ...step.env, KUBECONFIG: kubeconfig },
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    });
    let output = '';
    const keep = (chunk: Buffer): void => {
      output += chunk.toString('utf8');
      if (output.length > 2 * MAX_OUTPUT_CHARS) output = output.slice(-MAX_OUTPUT_CHARS);
    };
    child.stdout.on('data', keep);
    child.stderr.on('data', keep);
    let timedOut = false;
    let killTimer: NodeJS.Timeout | undefined;
    const signalGroup = (signal: NodeJS.Signals): void => {
      try {
        if (child.pid !== undefined) process.kill(-child.pid, signal);
      } catch {
        /* already gone */
      }
    };
    const timer = setTimeout(() => {
      timedOut = true;
      signalGroup('SIGTERM');
      killTimer = setTimeout(() => signalGroup('SIGKILL'), KILL_GRACE_MS);
    }, step.timeoutSeconds * 1000);
    child.on('error', (err: NodeJS.ErrnoException) => {
      clearTimeout(timer);
      reject(
        new ProcessStepError(
          err.code === 'ENOENT' ? `cannot run ${file}: not found on PATH or in ${step.workingDir}` : `cannot run ${file}: ${err.message}`,
          output,
        ),
      );
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      if (killTimer) clearTimeout(killTimer);
      const kept = output.slice(-MAX_OUTPUT_CHARS);
      if (timedOut) reject(new ProcessStepError(`${file} did not finish within ${step.timeoutSeconds}s`, kept));
      else if (code !== 0) reject(new ProcessStepError(`${file} exited with ${code === null ? `signal ${signal}` : `code ${code}`}`, kept));
      else resolve({ output: kept });
    });
  });
}

function lastLines(text: string, n: number): string {
  const lines = text.trimEnd().split('\n');
  return (lines.length > n ? '... ' : '') + lines.slice(-n).join(' | ');
}
