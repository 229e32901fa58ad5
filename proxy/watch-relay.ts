/**
 * Relaying one watch stream from the API server to the controller, event by event.
 *
 *   upstream bytes -> split at newlines -> decode -> stages -> gate -> write to the controller + trace
 *
 * Chunk boundaries never line up with events, so bytes are split at `\n` and each complete line is
 * forwarded as soon as it is complete, byte for byte. `stages` is where event-level faults go (hold a
 * key's events, end the stream with an in-stream 410...); the gate is the controller-wide hold.
 */
import type { IncomingMessage, OutgoingHttpHeaders, ServerResponse } from 'node:http';
import { isObject, type KubeObject, type ObjectKey } from '../src/model/object-key.js';
import type { WatchEventType } from '../src/model/trace.js';
import { keyOfAnswer } from './classify.js';
import type { DeliveryGate } from './gate.js';

const WATCH_EVENT_TYPES: ReadonlySet<string> = new Set(['ADDED', 'MODIFIED', 'DELETED', 'BOOKMARK', 'ERROR']);

/** Splits a byte stream at newlines; keeps the incomplete tail for the next chunk. */
export class LineSplitter {
  private tail: Buffer[] = [];

  /** The complete lines in `chunk` (each with its `\n`), joined to what was left over before. */
  push(chunk: Buffer): Buffer[] {
    const lines: Buffer[] = [];
    let start = 0;
    let nl: number;
    while ((nl = chunk.indexOf(0x0a, start)) >= 0) {
      const piece = chunk.subarray(start, nl + 1);
      if (this.tail.length > 0) {
        lines.push(Buffer.concat([...this.tail, piece]));
        this.tail = [];
      } else {
        lines.push(piece);
      }
      start = nl + 1;
    }
    if (start < chunk.length) this.tail.push(chunk.subarray(start));
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
  key?: ObjectKey;
  resourceVersion?: string;
}

export function decodeWatchLine(raw: Buffer, fallbackKind: string | undefined): RelayedWatchEvent {
  const text = raw.toString('utf8').trim();
  if (!text) return { raw };
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return { raw };
  }
  if (!isObject(parsed) || typeof parsed.type !== 'string' || !WATCH_EVENT_TYPES.has(parsed.type) || !isObject(parsed.object)) {
    return { raw };
  }
  const object = parsed.object as KubeObject;
  const event: RelayedWatchEvent = { raw, type: parsed.type as WatchEventType, object };
  if (event.type !== 'ERROR' && event.type !== 'BOOKMARK') {
    const key = keyOfAnswer(object, fallbackKind);
    if (key) event.key = key;
  }
  const rv = object.metadata?.resourceVersion;
  if (typeof rv === 'string') event.resourceVersion = rv;
  return event;
}

/** An event-level fault: passes the event on (now, later or never) by calling `next`. */
export type WatchEventStage = (event: RelayedWatchEvent, next: (event: RelayedWatchEvent) => void) => void;

export interface WatchRelayOptions {
  upstream: IncomingMessage;
  client: ServerResponse;
  gate: DeliveryGate;
  /** Kind of the watched resource, for events whose object lacks one. */
  kind?: string;
  /** False for non-JSON streams (protobuf): chunks are relayed as they come, without events. */
  decode: boolean;
  stages?: WatchEventStage[];
  /** Called once the response headers went to the controller. */
  onOpen: () => void;
  /** Called for each event line written to the controller. */
  onDelivered: (event: RelayedWatchEvent) => void;
  /** Called once the upstream ended cleanly and the controller got the end of the stream. */
  onEnd: () => void;
  /** Writing to the controller failed; the owner tears the stream down. */
  onFailure: (err: Error) => void;
}

export class WatchRelay {
  private readonly splitter = new LineSplitter();
  private readonly stages: WatchEventStage[];
  private stopped = false;

  constructor(private readonly o: WatchRelayOptions) {
    this.stages = o.stages ?? [];
  }

  /** Sends the headers (flushed at once: client-go starts its timers before the first event) and starts relaying. */
  start(headers: OutgoingHttpHeaders): void {
    const { upstream, client, gate } = this.o;
    gate.pass(() =>
      this.guard(() => {
        client.writeHead(200, headers);
        client.flushHeaders();
        this.o.onOpen();
      }),
    );
    upstream.on('data', (chunk: Buffer) => this.onChunk(chunk));
    upstream.on('end', () => this.onUpstreamEnd());
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
    for (const line of this.splitter.push(chunk)) this.route(decodeWatchLine(line, this.o.kind), 0);
  }

  private route(event: RelayedWatchEvent, stageIndex: number): void {
    const stage = this.stages[stageIndex];
    if (!stage) {
      this.deliverBytes(event);
      return;
    }
    stage(event, (e) => this.route(e, stageIndex + 1));
  }

  private deliverBytes(event: RelayedWatchEvent): void {
    const { upstream, client, gate } = this.o;
    if (gate.isHeld) upstream.pause();
    gate.pass(() =>
      this.guard(() => {
        const flowing = client.write(event.raw);
        if (event.type) this.o.onDelivered(event);
        if (!flowing) {
          upstream.pause();
          client.once('drain', () => upstream.resume());
        } else if (upstream.isPaused()) {
          upstream.resume();
        }
      }),
    );
  }

  private guard(work: () => void): void {
    if (this.stopped) return;
    try {
      work();
    } catch (err) {
      this.stopped = true;
      this.o.onFailure(err as Error);
    }
  }

  private onUpstreamEnd(): void {
    if (this.stopped) return;
    const rest = this.splitter.rest();
    if (rest) this.route(decodeWatchLine(rest, this.o.kind), 0);
    this.o.gate.pass(() =>
      this.guard(() => {
        this.o.client.end();
        this.o.onEnd();
      }),
    );
  }
}
