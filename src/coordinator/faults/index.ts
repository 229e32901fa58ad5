/**
 * The run's side of each fault kind: how it is armed on the proxy's primitives, one module per kind
 * in this folder, keyed by the kinds of the core's registry (src/model/faults/); the compiler
 * refuses a registered kind without its arming here.
 */
import type { Fault, FaultType } from '../../model/plan.js';
import { armApiError } from './api-error.js';
import type { ArmedFault, ArmFault, FaultRun } from './arming.js';
import { armCrashAfterWrite } from './crash-after-write.js';
import { armHoldUntil } from './hold-until.js';
import { armStaleRestart } from './stale-restart.js';
import { armWatchEnd } from './watch-end.js';
import { armAppUnavailable } from './app-unavailable.js';
import { armNodeNotReady } from './node-not-ready.js';
import { armPodCrash } from './pod-crash.js';
import { armPodEvict } from './pod-evict.js';
import { armPvcFault } from './pvc-fault.js';

const ARMING: { [T in FaultType]: ArmFault<Extract<Fault, { type: T }>> } = {
  'crash-after-write': armCrashAfterWrite,
  'stale-restart': armStaleRestart,
  'hold-until': armHoldUntil,
  'api-error': armApiError,
  'watch-end': armWatchEnd,
  'pod-crash': armPodCrash,
  'app-unavailable': armAppUnavailable,
  'node-not-ready': armNodeNotReady,
  'pod-evict': armPodEvict,
  'pvc-fault': armPvcFault,
};

export function armFault(fault: Fault, run: FaultRun): ArmedFault {
  return (ARMING[fault.type] as ArmFault<Fault>)(fault, run);
}

export type { ArmedFault, ArmFault, FaultRun, ManagedSystem } from './arming.js';
