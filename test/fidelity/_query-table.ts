/**
 * The query-parameter table (issue 38): each value of apimachinery's conversions (runtime/conversion.go:
 * Convert_Slice_string_To_bool, strconv.ParseInt for integers, the first value of a repeated
 * parameter) against each query parameter a client sends, as raw HTTP requests (no client library
 * rewriting the query), with what the server answered. One table of expected answers serves the
 * embedded cluster and the proxy (test/fidelity/query-params.test.ts) and the real control plane
 * (test/real/query-params.real.ts): all must answer alike.
 *
 * Each answer is one line: `watch` or `list` (what a GET on a collection was served as), `indented`
 * or `compact` (`pretty`), the status code of a success, or `<code> <reason>: <message>` of a refusal.
 */
import * as http from 'node:http';
import * as https from 'node:https';

export interface QueryTarget {
  url: string;
  /** Authorization and the like. */
  headers: Record<string, string>;
  caPem?: string;
}

/** Boolean spellings: apimachinery's rule says only "0" and "false" (any case, Unicode-folded) are false. */
const BOOL_VALUES = ['true', 'True', 'TRUE', '1', 'yes', 't', 'no', 'f', '', '0', 'false', 'False', 'FALSE', 'falſe'];
/** Integer spellings: strconv.ParseInt(s, 10, 64). */
const INT_VALUES = ['5', '+5', '05', '-1', '0', '', 'abc', '5.0', ' 5', '0x10', '99999999999999999999'];

const q = (name: string, value: string | null): string => (value === null ? '' : `${name}=${encodeURIComponent(value)}`);
const join = (...parts: string[]): string => parts.filter((p) => p !== '').join('&');
const shown = (value: string | null): string => (value === null ? '(absent)' : JSON.stringify(value));

interface Request {
  method: string;
  path: string;
  /** The raw query (without `?`). */
  query: string;
  body?: string;
  contentType?: string;
  /** How to read a 200: as a list-or-watch, indentation, or its status alone. */
  read: 'list-or-watch' | 'indentation' | 'status';
}

export interface QueryCase {
  title: string;
  /** Objects the case needs, made before it runs (ConfigMap names in the namespace). */
  needs?: string[];
  request(ns: string): Request;
}

