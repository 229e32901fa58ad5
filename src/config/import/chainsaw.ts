/**
 * `kperturb import chainsaw DIR`: kyverno/chainsaw tests (`chainsaw-test.yaml`, kind Test of
 * chainsaw.kyverno.io/v1alpha1) as kperturb workloads, one per test. Each step's `try` operations
 * become workload steps in order: apply/create/update/patch -> apply, assert -> assert, error ->
 * error, delete -> delete and a wait for its absence, command/script -> command/script, sleep ->
 * sleep, the wait helper -> waitFor. What chainsaw evaluates and kperturb cannot (JMESPath
 * expressions, bindings, outputs, operation checks, several clusters) is refused by name; helpers
 * that only print (describe, events, get, podLogs, proxy) and `catch` blocks are left out with a note.
 */
import { existsSync, readdirSync, statSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { isObject, type KubeObject } from '../../model/object-key.js';
import { quote } from '../../model/validate.js';
import {
  TEST_NAMESPACE,
  asObject,
  keyFor,
  parseGoDuration,
  readDocuments,
  refuse,
  uniqueNames,
  workloadName,
  type ImportResult,
  type ImportedWorkload,
  type RawStep,
} from './suite.js';

const TEST_API_VERSION = 'chainsaw.kyverno.io/v1alpha1';
const TEST_FILE_NAMES = ['chainsaw-test.yaml', 'chainsaw-test.yml'];

/** chainsaw's default timeouts (its Configuration's spec.timeouts), in seconds. */
const DEFAULT_TIMEOUTS = { apply: 5, assert: 30, delete: 15, error: 30, exec: 5 };
type Timeouts = typeof DEFAULT_TIMEOUTS;

const ACTIONS = [
  'apply',
  'assert',
  'command',
  'create',
  'delete',
  'describe',
  'error',
  'events',
  'get',
  'patch',
  'podLogs',
  'proxy',
  'script',
  'sleep',
  'update',
  'wait',
] as const;
/** Helpers that only print what is in the cluster: nothing for a workload to do. */
const DIAGNOSTICS = new Set(['describe', 'events', 'get', 'podLogs', 'proxy']);

export function importChainsaw(path: string): ImportResult {
  const root = resolve(path);
  if (!existsSync(root)) refuse(root, undefined, 'a chainsaw test directory (not found)');
  const files = statSync(root).isFile() ? [root] : findTestFiles(root);
  if (files.length === 0) refuse(root, undefined, `a chainsaw test directory: ${TEST_FILE_NAMES[0]} in it or in a directory below it (none found)`);
  const notes: string[] = [];
  const workloads: ImportedWorkload[] = [];
  for (const file of files) {
    const docs = readDocuments(file);
    docs.forEach((doc, i) => workloads.push(importTest(file, doc, docs.length > 1 ? `document ${i + 1} ` : '', notes)));
  }
  return { workloads: uniqueNames(workloads), notes };
}

function findTestFiles(dir: string): string[] {
  const out: string[] = [];
  const entries = readdirSync(dir, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : 1));
  for (const e of entries) if (e.isFile() && TEST_FILE_NAMES.includes(e.name)) out.push(join(dir, e.name));
  for (const e of entries) if (e.isDirectory() && !e.name.startsWith('.')) out.push(...findTestFiles(join(dir, e.name)));
  return out;
}

