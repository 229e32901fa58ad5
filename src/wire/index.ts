/**
 * Kubernetes protobuf request bodies (`application/vnd.kubernetes.protobuf`), which controller-runtime
 * sends for built-in kinds at its defaults, decoded to the JSON object the API server would store.
 *
 * The envelope is the 4 magic bytes `k8s\0` and a runtime.Unknown message: the object's apiVersion
 * and kind, and `raw`, the object's own message. The messages are read with the official schemas
 * (generated.proto of k8s.io/api and k8s.io/apimachinery, vendored in vendor/kubernetes-proto/proto) and
 * rendered as Go's encoding/json renders the Go types (./go-json.ts); both are compiled into
 * vendor/kubernetes-proto/schema.generated.ts. The embedded cluster (src/cluster/protobuf-body.ts) and
 * the proxy (proxy/api-errors.ts) both decode with it: this module is theirs, not the cluster's.
 */
import { FieldDecodeError, GoJsonRenderer, type JsonObject } from './go-json.js';
import { schema } from '../../vendor/kubernetes-proto/schema.generated.js';
import { scalarValue } from './scalars.js';
import { ProtobufWireError, readWireMessage, type WireValue } from './wire.js';

export const KUBERNETES_PROTOBUF_MEDIA_TYPE = 'application/vnd.kubernetes.protobuf';
/** `k8s\0`, in front of every Kubernetes protobuf body. */
export const KUBERNETES_PROTOBUF_MAGIC: Uint8Array = Uint8Array.of(0x6b, 0x38, 0x73, 0x00);

export type KubernetesProtobufErrorCode =
  /** Not a Kubernetes protobuf body: empty, no magic, or the envelope does not parse. */
  | 'NotKubernetesProtobuf'
  /** The envelope names no kind or no apiVersion, and no default was given. */
  | 'MissingKind'
  /** A kind with no schema here (a custom resource, or a group this decoder does not carry). */
  | 'UnknownKind'
  /** The object's bytes do not decode with its kind's schema. */
  | 'MalformedObject';

export class KubernetesProtobufError extends Error {
  constructor(
    readonly code: KubernetesProtobufErrorCode,
    message: string,
  ) {
    super(message);
    this.name = 'KubernetesProtobufError';
  }
}

export interface DecodedKubernetesObject {
  apiVersion: string;
  kind: string;
  /** The object as JSON, `kind` and `apiVersion` first, as a JSON client would send it. */
  object: Record<string, unknown>;
}

/** What the endpoint implies when the envelope leaves apiVersion or kind empty (Go's copyKindDefaults). */
export interface KindDefaults {
  apiVersion?: string | undefined;
  kind?: string | undefined;
}

const renderer = new GoJsonRenderer(schema);

/**
 * The message of a kind. Every served group version also serves the meta/v1 option kinds
 * (metav1.AddToGroupVersion), and client-go encodes a delete's DeleteOptions in the group version of
 * the resource it deletes, whichever group that is: those kinds are found under any apiVersion.
 */
function messageFor(apiVersion: string, kind: string): string | undefined {
  return schema.kinds[apiVersion]?.[kind] ?? schema.kinds[V1BETA1_WIRE_TWINS[apiVersion] ?? '']?.[kind] ?? schema.kinds['meta.k8s.io/v1']?.[kind];
}

/**
 * Older group-versions (served by emulated releases before 1.22/1.25, see ../kube-version.ts) whose
 * messages are their v1 successor's with the same field numbers and JSON names, v1 only adding fields
 * (compared field by field against k8s.io/api v0.20.2's generated.proto): a body of one decodes with
 * the other's schema. client-go v0.17-v0.20 controllers send policy/v1beta1 PodDisruptionBudgets this way.
 */
const V1BETA1_WIRE_TWINS: Readonly<Record<string, string>> = {
  'policy/v1beta1': 'policy/v1',
  'batch/v1beta1': 'batch/v1',
  'rbac.authorization.k8s.io/v1beta1': 'rbac.authorization.k8s.io/v1',
  'coordination.k8s.io/v1beta1': 'coordination.k8s.io/v1',
  'events.k8s.io/v1beta1': 'events.k8s.io/v1',
};

