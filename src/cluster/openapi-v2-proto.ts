/**
 * The protobuf form of /openapi/v2, as kube-apiserver serves it (kube-openapi's handler: the JSON
 * document parsed by gnostic's `openapi_v2.ParseDocument`, then `proto.Marshal`): the `openapi.v2.Document`
 * message of github.com/google/gnostic-models openapiv2/OpenAPIv2.proto (field numbers below are that
 * file's). kubectl asks for it (`Accept: application/com.github.proto-openapi.spec.v2@v1.0+protobuf`) when
 * a group-version is missing from /openapi/v3, e.g. to validate an apiextensions.k8s.io/v1beta1 CRD.
 *
 * Only the parts the documents of openapi.ts use are encoded: paths with their operations (query,
 * path, header and body parameters; responses), definitions with the Schema fields, and vendor
 * extensions. gnostic keeps an extension (and a default, enum or example value) as its YAML text;
 * `yaml` writes it here. For the built-in kinds' extensions the text is yaml.v3's to the byte (checked
 * against gnostic v0.6.9: its ParseDocument of the JSON and a decode of these bytes are proto.Equal);
 * a nested CRD default or example may differ in indentation or quoting (yaml.v3 indents a sequence under
 * a key by 4 and single-quotes `x: y`), the same value to the YAML reader kubectl uses.
 */
import { stringify } from 'yaml';

type Obj = Record<string, unknown>;

/** A protobuf message under construction: fields appended in field-number order. */
class MessageWriter {
  private readonly parts: Buffer[] = [];

  private tag(field: number, wireType: number): void {
    this.varint((field << 3) | wireType);
  }

  private varint(value: number | bigint): void {
    let v = BigInt.asUintN(64, BigInt(value));
    const bytes: number[] = [];
    while (v >= 0x80n) {
      bytes.push(Number(v & 0x7fn) | 0x80);
      v >>= 7n;
    }
    bytes.push(Number(v));
    this.parts.push(Buffer.from(bytes));
  }

  /** A proto3 string: omitted when empty (or absent), as Go's marshaller does. */
  string(field: number, value: unknown): this {
    if (typeof value !== 'string' || value === '') return this;
    return this.bytes(field, Buffer.from(value, 'utf8'));
  }

  strings(field: number, values: unknown): this {
    for (const v of Array.isArray(values) ? values : []) if (typeof v === 'string') this.bytes(field, Buffer.from(v, 'utf8'));
    return this;
  }

  /** A proto3 bool: omitted when false, unless it is a oneof member (`always`). */
  bool(field: number, value: unknown, always = false): this {
    if (typeof value !== 'boolean' || (!value && !always)) return this;
    this.tag(field, 0);
    this.varint(value ? 1 : 0);
    return this;
  }

  int64(field: number, value: unknown): this {
    if (typeof value !== 'number' || !Number.isInteger(value) || value === 0) return this;
    this.tag(field, 0);
    this.varint(value);
    return this;
  }

  double(field: number, value: unknown): this {
    if (typeof value !== 'number' || value === 0) return this;
    this.tag(field, 1);
    const b = Buffer.alloc(8);
    b.writeDoubleLE(value);
    this.parts.push(b);
    return this;
  }

  /** An embedded message (written even when empty, as a set message field is). */
  message(field: number, body: MessageWriter | undefined): this {
    return body === undefined ? this : this.bytes(field, body.finish());
  }

  private bytes(field: number, data: Buffer): this {
    this.tag(field, 2);
    this.varint(data.length);
    this.parts.push(data);
    return this;
  }

  finish(): Buffer {
    return Buffer.concat(this.parts);
  }
}

const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
const entries = (v: unknown): Array<[string, unknown]> => (isObj(v) ? Object.entries(v) : []);

/** `Any` {yaml = 2}: a value as gnostic keeps it, its YAML text. */
function any(value: unknown): MessageWriter {
  return new MessageWriter().string(2, stringify(value));
}

/** `repeated NamedAny vendor_extension` {name = 1, value = 2}: the `x-` keys of `obj`. */
function vendorExtensions(w: MessageWriter, field: number, obj: Obj): void {
  for (const [name, value] of Object.entries(obj)) {
    if (name.startsWith('x-')) w.message(field, new MessageWriter().string(1, name).message(2, any(value)));
  }
}

