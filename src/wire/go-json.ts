/**
 * Renders a decoded protobuf message as the JSON the API server stores for it: what Go's
 * encoding/json writes for the Go struct that the message unmarshals into. That is where protobuf and
 * JSON differ: an absent field is a Go zero value (a nil pointer, slice or map; "" or 0; an empty
 * struct), `omitempty` drops only empty values (never structs), an anonymous embedded struct's keys
 * are promoted into its parent, []byte is base64, and a few apimachinery types have their own
 * MarshalJSON (`special-types.ts`).
 */
import { repeatedScalarValues, scalarValue, zeroScalar, type ScalarValue } from './scalars.js';
import type { FieldSchema, KubernetesProtobufSchema, MessageSchema, ScalarType } from '../model/protobuf-schema.js';
import { renderSpecial, type JsonValue } from './special-types.js';
import { readWireMessage, WIRE_LENGTH_DELIMITED, type WireValue } from './wire.js';

export type JsonObject = { [key: string]: JsonValue };

/** A field that does not decode, with the JSON path to it. */
export class FieldDecodeError extends Error {
  constructor(
    readonly path: string,
    readonly reason: string,
  ) {
    super(`${path || '<object>'}: ${reason}`);
    this.name = 'FieldDecodeError';
  }
}

const SCALAR_TYPES: ReadonlySet<string> = new Set<ScalarType>([
  'double',
  'float',
  'int32',
  'int64',
  'uint32',
  'uint64',
  'sint32',
  'sint64',
  'fixed32',
  'fixed64',
  'sfixed32',
  'sfixed64',
  'bool',
  'string',
  'bytes',
]);

function isScalarType(type: string): type is ScalarType {
  return SCALAR_TYPES.has(type);
}

function scalarJson(value: ScalarValue): JsonValue {
  return value instanceof Uint8Array ? Buffer.from(value.buffer, value.byteOffset, value.byteLength).toString('base64') : value;
}

function isZero(value: ScalarValue): boolean {
  return value instanceof Uint8Array ? value.length === 0 : value === '' || value === 0 || value === false;
}

function concat(records: readonly WireValue[], path: string): Uint8Array {
  for (const r of records) {
    if (r.wireType !== WIRE_LENGTH_DELIMITED) throw new FieldDecodeError(path, `wrong wire type ${r.wireType} for a message`);
  }
  // Repeated occurrences of a singular message merge, which for the wire format is concatenation.
  if (records.length === 1) return records[0]!.value as Uint8Array;
  return Buffer.concat(records.map((r) => r.value as Uint8Array));
}

function joinPath(path: string, key: string): string {
  return path ? `${path}.${key}` : key;
}

/** A field's JSON value and whether Go's omitempty would drop it. */
interface RenderedField {
  value: JsonValue;
  empty: boolean;
}

const NIL: RenderedField = { value: null, empty: true };

export class GoJsonRenderer {
  /** Per message, the JSON keys of its own (not promoted) fields: they shadow promoted keys. */
  private readonly ownKeys = new Map<string, ReadonlySet<string>>();

  constructor(private readonly schema: KubernetesProtobufSchema) {}

  private message(name: string, path: string): MessageSchema {
    const m = this.schema.messages[name];
    if (!m) throw new FieldDecodeError(path, `no schema for message ${name}`);
    return m;
  }

  /** The JSON of a message-typed value; `bytes` undefined means the Go zero value. */
  renderMessage(name: string, bytes: Uint8Array | undefined, path: string): JsonValue {
    const schema = this.message(name, path);
    try {
      if (schema.special) return renderSpecial(schema.special, bytes);
    } catch (err) {
      if (err instanceof FieldDecodeError) throw err;
      throw new FieldDecodeError(path, (err as Error).message);
    }
    if (schema.wrapper) return this.renderField(schema.fields[0]!, bytes ? this.read(bytes, path) : new Map(), path).value;
    return this.renderStruct(name, schema, bytes, path);
  }

  private read(bytes: Uint8Array, path: string): Map<number, WireValue[]> {
    try {
      return readWireMessage(bytes);
    } catch (err) {
      throw new FieldDecodeError(path, (err as Error).message);
    }
  }

