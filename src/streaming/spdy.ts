/**
 * The server side of a SPDY/3.1 connection, as far as Kubernetes' streaming protocols use it
 * (k8s.io/apimachinery/pkg/util/httpstream/spdy over github.com/moby/spdystream, formerly
 * docker/spdystream): the client opens every stream (SYN_STREAM, its type in a `streamtype` header),
 * the server replies to each at once (SYN_REPLY, no headers), both sides send DATA and half-close with
 * FIN; PING is echoed; GOAWAY or the end of the socket ends everything.
 *
 * Header blocks are zlib streams with the SPDY/3 dictionary, one compression context per direction
 * for the whole connection:
 * - incoming blocks are inflated by re-inflating every header byte received so far and keeping the new
 *   tail: node:zlib's synchronous API has no resumable context, exec connections carry about five
 *   small blocks, and the total is capped;
 * - outgoing blocks are written as stored (uncompressed) deflate blocks, which any zlib reader accepts,
 *   after the zlib header that names the dictionary. That keeps writing synchronous and byte-aligned.
 * Flow control (WINDOW_UPDATE) is ignored, as spdystream ignores it.
 */
import { EventEmitter } from 'node:events';
import type { Duplex } from 'node:stream';
import { adler32 } from './adler32.js';
import { constants as zlibConstants, inflateSync } from 'node:zlib';
import { SPDY3_HEADER_DICTIONARY } from './spdy-dictionary.js';

const SPDY_VERSION = 3;
const TYPE_SYN_STREAM = 1;
const TYPE_SYN_REPLY = 2;
const TYPE_RST_STREAM = 3;
const TYPE_PING = 6;
const TYPE_GOAWAY = 7;
const TYPE_HEADERS = 8;
const FLAG_FIN = 0x01;
const RST_PROTOCOL_ERROR = 1;
const RST_CANCEL = 5;
/** More compressed header bytes than this on one connection is not a Kubernetes client. */
const MAX_HEADER_BYTES = 256 * 1024;
const MAX_DATA_FRAME = 64 * 1024;
/** An empty stored deflate block: what ends every zlib sync flush. */
const SYNC_FLUSH_MARKER = Buffer.from([0x00, 0x00, 0x00, 0xff, 0xff]);

/** Header names are lower case on the wire; a header may carry several values. */
export type SpdyHeaders = Map<string, string[]>;

export class SpdyProtocolError extends Error {}

/** One stream the client opened. */
export class SpdyStream extends EventEmitter {
  /** The client half-closed (FIN) or reset the stream. */
  remoteEnded = false;
  localEnded = false;

  constructor(
    private readonly conn: SpdyServerConnection,
    readonly id: number,
    readonly headers: SpdyHeaders,
  ) {
    super();
  }

  header(name: string): string | undefined {
    return this.headers.get(name.toLowerCase())?.[0];
  }

  write(data: Buffer | string): void {
    if (this.localEnded) return;
    const bytes = typeof data === 'string' ? Buffer.from(data) : data;
    for (let at = 0; at < bytes.length; at += MAX_DATA_FRAME) this.conn.writeData(this.id, bytes.subarray(at, at + MAX_DATA_FRAME), false);
  }

  /** Half-closes our side (a DATA frame with FIN), after `data` if given. */
  end(data?: Buffer | string): void {
    if (this.localEnded) return;
    if (data !== undefined && data.length > 0) this.write(data);
    this.localEnded = true;
    this.conn.writeData(this.id, Buffer.alloc(0), true);
  }

  /** Called by the connection: the client's DATA or FIN. */
  receive(data: Buffer, fin: boolean): void {
    if (data.length > 0) this.emit('data', data);
    if (fin && !this.remoteEnded) {
      this.remoteEnded = true;
      this.emit('end');
    }
  }
}

export interface SpdyServerConnectionEvents {
  stream: [SpdyStream];
  close: [reason: string];
}

export class SpdyServerConnection extends EventEmitter<SpdyServerConnectionEvents> {
  private pending: Buffer = Buffer.alloc(0);
  private readonly streams = new Map<number, SpdyStream>();
  private readonly compressedIn: Buffer[] = [];
  private compressedInBytes = 0;
  private inflatedBytes = 0;
  private headerStreamStarted = false;
  private lastStreamId = 0;
  private closed = false;

