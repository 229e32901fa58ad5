/**
 * The JSON Schema of a TestPlan (`kperturb schema plan`, schemas/testplan.schema.json for editors),
 * made from the plan's parts: the envelope here, the trigger forms (faults/fields.ts) and one branch
 * per fault kind from the registry (faults/index.ts), so that a new fault kind is in the schema by
 * being registered.
 */
import { faultSchema } from './faults/index.js';
import { TRIGGER_DEFINITIONS } from './faults/fields.js';
import type { JsonSchema } from './faults/declare.js';
import { PATTERNS, PLAN_API_VERSION } from './plan.js';

export function planSchema(): JsonSchema {
  return {
    $schema: 'http://json-schema.org/draft-07/schema#',
    title: 'kperturb TestPlan',
    type: 'object',
    properties: {
      apiVersion: { const: PLAN_API_VERSION },
      kind: { const: 'TestPlan' },
      metadata: { type: 'object', properties: { name: { type: 'string' } }, additionalProperties: false, required: ['name'] },
      spec: {
        type: 'object',
        properties: {
          controller: { type: 'string' },
          workload: { type: 'string' },
          pattern: { enum: [...PATTERNS] },
          description: { type: 'string' },
          faults: { type: 'array', items: { $ref: '#/definitions/fault' }, minItems: 1 },
        },
        additionalProperties: false,
        required: ['controller', 'workload', 'pattern', 'description', 'faults'],
      },
    },
    additionalProperties: false,
    required: ['apiVersion', 'kind', 'metadata', 'spec'],
    description: 'A kperturb TestPlan: one perturbation of one workload (kperturb plan writes them)',
    definitions: { ...TRIGGER_DEFINITIONS, fault: faultSchema() },
  };
}
