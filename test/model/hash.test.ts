/**
 * The core's hashes (src/model/hash.ts, plain TypeScript so that the core needs no Node types) are
 * node:crypto's, byte for byte: secret hashes under an existing campaign key file, and the planner's
 * state hashes, stay what they were.
 */
import test from 'ava';
import { createHash as nodeHash, createHmac as nodeHmac } from 'node:crypto';
import { createHash, createHmac } from '../../src/model/hash.js';

/** Every length around the 64-byte block and its 56-byte padding boundary, and text beyond ASCII. */
const inputs: string[] = [
  ...Array.from({ length: 200 }, (_, n) => 'abcdefghij'.repeat(21).slice(0, n)),
  'hunter2',
  'päßwörd ✓ 日本語 🔑',
  '\u{1F600}'.repeat(40),
  'lone \ud800 surrogate and \udc00 another',
  '{"kind":"Secret","data":{"a":"b"}}\n'.repeat(100),
];

test('MD5 and SHA-256 digests equal node:crypto for every input length and for UTF-8 text', (t) => {
  for (const text of inputs) {
    for (const alg of ['md5', 'sha256'] as const) {
      t.is(createHash(alg).update(text).digest('hex'), nodeHash(alg).update(text).digest('hex'), `${alg} of ${JSON.stringify(text)}`);
    }
  }
});

test('updates in pieces hash as the whole; readUInt32LE reads the digest as a Buffer does', (t) => {
  const key = 'ConfigMap/default/a';
  const body = JSON.stringify({ data: { x: 'y'.repeat(100) } });
  const ours = createHash('md5').update(key).update('\n').update(body).digest();
  const node = nodeHash('md5').update(key).update('\n').update(body).digest();
  t.deepEqual([...ours], [...node]);
  for (const at of [0, 4, 8, 12]) t.is(ours.readUInt32LE(at), node.readUInt32LE(at));
});

test('HMAC-SHA-256 equals node:crypto for short, block-sized and long keys', (t) => {
  const keys = [new Uint8Array(32).map((_, i) => i * 7), new Uint8Array(64).fill(0xab), new Uint8Array(100).map((_, i) => i), new Uint8Array(0)];
  for (const key of keys) {
    for (const text of inputs.slice(0, 70).concat(inputs.slice(200))) {
      t.is(createHmac('sha256', key).update(text).digest('hex'), nodeHmac('sha256', key).update(text).digest('hex'));
    }
  }
});