  constructor(private readonly socket: Duplex) {
    super();
    socket.on('data', (chunk: Buffer) => this.push(chunk));
    socket.on('end', () => this.close('the client closed the connection'));
    socket.on('close', () => this.close('the connection closed'));
    socket.on('error', () => this.close('socket error'));
  }

  /** Bytes the HTTP parser read past the upgrade request belong to the connection. */
  push(chunk: Buffer): void {
    if (this.closed) return;
    this.pending = this.pending.length === 0 ? chunk : Buffer.concat([this.pending, chunk]);
    try {
      while (this.pending.length >= 8) {
        const length = this.pending.readUInt32BE(4) & 0xffffff;
        if (this.pending.length < 8 + length) break;
        const frame = this.pending.subarray(0, 8 + length);
        this.pending = this.pending.subarray(8 + length);
        this.onFrame(frame);
        if (this.closed) return;
      }
    } catch (err) {
      this.fail(err instanceof Error ? err.message : String(err));
    }
  }

  private onFrame(frame: Buffer): void {
    const first = frame.readUInt32BE(0);
    const flags = frame[4]!;
    const payload = frame.subarray(8);
    if ((first & 0x80000000) === 0) {
      const stream = this.streams.get(first & 0x7fffffff);
      stream?.receive(payload, (flags & FLAG_FIN) !== 0);
      return;
    }
    const version = (first >>> 16) & 0x7fff;
    if (version !== SPDY_VERSION) throw new SpdyProtocolError(`unsupported SPDY version ${version}`);
    switch (first & 0xffff) {
      case TYPE_SYN_STREAM:
        return this.onSynStream(payload, flags);
      case TYPE_HEADERS:
        // Only to keep the shared decompression context in step.
        this.inflateHeaders(payload.subarray(4));
        return;
      case TYPE_RST_STREAM: {
        const stream = this.streams.get(payload.readUInt32BE(0) & 0x7fffffff);
        if (stream) {
          this.streams.delete(stream.id);
          stream.localEnded = true;
          stream.receive(Buffer.alloc(0), true);
        }
        return;
      }
      case TYPE_PING: {
        // Odd ids are the client's pings: echo them. Even ones would answer ours (we send none).
        if ((payload.readUInt32BE(0) & 1) === 1) this.write(frame);
        return;
      }
      case TYPE_GOAWAY:
        this.close('the client sent GOAWAY');
        this.socket.end();
        return;
      default:
        // SETTINGS, WINDOW_UPDATE, SYN_REPLY (we open no streams): nothing to do.
        return;
    }
  }

  private onSynStream(payload: Buffer, flags: number): void {
    const id = payload.readUInt32BE(0) & 0x7fffffff;
    const headers = this.inflateHeaders(payload.subarray(10));
    if (id === 0 || id % 2 === 0 || id <= this.lastStreamId) {
      this.writeControl(TYPE_RST_STREAM, 0, u32pair(id, RST_PROTOCOL_ERROR));
      return;
    }
    this.lastStreamId = id;
    const stream = new SpdyStream(this, id, headers);
    this.streams.set(id, stream);
    // As k8s.io/apimachinery's spdy connection does: reply before anyone looks at the stream, since
    // the client waits for the reply before it creates its next stream.
    this.writeControl(TYPE_SYN_REPLY, 0, Buffer.concat([u32(id), this.compressHeaders(new Map())]));
    if ((flags & FLAG_FIN) !== 0) stream.receive(Buffer.alloc(0), true);
    this.emit('stream', stream);
  }

  private inflateHeaders(block: Buffer): SpdyHeaders {
    this.compressedIn.push(block);
    this.compressedInBytes += block.length;
    if (this.compressedInBytes > MAX_HEADER_BYTES) throw new SpdyProtocolError('too many header bytes on one connection');
    const all = inflateSync(Buffer.concat(this.compressedIn), { dictionary: SPDY3_HEADER_DICTIONARY, finishFlush: zlibConstants.Z_SYNC_FLUSH });
    const fresh = all.subarray(this.inflatedBytes);
    this.inflatedBytes = all.length;
    return parseHeaderBlock(fresh);
  }

