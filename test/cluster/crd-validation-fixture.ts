/**
 * A CRD whose schema uses every value constraint operators write (types, int-or-string, enum, pattern,
 * lengths, bounds, formats, required, list-type set and map, map sizes, nullable, CEL rules with
 * message, messageExpression, fieldPath, reason and a transition rule), and a table of bad writes with
 * the answer kube-apiserver 1.33 gives: used by test/cluster/crd-validation.test.ts (embedded cluster)
 * and test/real/crd-validation.real.ts (both side by side).
 */
export const GADGETS = '/apis/valid.example.com/v1/namespaces/default/gadgets';

export function gadgetCrd(): any {
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: 'gadgets.valid.example.com' },
    spec: {
      group: 'valid.example.com',
      scope: 'Namespaced',
      names: { plural: 'gadgets', singular: 'gadget', kind: 'Gadget', listKind: 'GadgetList' },
      versions: [
        {
          name: 'v1',
          served: true,
          storage: true,
          subresources: { status: {} },
          schema: {
            openAPIV3Schema: {
              type: 'object',
              properties: {
                spec: {
                  type: 'object',
                  required: ['mode'],
                  'x-kubernetes-validations': [
                    {
                      rule: '!has(self.minReplicas) || !has(self.maxReplicas) || self.minReplicas <= self.maxReplicas',
                      message: 'minReplicas must not exceed maxReplicas',
                    },
                    {
                      rule: "!has(self.tier) || self.tier != 'gold' || has(self.support)",
                      messageExpression: "'tier ' + self.tier + ' needs support'",
                      fieldPath: '.support',
                      reason: 'FieldValueRequired',
                    },
                    { rule: 'self.tags.all(t, t.size() <= 5)' },
                  ],
                  properties: {
                    mode: { type: 'string', enum: ['fast', 'safe'] },
                    replicas: { type: 'integer', minimum: 1, maximum: 5 },
                    minReplicas: { type: 'integer' },
                    maxReplicas: { type: 'integer' },
                    name: { type: 'string', pattern: '^[a-z]+$', minLength: 2, maxLength: 10 },
                    ratio: { type: 'number', maximum: 1, exclusiveMaximum: true },
                    step: { type: 'integer', multipleOf: 3 },
                    address: { type: 'string', format: 'ipv4' },
                    tags: { type: 'array', maxItems: 2, items: { type: 'string' }, 'x-kubernetes-list-type': 'set', default: [] },
                    ports: {
                      type: 'array',
                      'x-kubernetes-list-type': 'map',
                      'x-kubernetes-list-map-keys': ['name'],
                      items: {
                        type: 'object',
                        required: ['name'],
                        properties: { name: { type: 'string' }, port: { type: 'integer', format: 'int32', minimum: 1 } },
                      },
                    },
                    size: { 'x-kubernetes-int-or-string': true },
                    labels: { type: 'object', maxProperties: 2, additionalProperties: { type: 'string', minLength: 1 } },
                    note: { type: 'string', nullable: true },
                    tier: { type: 'string' },
                    support: { type: 'string' },
                    immutable: { type: 'string', 'x-kubernetes-validations': [{ rule: 'self == oldSelf', message: 'immutable' }] },
                  },
                },
                status: { type: 'object', properties: { phase: { type: 'string', enum: ['Ready', 'Pending'] }, count: { type: 'integer', minimum: 0 } } },
              },
            },
          },
        },
      ],
    },
  };
}

export const gadget = (name: string, spec: Record<string, unknown>): Record<string, unknown> => ({
  apiVersion: 'valid.example.com/v1',
  kind: 'Gadget',
  metadata: { name },
  spec: { mode: 'fast', ...spec },
});

/** A gadget within every constraint of the schema. */
export const goodGadget = (name: string): Record<string, unknown> =>
  gadget(name, {
    replicas: 5,
    name: 'abc',
    ratio: 0.5,
    step: 9,
    address: '10.0.0.1',
    tags: ['a', 'b'],
    ports: [{ name: 'a', port: 1 }, { name: 'b' }],
    size: '10%',
    labels: { a: 'x' },
    note: null,
    minReplicas: 1,
    maxReplicas: 2,
    tier: 'gold',
    support: 'x',
    immutable: 'v',
  });

export interface ValidationCase {
  name: string;
  /** What is written: a create (POST of the gadget), or a merge patch / status update of `base`. */
  write:
    | { create: Record<string, unknown> }
    | { base: Record<string, unknown>; mergePatch: unknown; subresource?: 'status' }
    | { base: Record<string, unknown>; status: Record<string, unknown> };
  /** The Status message kube-apiserver answers (422 Invalid). */
  message: string;
  /** Its causes: reason and field (their messages are the message's parts). */
  causes: Array<[reason: string, field: string]>;
}

const KIND = 'Gadget.valid.example.com';

