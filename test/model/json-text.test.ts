import test from 'ava';
import { isCanonicalJson } from '../../src/model/json-text.js';

/** What the trace writer relies on: true only if the text is exactly JSON.stringify(JSON.parse(text)). */
function roundTrips(text: string): boolean {
  try {
    return JSON.stringify(JSON.parse(text)) === text;
  } catch {
    return false;
  }
}

const configMap = {
  kind: 'ConfigMap',
  apiVersion: 'v1',
  metadata: {
    name: 'bench',
    namespace: 'default',
    uid: '75749126-fe93-4011-a108-806e9e7f1243',
    resourceVersion: '12',
    generation: 3,
    labels: { 'app.kubernetes.io/name': 'x' },
    managedFields: [{ manager: 'node', operation: 'Update', fieldsType: 'FieldsV1', fieldsV1: { 'f:data': { 'f:a': {} } } }],
  },
  data: { a: 'x'.repeat(200), quoted: 'say "hi"\\ \n\t\r\b\f \u0001\u001f', unicode: 'é ü 日本 😀 \u2028 \u007f', empty: '' },
  spec: { replicas: -2, big: 123456789012345, flags: [true, false, null], nested: [[], {}, [{}]] },
  __proto__x: 1,
};

test('objects as JSON.stringify writes them (integers, any string) are canonical', (t) => {
  for (const value of [configMap, {}, [], 'text', 0, -1, true, null, { __proto__: null, a: 1 }, JSON.parse('{"__proto__":{"a":1}}')]) {
    const text = JSON.stringify(value);
    t.true(isCanonicalJson(text), text);
    t.true(roundTrips(text), text);
  }
});

test('anything JSON.parse + JSON.stringify would change, or cannot parse, is not canonical', (t) => {
  const cases: Array<[string, string]> = [
    ['{"a": 1}', 'whitespace'],
    [' {"a":1}', 'leading whitespace'],
    ['{"a":1}\n', 'trailing newline'],
    ['{"a":1.5}', 'fraction'],
    ['{"a":1.0}', 'fraction written as an integer'],
    ['{"a":1e3}', 'exponent'],
    ['{"a":-0}', 'negative zero'],
    ['{"a":01}', 'leading zero'],
    ['{"a":1234567890123456}', 'more than 15 digits'],
    ['{"a":"\\/"}', 'escaped slash'],
    ['{"a":"\\u0041"}', 'escape of a printable character'],
    ['{"a":"\\u003c"}', "Go's HTML escape"],
    ['{"a":"\\u000a"}', 'long form of a short escape'],
    ['{"a":"\\u001F"}', 'upper-case hex'],
    ['{"a":"\\ud83d\\ude00"}', 'escaped surrogate pair'],
    ['{"a":"\ud83d"}', 'lone high surrogate'],
    ['{"a":"\ude00"}', 'lone low surrogate'],
    ['{"a":1,"a":2}', 'duplicate key'],
    ['{"b":1,"0":2}', 'array-index key (JSON.parse puts it first)'],
    ['{"a":1,}', 'trailing comma'],
    ['[1,]', 'trailing comma in an array'],
    ['{"a":1', 'truncated'],
    ['{"a":1}}', 'trailing garbage'],
    ['{"a":"x\ny"}', 'raw control character'],
    ['{"a":tru}', 'bad literal'],
    ['{a:1}', 'unquoted key'],
    ['', 'empty'],
    ['\ufeff{}', 'byte order mark'],
    ['"\\x"', 'unknown escape'],
    ['{"a":-}', 'lone minus'],
  ];
  for (const [text, why] of cases) t.false(isCanonicalJson(text), why);
  // Keys that look like numbers but are not array indices keep their place.
  for (const text of ['{"b":1,"01":2}', '{"b":1,"4294967295":2}', '{"b":1,"-1":2}', '{"b":1,"1.5":2}']) {
    t.true(isCanonicalJson(text), text);
    t.true(roundTrips(text), text);
  }
  t.false(isCanonicalJson('{"b":1,"4294967294":2}'));
});

test('deeply nested containers are left to JSON.parse', (t) => {
  t.true(isCanonicalJson('['.repeat(200) + ']'.repeat(200)));
  t.false(isCanonicalJson('['.repeat(300) + ']'.repeat(300)));
});

test('never canonical wrongly: random edits of canonical texts', (t) => {
  // A small deterministic generator, so that a failure reproduces.
  let state = 12345;
  const random = (n: number) => {
    state = (state * 1103515245 + 12345) % 2147483648;
    return state % n;
  };
  const pieces = [
    '{',
    '}',
    '[',
    ']',
    '"',
    ',',
    ':',
    '\\',
    'u',
    '0',
    '1',
    '9',
    '-',
    '.',
    'e',
    ' ',
    '\n',
    'a',
    '"a"',
    'null',
    'true',
    '\\u00',
    '\ud83d',
    '\ude00',
    '"0":',
    '"a":1,',
  ];
  const seeds = [JSON.stringify(configMap), '{"a":[1,{"b":"c"}],"d":{}}', '[["x"],{"k":-12}]', '{"s":"\\"\\\\\\u0001"}'];
  let canonical = 0;
  for (let i = 0; i < 20000; i++) {
    let text = seeds[random(seeds.length)]!;
    for (let edits = 1 + random(3); edits > 0; edits--) {
      const at = random(text.length + 1);
      const op = random(3);
      const piece = pieces[random(pieces.length)]!;
      if (op === 0) text = text.slice(0, at) + piece + text.slice(at);
      else if (op === 1) text = text.slice(0, at) + text.slice(at + 1 + random(3));
      else text = text.slice(0, at) + piece + text.slice(at + piece.length);
    }
    if (isCanonicalJson(text)) {
      canonical++;
      if (!roundTrips(text)) t.fail(`canonical but changed by a round trip: ${JSON.stringify(text)}`);
    }
  }
  // The edits leave a fair share of valid, canonical texts, so the check above is exercised.
  t.true(canonical > 500, `${canonical} canonical texts`);
});
