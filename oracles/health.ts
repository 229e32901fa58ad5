/**
 * Controller-health oracle: signs that the controller itself broke, which the end state may not
 * show yet. Each is compared with the reference runs, so that what an unperturbed controller always
 * does (a handled error logged with its stack, a 403 it always gets) does not alarm:
 * - crash reports in controller.log: Go `panic:` / `fatal error:`, uncaught exceptions (Node's
 *   report ending in `Node.js vX`, `Uncaught ...`, unhandled promise rejections, Java's
 *   `Exception in thread`), Python tracebacks, and other stack traces;
 * - exits kperturb did not cause (a crash, a crash loop when it happens again);
 * - API errors that mean the request itself was wrong (403 Forbidden, 422 Invalid...). Races and
 *   restarts make correct controllers get 404, 409, 410 and 429, so those are not judged here.
 */
import type { ApiErrorCount } from '../src/model/controller-activity.js';
import type { Alarm, RunArtifacts } from '../src/model/results.js';

const ORACLE = 'health';

/** Statuses that say the controller sent a request it should not have. */
export const JUDGED_API_ERROR_STATUSES: ReadonlySet<number> = new Set([400, 401, 403, 405, 406, 413, 415, 422, 500]);

export type LogIncidentKind = 'panic' | 'fatal error' | 'uncaught exception' | 'unhandled rejection' | 'traceback' | 'stack trace';

export interface LogIncident {
  kind: LogIncidentKind;
  /** The incarnation whose output it was (from the `[n] ` prefix), if known. */
  incarnation?: number;
  /** 1-based line in controller.log. */
  line: number;
  /** The line that says what went wrong, e.g. `panic: runtime error: index out of range [3]`. */
  summary: string;
}

const PREFIX = /^\[(\d+)\] ?/;
const STACK_FRAME = /^\s+at \S|^\s+File ".*", line \d+|^goroutine \d+ \[/;
const ERROR_LINE = /\b([A-Z]\w*(Error|Exception)|Uncaught|panic|Traceback)\b/;

/** Crash reports in a controller log, in order. */
export function scanControllerLog(text: string): LogIncident[] {
  const lines = text.split('\n').map((raw) => {
    const m = PREFIX.exec(raw);
    return { incarnation: m ? Number(m[1]) : undefined, text: m ? raw.slice(m[0].length) : raw };
  });
  const incidents: LogIncident[] = [];
  const covered = new Set<number>();
  const add = (kind: LogIncidentKind, i: number, summary: string) => {
    const inc = lines[i]!.incarnation;
    incidents.push({ kind, line: i + 1, summary: summary.trim().slice(0, 300), ...(inc !== undefined ? { incarnation: inc } : {}) });
  };
  const cover = (from: number, to: number) => {
    for (let j = from; j <= to; j++) covered.add(j);
  };
  for (let i = 0; i < lines.length; i++) {
    const t = lines[i]!.text;
    let m: RegExpExecArray | null;
    if (/Observed a panic/.test(t)) {
      // controller-runtime recovers reconciler panics and logs them (often as one JSON line).
      const detail = /"panic":\s*"((?:[^"\\]|\\.)*)"/.exec(t)?.[1] ?? /Observed a panic.*/.exec(t)![0];
      add('panic', i, `panic: ${detail}`);
      cover(i, stackEnd(lines, i));
    } else if ((m = /^(panic|fatal error): (.*)/.exec(t))) {
      add(m[1] === 'panic' ? 'panic' : 'fatal error', i, t);
      cover(i, stackEnd(lines, i));
    } else if (/^Node\.js v\d+/.test(t)) {
      // Node prints its version last when an uncaught exception ends the process.
      const j = findBack(lines, i, (s) => /^(\w*Error|\w*Exception|Uncaught)\b|^\[?\w*Error\b/.test(s), 40);
      const already = incidents.find((inc) => inc.line === (j ?? i) + 1);
      // The stack printed above it was taken for a logged one: it is what killed the process.
      if (already) already.kind = 'uncaught exception';
      else add('uncaught exception', j ?? i, j !== undefined ? lines[j]!.text : 'the process died of an uncaught exception');
      cover(j ?? i, i);
    } else if ((m = /^(Uncaught\b.*)/.exec(t)) || (m = /^(Exception in thread .*)/.exec(t))) {
      add('uncaught exception', i, m[1]!);
      cover(i, stackEnd(lines, i));
    } else if (/UnhandledPromiseRejection|Unhandled promise rejection/i.test(t) && !covered.has(i)) {
      add('unhandled rejection', i, t);
      cover(i, stackEnd(lines, i));
    } else if (/^Traceback \(most recent call last\):/.test(t)) {
      let j = i + 1;
      while (j < lines.length && /^\s/.test(lines[j]!.text)) j++;
      add('traceback', j < lines.length ? j : i, j < lines.length ? lines[j]!.text : t);
      cover(i, j);
    } else if (STACK_FRAME.test(t) && !covered.has(i) && i > 0 && !covered.has(i - 1) && STACK_FRAME.test(lines[i + 1]?.text ?? '')) {
      // A stack trace nobody explained: name it by the line before the first frame.
      const head = findBack(lines, i, (s) => ERROR_LINE.test(s), 3) ?? i - 1;
      add('stack trace', head, lines[head]!.text);
      cover(head, stackEnd(lines, i));
    }
  }
  return incidents.filter((inc, idx, all) => all.findIndex((o) => o.line === inc.line) === idx);
}

