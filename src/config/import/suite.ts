/**
 * What the chainsaw and KUTTL importers share: the imported workload (steps as kperturb.yaml writes
 * them, file paths absolute until rendered), refusals that name the file, the path inside it and
 * why kperturb cannot express it, and the small parsers both formats need (Go durations, shell words).
 */
import { readFileSync } from 'node:fs';
import { relative } from 'node:path';
import { parseAllDocuments, stringify } from 'yaml';
import { UserInputError } from '../../model/errors.js';
import { formatKey, isObject, type KubeObject, type ObjectKey } from '../../model/object-key.js';
import { MAX_ALIAS_COUNT, cut, quote } from '../../model/validate.js';

/** A workload step as kperturb.yaml writes it (`{ apply: FILE }`, `{ assert: { file, timeoutSeconds } }`, ...). */
export type RawStep = Record<string, unknown>;

export interface ImportedWorkload {
  name: string;
  /** The test file (chainsaw) or test directory (KUTTL) it came from. */
  source: string;
  steps: RawStep[];
}

export interface ImportResult {
  workloads: ImportedWorkload[];
  /** What was left out on purpose (diagnostics that only run when a test fails). */
  notes: string[];
}

/** A part of a test kperturb cannot run as a workload step: names the file, the path in it and why. */
export function refuse(file: string, at: string | undefined, why: string): never {
  throw new UserInputError(file, at, why);
}

/** A YAML file's documents (empty ones skipped), with the file and document named on a syntax error. */
export function readDocuments(file: string): unknown[] {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    return refuse(file, undefined, `a readable file (${(err as NodeJS.ErrnoException).code})`);
  }
  const out: unknown[] = [];
  for (const [i, doc] of parseAllDocuments(text).entries()) {
    if (doc.errors.length > 0) refuse(file, `document ${i + 1}`, `valid YAML (${cut(doc.errors[0]!.message.split('\n')[0]!)})`);
    let value: unknown;
    try {
      value = doc.toJS({ maxAliasCount: MAX_ALIAS_COUNT });
    } catch (err) {
      refuse(file, `document ${i + 1}`, `YAML whose aliases expand to a bounded size (${cut((err as Error).message)})`);
    }
    if (value !== null && value !== undefined) out.push(value);
  }
  return out;
}

/** A Kubernetes object of a manifest: a mapping with apiVersion and kind. */
export function asObject(value: unknown, file: string, at: string): KubeObject {
  if (!isObject(value) || typeof value.apiVersion !== 'string' || typeof value.kind !== 'string')
    refuse(file, at, 'a Kubernetes object with apiVersion and kind');
  return value as KubeObject;
}

/**
 * A workload name (lowercase letters, digits, dashes) from a test's name: chainsaw's migrate command
 * lowercases and turns underscores into dashes; anything else outside the alphabet becomes a dash too.
 */
export function workloadName(raw: string): string {
  const name = raw
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '');
  return name || 'test';
}

/** Names unique within one import (two tests of the same name get -2, -3, ...). */
export function uniqueNames(workloads: ImportedWorkload[]): ImportedWorkload[] {
  const seen = new Map<string, number>();
  return workloads.map((w) => {
    const n = (seen.get(w.name) ?? 0) + 1;
    seen.set(w.name, n);
    return n === 1 ? w : { ...w, name: `${w.name}-${n}` };
  });
}

const GO_DURATION_UNITS: Readonly<Record<string, number>> = { ns: 1e-9, us: 1e-6, µs: 1e-6, ms: 1e-3, s: 1, m: 60, h: 3600 };

/** A Go duration (`30s`, `1m30s`, `500ms`), as chainsaw's timeouts and sleeps are written, in seconds. */
export function parseGoDuration(value: unknown, file: string, at: string): number {
  const text = typeof value === 'string' ? value.trim() : '';
  const parts = [...text.matchAll(/(\d+(?:\.\d+)?)(ns|us|µs|ms|s|m|h)/g)];
  if (text === '' || parts.map((p) => p[0]).join('') !== text) refuse(file, at, `a duration such as 30s, 1m30s or 500ms (got ${quote(value)})`);
  return parts.reduce((sum, p) => sum + Number(p[1]) * GO_DURATION_UNITS[p[2]!]!, 0);
}

