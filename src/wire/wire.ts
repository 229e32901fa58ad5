/**
 * The protobuf wire format, read without a schema: a message is a list of (field number, wire type,
 * value) records. Values stay raw (varints, fixed-width words, length-delimited byte ranges) until the
 * schema says what they are; `scalars.ts` interprets them. Errors name the byte offset.
 */

export const WIRE_VARINT = 0;
export const WIRE_FIXED64 = 1;
export const WIRE_LENGTH_DELIMITED = 2;
export const WIRE_START_GROUP = 3;
export const WIRE_END_GROUP = 4;
export const WIRE_FIXED32 = 5;

/** Bytes that are not a well-formed protobuf message. */
export class ProtobufWireError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ProtobufWireError';
  }
}

/** A varint's value: a number when it fits in 28 bits (the common case), a bigint otherwise. */
export type Varint = number | bigint;

export type WireValue =
  | { wireType: typeof WIRE_VARINT; value: Varint }
  | { wireType: typeof WIRE_FIXED64; value: Uint8Array }
  | { wireType: typeof WIRE_LENGTH_DELIMITED; value: Uint8Array }
  | { wireType: typeof WIRE_FIXED32; value: Uint8Array };

/** A decoded message: each field number's records, in wire order. */
export type WireMessage = Map<number, WireValue[]>;

export class WireReader {
  private pos = 0;

  constructor(private readonly buf: Uint8Array) {}

  get done(): boolean {
    return this.pos >= this.buf.length;
  }

  private fail(what: string): never {
    throw new ProtobufWireError(`${what} at byte ${this.pos}`);
  }

  readVarint(): Varint {
    const buf = this.buf;
    let result = 0;
    for (let shift = 0; shift < 28; shift += 7) {
      if (this.pos >= buf.length) this.fail('unexpected end of data in a varint');
      const b = buf[this.pos++]!;
      result |= (b & 0x7f) << shift;
      if (b < 0x80) return result;
    }
    // Longer than 4 bytes: continue in bigint (int64 values, negative int32 values).
    let big = BigInt(result);
    for (let shift = 28n; ; shift += 7n) {
      if (shift >= 70n) this.fail('varint longer than 10 bytes');
      if (this.pos >= buf.length) this.fail('unexpected end of data in a varint');
      const b = buf[this.pos++]!;
      big |= BigInt(b & 0x7f) << shift;
      if (b < 0x80) return BigInt.asUintN(64, big);
    }
  }

  private readLength(): number {
    const n = this.readVarint();
    if (typeof n === 'bigint' || n > this.buf.length - this.pos) this.fail('length-delimited field runs past the end of the data');
    return n;
  }

  private take(n: number): Uint8Array {
    if (n > this.buf.length - this.pos) this.fail('unexpected end of data');
    const out = this.buf.subarray(this.pos, this.pos + n);
    this.pos += n;
    return out;
  }

  /** Skips a group (deprecated proto2 groups; no Kubernetes message uses them) up to its end tag. */
  private skipGroup(fieldNumber: number): void {
    for (;;) {
      if (this.done) this.fail(`unterminated group for field ${fieldNumber}`);
      const { fieldNumber: n, wireType } = this.readTag();
      if (wireType === WIRE_END_GROUP) {
        if (n !== fieldNumber) this.fail(`group for field ${fieldNumber} ended by field ${n}`);
        return;
      }
      this.readValue(n, wireType);
    }
  }

  readTag(): { fieldNumber: number; wireType: number } {
    const tag = this.readVarint();
    if (typeof tag === 'bigint' && tag > 0xffffffffn) this.fail('field tag out of range');
    const t = Number(tag);
    const fieldNumber = Math.floor(t / 8);
    const wireType = t & 7;
    if (fieldNumber <= 0) this.fail(`illegal field number ${fieldNumber}`);
    return { fieldNumber, wireType };
  }

  /** Reads one value of the given wire type; undefined for a skipped group. */
  readValue(fieldNumber: number, wireType: number): WireValue | undefined {
    switch (wireType) {
      case WIRE_VARINT:
        return { wireType, value: this.readVarint() };
      case WIRE_FIXED64:
        return { wireType, value: this.take(8) };
      case WIRE_LENGTH_DELIMITED:
        return { wireType, value: this.take(this.readLength()) };
      case WIRE_FIXED32:
        return { wireType, value: this.take(4) };
      case WIRE_START_GROUP:
        this.skipGroup(fieldNumber);
        return undefined;
      case WIRE_END_GROUP:
        return this.fail(`end of group for field ${fieldNumber} without a start`);
      default:
        this.fail(`illegal wire type ${wireType} for field ${fieldNumber}`);
    }
  }
}

/** Splits a message into its fields' records. */
export function readWireMessage(bytes: Uint8Array): WireMessage {
  const reader = new WireReader(bytes);
  const fields: WireMessage = new Map();
  while (!reader.done) {
    const { fieldNumber, wireType } = reader.readTag();
    const value = reader.readValue(fieldNumber, wireType);
    if (value === undefined) continue;
    const list = fields.get(fieldNumber);
    if (list) list.push(value);
    else fields.set(fieldNumber, [value]);
  }
  return fields;
}

/** The varints of a packed repeated field. */
export function readPackedVarints(bytes: Uint8Array): Varint[] {
  const reader = new WireReader(bytes);
  const out: Varint[] = [];
  while (!reader.done) out.push(reader.readVarint());
  return out;
}
