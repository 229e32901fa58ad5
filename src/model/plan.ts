/**
 * Test plans: self-contained, versioned YAML files, one perturbation of one workload each.
 *
 *   apiVersion: kperturb.dev/v1
 *   kind: TestPlan
 *   metadata: { name: intermediate-0003 }
 *   spec:
 *     controller: secret-marker-buggy
 *     workload: create-and-scale
 *     pattern: intermediate-state
 *     description: restart the controller right after it patches Database/default/db1 status (1st time)
 *     faults:
 *       - type: crash-after-write
 *         after: { verb: patch, key: Database/default/db1, subresource: status, occurrence: 1 }
 */
import { stringify } from 'yaml';
import { Validator, readYamlFile, join } from './validate.js';
import { parseKey, type ObjectKey } from './object-key.js';

export const PLAN_API_VERSION = 'kperturb.dev/v1';
export const PATTERNS = ['intermediate-state', 'stale-state', 'unobserved-state'] as const;
export type Pattern = (typeof PATTERNS)[number];
export const TRIGGER_WRITE_VERBS = ['create', 'update', 'patch', 'delete'] as const;
export type TriggerWriteVerb = (typeof TRIGGER_WRITE_VERBS)[number];

/** Identifies one successful controller write so that it matches the same moment in a new run. */
export interface WriteTrigger {
  verb: TriggerWriteVerb;
  key: ObjectKey;
  /** `status`, `scale`... when the write went to a subresource. */
  subresource?: string;
  /** Fires on the n-th successful write with this verb, key and subresource by the controller (1-based). */
  occurrence: number;
}

export interface CrashAfterWriteFault {
  type: 'crash-after-write';
  after: WriteTrigger;
}

export type Fault = CrashAfterWriteFault;

export interface TestPlan {
  apiVersion: typeof PLAN_API_VERSION;
  kind: 'TestPlan';
  metadata: { name: string };
  spec: {
    controller: string;
    workload: string;
    pattern: Pattern;
    description: string;
    faults: Fault[];
  };
}

export function ordinal(n: number): string {
  const s = n % 100 >= 11 && n % 100 <= 13 ? 'th' : ({ 1: 'st', 2: 'nd', 3: 'rd' } as Record<number, string>)[n % 10] ?? 'th';
  return `${n}${s}`;
}

const VERB_PAST: Record<TriggerWriteVerb, string> = { create: 'creates', update: 'updates', patch: 'patches', delete: 'deletes' };

export function describeWrite(t: WriteTrigger): string {
  const sub = t.subresource ? ` ${t.subresource}` : '';
  return `${VERB_PAST[t.verb]} ${t.key}${sub} (${ordinal(t.occurrence)} time)`;
}

export function serializePlan(plan: TestPlan): string {
  return stringify(plan, { lineWidth: 0, sortMapEntries: false });
}

export function loadPlanFile(file: string): TestPlan {
  return validatePlan(readYamlFile(file), file);
}

export function validatePlan(doc: unknown, file: string): TestPlan {
  const v = new Validator(file);
  const top = v.object(doc, '');
  v.onlyKeys(top, '', ['apiVersion', 'kind', 'metadata', 'spec']);
  if (top.apiVersion !== PLAN_API_VERSION) v.fail('apiVersion', `"${PLAN_API_VERSION}" (got ${JSON.stringify(top.apiVersion)})`);
  if (top.kind !== 'TestPlan') v.fail('kind', `"TestPlan" (got ${JSON.stringify(top.kind)})`);
  const metadata = v.object(top.metadata, 'metadata');
  const name = v.string(metadata.name, 'metadata.name');
  const spec = v.object(top.spec, 'spec');
  v.onlyKeys(spec, 'spec', ['controller', 'workload', 'pattern', 'description', 'faults']);
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

function validateFault(v: Validator, raw: unknown, path: string): Fault {
  const f = v.object(raw, path);
  const type = v.oneOf(f.type, join(path, 'type'), ['crash-after-write'] as const);
  v.onlyKeys(f, path, ['type', 'after']);
  const afterPath = join(path, 'after');
  const after = v.object(f.after, afterPath);
  v.onlyKeys(after, afterPath, ['verb', 'key', 'subresource', 'occurrence']);
  const key = v.string(after.key, join(afterPath, 'key'));
  if (!parseKey(key)) v.fail(join(afterPath, 'key'), `an object key Kind/namespace/name or Kind/name (got ${JSON.stringify(key)})`);
  const trigger: WriteTrigger = {
    verb: v.oneOf(after.verb, join(afterPath, 'verb'), TRIGGER_WRITE_VERBS),
    key,
    occurrence: v.number(after.occurrence, join(afterPath, 'occurrence'), { min: 1, integer: true }),
  };
  const sub = v.optionalString(after.subresource, join(afterPath, 'subresource'));
  if (sub !== undefined) trigger.subresource = sub;
  return { type, after: trigger };
}
