/**
 * The reads: get, and list with the API server's resourceVersion semantics (unset, "0", exact or
 * not older than) and continue tokens that read the snapshot of their first page.
 */
import { groupVersion } from '../../model/api-path.js';
import type { KubeObject } from '../../model/object-key.js';
import { ApiError, badRequest, expired, invalid, resourceVersionTooLarge, type FieldError } from '../api-error.js';
import { goJsonKind, goJsonSyntaxError } from '../go-json.js';
import { storageKey } from '../registry.js';
import { type Scope, type ListOptions, type Result, present, parseSelection, selects, parseResourceVersion, type OperationsCore } from './support.js';

interface ContinueToken {
  v: 'meta.k8s.io/v1';
  rv: number;
  start: string;
}

function encodeContinue(token: ContinueToken): string {
  return Buffer.from(JSON.stringify(token)).toString('base64url');
}

const CONTINUE_EXPIRED =
  'The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter, or use the continue token in this response to retrieve the remainder of the results. Continuing with the provided token results in an inconsistent list - objects that were created, modified, or deleted between the time the first chunk was returned and now may show up in the list.';

function listOptionsInvalid(errors: FieldError[]): ApiError {
  return invalid('ListOptions', 'meta.k8s.io', '', errors);
}

/**
 * storage.DecodeContinue as kube-apiserver runs it, with its answers: base64 without padding, then
 * JSON into `{v, rv, start}` (encoding/json's errors, keys matched case-insensitively), then the
 * version, a start resourceVersion and a clean start key.
 */
function decodeContinue(token: string): ContinueToken {
  const notValid = (detail: string) => badRequest(`invalid continue token: continue key is not valid${detail}`);
  const bytes = Buffer.from(token, 'utf8');
  let digits = 0;
  for (let i = 0; i < bytes.length; i++) {
    const c = bytes[i]!;
    if (c === 0x0a || c === 0x0d) continue;
    if (!BASE64URL.test(String.fromCharCode(c))) throw notValid(`: illegal base64 data at input byte ${i}`);
    digits++;
  }
  if (digits % 4 === 1) throw notValid(`: illegal base64 data at input byte ${bytes.length - 1}`);
  const data = Buffer.from(token, 'base64url');
  const syntax = goJsonSyntaxError(data);
  if (syntax) throw notValid(`: ${syntax}`);
  const value: unknown = JSON.parse(data.toString('utf8'));
  const fields: { v: string; rv: number; start: string } = { v: '', rv: 0, start: '' };
  let typeError: string | undefined;
  if (value !== null && (typeof value !== 'object' || Array.isArray(value))) {
    typeError = `json: cannot unmarshal ${goJsonKind(value)} into Go value of type storage.continueToken`;
  } else if (value !== null) {
    for (const [key, v] of Object.entries(value)) {
      const name = (['v', 'rv', 'start'] as const).find((f) => f === key.toLowerCase());
      if (!name || v === null) continue;
      const goType = name === 'rv' ? 'int64' : 'string';
      const fits = name === 'rv' ? typeof v === 'number' && Number.isInteger(v) : typeof v === 'string';
      if (fits) (fields as Record<string, unknown>)[name] = v;
      else
        typeError ??= `json: cannot unmarshal ${goJsonKind(v)}${typeof v === 'number' ? ` ${v}` : ''} into Go struct field continueToken.${name} of type ${goType}`;
    }
  }
  if (typeError) throw notValid(`: ${typeError}`);
  if (fields.v !== 'meta.k8s.io/v1') throw notValid(`: server does not recognize this encoded version ${fields.v}`);
  if (fields.rv === 0) throw notValid(': incorrect encoded start resourceVersion (version meta.k8s.io/v1)');
  if (fields.start === '') throw notValid(': encoded start key empty (version meta.k8s.io/v1)');
  const key = fields.start.startsWith('/') ? fields.start : `/${fields.start}`;
  if (goPathClean(key) !== key) throw notValid(`: ${fields.start}`);
  return { v: 'meta.k8s.io/v1', rv: fields.rv, start: fields.start };
}

const BASE64URL = /^[A-Za-z0-9_-]$/;

/** Go's path.Clean for an absolute path. */
function goPathClean(path: string): string {
  const parts: string[] = [];
  for (const part of path.split('/')) {
    if (part === '' || part === '.') continue;
    if (part === '..') parts.pop();
    else parts.push(part);
  }
  return `/${parts.join('/')}`;
}

