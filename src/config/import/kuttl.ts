/**
 * `kperturb import kuttl DIR`: KUTTL test cases as kperturb workloads, one per test case directory
 * (DIR itself, or each directory in it that holds step files). A step is the files that share an
 * index (`00-install.yaml`, `00-assert.yaml`, `00-errors.yaml`), run as KUTTL runs a step: the
 * TestStep's deletes (each waited for until gone), its commands, the objects to apply, then the
 * asserts and errors with the TestAssert's timeout (default 30 s). File names follow KUTTL's
 * pattern `<index>-<name>(-<more>).yaml`; `assert` and `errors` as the first name make the file an
 * assert or errors file. What KUTTL does and kperturb cannot (templates, CEL expressions, assert
 * commands, background commands, step directories, other kubeconfigs) is refused by name;
 * collectors, which only run when a step fails, are left out with a note.
 */
import { existsSync, readdirSync, statSync } from 'node:fs';
import { basename, join, resolve } from 'node:path';
import { isObject, type KubeObject } from '../../model/object-key.js';
import { quote } from '../../model/validate.js';
import {
  TEST_NAMESPACE,
  asObject,
  keyFor,
  readDocuments,
  refuse,
  shellWords,
  uniqueNames,
  workloadName,
  type ImportResult,
  type ImportedWorkload,
  type RawStep,
} from './suite.js';

const KUTTL_GROUP = 'kuttl.dev/';
/** KUTTL's default step timeout (TestSuite `timeout`), in seconds. */
const DEFAULT_TIMEOUT = 30;
/** KUTTL's file name pattern (internal/file/name.go). */
const FILE_NAME = /^(\d+-)?([^-.]+)(-[^.]+)?((?:\.gotmpl)?\.yaml)?$/;

interface StepFiles {
  index: number;
  apply: string[];
  assert: string[];
  errors: string[];
}

export function importKuttl(path: string): ImportResult {
  const root = resolve(path);
  if (!existsSync(root) || !statSync(root).isDirectory()) refuse(root, undefined, 'a KUTTL test case directory, or a directory of them (not found)');
  const notes: string[] = [];
  const cases = hasStepFiles(root)
    ? [root]
    : readdirSync(root, { withFileTypes: true })
        .filter((e) => e.isDirectory() && hasStepFiles(join(root, e.name)))
        .map((e) => join(root, e.name))
        .sort();
  if (cases.length === 0)
    refuse(root, undefined, 'a KUTTL test case directory (files such as 00-install.yaml, 00-assert.yaml), or a directory of them (none found)');
  const workloads = cases.map((dir) => importCase(dir, notes));
  return { workloads: uniqueNames(workloads), notes };
}

function hasStepFiles(dir: string): boolean {
  return readdirSync(dir).some((n) => /^\d+-.*\.yaml$/.test(n));
}

function importCase(dir: string, notes: string[]): ImportedWorkload {
  const steps = new Map<number, StepFiles>();
  for (const entry of readdirSync(dir, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : 1))) {
    const m = FILE_NAME.exec(entry.name);
    if (!m || !m[1]) continue; // KUTTL skips files without an index (README.md, ...)
    const file = join(dir, entry.name);
    if (entry.isDirectory())
      refuse(file, undefined, 'a step file: step directories are not supported; put the files in the test case directory with the step index');
    if (!m[4]) continue;
    if (m[4].startsWith('.gotmpl')) refuse(file, undefined, 'a plain YAML step file: KUTTL templates (.gotmpl.yaml) are not expanded by kperturb');
    const index = Number(m[1].slice(0, -1));
    const step = steps.get(index) ?? { index, apply: [], assert: [], errors: [] };
    steps.set(index, step);
    const kind = m[2]!.toLowerCase();
    (kind === 'assert' ? step.assert : kind === 'errors' ? step.errors : step.apply).push(file);
  }
  const out: RawStep[] = [];
  for (const step of [...steps.values()].sort((a, b) => a.index - b.index)) out.push(...importStep(dir, step, notes));
  return { name: workloadName(basename(dir)), source: dir, steps: out };
}

