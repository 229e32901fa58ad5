/**
 * Starts, kills and restarts the controller under test as a local process whose KUBECONFIG points at
 * the proxy. Every incarnation's output goes to one log file, prefixed with the incarnation number.
 * Each incarnation is a process group of its own (src/process/groups.ts): a crash or a stop ends the
 * controller with every process it started, and none outlives kperturb.
 */
import { createWriteStream, type WriteStream } from 'node:fs';
import { isAbsolute } from 'node:path';
import type { TraceSink } from '../model/trace.js';
import type { ControllerUnderTest } from '../config/config.js';
import { controllerEnvironment } from '../config/var-expansion.js';
import type { CommandWrapper } from './hosts-namespace.js';
import { ProcessGroup } from '../process/groups.js';

export interface ControllerExit {
  incarnation: number;
  code: number | null;
  signal: string | null;
  /** True when kperturb itself ended the process (a planned crash or the end of the run). */
  expected: boolean;
}

export class ControllerProcess {
  private group: ProcessGroup | undefined;
  private exitPromise: Promise<void> | undefined;
  private killingOnPurpose = false;
  /** stop() was called: the run is over, and no incarnation starts after it (a restart in progress when a run is interrupted). */
  private ended = false;
  incarnation = 0;
  readonly exits: ControllerExit[] = [];
  /** Why the command could not be started at all (not found, not executable), for the run's error. */
  startFailure: string | undefined;
  private readonly log: WriteStream;

  constructor(
    private readonly config: ControllerUnderTest,
    private readonly kubeconfigFile: string,
    logFile: string,
    private readonly trace: TraceSink,
    /**
     * Runs the command through another one (hosts-namespace.ts: a private /etc/hosts). The wrapper
     * must exec the command in place, so that the spawned pid is the controller's.
     */
    private readonly wrap?: CommandWrapper,
  ) {
    this.log = createWriteStream(logFile, { flags: 'a' });
  }

  get running(): boolean {
    const child = this.group?.child;
    return child !== undefined && child.exitCode === null && child.signalCode === null;
  }

  /** Did the current incarnation exit without kperturb asking it to? */
  get exitedUnexpectedly(): boolean {
    return this.exits.some((e) => e.incarnation === this.incarnation && !e.expected);
  }

  start(): void {
    if (this.ended) return;
    this.incarnation++;
    const incarnation = this.incarnation;
    const { command, args, env, workingDir } = this.config.controller;
    const expanded = controllerEnvironment(process.env, env, args, this.kubeconfigFile);
    const launch = this.wrap ? this.wrap(command, expanded.args) : { command, args: expanded.args };
    const group = new ProcessGroup(launch.command, launch.args, {
      cwd: workingDir,
      env: expanded.env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const child = group.child;
    this.group = group;
    this.killingOnPurpose = false;
    const prefix = `[${incarnation}] `;
    const pipe = (stream: NodeJS.ReadableStream | null) => {
      let partial = '';
      stream?.setEncoding('utf8');
      stream?.on('data', (chunk: string) => {
        const lines = (partial + chunk).split('\n');
        partial = lines.pop() ?? '';
        for (const line of lines) this.log.write(prefix + line + '\n');
      });
      stream?.on('end', () => partial && this.log.write(prefix + partial + '\n'));
    };
    pipe(child.stdout);
    pipe(child.stderr);
    this.exitPromise = new Promise((resolve) => {
      child.on('error', (err: NodeJS.ErrnoException) => {
        this.log.write(`${prefix}kperturb: could not start ${command}: ${err.message}\n`);
        this.startFailure ??= describeStartFailure(this.config, launch.command, err);
      });
      child.on('close', (code, signal) => {
        const expected = this.killingOnPurpose;
        this.exits.push({ incarnation, code, signal, expected });
        this.trace.append({ type: 'controller', action: 'exit', incarnation, code, signal });
        resolve();
      });
    });
    this.trace.append({ type: 'controller', action: 'start', incarnation, ...(child.pid !== undefined ? { pid: child.pid } : {}) });
  }

  /** SIGKILL to the group: a crash, no chance to clean up. Resolves once the process is gone. */
  async kill(): Promise<void> {
    if (!this.group || !this.running) return this.exitPromise;
    this.killingOnPurpose = true;
    void this.group.kill();
    await this.exitPromise;
  }

  /** SIGTERM to the group, then SIGKILL after `graceMs`: the orderly end of a run. */
  async stop(graceMs = 2000): Promise<void> {
    this.ended = true;
    if (!this.group || !this.running) {
      await this.exitPromise;
      return;
    }
    this.killingOnPurpose = true;
    void this.group.stop(graceMs);
    await this.exitPromise;
  }

  async closeLog(): Promise<void> {
    await new Promise<void>((resolve) => this.log.end(resolve));
  }
}

const START_ERRORS: Readonly<Record<string, string>> = {
  ENOENT: 'not found',
  EACCES: 'permission denied: not executable, or a directory',
  ENOEXEC: 'not a program this machine can run',
};

/** `kperturb.yaml at controller.command: ...`, with spawn's error code, for a command that never ran. */
function describeStartFailure(config: ControllerUnderTest, launched: string, err: NodeJS.ErrnoException): string {
  const code = err.code ?? 'error';
  const reason = START_ERRORS[code] ?? err.message;
  const { command, workingDir } = config.controller;
  const where =
    launched !== command
      ? `; started through ${launched}`
      : isAbsolute(command)
        ? ''
        : command.includes('/')
          ? `; relative to controller.workingDir ${workingDir}`
          : '; looked up on PATH';
  return `${config.file} at controller.command: a program kperturb can start (${JSON.stringify(command)}: ${code}, ${reason}${where})`;
}
