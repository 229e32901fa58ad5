/** Reading and writing JSON-lines traces. */
import { createHash } from 'node:crypto';
import { createReadStream, createWriteStream, type WriteStream } from 'node:fs';
import { createInterface } from 'node:readline';
import { isObject } from './object-key.js';
import { UserInputError } from './errors.js';
import {
  TRACE_FORMAT,
  TraceSequence,
  type ClusterChangeEvent,
  type ControllerTraceEvent,
  type TraceEvent,
  type TraceSink,
  type TraceSource,
  type Unstamped,
} from './trace.js';

export interface TraceWriterOptions {
  /** Replace Secret data/stringData values by a stable hash (default true). */
  redactSecrets?: boolean;
}

export class TraceWriter implements TraceSink {
  private readonly out: WriteStream;
  private readonly redact: boolean;
  private closed = false;
  /** Events kept in memory too, so the coordinator can inspect a run without re-reading the file. */
  readonly events: TraceEvent[] = [];

  constructor(
    readonly file: string,
    readonly source: TraceSource,
    private readonly sequence: TraceSequence,
    options: TraceWriterOptions = {},
  ) {
    this.redact = options.redactSecrets ?? true;
    this.out = createWriteStream(file, { flags: 'w' });
    this.write({ seq: 0, ts: Date.now(), type: 'header', format: TRACE_FORMAT, source });
  }

  append(event: Unstamped<ControllerTraceEvent | ClusterChangeEvent>): number {
    const seq = this.sequence.take();
    const stamped = { seq, ts: Date.now(), ...event } as TraceEvent;
    if (this.redact) redactSecretsIn(stamped);
    this.write(stamped);
    return seq;
  }

  private write(event: TraceEvent): void {
    if (this.closed) return;
    this.events.push(event);
    this.out.write(JSON.stringify(event) + '\n');
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await new Promise<void>((resolve, reject) => this.out.end((err?: Error | null) => (err ? reject(err) : resolve())));
  }
}

/** A stable, non-reversible stand-in for a secret value: equal values stay equal, so diffs still work. */
export function hashSecretValue(value: string): string {
  return 'sha256:' + createHash('sha256').update(value).digest('hex').slice(0, 16);
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
        if (typeof v === 'string') data[k] = hashSecretValue(v);
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
        throw new UserInputError(file, `line ${lineNo}`, 'a complete JSON trace event (the file may be truncated or hand-edited)');
      }
      if (!isObject(parsed) || typeof parsed.type !== 'string' || typeof parsed.seq !== 'number') {
        throw new UserInputError(file, `line ${lineNo}`, 'an object with a string "type" and a numeric "seq"');
      }
      if (!sawHeader) {
        if (parsed.type !== 'header' || parsed.format !== TRACE_FORMAT) {
          throw new UserInputError(file, 'line 1', `a header line with format "${TRACE_FORMAT}" (is this a kperturb trace of this version?)`);
        }
        sawHeader = true;
      }
      yield parsed as unknown as TraceEvent;
    }
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') throw new UserInputError(file, undefined, 'an existing trace file');
    throw err;
  } finally {
    lines.close();
    input.destroy();
  }
  if (!sawHeader) throw new UserInputError(file, undefined, 'a non-empty kperturb trace');
}

export async function readTraceAll(file: string): Promise<TraceEvent[]> {
  const events: TraceEvent[] = [];
  for await (const e of readTrace(file)) events.push(e);
  return events;
}

export { TraceSequence };
