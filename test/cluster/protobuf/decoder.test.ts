/**
 * The decoder on hand-built bodies: protobuf wire rules (unknown fields, merging, packed repeats, long
 * varints), Go's JSON rules for absent fields, and a clear error for every body it cannot decode.
 */
import test from 'ava';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { ApiError } from '../../../src/cluster/api-error.js';
import { decodeKubernetesProtobuf, isKubernetesProtobufKind, KubernetesProtobufError, type KubernetesProtobufErrorCode } from '../../../src/wire/index.js';
import { decodeProtobufRequestBody } from '../../../src/cluster/protobuf-body.js';
import { encodeMessage, kubernetesBody, type Field } from './encode.js';

const vectors = fileURLToPath(new URL('../../../../test/cluster/protobuf/vectors/', import.meta.url));

// Field numbers from k8s.io/api core/v1 and apimachinery meta/v1 generated.proto.
const meta = (...fields: Field[]): Field => ({ n: 1, message: fields });
const name = (v: string): Field => ({ n: 1, bytes: v });
const namespace = (v: string): Field => ({ n: 3, bytes: v });
const dataEntry = (k: string, v: string): Field => ({
  n: 2,
  message: [
    { n: 1, bytes: k },
    { n: 2, bytes: v },
  ],
});

function decodeError(t: import('ava').ExecutionContext, body: Uint8Array, code: KubernetesProtobufErrorCode, message: RegExp): void {
  const err = t.throws(() => decodeKubernetesProtobuf(body), { instanceOf: KubernetesProtobufError });
  t.is(err?.code, code);
  t.regex(err?.message ?? '', message);
}

test('a ConfigMap renders as Go would store it: absent creationTimestamp is null, empty optional fields are left out', (t) => {
  const body = kubernetesBody('v1', 'ConfigMap', [meta(name('cfg'), namespace('default')), dataEntry('a', '1'), dataEntry('b', '')]);
  t.deepEqual(decodeKubernetesProtobuf(body), {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    object: { kind: 'ConfigMap', apiVersion: 'v1', metadata: { name: 'cfg', namespace: 'default', creationTimestamp: null }, data: { a: '1', b: '' } },
  });
});

test('fields this schema does not know are skipped, including groups', (t) => {
  const plain = decodeKubernetesProtobuf(kubernetesBody('v1', 'ConfigMap', [meta(name('cfg'))])).object;
  const withUnknown = decodeKubernetesProtobuf(
    kubernetesBody('v1', 'ConfigMap', [
      meta(name('cfg'), { n: 500, varint: 7 }),
      { n: 99, bytes: 'future field' },
      { n: 98, fixed32: 1 },
      // A proto2 group: start group 97, { field 1 = 1 }, end group 97 (tag 97 << 3 | 4 = 780).
      { n: 97, wireType: 3, raw: Uint8Array.of(0x08, 0x01, 0x8c, 0x06) },
    ]),
  ).object;
  t.deepEqual(withUnknown, plain);
});

test('a singular message sent twice merges; a singular scalar sent twice keeps the last value', (t) => {
  const object = decodeKubernetesProtobuf(kubernetesBody('v1', 'ConfigMap', [meta(name('first')), meta(name('second'), namespace('ns'))])).object;
  t.deepEqual(object.metadata, { name: 'second', namespace: 'ns', creationTimestamp: null });
});

test('repeated numbers are read packed and unpacked; negative and 64-bit values survive', (t) => {
  // Pod.spec(2).securityContext(14).supplementalGroups(4), repeated int64; runAsUser(2) int64.
  const run = Uint8Array.of(0xe8, 0x07, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01); // packed 1000, -1
  const securityContext: Field[] = [
    { n: 4, varint: 5 },
    { n: 4, bytes: run },
    { n: 2, varint: 2n ** 40n },
  ];
  const object = decodeKubernetesProtobuf(kubernetesBody('v1', 'Pod', [{ n: 2, message: [{ n: 14, message: securityContext }] }])).object;
  const spec = object.spec as { securityContext: unknown; containers: unknown };
  t.deepEqual(spec.securityContext, { runAsUser: 2 ** 40, supplementalGroups: [5, 1000, -1] });
  t.is(spec.containers, null, 'a nil slice without omitempty is null');
});

test('a negative int32 (a 10-byte varint) decodes to the negative number', (t) => {
  // ServicePort: port(3) int32.
  const object = decodeKubernetesProtobuf(kubernetesBody('v1', 'Service', [{ n: 2, message: [{ n: 1, message: [{ n: 3, varint: -2 }] }] }])).object;
  t.deepEqual((object.spec as { ports: unknown }).ports, [{ port: -2, targetPort: 0 }]);
});

test('metav1.Time keeps whole seconds; an empty Time message is null', (t) => {
  // ObjectMeta.creationTimestamp(8), deletionTimestamp(9) as Timestamp{seconds(1), nanos(2)}.
  const ts: Field[] = [
    { n: 1, varint: 1715938212 },
    { n: 2, varint: 999_999_999 },
  ];
  const object = decodeKubernetesProtobuf(kubernetesBody('v1', 'ConfigMap', [meta(name('cfg'), { n: 8, message: [] }, { n: 9, message: ts })])).object;
  t.deepEqual(object.metadata, { name: 'cfg', creationTimestamp: null, deletionTimestamp: '2024-05-17T09:30:12Z' });
});

