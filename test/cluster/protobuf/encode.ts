/** A minimal protobuf writer for hand-built test messages (field by field, no schema). */

export type Field =
  | { n: number; varint: number | bigint }
  | { n: number; bytes: Uint8Array | string }
  | { n: number; message: Field[] }
  | { n: number; fixed32: number }
  | { n: number; wireType: number; raw: Uint8Array };

function varint(value: number | bigint): number[] {
  let v = BigInt.asUintN(64, BigInt(value));
  const out: number[] = [];
  do {
    let b = Number(v & 0x7fn);
    v >>= 7n;
    if (v > 0n) b |= 0x80;
    out.push(b);
  } while (v > 0n);
  return out;
}

export function encodeMessage(fields: Field[]): Uint8Array {
  const out: number[] = [];
  for (const f of fields) {
    if ('varint' in f) {
      out.push(...varint(f.n * 8), ...varint(f.varint));
    } else if ('fixed32' in f) {
      const b = Buffer.alloc(4);
      b.writeUInt32LE(f.fixed32);
      out.push(...varint(f.n * 8 + 5), ...b);
    } else if ('raw' in f) {
      out.push(...varint(f.n * 8 + f.wireType), ...f.raw);
    } else {
      const body = 'message' in f ? encodeMessage(f.message) : typeof f.bytes === 'string' ? Buffer.from(f.bytes, 'utf8') : f.bytes;
      out.push(...varint(f.n * 8 + 2), ...varint(body.length), ...body);
    }
  }
  return Uint8Array.from(out);
}

/** A Kubernetes protobuf body: `k8s\0` and a runtime.Unknown around the object's message. */
export function kubernetesBody(apiVersion: string, kind: string, object: Field[] | Uint8Array): Buffer {
  const raw = object instanceof Uint8Array ? object : encodeMessage(object);
  const unknown = encodeMessage([
    {
      n: 1,
      message: [
        { n: 1, bytes: apiVersion },
        { n: 2, bytes: kind },
      ],
    },
    { n: 2, bytes: raw },
  ]);
  return Buffer.concat([Buffer.from('k8s\0', 'latin1'), unknown]);
}
