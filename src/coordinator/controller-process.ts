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
import { CpuMeter, type CpuUse } from '../process/cpu.js';
import { describeStartupExit, KEPT_LINES } from './startup-exit.js';

export interface ControllerExit {
  incarnation: number;
  code: number | null;
  signal: string | null;
  /** True when kperturb itself ended the process (a planned crash or the end of the run). */
  expected: boolean;
}

/** Where a spawned process's output lines and exit go, once a ControllerProcess owns it. */
interface SpawnSink {
  line(p: Spawned, line: string): void;
  exit(p: Spawned, code: number | null, signal: NodeJS.Signals | null): void;
  startFailure(message: string): void;
}

/**
 * One spawned process: the controller's current incarnation, a warm spare waiting to become it, or a
 * standby started before its run (src/coordinator/standby.ts). Until a ControllerProcess owns it (its
 * `sink`), its output is kept in `buffered`; one that fails to start is not used (start() starts
 * the controller anew, and that start's failure is the run's).
 */
interface Spawned {
  group: ProcessGroup;
  exited: Promise<void>;
  /** Set when it becomes the controller; until then its output is kept in `buffered`. */
  incarnation: number | undefined;
  buffered: string[];
  /** Its last KEPT_LINES lines of output, for the message when it exits at start-up (startup-exit.ts). */
  tail: string[];
  /** kperturb is ending it (a planned crash, the end of the run). */
  killing: boolean;
  sink: SpawnSink | undefined;
}

function isAlive(p: Spawned): boolean {
  return p.group.child.exitCode === null && p.group.child.signalCode === null;
}

/** Starts the controller's command with KUBECONFIG=`kubeconfigFile`; see Spawned. */
function spawnController(config: ControllerUnderTest, kubeconfigFile: string, wrap: CommandWrapper | undefined, sink: SpawnSink | undefined): Spawned {
  const { command, args, env, workingDir } = config.controller;
  const expanded = controllerEnvironment(process.env, env, args, kubeconfigFile);
  const launch = wrap ? wrap(command, expanded.args) : { command, args: expanded.args };
  const group = new ProcessGroup(launch.command, launch.args, {
    cwd: workingDir,
    env: expanded.env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const child = group.child;
  let markExited: () => void = () => undefined;
  const p: Spawned = {
    group,
    exited: new Promise((resolve) => (markExited = resolve)),
    incarnation: undefined,
    buffered: [],
    tail: [],
    killing: false,
    sink,
  };
  const write = (line: string) => {
    p.tail.push(line);
    if (p.tail.length > KEPT_LINES) p.tail.shift();
    if (p.sink && p.incarnation !== undefined) p.sink.line(p, line);
    else p.buffered.push(line);
  };
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
    p.sink?.startFailure(describeStartFailure(config, launch.command, err));
  });
  child.on('close', (code, signal) => {
    p.sink?.exit(p, code, signal);
    markExited();
  });
  return p;
}

/**
 * A controller process started before its run, with a kubeconfig of its own (a standby door's,
 * proxy/standby-door.ts), that a ControllerProcess takes as its first incarnation. It waits for its
 * first answer meanwhile; `kill` ends one that no run took.
 */
export class StartedController {
  /** @internal */
  readonly spawned: Spawned;
  readonly startedAt = Date.now();

  constructor(config: ControllerUnderTest, kubeconfigFile: string) {
    this.spawned = spawnController(config, kubeconfigFile, undefined, undefined);
  }

  get alive(): boolean {
    return isAlive(this.spawned);
  }

  async kill(): Promise<void> {
    this.spawned.killing = true;
    if (this.alive) void this.spawned.group.kill();
    await this.spawned.exited;
  }
}

export class ControllerProcess {
  private current: Spawned | undefined;
  /** A process started ahead of the next start (prepareSpare, useStandby), not yet the controller. */
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
  /** Was the first incarnation a standby started before the run (useStandby)? */
  firstFromStandby = false;
  private readonly log: WriteStream;
  /** The current incarnation's CPU use (settle: a controller that computes is not quiet). */
  private cpu: CpuMeter | undefined;

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

  /** Why the current incarnation exited during start-up, with its last lines (startup-exit.ts). */
  startupExitMessage(): string {
    const exit = [...this.exits].reverse().find((e) => e.incarnation === this.incarnation);
    return describeStartupExit(this.config, exit, this.current?.tail ?? []);
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
      const what = this.incarnation === 1 ? 'the process started ahead of the run' : 'the warm spare';
      this.log.write(`[${this.incarnation}] kperturb: ${what} had exited before it was needed; starting the controller anew\n`);
    }
    if (this.startedFromSpare && this.incarnation === 1) this.firstFromStandby = true;
    else if (this.startedFromSpare) this.sparesUsed++;
    const p = this.startedFromSpare ? spare! : this.spawn(this.kubeconfigFile);
    p.incarnation = this.incarnation;
    for (const line of p.buffered.splice(0)) this.log.write(`[${p.incarnation}] ${line}\n`);
    this.current = p;
    const pid = p.group.child.pid;
    this.cpu?.stop();
    this.cpu = pid !== undefined ? new CpuMeter(pid) : undefined;
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

  /**
   * The first start() takes `started` (a standby, src/coordinator/standby.ts) instead of starting a
   * process, if it is still alive then; from now on its output and exit are this object's.
   */
  useStandby(started: StartedController): void {
    if (this.ended || this.spare || this.incarnation > 0) throw new Error('a standby can only be the first incarnation');
    this.spare = started.spawned;
    this.spare.sink = this.sink;
  }

  private spawn(kubeconfigFile: string): Spawned {
    return spawnController(this.config, kubeconfigFile, this.wrap, this.sink);
  }

  /** Output and exits of the processes this object owns. */
  private readonly sink: SpawnSink = {
    line: (p, line) => this.log.write(`[${p.incarnation}] ${line}\n`),
    exit: (p, code, signal) => {
      // A spare that never became the controller leaves no exit behind.
      if (p.incarnation === undefined) return;
      this.exits.push({ incarnation: p.incarnation, code, signal, expected: p.killing });
      this.trace.append({ type: 'controller', action: 'exit', incarnation: p.incarnation, code, signal });
    },
    startFailure: (message) => (this.startFailure ??= message),
  };

  /** The CPU the current incarnation used (and waited for) over (at most) the last `windowMs`; undefined when unknown (not Linux, not running). */
  cpuUsedWithin(windowMs: number, now = Date.now()): CpuUse | undefined {
    return this.running ? this.cpu?.usedWithin(windowMs, now) : undefined;
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
    this.cpu?.stop();
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
