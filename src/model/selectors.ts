/**
 * Label and field selectors as the API server parses them from `labelSelector=` and `fieldSelector=`
 * (k8s.io/apimachinery/pkg/labels and pkg/fields), including set-based label requirements. Pure: a
 * selector that does not parse throws SelectorSyntaxError with kube-apiserver's message; the
 * embedded cluster answers it as 400 Bad Request (src/cluster/selectors.ts), the proxy's stale view
 * serves no list for it.
 */
import type { KubeObject } from './object-key.js';

export class SelectorSyntaxError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SelectorSyntaxError';
  }
}

const badRequest = (message: string) => new SelectorSyntaxError(message);

export type LabelOperator = '=' | '!=' | 'in' | 'notin' | 'exists' | '!' | 'gt' | 'lt';

export interface LabelRequirement {
  key: string;
  operator: LabelOperator;
  values: string[];
}

const QUALIFIED_NAME = /^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$/;
const DNS1123_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const LABEL_VALUE = /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/;
const QUALIFIED_NAME_MESSAGE =
  "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')";

/** validation's usual pair of checks: a maximum length (MaxLenError), then a pattern (RegexError's message). */
export function lengthAndPatternErrors(value: string, maxLength: number, pattern: RegExp, message: string): string[] {
  const errs: string[] = [];
  if (value.length > maxLength) errs.push(`must be no more than ${maxLength} characters`);
  if (!pattern.test(value)) errs.push(message);
  return errs;
}

/** validation.IsDNS1123Subdomain's messages. */
export const dns1123SubdomainErrors = (value: string): string[] =>
  lengthAndPatternErrors(
    value,
    253,
    DNS1123_SUBDOMAIN,
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')",
  );

/** Problems with a label key: validation.IsQualifiedName (an optional DNS subdomain prefix and `/`, then a name of up to 63 characters). */
export function labelKeyErrors(key: string): string[] {
  const parts = key.split('/');
  if (parts.length > 2) {
    return [`a qualified name ${QUALIFIED_NAME_MESSAGE} with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')`];
  }
  const errs: string[] = [];
  const name = parts.length === 2 ? parts[1]! : parts[0]!;
  if (parts.length === 2) {
    const prefix = parts[0]!;
    if (prefix.length === 0) errs.push('prefix part must be non-empty');
    else errs.push(...dns1123SubdomainErrors(prefix).map((e) => `prefix part ${e}`));
  }
  if (name.length === 0) errs.push('name part must be non-empty');
  else if (name.length > 63) errs.push('name part must be no more than 63 characters');
  if (!QUALIFIED_NAME.test(name)) errs.push(`name part ${QUALIFIED_NAME_MESSAGE}`);
  return errs;
}

export const labelValueErrors = (value: string): string[] =>
  lengthAndPatternErrors(
    value,
    63,
    LABEL_VALUE,
    "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')",
  );

// --- labels.Parse (k8s.io/apimachinery/pkg/labels/selector.go): its lexer, parser and messages ----

type Token = 'error' | 'end' | ')' | ',' | '!' | '==' | '=' | '>' | 'identifier' | 'in' | '<' | '!=' | 'notin' | '(';
const LITERAL_TOKENS: Readonly<Record<string, Token>> = {
  ')': ')',
  ',': ',',
  '!': '!',
  '==': '==',
  '=': '=',
  '>': '>',
  in: 'in',
  '<': '<',
  '!=': '!=',
  notin: 'notin',
  '(': '(',
};
const BINARY_OPERATORS = 'in, notin, =, ==, !=, gt, lt';

const isWhitespace = (ch: string) => ch === ' ' || ch === '\t' || ch === '\r' || ch === '\n';
const isSpecialSymbol = (ch: string) => '=!(),><'.includes(ch) && ch !== '';

function lex(text: string): Array<{ tok: Token; lit: string }> {
  const items: Array<{ tok: Token; lit: string }> = [];
  let pos = 0;
  const read = () => (pos < text.length ? text[pos++]! : '');
  for (;;) {
    let ch = read();
    while (isWhitespace(ch)) ch = read();
    if (ch === '') {
      items.push({ tok: 'end', lit: '' });
      return items;
    }
    pos--;
    let buffer = '';
    if (isSpecialSymbol(ch)) {
      let last: { tok: Token; lit: string } | undefined;
      for (let c = read(); c !== ''; c = read()) {
        if (!isSpecialSymbol(c)) {
          pos--;
          break;
        }
        buffer += c;
        const tok = LITERAL_TOKENS[buffer];
        if (tok) last = { tok, lit: buffer };
        else if (last) {
          pos--;
          break;
        }
      }
      items.push(last ?? { tok: 'error', lit: `error expected: keyword found '${buffer}'` });
    } else {
      for (let c = read(); c !== ''; c = read()) {
        if (isSpecialSymbol(c) || isWhitespace(c)) {
          pos--;
          break;
        }
        buffer += c;
      }
      items.push({ tok: LITERAL_TOKENS[buffer] ?? 'identifier', lit: buffer });
    }
  }
}

