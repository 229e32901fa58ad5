/**
 * Reading test plans: the plan file's YAML, checked against the TestPlan schema (schemas/, read from
 * the package by schemas.ts) field by field, so that a bad plan names its file and the path inside it.
 * What a plan is lives in the core (src/model/plan.ts); this is the part that reads files.
 */
import {
  API_ERROR_ANSWERS,
  CHANGE_TYPES,
  FAULT_TYPES,
  PATTERNS,
  PLAN_API_VERSION,
  SLOW_SECONDS_MAX,
  TRIGGER_WRITE_VERBS,
  WATCH_END_MODES,
  type ChangeTrigger,
  type Fault,
  type FieldChange,
  type TestPlan,
  type Trigger,
  type WatchEndFault,
  type WriteTrigger,
} from '../model/plan.js';
import { Validator, join, quote } from '../model/validate.js';
import { parseKey, type ObjectKey } from '../model/object-key.js';
import { allowedKeys, allowedKeysOfBranch } from './schemas.js';
import { readYamlFile } from './yaml-file.js';

/** The file each loaded plan came from (results name it, so that a bug's plan can be run again). */
const planFiles = new WeakMap<TestPlan, string>();

export function loadPlanFile(file: string): TestPlan {
  const plan = validatePlan(readYamlFile(file, 'KP_E_PLAN'), file);
  planFiles.set(plan, file);
  return plan;
}

/** Records where a plan made in memory was written (the planner's plans, once `kperturb plan` wrote them). */
export function rememberPlanFile(plan: TestPlan, file: string): void {
  planFiles.set(plan, file);
}

/** The file `plan` was loaded from or written to (undefined for a plan only in memory). */
export function planFileOf(plan: TestPlan): string | undefined {
  return planFiles.get(plan);
}

export function validatePlan(doc: unknown, file: string): TestPlan {
  const v = new Validator(file, 'KP_E_PLAN');
  const top = v.object(doc, '');
  // apiVersion and kind first: a config or a manifest given as a plan is told so, not that its fields are unknown.
  if (top.apiVersion !== PLAN_API_VERSION) v.fail('apiVersion', `"${PLAN_API_VERSION}" (got ${quote(top.apiVersion)})`);
  if (top.kind !== 'TestPlan') v.fail('kind', `"TestPlan" (got ${quote(top.kind)})`);
  v.onlyKeys(top, '', allowedKeys('plan', ''));
  const metadata = v.object(top.metadata, 'metadata');
  const name = v.string(metadata.name, 'metadata.name');
  const spec = v.object(top.spec, 'spec');
  v.onlyKeys(spec, 'spec', allowedKeys('plan', 'spec'));
  const faultsRaw = v.array(spec.faults, 'spec.faults');
  if (faultsRaw.length === 0) v.fail('spec.faults', 'at least one fault');
  const faults = faultsRaw.map((f, i) => validateFault(v, f, join('spec.faults', i)));
  return {
    apiVersion: PLAN_API_VERSION,
    kind: 'TestPlan',
    metadata: { name },
    spec: {
      controller: v.string(spec.controller, 'spec.controller'),
      workload: v.string(spec.workload, 'spec.workload'),
      pattern: v.oneOf(spec.pattern, 'spec.pattern', PATTERNS),
      description: v.string(spec.description, 'spec.description'),
      faults,
    },
  };
}

/** A fault type's fields, from the plan schema's branch of that type. */
function faultKeys(type: (typeof FAULT_TYPES)[number]): string[] {
  return allowedKeysOfBranch('plan', 'definitions/fault', 'type', type);
}

function validateFault(v: Validator, raw: unknown, path: string): Fault {
  const f = v.object(raw, path);
  const type = v.oneOf(f.type, join(path, 'type'), FAULT_TYPES);
  switch (type) {
    case 'crash-after-write':
      v.onlyKeys(f, path, faultKeys(type));
      return { type, after: validateWriteTrigger(v, f.after, join(path, 'after')) };
    case 'stale-restart':
      v.onlyKeys(f, path, faultKeys(type));
      return {
        type,
        at: validateTrigger(v, f.at, join(path, 'at')),
        viewAfter: validateChangeTrigger(v, f.viewAfter, join(path, 'viewAfter')),
        releaseAfterSeconds: v.duration(f.releaseAfterSeconds, join(path, 'releaseAfterSeconds'), 'seconds'),
        ...(f.kinds !== undefined ? { kinds: validateKinds(v, f.kinds, join(path, 'kinds')) } : {}),
      };
    case 'hold-until':
      v.onlyKeys(f, path, faultKeys(type));
      return {
        type,
        key: validateKey(v, f.key, join(path, 'key')),
        from: validateChangeTrigger(v, f.from, join(path, 'from')),
        until: validateChangeTrigger(v, f.until, join(path, 'until')),
      };
    case 'api-error': {
      v.onlyKeys(f, path, faultKeys(type));
      const on = validateWriteTrigger(v, f.on, join(path, 'on'));
      const answer = v.oneOf(f.answer, join(path, 'answer'), API_ERROR_ANSWERS);
      // kube-apiserver answers a create that collides with 409 AlreadyExists, never Conflict.
      if (answer === 'conflict' && on.verb === 'create')
        v.fail(join(path, 'answer'), 'an answer a create can get (a create never gets 409 Conflict: kube-apiserver answers AlreadyExists)');
      if (f.slowSeconds === undefined) return { type, on, answer };
      if (answer !== 'slow') v.fail(join(path, 'slowSeconds'), `no slowSeconds unless answer is slow (answer is ${answer})`);
      const slowSeconds = v.number(f.slowSeconds, join(path, 'slowSeconds'), { min: 1, max: SLOW_SECONDS_MAX });
      return { type, on, answer, slowSeconds };
    }
    case 'watch-end': {
      v.onlyKeys(f, path, faultKeys(type));
      const kind = v.string(f.kind, join(path, 'kind'));
      if (!/^[A-Z][A-Za-z0-9]*$/.test(kind)) v.fail(join(path, 'kind'), `a kind such as ConfigMap (got ${quote(kind)})`);
      const fault: WatchEndFault = {
        type,
        kind,
        at: validateTrigger(v, f.at, join(path, 'at')),
        mode: v.oneOf(f.mode, join(path, 'mode'), WATCH_END_MODES),
      };
      if (f.expire !== undefined) fault.expire = v.boolean(f.expire, join(path, 'expire'));
      return fault;
    }
  }
}

