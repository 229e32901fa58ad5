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

/** One spawned process: the controller's current incarnation, or a warm spare waiting to become it. */
interface Spawned {
  group: ProcessGroup;
  exited: Promise<void>;
  /** Set when it becomes the controller; until then its output is kept in `buffered`. */
  incarnation: number | undefined;
  buffered: string[];
  /** kperturb is ending it (a planned crash, the end of the run). */
  killing: boolean;
}

function isAlive(p: Spawned): boolean {
  return p.group.child.exitCode === null && p.group.child.signalCode === null;
}

export class ControllerProcess {
  private current: Spawned | undefined;
  /** A process started ahead of the next restart (prepareSpare), not yet the controller. */
  private spare: Spawned | undefined;
  /** stop() was called: the run is over, and no incarnation starts after it (a restart in progress when a run is interrupted). */
  private ended = false;
  incarnation = 0;
  readonly exits: ControllerExit[] = [];
  /** Why the command could not be started at all (not found, not executable), for the run's error. */
  startFailure: string | undefined;
  /** How many restarts a warm spare took (for run.json). */
  sparesUsed = 0;
  /** Is the current incarnation a warm spare that took over? */
  startedFromSpare = false;
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
    return this.current !== undefined && isAlive(this.current);
  }

  /** Did the current incarnation exit without kperturb asking it to? */
  get exitedUnexpectedly(): boolean {
    return this.exits.some((e) => e.incarnation === this.incarnation && !e.expected);
  }

  /**
   * Starts the next incarnation: the warm spare if one is ready and alive, else a new process.
   * `onStarted` runs once it is the controller (for a spare: what lets its requests through).
   */
  start(onStarted?: () => void): void {
    if (this.ended) return;
    this.incarnation++;
    const spare = this.spare;
    this.spare = undefined;
    this.startedFromSpare = spare !== undefined && isAlive(spare);
    if (spare && !this.startedFromSpare) {
      this.log.write(`[${this.incarnation}] kperturb: the warm spare had exited before it was needed; starting the controller anew\n`);
    }
    if (this.startedFromSpare) this.sparesUsed++;
    const p = this.startedFromSpare ? spare! : this.spawn(this.kubeconfigFile);
    p.incarnation = this.incarnation;
    for (const line of p.buffered.splice(0)) this.log.write(`[${p.incarnation}] ${line}\n`);
    this.current = p;
    const pid = p.group.child.pid;
    this.trace.append({ type: 'controller', action: 'start', incarnation: this.incarnation, ...(pid !== undefined ? { pid } : {}) });
    onStarted?.();
  }

  /**
   * Starts a warm spare whose kubeconfig leads through the proxy's spare door, where its requests
   * wait until the next start() makes it the controller. Its output is kept until then; a spare
   * that is never needed ends with the run, leaving no trace.
   */
  prepareSpare(kubeconfigFile: string): void {
    if (this.ended || this.spare) return;
    this.spare = this.spawn(kubeconfigFile);
  }

  private spawn(kubeconfigFile: string): Spawned {
    const { command, args, env, workingDir } = this.config.controller;
    const expanded = controllerEnvironment(process.env, env, args, kubeconfigFile);
    const launch = this.wrap ? this.wrap(command, expanded.args) : { command, args: expanded.args };
    const group = new ProcessGroup(launch.command, launch.args, {
      cwd: workingDir,
      env: expanded.env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const child = group.child;
    let markExited: () => void = () => undefined;
    const p: Spawned = { group, exited: new Promise((resolve) => (markExited = resolve)), incarnation: undefined, buffered: [], killing: false };
    const write = (line: string) => (p.incarnation === undefined ? p.buffered.push(line) : this.log.write(`[${p.incarnation}] ${line}\n`));
    const pipe = (stream: NodeJS.ReadableStream | null) => {
      let partial = '';
      stream?.setEncoding('utf8');
      stream?.on('data', (chunk: string) => {
        const lines = (partial + chunk).split('\n');
        partial = lines.pop() ?? '';
        for (const line of lines) write(line);
      });
      stream?.on('end', () => partial && write(partial));
    };
    pipe(child.stdout);
    pipe(child.stderr);
    child.on('error', (err: NodeJS.ErrnoException) => {
      write(`kperturb: could not start ${command}: ${err.message}`);
      this.startFailure ??= describeStartFailure(this.config, launch.command, err);
    });
    child.on('close', (code, signal) => {
      // A spare that never became the controller leaves no exit behind.
      if (p.incarnation !== undefined) {
        this.exits.push({ incarnation: p.incarnation, code, signal, expected: p.killing });
        this.trace.append({ type: 'controller', action: 'exit', incarnation: p.incarnation, code, signal });
      }
      markExited();
    });
    return p;
  }

  /** SIGKILL to the group: a crash, no chance to clean up. Resolves once the process is gone. */
  async kill(): Promise<void> {
    const p = this.current;
    if (!p) return;
    if (this.running) {
      p.killing = true;
      void p.group.kill();
    }
    await p.exited;
  }

  /** SIGTERM to the group, then SIGKILL after `graceMs`: the orderly end of a run (a waiting spare is killed). */
  async stop(graceMs = 2000): Promise<void> {
    this.ended = true;
    const spare = this.spare;
    this.spare = undefined;
    if (spare) {
      spare.killing = true;
      void spare.group.kill();
    }
    const p = this.current;
    if (p && this.running) {
      p.killing = true;
      void p.group.stop(graceMs);
    }
    await Promise.all([p?.exited, spare?.exited]);
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