  private renderStruct(name: string, schema: MessageSchema, bytes: Uint8Array | undefined, path: string): JsonObject {
    const wire = bytes ? this.read(bytes, path) : new Map<number, WireValue[]>();
    const own = this.ownKeysOf(name, schema);
    const out: JsonObject = {};
    for (const f of schema.fields) {
      const records = wire.get(f.number) ?? [];
      if (f.json === undefined) {
        // An anonymous embedded struct: its keys join ours unless one of our own fields has the key.
        const inner = this.renderMessage(f.type, records.length > 0 ? concat(records, path) : undefined, path) as JsonObject;
        for (const [k, v] of Object.entries(inner)) if (!own.has(k)) out[k] = v;
        continue;
      }
      const rendered = this.renderField(f, wire, joinPath(path, f.json));
      if (f.omitempty && rendered.empty) continue;
      out[f.json] = rendered.value;
    }
    return out;
  }

  private ownKeysOf(name: string, schema: MessageSchema): ReadonlySet<string> {
    let keys = this.ownKeys.get(name);
    if (!keys) {
      keys = new Set(schema.fields.flatMap((f) => (f.json === undefined ? [] : [f.json])));
      this.ownKeys.set(name, keys);
    }
    return keys;
  }

  private renderField(f: FieldSchema, wire: Map<number, WireValue[]>, path: string): RenderedField {
    const records = wire.get(f.number) ?? [];
    try {
      if (f.mapKey !== undefined) return this.renderMap(f, records, path);
      if (f.repeated) return this.renderRepeated(f, records, path);
      if (!isScalarType(f.type)) {
        if (records.length === 0) return f.shape === 'struct' ? { value: this.renderMessage(f.type, undefined, path), empty: false } : NIL;
        const value = this.renderMessage(f.type, concat(records, path), path);
        // A wrapped Go slice (metav1.Verbs) is empty when it has no items; pointers and structs never are.
        return { value, empty: f.shape === 'slice' && (value === null || (Array.isArray(value) && value.length === 0)) };
      }
      if (records.length === 0) {
        if (f.shape === 'pointer' || f.shape === 'bytes') return NIL;
        const zero = zeroScalar(f.type);
        return { value: scalarJson(zero), empty: true };
      }
      // A singular scalar seen more than once: the last one wins.
      const value = scalarValue(f.type, records[records.length - 1]!);
      return { value: scalarJson(value), empty: f.shape !== 'pointer' && isZero(value) };
    } catch (err) {
      if (err instanceof FieldDecodeError) throw err;
      throw new FieldDecodeError(path, (err as Error).message);
    }
  }

  private renderRepeated(f: FieldSchema, records: readonly WireValue[], path: string): RenderedField {
    if (records.length === 0) return NIL;
    if (isScalarType(f.type)) return { value: repeatedScalarValues(f.type, records).map(scalarJson), empty: false };
    const items = records.map((r, i) => {
      const itemPath = `${path}[${i}]`;
      return this.renderMessage(f.type, concat([r], itemPath), itemPath);
    });
    return { value: items, empty: false };
  }

  private renderMap(f: FieldSchema, records: readonly WireValue[], path: string): RenderedField {
    if (records.length === 0) return NIL;
    const out: JsonObject = {};
    for (const record of records) {
      const entry = this.read(concat([record], path), path);
      const keyRecords = entry.get(1);
      const key = keyRecords ? scalarValue(f.mapKey!, keyRecords[keyRecords.length - 1]!) : zeroScalar(f.mapKey!);
      const keyText = String(scalarJson(key));
      const entryPath = `${path}[${JSON.stringify(keyText)}]`;
      const valueRecords = entry.get(2) ?? [];
      let value: JsonValue;
      if (isScalarType(f.type)) {
        value = scalarJson(valueRecords.length > 0 ? scalarValue(f.type, valueRecords[valueRecords.length - 1]!) : zeroScalar(f.type));
      } else {
        value = this.renderMessage(f.type, valueRecords.length > 0 ? concat(valueRecords, entryPath) : undefined, entryPath);
      }
      out[keyText] = value; // a repeated key: the last entry wins
    }
    return { value: out, empty: false };
  }
}