/** A field.Error as kube-apiserver prints one from labels.Parse, whose path is nil ("<nil>") or a child of nil. */
const invalid = (path: string, value: string, detail: string) => `${path}: Invalid value: ${JSON.stringify(value)}: ${detail}`;

/** The parser's requirement errors are aggregated: one alone, or `[a, b]` (duplicates dropped). */
function aggregate(errors: string[]): string {
  const unique = [...new Set(errors)];
  return unique.length === 1 ? unique[0]! : `[${unique.join(', ')}]`;
}

class LabelParser {
  private position = 0;

  constructor(private readonly items: Array<{ tok: Token; lit: string }>) {}

  /** In the values context, `in` and `notin` are identifiers. */
  private lookahead(values = true): { tok: Token; lit: string } {
    const item = this.items[this.position]!;
    return values && (item.tok === 'in' || item.tok === 'notin') ? { tok: 'identifier', lit: item.lit } : item;
  }

  private consume(values = true): { tok: Token; lit: string } {
    const item = this.lookahead(values);
    this.position++;
    return item;
  }

  parse(): LabelRequirement[] {
    const reqs: LabelRequirement[] = [];
    for (;;) {
      const { tok, lit } = this.lookahead();
      if (tok === 'end') return reqs;
      if (tok !== 'identifier' && tok !== '!') throw badRequest(`found '${lit}', expected: !, identifier, or 'end of string'`);
      try {
        reqs.push(this.requirement());
      } catch (err) {
        if (err instanceof SelectorSyntaxError) throw badRequest(`unable to parse requirement: ${err.message}`);
        throw err;
      }
      const next = this.consume();
      if (next.tok === 'end') return reqs;
      if (next.tok !== ',') throw badRequest(`found '${next.lit}', expected: ',' or 'end of string'`);
      const after = this.lookahead();
      if (after.tok !== 'identifier' && after.tok !== '!') throw badRequest(`found '${after.lit}', expected: identifier after ','`);
    }
  }

  private requirement(): LabelRequirement {
    let negated = false;
    let { tok, lit } = this.consume();
    if (tok === '!') {
      negated = true;
      ({ tok, lit } = this.consume());
    }
    if (tok !== 'identifier') throw badRequest(`found '${lit}', expected: identifier`);
    const key = lit;
    const keyErrors = labelKeyErrors(key);
    if (keyErrors.length > 0) throw badRequest(invalid('<nil>', key, keyErrors.join('; ')));
    // `!key` is complete as it is (what follows must be `,` or the end); `key` alone is an exists.
    const ahead = this.lookahead().tok;
    if (negated || ahead === 'end' || ahead === ',') return { key, operator: negated ? '!' : 'exists', values: [] };
    const op = this.consume(false);
    let operator: LabelOperator;
    let values: string[];
    switch (op.tok) {
      case 'in':
      case 'notin':
        operator = op.tok;
        values = this.setValues();
        break;
      case '=':
      case '==':
      case '!=':
      case '>':
      case '<':
        operator = op.tok === '>' ? 'gt' : op.tok === '<' ? 'lt' : op.tok === '!=' ? '!=' : '=';
        values = this.exactValue();
        break;
      default:
        throw badRequest(`found '${op.lit}', expected: ${BINARY_OPERATORS}`);
    }
    // NewRequirement: sets.String sorts the values; its errors are aggregated.
    values = [...new Set(values)].sort();
    const errors: string[] = [];
    if (operator === 'gt' || operator === 'lt') {
      values.forEach((v, i) => {
        if (!/^[+-]?\d+$/.test(v) || BigInt(v) > 9223372036854775807n || BigInt(v) < -9223372036854775808n)
          errors.push(invalid(`values[${i}]`, v, "for 'Gt', 'Lt' operators, the value must be an integer"));
      });
    }
    values.forEach((v, i) => {
      const e = labelValueErrors(v);
      if (e.length > 0) errors.push(invalid(`values[${i}][${key}]`, v, e.join('; ')));
    });
    if (errors.length > 0) throw badRequest(aggregate(errors));
    return { key, operator, values };
  }

