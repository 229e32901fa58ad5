/**
 * src/model/query-params.ts: apimachinery's conversions of query values (runtime/conversion.go), the
 * cases of its own conversion tests plus the spellings clients send (Python's `True`).
 */
import test from 'ava';
import { boolParam, integerParam, kubeBool, optionalBoolParam, prettyPrint, QueryParamError } from '../../src/model/query-params.js';
import { parseApiPath, requestVerb } from '../../src/model/api-path.js';

const q = (s: string) => new URLSearchParams(s);

test('Convert_Slice_string_To_bool: only absent, "0" and "false" in any case are false', (t) => {
  for (const v of ['true', 'True', 'TRUE', '1', 'yes', 't', 'no', 'f', '', ' false', 'false ']) t.true(kubeBool(v), JSON.stringify(v));
  for (const v of [null, '0', 'false', 'False', 'FALSE', 'fAlSe', 'falſe']) t.false(kubeBool(v), JSON.stringify(v));
  t.true(boolParam(q('watch'), 'watch'), 'a bare parameter is the empty string: true');
  t.false(boolParam(q('watch=false&watch=true'), 'watch'), 'the first value counts');
  t.is(optionalBoolParam(q('a=1'), 'force'), undefined);
  t.false(optionalBoolParam(q('force=false'), 'force'));
});

test('a GET is a watch by the same rule', (t) => {
  const path = parseApiPath('/api/v1/namespaces/default/configmaps');
  t.is(requestVerb('GET', path, q('watch=True&allowWatchBookmarks=True')), 'watch');
  t.is(requestVerb('GET', path, q('watch=0')), 'list');
  t.is(requestVerb('GET', path, q('')), 'list');
});

test('integers: strconv.ParseInt, with its message', (t) => {
  t.is(integerParam(q('limit=%2B5'), 'limit'), 5);
  t.throws(() => integerParam(q('limit=+5'), 'limit'), { message: 'strconv.ParseInt: parsing " 5": invalid syntax' }, 'a raw + is a space, as Go decodes it');
  t.is(integerParam(q('limit=-1'), 'limit'), -1);
  t.is(integerParam(q('limit=05'), 'limit'), 5);
  t.is(integerParam(q(''), 'limit'), undefined);
  for (const [v, why] of [
    ['', 'invalid syntax'],
    ['abc', 'invalid syntax'],
    ['5.0', 'invalid syntax'],
    ['0x10', 'invalid syntax'],
    ['99999999999999999999', 'value out of range'],
  ] as const) {
    const err = t.throws(() => integerParam(q(`limit=${encodeURIComponent(v)}`), 'limit'), { instanceOf: QueryParamError });
    t.is(err?.message, `strconv.ParseInt: parsing ${JSON.stringify(v)}: ${why}`);
  }
  t.is(integerParam(q('limit=9223372036854775807'), 'limit'), 2 ** 63); // int64's maximum, as the nearest double
});

test('pretty: strconv.ParseBool, else the User-Agent', (t) => {
  for (const v of ['1', 't', 'T', 'true', 'True', 'TRUE']) t.true(prettyPrint(q(`pretty=${v}`), undefined), v);
  for (const v of ['0', 'f', 'false', 'yes', 'tRuE']) t.false(prettyPrint(q(`pretty=${v}`), 'curl/8'), v);
  t.true(prettyPrint(q(''), 'curl/8.0'));
  t.true(prettyPrint(q('pretty='), 'Mozilla/5.0 (X11)'));
  t.false(prettyPrint(q(''), 'kubectl/v1.32'));
});
