/**
 * MD5, SHA-256 and HMAC-SHA-256 in plain TypeScript, behind the subset of node:crypto's API the core
 * uses (`createHash(alg).update(text).digest()`, `createHmac('sha256', key)`, `digest('hex')`,
 * `readUInt32LE`). The core (src/model, planner/, oracles/) compiles without Node's types so that it
 * cannot touch files, sockets or processes; hashing is pure computation, so it is done here rather
 * than by importing node:crypto. The results are byte for byte those of node:crypto
 * (test/model/hash.test.ts compares them): secret hashes under a campaign's key file do not change.
 *
 * Strings are hashed as UTF-8, as node:crypto does; a lone surrogate becomes U+FFFD, as there.
 */

export type HashAlgorithm = 'md5' | 'sha256';

/** A finished digest: the bytes, with the two readers of a Node Buffer that callers use. */
export class Digest extends Uint8Array {
  readUInt32LE(offset: number): number {
    return (this[offset]! | (this[offset + 1]! << 8) | (this[offset + 2]! << 16) | (this[offset + 3]! << 24)) >>> 0;
  }

  override toString(encoding?: 'hex'): string {
    if (encoding !== 'hex') return super.toString();
    let out = '';
    for (const b of this) out += HEX[b]!;
    return out;
  }
}

const HEX = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, '0'));

/** UTF-8 bytes of a string (TextEncoder is not part of the ECMAScript library the core compiles with). */
export function utf8(text: string): Uint8Array {
  const out = new Uint8Array(text.length * 3);
  let n = 0;
  for (let i = 0; i < text.length; i++) {
    let c = text.charCodeAt(i);
    if (c < 0x80) {
      out[n++] = c;
      continue;
    }
    if (c >= 0xd800 && c <= 0xdfff) {
      const next = i + 1 < text.length ? text.charCodeAt(i + 1) : 0;
      if (c <= 0xdbff && next >= 0xdc00 && next <= 0xdfff) {
        c = 0x10000 + ((c - 0xd800) << 10) + (next - 0xdc00);
        i++;
      } else {
        c = 0xfffd;
      }
    }
    if (c < 0x800) {
      out[n++] = 0xc0 | (c >> 6);
    } else if (c < 0x10000) {
      out[n++] = 0xe0 | (c >> 12);
      out[n++] = 0x80 | ((c >> 6) & 0x3f);
    } else {
      out[n++] = 0xf0 | (c >> 18);
      out[n++] = 0x80 | ((c >> 12) & 0x3f);
      out[n++] = 0x80 | ((c >> 6) & 0x3f);
    }
    if (c >= 0x80) out[n++] = 0x80 | (c & 0x3f);
  }
  return out.subarray(0, n);
}

/** A running hash: 64-byte blocks go to `compress` as they fill; `digest` pads and finishes. */
export abstract class BlockHash {
  private readonly block = new Uint8Array(64);
  private filled = 0;
  private length = 0;
  protected readonly words = new Uint32Array(64);

  update(data: string | Uint8Array): this {
    const bytes = typeof data === 'string' ? utf8(data) : data;
    this.length += bytes.length;
    let i = 0;
    while (i < bytes.length) {
      const take = Math.min(64 - this.filled, bytes.length - i);
      this.block.set(bytes.subarray(i, i + take), this.filled);
      this.filled += take;
      i += take;
      if (this.filled === 64) {
        this.compress(this.block);
        this.filled = 0;
      }
    }
    return this;
  }

  digest(): Digest;
  digest(encoding: 'hex'): string;
  digest(encoding?: 'hex'): Digest | string {
    const bits = this.length * 8;
    const pad = new Uint8Array((this.filled < 56 ? 56 : 120) - this.filled + 8);
    pad[0] = 0x80;
    // The message length in bits, 64-bit, in the hash's byte order.
    const hi = Math.floor(bits / 0x100000000);
    const lo = bits >>> 0;
    const at = pad.length - 8;
    for (let k = 0; k < 4; k++) {
      const [loByte, hiByte] = [(lo >>> (8 * k)) & 0xff, (hi >>> (8 * k)) & 0xff];
      if (this.bigEndian) {
        pad[at + 7 - k] = loByte;
        pad[at + 3 - k] = hiByte;
      } else {
        pad[at + k] = loByte;
        pad[at + 4 + k] = hiByte;
      }
    }
    this.update(pad);
    const out = new Digest(this.state.length * 4);
    this.state.forEach((w, j) => {
      for (let k = 0; k < 4; k++) out[j * 4 + k] = this.bigEndian ? (w >>> (24 - 8 * k)) & 0xff : (w >>> (8 * k)) & 0xff;
    });
    return encoding === 'hex' ? out.toString('hex') : out;
  }

  protected abstract readonly bigEndian: boolean;
  protected abstract readonly state: Uint32Array;
  protected abstract compress(block: Uint8Array): void;
}

const MD5_SHIFT = [7, 12, 17, 22, 5, 9, 14, 20, 4, 11, 16, 23, 6, 10, 15, 21];
const MD5_K = Uint32Array.from({ length: 64 }, (_, i) => Math.floor(Math.abs(Math.sin(i + 1)) * 0x100000000) >>> 0);

class Md5 extends BlockHash {
  protected readonly bigEndian = false;
  protected readonly state = Uint32Array.of(0x67452301, 0xefcdab89, 0x98badcfe, 0x10325476);