  private compressHeaders(headers: SpdyHeaders): Buffer {
    const parts: Buffer[] = [u32(headers.size)];
    for (const [name, values] of headers) {
      const n = Buffer.from(name.toLowerCase());
      const v = Buffer.from(values.join('\0'));
      parts.push(u32(n.length), n, u32(v.length), v);
    }
    const raw = Buffer.concat(parts);
    if (raw.length > 0xffff) throw new SpdyProtocolError('header block too large');
    const out: Buffer[] = [];
    if (!this.headerStreamStarted) {
      this.headerStreamStarted = true;
      // CMF 0x78 (deflate, 32 KiB window), FLG 0x20 (a preset dictionary; (0x7820 % 31) === 0), DICTID.
      out.push(Buffer.from([0x78, 0x20]), u32(adler32(SPDY3_HEADER_DICTIONARY)));
    }
    // A stored block, not final: header bits 000, padded to the byte; LEN and its complement (little endian).
    const len = Buffer.alloc(5);
    len[0] = 0;
    len.writeUInt16LE(raw.length, 1);
    len.writeUInt16LE(~raw.length & 0xffff, 3);
    // Then an empty stored block, as a zlib sync flush ends: Go's flate reader hands out a block's
    // bytes only when the next block begins, so without it the client would wait for the next frame.
    out.push(len, raw, SYNC_FLUSH_MARKER);
    return Buffer.concat(out);
  }

  writeData(id: number, data: Buffer, fin: boolean): void {
    const head = Buffer.alloc(8);
    head.writeUInt32BE(id & 0x7fffffff, 0);
    head.writeUInt32BE(((fin ? FLAG_FIN : 0) << 24) | data.length, 4);
    this.write(data.length > 0 ? Buffer.concat([head, data]) : head);
  }

  /** Resets a stream (RST_STREAM CANCEL). */
  reset(id: number): void {
    this.streams.delete(id);
    this.writeControl(TYPE_RST_STREAM, 0, u32pair(id, RST_CANCEL));
  }

  /** Sends GOAWAY (status OK) and ends the socket once written. */
  goAway(): void {
    if (this.closed) return;
    this.writeControl(TYPE_GOAWAY, 0, u32pair(this.lastStreamId, 0));
    this.socket.end();
    this.close('the server ended the connection');
  }

  private writeControl(type: number, flags: number, payload: Buffer): void {
    const head = Buffer.alloc(8);
    head.writeUInt32BE((0x8000 | SPDY_VERSION) * 0x10000 + type, 0);
    head.writeUInt32BE((flags << 24) | payload.length, 4);
    this.write(Buffer.concat([head, payload]));
  }

  private write(bytes: Buffer): void {
    if (!this.closed && this.socket.writable) this.socket.write(bytes);
  }

  private fail(message: string): void {
    if (this.closed) return;
    this.writeControl(TYPE_GOAWAY, 0, u32pair(this.lastStreamId, 1));
    this.socket.end();
    this.close(`protocol error: ${message}`);
  }

  private close(reason: string): void {
    if (this.closed) return;
    this.closed = true;
    for (const s of this.streams.values()) s.receive(Buffer.alloc(0), true);
    this.streams.clear();
    this.emit('close', reason);
  }
}

function u32(n: number): Buffer {
  const b = Buffer.alloc(4);
  b.writeUInt32BE(n >>> 0, 0);
  return b;
}

function u32pair(a: number, b: number): Buffer {
  return Buffer.concat([u32(a), u32(b)]);
}

/** An uncompressed header block: count, then (length, name, length, NUL-separated values) pairs. */
export function parseHeaderBlock(block: Buffer): SpdyHeaders {
  const headers: SpdyHeaders = new Map();
  let at = 0;
  const take = (n: number): Buffer => {
    if (at + n > block.length) throw new SpdyProtocolError('truncated header block');
    const out = block.subarray(at, at + n);
    at += n;
    return out;
  };
  const count = take(4).readUInt32BE(0);
  for (let i = 0; i < count; i++) {
    const name = take(take(4).readUInt32BE(0)).toString('latin1').toLowerCase();
    const value = take(take(4).readUInt32BE(0)).toString('utf8');
    headers.set(name, [...(headers.get(name) ?? []), ...value.split('\0')]);
  }
  return headers;
}