test('an envelope without kind or apiVersion takes the defaults given, as the API server takes the endpoint', (t) => {
  const raw = encodeMessage([meta(name('cfg'))]);
  const body = Buffer.concat([Buffer.from('k8s\0', 'latin1'), encodeMessage([{ n: 2, bytes: raw }])]);
  decodeError(t, body, 'MissingKind', /'Kind' is missing/);
  const decoded = decodeKubernetesProtobuf(body, { apiVersion: 'v1', kind: 'ConfigMap' });
  t.is(decoded.kind, 'ConfigMap');
  t.deepEqual(decoded.object.metadata, { name: 'cfg', creationTimestamp: null });
});

test('bodies that are not Kubernetes protobuf are refused', (t) => {
  decodeError(t, Buffer.alloc(0), 'NotKubernetesProtobuf', /^empty data$/);
  decodeError(t, Buffer.from('{"kind":"ConfigMap"}'), 'NotKubernetesProtobuf', /expected prefix \[107 56 115 0\]/);
  decodeError(t, Buffer.from('k8s\0', 'latin1'), 'NotKubernetesProtobuf', /^empty body$/);
  const statefulset = readFileSync(`${vectors}statefulset.pb`);
  decodeError(t, statefulset.subarray(0, statefulset.length - 10), 'NotKubernetesProtobuf', /runs past the end/);
  decodeError(t, Buffer.concat([Buffer.from('k8s\0', 'latin1'), Buffer.from([0x0f])]), 'NotKubernetesProtobuf', /illegal wire type 7/);
});

test('kinds without a schema are refused by name', (t) => {
  decodeError(
    t,
    kubernetesBody('example.com/v1', 'Database', [meta(name('db'))]),
    'UnknownKind',
    /no kind "Database" is registered for version "example.com\/v1"/,
  );
  t.false(isKubernetesProtobufKind('example.com/v1', 'Database'));
  t.true(isKubernetesProtobufKind('apps/v1', 'StatefulSet'));
  t.true(isKubernetesProtobufKind('coordination.k8s.io/v1', 'Lease'));
});

test('DeleteOptions decode under the group version of any resource, as client-go encodes them', (t) => {
  // DeleteOptions: gracePeriodSeconds(1) int64, propagationPolicy(4) string.
  const body = kubernetesBody('storage.k8s.io/v1', 'DeleteOptions', [
    { n: 1, varint: 0 },
    { n: 4, bytes: 'Background' },
  ]);
  t.deepEqual(decodeKubernetesProtobuf(body).object, {
    kind: 'DeleteOptions',
    apiVersion: 'storage.k8s.io/v1',
    gracePeriodSeconds: 0,
    propagationPolicy: 'Background',
  });
  t.true(isKubernetesProtobufKind('example.com/v1alpha1', 'DeleteOptions'));
});

test('an object whose bytes break its schema is refused with the path of the bad field', (t) => {
  decodeError(
    t,
    kubernetesBody('v1', 'ConfigMap', [meta({ n: 1, varint: 3 })]),
    'MalformedObject',
    /ConfigMap v1: metadata\.name: wrong wire type 0 for a string/,
  );
  decodeError(t, kubernetesBody('v1', 'ConfigMap', [{ n: 1, varint: 3 }]), 'MalformedObject', /metadata: wrong wire type 0 for a message/);
  // Service.spec(2).ports(1)[0].targetPort(4): IntOrString type(1) 7.
  decodeError(
    t,
    kubernetesBody('v1', 'Service', [{ n: 2, message: [{ n: 1, message: [{ n: 4, message: [{ n: 1, varint: 7 }] }] }] }]),
    'MalformedObject',
    /spec\.ports\[0\]\.targetPort: impossible IntOrString\.Type 7/,
  );
  // PersistentVolumeClaim.spec(2).resources(2).requests(2): map<string, Quantity{string(1)}>.
  const requests: Field = {
    n: 2,
    message: [
      { n: 1, bytes: 'storage' },
      { n: 2, message: [{ n: 1, bytes: 'ten gigs' }] },
    ],
  };
  decodeError(
    t,
    kubernetesBody('v1', 'PersistentVolumeClaim', [{ n: 2, message: [{ n: 2, message: [requests] }] }]),
    'MalformedObject',
    /spec\.resources\.requests\["storage"\]: quantities must match/,
  );
  // ControllerRevision.data(2): RawExtension{raw(1)} must hold JSON.
  decodeError(
    t,
    kubernetesBody('apps/v1', 'ControllerRevision', [{ n: 2, message: [{ n: 1, bytes: 'not: json' }] }]),
    'MalformedObject',
    /data: RawExtension holds bytes that are not JSON/,
  );
  const overlong = Uint8Array.of(0x18, ...new Array<number>(10).fill(0xff), 0x01); // field 3 varint, 11 bytes
  decodeError(t, kubernetesBody('apps/v1', 'ControllerRevision', overlong), 'MalformedObject', /varint longer than 10 bytes/);
});

test('decodeProtobufRequestBody answers what kube-apiserver answers: 400 BadRequest naming the expected kind', (t) => {
  t.deepEqual(decodeProtobufRequestBody(kubernetesBody('v1', 'Secret', [meta(name('s'))]), 'Secret').metadata, { name: 's', creationTimestamp: null });
  const err = t.throws(() => decodeProtobufRequestBody(Buffer.from('{}'), 'Secret'), { instanceOf: ApiError });
  t.is(err?.code, 400);
  t.is(err?.reason, 'BadRequest');
  t.is(
    err?.message,
    'the object provided is unrecognized (must be of type Secret): provided data does not appear to be a protobuf message, expected prefix [107 56 115 0] (7b7d)',
  );
});
