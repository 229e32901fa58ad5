/**
 * Relaying one watch stream from the API server to the controller, event by event.
 *
 *   upstream bytes -> split at newlines -> decode -> stages -> gate -> write to the controller + trace
 *
 * Chunk boundaries never line up with events, so bytes are split at `\n` and each complete line is
 * forwarded as soon as it is complete, byte for byte. `stages` is where event-level faults go (wait
 * for the cluster view, hold a key's events, serialized delivery); the gate is the controller-wide
 * hold. The end of the upstream stream travels through the stages as an `end` marker, so a stage
 * that holds events also holds the end of the stream behind them.
 */
import type { IncomingMessage, OutgoingHttpHeaders } from 'node:http';
import { isObject, type KubeObject, type ObjectKey } from '../src/model/object-key.js';
import { markSharedReadOnly } from '../src/io/trace-io.js';
import type { WatchEventType } from '../src/model/trace.js';
import { keyOfAnswer } from './classify.js';
import type { DeliveryGate } from './gate.js';
import { flushHeadersOf, writeChunk, writeHeadTo, type ClientResponse } from './client-conn.js';

const WATCH_EVENT_TYPES: ReadonlySet<string> = new Set(['ADDED', 'MODIFIED', 'DELETED', 'BOOKMARK', 'ERROR']);

/** Splits a byte stream at newlines; keeps the incomplete tail for the next chunk. */
export class LineSplitter {
  private tail: Buffer[] = [];
  /**
   * Whether the lines the last `push` returned are, end to end, exactly the chunk it was given (no
   * bytes left over before it, none after): then the chunk itself can be written in their place.
   */
  wholeLines = false;

  /** The complete lines in `chunk` (each with its `\n`), joined to what was left over before. */
  push(chunk: Buffer): Buffer[] {
    const lines: Buffer[] = [];
    this.wholeLines = this.tail.length === 0;
    let start = 0;
    let nl: number;
    while ((nl = chunk.indexOf(0x0a, start)) >= 0) {
      // The chunk itself when it is one line (no view of it to make).
      const piece = start === 0 && nl === chunk.length - 1 ? chunk : chunk.subarray(start, nl + 1);
      if (this.tail.length > 0) {
        lines.push(Buffer.concat([...this.tail, piece]));
        this.tail = [];
      } else {
        lines.push(piece);
      }
      start = nl + 1;
    }
    if (start < chunk.length) {
      this.tail.push(chunk.subarray(start));
      this.wholeLines = false;
    }
    return lines;
  }

  /** Whatever is left without a final newline. */
  rest(): Buffer | undefined {
    if (this.tail.length === 0) return undefined;
    const rest = Buffer.concat(this.tail);
    this.tail = [];
    return rest;
  }
}

export interface RelayedWatchEvent {
  /** The exact bytes of the event line, newline included: what the controller receives. */
  raw: Buffer;
  /** Absent when the line is not a watch event the proxy understands (it is still forwarded). */
  type?: WatchEventType;
  object?: KubeObject;
  key?: ObjectKey | undefined;
  resourceVersion?: string | undefined;
  /** The end of the stream (no bytes): the controller's response ends when this is delivered. */
  end?: true;
  /** Set on delivery: the sequence number of the `watch-event` in the trace. */
  traceSeq?: number;
}

interface DecodedLine {
  type: WatchEventType;
  object: KubeObject;
  /** The object's key, once computed, when the object names its kind (so no stream's fallback decides it). */
  key?: ObjectKey;
}

/** The event's key; a shared line computes it once for every stream it reaches. */
function keyOfDecoded(decoded: DecodedLine, fallbackKind: string | undefined): ObjectKey | undefined {
  if (decoded.key !== undefined) return decoded.key;
  const key = keyOfAnswer(decoded.object, fallbackKind);
  const kind = decoded.object.kind;
  if (key !== undefined && typeof kind === 'string' && kind !== '') decoded.key = key;
  return key;
}

