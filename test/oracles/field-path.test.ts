import test from 'ava';
import { FieldPathSyntaxError, formatPath, parseFieldPattern } from '../../oracles/index.js';
import { ANY_SEGMENT } from '../../src/model/field-path.js';

test('mask paths parse dotted keys, indexes, wildcards and quoted keys', (t) => {
  t.deepEqual(parseFieldPattern(''), []);
  t.deepEqual(parseFieldPattern('status.lastUpdate'), ['status', 'lastUpdate']);
  t.deepEqual(parseFieldPattern('metadata.ownerReferences[*].uid'), ['metadata', 'ownerReferences', ANY_SEGMENT, 'uid']);
  t.deepEqual(parseFieldPattern('spec.containers[0].*'), ['spec', 'containers', 0, ANY_SEGMENT]);
  t.deepEqual(parseFieldPattern('metadata.labels["app.kubernetes.io/name"]'), ['metadata', 'labels', 'app.kubernetes.io/name']);
});

test('formatting and parsing round-trip', (t) => {
  for (const path of [
    ['data', 'password'],
    ['status', 'conditions', 0, 'type'],
    ['metadata', 'annotations', 'a.b/c[d]'],
    ['x y', 'q"uote'],
  ]) {
    const text = formatPath(path);
    t.deepEqual(parseFieldPattern(text), path, text);
  }
  t.is(formatPath(['status', 'conditions', 0, 'type']), 'status.conditions[0].type');
});

test('malformed mask paths are rejected with the path in the message', (t) => {
  for (const bad of ['status..x', 'a[', 'a[x]', 'a.', 'a]b', '.a']) {
    const err = t.throws(() => parseFieldPattern(bad), { instanceOf: FieldPathSyntaxError }, bad);
    t.true(err!.message.includes(JSON.stringify(bad)));
  }
});
