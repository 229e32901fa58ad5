/**
 * The embedded API server's protobuf request bodies: decoded by the Kubernetes protobuf codec
 * (src/wire/), and a body it cannot decode answered with the 400 BadRequest a kube-apiserver sends.
 */
import { badRequest, type ApiError } from './api-error.js';
import { decodeKubernetesProtobuf, KubernetesProtobufError } from '../wire/index.js';

function summarize(body: Uint8Array): string {
  if (body.length === 0) return '<empty>';
  const hex = Buffer.from(body.buffer, body.byteOffset, Math.min(body.byteLength, 30)).toString('hex');
  return body.length > 30 ? `${hex} ...` : hex;
}

/**
 * For the API server: a protobuf request body as the JSON object to create or update, or the 400
 * BadRequest a kube-apiserver answers for a body it cannot decode (its message format included).
 * `kind` (and `apiVersion`) are the endpoint's, the defaults for an envelope that leaves them empty.
 */
export function decodeProtobufRequestBody(body: Uint8Array, kind: string, apiVersion?: string): Record<string, unknown> {
  try {
    return decodeKubernetesProtobuf(body, { kind, apiVersion }).object;
  } catch (err) {
    if (!(err instanceof KubernetesProtobufError)) throw err;
    const apiError: ApiError = badRequest(`the object provided is unrecognized (must be of type ${kind}): ${err.message} (${summarize(body)})`);
    throw apiError;
  }
}