/** Reads one Test: `doc` is `document N ` in a file of several, so paths say which. */
function importTest(file: string, raw: unknown, doc: string, notes: string[]): ImportedWorkload {
  const at = (p: string): string => `${doc}${p}`.trim();
  if (!isObject(raw) || raw.apiVersion !== TEST_API_VERSION || raw.kind !== 'Test') {
    refuse(file, at('') || undefined, `a chainsaw Test (apiVersion ${TEST_API_VERSION}, kind Test)`);
  }
  const name = isObject(raw.metadata) && typeof raw.metadata.name === 'string' ? raw.metadata.name : basename(dirname(file));
  const spec = isObject(raw.spec) ? raw.spec : refuse(file, at('spec'), 'a mapping with steps');
  const ctx = new TestContext(file, dirname(file), at, notes);
  ctx.checkKeys(spec, 'spec', {
    known: [
      'steps',
      'timeouts',
      'description',
      'concurrent',
      'skipDelete',
      'failFast',
      'template',
      'forceTerminationGracePeriod',
      'delayBeforeCleanup',
      'deletionPropagationPolicy',
      'catch',
      'namespace',
      'skip',
    ],
    refused: {
      bindings: 'bindings are chainsaw variables kperturb cannot evaluate',
      namespaceTemplate: 'kperturb runs every test in the default namespace of a fresh cluster',
      cluster: 'kperturb runs a workload against the one cluster of the run',
      clusters: 'kperturb runs a workload against the one cluster of the run',
      scenarios: 'scenarios repeat a test with other bindings, which kperturb cannot evaluate',
    },
  });
  if (spec.namespace !== undefined && spec.namespace !== TEST_NAMESPACE) {
    refuse(
      file,
      at('spec.namespace'),
      `no namespace or "${TEST_NAMESPACE}": kperturb applies objects without a namespace in ${TEST_NAMESPACE} (got ${quote(spec.namespace)})`,
    );
  }
  if (spec.skip === true) refuse(file, at('spec.skip'), 'a test that runs (this one is skipped; leave it out of the import)');
  if (spec.catch !== undefined) notes.push(`${name}: spec.catch left out (it only runs when a test fails)`);
  const timeouts = ctx.timeouts(spec.timeouts, 'spec.timeouts', DEFAULT_TIMEOUTS);
  if (!Array.isArray(spec.steps) || spec.steps.length === 0) refuse(file, at('spec.steps'), 'a list of at least one step');
  const steps: RawStep[] = [];
  spec.steps.forEach((s, i) => steps.push(...ctx.step(s, `spec.steps[${i}]`, timeouts)));
  if (steps.length === 0) refuse(file, at('spec.steps'), 'at least one operation kperturb can run (all of them only print diagnostics)');
  return { name: workloadName(name), source: file, steps };
}

class TestContext {
  constructor(
    readonly file: string,
    readonly dir: string,
    readonly at: (p: string) => string,
    readonly notes: string[],
  ) {}

  fail(path: string, why: string): never {
    return refuse(this.file, this.at(path), why);
  }

  /** Fields kperturb cannot express are refused with why; fields it does not know at all, as unknown. */
  checkKeys(obj: Record<string, unknown>, path: string, keys: { known: readonly string[]; refused?: Readonly<Record<string, string>> }): void {
    for (const [k, v] of Object.entries(obj)) {
      if (v === undefined || v === null) continue;
      const why = keys.refused?.[k];
      if (why !== undefined) this.fail(`${path}.${k}`, `no ${k}: ${why}`);
      if (!keys.known.includes(k)) this.fail(`${path}.${k}`, `a field of chainsaw ${TEST_API_VERSION} that kperturb knows (${keys.known.join(', ')})`);
    }
  }

  timeouts(raw: unknown, path: string, inherited: Timeouts): Timeouts {
    if (raw === undefined) return inherited;
    if (!isObject(raw)) this.fail(path, 'a mapping of durations');
    const out = { ...inherited };
    for (const [k, v] of Object.entries(raw)) {
      if (k in out) out[k as keyof Timeouts] = parseGoDuration(v, this.file, this.at(`${path}.${k}`));
      else if (k !== 'cleanup') this.fail(`${path}.${k}`, `one of ${[...Object.keys(out), 'cleanup'].join(', ')}`);
    }
    return out;
  }