function boolCases(): QueryCase[] {
  const cases: QueryCase[] = [];
  for (const v of [null, ...BOOL_VALUES]) {
    cases.push({
      title: `watch=${shown(v)}`,
      request: (ns) => ({ method: 'GET', path: `/api/v1/namespaces/${ns}/configmaps`, query: q('watch', v), read: 'list-or-watch' }),
    });
  }
  cases.push(
    { title: 'watch (bare, no `=`)', request: (ns) => ({ method: 'GET', path: `/api/v1/namespaces/${ns}/configmaps`, query: 'watch', read: 'list-or-watch' }) },
    {
      title: 'watch=false&watch=true (the first value counts)',
      request: (ns) => ({ method: 'GET', path: `/api/v1/namespaces/${ns}/configmaps`, query: 'watch=false&watch=true', read: 'list-or-watch' }),
    },
    {
      title: 'watch=true&watch=false (the first value counts)',
      request: (ns) => ({ method: 'GET', path: `/api/v1/namespaces/${ns}/configmaps`, query: 'watch=true&watch=false', read: 'list-or-watch' }),
    },
  );
  // *bool: set by any value, "false" included (then sendInitialEvents needs resourceVersionMatch).
  // Both tiers run with the WatchList gate on (1.32's default; the real tier sets it on 1.33).
  for (const v of [null, 'true', 'True', 'false', '0', '']) {
    cases.push({
      title: `watch with sendInitialEvents=${shown(v)}`,
      request: (ns) => ({ method: 'GET', path: `/api/v1/namespaces/${ns}/configmaps`, query: join('watch=1', q('sendInitialEvents', v)), read: 'status' }),
    });
  }
  for (const extra of ['resourceVersionMatch=NotOlderThan', 'resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true', 'resourceVersionMatch=Exact']) {
    cases.push({
      title: `watch with sendInitialEvents="true"&${extra}`,
      request: (ns) => ({
        method: 'GET',
        path: `/api/v1/namespaces/${ns}/configmaps`,
        query: join('watch=1&sendInitialEvents=true&timeoutSeconds=1', extra),
        read: 'status',
      }),
    });
  }
  cases.push({
    title: 'watch with resourceVersionMatch="NotOlderThan" alone',
    request: (ns) => ({ method: 'GET', path: `/api/v1/namespaces/${ns}/configmaps`, query: 'watch=1&resourceVersionMatch=NotOlderThan', read: 'status' }),
  });
  // An apply by a second manager: force=true takes the field over (200), force=false conflicts (409).
  BOOL_VALUES.forEach((v, i) => {
    cases.push({
      title: `apply with force=${shown(v)}`,
      needs: [`force-${i}`],
      request: (ns) => ({
        method: 'PATCH',
        path: `/api/v1/namespaces/${ns}/configmaps/force-${i}`,
        query: join('fieldManager=second', q('force', v)),
        body: JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `force-${i}` }, data: { v: 'second' } }),
        contentType: 'application/apply-patch+yaml',
        read: 'status',
      }),
    });
  });
  // force on a merge patch is refused whatever its value: the *bool is set.
  for (const v of [null, 'false', '0', 'true']) {
    cases.push({
      title: `merge patch with force=${shown(v)}`,
      needs: ['merge'],
      request: (ns) => ({
        method: 'PATCH',
        path: `/api/v1/namespaces/${ns}/configmaps/merge`,
        query: q('force', v),
        body: JSON.stringify({ data: { w: '1' } }),
        contentType: 'application/merge-patch+json',
        read: 'status',
      }),
    });
  }
  // pretty: strconv.ParseBool, not apimachinery's rule ("yes" is not pretty).
  for (const v of [null, ...BOOL_VALUES]) {
    cases.push({
      title: `pretty=${shown(v)}`,
      needs: ['shown'],
      request: (ns) => ({ method: 'GET', path: `/api/v1/namespaces/${ns}/configmaps/shown`, query: q('pretty', v), read: 'indentation' }),
    });
  }
  return cases;
}

function integerCases(): QueryCase[] {
  const cases: QueryCase[] = [];
  for (const v of [null, ...INT_VALUES]) {
    cases.push(
      {
        title: `list limit=${shown(v)}`,
        request: (ns) => ({ method: 'GET', path: `/api/v1/namespaces/${ns}/configmaps`, query: q('limit', v), read: 'status' }),
      },
      {
        title: `list timeoutSeconds=${shown(v)}`,
        request: (ns) => ({ method: 'GET', path: `/api/v1/namespaces/${ns}/configmaps`, query: q('timeoutSeconds', v), read: 'status' }),
      },
      {
        title: `delete gracePeriodSeconds=${shown(v)}`,
        request: (ns) => ({ method: 'DELETE', path: `/api/v1/namespaces/${ns}/configmaps/absent`, query: q('gracePeriodSeconds', v), read: 'status' }),
      },
    );
  }
  for (const v of ['5', '+5', '', 'abc']) {
    cases.push({
      title: `watch timeoutSeconds=${shown(v)}`,
      request: (ns) => ({
        method: 'GET',
        path: `/api/v1/namespaces/${ns}/configmaps`,
        query: join('watch=true', q('timeoutSeconds', v)),
        read: 'list-or-watch',
      }),
    });
  }
  cases.push({
    title: 'list limit=abc&timeoutSeconds=x (the first field of ListOptions names the error)',
    request: (ns) => ({ method: 'GET', path: `/api/v1/namespaces/${ns}/configmaps`, query: 'limit=abc&timeoutSeconds=x', read: 'status' }),
  });
  return cases;
}

