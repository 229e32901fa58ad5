/**
 * The apimachinery types whose JSON is not their protobuf message field by field: each renders what
 * its Go MarshalJSON writes after its Go Unmarshal has read the message. `bytes` is undefined when the
 * field is absent (the Go zero value).
 */
import { scalarValue, type ScalarValue } from './scalars.js';
import type { SpecialType } from '../model/protobuf-schema.js';
import { readWireMessage, type WireMessage } from './wire.js';

export type JsonValue = null | boolean | number | string | JsonValue[] | { [key: string]: JsonValue };

/** A value Go would refuse to marshal as JSON, or a field that breaks its type's rules. */
export class SpecialTypeError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SpecialTypeError';
  }
}

function field(message: WireMessage, number: number, type: 'int64' | 'int32' | 'string' | 'bytes'): ScalarValue | undefined {
  const records = message.get(number);
  if (!records) return undefined;
  return scalarValue(type, records[records.length - 1]!);
}

// time.Time{} (what IsZero tests) is 0001-01-01T00:00:00Z.
const ZERO_TIME_UNIX_SECONDS = -62135596800;
const MAX_DATE_SECONDS = 8.64e12; // JavaScript Date's range

function rfc3339(seconds: number, micros?: number): string {
  if (!Number.isSafeInteger(seconds) || Math.abs(seconds) > MAX_DATE_SECONDS) throw new SpecialTypeError(`time ${seconds}s since the epoch is out of range`);
  const iso = new Date(seconds * 1000).toISOString(); // YYYY-MM-DDTHH:MM:SS.000Z for years 0..9999
  if (!/^\d{4}-/.test(iso)) throw new SpecialTypeError(`time ${seconds}s since the epoch is outside years 0..9999`);
  const base = iso.slice(0, 19);
  return micros === undefined ? `${base}Z` : `${base}.${String(micros).padStart(6, '0')}Z`;
}

function timestamp(bytes: Uint8Array): { seconds: number; nanos: number } {
  const m = readWireMessage(bytes);
  return { seconds: (field(m, 1, 'int64') as number | undefined) ?? 0, nanos: (field(m, 2, 'int32') as number | undefined) ?? 0 };
}

/** metav1.Time: whole seconds (its Unmarshal drops the nanoseconds), RFC 3339 in UTC, null when zero. */
function renderTime(bytes: Uint8Array | undefined): JsonValue {
  if (bytes === undefined || bytes.length === 0) return null;
  const { seconds } = timestamp(bytes);
  if (seconds === ZERO_TIME_UNIX_SECONDS) return null;
  return rfc3339(seconds);
}

/** metav1.MicroTime: microseconds (nanoseconds truncated toward zero), RFC 3339 in UTC, null when zero. */
function renderMicroTime(bytes: Uint8Array | undefined): JsonValue {
  if (bytes === undefined || bytes.length === 0) return null;
  const { seconds, nanos } = timestamp(bytes);
  const totalMicros = BigInt(seconds) * 1_000_000n + BigInt(Math.trunc(nanos / 1000));
  let wholeSeconds = totalMicros / 1_000_000n;
  let micros = totalMicros % 1_000_000n;
  if (micros < 0n) {
    micros += 1_000_000n;
    wholeSeconds -= 1n;
  }
  if (wholeSeconds === BigInt(ZERO_TIME_UNIX_SECONDS) && micros === 0n) return null;
  return rfc3339(Number(wholeSeconds), Number(micros));
}

// resource.ParseQuantity's syntax: a signed decimal number, then an optional suffix (binary SI such as
// Ki, decimal SI such as m or k, or a decimal exponent such as e3).
const QUANTITY = /^[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+|Ki|Mi|Gi|Ti|Pi|Ei|n|u|m|k|M|G|T|P|E)?$/;

/**
 * resource.Quantity travels as its canonical string (Go clients send `Quantity.String()`), which the
 * server parses and prints again: a canonical string passes through unchanged. Strings in another
 * valid form (say "0.5" from a hand-written client) are stored as sent here, where the API server
 * would canonicalize them ("500m").
 */
function renderQuantity(bytes: Uint8Array | undefined): JsonValue {
  if (bytes === undefined) return '0';
  const s = field(readWireMessage(bytes), 1, 'string') as string | undefined;
  if (s === undefined) return '0';
  if (!QUANTITY.test(s))
    throw new SpecialTypeError(`quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$' (got ${JSON.stringify(s)})`);
  return s;
}

/** intstr.IntOrString: type 0 is the int, type 1 the string. */
function renderIntOrString(bytes: Uint8Array | undefined): JsonValue {
  if (bytes === undefined) return 0;
  const m = readWireMessage(bytes);
  const type = (field(m, 1, 'int64') as number | undefined) ?? 0;
  if (type === 0) return (field(m, 2, 'int32') as number | undefined) ?? 0;
  if (type === 1) return (field(m, 3, 'string') as string | undefined) ?? '';
  throw new SpecialTypeError(`impossible IntOrString.Type ${type}`);
}

/** runtime.RawExtension and metav1.FieldsV1 hold JSON bytes that are written out verbatim. */
function renderEmbeddedJson(bytes: Uint8Array | undefined, what: string): JsonValue {
  if (bytes === undefined) return null;
  const raw = field(readWireMessage(bytes), 1, 'bytes') as Uint8Array | undefined;
  if (raw === undefined || raw.length === 0) return null;
  const text = Buffer.from(raw.buffer, raw.byteOffset, raw.byteLength).toString('utf8');
  try {
    return JSON.parse(text) as JsonValue;
  } catch {
    throw new SpecialTypeError(`${what} holds bytes that are not JSON`);
  }
}

export function renderSpecial(type: SpecialType, bytes: Uint8Array | undefined): JsonValue {
  switch (type) {
    case 'Time':
      return renderTime(bytes);
    case 'MicroTime':
      return renderMicroTime(bytes);
    case 'Quantity':
      return renderQuantity(bytes);
    case 'IntOrString':
      return renderIntOrString(bytes);
    case 'RawExtension':
      return renderEmbeddedJson(bytes, 'RawExtension');
    case 'FieldsV1':
      return renderEmbeddedJson(bytes, 'FieldsV1');
  }
}