  step(raw: unknown, path: string, inherited: Timeouts): RawStep[] {
    if (!isObject(raw)) this.fail(path, 'a step (a mapping with try)');
    this.checkKeys(raw, path, {
      known: ['name', 'description', 'try', 'catch', 'finally', 'cleanup', 'timeouts', 'skipDelete', 'template'],
      refused: {
        bindings: 'bindings are chainsaw variables kperturb cannot evaluate',
        use: 'step templates (use) are not supported; inline the step',
        cluster: 'kperturb runs a workload against the one cluster of the run',
        clusters: 'kperturb runs a workload against the one cluster of the run',
      },
    });
    const timeouts = this.timeouts(raw.timeouts, `${path}.timeouts`, inherited);
    if (raw.catch !== undefined) this.notes.push(`${basename(this.dir)}: ${path}.catch left out (it only runs when the step fails)`);
    for (const block of ['finally', 'cleanup'] as const) {
      const ops = raw[block];
      if (ops === undefined) continue;
      if (!Array.isArray(ops)) this.fail(`${path}.${block}`, 'a list of operations');
      ops.forEach((op, j) => {
        if (!isObject(op) || !Object.keys(op).some((k) => DIAGNOSTICS.has(k))) {
          this.fail(
            `${path}.${block}[${j}]`,
            `only diagnostics (${[...DIAGNOSTICS].join(', ')}) in ${block}: kperturb runs each workload on a fresh cluster and has no ${block} phase; move the operation into try`,
          );
        }
      });
      this.notes.push(`${basename(this.dir)}: ${path}.${block} left out (diagnostics only)`);
    }
    if (!Array.isArray(raw.try)) this.fail(`${path}.try`, 'a list of operations');
    return raw.try.flatMap((op, j) => this.operation(op, `${path}.try[${j}]`, timeouts));
  }

  operation(raw: unknown, path: string, timeouts: Timeouts): RawStep[] {
    if (!isObject(raw)) this.fail(path, 'an operation (a mapping with one action)');
    const actions = Object.keys(raw).filter((k) => (ACTIONS as readonly string[]).includes(k));
    if (actions.length !== 1) this.fail(path, `exactly one action of ${ACTIONS.join(', ')} (got ${actions.length === 0 ? 'none' : actions.join(', ')})`);
    const action = actions[0]!;
    this.checkKeys(raw, path, { known: [action, 'description', 'continueOnError', 'name'] });
    if (raw.continueOnError === true) this.fail(`${path}.continueOnError`, 'no continueOnError: a failed workload step ends the workload');
    const p = `${path}.${action}`;
    const body = raw[action];
    if (DIAGNOSTICS.has(action)) {
      this.notes.push(`${basename(this.dir)}: ${p} left out (it only prints)`);
      return [];
    }
    if (!isObject(body)) this.fail(p, 'a mapping');
    switch (action) {
      case 'apply':
      case 'create':
      case 'update':
      case 'patch':
        return this.apply(body, p);
      case 'assert':
      case 'error':
        return this.expect(action, body, p, action === 'assert' ? timeouts.assert : timeouts.error);
      case 'delete':
        return this.delete(body, p, timeouts.delete);
      case 'command':
      case 'script':
        return [this.process(action, body, p, timeouts.exec)];
      case 'sleep':
        this.checkKeys(body, p, { known: ['duration'] });
        return [{ sleep: parseGoDuration(body.duration, this.file, this.at(`${p}.duration`)) }];
      default:
        return [this.wait(body, p)];
    }
  }

  private static readonly REFUSED_ON_RESOURCES: Readonly<Record<string, string>> = {
    bindings: 'bindings are chainsaw variables kperturb cannot evaluate',
    outputs: 'outputs feed bindings, which kperturb cannot evaluate',
    expect: 'operation checks are JMESPath expressions kperturb cannot evaluate',
    cluster: 'kperturb runs a workload against the one cluster of the run',
    clusters: 'kperturb runs a workload against the one cluster of the run',
  };

