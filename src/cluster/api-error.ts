/**
 * metav1.Status errors, with the reasons, codes, messages and details a real kube-apiserver uses:
 * clients (client-go's `errors.IsConflict`, client-node's status checks) switch on `reason` and `code`.
 */

export interface StatusCause {
  reason?: string;
  message?: string;
  field?: string;
}

export interface StatusDetails {
  name?: string;
  group?: string;
  /** For most errors this is the resource (`configmaps`), for Invalid the kind (`ConfigMap`), as in Kubernetes. */
  kind?: string;
  uid?: string;
  causes?: StatusCause[];
  retryAfterSeconds?: number;
}

export interface MetaStatus {
  kind: 'Status';
  apiVersion: 'v1';
  /** ListMeta; only an expired continue token's Status carries something here (a fresh `continue`). */
  metadata: { continue?: string };
  status: 'Success' | 'Failure';
  message?: string;
  reason?: string;
  details?: StatusDetails;
  code?: number;
}

/** A group and a plural resource name: the unit errors talk about (`configmaps`, `widgets.example.com`). */
export interface GroupResource {
  group: string;
  resource: string;
}

export function qualifiedResource(gr: GroupResource): string {
  return gr.group ? `${gr.resource}.${gr.group}` : gr.resource;
}

export class ApiError extends Error {
  constructor(
    readonly code: number,
    readonly reason: string,
    message: string,
    readonly details?: StatusDetails,
    readonly continueToken?: string,
  ) {
    super(message);
    this.name = 'ApiError';
  }

  toStatus(): MetaStatus {
    const metadata = this.continueToken ? { continue: this.continueToken } : {};
    const status: MetaStatus = { kind: 'Status', apiVersion: 'v1', metadata, status: 'Failure', message: this.message };
    // StatusReasonUnknown ("") is omitted, as errors that are not a metav1.Status come out (500).
    if (this.reason) status.reason = this.reason;
    if (this.details !== undefined) status.details = this.details;
    status.code = this.code;
    return status;
  }
}

function objectDetails(gr: GroupResource, name: string): StatusDetails {
  const details: StatusDetails = { name };
  if (gr.group) details.group = gr.group;
  details.kind = gr.resource;
  return details;
}

export function notFound(gr: GroupResource, name: string): ApiError {
  return new ApiError(404, 'NotFound', `${qualifiedResource(gr)} "${name}" not found`, objectDetails(gr, name));
}

/** A path the server has no handler for (unknown group, version, resource or subresource). */
export function pathNotFound(): ApiError {
  return new ApiError(404, 'NotFound', 'the server could not find the requested resource', {});
}

export function alreadyExists(gr: GroupResource, name: string): ApiError {
  return new ApiError(409, 'AlreadyExists', `${qualifiedResource(gr)} "${name}" already exists`, objectDetails(gr, name));
}

export const MODIFIED_CONFLICT = 'the object has been modified; please apply your changes to the latest version and try again';

export function conflict(gr: GroupResource, name: string, why: string = MODIFIED_CONFLICT): ApiError {
  return new ApiError(409, 'Conflict', `Operation cannot be fulfilled on ${qualifiedResource(gr)} "${name}": ${why}`, objectDetails(gr, name));
}

export function badRequest(message: string): ApiError {
  return new ApiError(400, 'BadRequest', message);
}

export function forbidden(gr: GroupResource, name: string, why: string, causes?: StatusCause[]): ApiError {
  const details = objectDetails(gr, name);
  if (causes) details.causes = causes;
  const subject = name ? `${qualifiedResource(gr)} "${name}"` : qualifiedResource(gr);
  return new ApiError(403, 'Forbidden', `${subject} is forbidden: ${why}`, details);
}

export function methodNotAllowed(): ApiError {
  return new ApiError(405, 'MethodNotAllowed', 'the server does not allow this method on the requested resource', {});
}

export function methodNotSupported(gr: GroupResource, action: string): ApiError {
  const details: StatusDetails = {};
  if (gr.group) details.group = gr.group;
  details.kind = gr.resource;
  return new ApiError(405, 'MethodNotAllowed', `${action} is not supported on resources of kind "${qualifiedResource(gr)}"`, details);
}

export function unsupportedMediaType(contentType: string, accepted: readonly string[]): ApiError {
  return new ApiError(
    415,
    'UnsupportedMediaType',
    `the body of the request was in an unknown format - accepted media types include: ${accepted.join(', ')}`,
    contentType ? { causes: [{ reason: 'UnsupportedMediaType', message: contentType }] } : {},
  );
}

/** 410 Expired; an expired continue token's Status offers a fresh (inconsistent) `continue` token. */
export function expired(message: string, continueToken?: string): ApiError {
  return new ApiError(410, 'Expired', message, undefined, continueToken);
}

