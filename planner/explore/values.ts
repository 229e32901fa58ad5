/**
 * Values explore writes: a seeded random source (the same seed number gives the same campaign),
 * samples of a `pattern` (randexp, driven by that source), Kubernetes quantities scaled up and down,
 * and the small path helpers operations apply to a custom resource.
 */
import RandExp from 'randexp';
import { isObject } from '../../src/model/object-key.js';
import type { SchemaNode } from './schema.js';

/** mulberry32: small, fast, and the same sequence on every platform for the same seed. */
export class SeededRandom {
  private state: number;
  constructor(seed: number) {
    this.state = seed >>> 0;
  }
  next(): number {
    this.state = (this.state + 0x6d2b79f5) >>> 0;
    let t = this.state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }
  /** An integer from `from` to `to`, both included. */
  int(from: number, to: number): number {
    return from + Math.floor(this.next() * (to - from + 1));
  }
  shuffle<T>(items: readonly T[]): T[] {
    const out = [...items];
    for (let i = out.length - 1; i > 0; i--) {
      const j = this.int(0, i);
      [out[i], out[j]] = [out[j]!, out[i]!];
    }
    return out;
  }
}

/**
 * A string matching `pattern` (an ECMAScript reading of the schema's regular expression, as
 * kube-apiserver's RE2 reads the common ones), different from every value in `avoid`; undefined when
 * randexp cannot read the pattern or gives nothing new in a few tries.
 */
export function samplePattern(
  pattern: string,
  random: SeededRandom,
  avoid: ReadonlySet<string>,
  length: { minLength?: number; maxLength?: number },
): string | undefined {
  let re: RegExp;
  let gen: RandExp;
  try {
    re = new RegExp(pattern, 'u');
    gen = new RandExp(pattern);
  } catch {
    return undefined;
  }
  gen.max = 6;
  gen.randInt = (a, b) => random.int(a, b);
  for (let i = 0; i < 20; i++) {
    let s: string;
    try {
      s = gen.gen();
    } catch {
      return undefined;
    }
    if (avoid.has(s) || !re.test(s)) continue;
    if (length.minLength !== undefined && s.length < length.minLength) continue;
    if (length.maxLength !== undefined && s.length > length.maxLength) continue;
    return s;
  }
  return undefined;
}

/** Whether the node's length, enum and pattern constraints take `s`. */
export function allowsString(node: SchemaNode, s: string): boolean {
  if (node.minLength !== undefined && s.length < node.minLength) return false;
  if (node.maxLength !== undefined && s.length > node.maxLength) return false;
  if (node.enum && !node.enum.includes(s)) return false;
  if (node.pattern) {
    try {
      if (!new RegExp(node.pattern, 'u').test(s)) return false;
    } catch {
      return false;
    }
  }
  return true;
}

/** Whether the node's bounds, multipleOf and type take `n`. */
export function allowsNumber(node: SchemaNode, n: number): boolean {
  if (node.minimum !== undefined && (node.exclusiveMinimum ? n <= node.minimum : n < node.minimum)) return false;
  if (node.maximum !== undefined && (node.exclusiveMaximum ? n >= node.maximum : n > node.maximum)) return false;
  if (node.multipleOf !== undefined && Math.abs(n / node.multipleOf - Math.round(n / node.multipleOf)) > 1e-9) return false;
  if (node.type === 'integer' && !Number.isInteger(n)) return false;
  return true;
}

const QUANTITY = /^(\d+)(m|k|M|G|T|P|E|Ki|Mi|Gi|Ti|Pi|Ei)?$/;
const SMALLER: Record<string, string | undefined> = { Ki: '', Mi: 'Ki', Gi: 'Mi', Ti: 'Gi', Pi: 'Ti', Ei: 'Pi', k: '', M: 'k', G: 'M', T: 'G', P: 'T', E: 'P' };

export function isQuantity(value: unknown): value is string | number {
  return (typeof value === 'number' && Number.isInteger(value) && value > 0) || (typeof value === 'string' && QUANTITY.test(value));
}

/** A quantity twice as large, in the same unit (`1Gi` -> `2Gi`, `500m` -> `1000m`). */
export function doubleQuantity(value: string | number): string | number {
  if (typeof value === 'number') return value * 2;
  const m = QUANTITY.exec(value)!;
  return `${Number(m[1]) * 2}${m[2] ?? ''}`;
}

/** A quantity half as large, in a smaller unit when it must be (`1Gi` -> `512Mi`); undefined below one unit. */
export function halveQuantity(value: string | number): string | number | undefined {
  if (typeof value === 'number') return value >= 2 ? Math.floor(value / 2) : undefined;
  const m = QUANTITY.exec(value)!;
  const n = Number(m[1]);
  const unit = m[2] ?? '';
  if (n % 2 === 0) return `${n / 2}${unit}`;
  const smaller = SMALLER[unit];
  if (smaller === undefined) return n >= 2 ? `${Math.floor(n / 2)}${unit}` : undefined;
  return `${(n * (unit.endsWith('i') ? 1024 : 1000)) / 2}${smaller}`;
}

export type CrPath = Array<string | number>;

export function getAt(obj: unknown, path: readonly (string | number)[]): unknown {
  let cur = obj;
  for (const seg of path) {
    if (Array.isArray(cur) && typeof seg === 'number') cur = cur[seg];
    else if (isObject(cur) && typeof seg === 'string') cur = cur[seg];
    else return undefined;
  }
  return cur;
}

/** A copy of `obj` with `value` at `path` (missing parents created), or without it when `value` is undefined. */
export function setAt<T>(obj: T, path: readonly (string | number)[], value: unknown): T {
  if (path.length === 0) return value as T;
  const [head, ...rest] = path;
  if (typeof head === 'number' && (Array.isArray(obj) || obj === undefined)) {
    const copy: unknown[] = Array.isArray(obj) ? [...obj] : [];
    if (rest.length === 0 && value === undefined) copy.splice(head, 1);
    else copy[head] = setAt(copy[head], rest, value);
    return copy as T;
  }
  const copy: Record<string, unknown> = isObject(obj) ? { ...obj } : {};
  const key = String(head);
  if (rest.length === 0 && value === undefined) delete copy[key];
  else copy[key] = setAt(copy[key], rest, value);
  return copy as T;
}

/** The JSON merge patch (RFC 7386) that turns `from` into `to`: removed keys are null, lists whole. */
export function mergePatch(from: unknown, to: unknown): unknown {
  if (!isObject(from) || !isObject(to)) return to === undefined ? null : to;
  const patch: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(to)) {
    if (!(k in from)) patch[k] = v;
    else if (JSON.stringify(from[k]) !== JSON.stringify(v)) patch[k] = mergePatch(from[k], v);
  }
  for (const k of Object.keys(from)) if (!(k in to)) patch[k] = null;
  return patch;
}