  /** create, update and patch become kperturb's apply: create, or merge-patch what exists. */
  private apply(body: Record<string, unknown>, path: string): RawStep[] {
    this.checkKeys(body, path, {
      known: ['file', 'resource', 'template', 'timeout', 'dryRun', 'description'],
      refused: {
        ...TestContext.REFUSED_ON_RESOURCES,
        subresource: "kperturb's apply writes the object itself; write a kperturb patch step with subresource instead",
      },
    });
    if (body.dryRun === true) this.fail(`${path}.dryRun`, 'no dryRun: a workload step changes the cluster');
    return this.sources(body, path).map((s) => (s.file ? { apply: s.file } : { apply: { resource: s.object } }));
  }

  private expect(kind: 'assert' | 'error', body: Record<string, unknown>, path: string, defaultTimeout: number): RawStep[] {
    this.checkKeys(body, path, { known: ['file', 'resource', 'template', 'timeout', 'description'], refused: TestContext.REFUSED_ON_RESOURCES });
    const timeoutSeconds = body.timeout === undefined ? defaultTimeout : parseGoDuration(body.timeout, this.file, this.at(`${path}.timeout`));
    return this.sources(body, path, true).map((s) => ({ [kind]: s.file ? { file: s.file, timeoutSeconds } : { resource: s.object, timeoutSeconds } }));
  }

  private delete(body: Record<string, unknown>, path: string, defaultTimeout: number): RawStep[] {
    this.checkKeys(body, path, {
      known: ['ref', 'file', 'resource', 'template', 'timeout', 'deletionPropagationPolicy', 'description'],
      refused: TestContext.REFUSED_ON_RESOURCES,
    });
    const timeoutSeconds = body.timeout === undefined ? defaultTimeout : parseGoDuration(body.timeout, this.file, this.at(`${path}.timeout`));
    const targets: Array<{ object: KubeObject; at: string }> = [];
    if (body.ref !== undefined) {
      const ref = isObject(body.ref) ? body.ref : this.fail(`${path}.ref`, 'a mapping with apiVersion, kind and name');
      this.checkKeys(ref, `${path}.ref`, { known: ['apiVersion', 'kind', 'name', 'namespace', 'labels'] });
      if (typeof ref.kind !== 'string') this.fail(`${path}.ref.kind`, 'the kind of the object to delete');
      const metadata = {
        ...(typeof ref.name === 'string' ? { name: ref.name } : {}),
        ...(typeof ref.namespace === 'string' ? { namespace: ref.namespace } : {}),
      };
      targets.push({ object: { kind: ref.kind, metadata }, at: `${path}.ref` });
    } else {
      for (const s of this.sources(body, path)) {
        for (const [i, object] of (s.file ? this.objectsOf(s.file) : [s.object!]).entries())
          targets.push({ object, at: s.file ? `${path}.file (object ${i + 1})` : `${path}.resource` });
      }
    }
    const policy = body.deletionPropagationPolicy;
    if (policy !== undefined && policy !== 'Orphan' && policy !== 'Background' && policy !== 'Foreground')
      this.fail(`${path}.deletionPropagationPolicy`, `Orphan, Background or Foreground (got ${quote(policy)})`);
    return targets.flatMap(({ object, at }) => {
      const name = object.metadata?.name;
      if (!object.kind || !name) this.fail(at, 'a kind and a name: kperturb deletes one named object at a time (not by labels or all of a kind)');
      const key = keyFor(object.kind, object.metadata?.namespace, name);
      // chainsaw waits until the object is gone; so does the wait after the delete.
      return [{ delete: { key, ...(policy ? { propagationPolicy: policy } : {}) } }, { waitFor: { key, absent: true, timeoutSeconds } }];
    });
  }

