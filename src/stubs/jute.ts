/**
 * Jute, ZooKeeper's wire serialization (zookeeper-jute's BinaryInputArchive/BinaryOutputArchive):
 * big-endian int (4 bytes) and long (8), boolean as one byte, ustring and buffer as an int length
 * then the bytes (-1 for a null buffer), vectors as an int count then the elements. Every packet on
 * the wire is an int length followed by that many bytes.
 */

export class JuteError extends Error {}

export class JuteReader {
  private at = 0;

  constructor(private readonly buf: Buffer) {}

  get remaining(): number {
    return this.buf.length - this.at;
  }

  private need(n: number): void {
    if (this.at + n > this.buf.length) throw new JuteError(`packet too short: need ${n} more bytes at offset ${this.at} of ${this.buf.length}`);
  }

  int(): number {
    this.need(4);
    const v = this.buf.readInt32BE(this.at);
    this.at += 4;
    return v;
  }

  long(): bigint {
    this.need(8);
    const v = this.buf.readBigInt64BE(this.at);
    this.at += 8;
    return v;
  }

  bool(): boolean {
    this.need(1);
    return this.buf[this.at++] !== 0;
  }

  /** A buffer; null when the length is -1 (a nil []byte of the Go client, null of the Java one). */
  buffer(): Buffer | null {
    const len = this.int();
    if (len < 0) return null;
    this.need(len);
    const v = this.buf.subarray(this.at, this.at + len);
    this.at += len;
    return Buffer.from(v);
  }

  ustring(): string {
    const b = this.buffer();
    return b === null ? '' : b.toString('utf8');
  }

  vector<T>(element: (r: JuteReader) => T): T[] {
    const count = this.int();
    const out: T[] = [];
    for (let i = 0; i < count; i++) out.push(element(this));
    return out;
  }
}

export class JuteWriter {
  private readonly parts: Buffer[] = [];

  int(v: number): this {
    const b = Buffer.alloc(4);
    b.writeInt32BE(v);
    this.parts.push(b);
    return this;
  }

  long(v: bigint): this {
    const b = Buffer.alloc(8);
    b.writeBigInt64BE(v);
    this.parts.push(b);
    return this;
  }

  bool(v: boolean): this {
    this.parts.push(Buffer.from([v ? 1 : 0]));
    return this;
  }

  buffer(v: Buffer | null): this {
    if (v === null) return this.int(-1);
    this.int(v.length);
    this.parts.push(v);
    return this;
  }

  ustring(v: string): this {
    return this.buffer(Buffer.from(v, 'utf8'));
  }

  vector<T>(items: readonly T[], element: (w: JuteWriter, item: T) => void): this {
    this.int(items.length);
    for (const item of items) element(this, item);
    return this;
  }

  /** The bytes written, without the length prefix. */
  bytes(): Buffer {
    return Buffer.concat(this.parts);
  }

  /** The bytes written as one wire packet: the int length, then the bytes. */
  packet(): Buffer {
    const body = this.bytes();
    const len = Buffer.alloc(4);
    len.writeInt32BE(body.length);
    return Buffer.concat([len, body]);
  }
}

/**
 * Splits a byte stream into packets (int length + body). `maxPacket` is the server's jute.maxbuffer
 * (0xfffff by default, plus a little for headers): a longer length means a broken or foreign client.
 */
export class PacketSplitter {
  private pending: Buffer = Buffer.alloc(0);

  constructor(private readonly maxPacket = 0xfffff + 1024) {}

  /** The complete packets now available; throws on an impossible length. */
  push(chunk: Buffer): Buffer[] {
    this.pending = this.pending.length === 0 ? chunk : Buffer.concat([this.pending, chunk]);
    const out: Buffer[] = [];
    while (this.pending.length >= 4) {
      const len = this.pending.readInt32BE(0);
      if (len < 0 || len > this.maxPacket) throw new JuteError(`packet length ${len} out of range`);
      if (this.pending.length < 4 + len) break;
      out.push(this.pending.subarray(4, 4 + len));
      this.pending = this.pending.subarray(4 + len);
    }
    return out;
  }

  /** The bytes received but not yet part of a packet (for the four-letter words). */
  get buffered(): Buffer {
    return this.pending;
  }
}
