/** Reading and writing JSON-lines traces. */
import { randomBytes } from 'node:crypto';
import { createReadStream, createWriteStream, type WriteStream } from 'node:fs';
import { createInterface } from 'node:readline';
import { isObject, type KubeObject, type ObjectKey } from '../model/object-key.js';
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
  type RequestEvent,
  type ResponseEvent,
  type SharedTextSlot,
  type TraceEvent,
  type TraceSink,
  type TraceSource,
  type Unstamped,
  type WatchEventType,
  watchDeliveryEvent,
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
 * FLUSH_BYTES. Each file write costs the event loop about as much as a proxied request (a hand-off
 * to libuv's thread pool and a callback), so one per turn of the event loop was still one per
 * request or two under load. Readers read a trace once it is closed, which writes the rest. Under a
 * watch storm (100 watchers of an object: about 80 KiB of trace per change) batches of 256 KiB cost
 * the process about a third of the CPU time per byte that batches of 64 KiB did (write calls, the
 * thread pool's wake-ups), about 0.3 us per watch event.
 */
const FLUSH_MS = 20;
const FLUSH_BYTES = 256 * 1024;

/**
 * Lines are encoded into a buffer of this size as they are recorded (a batch is FLUSH_BYTES; the
 * rest is room for the line that crosses it). Encoding each line once, into bytes, and copying a
 * shared object's bytes as they are (see appendWatchEvent) is what keeps a watch event cheap: 100
 * watchers of an object write its text 100 times, and a batch of strings encoded that text to UTF-8
 * again for each of its lines. A line longer than the buffer is written on its own.
 */
const BUFFER_BYTES = FLUSH_BYTES + 64 * 1024;

/**
 * Stands for a value already serialized while an event is serialized; replaced by that text after.
 * Random, so that no recorded string can be mistaken for it.
 */
const SPLICE_MARK = `\u0000kperturb-splice-${randomBytes(8).toString('hex')}`;
const SPLICE_MARK_JSON = JSON.stringify(SPLICE_MARK);

/** A shared object's JSON text as UTF-8, and the end of the last watch event line written with it (what a SharedTextSlot holds here). */
interface SharedText {
  json: Buffer;
  /** What follows a watch event's `id` in its line, for the event type, key and resourceVersion named here. */
  tail?: Buffer;
  tailEventType?: string;
  tailKey?: string | undefined;
  tailResourceVersion?: string | undefined;
}

/** The end of a line whose object ends it: the event's closing brace and the newline. */
const CLOSE_LINE = Buffer.from('}\n');

/** The keys of a response whose answer is still text, as the proxy makes them (exchange.ts), in order. */
const ANSWER_KEYS = ['type', 'id', 'status', 'object', 'durationMs'] as const;
const NO_OPTIONAL_KEYS: ReadonlySet<string> = new Set();

/** Whether the event's own keys are `keys` in that order (those in `optional` may be missing), and no other. */
function hasKeysInOrder(event: object, keys: readonly string[], optional: ReadonlySet<string>): boolean {
  let at = 0;
  for (const k in event) {
    while (at < keys.length && keys[at] !== k) {
      if (!optional.has(keys[at]!)) return false;
      at++;
    }
    if (at === keys.length) return false;
    at++;
  }
  return at === keys.length;
}

/** A whole number below 2^31: writeDigits writes it as JSON.stringify does, with int32 arithmetic. */
function isSmallWholeNumber(n: unknown): n is number {
  return typeof n === 'number' && (n | 0) === n && n >= 0;
}

/**
 * Writes the decimal digits of `n` (see isSmallWholeNumber) at `at`; returns where they end. In
 * int32 arithmetic: with Math.floor the digits' quotients were doubles, boxed on the heap (about 50
 * bytes of garbage per watch event line in a heap sampling profile).
 */
function writeDigits(buf: Buffer, at: number, n: number): number {
  let end = at + 1;
  for (let x = n; x >= 10; x = (x / 10) | 0) end++;
  for (let i = end - 1, x = n; i >= at; i--, x = (x / 10) | 0) buf[i] = 0x30 + (x % 10);
  return end;
}

/** A number as JSON.stringify writes it, when that is what a template literal writes too (finite numbers). */
function isPlainNumber(n: unknown): n is number {
  return typeof n === 'number' && Number.isFinite(n);
}

export class TraceWriter implements TraceSink {
  private readonly out: WriteStream;
  private readonly redact: boolean;
  private readonly kept: TraceEvent[] | undefined;
  /** Lines not yet handed to the file stream: the first `used` bytes of `batch`. */
  private batch: Buffer = Buffer.allocUnsafe(BUFFER_BYTES);
  private used = 0;
  /** Batch buffers whose bytes the file stream has written, for the next batches. */
  private readonly spareBuffers: Buffer[] = [];
  private flushTimer: NodeJS.Timeout | undefined;
  private closed = false;
  /** The last answer written unparsed (see verbatimAnswer). */
  private lastVerbatim: VerbatimAnswer | undefined;
  /** The end of the last request line written to each path (see pushRequest). */
  private readonly requestTails = new Map<string, RequestTail>();
  /** The millisecond of `middle`, what a watch event's line has between seq and id (see watchEventMiddle). */
  private middleTs = -1;
  private middle: Buffer = Buffer.alloc(0);

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
    if (event.type === 'request' && !this.kept && !this.closed && this.pushRequest(seq, event)) return seq;
    this.recordAs(seq, event);
    return seq;
  }

  /** Records `event` under `seq`, stamped now, its Secrets redacted. */
  private recordAs(seq: number, event: Unstamped<ControllerTraceEvent | ClusterTraceEvent>): void {
    const stamped = { seq, ts: Date.now(), ...event } as TraceEvent;
    if (this.redact) redactSecretsIn(stamped);
    this.record(stamped);
  }

  /**
   * See TraceSink.appendAnswer. The text goes into the line as it is when it is an object exactly as
   * JSON.stringify writes it, no Secret can be in it (redaction needs the parsed object) and no
   * event is kept in memory; otherwise it is parsed and recorded as `append` records it.
   */
  appendAnswer(event: Unstamped<ResponseEvent>, objectJson: string): number {
    const text = withoutTrailingWhitespace(objectJson);
    const verbatim = this.kept ? undefined : this.verbatimAnswer(text);
    if (verbatim) {
      const seq = this.sequence.take();
      if (!this.closed && !this.pushAnswer(seq, event, verbatim.bytes)) this.pushSpliced({ seq, ts: Date.now(), ...event }, verbatim.text);
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
    this.push(JSON.stringify(event));
  }

  /**
   * See TraceSink.appendWatchEvent. A watch event whose object is shared (`shared`: one event line
   * delivered to many watchers) is written without JSON.stringify: this runs once per event and
   * watcher, and stringifying the envelope cost more than the rest of the event's trace together.
   * The watchers of an object get events that differ only in `seq`, `ts` and `id`, so all that
   * follows `id` (the event type, key, resourceVersion and the object, as bytes) is made once per
   * object, kept in its slot and copied. The line holds the bytes JSON.stringify writes for the
   * event `watchDeliveryEvent` makes; an event without a slot (or one the fast line cannot hold) is
   * made and recorded as `append` records it. A shared object is never a Secret (the proxy does not
   * share Secrets) and a watch event has no body, so there is nothing to redact.
   */
  appendWatchEvent(
    id: number,
    eventType: WatchEventType,
    key: ObjectKey | undefined,
    resourceVersion: string | undefined,
    object: KubeObject,
    shared?: SharedTextSlot,
  ): number {
    if (this.kept || this.closed || shared === undefined) return this.append(watchDeliveryEvent(id, eventType, key, resourceVersion, object));
    const seq = this.sequence.take();
    if (!this.pushWatchEventLine(seq, id, eventType, key, resourceVersion, object, shared))
      this.recordAs(seq, watchDeliveryEvent(id, eventType, key, resourceVersion, object));
    return seq;
  }

  /** appendWatchEvent's line for a shared object (false, having written nothing, if a value is not what the line can hold). */
  private pushWatchEventLine(
    seq: number,
    id: number,
    eventType: WatchEventType,
    key: ObjectKey | undefined,
    resourceVersion: string | undefined,
    object: KubeObject,
    shared: SharedTextSlot,
  ): boolean {
    if (!Number.isFinite(id) || typeof eventType !== 'string') return false;
    if ((key !== undefined && typeof key !== 'string') || (resourceVersion !== undefined && typeof resourceVersion !== 'string')) return false;
    const text = (shared.text ??= { json: Buffer.from(JSON.stringify(object), 'utf8') } satisfies SharedText) as SharedText;
    let tail = text.tail;
    if (tail === undefined || text.tailEventType !== eventType || text.tailKey !== key || text.tailResourceVersion !== resourceVersion) {
      // JSON.stringify leaves out a key whose value is undefined, as if it were absent.
      const keys =
        `,"eventType":${jsonString(eventType)}` +
        (key === undefined ? '' : `,"key":${jsonString(key)}`) +
        (resourceVersion === undefined ? '' : `,"resourceVersion":${jsonString(resourceVersion)}`);
      tail = text.tail = Buffer.concat([Buffer.from(`${keys},"object":`, 'utf8'), text.json, CLOSE_LINE]);
      text.tailEventType = eventType;
      text.tailKey = key;
      text.tailResourceVersion = resourceVersion;
    }
    // Numbers only besides the fixed keys: one byte per character.
    if (!isSmallWholeNumber(seq) || !isSmallWholeNumber(id)) {
      return this.pushHeadAndTail(`{"seq":${seq},"ts":${Date.now()},"type":"watch-event","id":${id}`, tail);
    }
    // The head without making it as a string (this runs per event and watcher): `{"seq":`, the
    // digits of seq, what lies between them and the id's digits (the same for every event of one
    // millisecond), the digits of id.
    const middle = this.watchEventMiddle();
    const size = 7 + 16 + middle.length + 16 + tail.length;
    if (size > BUFFER_BYTES) return false;
    if (this.used + size > BUFFER_BYTES) this.flush();
    const batch = this.batch;
    let at = this.used;
    batch[at] = 0x7b; // {"seq":
    batch[at + 1] = 0x22;
    batch[at + 2] = 0x73;
    batch[at + 3] = 0x65;
    batch[at + 4] = 0x71;
    batch[at + 5] = 0x22;
    batch[at + 6] = 0x3a;
    at = writeDigits(batch, at + 7, seq);
    batch.set(middle, at);
    at = writeDigits(batch, at + middle.length, id);
    batch.set(tail, at);
    this.used = at + tail.length;
    this.batched();
    return true;
  }

  /**
   * The answer as bytes to copy into its line unparsed, when its text can go there as it is (see
   * appendAnswer). The last such text is kept with its bytes: a controller reads the same object
   * again and again, and checking the text (isCanonicalJson) and encoding it cost about as much as
   * the rest of the record; the same text gets the same verdict, this writer's options being fixed.
   */
  private verbatimAnswer(text: string): VerbatimAnswer | undefined {
    const last = this.lastVerbatim;
    if (last !== undefined && last.text === text) return last;
    if (text.charCodeAt(0) !== 0x7b || (this.redact && text.includes('"Secret')) || !isCanonicalJson(text)) return undefined;
    return (this.lastVerbatim = { text, bytes: Buffer.from(text, 'utf8') });
  }

  /**
   * A response whose answer is canonical JSON text (see appendAnswer), written without
   * JSON.stringify: this runs once per request, and stringifying the envelope with a splice mark,
   * finding the mark and slicing the line around it cost about as much as the rest of the record.
   * Writes the bytes JSON.stringify writes for `{ seq, ts, ...event }` with `object` the answer,
   * for an event of the proxy's shape (type, id, status, object, durationMs; numbers); returns
   * false, having written nothing, for any other (appendAnswer then splices as before).
   */
  private pushAnswer(seq: number, event: Unstamped<ResponseEvent>, text: Buffer): boolean {
    const { type, id, status, object, durationMs } = event;
    if (type !== 'response' || object !== undefined || !isPlainNumber(id) || !isPlainNumber(status) || !isPlainNumber(durationMs)) return false;
    if (!hasKeysInOrder(event, ANSWER_KEYS, NO_OPTIONAL_KEYS)) return false;
    // Numbers only besides the fixed keys: one byte per character.
    const head = `{"seq":${seq},"ts":${Date.now()},"type":"response","id":${id},"status":${status},"object":`;
    const end = `,"durationMs":${durationMs}}\n`;
    const size = head.length + text.length + end.length;
    if (size > BUFFER_BYTES) return false;
    if (this.used + size > BUFFER_BYTES) this.flush();
    const batch = this.batch;
    let used = this.used + batch.write(head, this.used, 'latin1');
    batch.set(text, used);
    used += text.length;
    this.used = used + batch.write(end, used, 'latin1');
    this.batched();
    return true;
  }

  /**
   * A request line without a body, written without JSON.stringify when all that follows its
   * `incarnation` (method, path, query, verb, resource, key, bodyBytes, content type) is what the
   * last request to the same path had: a controller sends the same few requests over and over, and
   * serializing each record was about a third of the trace's cost per request. Writes the bytes
   * JSON.stringify writes for `{ seq, ts, ...event }`; returns false, having written nothing, for an
   * event of another shape (`append` then records it as usual). A request without a body has
   * nothing to redact.
   */
  private pushRequest(seq: number, event: Unstamped<RequestEvent>): boolean {
    const { id, incarnation, path } = event;
    if ('body' in event || !isPlainNumber(id) || !isPlainNumber(incarnation) || typeof path !== 'string') return false;
    const ts = Date.now();
    // Numbers only besides the fixed keys: one byte per character.
    const head = `{"seq":${seq},"ts":${ts},"type":"request","id":${id},"incarnation":${incarnation}`;
    let known = this.requestTails.get(path);
    if (known === undefined || !sameRequestTail(known, event)) {
      const line = JSON.stringify({ seq, ts, ...event });
      // Another order of keys, or values a snapshot cannot hold: the usual path.
      const keys = Object.keys(event);
      const values = line.startsWith(head) && keys[0] === 'type' && keys[1] === 'id' && keys[2] === 'incarnation' ? requestTailValues(event) : undefined;
      if (!values) return false;
      if (this.requestTails.size >= REQUEST_TAILS) this.requestTails.clear();
      known = { keys, values, tail: Buffer.from(line.slice(head.length) + '\n', 'utf8') };
      this.requestTails.set(path, known);
    }
    return this.pushHeadAndTail(head, known.tail);
  }

  /** What a watch event's line has between its seq and its id's digits now: `,"ts":<now>,"type":"watch-event","id":`. */
  private watchEventMiddle(): Buffer {
    const now = Date.now();
    if (now !== this.middleTs) {
      this.middleTs = now;
      this.middle = Buffer.from(`,"ts":${now},"type":"watch-event","id":`, 'latin1');
    }
    return this.middle;
  }

  /** Appends a line made of `head` (one byte per character) and `tail` (bytes, newline included); false, having written nothing, if it does not fit a batch. */
  private pushHeadAndTail(head: string, tail: Buffer): boolean {
    const size = head.length + tail.length;
    if (size > BUFFER_BYTES) return false;
    if (this.used + size > BUFFER_BYTES) this.flush();
    const used = this.used + this.batch.write(head, this.used, 'latin1');
    this.batch.set(tail, used);
    this.used = used + tail.length;
    this.batched();
    return true;
  }

  /** Appends `line` and a newline to the batch. */
  private push(line: string): void {
    // At most 3 bytes per UTF-16 unit: the bound that spares measuring the line first.
    if (this.used + 3 * line.length + 1 > BUFFER_BYTES) {
      this.flush();
      if (3 * line.length + 1 > BUFFER_BYTES) {
        this.out.write(line + '\n');
        return;
      }
    }
    this.used += this.batch.write(line, this.used, 'utf8');
    this.batch[this.used++] = 0x0a;
    this.batched();
  }

  /**
   * Appends the event's line with the bytes of `object` (JSON text) in place of its `object` (the
   * event's `object` key is set to the splice mark here, keeping its place among the keys).
   */
  private pushSpliced(event: object, object: Buffer | string): void {
    (event as { object?: unknown }).object = SPLICE_MARK;
    const line = JSON.stringify(event);
    const at = line.indexOf(SPLICE_MARK_JSON);
    const objectBytes = typeof object === 'string' ? 3 * object.length : object.length;
    if (this.used + 3 * line.length + objectBytes + 1 > BUFFER_BYTES) {
      this.flush();
      if (3 * line.length + objectBytes + 1 > BUFFER_BYTES) {
        const text = typeof object === 'string' ? object : object.toString('utf8');
        this.out.write(line.slice(0, at) + text + line.slice(at + SPLICE_MARK_JSON.length) + '\n');
        return;
      }
    }
    const batch = this.batch;
    let used = this.used + batch.write(line.slice(0, at), this.used, 'utf8');
    used += typeof object === 'string' ? batch.write(object, used, 'utf8') : object.copy(batch, used);
    used += batch.write(line.slice(at + SPLICE_MARK_JSON.length), used, 'utf8');
    batch[used++] = 0x0a;
    this.used = used;
    this.batched();
  }

  private batched(): void {
    if (this.used >= FLUSH_BYTES) {
      this.flush();
    } else {
      this.flushTimer ??= setTimeout(this.flushLater, FLUSH_MS);
    }
  }

  /**
   * Made once: an arrow function in `batched` (which runs per line) would have V8 allocate a context
   * for `this` at every call, timer or not.
   */
  private readonly flushLater = (): void => this.flush();

  private flush(): void {
    if (this.flushTimer) clearTimeout(this.flushTimer);
    this.flushTimer = undefined;
    if (this.used === 0) return;
    // The stream keeps the bytes it was given until they are written: the next batch goes to another
    // buffer, one written already when there is one (a new 128 KiB buffer per batch was a good part
    // of the garbage collector's work under a watch storm).
    const full = this.batch;
    const chunk = full.subarray(0, this.used);
    this.batch = this.spareBuffers.pop() ?? Buffer.allocUnsafe(BUFFER_BYTES);
    this.used = 0;
    this.out.write(chunk, () => {
      if (this.spareBuffers.length < 2) this.spareBuffers.push(full);
    });
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.flush();
    await new Promise<void>((resolve, reject) => this.out.end((err?: Error | null) => (err ? reject(err) : resolve())));
  }
}

/** An answer's text that can go into its line as it is, and its UTF-8 bytes. */
interface VerbatimAnswer {
  text: string;
  bytes: Buffer;
}

/** Paths whose last request line's end a writer keeps (see pushRequest); past this many it starts afresh. */
const REQUEST_TAILS = 1024;

/**
 * A snapshot of a request event's keys and of its values past `incarnation`, with the end of its
 * line (what JSON.stringify writes after `incarnation`, and the newline). A value is a primitive or,
 * for a plain object of primitives (query, resource), a FlatObject.
 */
interface RequestTail {
  keys: string[];
  values: unknown[];
  tail: Buffer;
}

/** A copy of a plain object whose values are all primitives, its keys in order. */
class FlatObject {
  constructor(
    readonly keys: string[],
    readonly values: unknown[],
  ) {}
}

/** Keys before these indexes (type, id, incarnation) are written in the line's head. */
const REQUEST_HEAD_KEYS = 3;

function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== 'object' || value === null) return false;
  const proto: unknown = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

/** A snapshot of `value` for RequestTail, or undefined if it is neither a primitive nor a flat plain object. */
function flatSnapshot(value: unknown): { value: unknown } | undefined {
  if (typeof value !== 'object' || value === null) return typeof value === 'function' ? undefined : { value };
  if (!isPlainObject(value)) return undefined;
  const keys: string[] = [];
  const values: unknown[] = [];
  for (const k in value) {
    const v = value[k];
    if ((typeof v === 'object' && v !== null) || typeof v === 'function') return undefined;
    keys.push(k);
    values.push(v);
  }
  return { value: new FlatObject(keys, values) };
}

/** The values past `incarnation` of a request event, as RequestTail keeps them; undefined if one cannot be kept. */
function requestTailValues(event: object): unknown[] | undefined {
  const values: unknown[] = [];
  let i = 0;
  for (const k in event) {
    if (i++ < REQUEST_HEAD_KEYS) {
      values.push(undefined);
      continue;
    }
    const snap = flatSnapshot((event as Record<string, unknown>)[k]);
    if (!snap) return undefined;
    values.push(snap.value);
  }
  return values;
}

function sameFlatValue(kept: unknown, value: unknown): boolean {
  if (!(kept instanceof FlatObject)) return kept === value && (typeof value !== 'object' || value === null);
  if (!isPlainObject(value)) return false;
  let i = 0;
  for (const k in value) {
    if (kept.keys[i] !== k || kept.values[i] !== value[k]) return false;
    i++;
  }
  return i === kept.keys.length;
}

/** Whether `event` has the keys of `known`, in its order, and its values past `incarnation`. */
function sameRequestTail(known: RequestTail, event: object): boolean {
  let i = 0;
  for (const k in event) {
    if (known.keys[i] !== k) return false;
    if (i >= REQUEST_HEAD_KEYS && !sameFlatValue(known.values[i], (event as Record<string, unknown>)[k])) return false;
    i++;
  }
  return i === known.keys.length;
}

/** `text` as JSON.stringify writes a string: quoted as it is unless a character needs escaping. */
function jsonString(text: string): string {
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    // Quotes, backslashes, control characters, and surrogates (JSON.stringify escapes lone ones).
    if (c < 0x20 || c === 0x22 || c === 0x5c || (c >= 0xd800 && c <= 0xdfff)) return JSON.stringify(text);
  }
  return `"${text}"`;
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
