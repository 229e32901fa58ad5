/**
 * Query parameters read as kube-apiserver reads them, in one place for the proxy's request
 * classifier (api-path.ts: is this GET a watch?) and the embedded cluster (every option of a request).
 *
 * kube-apiserver decodes a query into ListOptions, GetOptions, PatchOptions, DeleteOptions,
 * PodExecOptions... with apimachinery's url.Values conversions (k8s.io/apimachinery/pkg/runtime/
 * conversion.go), which read the FIRST value of a parameter:
 * - booleans (watch, allowWatchBookmarks, sendInitialEvents, force, orphanDependents, exec's
 *   stdin/stdout/stderr/tty, ...): `Convert_Slice_string_To_bool`: only an absent parameter, "0" or
 *   "false" in any case (strings.EqualFold) are false; anything else is true: "True" (Python's
 *   spelling), "yes", and the empty string (`?watch` alone is a watch). Pointer fields
 *   (sendInitialEvents, force, orphanDependents) are unset only when the parameter is absent.
 * - integers (limit, timeoutSeconds, gracePeriodSeconds, tailLines, limitBytes): strconv.ParseInt
 *   base 10, 64 bits: an optional sign and decimal digits, nothing else (not "", not " 5", not "5.0");
 *   anything else fails the whole request with 400 BadRequest and strconv's error as the message.
 * - strings (labelSelector, fieldSelector, continue, resourceVersion, resourceVersionMatch): the first value.
 * - `pretty` is not an option: the response writer reads it with strconv.ParseBool (true for
 *   1/t/T/TRUE/true/True, false for their opposites, false for anything else) and, when it is absent
 *   or empty, pretty-prints for curl, Wget and browsers (their User-Agent).
 * - `dryRun` is a list of strings; each must be "All" (validated by the server).
 */

/** The query of a request: a URLSearchParams (named by shape: the core compiles without DOM or Node types). */
export interface QueryParams {
  get(name: string): string | null;
}

/**
 * strings.EqualFold(value, "false"): Unicode simple case folding, under which "ſ" (U+017F, long s)
 * folds to "s" too; no other character folds to a letter of "false" that toLowerCase would miss.
 */
function equalFoldFalse(value: string): boolean {
  return value.toLowerCase().replace(/ſ/g, 's') === 'false';
}

/** apimachinery's Convert_Slice_string_To_bool on the first value of `raw` (null: absent). */
export function kubeBool(raw: string | null): boolean {
  if (raw === null) return false;
  return !(raw === '0' || equalFoldFalse(raw));
}

/** A bool option: false when absent, else Convert_Slice_string_To_bool. */
export function boolParam(query: QueryParams, name: string): boolean {
  return kubeBool(query.get(name));
}

/** A *bool option (Convert_Slice_string_To_Pointer_bool): undefined when absent. */
export function optionalBoolParam(query: QueryParams, name: string): boolean | undefined {
  const raw = query.get(name);
  return raw === null ? undefined : kubeBool(raw);
}

/** A query value that is not what its option's type needs: the message is strconv's, as kube-apiserver answers it. */
export class QueryParamError extends Error {
  constructor(
    readonly param: string,
    message: string,
  ) {
    super(message);
    this.name = 'QueryParamError';
  }
}

const INT64_MAX = 2n ** 63n - 1n;
const INT64_MIN = -(2n ** 63n);

/**
 * strconv.ParseInt(raw, 10, 64), for an int64 or *int64 option: undefined when absent; a QueryParamError
 * with strconv's message ("invalid syntax", "value out of range") otherwise. Values beyond 2^53 are
 * kept in range by the int64 check and rounded by Number, which no option here can tell apart.
 */
export function integerParam(query: QueryParams, name: string): number | undefined {
  const raw = query.get(name);
  if (raw === null) return undefined;
  if (!/^[+-]?[0-9]+$/.test(raw)) throw new QueryParamError(name, `strconv.ParseInt: parsing ${goQuote(raw)}: invalid syntax`);
  const big = BigInt(raw);
  if (big > INT64_MAX || big < INT64_MIN) throw new QueryParamError(name, `strconv.ParseInt: parsing ${goQuote(raw)}: value out of range`);
  return Number(big);
}

/** A string option: its first value, undefined when absent (an empty value is an empty string, which options treat as unset). */
export function stringParam(query: QueryParams, name: string): string | undefined {
  return query.get(name) ?? undefined;
}

/** The values strconv.ParseBool accepts, with their meaning. */
const PARSE_BOOL: Readonly<Record<string, boolean>> = {
  '1': true,
  t: true,
  T: true,
  TRUE: true,
  true: true,
  True: true,
  '0': false,
  f: false,
  F: false,
  FALSE: false,
  false: false,
  False: false,
};

/**
 * Does the answer get indented? apiserver's isPrettyPrint: a non-empty `pretty` by strconv.ParseBool
 * (anything it refuses is false), else true for a User-Agent starting curl, Wget or Mozilla/5.0.
 */
export function prettyPrint(query: QueryParams, userAgent: string | undefined): boolean {
  const raw = query.get('pretty');
  if (raw !== null && raw !== '') return PARSE_BOOL[raw] ?? false;
  const agent = userAgent ?? '';
  return agent.startsWith('curl') || agent.startsWith('Wget') || agent.startsWith('Mozilla/5.0');
}

const GO_ESCAPES: Readonly<Record<string, string>> = { '\u0007': '\\a', '\u000b': '\\v', '\u007f': '\\x7f' };

/** strconv.Quote as a query value needs it: JSON's quoting, with Go's spelling of the control characters. */
function goQuote(s: string): string {
  return JSON.stringify(s)
    .replace(/\\u00([01][0-9a-f])/g, (_, hex: string) => GO_ESCAPES[String.fromCharCode(parseInt(hex, 16))] ?? `\\x${hex}`)
    .replace(/\u007f/g, '\\x7f');
}
