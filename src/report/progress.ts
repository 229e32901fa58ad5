/**
 * Progress of a long campaign on stderr: plans done / total, bugs so far and an ETA. On a terminal
 * it is one line that updates in place (other log lines are printed above it), and a bug is named
 * the moment its plan finishes; elsewhere (CI logs, pipes) it is one plain line per finished plan.
 * `--quiet` keeps only bugs and warnings; `--verbose` adds each plan's perturbation and run
 * directory.
 */
import type { PlanResult } from '../model/results.js';
import type { TestProgress } from '../campaign/campaign.js';
import { PLAIN, type Palette } from './color.js';
import { alarmLine, rerunCommand } from './terminal.js';

export const VERBOSITIES = ['quiet', 'normal', 'verbose'] as const;
export type Verbosity = (typeof VERBOSITIES)[number];

export interface ProgressOptions {
  /** Default: the stream's isTTY. */
  tty?: boolean;
  verbosity?: Verbosity;
  palette?: Palette;
}

export interface ProgressStream {
  write(text: string): unknown;
  isTTY?: boolean;
  columns?: number;
}

export class ProgressReporter implements TestProgress {
  private total = 0;
  private done = 0;
  private bugs = 0;
  private flaky = 0;
  private untested = 0;
  private started = 0;
  /** Labels of the plans running now, oldest first. */
  private running: string[] = [];
  private statusShown = false;
  private readonly tty: boolean;
  private readonly verbosity: Verbosity;
  private readonly palette: Palette;

  constructor(
    private readonly out: ProgressStream = process.stderr,
    private readonly now: () => number = Date.now,
    options: ProgressOptions = {},
  ) {
    this.verbosity = options.verbosity ?? 'normal';
    // Quiet: no status line either; what is printed stays put.
    this.tty = (options.tty ?? out.isTTY === true) && this.verbosity !== 'quiet';
    this.palette = options.palette ?? PLAIN;
  }

  /** Log lines go through here so that on a terminal they do not tear the status line. Quiet drops them. */
  readonly log = (line: string): void => {
    if (this.verbosity !== 'quiet') this.print(line);
  };

  /** Warnings are printed however quiet. */
  readonly warn = (line: string): void => {
    this.print(line);
  };

  private print(line: string): void {
    this.clearStatus();
    this.out.write(line + '\n');
    this.drawStatus();
  }

  begin(total: number): void {
    this.total += total;
    if (this.started === 0) this.started = this.now();
    this.drawStatus();
  }

  planStarted(label: string): void {
    this.running.push(label);
    this.drawStatus();
  }

  planFinished(result: PlanResult): void {
    this.done++;
    if (result.verdict === 'bug') this.bugs++;
    else if (result.verdict === 'flaky') this.flaky++;
    else if (result.verdict !== 'pass') this.untested++;
    const i = this.running.findIndex((l) => l.startsWith(`${result.plan}:`) || l === result.plan);
    this.running.splice(i === -1 ? 0 : i, 1);
    const bug = result.verdict === 'bug';
    if (this.verbosity === 'quiet' || this.tty) {
      // A bug is named when it is found, not only in the report at the end.
      if (bug) this.print(this.bugLines(result));
      else if (this.verbosity === 'verbose') this.print(this.finishedLine(result));
      else this.drawStatus();
    } else {
      this.out.write(this.finishedLine(result) + '\n');
    }
  }

  private finishedLine(r: PlanResult): string {
    const verdict = r.verdict === 'bug' ? this.palette.bad(r.verdict) : r.verdict;
    const line = `  -> ${r.plan}: ${verdict}${r.alarms.length ? ` (${r.alarms.length} alarm(s))` : ''}; ${this.summary()}`;
    if (this.verbosity !== 'verbose') return line;
    return [line, `     ${r.description}`, `     run: ${r.runDir}`, ...r.alarms.map((a) => `     ${alarmLine(a)}`)].join('\n');
  }

  private bugLines(r: PlanResult): string {
    const first = r.alarms[0];
    const again = rerunCommand(r);
    return [
      `${this.palette.bad('bug')} found by ${r.controller}/${r.workload}/${r.plan}: ${r.description}`,
      ...(first ? [`  ${alarmLine(first)}${r.alarms.length > 1 ? ` (+${r.alarms.length - 1} more)` : ''}`] : []),
      ...(again ? [`  ${again}`] : []),
      ...(this.verbosity === 'verbose' ? [`  run: ${r.runDir}`] : []),
    ].join('\n');
  }

  /** Removes the status line (call before printing the final tables). */
  end(): void {
    this.clearStatus();
  }

  summary(): string {
    const parts = [`${this.done}/${this.total} plans`, `${this.bugs} bug(s) so far`];
    if (this.flaky > 0) parts.push(`${this.flaky} flaky`);
    if (this.untested > 0) parts.push(`${this.untested} not tested`);
    const eta = this.eta();
    if (eta !== undefined) parts.push(`ETA ${formatEta(eta)}`);
    return parts.join(', ');
  }

  /** Milliseconds left, from the average time per finished plan. */
  eta(): number | undefined {
    if (this.done === 0 || this.done >= this.total) return undefined;
    return ((this.now() - this.started) / this.done) * (this.total - this.done);
  }

  private drawStatus(): void {
    if (!this.tty || this.total === 0) return;
    const newest = this.running.at(-1);
    const current = newest === undefined ? '' : this.running.length > 1 ? ` ${this.running.length} running, newest: ${newest}` : ` ${newest}`;
    let line = `[${this.summary()}]${current}`;
    const width = (this.out.columns || 100) - 1;
    if (line.length > width) line = line.slice(0, Math.max(0, width - 1)) + '…';
    this.out.write(`\r\x1b[2K${line}`);
    this.statusShown = true;
  }

  private clearStatus(): void {
    if (!this.statusShown) return;
    this.out.write('\r\x1b[2K');
    this.statusShown = false;
  }
}

export function formatEta(ms: number): string {
  const s = Math.round(ms / 1000);
  if (s < 60) return `${s} s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m} min ${String(s % 60).padStart(2, '0')} s`;
  return `${Math.floor(m / 60)} h ${String(m % 60).padStart(2, '0')} min`;
}