/** `Schema`. */
function schema(s: unknown): MessageWriter {
  const w = new MessageWriter();
  if (!isObj(s)) return w;
  w.string(1, s.$ref).string(2, s.format).string(3, s.title).string(4, s.description);
  if ('default' in s) w.message(5, any(s.default));
  w.double(6, s.multipleOf).double(7, s.maximum).bool(8, s.exclusiveMaximum).double(9, s.minimum).bool(10, s.exclusiveMinimum);
  w.int64(11, s.maxLength).int64(12, s.minLength).string(13, s.pattern).int64(14, s.maxItems).int64(15, s.minItems).bool(16, s.uniqueItems);
  w.int64(17, s.maxProperties).int64(18, s.minProperties).strings(19, s.required);
  for (const v of Array.isArray(s.enum) ? s.enum : []) w.message(20, any(v));
  // AdditionalPropertiesItem: oneof {Schema schema = 1; bool boolean = 2}.
  if (typeof s.additionalProperties === 'boolean') w.message(21, new MessageWriter().bool(2, s.additionalProperties, true));
  else if (isObj(s.additionalProperties)) w.message(21, new MessageWriter().message(1, schema(s.additionalProperties)));
  // TypeItem {repeated string value = 1}: one type or several.
  if (s.type !== undefined) w.message(22, new MessageWriter().strings(1, Array.isArray(s.type) ? s.type : [s.type]));
  // ItemsItem {repeated Schema schema = 1}: one schema or a tuple.
  if (s.items !== undefined) {
    const items = new MessageWriter();
    for (const item of Array.isArray(s.items) ? s.items : [s.items]) items.message(1, schema(item));
    w.message(23, items);
  }
  for (const sub of Array.isArray(s.allOf) ? s.allOf : []) w.message(24, schema(sub));
  // Properties {repeated NamedSchema additional_properties = 1}, NamedSchema {name = 1, value = 2}.
  if (isObj(s.properties)) w.message(25, namedSchemas(s.properties));
  w.string(26, s.discriminator).bool(27, s.readOnly);
  if (isObj(s.externalDocs)) w.message(29, externalDocs(s.externalDocs));
  if ('example' in s) w.message(30, any(s.example));
  vendorExtensions(w, 31, s);
  return w;
}

/** `Properties` or `Definitions`: {repeated NamedSchema additional_properties = 1}. */
function namedSchemas(schemas: Obj): MessageWriter {
  const w = new MessageWriter();
  for (const [name, value] of Object.entries(schemas)) w.message(1, new MessageWriter().string(1, name).message(2, schema(value)));
  return w;
}

/** `ExternalDocs` {description = 1, url = 2, vendor_extension = 3}. */
function externalDocs(d: Obj): MessageWriter {
  const w = new MessageWriter().string(1, d.description).string(2, d.url);
  vendorExtensions(w, 3, d);
  return w;
}

/**
 * A non-body parameter's sub-schema. The query and form-data ones have `allow_empty_value` at 5 and
 * the rest one number later than the header and path ones.
 */
function nonBodyParameter(p: Obj, withAllowEmpty: boolean): MessageWriter {
  const w = new MessageWriter().bool(1, p.required).string(2, p.in).string(3, p.description).string(4, p.name);
  if (withAllowEmpty) w.bool(5, p.allowEmptyValue);
  const o = withAllowEmpty ? 1 : 0;
  w.string(5 + o, p.type).string(6 + o, p.format);
  // items (PrimitivesItems) at 7 + o: not used by these documents.
  w.string(8 + o, p.collectionFormat);
  if ('default' in p) w.message(9 + o, any(p.default));
  w.double(10 + o, p.maximum)
    .bool(11 + o, p.exclusiveMaximum)
    .double(12 + o, p.minimum)
    .bool(13 + o, p.exclusiveMinimum);
  w.int64(14 + o, p.maxLength)
    .int64(15 + o, p.minLength)
    .string(16 + o, p.pattern)
    .int64(17 + o, p.maxItems)
    .int64(18 + o, p.minItems);
  w.bool(19 + o, p.uniqueItems);
  for (const v of Array.isArray(p.enum) ? p.enum : []) w.message(20 + o, any(v));
  w.double(21 + o, p.multipleOf);
  vendorExtensions(w, 22 + o, p);
  return w;
}

/** NonBodyParameter's oneof numbers by `in`. */
const NON_BODY_FIELD: Record<string, number> = { header: 1, formData: 2, query: 3, path: 4 };