  private setValues(): string[] {
    const open = this.consume();
    if (open.tok !== '(') throw badRequest(`found '${open.lit}' expected: '('`);
    const { tok, lit } = this.lookahead();
    if (tok === ')') {
      this.consume();
      return [''];
    }
    if (tok !== 'identifier' && tok !== ',') throw badRequest(`found '${lit}', expected: ',', ')' or identifier`);
    const values = this.identifiers();
    if (this.consume().tok !== ')') throw badRequest(`found '${lit}', expected: ')'`);
    return values;
  }

  private identifiers(): string[] {
    const values: string[] = [];
    for (;;) {
      const { tok, lit } = this.consume();
      if (tok === 'identifier') {
        values.push(lit);
        const next = this.lookahead();
        if (next.tok === ',') continue;
        if (next.tok === ')') return values;
        throw badRequest(`found '${next.lit}', expected: ',' or ')'`);
      }
      if (tok !== ',') throw badRequest(`found '${lit}', expected: ',', or identifier`);
      if (values.length === 0) values.push('');
      const next = this.lookahead().tok;
      if (next === ')') {
        values.push('');
        return values;
      }
      if (next === ',') {
        this.consume();
        values.push('');
      }
    }
  }

  private exactValue(): string[] {
    const ahead = this.lookahead().tok;
    if (ahead === 'end' || ahead === ',') return [''];
    const { tok, lit } = this.consume();
    if (tok !== 'identifier') throw badRequest(`found '${lit}', expected: identifier`);
    return [lit];
  }
}

/**
 * A `labelSelector=` as labels.Parse reads it, with its messages (requirements sorted by key, as it
 * sorts them). Throws SelectorSyntaxError.
 */
export function parseLabelSelector(text: string | null | undefined): LabelRequirement[] {
  if (!text) return [];
  return new LabelParser(lex(text)).parse().sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
}

export function matchesLabels(reqs: readonly LabelRequirement[], labels: Readonly<Record<string, string>> | undefined): boolean {
  const ls = labels ?? {};
  return reqs.every((r) => {
    const has = Object.prototype.hasOwnProperty.call(ls, r.key);
    const v = ls[r.key];
    switch (r.operator) {
      case '=':
      case 'in':
        return has && r.values.includes(v!);
      case '!=':
      case 'notin':
        return !has || !r.values.includes(v!);
      case 'exists':
        return has;
      case '!':
        return !has;
      case 'gt':
      case 'lt': {
        if (!has || !/^-?\d+$/.test(v!)) return false;
        const n = Number(v);
        const bound = Number(r.values[0]);
        return r.operator === 'gt' ? n > bound : n < bound;
      }
    }
  });
}

export interface FieldRequirement {
  field: string;
  operator: '=' | '!=';
  value: string;
}

export type FieldGetter = (obj: KubeObject) => string | undefined;

export const STANDARD_FIELDS: Readonly<Record<string, FieldGetter>> = {
  'metadata.name': (o) => o.metadata?.name,
  'metadata.namespace': (o) => o.metadata?.namespace ?? '',
};

/** Parses `a=b,c!=d`; `supported` names the fields this kind can be selected by. */
export function parseFieldSelector(text: string | null | undefined, supported: readonly string[]): FieldRequirement[] {
  if (!text || text.trim() === '') return [];
  return text.split(',').map((raw) => {
    const part = raw.trim();
    const m = /^([^=!]+?)\s*(==|=|!=)\s*(.*)$/.exec(part);
    if (!m) throw badRequest(`invalid selector: '${text}'; can't understand '${part}'`);
    const field = m[1]!;
    if (!supported.includes(field)) {
      // Kinds with no field label conversion of their own (ConfigMaps, custom resources) answer from the
      // generic registry's default; the others from their conversion function (as kube-apiserver 1.33 does).
      const defaultOnly = supported.length === 2 && supported.includes('metadata.name') && supported.includes('metadata.namespace');
      throw badRequest(
        defaultOnly ? `"${field}" is not a known field selector: only "metadata.name", "metadata.namespace"` : `field label not supported: ${field}`,
      );
    }
    return { field, operator: m[2] === '!=' ? '!=' : '=', value: m[3]! };
  });
}

export function matchesFields(reqs: readonly FieldRequirement[], obj: KubeObject, getters: Readonly<Record<string, FieldGetter>>): boolean {
  return reqs.every((r) => {
    const actual = getters[r.field]?.(obj) ?? '';
    return r.operator === '=' ? actual === r.value : actual !== r.value;
  });
}
