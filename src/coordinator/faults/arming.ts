/**
 * What a fault module of the run (one file per fault kind in this folder) gets to arm its fault
 * with, and what it gives back. The module combines the proxy's primitives (proxy/faults/
 * primitives.ts) and the run's services (restarting the controller, waiting for quiet); the run
 * (../faults.ts, PlanFaults) keeps the books: which faults took effect, why the others did not.
 */
import type { FaultPrimitives } from '../../../proxy/index.js';
import { faultSimulated, type Fault } from '../../model/plan.js';
import type { TraceSink } from '../../model/trace.js';
import type { ContainerFaults } from '../../cluster/sim/index.js';
import type { ApplicationStubs } from '../../stubs/applications.js';

/** The managed system a fault may break (pod-crash, app-unavailable, node-not-ready, pod-evict, pvc-fault), and where its faults are recorded. */
export interface ManagedSystem {
  /** The simulation's faults (kubelets' containers, nodes, pods, claims); undefined on a cluster without a simulation (a kubeconfig's cluster). */
  readonly containers: ContainerFaults | undefined;
  /** The stub applications; undefined when kperturb.yaml has none. */
  readonly applications: Pick<ApplicationStubs, 'setUnavailable'> | undefined;
  /** The cluster trace: a fault of the managed system is recorded there, beside what it changed. */
  readonly clusterTrace: Pick<TraceSink, 'append'>;
}

export interface FaultRun {
  readonly primitives: FaultPrimitives;
  readonly trace: TraceSink;
  /** The fault's index in its plan (trace events carry it). */
  readonly index: number;
  log(line: string): void;
  /** The fault changed what the controller sees: it took effect (the run is told too). */
  fired(): void;
  /** The fault's trigger matched but it could not act: why (kept, and recorded as a not-injected event). */
  refuse(detail: string): void;
  /**
   * Kill the controller (the proxy holds it already), release its Leases, start a new epoch and
   * restart it. `beforeStart` may set up the restarted controller's view and return what to await
   * once it runs. The run waits for the restart before it settles.
   */
  restart(requestId: number | undefined, beforeStart?: () => Promise<() => Promise<void>>): void;
  readonly managed: ManagedSystem;
  /** The run does not settle before `done` resolves (a fault that heals by the clock). */
  settleAfter(done: Promise<void>): void;
  /** Runs `release` at the end of the run if the fault has not released what it holds by then. */
  releaseAtEnd(release: () => void): void;
  /**
   * Waits until the controller has been quiet for `quietMs` (see PlanFaults), `retrying` resolves
   * or `boundMs` has passed, and says which came first.
   */
  quietWithin(boundMs: number, retrying: Promise<unknown>): Promise<'quiet' | 'retrying' | 'timeout'>;
  /** The quiet window that says a run has settled (0: none). */
  readonly quietMs: number;
  /** The workload step running now, described (undefined: the workload has ended). */
  workloadAt(): string | undefined;
}

/** An armed fault, as the run asks it at the end. */
export interface ArmedFault {
  /** Did it take effect? Default: it called `fired()`. */
  injected?(): boolean;
  /** Until it took effect: why not, from what its trigger came closest to. */
  whyNotFired(): string | undefined;
  /** The fault described, when saying why it did not take effect. Default: its kind's description. */
  describe?(): string;
  /** It recorded its own not-injected event already. */
  recordedItself?(): boolean;
}

/** Why a fault of the simulated managed system cannot act on a cluster without kperturb's simulation (a kubeconfig's). */
export function withoutSimulation(fault: Fault, subject: string, cannot: string): string {
  return `${subject} cannot ${cannot}: this cluster has no simulation of ${faultSimulated(fault) ?? 'the managed system'} (${fault.type} needs the embedded cluster or --real; a --kubeconfig cluster's kubelets, nodes and volumes are not kperturb's)`;
}

/**
 * Why a fault on an object with a generated name (a plan names it `Kind/namespace/<prefix>*#<n>`,
 * src/model/generated-names.ts) cannot start: this run has not created that object yet.
 */
export function notCreatedYet(subject: string): string {
  return `${subject} does not exist when the fault starts: this run has not created that object yet`;
}

/** Arms one fault of a kind. */
export type ArmFault<F extends Fault> = (fault: F, run: FaultRun) => ArmedFault;
