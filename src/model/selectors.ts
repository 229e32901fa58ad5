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

const LABEL_KEY_NAME = /^[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$/;
const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const LABEL_VALUE = /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/;

/** Problems with a label key (qualified name: optional DNS prefix, then a name of up to 63 characters). */
export function labelKeyErrors(key: string): string[] {
  const slash = key.indexOf('/');
  const prefix = slash >= 0 ? key.slice(0, slash) : undefined;
  const name = slash >= 0 ? key.slice(slash + 1) : key;
  const errs: string[] = [];
  if (prefix !== undefined && (prefix.length === 0 || prefix.length > 253 || !DNS_SUBDOMAIN.test(prefix))) {
    errs.push('prefix part must be a lowercase RFC 1123 subdomain');
  }
  if (name.length === 0) errs.push('name part must be non-empty');
  else if (name.length > 63) errs.push('name part must be no more than 63 characters');
  else if (!LABEL_KEY_NAME.test(name)) {
    errs.push(
      "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')",
    );
  }
  return errs;
}

export function labelValueErrors(value: string): string[] {
  const errs: string[] = [];
  if (value.length > 63) errs.push('must be no more than 63 characters');
  if (!LABEL_VALUE.test(value)) {
    errs.push(
      "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')",
    );
  }
  return errs;
}

/** Splits on commas that are not inside parentheses. */
function splitTopLevel(text: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let current = '';
  for (const ch of text) {
    if (ch === '(') depth++;
    if (ch === ')') depth--;
    if (ch === ',' && depth === 0) {
      parts.push(current);
      current = '';
    } else {
      current += ch;
    }
  }
  parts.push(current);
  return parts;
}

function checkKey(key: string, whole: string): void {
  const errs = labelKeyErrors(key);
  if (errs.length > 0) throw badRequest(`unable to parse requirement: ${whole}: invalid label key "${key}": ${errs.join('; ')}`);
}

function checkValue(value: string, whole: string): void {
  const errs = labelValueErrors(value);
  if (errs.length > 0) throw badRequest(`unable to parse requirement: ${whole}: invalid label value: "${value}": ${errs.join('; ')}`);
}

export function parseLabelSelector(text: string | null | undefined): LabelRequirement[] {
  if (!text || text.trim() === '') return [];
  const reqs: LabelRequirement[] = [];
  for (const raw of splitTopLevel(text)) {
    const part = raw.trim();
    if (part === '') throw badRequest(`unable to parse requirement: found '', expected: identifier`);
    let m: RegExpExecArray | null;
    if (part.startsWith('!')) {
      const key = part.slice(1).trim();
      checkKey(key, part);
      reqs.push({ key, operator: '!', values: [] });
    } else if ((m = /^(\S+)\s+(in|notin)\s*\((.*)\)$/.exec(part))) {
      const key = m[1]!;
      checkKey(key, part);
      const values = m[3]!.split(',').map((v) => v.trim());
      if (values.length === 1 && values[0] === '' && m[2] === 'in') {
        throw badRequest(`unable to parse requirement: for 'in', 'notin' operators, values set can't be empty`);
      }
      for (const v of values) checkValue(v, part);
      reqs.push({ key, operator: m[2] as 'in' | 'notin', values });
    } else if ((m = /^([^=!<>\s]+)\s*(==|=|!=|>|<)\s*(.*)$/.exec(part))) {
      const key = m[1]!;
      checkKey(key, part);
      const value = m[3]!.trim();
      const op = m[2]!;
      if (op === '>' || op === '<') {
        if (!/^-?\d+$/.test(value)) throw badRequest(`unable to parse requirement: for 'Gt', 'Lt' operators, the value must be an integer`);
        reqs.push({ key, operator: op === '>' ? 'gt' : 'lt', values: [value] });
      } else {
        checkValue(value, part);
        reqs.push({ key, operator: op === '!=' ? '!=' : '=', values: [value] });
      }
    } else if (/^\S+$/.test(part)) {
      checkKey(part, part);
      reqs.push({ key: part, operator: 'exists', values: [] });
    } else {
      throw badRequest(`unable to parse requirement: couldn't parse the selector string "${text}"`);
    }
  }
  return reqs;
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
