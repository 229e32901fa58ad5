/**
 * Official protobuf encodings of realistic objects (test/cluster/protobuf/vectors, written by
 * scripts/protobuf-vectors with apimachinery's protobuf serializer) decode to exactly the JSON the API
 * server stores for them (the same bytes decoded by apimachinery and encoded by its JSON serializer).
 */
import test from 'ava';
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { decodeKubernetesProtobuf } from '../../../src/wire/index.js';

const dir = fileURLToPath(new URL('../../../../test/cluster/protobuf/vectors/', import.meta.url));
const names = readdirSync(dir)
  .filter((f) => f.endsWith('.pb'))
  .map((f) => f.slice(0, -3))
  .sort();

test('the vectors are there', (t) => {
  t.true(names.length >= 25, `only ${names.length} vectors in ${dir}`);
});

for (const name of names) {
  test(`vector ${name}`, (t) => {
    const expected = JSON.parse(readFileSync(`${dir}${name}.json`, 'utf8')) as { apiVersion: string; kind: string };
    const decoded = decodeKubernetesProtobuf(readFileSync(`${dir}${name}.pb`));
    t.is(decoded.apiVersion, expected.apiVersion);
    t.is(decoded.kind, expected.kind);
    t.deepEqual(decoded.object, expected);
  });
}
