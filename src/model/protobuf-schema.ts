/**
 * The shape of the generated schema (`schema.generated.ts`) that drives the protobuf decoder: how to
 * read each message's bytes (from the official generated.proto files) and how the Go type behind it
 * renders as JSON (from its struct tags), which together say what JSON the API server would store.
 */

export type ScalarType =
  | 'double'
  | 'float'
  | 'int32'
  | 'int64'
  | 'uint32'
  | 'uint64'
  | 'sint32'
  | 'sint64'
  | 'fixed32'
  | 'fixed64'
  | 'sfixed32'
  | 'sfixed64'
  | 'bool'
  | 'string'
  | 'bytes';

/**
 * The Go type of a field, as far as encoding/json cares: `pointer`, `slice`, `map` and `bytes` are nil
 * when the field is absent from the wire (null, or omitted under omitempty); `struct` always renders;
 * the scalar shapes render their zero value when absent.
 */
export type GoShape = 'pointer' | 'slice' | 'map' | 'struct' | 'bytes' | 'string' | 'bool' | 'int' | 'uint' | 'float';

/** Go types with their own MarshalJSON, rendered by `special-types.ts`. */
export type SpecialType = 'Time' | 'MicroTime' | 'FieldsV1' | 'Quantity' | 'IntOrString' | 'RawExtension';

export interface FieldSchema {
  number: number;
  /** JSON key; absent for an anonymous embedded struct (`json:",inline"`), whose keys are promoted. */
  json?: string;
  omitempty?: true;
  shape: GoShape;
  /** A scalar type or a message's full name; for a map field, the value's type. */
  type: string;
  repeated?: true;
  /** Set for a proto map field: the key's scalar type. */
  mapKey?: ScalarType;
}

export interface MessageSchema {
  special?: SpecialType;
  /** A named Go slice type (metav1.Verbs) sent as a message holding only its items (field 1). */
  wrapper?: true;
  fields: FieldSchema[];
}

export interface KubernetesProtobufSchema {
  /** Version of k8s.io/api and k8s.io/apimachinery the schema was generated from. */
  version: string;
  /** apiVersion -> kind -> message full name. */
  kinds: Record<string, Record<string, string>>;
  messages: Record<string, MessageSchema>;
  /** Field numbers of the envelope, runtime.Unknown and its runtime.TypeMeta. */
  envelope: { typeMeta: number; raw: number; contentEncoding: number; contentType: number; apiVersion: number; kind: number };
}