/** One KUTTL step in KUTTL's order: deletes, commands, applies, then asserts and errors. */
function importStep(dir: string, files: StepFiles, notes: string[]): RawStep[] {
  const deletes: RawStep[] = [];
  const commands: RawStep[] = [];
  const applies: RawStep[] = [];
  const assertObjects: KubeObject[] = [];
  const errorObjects: KubeObject[] = [];
  let timeoutSeconds = DEFAULT_TIMEOUT;

  for (const file of files.apply) {
    const docs = readDocuments(file);
    const objects = docs.map((d, i) => asObject(d, file, `document ${i + 1}`));
    const plain = objects.filter((o) => !o.apiVersion!.startsWith(KUTTL_GROUP));
    for (const [i, o] of objects.entries()) {
      if (!o.apiVersion!.startsWith(KUTTL_GROUP)) continue;
      const at = `document ${i + 1}`;
      if (o.kind !== 'TestStep')
        refuse(file, `${at}.kind`, `TestStep in a step file (got ${quote(o.kind)}${o.kind === 'TestAssert' ? ': it belongs in the assert file' : ''})`);
      const s = o as Record<string, unknown>;
      checkKeys(file, at, s, ['apiVersion', 'kind', 'metadata', 'apply', 'assert', 'error', 'delete', 'commands', 'unitTest'], {
        index: 'an index override; name the file with the index instead',
        kubeconfig: "kperturb runs every step against the run's cluster",
        kubeconfigLoading: "kperturb runs every step against the run's cluster",
        context: "kperturb runs every step against the run's cluster",
      });
      deletes.push(...stepDeletes(file, at, s.delete, timeoutSeconds));
      commands.push(...stepCommands(file, `${at}.commands`, s.commands, dir));
      for (const [field, into] of [
        ['apply', applies],
        ['assert', assertObjects],
        ['error', errorObjects],
      ] as const) {
        if (s[field] === undefined) continue;
        if (!Array.isArray(s[field]) || !s[field].every((f) => typeof f === 'string')) refuse(file, `${at}.${field}`, 'a list of file paths');
        for (const ref of s[field] as string[]) {
          const target = resolve(dir, ref);
          if (/^[a-z]+:\/\//.test(ref)) refuse(file, `${at}.${field}`, `files in the test directory (kperturb does not fetch URLs; got ${quote(ref)})`);
          if (!existsSync(target) || !statSync(target).isFile()) refuse(file, `${at}.${field}`, `files that exist (${target} not found)`);
          if (field === 'apply') (into as RawStep[]).push({ apply: target });
          else (into as KubeObject[]).push(...readDocuments(target).map((d, j) => asObject(d, target, `document ${j + 1}`)));
        }
      }
    }
    // A file of plain objects is applied as it is; one mixed with a TestStep, object by object.
    if (plain.length === objects.length) applies.push({ apply: file });
    else applies.push(...plain.map((resource) => ({ apply: { resource } })));
  }

  for (const [list, into] of [
    [files.assert, assertObjects],
    [files.errors, errorObjects],
  ] as const) {
    for (const file of list) {
      for (const [i, d] of readDocuments(file).entries()) {
        const o = asObject(d, file, `document ${i + 1}`);
        if (!o.apiVersion!.startsWith(KUTTL_GROUP)) {
          into.push(o);
          continue;
        }
        const at = `document ${i + 1}`;
        if (o.kind !== 'TestAssert') refuse(file, `${at}.kind`, `TestAssert in an assert or errors file (got ${quote(o.kind)})`);
        const a = o as Record<string, unknown>;
        checkKeys(file, at, a, ['apiVersion', 'kind', 'metadata', 'timeout', 'collectors'], {
          commands: 'assert commands are retried until the timeout like assertions; kperturb runs a command once (write a script step that waits)',
          resourceRefs: 'CEL expressions (resourceRefs, assertAll, assertAny) are not evaluated by kperturb',
          assertAll: 'CEL expressions (resourceRefs, assertAll, assertAny) are not evaluated by kperturb',
          assertAny: 'CEL expressions (resourceRefs, assertAll, assertAny) are not evaluated by kperturb',
        });
        if (a.timeout !== undefined) {
          if (typeof a.timeout !== 'number' || !Number.isInteger(a.timeout) || a.timeout < 1)
            refuse(file, `${at}.timeout`, `a whole number of seconds (got ${quote(a.timeout)})`);
          timeoutSeconds = a.timeout;
        }
        if (a.collectors !== undefined) notes.push(`${basename(dir)}: ${basename(file)} collectors left out (they only run when a step fails)`);
      }
    }
  }
  // One assert (errors) file of plain objects is referred to as it is; anything else is written inline.
  const expectation = (objects: KubeObject[], list: readonly string[]): Record<string, unknown> => {
    const [only] = list;
    const plainFile = list.length === 1 && only !== undefined && readDocuments(only).length === objects.length;
    return plainFile ? { file: only, timeoutSeconds } : { resources: objects, timeoutSeconds };
  };
  const expectations: RawStep[] = [];
  if (assertObjects.length > 0) expectations.push({ assert: expectation(assertObjects, files.assert) });
  if (errorObjects.length > 0) expectations.push({ error: expectation(errorObjects, files.errors) });
  return [...deletes, ...commands, ...applies, ...expectations];
}

function checkKeys(file: string, at: string, obj: Record<string, unknown>, known: readonly string[], refused: Readonly<Record<string, string>>): void {
  for (const k of Object.keys(obj)) {
    if (refused[k] !== undefined) refuse(file, `${at}.${k}`, `no ${k}: ${refused[k]}`);
    if (!known.includes(k)) refuse(file, `${at}.${k}`, `a field of ${String(obj.kind)} that kperturb knows (${known.join(', ')})`);
  }
}

/** TestStep `delete`: each named object is deleted and waited for until gone, as KUTTL does. */
function stepDeletes(file: string, at: string, raw: unknown, timeoutSeconds: number): RawStep[] {
  if (raw === undefined) return [];
  if (!Array.isArray(raw)) refuse(file, `${at}.delete`, 'a list of object references');
  return raw.flatMap((ref, i) => {
    const p = `${at}.delete[${i}]`;
    if (!isObject(ref) || typeof ref.kind !== 'string') refuse(file, p, 'an object reference with apiVersion, kind and name');
    if (typeof ref.name !== 'string' || ref.name === '')
      refuse(file, p, 'a name: kperturb deletes one named object at a time (not by labels or all of a kind)');
    const key = keyFor(ref.kind, typeof ref.namespace === 'string' ? ref.namespace : undefined, ref.name);
    return [{ delete: { key } }, { waitFor: { key, absent: true, timeoutSeconds } }];
  });
}

/**
 * TestStep `commands`: a `command` is split into words as KUTTL splits it and runs without a shell;
 * one that uses `$VARIABLES` (KUTTL expands them itself) runs under `sh -c`, which expands them
 * alike. Every command gets NAMESPACE (KUTTL's test namespace), here `default`.
 */
function stepCommands(file: string, at: string, raw: unknown, dir: string): RawStep[] {
  if (raw === undefined) return [];
  if (!Array.isArray(raw)) refuse(file, at, 'a list of commands');
  return raw.map((c, i): RawStep => {
    const p = `${at}[${i}]`;
    if (!isObject(c)) refuse(file, p, 'a command (a mapping with command or script)');
    checkKeys(file, p, c, ['command', 'script', 'namespaced', 'skipLogOutput', 'timeout'], {
      background: 'background commands only run in a TestSuite; kperturb runs each step to its end',
      ignoreFailure: 'a workload command must exit 0; drop the command or make it succeed (e.g. `script: cmd || true`)',
    });
    const common = { env: { NAMESPACE: TEST_NAMESPACE }, workingDir: dir, timeoutSeconds: DEFAULT_TIMEOUT };
    if (c.timeout !== undefined) {
      if (typeof c.timeout !== 'number' || c.timeout <= 0) refuse(file, `${p}.timeout`, `a number of seconds (got ${quote(c.timeout)})`);
      common.timeoutSeconds = c.timeout;
    }
    if ((typeof c.command === 'string') === (typeof c.script === 'string')) refuse(file, p, 'either command or script (a string)');
    if (typeof c.script === 'string') return { script: { content: c.script, ...common } };
    const words = shellWords(c.command as string);
    if (!words || words.length === 0) refuse(file, `${p}.command`, `a command line with balanced quotes (got ${quote(c.command)})`);
    if (c.namespaced === true) words.push('--namespace', TEST_NAMESPACE);
    if (words.some((w) => w.includes('$')))
      return { script: { content: (c.command as string) + (c.namespaced === true ? ` --namespace ${TEST_NAMESPACE}` : ''), ...common } };
    const [entrypoint, ...args] = words;
    return { command: { entrypoint, ...(args.length > 0 ? { args } : {}), ...common } };
  });
}