export function getObject(core: OperationsCore, scope: Scope, name: string, resourceVersion?: string | null): Result {
  const rv = parseResourceVersion(resourceVersion);
  if (rv !== undefined && rv > core.store.resourceVersion) throw resourceVersionTooLarge(rv, core.store.resourceVersion);
  const stored = core.stored(scope, name);
  return { code: 200, body: present(scope.def, scope.version, stored) };
}

/**
 * Lists with the apiserver's resourceVersion semantics: unset = most recent, "0" = any (the limit is
 * ignored, as the watch cache does), "X" = not older than X, or exactly X with
 * resourceVersionMatch=Exact or with a limit; continue tokens read the snapshot of their first page and
 * expire (410) when it leaves the retained history.
 */
export function listObjects(core: OperationsCore, scope: Scope, options: ListOptions): Result {
  const { def, version } = scope;
  const selection = parseSelection(def, options.labelSelector, options.fieldSelector);
  const rvText = options.resourceVersion ?? '';
  const match = options.resourceVersionMatch ?? '';
  const requestedRv = parseResourceVersion(rvText);
  const errors: FieldError[] = [];
  // In kube-apiserver's order (ValidateListOptions): the missing resourceVersion first, then the value.
  if (match !== '' && rvText === '')
    errors.push({ type: 'Forbidden', field: 'resourceVersionMatch', detail: 'resourceVersionMatch is forbidden unless resourceVersion is provided' });
  if (match !== '' && match !== 'Exact' && match !== 'NotOlderThan') {
    errors.push({ type: 'NotSupported', field: 'resourceVersionMatch', value: match, detail: 'supported values: "Exact", "NotOlderThan", ""' });
  }
  if (match !== '' && options.continueToken)
    errors.push({ type: 'Forbidden', field: 'resourceVersionMatch', detail: 'resourceVersionMatch is forbidden when continue is provided' });
  if (match === 'Exact' && rvText === '0')
    errors.push({ type: 'Forbidden', field: 'resourceVersionMatch', detail: 'resourceVersionMatch "exact" is forbidden for resourceVersion "0"' });
  if (errors.length > 0) throw listOptionsInvalid(errors);
  if (options.continueToken && rvText !== '') throw badRequest('specifying resource version is not allowed when using continue');
  if (requestedRv !== undefined && requestedRv > core.store.resourceVersion) throw resourceVersionTooLarge(requestedRv, core.store.resourceVersion);

  const resource = storageKey(def);
  const namespace = def.namespaced ? scope.namespace : undefined;
  const keyOf = (o: KubeObject): string => `${o.metadata?.namespace ?? ''}/${o.metadata?.name ?? ''}`;
  let limit = options.limit !== undefined && options.limit > 0 ? options.limit : undefined;
  let listRv = core.store.resourceVersion;
  let start = '';
  let snapshot: KubeObject[] | undefined;
  if (options.continueToken) {
    const token = decodeContinue(options.continueToken);
    start = token.start;
    snapshot = core.store.listAt(resource, namespace, token.rv);
    if (snapshot === undefined) {
      const fresh = encodeContinue({ v: 'meta.k8s.io/v1', rv: core.store.resourceVersion, start });
      throw expired(CONTINUE_EXPIRED, fresh);
    }
    listRv = token.rv;
  } else if (requestedRv === 0) {
    limit = undefined;
  } else if (requestedRv !== undefined && (match === 'Exact' || (match === '' && limit !== undefined))) {
    snapshot = core.store.listAt(resource, namespace, requestedRv);
    if (snapshot === undefined) throw expired(`The resourceVersion for the provided list is too old.`);
    listRv = requestedRv;
  }
  let items = (snapshot ?? core.store.list(resource, namespace)).filter((o) => selects(selection, o));
  if (start) items = items.filter((o) => keyOf(o) >= start);
  const metadata: Record<string, unknown> = { resourceVersion: String(listRv) };
  if (limit !== undefined && items.length > limit) {
    const remaining = items.length - limit;
    items = items.slice(0, limit);
    metadata.continue = encodeContinue({ v: 'meta.k8s.io/v1', rv: listRv, start: keyOf(items[items.length - 1]!) + '\u0000' });
    metadata.remainingItemCount = remaining;
  }
  const body: KubeObject = {
    kind: def.listKind,
    apiVersion: groupVersion(def.group, version),
    metadata,
    items: items.map((o) => present(def, version, o, def.listItemsCarryTypeMeta)),
  };
  return { code: 200, body };
}
