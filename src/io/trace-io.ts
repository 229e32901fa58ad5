/** Reading and writing JSON-lines traces. */
import { randomBytes } from 'node:crypto';
import { createReadStream, createWriteStream, type WriteStream } from 'node:fs';
import { createInterface } from 'node:readline';
import { isObject, type KubeObject } from '../model/object-key.js';
import { isCanonicalJson } from '../model/json-text.js';
import { ResultsError } from '../model/errors.js';
import { quote } from '../model/validate.js';
import { hashSecretValue, isHashedSecretValue } from '../model/secret-hash.js';
import {
  TRACE_EVENT_TYPES,
  TRACE_FORMAT,
  TraceSequence,
  isTraceEventType,
  type ControllerTraceEvent,
  type ClusterTraceEvent,
  type ResponseEvent,
  type TraceEvent,
  type TraceSink,
  type TraceSource,
  type Unstamped,
} from '../model/trace.js';

export interface TraceWriterOptions {
  /** Replace Secret data/stringData values by their keyed hash, see secret-hash.ts (default true). */
  redactSecrets?: boolean;
  /**
   * Keep every event in memory too (`events`), for a caller that inspects the run without reading
   * the file back. Off by default: a long run's trace would otherwise stay in the heap, and every
   * event kept is work for the garbage collector.
   */
  keepEvents?: boolean;
}

/**
 * Lines go to the file in batches: this long after the first line of a batch, or sooner past
 * FLUSH_CHARS. Each file write costs the event loop about as much as a proxied request (a hand-off
 * to libuv's thread pool and a callback), so one per turn of the event loop was still one per
 * request or two under load. Readers read a trace once it is closed, which writes the rest.
 */
const FLUSH_MS = 20;
const FLUSH_CHARS = 64 * 1024;

/**
 * Stands for a value already serialized while an event is serialized; replaced by that text after.
 * Random, so that no recorded string can be mistaken for it.
 */
const SPLICE_MARK = `\u0000kperturb-splice-${randomBytes(8).toString('hex')}`;
const SPLICE_MARK_JSON = JSON.stringify(SPLICE_MARK);

/**
 * Objects declared read-only (see markSharedReadOnly), with their JSON text once a writer has
 * serialized them (null before).
 */
const sharedJson = new WeakMap<object, string | null>();

/**
 * Declares that `object` does not change any more and is shared by several events (e.g. one watch
 * event line delivered on many streams): trace writers serialize it once and reuse the text. Secrets
 * (and lists of them) are never shared: the writer redacts their values in place.
 */
export function markSharedReadOnly(object: Record<string, unknown>): void {
  if (object.kind === 'Secret' || object.kind === 'SecretList') return;
  if (!sharedJson.has(object)) sharedJson.set(object, null);
}

export class TraceWriter implements TraceSink {
  private readonly out: WriteStream;
  private readonly redact: boolean;
  private readonly kept: TraceEvent[] | undefined;
  /** Lines not yet handed to the file stream. */
  private pending = '';
  private flushTimer: NodeJS.Timeout | undefined;
  private closed = false;

  constructor(
    readonly file: string,
    readonly source: TraceSource,
    private readonly sequence: TraceSequence,
    options: TraceWriterOptions = {},
  ) {
    this.redact = options.redactSecrets ?? true;
    this.kept = options.keepEvents ? [] : undefined;
    this.out = createWriteStream(file, { flags: 'w' });
    this.record({ seq: 0, ts: Date.now(), type: 'header', format: TRACE_FORMAT, source });
  }

  /** The events recorded so far (only with the `keepEvents` option). */
  get events(): TraceEvent[] {
    if (!this.kept) throw new Error(`trace ${this.file}: events are kept in memory only with the keepEvents option`);
    return this.kept;
  }

  append(event: Unstamped<ControllerTraceEvent | ClusterTraceEvent>): number {
    const seq = this.sequence.take();
    const stamped = { seq, ts: Date.now(), ...event } as TraceEvent;
    if (this.redact) redactSecretsIn(stamped);
    this.record(stamped);
    return seq;
  }

  /**
   * See TraceSink.appendAnswer. The text goes into the line as it is when it is an object exactly as
   * JSON.stringify writes it, no Secret can be in it (redaction needs the parsed object) and no
   * event is kept in memory; otherwise it is parsed and recorded as `append` records it.
   */
  appendAnswer(event: Unstamped<ResponseEvent>, objectJson: string): number {
    const text = withoutTrailingWhitespace(objectJson);
    if (!this.kept && text.charCodeAt(0) === 0x7b && !(this.redact && text.includes('"Secret')) && isCanonicalJson(text)) {
      const seq = this.sequence.take();
      if (!this.closed) this.push(spliced({ seq, ts: Date.now(), ...event }, text));
      return seq;
    }
    let parsed: unknown;
    try {
      parsed = JSON.parse(objectJson);
    } catch {
      parsed = undefined;
    }
    const answer: Unstamped<ResponseEvent> = { ...event };
    if (isObject(parsed)) answer.object = parsed as KubeObject;
    else delete answer.object;
    return this.append(answer);
  }