function stringCases(): QueryCase[] {
  const cases: QueryCase[] = [];
  for (const rv of [null, '0']) {
    for (const m of [null, '', 'NotOlderThan', 'Exact', 'exact', 'bogus']) {
      cases.push({
        title: `list resourceVersion=${shown(rv)} resourceVersionMatch=${shown(m)}`,
        request: (ns) => ({
          method: 'GET',
          path: `/api/v1/namespaces/${ns}/configmaps`,
          query: join(q('resourceVersion', rv), q('resourceVersionMatch', m)),
          read: 'status',
        }),
      });
    }
  }
  // labels.Parse's lexer and parser, and NewRequirement's validation: each message it has.
  const selectors = ['', 'a=b', 'a==b', 'a!=b', 'a in (b,c)', 'a notin (b)', '!a', 'a', 'a=b,c', '!!bad', 'a=b=c', 'a b'];
  selectors.push('a_', 'a=-b', 'a in ()', 'a in (b', 'a in (b c)', 'a in b', 'a in (,b,,)', 'a>1', 'a>x', 'a<+5', 'a,', ',a', '!a=b', 'a notin');
  selectors.push('x/y/z', 'Example.com/a', '/a', 'a=(b)', ' a = b ', 'a=b,', 'a in (b,-c)', 'a>1,b');
  for (const s of selectors) {
    cases.push({
      title: `list labelSelector=${shown(s)}`,
      request: (ns) => ({ method: 'GET', path: `/api/v1/namespaces/${ns}/configmaps`, query: q('labelSelector', s), read: 'status' }),
    });
  }
  for (const s of ['', 'metadata.name=x', 'metadata.name==x', 'metadata.name!=x', 'bogus=x', 'data.v=1', 'metadata.name']) {
    cases.push({
      title: `list fieldSelector=${shown(s)}`,
      request: (ns) => ({ method: 'GET', path: `/api/v1/namespaces/${ns}/configmaps`, query: q('fieldSelector', s), read: 'status' }),
    });
  }
  // storage.DecodeContinue: base64 without padding, encoding/json's errors, then the token's fields.
  for (const c of ['', 'garbage', 'abc=', 'a', 'ab$c']) {
    cases.push({
      title: `list continue=${shown(c)}`,
      request: (ns) => ({ method: 'GET', path: `/api/v1/namespaces/${ns}/configmaps`, query: q('continue', c), read: 'status' }),
    });
  }
  const tokens = [
    '{',
    '{"v" 1}',
    '{"v":"x",}',
    '[1,]',
    'tru',
    '"a\\q"',
    '-x',
    '1.e',
    '{} x',
    '[]',
    'null',
    '{"rv":"1"}',
    '{"rv":1.5}',
    '{"v":"x"}',
    '{"V":"meta.k8s.io/v1","rv":0,"start":"a"}',
    '{"v":"meta.k8s.io/v1","rv":1,"start":""}',
    '{"v":"meta.k8s.io/v1","rv":1,"start":"a/../../b"}',
  ];
  for (const json of tokens) {
    cases.push({
      title: `list continue=base64url(${json})`,
      request: (ns) => ({
        method: 'GET',
        path: `/api/v1/namespaces/${ns}/configmaps`,
        query: q('continue', Buffer.from(json).toString('base64url')),
        read: 'status',
      }),
    });
  }
  for (const d of [null, 'All', 'all', '', 'x']) {
    cases.push({
      title: `create dryRun=${shown(d)}`,
      request: (ns) => ({
        method: 'POST',
        path: `/api/v1/namespaces/${ns}/configmaps`,
        query: q('dryRun', d),
        body: JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { generateName: 'dry-' } }),
        contentType: 'application/json',
        read: 'status',
      }),
    });
  }
  return cases;
}

export const QUERY_CASES: readonly QueryCase[] = [...boolCases(), ...integerCases(), ...stringCases()];

interface Answer {
  status: number;
  headers: http.IncomingHttpHeaders;
  /** The whole body, or (for a watch) its first line. */
  body: string;
}

/** Sends `r`; a 200 that streams watch events is cut after its first line (the watch never ends by itself). */
function send(target: QueryTarget, r: Request): Promise<Answer> {
  const u = new URL(target.url);
  const lib = u.protocol === 'https:' ? https : http;
  return new Promise((resolve, reject) => {
    const req = lib.request(
      {
        hostname: u.hostname,
        port: u.port,
        method: r.method,
        path: r.query === '' ? r.path : `${r.path}?${r.query}`,
        headers: { ...target.headers, accept: 'application/json', ...(r.contentType ? { 'content-type': r.contentType } : {}) },
        agent: false,
        ...(target.caPem ? { ca: target.caPem } : {}),
      },
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => {
          body += chunk;
          if (body.startsWith('{"type"') && body.includes('\n')) {
            resolve({ status: res.statusCode ?? 0, headers: res.headers, body: body.slice(0, body.indexOf('\n')) });
            req.destroy();
          }
        });
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
        res.on('error', reject);
      },
    );
    req.on('error', (err) => (req.destroyed ? undefined : reject(err)));
    req.end(r.body);
  });
}

