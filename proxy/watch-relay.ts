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
import type { DeliveryGate } from './gate.js';
import { flushHeadersOf, writeChunk, writeHeadTo, type ClientResponse } from './client-conn.js';
import type { LineCursor, RelayedWatchEvent, WatchLines } from './watch-lines.js';

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

/** Whether `a` holds the very buffers of `b` (not copies), in the same order. */
function sameBuffers(a: Buffer[], b: Buffer[] | undefined): boolean {
  if (b === undefined || a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/**
 * Passes an event on to what follows a stage. Its receipt: the sequence number of the event's
 * `watch-event` in the trace when it reached the controller at once (undefined: held further on).
 */
export type PassOn = (event: RelayedWatchEvent) => number | undefined;

/**
 * An event-level fault: passes the event on (now, later or never) by calling `next`, keeping the
 * order of the events it passes on.
 */
export type WatchEventStage = (event: RelayedWatchEvent, next: PassOn) => void;

export interface WatchRelayOptions {
  client: ClientResponse;
  gate: DeliveryGate;
  /** Kind of the watched resource, for events whose object lacks one. */
  kind?: string;
  /** False for non-JSON streams (protobuf): chunks are relayed as they come, without events. */
  decode: boolean;
  /** The proxy's recent lines, shared by its streams (decoding a line once for all of them). */
  lines: WatchLines;
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
  private readonly nextAfter: PassOn[];

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
      this.route(this.o.lines.decode(lines[0]!, this.o.kind, this.cursor), 0);
      return;
    }
    this.batch = [];
    try {
      for (let i = 0; i < lines.length; i++) this.route(this.o.lines.decode(lines[i]!, this.o.kind, this.cursor), 0);
    } finally {
      this.flushBatch(this.splitter.wholeLines ? lines : undefined, chunk);
    }
  }

  /** Passes `event` to stage `stageIndex` (past the last: delivers it); its receipt when delivered at once. */
  private route(event: RelayedWatchEvent, stageIndex: number): number | undefined {
    if (this.stopped) return undefined;
    const stage = this.stages[stageIndex];
    if (!stage) return this.deliverBytes(event);
    stage(event, this.nextAfter[stageIndex]!);
    return undefined;
  }

  private deliverBytes(event: RelayedWatchEvent): number | undefined {
    if (this.o.gate.isHeld) {
      this.deliverOnRelease(event);
      return undefined;
    }
    // Not a closure per event: this runs once per event and stream.
    return this.guard(this.writeEvent, event);
  }

  /**
   * Apart from deliverBytes, which runs per event and stream: a function that makes a closure
   * (even on a path not taken) has V8 allocate a context for what it captures at every call.
   */
  private deliverOnRelease(event: RelayedWatchEvent): void {
    this.upstream?.pause();
    this.o.gate.pass(() => this.guard(() => this.write(event)));
  }

  private readonly writeEvent = (event: RelayedWatchEvent | undefined): number | undefined => this.write(event!);

  /** Writes one event (or the end) to the controller, past the stages and the gate; its trace sequence number. */
  private write(event: RelayedWatchEvent): number | undefined {
    const { client } = this.o;
    if (event.end) {
      this.flushBatch();
      this.stopped = true;
      client.end();
      this.o.onEnd();
      return undefined;
    }
    if (this.batch) {
      this.batch.push(event.raw);
    } else {
      this.afterWrite(writeChunk(client, event.raw));
    }
    return event.type ? this.o.onDelivered(event) : undefined;
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

  private guard<T>(work: (event?: RelayedWatchEvent) => T, event?: RelayedWatchEvent): T | undefined {
    if (this.stopped) return undefined;
    try {
      return work(event);
    } catch (err) {
      this.stopped = true;
      this.o.onFailure(err as Error);
      return undefined;
    }
  }

  private onUpstreamEnd(): void {
    if (this.stopped) return;
    const rest = this.splitter.rest();
    if (rest) this.route(this.o.lines.decode(rest, this.o.kind, this.cursor), 0);
    this.finish();
  }
}
