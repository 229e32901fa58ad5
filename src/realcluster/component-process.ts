/**
 * One control-plane component (etcd, kube-apiserver, kube-controller-manager) as a child process: its
 * output goes to a log file, a start-up failure quotes the log's last lines, and stop() / kill() end
 * exactly this process (stop: SIGTERM, then SIGKILL after a grace period; kill: SIGKILL at once). Each runs in a process group of its own
 * (src/process/groups.ts), so that none outlives kperturb, even when Node itself is SIGKILLed (a test
 * runner's timeout).
 */
import { closeSync, openSync, readFileSync } from 'node:fs';
import { basename } from 'node:path';
import { ProcessGroup } from '../process/groups.js';

export class ComponentProcess {
  private readonly group: ProcessGroup;
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
    const fd = openSync(logFile, 'a');
    try {
      this.group = new ProcessGroup(binary, args, { stdio: ['ignore', fd, fd], env });
    } finally {
      closeSync(fd);
    }
    const child = this.group.child;
    this.exited = new Promise<void>((resolve) => {
      const done = (code: number | null, signal: NodeJS.Signals | null) => {
        this.exitCode = code;
        this.exitSignal = signal;
        this.hasExited = true;
        resolve();
      };
      child.once('exit', done);
      // spawn failures (ENOENT, EACCES) emit 'error' and no 'exit'.
      child.once('error', (err) => {
        this.startError = err;
        done(null, null);
      });
    });
  }

  startError: Error | undefined;

  get pid(): number | undefined {
    return this.group.pid;
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
    await this.group.stop(graceMs);
    await this.exited;
  }

  /**
   * Ends the process group with SIGKILL, no grace period: for a component whose state is thrown away
   * (a control plane's data directory is deleted right after), where a graceful shutdown only costs
   * time (kube-apiserver's drains its requests and watches for about a second). The components log
   * to the file unbuffered, so the log loses nothing.
   */
  async kill(): Promise<void> {
    if (this.hasExited) return;
    this.group.release();
    await this.exited;
  }
}
