/**
 * The registry of fault kinds: one module per kind in this folder (its fields, description and
 * expected cost, see declare.ts), listed here once. Plan validation, the TestPlan JSON Schema
 * (`kperturb schema plan`), sharding weights and the run's arming (src/coordinator/faults/, keyed
 * by these types) all go through it; nothing else switches on a fault's type.
 */
import { join, type Validator } from '../validate.js';
import { apiError } from './api-error.js';
import { appUnavailable } from './app-unavailable.js';
import { crashAfterWrite } from './crash-after-write.js';
import type { FaultKind, FaultOf, JsonSchema } from './declare.js';
import { holdUntil } from './hold-until.js';
import { nodeNotReady } from './node-not-ready.js';
import { podCrash } from './pod-crash.js';
import { podEvict } from './pod-evict.js';
import { pvcFault } from './pvc-fault.js';
import { staleRestart } from './stale-restart.js';
import { watchEnd } from './watch-end.js';

/** Every fault kind, in the order the schema and error messages list them. */
export const FAULT_KINDS = [crashAfterWrite, staleRestart, holdUntil, apiError, watchEnd, podCrash, appUnavailable, nodeNotReady, podEvict, pvcFault] as const;

export type Fault = FaultOf<(typeof FAULT_KINDS)[number]>;
export type FaultType = Fault['type'];
export const FAULT_TYPES: readonly FaultType[] = FAULT_KINDS.map((k) => k.type);

/** The kind of `fault` (the one place a fault meets its kind without knowing which). */
export function kindOf<F extends Fault>(fault: F): FaultKind<F> {
  return FAULT_KINDS.find((k) => k.type === fault.type) as unknown as FaultKind<F>;
}

/** Reads one fault of a plan at `path`. */
export function readFault(v: Validator, raw: unknown, path: string): Fault {
  const f = v.object(raw, path);
  const type = v.oneOf(f.type, join(path, 'type'), FAULT_TYPES);
  return (FAULT_KINDS.find((k) => k.type === type) as FaultKind<Fault>).read(v, f, path);
}

/** The TestPlan schema's `definitions/fault`: one branch per kind. */
export function faultSchema(): JsonSchema {
  return { description: 'One fault: its type says which', oneOf: FAULT_KINDS.map((k) => k.schema) };
}

export const describeFault = (fault: Fault): string => kindOf(fault).describe(fault);

/** What a fault adds to its workload's run, in ms. */
export const faultExtraMs = (fault: Fault): number => kindOf(fault).extraMs(fault);

/** Does the fault restart the controller? */
export const faultRestarts = (fault: Fault): boolean => kindOf(fault).restarts;

/** What of the simulated managed system the fault acts through; undefined for a fault of the proxy. */
export const faultSimulated = (fault: Fault): string | undefined => kindOf(fault).simulated;

/** Does the fault act on the managed system, leaving the controller's view of the cluster true? */
export const faultOnManagedSystem = (fault: Fault): boolean => kindOf(fault).onManagedSystem;

export { type FaultKind } from './declare.js';
export { apiError, describeApiError, API_ERROR_ANSWERS, SLOW_SECONDS_DEFAULT, SLOW_SECONDS_MAX, type ApiErrorAnswer, type ApiErrorFault } from './api-error.js';
export { crashAfterWrite, type CrashAfterWriteFault } from './crash-after-write.js';
export { holdUntil, type HoldUntilFault } from './hold-until.js';
export { staleRestart, staleViewMoment, describeStaleView, type StaleRestartFault, type StaleViewMoment } from './stale-restart.js';
export { watchEnd, describeWatchEnd, WATCH_END_MODES, type WatchEndFault, type WatchEndMode } from './watch-end.js';
export { podCrash, POD_CRASH_MODES, type PodCrashFault, type PodCrashMode } from './pod-crash.js';
export { appUnavailable, APP_UNAVAILABLE_ANSWERS, APP_ERROR_STATUS, type AppUnavailableAnswer, type AppUnavailableFault } from './app-unavailable.js';
export { nodeNotReady, NODE_OUTAGE_MODES, type NodeNotReadyFault, type NodeOutageMode } from './node-not-ready.js';
export { podEvict, POD_EVICT_WAYS, type PodEvictFault, type PodEvictWay } from './pod-evict.js';
export { pvcFault, PVC_FAULT_MODES, type PvcFault, type PvcFaultMode } from './pvc-fault.js';
export { describeWindowEnd, WINDOW_SECONDS_MAX } from './window.js';