function stackEnd(lines: ReadonlyArray<{ text: string }>, from: number): number {
  let j = from + 1;
  while (j < lines.length && (STACK_FRAME.test(lines[j]!.text) || /^\s+\S/.test(lines[j]!.text) || lines[j]!.text === '')) j++;
  return j - 1;
}

function findBack(lines: ReadonlyArray<{ text: string }>, from: number, test: (s: string) => boolean, max: number): number | undefined {
  for (let j = from - 1; j >= Math.max(0, from - max); j--) if (test(lines[j]!.text)) return j;
  return undefined;
}

/** The same crash in two runs: numbers, addresses and ids differ, the message does not. */
export function incidentSignature(inc: Pick<LogIncident, 'kind' | 'summary'>): string {
  const summary = inc.summary
    .replace(/\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b/gi, '<uuid>')
    .replace(/0x[0-9a-f]+/gi, '<addr>')
    .replace(/\d+/g, '<n>')
    .replace(/^\d{4}-\d\d-\d\dT\S+\s*/, '');
  return `${inc.kind}: ${summary}`;
}

function apiErrorSignature(e: Pick<ApiErrorCount, 'status' | 'verb' | 'resource'>): string {
  return `${e.status} ${e.verb} ${e.resource}`;
}

function exitText(e: { code: number | null; signal: string | null }): string {
  return e.signal ? `signal ${e.signal}` : `code ${e.code}`;
}

export function compareHealth(references: readonly RunArtifacts[], test: RunArtifacts): Alarm[] {
  const alarms: Alarm[] = [];

  if (test.controllerLog !== undefined) {
    const seen = new Set<string>();
    for (const r of references) for (const inc of scanControllerLog(r.controllerLog ?? '')) seen.add(incidentSignature(inc));
    const reported = new Set<string>();
    for (const inc of scanControllerLog(test.controllerLog)) {
      const sig = incidentSignature(inc);
      if (seen.has(sig) || reported.has(sig)) continue;
      reported.add(sig);
      const where = `controller.log line ${inc.line}${inc.incarnation !== undefined ? `, incarnation ${inc.incarnation}` : ''}`;
      alarms.push({
        oracle: ORACLE,
        check: 'crash-log',
        object: '(controller)',
        reference: ['none'],
        test: inc.summary,
        message: `the controller's log shows a ${inc.kind} that the reference runs never showed (${where}): ${inc.summary}`,
      });
    }
  }

  if (test.controllerExits !== undefined) {
    const unexpected = test.controllerExits.filter((e) => !e.expected);
    const refExits = new Set(references.flatMap((r) => (r.controllerExits ?? []).filter((e) => !e.expected).map(exitText)));
    const fresh = unexpected.filter((e) => !refExits.has(exitText(e)));
    if (fresh.length > 0) {
      const list = fresh.map((e) => `${exitText(e)} (incarnation ${e.incarnation})`).join(', ');
      alarms.push({
        oracle: ORACLE,
        check: 'unexpected-exit',
        object: '(controller)',
        reference: refExits.size > 0 ? [...refExits] : ['no unexpected exit'],
        test: fresh.map(exitText),
        message:
          unexpected.length > 1
            ? `the controller crashed ${unexpected.length} times without kperturb stopping it (a crash loop): ${list}`
            : `the controller exited without kperturb stopping it: ${list}; the reference runs never did`,
      });
    }
  }

  if (test.controllerActivity) {
    const seen = new Set(references.flatMap((r) => (r.controllerActivity?.apiErrors ?? []).map(apiErrorSignature)));
    for (const e of test.controllerActivity.apiErrors) {
      if (!JUDGED_API_ERROR_STATUSES.has(e.status) || seen.has(apiErrorSignature(e))) continue;
      const status = `${e.status}${e.reason ? ` ${e.reason}` : ''}`;
      const target = e.example.key ?? e.resource;
      alarms.push({
        oracle: ORACLE,
        check: 'api-error',
        object: target,
        reference: ['no such error'],
        test: status,
        message:
          `the controller got ${status} for ${e.verb} ${target}${e.resource.includes('/') ? ` ${e.resource.slice(e.resource.indexOf('/') + 1)}` : ''}` +
          `${e.count > 1 ? ` (${e.count} times)` : ''}, which the reference runs never got` +
          (e.example.message ? `: ${e.example.message}` : ''),
      });
    }
  }
  return alarms;
}