/**
 * Words of a command line as a POSIX shell splits them (quotes, backslashes; no expansion), as KUTTL
 * splits a `command:` (shlex) before running it without a shell.
 */
export function shellWords(line: string): string[] | undefined {
  const words: string[] = [];
  let word = '';
  let inWord = false;
  for (let i = 0; i < line.length; i++) {
    const c = line[i]!;
    if (c === "'") {
      const end = line.indexOf("'", i + 1);
      if (end < 0) return undefined;
      word += line.slice(i + 1, end);
      i = end;
      inWord = true;
    } else if (c === '"') {
      i++;
      for (; i < line.length && line[i] !== '"'; i++) word += line[i] === '\\' && i + 1 < line.length && '"\\$`'.includes(line[i + 1]!) ? line[++i] : line[i];
      if (i >= line.length) return undefined;
      inWord = true;
    } else if (c === '\\' && i + 1 < line.length) {
      word += line[++i];
      inWord = true;
    } else if (/\s/.test(c)) {
      if (inWord) words.push(word);
      word = '';
      inWord = false;
    } else {
      word += c;
      inWord = true;
    }
  }
  if (inWord) words.push(word);
  return words;
}

/** Kinds kube-apiserver serves cluster-scoped: their keys have no namespace. */
const CLUSTER_SCOPED = new Set([
  'Namespace',
  'Node',
  'PersistentVolume',
  'StorageClass',
  'CustomResourceDefinition',
  'ClusterRole',
  'ClusterRoleBinding',
  'PriorityClass',
  'ValidatingWebhookConfiguration',
  'MutatingWebhookConfiguration',
  'APIService',
  'CSIDriver',
  'CSINode',
  'IngressClass',
  'RuntimeClass',
  'VolumeAttachment',
]);

/**
 * The key of an object a test names. Without a namespace it is in `default` (where a workload's
 * apply puts objects that name none), unless its kind is a built-in cluster-scoped one.
 */
export function keyFor(kind: string, namespace: string | undefined, name: string): ObjectKey {
  return formatKey(kind, CLUSTER_SCOPED.has(kind) ? undefined : (namespace ?? 'default'), name);
}

/** The namespace both tools give each test; kperturb's cluster is fresh for every run, so `default` serves. */
export const TEST_NAMESPACE = 'default';

/**
 * kperturb.yaml text of imported workloads: file paths relative to `baseDir` (the directory of the
 * kperturb.yaml they go into), one comment line per workload naming its source.
 */
export function renderWorkloads(result: ImportResult, baseDir: string, tool: string): string {
  const rel = (p: string): string => {
    const r = relative(baseDir, p);
    return r === '' ? '.' : r;
  };
  const relativise = (step: RawStep): RawStep => {
    const [kind, body] = Object.entries(step)[0]!;
    if (typeof body === 'string') return { [kind]: rel(body) };
    if (isObject(body)) {
      const out: Record<string, unknown> = { ...body };
      if (typeof out.file === 'string') out.file = rel(out.file);
      if (typeof out.workingDir === 'string') out.workingDir = rel(out.workingDir);
      return { [kind]: out };
    }
    return step;
  };
  const lines = [`# Imported by \`kperturb import ${tool}\`: the workloads section of a kperturb.yaml in ${baseDir} (paths are relative to it).`];
  for (const n of result.notes) lines.push(`# note: ${n.replace(/\n/g, ' ')}`);
  const workloads: Record<string, unknown> = {};
  for (const w of result.workloads) workloads[w.name] = { steps: w.steps.map(relativise) };
  let body = stringify({ workloads }, { lineWidth: 0 });
  for (const w of result.workloads) body = body.replace(new RegExp(`^  ${w.name}:$`, 'm'), `  # from ${rel(w.source)}\n  ${w.name}:`);
  return `${lines.join('\n')}\n${body}`;
}
