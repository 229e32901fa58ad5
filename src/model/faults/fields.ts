/**
 * The fields fault kinds share: object keys, kinds, the trigger forms (a controller write, a cluster
 * change, a call to a stub application, a combination) and a fault's window (until a later trigger
 * or for a duration), each with its JSON Schema (the trigger forms are the TestPlan
 * schema's `definitions`, which fault fields point to with `$ref`) and its reader. The readers take
 * the fields they allow from these schemas, so that the two cannot drift apart.
 */
import { parseKey, type ObjectKey } from '../object-key.js';
import { CHANGE_TYPES, TRIGGER_WRITE_VERBS, type CallTrigger, type ChangeTrigger, type FieldChange, type Trigger, type WriteTrigger } from '../trigger.js';
import { join, quote, type Validator } from '../validate.js';
import { field, optional, type Field, type JsonSchema } from './declare.js';

const KEY_SCHEMA = { type: 'string', description: 'An object key: Kind/namespace/name (namespaced) or Kind/name (cluster-scoped)', minLength: 1 };
const OCCURRENCE_SCHEMA = { type: 'integer', minimum: 1 };

const WRITE_TRIGGER_SCHEMA = {
  type: 'object',
  properties: { verb: { enum: [...TRIGGER_WRITE_VERBS] }, key: KEY_SCHEMA, subresource: { type: 'string' }, occurrence: OCCURRENCE_SCHEMA },
  additionalProperties: false,
  required: ['verb', 'key', 'occurrence'],
  description: 'The n-th successful write with this verb, key and subresource by the controller',
};

const FIELD_CHANGE_SCHEMA = {
  type: 'object',
  properties: { path: { type: 'string' }, before: {}, after: {} },
  additionalProperties: false,
  required: ['path'],
};

const CHANGE_TRIGGER_SCHEMA = {
  type: 'object',
  properties: { key: KEY_SCHEMA, change: { enum: [...CHANGE_TYPES] }, fields: { type: 'array', items: FIELD_CHANGE_SCHEMA }, occurrence: OCCURRENCE_SCHEMA },
  additionalProperties: false,
  required: ['key', 'change', 'occurrence'],
  description: "The n-th matching change of an object, as kperturb's own watch sees it",
};

const CALL_TRIGGER_SCHEMA = {
  type: 'object',
  properties: {
    application: { type: 'string', minLength: 1, description: "The application's name in kperturb.yaml (applications:)" },
    key: {
      type: 'string',
      pattern: '^(Pod|Service)/[^/]+/[^/]+$',
      description: 'The pod (Pod/namespace/name) or Service (Service/namespace/name) whose address was called',
    },
    operation: { type: 'string', minLength: 1, description: 'HTTP: the method (GET, POST...); ZooKeeper: the operation (create, getData...). Absent: any' },
    path: { type: 'string', minLength: 1, description: 'HTTP: the path without the query; ZooKeeper: the znode. Absent: any' },
    occurrence: OCCURRENCE_SCHEMA,
  },
  additionalProperties: false,
  required: ['application', 'key', 'occurrence'],
  description: 'The n-th matching call of the controller to a stub application, when it arrives (before it is answered)',
};

const TRIGGER_FORMS = ['write', 'change', 'call', 'allOf', 'anyOf', 'sequence'] as const;

const TRIGGER_SCHEMA = {
  description: 'When a fault fires: exactly one form',
  oneOf: TRIGGER_FORMS.map((form) => ({
    type: 'object',
    properties: {
      [form]:
        form === 'write'
          ? { $ref: '#/definitions/writeTrigger' }
          : form === 'change' || form === 'call'
            ? { $ref: `#/definitions/${form}Trigger` }
            : { type: 'array', items: { $ref: '#/definitions/trigger' }, minItems: 1 },
    },
    additionalProperties: false,
    required: [form],
  })),
};