/**
 * The last event lines decoded, by their text. Several watches of one resource (informers of
 * several controllers, or of one controller's several caches) receive the very same line; it is
 * parsed once and its object shared, read-only, by their events and trace records. Secrets are
 * never shared: the trace writer redacts their values in place.
 */
const recentLines = new Map<string, DecodedLine>();
/**
 * Bounded by count and by their text's total length. Under load the slowest of many watchers of an
 * object fall well behind the fastest (in bench:proxy's 100 watchers of one object, beyond the last
 * 64 lines for 7-29% of the events), and each line that left the map is parsed again, once per
 * stream that is that far behind.
 */
const RECENT_LINES = 1024;
const RECENT_CHARS = 1024 * 1024;
let recentChars = 0;
const MAX_SHARED_LINE = 64 * 1024;

function parseLine(text: string): DecodedLine | null {
  let parsed: unknown;
  try {
    // JSON.parse skips the surrounding whitespace (the newline) itself; a blank line throws.
    parsed = JSON.parse(text);
  } catch {
    return null;
  }
  if (!isObject(parsed) || typeof parsed.type !== 'string' || !WATCH_EVENT_TYPES.has(parsed.type) || !isObject(parsed.object)) {
    return null;
  }
  return { type: parsed.type as WatchEventType, object: parsed.object as KubeObject };
}

/**
 * The last shared lines decoded (a ring, numbered from 1 in the order they were decoded), with a
 * copy of their bytes. The watchers of one object get the same lines in the same order, but their
 * streams interleave and the slowest fall behind the fastest (in bench:proxy's 100 watchers of one
 * object, often by more than a few lines). So each line links to the line that followed it on the
 * stream that decoded it first, and each stream remembers the last line it got (its LineCursor):
 * its next line is most often the linked one, found with one comparison of bytes whatever the lag
 * and however the lines of other resources interleave. Comparing bytes spares decoding the line to
 * text and hashing that for the map.
 */
interface RecentLine {
  n: number;
  raw: Buffer;
  decoded: DecodedLine;
  /** The number of the line that came next on the stream that decoded this one first (0: none yet). */
  next: number;
}
const RING_SIZE = 256;
/** The copies' total length is bounded too (large objects): past it the oldest lines leave the ring. */
const RING_BYTES = 1024 * 1024;
const ring: Array<RecentLine | undefined> = new Array<RecentLine | undefined>(RING_SIZE);
let newest = 0;
let ringBytes = 0;
/** A line that is not the linked one is looked for among the newest few. */
const NEWEST_FEW = 8;

/** Where one stream is among the recent lines: the number of the last one it received (0: none). */
export interface LineCursor {
  n: number;
}

/** Line `n` if the ring still holds it. */
function recentLine(n: number): RecentLine | undefined {
  const line = n > 0 ? ring[n % RING_SIZE] : undefined;
  return line !== undefined && line.n === n ? line : undefined;
}

/** Puts `line` (the newest) in the ring, in place of the line RING_SIZE before it and of older ones past RING_BYTES. */
function remember(line: RecentLine): void {
  const slot = line.n % RING_SIZE;
  ringBytes += line.raw.length - (ring[slot]?.raw.length ?? 0);
  ring[slot] = line;
  for (let n = line.n - RING_SIZE + 1; ringBytes > RING_BYTES && n < line.n; n++) {
    const old = recentLine(n);
    if (old === undefined) continue;
    ringBytes -= old.raw.length;
    ring[n % RING_SIZE] = undefined;
  }
}

/** How many lines the ring holds and their copies' total length (for tests). */
export function recentLinesHeld(): { lines: number; bytes: number } {
  let lines = 0;
  for (const line of ring) if (line !== undefined) lines++;
  return { lines, bytes: ringBytes };
}

function sameBytes(a: Buffer, b: Buffer): boolean {
  return a.length === b.length && a.equals(b);
}