function validateKinds(v: Validator, raw: unknown, path: string): string[] {
  const kinds = v.stringArray(raw, path);
  if (kinds.length === 0) v.fail(path, 'at least one kind (leave `kinds` out to freeze every kind)');
  kinds.forEach((k, i) => {
    if (!/^[A-Z][A-Za-z0-9]*$/.test(k)) v.fail(join(path, i), `a kind such as ZookeeperCluster (got ${quote(k)})`);
  });
  return kinds;
}

function validateKey(v: Validator, raw: unknown, path: string): ObjectKey {
  const key = v.string(raw, path);
  if (!parseKey(key)) v.fail(path, `an object key Kind/namespace/name or Kind/name (got ${quote(key)})`);
  return key;
}

export function validateWriteTrigger(v: Validator, raw: unknown, path: string): WriteTrigger {
  const after = v.object(raw, path);
  v.onlyKeys(after, path, allowedKeys('plan', 'definitions/writeTrigger'));
  const verb = v.oneOf(after.verb, join(path, 'verb'), TRIGGER_WRITE_VERBS);
  const key = validateKey(v, after.key, join(path, 'key'));
  const sub = v.optionalString(after.subresource, join(path, 'subresource'));
  const occurrence = v.number(after.occurrence, join(path, 'occurrence'), { min: 1, integer: true });
  return sub !== undefined ? { verb, key, subresource: sub, occurrence } : { verb, key, occurrence };
}

export function validateChangeTrigger(v: Validator, raw: unknown, path: string): ChangeTrigger {
  const c = v.object(raw, path);
  v.onlyKeys(c, path, allowedKeys('plan', 'definitions/changeTrigger'));
  const trigger: ChangeTrigger = {
    key: validateKey(v, c.key, join(path, 'key')),
    change: v.oneOf(c.change, join(path, 'change'), CHANGE_TYPES),
    occurrence: 0,
  };
  if (c.fields !== undefined) {
    trigger.fields = v.array(c.fields, join(path, 'fields')).map((fc, i) => {
      const fp = join(join(path, 'fields'), i);
      const o = v.object(fc, fp);
      v.onlyKeys(o, fp, allowedKeys('plan', 'definitions/changeTrigger/fields/*'));
      const change: FieldChange = { path: v.string(o.path, join(fp, 'path')) };
      if ('before' in o) change.before = o.before;
      if ('after' in o) change.after = o.after;
      return change;
    });
  }
  trigger.occurrence = v.number(c.occurrence, join(path, 'occurrence'), { min: 1, integer: true });
  return trigger;
}

const TRIGGER_FORMS = ['write', 'change', 'allOf', 'anyOf', 'sequence'] as const;

export function validateTrigger(v: Validator, raw: unknown, path: string): Trigger {
  const t = v.object(raw, path);
  const forms = Object.keys(t);
  if (forms.length !== 1 || !(TRIGGER_FORMS as readonly string[]).includes(forms[0]!)) {
    v.fail(path, `exactly one of ${TRIGGER_FORMS.join(', ')} (got ${forms.length === 0 ? 'none' : forms.join(', ')})`);
  }
  const form = forms[0] as (typeof TRIGGER_FORMS)[number];
  const p = join(path, form);
  switch (form) {
    case 'write':
      return { write: validateWriteTrigger(v, t.write, p) };
    case 'change':
      return { change: validateChangeTrigger(v, t.change, p) };
    case 'allOf':
    case 'anyOf':
    case 'sequence': {
      const list = v.array(t[form], p);
      if (list.length === 0) v.fail(p, 'at least one trigger');
      const triggers = list.map((x, i) => validateTrigger(v, x, join(p, i)));
      return form === 'allOf' ? { allOf: triggers } : form === 'anyOf' ? { anyOf: triggers } : { sequence: triggers };
    }
  }
}