/** `ParametersItem`: oneof {Parameter parameter = 1; JsonReference json_reference = 2}. */
function parametersItem(p: unknown): MessageWriter {
  const w = new MessageWriter();
  if (!isObj(p)) return w;
  if (typeof p.$ref === 'string') return w.message(2, new MessageWriter().string(1, p.$ref).string(2, p.description));
  // Parameter: oneof {BodyParameter body_parameter = 1; NonBodyParameter non_body_parameter = 2}.
  const parameter = new MessageWriter();
  if (p.in === 'body') {
    const body = new MessageWriter().string(1, p.description).string(2, p.name).string(3, p.in).bool(4, p.required);
    if (p.schema !== undefined) body.message(5, schema(p.schema));
    vendorExtensions(body, 6, p);
    parameter.message(1, body);
  } else {
    const field = NON_BODY_FIELD[String(p.in)] ?? NON_BODY_FIELD.query!;
    parameter.message(2, new MessageWriter().message(field, nonBodyParameter(p, field === 2 || field === 3)));
  }
  return w.message(1, parameter);
}

/** `Responses` {repeated NamedResponseValue response_code = 1, vendor_extension = 2}. */
function responses(r: Obj): MessageWriter {
  const w = new MessageWriter();
  for (const [code, value] of Object.entries(r)) {
    if (code.startsWith('x-') || !isObj(value)) continue;
    // ResponseValue: oneof {Response response = 1; JsonReference json_reference = 2}.
    const rv = new MessageWriter();
    if (typeof value.$ref === 'string') rv.message(2, new MessageWriter().string(1, value.$ref));
    else {
      // Response {description = 1, SchemaItem schema = 2 (oneof {Schema schema = 1}), vendor_extension = 5}.
      const response = new MessageWriter().string(1, value.description);
      if (value.schema !== undefined) response.message(2, new MessageWriter().message(1, schema(value.schema)));
      vendorExtensions(response, 5, value);
      rv.message(1, response);
    }
    w.message(1, new MessageWriter().string(1, code).message(2, rv));
  }
  vendorExtensions(w, 2, r);
  return w;
}

/** `Operation`. */
function operation(op: Obj): MessageWriter {
  const w = new MessageWriter().strings(1, op.tags).string(2, op.summary).string(3, op.description);
  if (isObj(op.externalDocs)) w.message(4, externalDocs(op.externalDocs));
  w.string(5, op.operationId).strings(6, op.produces).strings(7, op.consumes);
  for (const p of Array.isArray(op.parameters) ? op.parameters : []) w.message(8, parametersItem(p));
  if (isObj(op.responses)) w.message(9, responses(op.responses));
  w.strings(10, op.schemes).bool(11, op.deprecated);
  vendorExtensions(w, 13, op);
  return w;
}

/** PathItem's operation fields. */
const OPERATION_FIELD: Record<string, number> = { get: 2, put: 3, post: 4, delete: 5, options: 6, head: 7, patch: 8 };

/** `PathItem`. */
function pathItem(item: Obj): MessageWriter {
  const w = new MessageWriter().string(1, item.$ref);
  for (const [method, field] of Object.entries(OPERATION_FIELD)) if (isObj(item[method])) w.message(field, operation(item[method]));
  for (const p of Array.isArray(item.parameters) ? item.parameters : []) w.message(9, parametersItem(p));
  vendorExtensions(w, 10, item);
  return w;
}

/** The `openapi.v2.Document` message of a Swagger 2.0 document (as openApiV2Document builds it). */
export function encodeOpenApiV2Document(doc: Obj): Buffer {
  const w = new MessageWriter().string(1, doc.swagger);
  if (isObj(doc.info)) {
    const info = new MessageWriter().string(1, doc.info.title).string(2, doc.info.version).string(3, doc.info.description);
    vendorExtensions(info, 7, doc.info);
    w.message(2, info);
  }
  w.string(3, doc.host).string(4, doc.basePath).strings(5, doc.schemes).strings(6, doc.consumes).strings(7, doc.produces);
  if (isObj(doc.paths)) {
    // Paths {vendor_extension = 1, repeated NamedPathItem path = 2}.
    const paths = new MessageWriter();
    vendorExtensions(paths, 1, doc.paths);
    for (const [name, item] of entries(doc.paths))
      if (name.startsWith('/') && isObj(item)) paths.message(2, new MessageWriter().string(1, name).message(2, pathItem(item)));
    w.message(8, paths);
  }
  if (isObj(doc.definitions)) w.message(9, namedSchemas(doc.definitions));
  vendorExtensions(w, 16, doc);
  return w.finish();
}
