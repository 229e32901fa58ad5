/**
 * Is a controller going round in a loop? Fed the requests a controller makes and how each was
 * answered, in order; says when waiting longer would show only more of the same.
 *
 * A stale view needs this to end early: a controller restarted onto a frozen view often acts on it
 * with writes the API server refuses (a create of what exists, an update with an old
 * resourceVersion), or checks its view with a live read that disagrees, is requeued and does the
 * same again, answered the same way, until the view is released. A failed write changes nothing,
 * a read changes nothing, the frozen view delivers nothing new: a controller that made the same
 * round of such requests RETRY_LOOP_ROUNDS times, while the cluster stayed at one resourceVersion,
 * had the same inputs before each round, and waiting longer shows only more of the same.
 *
 * The other loop is churn: the controller creates, from its frozen view, objects whose owner is
 * gone, the garbage collector removes them, and it creates them again (stale-deletion's 111 creates
 * of one Secret in 5 s). A create of a named object that succeeds again, answered the same, means
 * what it made was removed in between; a delete that succeeds again means what it removed was made
 * again. Its reconciles run concurrently, so the rounds interleave and no two need be in the same
 * order: churn is found when, since the last request unlike any before it, every kind of request
 * made (verb, object, answer) has been made RETRY_LOOP_ROUNDS times, at least one of them such a
 * write, and no write succeeded that is not undone that way (an update, a patch, a create with
 * generateName, which makes a new object each time: those start the count again). The cluster's
 * resourceVersion moves during churn, so it is not asked to stay put. Anything else (rounds that
 * differ, a cluster that changes under refused writes) is not a loop here; the quiet window and the
 * plan's `releaseAfterSeconds` still end such a view.
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
  /** A create of a named object or a delete (see churn above); counts only when it succeeded. */
  undoable?: boolean;
  /** The cluster's latest resourceVersion when the answer came. */
  clusterRevision: number;
}

export class RetryLoopDetector {
  private readonly entries: Array<{ what: string; inert: boolean; revision: number }> = [];
  private found: number | undefined;
  private foundChurn = false;
  /** Churn: how often each request (verb, object, answer) was made since the last write that stays. */
  private readonly made = new Map<string, number>();
  /** Churn: the requests made since the last one unlike any before it (that one included). */
  private readonly since = new Set<string>();
  private sinceUndone = false;

  constructor(private readonly rounds = RETRY_LOOP_ROUNDS) {}

  /** One answered request; true once the requests so far end in a loop (then true from there on). */
  add(r: AnsweredRequest): boolean {
    if (this.found !== undefined) return true;
    const what = `${r.signature} ${r.status}`;
    this.entries.push({ what, inert: r.inert, revision: r.clusterRevision });
    if (this.isChurn(what, !r.inert && r.undoable === true, r.inert)) {
      this.found = this.since.size;
      this.foundChurn = true;
      return true;
    }
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

  /** The length of the round found, in requests (for churn, how many kinds of request it has; undefined: none yet). */
  get round(): number | undefined {
    return this.found;
  }

  /** Was the loop found churn (writes each round undoes), not refused writes on a still cluster? */
  get churn(): boolean {
    return this.foundChurn;
  }

  private isChurn(what: string, undone: boolean, inert: boolean): boolean {
    if (!inert && !undone) {
      // A write that stays: the controller moved the cluster on; count from here.
      this.made.clear();
      this.since.clear();
      this.sinceUndone = false;
      return false;
    }
    const times = (this.made.get(what) ?? 0) + 1;
    this.made.set(what, times);
    if (times === 1) {
      this.since.clear();
      this.sinceUndone = false;
    }
    this.since.add(what);
    if (undone) this.sinceUndone = true;
    if (!this.sinceUndone) return false;
    for (const w of this.since) if (this.made.get(w)! < this.rounds) return false;
    return true;
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