  private process(kind: 'command' | 'script', body: Record<string, unknown>, path: string, defaultTimeout: number): RawStep {
    const known =
      kind === 'command'
        ? ['entrypoint', 'args', 'env', 'workDir', 'timeout', 'skipLogOutput', 'skipCommandOutput', 'description']
        : ['content', 'shell', 'shellArgs', 'env', 'workDir', 'timeout', 'skipLogOutput', 'skipCommandOutput', 'description'];
    this.checkKeys(body, path, {
      known,
      refused: {
        ...TestContext.REFUSED_ON_RESOURCES,
        check: 'operation checks are JMESPath expressions kperturb cannot evaluate; a workload command must exit 0',
      },
    });
    // chainsaw gives every command the test's namespace in NAMESPACE.
    const env: Record<string, string> = { NAMESPACE: TEST_NAMESPACE };
    if (body.env !== undefined) {
      if (!Array.isArray(body.env)) this.fail(`${path}.env`, 'a list of { name, value }');
      body.env.forEach((e, i) => {
        if (!isObject(e) || typeof e.name !== 'string' || typeof e.value !== 'string') this.fail(`${path}.env[${i}]`, 'a { name, value } with string values');
        if (/^\(.*\)$/s.test(e.value))
          this.fail(`${path}.env[${i}].value`, 'a plain value: chainsaw expressions (in parentheses) are not evaluated by kperturb');
        env[e.name] = e.value;
      });
    }
    const step: Record<string, unknown> = { env };
    if (body.workDir !== undefined) step.workingDir = resolve(this.dir, String(body.workDir));
    else step.workingDir = this.dir;
    step.timeoutSeconds = body.timeout === undefined ? defaultTimeout : parseGoDuration(body.timeout, this.file, this.at(`${path}.timeout`));
    if (kind === 'script') {
      if (typeof body.content !== 'string' || body.content === '') this.fail(`${path}.content`, 'the script (a non-empty string)');
      return {
        script: {
          content: body.content,
          ...(body.shell !== undefined ? { shell: body.shell } : {}),
          ...(body.shellArgs !== undefined ? { shellArgs: body.shellArgs } : {}),
          ...step,
        },
      };
    }
    if (typeof body.entrypoint !== 'string' || body.entrypoint === '') this.fail(`${path}.entrypoint`, 'the program to run (a non-empty string)');
    const args =
      body.args === undefined
        ? []
        : Array.isArray(body.args) && body.args.every((a) => typeof a === 'string')
          ? (body.args as string[])
          : this.fail(`${path}.args`, 'a list of strings');
    // chainsaw expands $VARIABLE in args (and $$ to $); a shell does the same with the words double-quoted.
    if ([body.entrypoint, ...args].some((a) => a.includes('$'))) {
      const quoted = [body.entrypoint, ...args].map((a) => `"${a.replace(/[\\"`]/g, (c) => `\\${c}`).replace(/\$\$/g, '\\$')}"`);
      return { script: { content: quoted.join(' '), ...step } };
    }
    return { command: { entrypoint: body.entrypoint, ...(args.length > 0 ? { args } : {}), ...step } };
  }

  /** The wait helper (kubectl wait) for one named object: a condition, a JSONPath value or deletion. */
  private wait(body: Record<string, unknown>, path: string): RawStep {
    this.checkKeys(body, path, {
      known: ['apiVersion', 'kind', 'name', 'namespace', 'timeout', 'for', 'format', 'description'],
      refused: { selector: 'kperturb waits for one named object', ...TestContext.REFUSED_ON_RESOURCES },
    });
    if (typeof body.kind !== 'string' || typeof body.name !== 'string') this.fail(path, 'a kind and a name: kperturb waits for one named object');
    const key = keyFor(body.kind, typeof body.namespace === 'string' ? body.namespace : undefined, body.name);
    const timeoutSeconds = body.timeout === undefined ? DEFAULT_TIMEOUTS.assert : parseGoDuration(body.timeout, this.file, this.at(`${path}.timeout`));
    const forWhat = isObject(body.for) ? body.for : this.fail(`${path}.for`, 'one of condition, deletion or jsonPath');
    if (isObject(forWhat.condition)) {
      const value = forWhat.condition.value;
      if (value !== undefined && String(value).toLowerCase() !== 'true')
        this.fail(`${path}.for.condition.value`, `"true" (kperturb waits for a condition to be True; got ${quote(value)})`);
      return { waitFor: { key, condition: String(forWhat.condition.name), timeoutSeconds } };
    }
    if (forWhat.deletion !== undefined) return { waitFor: { key, absent: true, timeoutSeconds } };
    if (isObject(forWhat.jsonPath)) {
      const jp = String(forWhat.jsonPath.path ?? '');
      const field = /^\{\.([A-Za-z0-9_.]+)\}$/.exec(jp)?.[1];
      if (!field) this.fail(`${path}.for.jsonPath.path`, `a simple JSONPath such as {.status.phase} (got ${quote(jp)})`);
      return { waitFor: { key, field, equals: forWhat.jsonPath.value, timeoutSeconds } };
    }
    return this.fail(`${path}.for`, 'one of condition, deletion or jsonPath');
  }

  /** The files (globs in the last path segment expanded) or inline resource of an operation. */
  private sources(body: Record<string, unknown>, path: string, expectation = false): Array<{ file?: string; object?: KubeObject }> {
    if ((body.file === undefined) === (body.resource === undefined)) this.fail(path, 'either file or resource');
    if (body.resource !== undefined) {
      const object = asObject(body.resource, this.file, this.at(`${path}.resource`));
      this.plainValues(object, this.file, `${this.at(`${path}.resource`)}.`, expectation);
      return [{ object }];
    }
    if (typeof body.file !== 'string') this.fail(`${path}.file`, 'a file path');
    if (/^[a-z]+:\/\//.test(body.file)) this.fail(`${path}.file`, `a file in the test directory (kperturb does not fetch URLs; got ${quote(body.file)})`);
    const files = this.expand(body.file, `${path}.file`);
    for (const f of files) for (const [i, o] of this.objectsOf(f).entries()) this.plainValues(o, f, `document ${i + 1}: `, expectation);
    return files.map((file) => ({ file }));
  }

  private expand(pattern: string, path: string): string[] {
    const abs = resolve(this.dir, pattern);
    if (!/[*?[]/.test(basename(abs))) {
      if (!existsSync(abs) || !statSync(abs).isFile()) this.fail(path, `a file that exists (${abs} not found)`);
      return [abs];
    }
    const re = new RegExp(
      `^${basename(abs)
        .replace(/[.+^${}()|\\]/g, '\\$&')
        .replace(/\*/g, '.*')
        .replace(/\?/g, '.')}$`,
    );
    const dir = dirname(abs);
    const files = existsSync(dir)
      ? readdirSync(dir)
          .filter((n) => re.test(n))
          .sort()
          .map((n) => join(dir, n))
      : [];
    if (files.length === 0) this.fail(path, `a pattern that matches files (${abs} matches none)`);
    return files;
  }

  private objectsOf(file: string): KubeObject[] {
    return readDocuments(file).map((d, i) => asObject(d, file, `document ${i + 1}`));
  }

  /**
   * chainsaw reads `(...)` keys and values as JMESPath and `~` keys as iteration; kperturb compares
   * plain values only, so such a test is refused where the expression is (`at` prefixes the path).
   */
  private plainValues(value: unknown, file: string, at: string, expectation: boolean, inner = ''): void {
    if (typeof value === 'string' && /^\(.*\)$/s.test(value))
      refuse(file, `${at}${inner}`, `a plain value: chainsaw evaluates ${quote(value)} as an expression, which kperturb cannot`);
    if (Array.isArray(value)) value.forEach((v, i) => this.plainValues(v, file, at, expectation, `${inner}[${i}]`));
    if (isObject(value)) {
      for (const [k, v] of Object.entries(value)) {
        const child = inner ? `${inner}.${k}` : k;
        if (expectation && (/^\(.*\)$/s.test(k) || k.startsWith('~'))) {
          refuse(
            file,
            `${at}${child}`,
            'a plain field name: chainsaw evaluates this key as a JMESPath expression or iteration, which kperturb cannot match; write the expected object itself',
          );
        }
        this.plainValues(v, file, at, expectation, child);
      }
    }
  }
}