  private record(event: TraceEvent): void {
    if (this.closed) return;
    this.kept?.push(event);
    const object = 'object' in event ? event.object : undefined;
    const shared = object === undefined ? undefined : sharedJson.get(object);
    if (shared === undefined) {
      this.push(JSON.stringify(event));
      return;
    }
    let text = shared;
    if (text === null) {
      text = JSON.stringify(object);
      sharedJson.set(object!, text);
    }
    // The event's own copy keeps its object; only the line takes the text.
    const e = event as { object?: unknown };
    e.object = SPLICE_MARK;
    try {
      this.push(spliced(event, text, true));
    } finally {
      e.object = object;
    }
  }

  private push(line: string): void {
    this.pending += line + '\n';
    if (this.pending.length >= FLUSH_CHARS) {
      this.flush();
    } else {
      this.flushTimer ??= setTimeout(() => this.flush(), FLUSH_MS);
    }
  }

  private flush(): void {
    if (this.flushTimer) clearTimeout(this.flushTimer);
    this.flushTimer = undefined;
    if (this.pending === '') return;
    const chunk = this.pending;
    this.pending = '';
    this.out.write(chunk);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.flush();
    await new Promise<void>((resolve, reject) => this.out.end((err?: Error | null) => (err ? reject(err) : resolve())));
  }
}

/**
 * The event's line with `text` in place of its `object` (which, with `marked`, already holds the
 * splice mark; otherwise the event's `object` key is set to it here, keeping its place among the keys).
 */
function spliced(event: object, text: string, marked = false): string {
  if (!marked) (event as { object?: unknown }).object = SPLICE_MARK;
  const line = JSON.stringify(event);
  const at = line.indexOf(SPLICE_MARK_JSON);
  return line.slice(0, at) + text + line.slice(at + SPLICE_MARK_JSON.length);
}

/** Drops the whitespace JSON allows after a value (an API server may end its answer with a newline). */
function withoutTrailingWhitespace(text: string): string {
  let end = text.length;
  for (;;) {
    const c = text.charCodeAt(end - 1);
    if (c !== 0x0a && c !== 0x20 && c !== 0x0d && c !== 0x09) break;
    end--;
  }
  return end === text.length ? text : text.slice(0, end);
}

/**
 * Replaces the values of every Secret in a map of objects by their key (`Secret/<ns>/<name>`) with
 * hashes, in place, as traces have them (list items carry no kind, so the key decides).
 */
export function redactSecretObjects(objects: Readonly<Record<string, unknown>>): void {
  for (const [key, obj] of Object.entries(objects)) if (key.startsWith('Secret/') && isObject(obj)) redactSecretObject(obj);
}

function redactSecretObject(obj: Record<string, unknown>): void {
  for (const field of ['data', 'stringData']) {
    const data = obj[field];
    if (isObject(data)) {
      for (const [k, v] of Object.entries(data)) {
        if (typeof v === 'string' && !isHashedSecretValue(v)) data[k] = hashSecretValue(v);
      }
    }
  }
}

/** Redact Secrets wherever they sit in an event: the object, a list's items, a request body. */
function redactSecretsIn(event: TraceEvent): void {
  const candidates: unknown[] = [];
  if ('object' in event) candidates.push(event.object);
  if ('body' in event) candidates.push(event.body);
  const isSecretRequest = event.type === 'request' && event.resource?.resource === 'secrets';
  for (const c of candidates) {
    if (!isObject(c)) continue;
    if (c.kind === 'Secret' || (isSecretRequest && c.kind === undefined)) redactSecretObject(c);
    if (c.kind === 'SecretList' || (isSecretRequest && Array.isArray(c.items))) {
      for (const item of (c.items as unknown[]) ?? []) if (isObject(item)) redactSecretObject(item);
    }
  }
}

/** Streams a trace file, validating each line; errors name the file and the line. */
export async function* readTrace(file: string): AsyncGenerator<TraceEvent> {
  const input = createReadStream(file, { encoding: 'utf8' });
  const lines = createInterface({ input, crlfDelay: Infinity });
  let lineNo = 0;
  let sawHeader = false;
  try {
    for await (const line of lines) {
      lineNo++;
      if (line.trim() === '') continue;
      let parsed: unknown;
      try {
        parsed = JSON.parse(line);
      } catch {
        throw new ResultsError(file, `line ${lineNo}`, 'a complete JSON trace event (the file may be truncated or hand-edited)');
      }
      if (!isObject(parsed) || typeof parsed.type !== 'string' || typeof parsed.seq !== 'number') {
        throw new ResultsError(file, `line ${lineNo}`, 'an object with a string "type" and a numeric "seq"');
      }
      if (!isTraceEventType(parsed.type)) {
        throw new ResultsError(file, `line ${lineNo}`, `an event of a known type (${TRACE_EVENT_TYPES.join(', ')}; got ${quote(parsed.type)})`);
      }
      if (!sawHeader) {
        if (parsed.type !== 'header' || parsed.format !== TRACE_FORMAT) {
          throw new ResultsError(file, 'line 1', `a header line with format "${TRACE_FORMAT}" (is this a kperturb trace of this version?)`);
        }
        sawHeader = true;
      }
      yield parsed as unknown as TraceEvent;
    }
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') throw new ResultsError(file, undefined, 'an existing trace file');
    throw err;
  } finally {
    lines.close();
    input.destroy();
  }
  if (!sawHeader) throw new ResultsError(file, undefined, 'a non-empty kperturb trace');
}

export async function readTraceAll(file: string): Promise<TraceEvent[]> {
  const events: TraceEvent[] = [];
  for await (const e of readTrace(file)) events.push(e);
  return events;
}

export { TraceSequence };
