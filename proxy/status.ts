/** Kubernetes `Status` answers the proxy makes up itself (the upstream is unreachable, broken...). */
import type { KubeObject } from '../src/model/object-key.js';

export function statusObject(code: number, reason: string, message: string): KubeObject {
  return { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message, reason, code };
}

/** The answer for an upstream failure before any response byte reached the controller. */
export function upstreamFailureStatus(err: Error): { code: number; object: KubeObject } {
  const code = (err as NodeJS.ErrnoException).code ?? '';
  // A connection that could not be made is "unavailable" (clients retry); a server that answered
  // with something that is not HTTP, or hung up mid-answer, is a bad gateway.
  const unavailable = ['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH', 'ETIMEDOUT'].includes(code);
  const status = unavailable ? 503 : 502;
  const reason = unavailable ? 'ServiceUnavailable' : 'BadGateway';
  const message = `kperturb proxy: the API server ${unavailable ? 'is unreachable' : 'gave no valid answer'} (${code || err.message})`;
  return { code: status, object: statusObject(status, reason, message) };
}
