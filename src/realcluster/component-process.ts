/**
 * One control-plane component (etcd, kube-apiserver, kube-controller-manager) as a child process: its
 * output goes to a log file, a start-up failure quotes the log's last lines, and stop() ends exactly
 * this process (by pid: SIGTERM, then SIGKILL after a grace period). Components still running when
 * Node exits are killed by pid too; and where util-linux's setpriv exists, each component is started
 * through `setpriv --pdeathsig SIGKILL` (which then execs it, keeping the pid), so that the kernel
 * kills it even when Node itself is SIGKILLed (a test runner's timeout), and none outlives kperturb.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { accessSync, closeSync, constants, openSync, readFileSync } from 'node:fs';
import { basename } from 'node:path';

const SETPRIV = '/usr/bin/setpriv';
let setprivUsable: boolean | undefined;
function withParentDeathSignal(binary: string, args: readonly string[]): [string, string[]] {
  if (setprivUsable === undefined) {
    try {
      accessSync(SETPRIV, constants.X_OK);
      setprivUsable = true;
    } catch {
      setprivUsable = false;
    }
  }
  return setprivUsable ? [SETPRIV, ['--pdeathsig', 'SIGKILL', '--', binary, ...args]] : [binary, [...args]];
}

const running = new Set<ChildProcess>();
let exitHookInstalled = false;

function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.on('exit', () => {
    for (const child of running) {
      try {
        child.kill('SIGKILL');
      } catch {
        /* already gone */
      }
    }
  });
}

export class ComponentProcess {
  private readonly child: ChildProcess;
  private readonly exited: Promise<void>;
  exitCode: number | null = null;
  exitSignal: NodeJS.Signals | null = null;
  private hasExited = false;

  constructor(
    readonly name: string,
    binary: string,
    args: readonly string[],
    readonly logFile: string,
    env: NodeJS.ProcessEnv = process.env,
  ) {
    installExitHook();
    const fd = openSync(logFile, 'a');
    try {
      const [command, argv] = withParentDeathSignal(binary, args);
      this.child = spawn(command, argv, { stdio: ['ignore', fd, fd], env });
    } finally {
      closeSync(fd);
    }
    running.add(this.child);
    this.exited = new Promise<void>((resolve) => {
      const done = (code: number | null, signal: NodeJS.Signals | null) => {
        this.exitCode = code;
        this.exitSignal = signal;
        this.hasExited = true;
        running.delete(this.child);
        resolve();
      };
      this.child.once('exit', done);
      // spawn failures (ENOENT, EACCES) emit 'error' and no 'exit'.
      this.child.once('error', (err) => {
        this.startError = err;
        done(null, null);
      });
    });
  }

  startError: Error | undefined;

  get pid(): number | undefined {
    return this.child.pid;
  }

  get alive(): boolean {
    return !this.hasExited;
  }

  /** "exited with code 1" / "was killed by SIGKILL" / "could not be started: ..." */
  describeExit(): string {
    if (this.startError) return `${this.name} could not be started: ${this.startError.message}`;
    if (this.exitSignal) return `${this.name} was killed by ${this.exitSignal}`;
    return `${this.name} exited with code ${this.exitCode}`;
  }

  /** The last lines of the component's log, for error messages. */
  logTail(lines = 15): string {
    try {
      const text = readFileSync(this.logFile, 'utf8').trimEnd().split('\n');
      return text.slice(-lines).join('\n');
    } catch {
      return '';
    }
  }

  failureReport(what: string): string {
    const tail = this.logTail();
    return `${what}${tail ? `; last lines of ${basename(this.logFile)}:\n${tail}` : ''}`;
  }

  /** Ends the process: SIGTERM, and SIGKILL if it is still running after `graceMs`. */
  async stop(graceMs = 5000): Promise<void> {
    if (this.hasExited) return;
    this.child.kill('SIGTERM');
    let timer: NodeJS.Timeout | undefined;
    const killed = new Promise<void>((resolve) => {
      timer = setTimeout(() => {
        if (!this.hasExited) this.child.kill('SIGKILL');
        resolve();
      }, graceMs);
    });
    await Promise.race([this.exited, killed]);
    clearTimeout(timer);
    await this.exited;
  }
}