/** 429 TooManyRequests, as an eviction blocked by a PodDisruptionBudget gets. */
export function tooManyRequests(message: string, causes: StatusCause[] = []): ApiError {
  return new ApiError(429, 'TooManyRequests', message, causes.length > 0 ? { causes } : {});
}

export function resourceVersionTooLarge(requested: number, current: number): ApiError {
  return new ApiError(504, 'Timeout', `Timeout: Too large resource version: ${requested}, current: ${current}`, {
    causes: [{ reason: 'ResourceVersionTooLarge', message: 'Too large resource version' }],
    retryAfterSeconds: 1,
  });
}

export function requestEntityTooLarge(limit: number): ApiError {
  return new ApiError(413, 'RequestEntityTooLarge', `Request entity too large: limit is ${limit}`);
}

export function internalError(message: string): ApiError {
  return new ApiError(500, 'InternalError', `Internal error occurred: ${message}`, { causes: [{ message }] });
}

/** One field problem, as k8s.io/apimachinery/pkg/util/validation/field reports it. */
/** A bad value printed as Go prints it (a []string as `[]string{"x"}`), where JSON's quoting is not Go's. */
export class GoValue {
  constructor(readonly text: string) {}
}

export interface FieldError {
  type: 'Required' | 'Invalid' | 'Forbidden' | 'NotSupported' | 'Duplicate' | 'TooLong' | 'NotFound' | 'TooMany' | 'TypeInvalid';
  field: string;
  value?: unknown;
  detail: string;
  /** The value as Go's field.Error prints it, when JSON would not (`map[string]interface {}{...}`, `1e+06`). */
  shownValue?: string;
}

const CAUSE_REASON: Record<FieldError['type'], string> = {
  Required: 'FieldValueRequired',
  Invalid: 'FieldValueInvalid',
  Forbidden: 'FieldValueForbidden',
  NotSupported: 'FieldValueNotSupported',
  Duplicate: 'FieldValueDuplicate',
  TooLong: 'FieldValueTooLong',
  NotFound: 'FieldValueNotFound',
  TooMany: 'FieldValueTooMany',
  TypeInvalid: 'FieldValueTypeInvalid',
};

function fieldErrorBody(e: FieldError): string {
  if (e.shownValue !== undefined) {
    const label =
      { Duplicate: 'Duplicate value', NotSupported: 'Unsupported value', NotFound: 'Not found', TooMany: 'Too many' }[e.type as string] ?? 'Invalid value';
    return `${label}: ${e.shownValue}${e.detail ? `: ${e.detail}` : ''}`;
  }
  switch (e.type) {
    case 'Required':
      return `Required value${e.detail ? `: ${e.detail}` : ''}`;
    case 'Forbidden':
      return `Forbidden${e.detail ? `: ${e.detail}` : ''}`;
    case 'Duplicate':
      return `Duplicate value: ${JSON.stringify(e.value)}`;
    case 'NotSupported':
      return `Unsupported value: ${e.value instanceof GoValue ? e.value.text : JSON.stringify(e.value)}${e.detail ? `: ${e.detail}` : ''}`;
    case 'TooLong':
      return `Too long: ${e.detail}`;
    case 'NotFound':
      return `Not found: ${JSON.stringify(e.value)}`;
    case 'TooMany':
      return `Too many: ${JSON.stringify(e.value)}${e.detail ? `: ${e.detail}` : ''}`;
    case 'TypeInvalid':
    case 'Invalid': {
      const v = typeof e.value === 'string' ? JSON.stringify(e.value) : JSON.stringify(e.value ?? null);
      return `Invalid value: ${v}${e.detail ? `: ${e.detail}` : ''}`;
    }
  }
}

/** 422 Invalid, worded like `ConfigMap "x" is invalid: metadata.name: Invalid value: ...`. */
export function invalid(kind: string, group: string, name: string, errors: readonly FieldError[]): ApiError {
  // field.ErrorList.ToAggregate drops repeated messages (the causes keep them).
  const texts = [...new Set(errors.map((e) => `${e.field}: ${fieldErrorBody(e)}`))];
  const summary = texts.length === 1 ? texts[0]! : `[${texts.join(', ')}]`;
  const details: StatusDetails = { name };
  if (group) details.group = group;
  details.kind = kind;
  details.causes = errors.map((e) => ({ reason: CAUSE_REASON[e.type], message: fieldErrorBody(e), field: e.field }));
  const qualifiedKind = group ? `${kind}.${group}` : kind;
  return new ApiError(422, 'Invalid', `${qualifiedKind} "${name}" is invalid: ${summary}`, details);
}

/** 422 without an object (a JSON patch that cannot be applied, for instance). */
export function unprocessable(message: string): ApiError {
  return new ApiError(422, 'Invalid', message);
}

export function successStatus(details: StatusDetails): MetaStatus {
  return { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success', details };
}
