/**
 * What every fault module needs from the proxy: a way to record its fault events in the controller
 * trace and a diagnostics log. Kept this small so that a fault module cannot reach into the relay.
 */
import type { FaultEvent, Unstamped } from '../../src/model/trace.js';

export interface FaultContext {
  /** Appends a fault event to the controller trace; returns its seq. */
  record(event: Omit<Unstamped<FaultEvent>, 'type'>): number;
  log(line: string): void;
}

/** `{ faultIndex }` when there is one: the trace's fault events carry it only then. */
export function faultIndexField(faultIndex: number | undefined): { faultIndex?: number } {
  return faultIndex !== undefined ? { faultIndex } : {};
}
