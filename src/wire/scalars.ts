/**
 * Interprets raw wire values as the scalar types of the .proto files, with Go's conversions (int32 is
 * the low 32 bits of the varint, sint is zigzag, and so on). int64 values beyond 2^53 lose precision,
 * as they do when the API server's JSON is parsed in JavaScript.
 */
import type { ScalarType } from '../model/protobuf-schema.js';
import { readPackedVarints, WIRE_FIXED32, WIRE_FIXED64, WIRE_LENGTH_DELIMITED, WIRE_VARINT, type Varint, type WireValue } from './wire.js';

export type ScalarValue = number | boolean | string | Uint8Array;

/** A scalar that does not fit its declared type (wrong wire type, unreadable bytes). */
export class ScalarTypeError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ScalarTypeError';
  }
}

const utf8 = new TextDecoder('utf-8', { fatal: false });

export function wireTypeOf(type: ScalarType): number {
  switch (type) {
    case 'double':
    case 'fixed64':
    case 'sfixed64':
      return WIRE_FIXED64;
    case 'float':
    case 'fixed32':
    case 'sfixed32':
      return WIRE_FIXED32;
    case 'string':
    case 'bytes':
      return WIRE_LENGTH_DELIMITED;
    default:
      return WIRE_VARINT;
  }
}

function big(v: Varint): bigint {
  return typeof v === 'bigint' ? v : BigInt(v);
}

function fromVarint(type: ScalarType, v: Varint): number | boolean {
  // Varints under 2^28 arrive as non-negative numbers, the same under every type except sint.
  switch (type) {
    case 'bool':
      return typeof v === 'bigint' ? v !== 0n : v !== 0;
    case 'int32':
      return typeof v === 'number' ? v : Number(BigInt.asIntN(32, v));
    case 'uint32':
      return typeof v === 'number' ? v : Number(BigInt.asUintN(32, v));
    case 'int64':
      return typeof v === 'number' ? v : Number(BigInt.asIntN(64, v));
    case 'uint64':
      return typeof v === 'number' ? v : Number(v);
    case 'sint32': {
      const n = Number(BigInt.asUintN(32, big(v)));
      return (n >>> 1) ^ -(n & 1);
    }
    case 'sint64': {
      const n = BigInt.asUintN(64, big(v));
      return Number((n >> 1n) ^ -(n & 1n));
    }
    default:
      throw new ScalarTypeError(`${type} is not a varint type`);
  }
}

function fromFixed(type: ScalarType, bytes: Uint8Array): number {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  switch (type) {
    case 'fixed32':
      return view.getUint32(0, true);
    case 'sfixed32':
      return view.getInt32(0, true);
    case 'float':
      return view.getFloat32(0, true);
    case 'fixed64':
      return Number(view.getBigUint64(0, true));
    case 'sfixed64':
      return Number(view.getBigInt64(0, true));
    case 'double':
      return view.getFloat64(0, true);
    default:
      throw new ScalarTypeError(`${type} is not a fixed-width type`);
  }
}

/** One value of a singular scalar field. */
export function scalarValue(type: ScalarType, wire: WireValue): ScalarValue {
  const expected = wireTypeOf(type);
  if (wire.wireType !== expected) throw new ScalarTypeError(`wrong wire type ${wire.wireType} for a ${type} (expected ${expected})`);
  switch (wire.wireType) {
    case WIRE_VARINT:
      return fromVarint(type, wire.value);
    case WIRE_LENGTH_DELIMITED:
      return type === 'string' ? utf8.decode(wire.value) : wire.value;
    default:
      return fromFixed(type, wire.value);
  }
}

/** The values of a repeated scalar field: each record is one value or, for numeric types, a packed run. */
export function repeatedScalarValues(type: ScalarType, records: readonly WireValue[]): ScalarValue[] {
  const expected = wireTypeOf(type);
  const out: ScalarValue[] = [];
  for (const wire of records) {
    if (wire.wireType === WIRE_LENGTH_DELIMITED && expected !== WIRE_LENGTH_DELIMITED) {
      if (expected === WIRE_VARINT) {
        for (const v of readPackedVarints(wire.value)) out.push(fromVarint(type, v));
      } else {
        const width = expected === WIRE_FIXED64 ? 8 : 4;
        if (wire.value.length % width !== 0) throw new ScalarTypeError(`packed ${type} run of ${wire.value.length} bytes`);
        for (let i = 0; i < wire.value.length; i += width) out.push(fromFixed(type, wire.value.subarray(i, i + width)));
      }
      continue;
    }
    out.push(scalarValue(type, wire));
  }
  return out;
}

/** Go's zero value of a scalar type, what an absent field decodes to. */
export function zeroScalar(type: ScalarType): ScalarValue {
  switch (type) {
    case 'string':
      return '';
    case 'bytes':
      return new Uint8Array(0);
    case 'bool':
      return false;
    default:
      return 0;
  }
}