function describe(r: Request, a: Answer): string {
  let parsed: Record<string, unknown> | undefined;
  try {
    parsed = JSON.parse(a.body) as Record<string, unknown>;
  } catch {
    parsed = undefined;
  }
  if (a.status >= 300) return `${a.status} ${String(parsed?.reason ?? '')}: ${String(parsed?.message ?? a.body)}`;
  switch (r.read) {
    case 'list-or-watch':
      return parsed && typeof parsed.type === 'string'
        ? 'watch'
        : parsed && String(parsed.kind).endsWith('List')
          ? 'list'
          : `unreadable: ${a.body.slice(0, 80)}`;
    case 'indentation':
      return a.body.includes('\n  ') ? 'indented' : 'compact';
    case 'status':
      return String(a.status);
  }
}

/** Runs every case against `target` in namespace `ns` (created here, with the objects the cases need); answers by title. */
export async function runQueryTable(target: QueryTarget, ns: string): Promise<Record<string, string>> {
  const setup = async (method: string, path: string, body: unknown, contentType = 'application/json', query = ''): Promise<void> => {
    const a = await send(target, { method, path, query, body: JSON.stringify(body), contentType, read: 'status' });
    if (a.status >= 300) throw new Error(`setting up the query table: ${method} ${path} -> ${a.status} ${a.body}`);
  };
  await setup('POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
  const needed = new Set(QUERY_CASES.flatMap((c) => c.needs ?? []));
  for (const name of needed) {
    // Applied by "first", so a second manager's apply conflicts on data.v unless forced.
    await setup(
      'PATCH',
      `/api/v1/namespaces/${ns}/configmaps/${name}`,
      { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name }, data: { v: 'first' } },
      'application/apply-patch+yaml',
      'fieldManager=first',
    );
  }
  const answers: Record<string, string> = {};
  for (const c of QUERY_CASES) {
    const r = c.request(ns);
    answers[c.title] = describe(r, await send(target, r));
  }
  return answers;
}

/**
 * What kube-apiserver v1.33 answers each case (checked on the real control plane by test/real/query-params.real.ts);
 * the embedded cluster and the proxy must answer the same.
 */
