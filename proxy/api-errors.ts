/**
 * The api-error fault's answers and its request matcher.
 *
 * The error answers are the Status objects kube-apiserver writes in those situations
 * (k8s.io/apimachinery/pkg/api/errors: NewConflict, NewTooManyRequests, NewInternalError,
 * NewServiceUnavailable, NewTimeoutError; the Retry-After header is what the API server's response
 * writer adds when details.retryAfterSeconds is set), so that a controller that mishandles one
 * mishandles a real API server's answer, not an artifact. The write is not forwarded: like the real
 * errors, it is not applied.
 *
 * Requests are matched when they arrive, not when their answer does: "the n-th create of X" counts
 * failed attempts too, since the fault acts on the request itself. A create's key is folded like the
 * planner folds it (write-triggers.ts): a create with `generateName` is the next `<prefix>*#<n>`.
 */
import { decodeKubernetesProtobuf } from '../src/wire/index.js';
import { formatKey, isObject, parseKey, type KubeObject, type ObjectKey } from '../src/model/object-key.js';
import { SLOW_SECONDS_DEFAULT, type ApiErrorAnswer, type ApiErrorFault } from '../src/model/plan.js';
import type { RequestFacts } from './classify.js';
import { statusObject } from './status.js';

/** What the proxy answers instead of forwarding: status, Status object and extra headers. */
export interface LocalAnswer {
  status: number;
  object: KubeObject;
  headers?: Record<string, string>;
}

/** client-go's default Retry-After for a 429 from priority and fairness is 1 s; the status writer copies details.retryAfterSeconds into it. */
const RETRY_AFTER_SECONDS = 1;

/** `deployments.apps`, `configmaps`: the qualified resource kube-apiserver names in messages. */
function qualifiedResource(group: string, resource: string): string {
  return group ? `${resource}.${group}` : resource;
}

/** The answer kube-apiserver writes for `answer` on a write of `name` in `group`/`resource`. */
export function apiErrorStatus(answer: Exclude<ApiErrorAnswer, 'lost-response' | 'slow'>, group: string, resource: string, name: string): LocalAnswer {
  switch (answer) {
    case 'conflict':
      return {
        status: 409,
        object: {
          ...statusObject(
            409,
            'Conflict',
            `Operation cannot be fulfilled on ${qualifiedResource(group, resource)} "${name}": the object has been modified; please apply your changes to the latest version and try again`,
          ),
          // StatusDetails.kind is the resource for these errors; group is omitted when empty.
          details: { name, ...(group ? { group } : {}), kind: resource },
        },
      };
    case 'too-many-requests':
      return {
        status: 429,
        object: { ...statusObject(429, 'TooManyRequests', 'Too many requests, please try again later.'), details: { retryAfterSeconds: RETRY_AFTER_SECONDS } },
        headers: { 'retry-after': String(RETRY_AFTER_SECONDS) },
      };
    case 'internal-error': {
      const cause = 'etcdserver: request timed out';
      return { status: 500, object: { ...statusObject(500, 'InternalError', `Internal error occurred: ${cause}`), details: { causes: [{ message: cause }] } } };
    }
    case 'service-unavailable':
      return { status: 503, object: statusObject(503, 'ServiceUnavailable', 'the server is currently unable to handle the request') };
    case 'timeout':
      return {
        status: 504,
        object: { ...statusObject(504, 'Timeout', 'Timeout: request did not complete within requested timeout - context deadline exceeded'), details: {} },
      };
  }
}

/** What the exchange does with a request an api-error fault matched. */
export type ApiErrorAction =
  | { kind: 'answer'; answer: LocalAnswer }
  /** Forward; once the answer is in (the write applied), reset the controller's stream instead of answering. */
  | { kind: 'lose-response' }
  /** Forward; hold the answer this long before delivering it. */
  | { kind: 'delay-answer'; ms: number };

export function apiErrorAction(fault: ApiErrorFault, facts: RequestFacts, name: string): ApiErrorAction {
  if (fault.answer === 'lost-response') return { kind: 'lose-response' };
  if (fault.answer === 'slow') return { kind: 'delay-answer', ms: (fault.slowSeconds ?? SLOW_SECONDS_DEFAULT) * 1000 };
  return { kind: 'answer', answer: apiErrorStatus(fault.answer, facts.resource?.group ?? '', facts.resource?.resource ?? '', name) };
}

/**
 * The key a write request is matched under, or undefined if it names no object the proxy can tell.
 * `nextGenerated` gives the folded key the next object created with a prefix will get.
 */
export function requestMatchKey(
  facts: RequestFacts,
  body: Buffer,
  fold: (key: ObjectKey) => ObjectKey,
  nextGenerated: (family: ObjectKey) => ObjectKey,
): ObjectKey | undefined {
  if (facts.key) return fold(facts.key);
  const kind = facts.resource?.kind;
  if (facts.verb !== 'create' || !kind || facts.resource?.subresource) return undefined;
  // Named in a body the classifier could not read (protobuf, client-go's default for built-in kinds),
  // or not named at all (generateName).
  const meta = createBodyMetadata(facts, body, kind);
  const namespace =
    facts.resource?.namespaced === false ? undefined : (facts.apiPath?.namespace ?? (typeof meta?.namespace === 'string' ? meta.namespace : undefined));
  if (typeof meta?.name === 'string' && meta.name !== '') return fold(formatKey(kind, namespace, meta.name));
  const prefix = typeof meta?.generateName === 'string' ? meta.generateName : undefined;
  if (!prefix) return undefined;
  return nextGenerated(formatKey(kind, namespace, prefix));
}

/** A create's metadata; a protobuf body (client-go's default for built-in kinds) is decoded only here, where a fault needs it. */
function createBodyMetadata(facts: RequestFacts, body: Buffer, kind: string): Record<string, unknown> | undefined {
  if (isObject(facts.body)) return (facts.body as KubeObject).metadata as Record<string, unknown> | undefined;
  if (!facts.contentType?.includes('protobuf') || body.length === 0) return undefined;
  try {
    const decoded = decodeKubernetesProtobuf(body, { kind }).object;
    const meta = decoded.metadata;
    return isObject(meta) ? (meta as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

/** The object name an error message names: the request's, or the prefix of a folded generated name. */
export function nameForMessage(key: ObjectKey): string {
  const name = parseKey(key)?.name ?? '';
  return name.replace(/\*#\d+$/, '');
}