/** The TestPlan schema's definitions of the trigger forms, in the schema's order. */
export const TRIGGER_DEFINITIONS: Record<string, JsonSchema> = {
  writeTrigger: WRITE_TRIGGER_SCHEMA,
  changeTrigger: CHANGE_TRIGGER_SCHEMA,
  callTrigger: CALL_TRIGGER_SCHEMA,
  trigger: TRIGGER_SCHEMA,
};

const keysOf = (schema: { properties: Record<string, unknown> }) => Object.keys(schema.properties);

export function readKey(v: Validator, raw: unknown, path: string): ObjectKey {
  const key = v.string(raw, path);
  if (!parseKey(key)) v.fail(path, `an object key Kind/namespace/name or Kind/name (got ${quote(key)})`);
  return key;
}

export function readWriteTrigger(v: Validator, raw: unknown, path: string): WriteTrigger {
  const after = v.object(raw, path);
  v.onlyKeys(after, path, keysOf(WRITE_TRIGGER_SCHEMA));
  const verb = v.oneOf(after.verb, join(path, 'verb'), TRIGGER_WRITE_VERBS);
  const key = readKey(v, after.key, join(path, 'key'));
  const sub = v.optionalString(after.subresource, join(path, 'subresource'));
  const occurrence = v.number(after.occurrence, join(path, 'occurrence'), { min: 1, integer: true });
  return sub !== undefined ? { verb, key, subresource: sub, occurrence } : { verb, key, occurrence };
}

export function readChangeTrigger(v: Validator, raw: unknown, path: string): ChangeTrigger {
  const c = v.object(raw, path);
  v.onlyKeys(c, path, keysOf(CHANGE_TRIGGER_SCHEMA));
  const trigger: ChangeTrigger = {
    key: readKey(v, c.key, join(path, 'key')),
    change: v.oneOf(c.change, join(path, 'change'), CHANGE_TYPES),
    occurrence: 0,
  };
  if (c.fields !== undefined) {
    trigger.fields = v.array(c.fields, join(path, 'fields')).map((fc, i) => {
      const fp = join(join(path, 'fields'), i);
      const o = v.object(fc, fp);
      v.onlyKeys(o, fp, keysOf(FIELD_CHANGE_SCHEMA));
      const change: FieldChange = { path: v.string(o.path, join(fp, 'path')) };
      if ('before' in o) change.before = o.before;
      if ('after' in o) change.after = o.after;
      return change;
    });
  }
  trigger.occurrence = v.number(c.occurrence, join(path, 'occurrence'), { min: 1, integer: true });
  return trigger;
}

export function readCallTrigger(v: Validator, raw: unknown, path: string): CallTrigger {
  const c = v.object(raw, path);
  v.onlyKeys(c, path, keysOf(CALL_TRIGGER_SCHEMA));
  const application = v.string(c.application, join(path, 'application'));
  if (application === '') v.fail(join(path, 'application'), "an application's name from kperturb.yaml (got an empty string)");
  const key = readKeyOf(v, c.key, join(path, 'key'), ['Pod', 'Service']);
  const trigger: CallTrigger = { application, key, occurrence: 0 };
  for (const name of ['operation', 'path'] as const) {
    const value = v.optionalString(c[name], join(path, name));
    if (value === '') v.fail(join(path, name), `a non-empty ${name}, or no ${name} (any)`);
    if (value !== undefined) trigger[name] = value;
  }
  trigger.occurrence = v.number(c.occurrence, join(path, 'occurrence'), { min: 1, integer: true });
  return trigger;
}