export const EXPECTED_QUERY_ANSWERS: Record<string, string> = {
  'watch=(absent)': 'list',
  'watch="true"': 'watch',
  'watch="True"': 'watch',
  'watch="TRUE"': 'watch',
  'watch="1"': 'watch',
  'watch="yes"': 'watch',
  'watch="t"': 'watch',
  'watch="no"': 'watch',
  'watch="f"': 'watch',
  'watch=""': 'watch',
  'watch="0"': 'list',
  'watch="false"': 'list',
  'watch="False"': 'list',
  'watch="FALSE"': 'list',
  'watch="falſe"': 'list',
  'watch (bare, no `=`)': 'watch',
  'watch=false&watch=true (the first value counts)': 'list',
  'watch=true&watch=false (the first value counts)': 'watch',
  'watch with sendInitialEvents=(absent)': '200',
  'watch with sendInitialEvents="true"':
    '422 Invalid: ListOptions.meta.k8s.io "" is invalid: resourceVersionMatch: Forbidden: sendInitialEvents requires setting resourceVersionMatch to NotOlderThan',
  'watch with sendInitialEvents="True"':
    '422 Invalid: ListOptions.meta.k8s.io "" is invalid: resourceVersionMatch: Forbidden: sendInitialEvents requires setting resourceVersionMatch to NotOlderThan',
  'watch with sendInitialEvents="false"':
    '422 Invalid: ListOptions.meta.k8s.io "" is invalid: resourceVersionMatch: Forbidden: sendInitialEvents requires setting resourceVersionMatch to NotOlderThan',
  'watch with sendInitialEvents="0"':
    '422 Invalid: ListOptions.meta.k8s.io "" is invalid: resourceVersionMatch: Forbidden: sendInitialEvents requires setting resourceVersionMatch to NotOlderThan',
  'watch with sendInitialEvents=""':
    '422 Invalid: ListOptions.meta.k8s.io "" is invalid: resourceVersionMatch: Forbidden: sendInitialEvents requires setting resourceVersionMatch to NotOlderThan',
  'watch with sendInitialEvents="true"&resourceVersionMatch=NotOlderThan': '200',
  'watch with sendInitialEvents="true"&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true': '200',
  'watch with sendInitialEvents="true"&resourceVersionMatch=Exact':
    '422 Invalid: ListOptions.meta.k8s.io "" is invalid: [resourceVersionMatch: Forbidden: sendInitialEvents requires setting resourceVersionMatch to NotOlderThan, resourceVersionMatch: Unsupported value: "Exact": supported values: "NotOlderThan"]',
  'watch with resourceVersionMatch="NotOlderThan" alone':
    '422 Invalid: ListOptions.meta.k8s.io "" is invalid: resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided',
  'apply with force="true"': '200',
  'apply with force="True"': '200',
  'apply with force="TRUE"': '200',
  'apply with force="1"': '200',
  'apply with force="yes"': '200',
  'apply with force="t"': '200',
  'apply with force="no"': '200',
  'apply with force="f"': '200',
  'apply with force=""': '200',
  'apply with force="0"': '409 Conflict: Apply failed with 1 conflict: conflict with "first": .data.v',
  'apply with force="false"': '409 Conflict: Apply failed with 1 conflict: conflict with "first": .data.v',
  'apply with force="False"': '409 Conflict: Apply failed with 1 conflict: conflict with "first": .data.v',
  'apply with force="FALSE"': '409 Conflict: Apply failed with 1 conflict: conflict with "first": .data.v',
  'apply with force="falſe"': '409 Conflict: Apply failed with 1 conflict: conflict with "first": .data.v',
  'merge patch with force=(absent)': '200',
  'merge patch with force="false"': '422 Invalid: PatchOptions.meta.k8s.io "" is invalid: force: Forbidden: may not be specified for non-apply patch',
  'merge patch with force="0"': '422 Invalid: PatchOptions.meta.k8s.io "" is invalid: force: Forbidden: may not be specified for non-apply patch',
  'merge patch with force="true"': '422 Invalid: PatchOptions.meta.k8s.io "" is invalid: force: Forbidden: may not be specified for non-apply patch',
  'pretty=(absent)': 'compact',
  'pretty="true"': 'indented',
  'pretty="True"': 'indented',
  'pretty="TRUE"': 'indented',
  'pretty="1"': 'indented',
  'pretty="yes"': 'compact',
  'pretty="t"': 'indented',
  'pretty="no"': 'compact',
  'pretty="f"': 'compact',
  'pretty=""': 'compact',
  'pretty="0"': 'compact',
  'pretty="false"': 'compact',
  'pretty="False"': 'compact',
  'pretty="FALSE"': 'compact',
  'pretty="falſe"': 'compact',
  'list limit=(absent)': '200',
  'list timeoutSeconds=(absent)': '200',
  'delete gracePeriodSeconds=(absent)': '404 NotFound: configmaps "absent" not found',
  'list limit="5"': '200',
  'list timeoutSeconds="5"': '200',
  'delete gracePeriodSeconds="5"': '404 NotFound: configmaps "absent" not found',
  'list limit="+5"': '200',
  'list timeoutSeconds="+5"': '200',
  'delete gracePeriodSeconds="+5"': '404 NotFound: configmaps "absent" not found',
  'list limit="05"': '200',
  'list timeoutSeconds="05"': '200',
  'delete gracePeriodSeconds="05"': '404 NotFound: configmaps "absent" not found',
  'list limit="-1"': '200',
  'list timeoutSeconds="-1"': '200',
  'delete gracePeriodSeconds="-1"': '404 NotFound: configmaps "absent" not found',
  'list limit="0"': '200',
  'list timeoutSeconds="0"': '200',
  'delete gracePeriodSeconds="0"': '404 NotFound: configmaps "absent" not found',
  'list limit=""': '400 BadRequest: strconv.ParseInt: parsing "": invalid syntax',
  'list timeoutSeconds=""': '400 BadRequest: strconv.ParseInt: parsing "": invalid syntax',
  'delete gracePeriodSeconds=""': '400 BadRequest: strconv.ParseInt: parsing "": invalid syntax',
  'list limit="abc"': '400 BadRequest: strconv.ParseInt: parsing "abc": invalid syntax',
  'list timeoutSeconds="abc"': '400 BadRequest: strconv.ParseInt: parsing "abc": invalid syntax',
  'delete gracePeriodSeconds="abc"': '400 BadRequest: strconv.ParseInt: parsing "abc": invalid syntax',
  'list limit="5.0"': '400 BadRequest: strconv.ParseInt: parsing "5.0": invalid syntax',
  'list timeoutSeconds="5.0"': '400 BadRequest: strconv.ParseInt: parsing "5.0": invalid syntax',
  'delete gracePeriodSeconds="5.0"': '400 BadRequest: strconv.ParseInt: parsing "5.0": invalid syntax',
  'list limit=" 5"': '400 BadRequest: strconv.ParseInt: parsing " 5": invalid syntax',
  'list timeoutSeconds=" 5"': '400 BadRequest: strconv.ParseInt: parsing " 5": invalid syntax',
  'delete gracePeriodSeconds=" 5"': '400 BadRequest: strconv.ParseInt: parsing " 5": invalid syntax',
  'list limit="0x10"': '400 BadRequest: strconv.ParseInt: parsing "0x10": invalid syntax',
  'list timeoutSeconds="0x10"': '400 BadRequest: strconv.ParseInt: parsing "0x10": invalid syntax',
  'delete gracePeriodSeconds="0x10"': '400 BadRequest: strconv.ParseInt: parsing "0x10": invalid syntax',
  'list limit="99999999999999999999"': '400 BadRequest: strconv.ParseInt: parsing "99999999999999999999": value out of range',
  'list timeoutSeconds="99999999999999999999"': '400 BadRequest: strconv.ParseInt: parsing "99999999999999999999": value out of range',
  'delete gracePeriodSeconds="99999999999999999999"': '400 BadRequest: strconv.ParseInt: parsing "99999999999999999999": value out of range',
  'watch timeoutSeconds="5"': 'watch',
  'watch timeoutSeconds="+5"': 'watch',
  'watch timeoutSeconds=""': '400 BadRequest: strconv.ParseInt: parsing "": invalid syntax',
  'watch timeoutSeconds="abc"': '400 BadRequest: strconv.ParseInt: parsing "abc": invalid syntax',
  'list limit=abc&timeoutSeconds=x (the first field of ListOptions names the error)': '400 BadRequest: strconv.ParseInt: parsing "x": invalid syntax',
  'list resourceVersion=(absent) resourceVersionMatch=(absent)': '200',
  'list resourceVersion=(absent) resourceVersionMatch=""': '200',
  'list resourceVersion=(absent) resourceVersionMatch="NotOlderThan"':
    '422 Invalid: ListOptions.meta.k8s.io "" is invalid: resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden unless resourceVersion is provided',
  'list resourceVersion=(absent) resourceVersionMatch="Exact"':
    '422 Invalid: ListOptions.meta.k8s.io "" is invalid: resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden unless resourceVersion is provided',
  'list resourceVersion=(absent) resourceVersionMatch="exact"':
    '422 Invalid: ListOptions.meta.k8s.io "" is invalid: [resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden unless resourceVersion is provided, resourceVersionMatch: Unsupported value: "exact": supported values: "Exact", "NotOlderThan", ""]',
  'list resourceVersion=(absent) resourceVersionMatch="bogus"':
    '422 Invalid: ListOptions.meta.k8s.io "" is invalid: [resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden unless resourceVersion is provided, resourceVersionMatch: Unsupported value: "bogus": supported values: "Exact", "NotOlderThan", ""]',
  'list resourceVersion="0" resourceVersionMatch=(absent)': '200',
  'list resourceVersion="0" resourceVersionMatch=""': '200',
  'list resourceVersion="0" resourceVersionMatch="NotOlderThan"': '200',
  'list resourceVersion="0" resourceVersionMatch="Exact"':
    '422 Invalid: ListOptions.meta.k8s.io "" is invalid: resourceVersionMatch: Forbidden: resourceVersionMatch "exact" is forbidden for resourceVersion "0"',
  'list resourceVersion="0" resourceVersionMatch="exact"':
    '422 Invalid: ListOptions.meta.k8s.io "" is invalid: resourceVersionMatch: Unsupported value: "exact": supported values: "Exact", "NotOlderThan", ""',
  'list resourceVersion="0" resourceVersionMatch="bogus"':
    '422 Invalid: ListOptions.meta.k8s.io "" is invalid: resourceVersionMatch: Unsupported value: "bogus": supported values: "Exact", "NotOlderThan", ""',
  'list labelSelector=""': '200',
  'list labelSelector="a=b"': '200',
  'list labelSelector="a==b"': '200',
  'list labelSelector="a!=b"': '200',
  'list labelSelector="a in (b,c)"': '200',
  'list labelSelector="a notin (b)"': '200',
  'list labelSelector="!a"': '200',
  'list labelSelector="a"': '200',
  'list labelSelector="a=b,c"': '200',
  'list labelSelector="!!bad"': "400 BadRequest: unable to parse requirement: found '!', expected: identifier",
  'list labelSelector="a=b=c"': "400 BadRequest: found '=', expected: ',' or 'end of string'",
  'list labelSelector="a b"': "400 BadRequest: unable to parse requirement: found 'b', expected: in, notin, =, ==, !=, gt, lt",
  'list labelSelector="a_"':
    "400 BadRequest: unable to parse requirement: <nil>: Invalid value: \"a_\": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')",
  'list labelSelector="a=-b"':
    "400 BadRequest: unable to parse requirement: values[0][a]: Invalid value: \"-b\": a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')",
  'list labelSelector="a in ()"': '200',
  'list labelSelector="a in (b"': "400 BadRequest: unable to parse requirement: found '', expected: ',' or ')'",
  'list labelSelector="a in (b c)"': "400 BadRequest: unable to parse requirement: found 'c', expected: ',' or ')'",
  'list labelSelector="a in b"': "400 BadRequest: unable to parse requirement: found 'b' expected: '('",
  'list labelSelector="a in (,b,,)"': "400 BadRequest: unable to parse requirement: found ')', expected: ',', or identifier",
  'list labelSelector="a>1"': '200',
  'list labelSelector="a>x"':
    "400 BadRequest: unable to parse requirement: values[0]: Invalid value: \"x\": for 'Gt', 'Lt' operators, the value must be an integer",
  'list labelSelector="a<+5"':
    "400 BadRequest: unable to parse requirement: values[0][a]: Invalid value: \"+5\": a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')",
  'list labelSelector="a,"': "400 BadRequest: found '', expected: identifier after ','",
  'list labelSelector=",a"': "400 BadRequest: found ',', expected: !, identifier, or 'end of string'",
  'list labelSelector="!a=b"': "400 BadRequest: found '=', expected: ',' or 'end of string'",
  'list labelSelector="a notin"': "400 BadRequest: unable to parse requirement: found '' expected: '('",
  'list labelSelector="x/y/z"':
    "400 BadRequest: unable to parse requirement: <nil>: Invalid value: \"x/y/z\": a qualified name must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')",
  'list labelSelector="Example.com/a"':
    "400 BadRequest: unable to parse requirement: <nil>: Invalid value: \"Example.com/a\": prefix part a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')",
  'list labelSelector="/a"': '400 BadRequest: unable to parse requirement: <nil>: Invalid value: "/a": prefix part must be non-empty',
  'list labelSelector="a=(b)"': "400 BadRequest: unable to parse requirement: found '(', expected: identifier",
  'list labelSelector=" a = b "': '200',
  'list labelSelector="a=b,"': "400 BadRequest: found '', expected: identifier after ','",
  'list labelSelector="a in (b,-c)"':
    "400 BadRequest: unable to parse requirement: values[0][a]: Invalid value: \"-c\": a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')",
  'list labelSelector="a>1,b"': '200',
  'list fieldSelector=""': '200',
  'list fieldSelector="metadata.name=x"': '200',
  'list fieldSelector="metadata.name==x"': '200',
  'list fieldSelector="metadata.name!=x"': '200',
  'list fieldSelector="bogus=x"': '400 BadRequest: "bogus" is not a known field selector: only "metadata.name", "metadata.namespace"',
  'list fieldSelector="data.v=1"': '400 BadRequest: "data.v" is not a known field selector: only "metadata.name", "metadata.namespace"',
  'list fieldSelector="metadata.name"': "400 BadRequest: invalid selector: 'metadata.name'; can't understand 'metadata.name'",
  'list continue=""': '200',
  'list continue="garbage"': "400 BadRequest: invalid continue token: continue key is not valid: invalid character '\\u0081' looking for beginning of value",
  'list continue="abc="': '400 BadRequest: invalid continue token: continue key is not valid: illegal base64 data at input byte 3',
  'list continue="a"': '400 BadRequest: invalid continue token: continue key is not valid: illegal base64 data at input byte 0',
  'list continue="ab$c"': '400 BadRequest: invalid continue token: continue key is not valid: illegal base64 data at input byte 2',
  'list continue=base64url({)': '400 BadRequest: invalid continue token: continue key is not valid: unexpected end of JSON input',
  'list continue=base64url({"v" 1})': "400 BadRequest: invalid continue token: continue key is not valid: invalid character '1' after object key",
  'list continue=base64url({"v":"x",})':
    "400 BadRequest: invalid continue token: continue key is not valid: invalid character '}' looking for beginning of object key string",
  'list continue=base64url([1,])': "400 BadRequest: invalid continue token: continue key is not valid: invalid character ']' looking for beginning of value",
  'list continue=base64url(tru)': "400 BadRequest: invalid continue token: continue key is not valid: invalid character ' ' in literal true (expecting 'e')",
  'list continue=base64url("a\\q")': "400 BadRequest: invalid continue token: continue key is not valid: invalid character 'q' in string escape code",
  'list continue=base64url(-x)': "400 BadRequest: invalid continue token: continue key is not valid: invalid character 'x' in numeric literal",
  'list continue=base64url(1.e)':
    "400 BadRequest: invalid continue token: continue key is not valid: invalid character 'e' after decimal point in numeric literal",
  'list continue=base64url({} x)': "400 BadRequest: invalid continue token: continue key is not valid: invalid character 'x' after top-level value",
  'list continue=base64url([])':
    '400 BadRequest: invalid continue token: continue key is not valid: json: cannot unmarshal array into Go value of type storage.continueToken',
  'list continue=base64url(null)': '400 BadRequest: invalid continue token: continue key is not valid: server does not recognize this encoded version ',
  'list continue=base64url({"rv":"1"})':
    '400 BadRequest: invalid continue token: continue key is not valid: json: cannot unmarshal string into Go struct field continueToken.rv of type int64',
  'list continue=base64url({"rv":1.5})':
    '400 BadRequest: invalid continue token: continue key is not valid: json: cannot unmarshal number 1.5 into Go struct field continueToken.rv of type int64',
  'list continue=base64url({"v":"x"})': '400 BadRequest: invalid continue token: continue key is not valid: server does not recognize this encoded version x',
  'list continue=base64url({"V":"meta.k8s.io/v1","rv":0,"start":"a"})':
    '400 BadRequest: invalid continue token: continue key is not valid: incorrect encoded start resourceVersion (version meta.k8s.io/v1)',
  'list continue=base64url({"v":"meta.k8s.io/v1","rv":1,"start":""})':
    '400 BadRequest: invalid continue token: continue key is not valid: encoded start key empty (version meta.k8s.io/v1)',
  'list continue=base64url({"v":"meta.k8s.io/v1","rv":1,"start":"a/../../b"})': '400 BadRequest: invalid continue token: continue key is not valid: a/../../b',
  'create dryRun=(absent)': '201',
  'create dryRun="All"': '201',
  'create dryRun="all"': '422 Invalid: CreateOptions.meta.k8s.io "" is invalid: dryRun: Unsupported value: []string{"all"}: supported values: "All"',
  'create dryRun=""': '422 Invalid: CreateOptions.meta.k8s.io "" is invalid: dryRun: Unsupported value: []string{""}: supported values: "All"',
  'create dryRun="x"': '422 Invalid: CreateOptions.meta.k8s.io "" is invalid: dryRun: Unsupported value: []string{"x"}: supported values: "All"',
};
