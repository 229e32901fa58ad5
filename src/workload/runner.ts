/**
 * Runs a workload's steps against the cluster, as the user (not through the proxy): apply manifests,
 * patch, delete, wait for conditions, sleep, assert or refute objects (expectations.ts), run commands
 * (process-step.ts). Each step is recorded in the controller trace so that a
 * run's timeline shows what the user did between what the controller saw.
 */
import { readFileSync } from 'node:fs';
import { parseAllDocuments } from 'yaml';
import { describeStep, type InlineResource, type WaitCondition, type Workload, type WorkloadStep } from '../config/config.js';
import { namedObjectKeys, waitForExpectation } from './expectations.js';
import { ProcessStepError, runProcessStep } from './process-step.js';
import { getField } from '../model/fields.js';
import { MAX_ALIAS_COUNT, cut } from '../model/validate.js';
import { keyOf, type KubeObject, type ObjectKey } from '../model/object-key.js';
import type { TraceSink, WorkloadStepAction, WorkloadStepEvent } from '../model/trace.js';
import { KubeApiError, type KubeClient } from '../kube/client.js';

export interface WorkloadOutcome {
  ok: boolean;
  failedStep?: number;
  error?: string;
}

export interface WorkloadHooks {
  /** Called before each step; the coordinator uses it to know which step a fault fired in. */
  onStep?: (index: number) => void;
  /** Aborts the run early (e.g. setup failure); checked between polls. */
  cancelled?: () => boolean;
  /**
   * A `settle` step: resolves true once the controller has been quiet for the run's quiet window,
   * false if it was not within `timeoutMs`. Only a run with a controller (the coordinator) has one.
   */
  settle?: (timeoutMs: number) => Promise<boolean>;
  /** The index of the first step in the trace (default 0): steps run after the workload's are numbered after them. */
  firstIndex?: number;
}

export async function runWorkload(client: KubeClient, workload: Workload, trace: TraceSink, hooks: WorkloadHooks = {}): Promise<WorkloadOutcome> {
  for (const [i, step] of workload.steps.entries()) {
    const index = i + (hooks.firstIndex ?? 0);
    const description = describeStep(step);
    hooks.onStep?.(index);
    trace.append({ type: 'workload-step', index, description, phase: 'start', ...(await stepTarget(client, step)) });
    try {
      const outcome = await runStep(client, step, hooks);
      trace.append({ type: 'workload-step', index, description, phase: 'done', ...outcome });
    } catch (err) {
      const error = (err as Error).message;
      const output = err instanceof ProcessStepError ? { output: err.output } : {};
      trace.append({ type: 'workload-step', index, description, phase: 'failed', error, ...output });
      return { ok: false, failedStep: index, error: `step ${index + 1} (${description}): ${error}` };
    }
  }
  return { ok: true };
}

/**
 * What a step does and to which objects, for the trace: the planner tells the workload's writes from
 * the cluster's and sees which waits they came after. An unreadable manifest names no keys here (the
 * step itself reports the error). Asserts and errors only read: they are waits. A command or script
 * may write anything (kubectl apply), so it counts as a write whose objects are unknown.
 */
async function stepTarget(client: KubeClient, step: WorkloadStep): Promise<{ action: WorkloadStepAction; keys?: ObjectKey[] }> {
  if ('apply' in step) {
    try {
      return { action: 'write', keys: await namedObjectKeys(client, manifestsOf(step.apply)) };
    } catch {
      return { action: 'write' };
    }
  }
  if ('patch' in step) return { action: 'write', keys: [step.patch.key] };
  if ('delete' in step) return { action: 'write', keys: [step.delete.key] };
  if ('sleep' in step) return { action: 'sleep' };
  if ('settle' in step) return { action: 'wait' };
  if ('command' in step || 'script' in step) return { action: 'write' };
  if ('assert' in step || 'error' in step) {
    try {
      return { action: 'wait', keys: await namedObjectKeys(client, ('assert' in step ? step.assert : step.error).objects) };
    } catch {
      return { action: 'wait' };
    }
  }
  return { action: 'wait', keys: [step.waitFor.key] };
}

/** The objects an apply step applies: its manifest file's, or its inline resource. */
export function manifestsOf(apply: string | InlineResource): KubeObject[] {
  return typeof apply === 'string' ? readManifests(apply) : [apply.resource];
}