export function readTrigger(v: Validator, raw: unknown, path: string): Trigger {
  const t = v.object(raw, path);
  const forms = Object.keys(t);
  if (forms.length !== 1 || !(TRIGGER_FORMS as readonly string[]).includes(forms[0]!)) {
    v.fail(path, `exactly one of ${TRIGGER_FORMS.join(', ')} (got ${forms.length === 0 ? 'none' : forms.join(', ')})`);
  }
  const form = forms[0] as (typeof TRIGGER_FORMS)[number];
  const p = join(path, form);
  switch (form) {
    case 'write':
      return { write: readWriteTrigger(v, t.write, p) };
    case 'change':
      return { change: readChangeTrigger(v, t.change, p) };
    case 'call':
      return { call: readCallTrigger(v, t.call, p) };
    case 'allOf':
    case 'anyOf':
    case 'sequence': {
      const list = v.array(t[form], p);
      if (list.length === 0) v.fail(p, 'at least one trigger');
      const triggers = list.map((x, i) => readTrigger(v, x, join(p, i)));
      return form === 'allOf' ? { allOf: triggers } : form === 'anyOf' ? { anyOf: triggers } : { sequence: triggers };
    }
  }
}

/** A field holding an object key. */
export const keyField = (): Field<ObjectKey, false> => field({ ...KEY_SCHEMA }, readKey);

/** A field holding a write trigger (`description`: what it means for this fault). */
export const writeTriggerField = (description?: string): Field<WriteTrigger, false> =>
  field({ $ref: '#/definitions/writeTrigger', ...(description ? { description } : {}) }, readWriteTrigger);

export const changeTriggerField = (): Field<ChangeTrigger, false> => field({ $ref: '#/definitions/changeTrigger' }, readChangeTrigger);

export const triggerField = (): Field<Trigger, false> => field({ $ref: '#/definitions/trigger' }, readTrigger);

/** A field holding one of `values`. */
export const enumField = <T extends string>(values: readonly T[], description?: string): Field<T, false> =>
  field({ enum: [...values], ...(description ? { description } : {}) }, (v, raw, path) => v.oneOf(raw, path, values));

export const booleanField = (description: string): Field<boolean, false> => field({ type: 'boolean', description }, (v, raw, path) => v.boolean(raw, path));

/** A kind name such as ConfigMap; `example` is the kind the error message suggests. */
export const KIND_PATTERN = /^[A-Z][A-Za-z0-9]*$/;
export function readKind(v: Validator, raw: unknown, path: string, example: string): string {
  const kind = v.string(raw, path);
  if (!KIND_PATTERN.test(kind)) v.fail(path, `a kind such as ${example} (got ${quote(kind)})`);
  return kind;
}

/** A trigger field the fault may leave out. */
export const optionalTriggerField = (description: string): Field<Trigger, true> => optional(field({ $ref: '#/definitions/trigger', description }, readTrigger));

/** A key of `kinds` (the error names them). */
export function readKeyOf(v: Validator, raw: unknown, path: string, kinds: readonly string[]): ObjectKey {
  const key = readKey(v, raw, path);
  if (!kinds.some((k) => key.startsWith(`${k}/`))) v.fail(path, `${kinds.map((k) => `${k}/namespace/name`).join(' or ')} (got ${quote(key)})`);
  return key;
}

/** A namespaced object of one kind (`Kind/namespace/name`), as a fault on the managed system names it. */
export const namespacedKeyField = (kind: string, description: string): Field<ObjectKey, false> =>
  field({ type: 'string', pattern: `^${kind}/[^/]+/[^/]+$`, description }, (v, raw, path) => {
    const key = readKeyOf(v, raw, path, [kind]);
    if (parseKey(key)?.namespace === undefined) v.fail(path, `${kind}/namespace/name (got ${quote(key)})`);
    return key;
  });

/** A cluster-scoped object of one kind (`Kind/name`). */
export const clusterKeyField = (kind: string, description: string): Field<ObjectKey, false> =>
  field({ type: 'string', pattern: `^${kind}/[^/]+$`, description }, (v, raw, path) => {
    const key = readKey(v, raw, path);
    if (!new RegExp(`^${kind}/[^/]+$`).test(key)) v.fail(path, `${kind}/name (got ${quote(key)})`);
    return key;
  });
