/**
 * Is a controller going round in a loop? Fed the requests a controller makes and how each was
 * answered, in order; says when the last ones are the same round, over and over, while nothing
 * changed in the cluster.
 *
 * A stale view needs this to end early: a controller restarted onto a frozen view often acts on it
 * with writes the API server refuses (a create of what exists, an update with an old
 * resourceVersion), or checks its view with a live read that disagrees, is requeued and does the
 * same again, answered the same way, until the view is released. A failed write changes nothing,
 * a read changes nothing, the frozen view delivers nothing new: a controller that made the same
 * round of such requests RETRY_LOOP_ROUNDS times, while the cluster stayed at one resourceVersion,
 * had the same inputs before each round, and waiting longer shows only more of the same. A round
 * with a successful write, rounds that differ, or a cluster that changes in between are not a
 * loop here; the quiet window and the plan's `releaseAfterSeconds` still end such a view.
 */

/** How many identical rounds make a loop: the first try and two repeats. */
export const RETRY_LOOP_ROUNDS = 3;

/** The longest round looked for, in requests. */
export const RETRY_LOOP_MAX_ROUND = 32;

/** One answered request of the controller. */
export interface AnsweredRequest {
  /** What was asked: verb and object (or path), subresource. */
  signature: string;
  /** The HTTP status the controller got. */
  status: number;
  /** Did it leave the cluster as it was: a read, or a write the API server refused? */
  inert: boolean;
  /** The cluster's latest resourceVersion when the answer came. */
  clusterRevision: number;
}

export class RetryLoopDetector {
  private readonly entries: Array<{ what: string; inert: boolean; revision: number }> = [];
  private found: number | undefined;

  constructor(private readonly rounds = RETRY_LOOP_ROUNDS) {}

  /** One answered request; true once the requests so far end in a loop (then true from there on). */
  add(r: AnsweredRequest): boolean {
    if (this.found !== undefined) return true;
    this.entries.push({ what: `${r.signature} ${r.status}`, inert: r.inert, revision: r.clusterRevision });
    const n = this.entries.length;
    const longest = Math.min(RETRY_LOOP_MAX_ROUND, Math.floor(n / this.rounds));
    for (let p = 1; p <= longest; p++) {
      if (this.isLoop(n, p)) {
        this.found = p;
        return true;
      }
    }
    return false;
  }

  /** The length of the round found, in requests (undefined: none yet). */
  get round(): number | undefined {
    return this.found;
  }

  private isLoop(n: number, p: number): boolean {
    const start = n - p * this.rounds;
    const revision = this.entries[start]!.revision;
    for (let i = start; i < n; i++) {
      const e = this.entries[i]!;
      if (!e.inert || e.revision !== revision) return false;
      if (i >= start + p && e.what !== this.entries[i - p]!.what) return false;
    }
    return true;
  }
}
