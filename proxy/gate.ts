/**
 * A delivery gate: the point every piece of work toward or from the controller passes (forwarding a
 * request upstream, delivering a response, delivering a watch event). While the gate is held, work
 * queues in arrival order; `release()` runs it in that order, `drop()` forgets it. The crash fault
 * holds a whole connection epoch's gate; finer faults (per-key watch holds) can add gates of their own.
 */
export class DeliveryGate {
  private held = false;
  private queue: Array<() => void> = [];

  get isHeld(): boolean {
    return this.held;
  }

  /** Work waiting for the gate to open. */
  get queued(): number {
    return this.queue.length;
  }

  /** Runs `work` now if the gate is open, otherwise once it is released (never, if dropped). */
  pass(work: () => void): void {
    if (!this.held) {
      work();
      return;
    }
    this.queue.push(work);
  }

  hold(): void {
    this.held = true;
  }

  /** Opens the gate and runs the queued work in order; work queued meanwhile keeps its place. */
  release(): void {
    this.held = false;
    while (!this.held && this.queue.length > 0) {
      const work = this.queue.shift()!;
      work();
    }
  }

  /** Forgets the queued work (its connections are gone) and stays in whatever state it was. */
  drop(): void {
    this.queue = [];
  }
}