export const VALIDATION_CASES: ValidationCase[] = [
  {
    name: 'minimum',
    write: { create: gadget('c1', { replicas: 0 }) },
    message: `${KIND} "c1" is invalid: spec.replicas: Invalid value: 0: spec.replicas in body should be greater than or equal to 1`,
    causes: [['FieldValueInvalid', 'spec.replicas']],
  },
  {
    name: 'maximum on a merge patch',
    write: { base: gadget('c2', { replicas: 2 }), mergePatch: { spec: { replicas: 6 } } },
    message: `${KIND} "c2" is invalid: spec.replicas: Invalid value: 6: spec.replicas in body should be less than or equal to 5`,
    causes: [['FieldValueInvalid', 'spec.replicas']],
  },
  {
    name: 'type',
    write: { create: gadget('c3', { replicas: '3' }) },
    message: `${KIND} "c3" is invalid: [spec.replicas: Invalid value: "string": spec.replicas in body must be of type integer: "string", <nil>: Invalid value: "null": some validation rules were not checked because the object was invalid; correct the existing errors to complete validation]`,
    causes: [
      ['FieldValueTypeInvalid', 'spec.replicas'],
      ['FieldValueInvalid', '<nil>'],
    ],
  },
  {
    name: 'enum',
    write: { create: gadget('c4', { mode: 'turbo' }) },
    message: `${KIND} "c4" is invalid: [spec.mode: Unsupported value: "turbo": supported values: "fast", "safe", <nil>: Invalid value: "null": some validation rules were not checked because the object was invalid; correct the existing errors to complete validation]`,
    causes: [
      ['FieldValueNotSupported', 'spec.mode'],
      ['FieldValueInvalid', '<nil>'],
    ],
  },
  {
    name: 'required',
    write: { create: { apiVersion: 'valid.example.com/v1', kind: 'Gadget', metadata: { name: 'c5' }, spec: { replicas: 1 } } },
    message: `${KIND} "c5" is invalid: [spec.mode: Required value, <nil>: Invalid value: "null": some validation rules were not checked because the object was invalid; correct the existing errors to complete validation]`,
    causes: [
      ['FieldValueRequired', 'spec.mode'],
      ['FieldValueInvalid', '<nil>'],
    ],
  },
  {
    name: 'pattern',
    write: { create: gadget('c6', { name: 'Abc' }) },
    message: `${KIND} "c6" is invalid: spec.name: Invalid value: "Abc": spec.name in body should match '^[a-z]+$'`,
    causes: [['FieldValueInvalid', 'spec.name']],
  },
  {
    name: 'maxLength',
    write: { create: gadget('c7', { name: 'abcdefghijk' }) },
    message: `${KIND} "c7" is invalid: [spec.name: Too long: may not be more than 10 bytes, <nil>: Invalid value: "null": some validation rules were not checked because the object was invalid; correct the existing errors to complete validation]`,
    causes: [
      ['FieldValueTooLong', 'spec.name'],
      ['FieldValueInvalid', '<nil>'],
    ],
  },
  {
    name: 'minLength',
    write: { create: gadget('c8', { name: 'a' }) },
    message: `${KIND} "c8" is invalid: spec.name: Invalid value: "a": spec.name in body should be at least 2 chars long`,
    causes: [['FieldValueInvalid', 'spec.name']],
  },
  {
    name: 'exclusive maximum, a float',
    write: { create: gadget('c9', { ratio: 1.5 }) },
    message: `${KIND} "c9" is invalid: spec.ratio: Invalid value: 1.5: spec.ratio in body should be less than 1`,
    causes: [['FieldValueInvalid', 'spec.ratio']],
  },
  {
    name: 'multipleOf',
    write: { create: gadget('c10', { step: 4 }) },
    message: `${KIND} "c10" is invalid: spec.step: Invalid value: 4: spec.step in body should be a multiple of 3`,
    causes: [['FieldValueInvalid', 'spec.step']],
  },
  {
    name: 'format',
    write: { create: gadget('c11', { address: '10.0.0' }) },
    message: `${KIND} "c11" is invalid: [spec.address: Invalid value: "10.0.0": spec.address in body must be of type ipv4: "10.0.0", <nil>: Invalid value: "null": some validation rules were not checked because the object was invalid; correct the existing errors to complete validation]`,
    causes: [
      ['FieldValueTypeInvalid', 'spec.address'],
      ['FieldValueInvalid', '<nil>'],
    ],
  },
  {
    name: 'list-type set',
    write: { create: gadget('c12', { tags: ['a', 'a'] }) },
    message: `${KIND} "c12" is invalid: spec.tags[1]: Duplicate value: "a"`,
    causes: [['FieldValueDuplicate', 'spec.tags[1]']],
  },
  {
    name: 'maxItems',
    write: { create: gadget('c13', { tags: ['a', 'b', 'c'] }) },
    message: `${KIND} "c13" is invalid: [spec.tags: Too many: 3: must have at most 2 items, <nil>: Invalid value: "null": some validation rules were not checked because the object was invalid; correct the existing errors to complete validation]`,
    causes: [
      ['FieldValueTooMany', 'spec.tags'],
      ['FieldValueInvalid', '<nil>'],
    ],
  },
  {
    name: 'list-type map keys',
    write: {
      create: gadget('c14', {
        ports: [
          { name: 'a', port: 1 },
          { name: 'a', port: 2 },
        ],
      }),
    },
    message: `${KIND} "c14" is invalid: spec.ports[1]: Duplicate value: map[string]interface {}{"name":"a"}`,
    causes: [['FieldValueDuplicate', 'spec.ports[1]']],
  },
  {
    name: 'required in a list item, minimum of an int32',
    write: { create: gadget('c15', { ports: [{ port: 0 }] }) },
    message: `${KIND} "c15" is invalid: [spec.ports[0].port: Invalid value: 0: spec.ports[0].port in body should be greater than or equal to 1, spec.ports[0].name: Required value, <nil>: Invalid value: "null": some validation rules were not checked because the object was invalid; correct the existing errors to complete validation]`,
    causes: [
      ['FieldValueInvalid', 'spec.ports[0].port'],
      ['FieldValueRequired', 'spec.ports[0].name'],
      ['FieldValueInvalid', '<nil>'],
    ],
  },
  {
    name: 'int-or-string',
    write: { create: gadget('c16', { size: true }) },
    message: `${KIND} "c16" is invalid: [spec.size: Invalid value: "boolean": spec.size in body must be of type integer,string: "boolean", <nil>: Invalid value: "null": some validation rules were not checked because the object was invalid; correct the existing errors to complete validation]`,
    causes: [
      ['FieldValueTypeInvalid', 'spec.size'],
      ['FieldValueInvalid', '<nil>'],
    ],
  },
  {
    name: 'map: maxProperties and its values',
    write: { create: gadget('c17', { labels: { a: 'x', b: '', c: 'z' } }) },
    message: `${KIND} "c17" is invalid: [spec.labels: Too many: 3: must have at most 2 items, spec.labels.b: Invalid value: "": spec.labels.b in body should be at least 1 chars long, <nil>: Invalid value: "null": some validation rules were not checked because the object was invalid; correct the existing errors to complete validation]`,
    causes: [
      ['FieldValueTooMany', 'spec.labels'],
      ['FieldValueInvalid', 'spec.labels.b'],
      ['FieldValueInvalid', '<nil>'],
    ],
  },
  {
    name: 'CEL rule with message',
    write: { create: gadget('c18', { minReplicas: 3, maxReplicas: 2 }) },
    message: `${KIND} "c18" is invalid: spec: Invalid value: "object": minReplicas must not exceed maxReplicas`,
    causes: [['FieldValueInvalid', 'spec']],
  },
  {
    name: 'CEL messageExpression, fieldPath and reason',
    write: { create: gadget('c19', { tier: 'gold' }) },
    message: `${KIND} "c19" is invalid: spec.support: Required value: tier gold needs support`,
    causes: [['FieldValueRequired', 'spec.support']],
  },
  {
    name: 'CEL rule without message',
    write: { create: gadget('c20', { tags: ['abcdefg'] }) },
    message: `${KIND} "c20" is invalid: spec: Invalid value: "object": failed rule: self.tags.all(t, t.size() <= 5)`,
    causes: [['FieldValueInvalid', 'spec']],
  },
  {
    name: 'CEL transition rule',
    write: { base: gadget('c21', { immutable: 'a' }), mergePatch: { spec: { immutable: 'b' } } },
    message: `${KIND} "c21" is invalid: spec.immutable: Invalid value: "string": immutable`,
    causes: [['FieldValueInvalid', 'spec.immutable']],
  },
  {
    name: 'status subresource',
    write: { base: gadget('c22', {}), status: { phase: 'Gone', count: -1 } },
    message: `${KIND} "c22" is invalid: [status.phase: Unsupported value: "Gone": supported values: "Ready", "Pending", status.count: Invalid value: -1: count in body should be greater than or equal to 0, <nil>: Invalid value: "null": some validation rules were not checked because the object was invalid; correct the existing errors to complete validation]`,
    causes: [
      ['FieldValueNotSupported', 'status.phase'],
      ['FieldValueInvalid', 'status.count'],
      ['FieldValueInvalid', '<nil>'],
    ],
  },
];

export type Requester = (method: string, path: string, body?: unknown, contentType?: string) => Promise<{ status: number; json: any }>;

/** Makes a case's write (creating its base object first) and returns the answer to it. */
export async function writeCase(req: Requester, c: ValidationCase): Promise<{ status: number; json: any }> {
  const w = c.write;
  if ('create' in w) return req('POST', GADGETS, w.create);
  const name = (w.base.metadata as { name: string }).name;
  const created = await req('POST', GADGETS, w.base);
  if (created.status !== 201) throw new Error(`${c.name}: base object not created: ${JSON.stringify(created.json)}`);
  if ('status' in w) return req('PUT', `${GADGETS}/${name}/status`, { ...created.json, status: w.status });
  return req('PATCH', `${GADGETS}/${name}${w.subresource ? `/${w.subresource}` : ''}`, w.mergePatch, 'application/merge-patch+json');
}