/** The decoding of `raw` if it is a recent line; moves `cursor` on to it and links the stream's last line to it. */
function recent(raw: Buffer, cursor: LineCursor | undefined): DecodedLine | undefined {
  const last = cursor === undefined ? undefined : recentLine(cursor.n);
  const linked = last === undefined ? undefined : recentLine(last.next);
  let found = linked !== undefined && sameBytes(linked.raw, raw) ? linked : undefined;
  for (let n = newest; found === undefined && n > 0 && n > newest - NEWEST_FEW; n--) {
    const r = recentLine(n);
    if (r !== undefined && sameBytes(r.raw, raw)) found = r;
  }
  if (found === undefined) return undefined;
  follow(cursor, last, found);
  return found.decoded;
}

function follow(cursor: LineCursor | undefined, last: RecentLine | undefined, line: RecentLine): void {
  if (cursor !== undefined) cursor.n = line.n;
  if (last !== undefined && last.next === 0) last.next = line.n;
}

function decodeShared(raw: Buffer, cursor: LineCursor | undefined): DecodedLine | null {
  const known = recent(raw, cursor);
  if (known !== undefined) return known;
  const text = raw.toString('utf8');
  if (text.length > MAX_SHARED_LINE) return parseLine(text);
  let decoded = recentLines.get(text);
  if (decoded === undefined) {
    const parsed = parseLine(text);
    if (!parsed || parsed.object.kind === 'Secret' || parsed.object.kind === undefined) return parsed;
    decoded = parsed;
    while (recentLines.size > 0 && (recentLines.size >= RECENT_LINES || recentChars + text.length > RECENT_CHARS)) {
      const oldest = recentLines.keys().next().value!;
      recentLines.delete(oldest);
      recentChars -= oldest.length;
    }
    recentLines.set(text, decoded);
    recentChars += text.length;
    // The trace writer serializes a shared object once for all the streams that record it.
    markSharedReadOnly(decoded.object);
  }
  // A copy: the line is a slice of an upstream chunk, which must not stay alive through it.
  const line: RecentLine = { n: ++newest, raw: Buffer.from(raw), decoded, next: 0 };
  remember(line);
  follow(cursor, cursor === undefined ? undefined : recentLine(cursor.n), line);
  return decoded;
}

