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
 *
 * What a plan is (this file, pure; each fault kind is a module of ./faults/, its triggers are
 * ./trigger.ts) and reading one from its file (src/io/plan-file.ts: YAML, validation through the
 * fault registry) are apart so that the planner and the oracles need no file system.
 */
import { stringify } from 'yaml';
import type { Fault } from './faults/index.js';

export * from './trigger.js';
export * from './faults/index.js';

export const PLAN_API_VERSION = 'kperturb.dev/v1';
export const PATTERNS = ['intermediate-state', 'stale-state', 'unobserved-state', 'error-path', 'managed-system'] as const;
export type Pattern = (typeof PATTERNS)[number];

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

export function serializePlan(plan: TestPlan): string {
  return stringify(plan, { lineWidth: 0, sortMapEntries: false });
}
