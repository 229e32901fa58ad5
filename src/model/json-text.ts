/**
 * JSON text that needs no second serialization. An answer whose text is exactly what
 * `JSON.stringify(JSON.parse(text))` would return can go into a trace line as it is: the trace
 * reads the same, and the parse and the serialization are saved.
 */

/** Containers nested deeper than this are not checked (the answer is parsed instead). */
const MAX_DEPTH = 256;

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COMMA = 0x2c;
const COLON = 0x3a;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;
const MINUS = 0x2d;
const ZERO = 0x30;
const NINE = 0x39;
/** Integers with at most this many digits are exact doubles, so `String(Number(digits))` gives them back. */
const MAX_EXACT_DIGITS = 15;

/**
 * Is `text` exactly what `JSON.stringify(JSON.parse(text))` returns? Conservative: false whenever
 * that is not certain, never true wrongly. False for invalid JSON, whitespace between tokens,
 * fractions, exponents, integers of more than 15 digits, `-0`, escapes JSON.stringify does not write
 * (`\/`, `\u0041`, escaped surrogate pairs), lone surrogates, duplicate keys, and keys that are array
 * indices (JSON.parse puts them first).
 */
export function isCanonicalJson(text: string): boolean {
  const n = text.length;
  // Per open container: is it an object, and the keys seen in it (objects only).
  const isObjectAt: boolean[] = [];
  const keysAt: Array<string[] | Set<string> | undefined> = [];
  let i = 0;
  // The state machine's two states: expecting a value (or, in an object, a key), or after one.
  for (;;) {
    // --- a value at i ---
    const c = text.charCodeAt(i);
    if (c === OPEN_BRACE || c === OPEN_BRACKET) {
      if (isObjectAt.length >= MAX_DEPTH) return false;
      const obj = c === OPEN_BRACE;
      i++;
      const close = obj ? CLOSE_BRACE : CLOSE_BRACKET;
      if (text.charCodeAt(i) === close) {
        i++;
      } else {
        isObjectAt.push(obj);
        keysAt.push(undefined);
        if (obj) {
          i = objectKey(text, i, keysAt, keysAt.length - 1);
          if (i < 0) return false;
        }
        continue;
      }
    } else if (c === QUOTE) {
      i = stringEnd(text, i);
      if (i < 0) return false;
    } else if (c === MINUS || (c >= ZERO && c <= NINE)) {
      i = numberEnd(text, i);
      if (i < 0) return false;
    } else if (text.startsWith('true', i)) {
      i += 4;
    } else if (text.startsWith('false', i)) {
      i += 5;
    } else if (text.startsWith('null', i)) {
      i += 4;
    } else {
      return false;
    }
    // --- after a value: close containers, or go on to the next member ---
    for (;;) {
      const depth = isObjectAt.length;
      if (depth === 0) return i === n;
      const d = text.charCodeAt(i);
      const obj = isObjectAt[depth - 1]!;
      if (d === COMMA) {
        i++;
        if (obj) {
          i = objectKey(text, i, keysAt, depth - 1);
          if (i < 0) return false;
        }
        break;
      }
      if (d !== (obj ? CLOSE_BRACE : CLOSE_BRACKET)) return false;
      i++;
      isObjectAt.pop();
      keysAt.pop();
    }
  }
}

/** Reads `"key":` at i; the index of the value after it, or -1. */
function objectKey(text: string, i: number, keysAt: Array<string[] | Set<string> | undefined>, depth: number): number {
  if (text.charCodeAt(i) !== QUOTE) return -1;
  const end = stringEnd(text, i);
  if (end < 0 || text.charCodeAt(end) !== COLON) return -1;
  // Canonical strings have one spelling per value, so comparing the spellings compares the keys.
  const key = text.slice(i + 1, end - 1);
  if (isArrayIndex(key)) return -1;
  const seen = keysAt[depth];
  if (seen === undefined) {
    keysAt[depth] = [key];
  } else if (Array.isArray(seen)) {
    if (seen.includes(key)) return -1;
    seen.push(key);
    if (seen.length > 16) keysAt[depth] = new Set(seen);
  } else {
    if (seen.has(key)) return -1;
    seen.add(key);
  }
  return end + 1;
}

/** A canonical array index ("0", "17", below 2^32 - 1): JSON.parse orders such keys first. */
function isArrayIndex(key: string): boolean {
  const n = key.length;
  if (n === 0 || n > 10) return false;
  const first = key.charCodeAt(0);
  if (first < ZERO || first > NINE || (first === ZERO && n > 1)) return false;
  for (let j = 1; j < n; j++) {
    const c = key.charCodeAt(j);
    if (c < ZERO || c > NINE) return false;
  }
  return Number(key) < 4294967295;
}

/** The index after the string starting at i (a quote), or -1 if it is not as JSON.stringify writes strings. */
function stringEnd(text: string, i: number): number {
  const n = text.length;
  for (let j = i + 1; j < n; j++) {
    const c = text.charCodeAt(j);
    if (c === QUOTE) return j + 1;
    if (c < 0x20) return -1;
    if (c === BACKSLASH) {
      const e = text.charCodeAt(++j);
      // JSON.stringify's short escapes: \" \\ \b \f \n \r \t.
      if (e === QUOTE || e === BACKSLASH || e === 0x62 || e === 0x66 || e === 0x6e || e === 0x72 || e === 0x74) continue;
      // Otherwise only \u00xx (lower-case hex) for the control characters without a short escape.
      if (e !== 0x75 || text.charCodeAt(j + 1) !== ZERO || text.charCodeAt(j + 2) !== ZERO) return -1;
      const hi = text.charCodeAt(j + 3);
      const lo = text.charCodeAt(j + 4);
      if (hi !== ZERO && hi !== 0x31) return -1;
      const low = lo >= ZERO && lo <= NINE ? lo - ZERO : lo >= 0x61 && lo <= 0x66 ? lo - 0x61 + 10 : -1;
      if (low < 0) return -1;
      const code = (hi - ZERO) * 16 + low;
      if (code === 0x08 || code === 0x09 || code === 0x0a || code === 0x0c || code === 0x0d) return -1;
      j += 4;
      continue;
    }
    if (c >= 0xd800 && c <= 0xdfff) {
      // A surrogate pair stays as it is; a lone surrogate would come back escaped.
      const next = text.charCodeAt(j + 1);
      if (c > 0xdbff || !(next >= 0xdc00 && next <= 0xdfff)) return -1;
      j++;
    }
  }
  return -1;
}

/** The index after the number at i if it is an integer JSON.stringify would write the same way, or -1. */
function numberEnd(text: string, i: number): number {
  const n = text.length;
  let j = i;
  if (text.charCodeAt(j) === MINUS) j++;
  const first = text.charCodeAt(j);
  if (first < ZERO || first > NINE) return -1;
  const start = j;
  j++;
  if (first !== ZERO) {
    while (j < n) {
      const c = text.charCodeAt(j);
      if (c < ZERO || c > NINE) break;
      j++;
    }
  } else if (j - i === 2) {
    return -1; // -0 comes back as 0
  }
  if (j - start > MAX_EXACT_DIGITS) return -1;
  const next = text.charCodeAt(j);
  // Fractions and exponents (and leading zeros such as 01) are left to JSON.parse.
  if (next === 0x2e || next === 0x65 || next === 0x45 || (next >= ZERO && next <= NINE)) return -1;
  return j;
}
