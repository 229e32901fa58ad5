/**
 * Reading test plans: the plan file's YAML, checked field by field (each fault by its kind's
 * declaration, src/model/faults/), so that a bad plan names its file and the path inside it.
 * What a plan is lives in the core (src/model/plan.ts); this is the part that reads files.
 */
import { PATTERNS, PLAN_API_VERSION, readFault, type TestPlan } from '../model/plan.js';
import { Validator, join, quote } from '../model/validate.js';
import { allowedKeys } from './schemas.js';
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
  const faults = faultsRaw.map((f, i) => readFault(v, f, join('spec.faults', i)));
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
