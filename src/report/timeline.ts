/**
 * A run's timeline for the HTML report, from its two traces: what the workload did, what the
 * controller sent and was shown (the proxy's trace), what the cluster did (kperturb's own watch),
 * and the moment of the fault. Rows are in trace order (`seq`), which interleaves both traces.
 */
import type { ObjectKey } from '../model/object-key.js';
import type { ResponseEvent, TraceEvent } from '../model/trace.js';
import type { RunTraces } from '../io/run-dir.js';

export type Lane = 'workload' | 'controller' | 'cluster' | 'fault';
export type Tone = 'read' | 'write' | 'shown' | 'error' | 'fault' | 'process' | 'step' | 'change' | 'note';

export interface TimelineRow {
  seq: number;
  /** Milliseconds since the run's first event. */
  atMs: number;
  lane: Lane;
  tone: Tone;
  text: string;
  /** The object the row is about, when it names one. */
  key?: ObjectKey;
}

export interface Timeline {
  rows: TimelineRow[];
  /** seq of the first fault event (the trigger), if the fault fired. */
  faultSeq?: number;
  /** Rows left out to keep the page readable. */
  omitted: number;
}

/** Rows beyond this are trimmed: reads first, then rows far from the fault. */
export const MAX_TIMELINE_ROWS = 400;

export function buildTimeline(traces: RunTraces, maxRows = MAX_TIMELINE_ROWS): Timeline {
  const events = [...traces.controller, ...traces.cluster].filter((e) => e.type !== 'header').sort((a, b) => a.seq - b.seq);
  const start = events.length > 0 ? Math.min(...events.map((e) => e.ts)) : 0;
  const responses = new Map<number, ResponseEvent>();
  for (const e of events) if (e.type === 'response') responses.set(e.id, e);
  const firstStart = events.find((e) => e.type === 'controller' && e.action === 'start')?.seq ?? Infinity;

  const rows: TimelineRow[] = [];
  const setup: string[] = [];
  let faultSeq: number | undefined;
  const row = (e: TraceEvent, lane: Lane, tone: Tone, text: string, key?: ObjectKey) =>
    rows.push({ seq: e.seq, atMs: e.ts - start, lane, tone, text, ...(key ? { key } : {}) });

  for (const e of events) {
    switch (e.type) {
      case 'workload-step':
        if (e.phase === 'start') row(e, 'workload', 'step', `step ${e.index + 1}: ${e.description}`);
        else if (e.phase === 'failed') row(e, 'workload', 'error', `step ${e.index + 1} failed: ${e.error ?? ''}`);
        else row(e, 'workload', 'note', `step ${e.index + 1} done`);
        break;
      case 'request': {
        const res = responses.get(e.id);
        const target = e.key ?? e.resource?.kind ?? e.resource?.resource ?? e.path;
        const sub = e.resource?.subresource ? ` ${e.resource.subresource}` : '';
        const status = res ? ` → ${res.status}${statusReason(res)}` : e.verb === 'watch' ? '' : ' → (no answer)';
        const read = e.verb === 'get' || e.verb === 'list' || e.verb === 'watch';
        const tone: Tone = res && res.status >= 400 ? 'error' : read ? 'read' : 'write';
        row(e, 'controller', tone, `${e.incarnation > 1 ? `[${e.incarnation}] ` : ''}sent ${e.verb} ${target}${sub}${status}`, e.key);
        break;
      }
      case 'watch-event':
        row(e, 'controller', 'shown', `shown ${e.eventType} ${e.key ?? ''}${e.resourceVersion ? ` (rv ${e.resourceVersion})` : ''}`, e.key);
        break;
      case 'fault':
        if (e.phase === 'not-injected') {
          row(e, 'fault', 'note', `the fault never fired: ${e.detail}`);
          break;
        }
        if (faultSeq === undefined) faultSeq = e.seq;
        row(e, 'fault', 'fault', `FAULT (${e.fault}, ${e.phase}): ${e.detail}`, e.key);
        break;
      case 'controller':
        row(
          e,
          'controller',
          'process',
          e.action === 'start'
            ? `controller started (incarnation ${e.incarnation})`
            : `controller exited (incarnation ${e.incarnation}, ${e.signal ? `signal ${e.signal}` : `code ${e.code}`})`,
        );
        break;
      case 'cluster-change':
        if (e.seq < firstStart) setup.push(e.key);
        else row(e, 'cluster', 'change', `${e.eventType} ${e.key} (rv ${e.resourceVersion})`, e.key);
        break;
      default:
        break;
    }
  }
  if (setup.length > 0) {
    rows.unshift({
      seq: 0,
      atMs: 0,
      lane: 'cluster',
      tone: 'note',
      text: `setup before the controller started: ${setup.length} change(s) (${abbreviate(setup)})`,
    });
  }
  return { ...trim(rows, faultSeq, maxRows), ...(faultSeq !== undefined ? { faultSeq } : {}) };
}

function statusReason(res: ResponseEvent): string {
  const o = res.object as { kind?: unknown; reason?: unknown } | undefined;
  return res.status >= 400 && o?.kind === 'Status' && typeof o.reason === 'string' ? ` ${o.reason}` : '';
}

function abbreviate(keys: string[]): string {
  return keys.length <= 4 ? keys.join(', ') : `${keys.slice(0, 4).join(', ')}, ...`;
}

function trim(rows: TimelineRow[], faultSeq: number | undefined, maxRows: number): { rows: TimelineRow[]; omitted: number } {
  if (rows.length <= maxRows) return { rows, omitted: 0 };
  let kept = rows.filter((r) => r.tone !== 'read');
  if (kept.length > maxRows) {
    const faultAt = Math.max(0, faultSeq === undefined ? 0 : kept.findIndex((r) => r.seq >= faultSeq));
    const from = Math.max(0, Math.min(faultAt - Math.floor(maxRows / 3), kept.length - maxRows));
    kept = kept.slice(from, from + maxRows);
  }
  return { rows: kept, omitted: rows.length - kept.length };
}