  protected compress(block: Uint8Array): void {
    const m = this.words;
    for (let i = 0; i < 16; i++) m[i] = block[i * 4]! | (block[i * 4 + 1]! << 8) | (block[i * 4 + 2]! << 16) | (block[i * 4 + 3]! << 24);
    let a = this.state[0]!;
    let b = this.state[1]!;
    let c = this.state[2]!;
    let d = this.state[3]!;
    for (let i = 0; i < 64; i++) {
      let f: number;
      let g: number;
      if (i < 16) {
        f = (b & c) | (~b & d);
        g = i;
      } else if (i < 32) {
        f = (d & b) | (~d & c);
        g = (5 * i + 1) & 15;
      } else if (i < 48) {
        f = b ^ c ^ d;
        g = (3 * i + 5) & 15;
      } else {
        f = c ^ (b | ~d);
        g = (7 * i) & 15;
      }
      const s = MD5_SHIFT[((i >> 4) << 2) | (i & 3)]!;
      const x = (a + f + MD5_K[i]! + m[g]!) >>> 0;
      a = d;
      d = c;
      c = b;
      b = (b + ((x << s) | (x >>> (32 - s)))) >>> 0;
    }
    this.state[0] = this.state[0]! + a;
    this.state[1] = this.state[1]! + b;
    this.state[2] = this.state[2]! + c;
    this.state[3] = this.state[3]! + d;
  }
}

const SHA256_K = Uint32Array.of(
  0x428a2f98,
  0x71374491,
  0xb5c0fbcf,
  0xe9b5dba5,
  0x3956c25b,
  0x59f111f1,
  0x923f82a4,
  0xab1c5ed5,
  0xd807aa98,
  0x12835b01,
  0x243185be,
  0x550c7dc3,
  0x72be5d74,
  0x80deb1fe,
  0x9bdc06a7,
  0xc19bf174,
  0xe49b69c1,
  0xefbe4786,
  0x0fc19dc6,
  0x240ca1cc,
  0x2de92c6f,
  0x4a7484aa,
  0x5cb0a9dc,
  0x76f988da,
  0x983e5152,
  0xa831c66d,
  0xb00327c8,
  0xbf597fc7,
  0xc6e00bf3,
  0xd5a79147,
  0x06ca6351,
  0x14292967,
  0x27b70a85,
  0x2e1b2138,
  0x4d2c6dfc,
  0x53380d13,
  0x650a7354,
  0x766a0abb,
  0x81c2c92e,
  0x92722c85,
  0xa2bfe8a1,
  0xa81a664b,
  0xc24b8b70,
  0xc76c51a3,
  0xd192e819,
  0xd6990624,
  0xf40e3585,
  0x106aa070,
  0x19a4c116,
  0x1e376c08,
  0x2748774c,
  0x34b0bcb5,
  0x391c0cb3,
  0x4ed8aa4a,
  0x5b9cca4f,
  0x682e6ff3,
  0x748f82ee,
  0x78a5636f,
  0x84c87814,
  0x8cc70208,
  0x90befffa,
  0xa4506ceb,
  0xbef9a3f7,
  0xc67178f2,
);

const rotr = (x: number, n: number): number => (x >>> n) | (x << (32 - n));

class Sha256 extends BlockHash {
  protected readonly bigEndian = true;
  protected readonly state = Uint32Array.of(0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19);

  protected compress(block: Uint8Array): void {
    const w = this.words;
    for (let i = 0; i < 16; i++) w[i] = (block[i * 4]! << 24) | (block[i * 4 + 1]! << 16) | (block[i * 4 + 2]! << 8) | block[i * 4 + 3]!;
    for (let i = 16; i < 64; i++) {
      const x = w[i - 15]!;
      const y = w[i - 2]!;
      const s0 = rotr(x, 7) ^ rotr(x, 18) ^ (x >>> 3);
      const s1 = rotr(y, 17) ^ rotr(y, 19) ^ (y >>> 10);
      w[i] = w[i - 16]! + s0 + w[i - 7]! + s1;
    }
    const st = this.state;
    let [a, b, c, d, e, f, g, h] = [st[0]!, st[1]!, st[2]!, st[3]!, st[4]!, st[5]!, st[6]!, st[7]!];
    for (let i = 0; i < 64; i++) {
      const t1 = (h + (rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25)) + ((e & f) ^ (~e & g)) + SHA256_K[i]! + w[i]!) >>> 0;
      const t2 = ((rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22)) + ((a & b) ^ (a & c) ^ (b & c))) >>> 0;
      [h, g, f, e, d, c, b, a] = [g, f, e, (d + t1) >>> 0, c, b, a, (t1 + t2) >>> 0];
    }
    [a, b, c, d, e, f, g, h].forEach((v, i) => (st[i] = st[i]! + v));
  }
}

export function createHash(algorithm: HashAlgorithm): BlockHash {
  return algorithm === 'md5' ? new Md5() : new Sha256();
}

/** HMAC (RFC 2104) over SHA-256: what secret values are hashed with (secret-hash.ts). */
export class HmacSha256 {
  private readonly inner = new Sha256();
  private readonly outerKey: Uint8Array;

  constructor(key: Uint8Array | string) {
    let k = typeof key === 'string' ? utf8(key) : key;
    if (k.length > 64) k = new Sha256().update(k).digest();
    const padded = new Uint8Array(64);
    padded.set(k);
    this.inner.update(padded.map((b) => b ^ 0x36));
    this.outerKey = padded.map((b) => b ^ 0x5c);
  }

  update(data: string | Uint8Array): this {
    this.inner.update(data);
    return this;
  }

  digest(): Digest;
  digest(encoding: 'hex'): string;
  digest(encoding?: 'hex'): Digest | string {
    const out = new Sha256().update(this.outerKey).update(this.inner.digest()).digest();
    return encoding === 'hex' ? out.toString('hex') : out;
  }
}

export function createHmac(_algorithm: 'sha256', key: Uint8Array | string): HmacSha256 {
  return new HmacSha256(key);
}