/** Whether `a` holds the very buffers of `b` (not copies), in the same order. */
function sameBuffers(a: Buffer[], b: Buffer[] | undefined): boolean {
  if (b === undefined || a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/** `cursor`: the stream's place among the recent lines (see LineCursor), moved on here. */
export function decodeWatchLine(raw: Buffer, fallbackKind: string | undefined, cursor?: LineCursor): RelayedWatchEvent {
  const decoded = decodeShared(raw, cursor);
  if (!decoded) return { raw };
  const { object, type } = decoded;
  const key = type !== 'ERROR' && type !== 'BOOKMARK' ? keyOfDecoded(decoded, fallbackKind) || undefined : undefined;
  const rv = object.metadata?.resourceVersion;
  // Every field in the literal (absent ones undefined): properties added later would need a
  // backing store of their own, an allocation per event and stream.
  return { raw, type, object, key, resourceVersion: typeof rv === 'string' ? rv : undefined };
}

/** A watch event line as the API server would write it. */
export function encodeWatchEvent(type: WatchEventType, object: KubeObject, fallbackKind?: string): RelayedWatchEvent {
  return decodeWatchLine(Buffer.from(JSON.stringify({ type, object }) + '\n'), fallbackKind);
}

/**
 * An event-level fault: passes the event on (now, later or never) by calling `next`, keeping the
 * order of the events it passes on.
 */
export type WatchEventStage = (event: RelayedWatchEvent, next: (event: RelayedWatchEvent) => void) => void;

export interface WatchRelayOptions {
  client: ClientResponse;
  gate: DeliveryGate;
  /** Kind of the watched resource, for events whose object lacks one. */
  kind?: string;
  /** False for non-JSON streams (protobuf): chunks are relayed as they come, without events. */
  decode: boolean;
  stages?: WatchEventStage[];
  /** Called once the response headers went to the controller. */
  onOpen: () => void;
  /** Called for each event line written to the controller; returns the trace sequence number. */
  onDelivered: (event: RelayedWatchEvent) => number | undefined;
  /** Called once the upstream ended and the controller got the end of the stream. */
  onEnd: () => void;
  /** Writing to the controller failed; the owner tears the stream down. */
  onFailure: (err: Error) => void;
}

export class WatchRelay {
  private readonly splitter = new LineSplitter();
  private readonly cursor: LineCursor = { n: 0 };
  private readonly stages: WatchEventStage[];
  private upstream: IncomingMessage | undefined;
  private stopped = false;
  private headersSent = false;
  /**
   * While the events of one upstream chunk are relayed, the bytes of those that pass the stages and
   * the gate at once collect here and go to the controller in one write at the end of the chunk
   * (their trace events are recorded as they pass, in order). Undefined outside a chunk.
   */
  private batch: Buffer[] | undefined;

  /** `nextAfter[i]` passes an event on to the stage after stage i: made once, not per event. */
  private readonly nextAfter: Array<(event: RelayedWatchEvent) => void>;

  constructor(private readonly o: WatchRelayOptions) {
    this.stages = o.stages ?? [];
    this.nextAfter = this.stages.map((_, i) => (e: RelayedWatchEvent) => this.route(e, i + 1));
  }

  get alive(): boolean {
    return !this.stopped;
  }

  /**
   * Sends the headers (flushed at once: client-go starts its timers before the first event). Later
   * calls do nothing: a stream whose upstream is attached late keeps the headers it was opened with.
   */
  open(headers: OutgoingHttpHeaders): void {
    if (this.headersSent) return;
    this.headersSent = true;
    const { client, gate } = this.o;
    gate.pass(() =>
      this.guard(() => {
        writeHeadTo(client, 200, undefined, headers);
        flushHeadersOf(client);
        this.o.onOpen();
      }),
    );
  }

  /** Relays the upstream's body from now on. */
  attach(upstream: IncomingMessage): void {
    this.upstream = upstream;
    upstream.on('data', (chunk: Buffer) => this.onChunk(chunk));
    upstream.on('end', () => this.onUpstreamEnd());
  }

  /** Sends the headers and relays `upstream` (the usual case). */
  start(headers: OutgoingHttpHeaders, upstream: IncomingMessage): void {
    this.open(headers);
    this.attach(upstream);
  }

  /** Passes an event the proxy made up (a stale view's synthetic ADDED) through the stages. */
  inject(event: RelayedWatchEvent): void {
    if (this.stopped) return;
    this.route(event, 0);
  }

  /** Ends the stream after the events already passed on (as the upstream's end would). */
  finish(): void {
    if (this.stopped) return;
    this.route({ raw: Buffer.alloc(0), end: true }, 0);
  }

  /**
   * Writes `event` and ends the stream now, bypassing the stages (whatever they hold is dropped):
   * how the in-stream 410 Expired of an unobserved-state fault is delivered.
   */
  endWith(event: RelayedWatchEvent): void {
    if (this.stopped) return;
    this.deliverBytes(event);
    this.deliverBytes({ raw: Buffer.alloc(0), end: true });
    this.upstream?.destroy();
  }

  /** Stops relaying (the exchange tears down the sockets). */
  stop(): void {
    this.stopped = true;
  }

  private onChunk(chunk: Buffer): void {
    if (this.stopped) return;
    if (!this.o.decode) {
      this.deliverBytes({ raw: chunk });
      return;
    }
    const lines = this.splitter.push(chunk);
    if (lines.length === 1) {
      this.route(decodeWatchLine(lines[0]!, this.o.kind, this.cursor), 0);
      return;
    }
    this.batch = [];
    try {
      for (let i = 0; i < lines.length; i++) this.route(decodeWatchLine(lines[i]!, this.o.kind, this.cursor), 0);
    } finally {
      this.flushBatch(this.splitter.wholeLines ? lines : undefined, chunk);
    }
  }

  private route(event: RelayedWatchEvent, stageIndex: number): void {
    if (this.stopped) return;
    const stage = this.stages[stageIndex];
    if (!stage) {
      this.deliverBytes(event);
      return;
    }
    stage(event, this.nextAfter[stageIndex]!);
  }

  private deliverBytes(event: RelayedWatchEvent): void {
    if (this.o.gate.isHeld) {
      this.deliverOnRelease(event);
      return;
    }
    // Not a closure per event: this runs once per event and stream.
    this.guard(this.writeEvent, event);
  }

  /**
   * Apart from deliverBytes, which runs per event and stream: a function that makes a closure
   * (even on a path not taken) has V8 allocate a context for what it captures at every call.
   */
  private deliverOnRelease(event: RelayedWatchEvent): void {
    this.upstream?.pause();
    this.o.gate.pass(() => this.guard(() => this.write(event)));
  }

  private readonly writeEvent = (event: RelayedWatchEvent | undefined): void => this.write(event!);

  /** Writes one event (or the end) to the controller, past the stages and the gate. */
  private write(event: RelayedWatchEvent): void {
    const { client } = this.o;
    if (event.end) {
      this.flushBatch();
      this.stopped = true;
      client.end();
      this.o.onEnd();
      return;
    }
    if (this.batch) {
      this.batch.push(event.raw);
    } else {
      this.afterWrite(writeChunk(client, event.raw));
    }
    if (event.type) {
      const seq = this.o.onDelivered(event);
      if (seq !== undefined) event.traceSeq = seq;
    }
  }

  /**
   * Writes what the current chunk collected in one piece: the chunk itself when it was made of
   * `lines` (whole lines only) and every one of them passed, in order; otherwise their copy.
   */
  private flushBatch(lines?: Buffer[], chunk?: Buffer): void {
    const batch = this.batch;
    this.batch = undefined;
    // Stopped meanwhile or not, these events were delivered (and recorded): send them while the
    // response is still open, as they would have been sent one by one.
    const client = this.o.client;
    if (!batch || batch.length === 0 || client.writableEnded || client.destroyed) return;
    try {
      this.afterWrite(writeChunk(client, batch.length === 1 ? batch[0]! : sameBuffers(batch, lines) ? chunk! : Buffer.concat(batch)));
    } catch (err) {
      if (this.stopped) return;
      this.stopped = true;
      this.o.onFailure(err as Error);
    }
  }

  /** Backpressure: a controller that reads slowly slows the upstream down, not the proxy's memory. */
  private afterWrite(flowing: boolean): void {
    const upstream = this.upstream;
    if (!upstream) return;
    if (!flowing) {
      upstream.pause();
      this.o.client.once('drain', this.resumeUpstream);
    } else if (upstream.isPaused()) {
      upstream.resume();
    }
  }

  /** Made once (see deliverOnRelease): resumes the upstream this relay reads now. */
  private readonly resumeUpstream = (): void => {
    this.upstream?.resume();
  };

  private guard(work: (event?: RelayedWatchEvent) => void, event?: RelayedWatchEvent): void {
    if (this.stopped) return;
    try {
      work(event);
    } catch (err) {
      this.stopped = true;
      this.o.onFailure(err as Error);
    }
  }

  private onUpstreamEnd(): void {
    if (this.stopped) return;
    const rest = this.splitter.rest();
    if (rest) this.route(decodeWatchLine(rest, this.o.kind, this.cursor), 0);
    this.finish();
  }
}