export function readManifests(file: string): KubeObject[] {
  const docs = parseAllDocuments(readFileSync(file, 'utf8'));
  const objects: KubeObject[] = [];
  for (const [i, doc] of docs.entries()) {
    if (doc.errors.length > 0) throw new Error(`${file}: invalid YAML: ${cut(doc.errors[0]!.message.split('\n')[0]!)}`);
    let obj: KubeObject | null;
    try {
      obj = doc.toJS({ maxAliasCount: MAX_ALIAS_COUNT }) as KubeObject | null;
    } catch (err) {
      throw new Error(`${file}: document ${i + 1}: ${cut((err as Error).message)}`, { cause: err });
    }
    if (obj) objects.push(obj);
  }
  return objects;
}

/** What the trace records of a finished step (see WorkloadStepEvent). */
type StepOutcome = Pick<WorkloadStepEvent, 'wrote' | 'polls' | 'metAt' | 'timedOut' | 'output' | 'rejected' | 'error'>;

async function runStep(client: KubeClient, step: WorkloadStep, hooks: WorkloadHooks): Promise<StepOutcome> {
  if ('apply' in step) {
    const wrote: NonNullable<StepOutcome['wrote']> = [];
    for (const obj of manifestsOf(step.apply)) wrote.push(...answered(await client.apply(obj)));
    return { wrote };
  } else if ('patch' in step) {
    try {
      return { wrote: answered(await client.patch(step.patch.key, step.patch.type, step.patch.patch, step.patch.subresource)) };
    } catch (err) {
      // A refused input is an outcome of the step, not a broken workload; the object stays as it was.
      if (step.patch.onError === 'continue' && err instanceof KubeApiError && err.status >= 400 && err.status < 500)
        return { rejected: err.status, error: err.message };
      throw err;
    }
  } else if ('settle' in step) {
    if (!hooks.settle) throw new Error('a settle step needs a controller to wait for (only runs the coordinator starts have one)');
    return (await hooks.settle(step.settle.timeoutSeconds * 1000)) ? {} : { timedOut: true };
  } else if ('delete' in step) {
    const existed = await client.delete(step.delete.key, step.delete.propagationPolicy);
    if (!existed) throw new Error(`${step.delete.key} does not exist`);
    return {};
  } else if ('sleep' in step) {
    await sleep(step.sleep * 1000);
    return {};
  } else if ('assert' in step) {
    return waitForExpectation(client, step.assert, 'assert', hooks.cancelled);
  } else if ('error' in step) {
    return waitForExpectation(client, step.error, 'error', hooks.cancelled);
  } else if ('command' in step || 'script' in step) {
    return runProcessStep('command' in step ? step.command : step.script, client.kubeconfig());
  } else {
    return waitFor(client, step.waitFor, hooks);
  }
}

function answered(obj: KubeObject): NonNullable<StepOutcome['wrote']> {
  const key = keyOf(obj);
  const resourceVersion = obj.metadata?.resourceVersion;
  return key && resourceVersion ? [{ key, resourceVersion }] : [];
}

const POLL_MS = 100;

async function waitFor(client: KubeClient, cond: WaitCondition, hooks: WorkloadHooks): Promise<StepOutcome> {
  const deadline = Date.now() + cond.timeoutSeconds * 1000;
  let last: string;
  for (let polls = 1; ; polls++) {
    const obj = await client.get(cond.key);
    const met = () => ({ polls, ...(obj?.metadata?.resourceVersion ? { metAt: obj.metadata.resourceVersion } : {}) });
    if (cond.absent) {
      if (!obj) return { polls };
      last = 'it still exists';
    } else if (!obj) {
      last = 'it does not exist';
    } else if (cond.field === undefined) {
      return met();
    } else {
      const value = getField(obj, cond.field);
      if (deepEqual(value, cond.equals)) return met();
      last = `${cond.field} is ${JSON.stringify(value)}`;
    }
    if (Date.now() >= deadline) {
      if (cond.onTimeout === 'continue') return { polls, timedOut: true };
      throw new Error(`timed out after ${cond.timeoutSeconds}s waiting for ${cond.key}: ${last}`);
    }
    if (hooks.cancelled?.()) throw new Error('cancelled');
    await sleep(POLL_MS);
  }
}

function deepEqual(a: unknown, b: unknown): boolean {
  return JSON.stringify(a) === JSON.stringify(b) || (typeof a !== 'object' && String(a) === String(b) && typeof b !== 'object');
}

export function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}
