/**
 * What the controller trace says about a run beyond the end state: the API errors the controller
 * got, and the writes it kept making after the workload ended. Summarised once per run (by
 * oracles/controller-activity.ts) so that the health and liveness oracles compare small summaries
 * rather than whole traces.
 */
import type { ObjectKey } from './object-key.js';

/** Error answers with the same status, verb and resource, counted. */
export interface ApiErrorCount {
  status: number;
  /** The Status reason (`Forbidden`, `Invalid`...) when the answer carried one. */
  reason?: string;
  verb: string;
  /** `Kind` or `resource`, with `/subresource` when the request went to one. */
  resource: string;
  count: number;
  /** The first such request: its object (when named) and the API server's message. */
  example: { key?: ObjectKey; message?: string; seq: number };
}

/** Successful (2xx) write requests (create, update, patch, delete) to one object and subresource. */
export interface WriteCount {
  key: ObjectKey;
  subresource?: string;
  count: number;
}

/** Failed (4xx/5xx) write requests to one object and subresource, by the status they got. */
export interface FailedWriteCount extends WriteCount {
  status: number;
}

export interface ControllerActivity {
  apiErrors: ApiErrorCount[];
  /** Writes after the workload's last step and the last fault event; absent when the trace records no workload steps. */
  writesAfterWorkload?: WriteCount[];
  /**
   * Failed writes after the same point (answers an api-error fault made left out): a controller that
   * retries a write that cannot succeed without backing off. Absent like writesAfterWorkload.
   */
  failedWritesAfterWorkload?: FailedWriteCount[];
  /**
   * Every successful write of the whole run (no dry runs, Leases and Events aside), in request order:
   * what tells the controller's own changes of the cluster from the garbage collector's, the
   * simulated kubelet's or the workload's (oracles/findings.ts). Absent in summaries made before it
   * was recorded.
   */
  ownWrites?: OwnWrite[];
}

/** A successful write request of the controller. */
export interface OwnWrite {
  verb: 'create' | 'update' | 'patch' | 'delete';
  /** The object (a create's from its answer when the request did not name it); absent when neither named it. */
  key?: ObjectKey;
  /** The kind and namespace the request went to (`Kind/namespace/`), for a create whose object nothing named. */
  within?: string;
  /** The resourceVersion its answer carried, when the answer was an object the proxy could read. */
  resourceVersion?: string;
  /** The request's seq. */
  seq: number;
}