function lastString(records: WireValue[] | undefined, what: string): string {
  if (!records) return '';
  try {
    return scalarValue('string', records[records.length - 1]!) as string;
  } catch (err) {
    throw new KubernetesProtobufError('NotKubernetesProtobuf', `runtime.Unknown ${what}: ${(err as Error).message}`);
  }
}

function lastBytes(records: WireValue[] | undefined, what: string): Uint8Array {
  if (!records) return new Uint8Array(0);
  try {
    return scalarValue('bytes', records[records.length - 1]!) as Uint8Array;
  } catch (err) {
    throw new KubernetesProtobufError('NotKubernetesProtobuf', `runtime.Unknown ${what}: ${(err as Error).message}`);
  }
}

function readEnvelope(body: Uint8Array): { apiVersion: string; kind: string; raw: Uint8Array } {
  const magic = KUBERNETES_PROTOBUF_MAGIC;
  if (body.length === 0) throw new KubernetesProtobufError('NotKubernetesProtobuf', 'empty data');
  if (body.length < magic.length || magic.some((b, i) => body[i] !== b)) {
    throw new KubernetesProtobufError('NotKubernetesProtobuf', 'provided data does not appear to be a protobuf message, expected prefix [107 56 115 0]');
  }
  if (body.length === magic.length) throw new KubernetesProtobufError('NotKubernetesProtobuf', 'empty body');
  const e = schema.envelope;
  try {
    const unknown = readWireMessage(body.subarray(magic.length));
    const typeMetaRecords = unknown.get(e.typeMeta);
    let apiVersion = '';
    let kind = '';
    if (typeMetaRecords) {
      const typeMeta = readWireMessage(Buffer.concat(typeMetaRecords.map((r) => lastBytes([r], 'typeMeta'))));
      apiVersion = lastString(typeMeta.get(e.apiVersion), 'typeMeta.apiVersion');
      kind = lastString(typeMeta.get(e.kind), 'typeMeta.kind');
    }
    // contentEncoding and contentType are ignored, as the Go protobuf serializer ignores them.
    return { apiVersion, kind, raw: lastBytes(unknown.get(e.raw), 'raw') };
  } catch (err) {
    if (err instanceof KubernetesProtobufError) throw err;
    if (err instanceof ProtobufWireError) throw new KubernetesProtobufError('NotKubernetesProtobuf', `runtime.Unknown: ${err.message}`);
    throw err;
  }
}

/**
 * Decodes a Kubernetes protobuf body (magic + runtime.Unknown) into the object's JSON. Throws
 * `KubernetesProtobufError` for anything that is not a well-formed object of a kind with a schema.
 */
export function decodeKubernetesProtobuf(body: Uint8Array, defaults: KindDefaults = {}): DecodedKubernetesObject {
  const envelope = readEnvelope(body);
  const kind = envelope.kind || defaults.kind || '';
  const apiVersion = envelope.apiVersion || defaults.apiVersion || '';
  if (!kind) throw new KubernetesProtobufError('MissingKind', "Object 'Kind' is missing in the protobuf envelope");
  if (!apiVersion) throw new KubernetesProtobufError('MissingKind', "Object 'apiVersion' is missing in the protobuf envelope");
  const messageName = messageFor(apiVersion, kind);
  if (!messageName) throw new KubernetesProtobufError('UnknownKind', `no kind "${kind}" is registered for version "${apiVersion}"`);
  let rendered: JsonObject;
  try {
    rendered = renderer.renderMessage(messageName, envelope.raw, '') as JsonObject;
  } catch (err) {
    if (err instanceof FieldDecodeError) throw new KubernetesProtobufError('MalformedObject', `${kind} ${apiVersion}: ${err.message}`);
    throw err;
  }
  return { apiVersion, kind, object: { kind, apiVersion, ...rendered } };
}

/** Whether the decoder has a schema for the kind. */
export function isKubernetesProtobufKind(apiVersion: string, kind: string): boolean {
  return messageFor(apiVersion, kind) !== undefined;
}
