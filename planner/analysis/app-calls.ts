/**
 * The controller's calls to its stub applications (the cluster trace's `app-call` events), in
 * order, each with how a call trigger counts it: its rank among the calls with the same
 * application, key, operation and path, and among all calls to the key (what `until` the next call
 * counts). The managed-system rule places its faults on these calls.
 */
import type { ObjectKey } from '../../src/model/object-key.js';
import type { AppCallEvent } from '../../src/model/trace.js';

export interface AppCallRecord {
  seq: number;
  application: string;
  protocol: AppCallEvent['protocol'];
  key: ObjectKey;
  operation: string;
  /** The path without the query (what a call trigger matches). */
  path?: string;
  result: string | number;
  /** 1-based rank among the calls with this application, key, operation and path. */
  occurrence: number;
  /** 1-based rank among all calls of this application to this key. */
  occurrenceOfKey: number;
}

export class AppCallLog {
  readonly calls: AppCallRecord[] = [];
  private readonly counts = new Map<string, number>();

  record(e: AppCallEvent): void {
    const path = e.path?.split('?')[0];
    const count = (id: string) => {
      const n = (this.counts.get(id) ?? 0) + 1;
      this.counts.set(id, n);
      return n;
    };
    const ofKey = JSON.stringify([e.application, e.key]);
    this.calls.push({
      seq: e.seq,
      application: e.application,
      protocol: e.protocol,
      key: e.key,
      operation: e.operation,
      ...(path !== undefined ? { path } : {}),
      result: e.result,
      occurrence: count(JSON.stringify([e.application, e.key, e.operation, path])),
      occurrenceOfKey: count(ofKey),
    });
  }
}
