/**
 * What Go's encoding/json says of bytes it cannot read, for the answers kube-apiserver words with it
 * (a continue token that is not base64 JSON: `invalid continue token: continue key is not valid:
 * invalid character '\u0081' looking for beginning of value`). A port of the error states of
 * encoding/json's scanner (scanner.go: checkValid), which reads the whole input before decoding, and
 * of its UnmarshalTypeError wording. Only the messages: values are read with JSON.parse afterwards.
 */

/** encoding/json's quoteChar: the byte as a Go rune literal. */
function quoteChar(c: number): string {
  if (c === 0x27) return `'\\''`;
  if (c === 0x22) return `'"'`;
  const escapes: Record<number, string> = { 7: '\\a', 8: '\\b', 9: '\\t', 10: '\\n', 11: '\\v', 12: '\\f', 13: '\\r', 0x5c: '\\\\' };
  if (escapes[c]) return `'${escapes[c]}'`;
  // strconv.Quote of string(rune(c)): printable runes as they are, the rest escaped.
  if (c < 0x20 || c === 0x7f) return `'\\x${c.toString(16).padStart(2, '0')}'`;
  if (c < 0x7f || (c >= 0xa1 && c !== 0xad)) return `'${String.fromCharCode(c)}'`;
  return `'\\u${c.toString(16).padStart(4, '0')}'`;
}

const isSpace = (c: number) => c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d;
const isDigit = (c: number) => c >= 0x30 && c <= 0x39;
const isHex = (c: number) => isDigit(c) || (c >= 0x61 && c <= 0x66) || (c >= 0x41 && c <= 0x46);

type Parse = 'object-key' | 'object-value' | 'array-value';

/**
 * The syntax error encoding/json gives for these bytes (`invalid character 'x' looking for beginning
 * of value`, `unexpected end of JSON input`), or undefined when they are valid JSON.
 */
export function goJsonSyntaxError(data: Uint8Array): string | undefined {
  const stack: Parse[] = [];
  const err = (c: number, context: string) => `invalid character ${quoteChar(c)} ${context}`;
  // At the end of the input the scanner steps a space: where a space cannot be, that is the error.
  const atEnd = (context: string) => err(0x20, context);
  let i = 0;
  const peek = () => (i < data.length ? data[i]! : -1);
  const skipSpace = () => {
    while (i < data.length && isSpace(data[i]!)) i++;
  };

  // Each function consumes what it reads and returns an error message, or undefined.
  const literal = (word: string): string | undefined => {
    for (let k = 1; k < word.length; k++) {
      const c = peek();
      if (c < 0) return atEnd(`in literal ${word} (expecting ${quoteChar(word.charCodeAt(k))})`);
      if (c !== word.charCodeAt(k)) return err(c, `in literal ${word} (expecting ${quoteChar(word.charCodeAt(k))})`);
      i++;
    }
    return undefined;
  };
  const string = (): string | undefined => {
    for (;;) {
      const c = peek();
      if (c < 0) return 'unexpected end of JSON input';
      i++;
      if (c === 0x22) return undefined;
      if (c < 0x20) return err(c, 'in string literal');
      if (c !== 0x5c) continue;
      const e = peek();
      if (e < 0) return atEnd('in string escape code');
      i++;
      if ('bfnrt\\/"'.includes(String.fromCharCode(e))) continue;
      if (e !== 0x75) return err(e, 'in string escape code');
      for (let k = 0; k < 4; k++) {
        const h = peek();
        if (h < 0) return atEnd('in \\u hexadecimal character escape');
        if (!isHex(h)) return err(h, 'in \\u hexadecimal character escape');
        i++;
      }
    }
  };
  const number = (first: number): string | undefined => {
    let c = first;
    if (c === 0x2d) {
      c = peek();
      if (c < 0) return atEnd('in numeric literal');
      if (!isDigit(c)) return err(c, 'in numeric literal');
      i++;
    }
    if (c !== 0x30) while (isDigit(peek())) i++;
    if (peek() === 0x2e) {
      i++;
      const d = peek();
      if (d < 0) return atEnd('after decimal point in numeric literal');
      if (!isDigit(d)) return err(d, 'after decimal point in numeric literal');
      while (isDigit(peek())) i++;
    }
    if (peek() === 0x65 || peek() === 0x45) {
      i++;
      if (peek() === 0x2b || peek() === 0x2d) i++;
      const d = peek();
      if (d < 0) return atEnd('in exponent of numeric literal');
      if (!isDigit(d)) return err(d, 'in exponent of numeric literal');
      while (isDigit(peek())) i++;
    }
    return undefined;
  };

  // A value begins here (after any space); then the value ends and its container decides what follows.
  for (;;) {
    skipSpace();
    let c = peek();
    if (c < 0) return 'unexpected end of JSON input';
    i++;
    let problem: string | undefined;
    if (c === 0x7b) {
      skipSpace();
      c = peek();
      if (c < 0) return 'unexpected end of JSON input';
      i++;
      if (c === 0x7d) problem = undefined;
      else if (c !== 0x22) return err(c, 'looking for beginning of object key string');
      else {
        stack.push('object-key');
        problem = string();
        if (problem) return problem;
        // the key ends like a value in key position
      }
      if (c === 0x22) {
        const end = afterValue();
        if (end === 'continue') continue;
        return end;
      }
    } else if (c === 0x5b) {
      skipSpace();
      if (peek() === 0x5d) i++;
      else {
        stack.push('array-value');
        continue;
      }
    } else if (c === 0x22) problem = string();
    else if (c === 0x2d || isDigit(c)) problem = number(c);
    else if (c === 0x74) problem = literal('true');
    else if (c === 0x66) problem = literal('false');
    else if (c === 0x6e) problem = literal('null');
    else return err(c, 'looking for beginning of value');
    if (problem) return problem;
    const end = afterValue();
    if (end !== 'continue') return end;
  }

  /** After a value (or an object key): what its container allows next. 'continue' when another value begins. */
  function afterValue(): string | undefined | 'continue' {
    for (;;) {
      skipSpace();
      const c = peek();
      const top = stack.at(-1);
      if (top === undefined) return c < 0 ? undefined : err(c, 'after top-level value');
      if (c < 0) return 'unexpected end of JSON input';
      i++;
      if (top === 'object-key') {
        if (c !== 0x3a) return err(c, 'after object key');
        stack[stack.length - 1] = 'object-value';
        return 'continue';
      }
      if (top === 'object-value') {
        if (c === 0x2c) {
          stack[stack.length - 1] = 'object-key';
          skipSpace();
          const q = peek();
          if (q < 0) return 'unexpected end of JSON input';
          i++;
          if (q !== 0x22) return err(q, 'looking for beginning of object key string');
          const problem = string();
          if (problem) return problem;
          continue;
        }
        if (c === 0x7d) {
          stack.pop();
          continue;
        }
        return err(c, 'after object key:value pair');
      }
      if (c === 0x2c) return 'continue';
      if (c === 0x5d) {
        stack.pop();
        continue;
      }
      return err(c, 'after array element');
    }
  }
}

/** encoding/json's name for the JSON type of a value in an UnmarshalTypeError. */
export function goJsonKind(value: unknown): string {
  if (typeof value === 'string') return 'string';
  if (typeof value === 'number') return 'number';
  if (typeof value === 'boolean') return 'bool';
  if (Array.isArray(value)) return 'array';
  return 'object';
}
