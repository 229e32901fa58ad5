/**
 * At most `slots` tasks at a time, started in the order they asked (a higher `priority` first).
 * Shared by several test() calls (the demo tests all its examples under one limit), so the limit is
 * on the whole machine's load.
 */
export class Limiter {
  private active = 0;
  private readonly waiting: Array<{ start: () => void; priority: number }> = [];

  constructor(readonly slots: number) {
    if (!Number.isInteger(slots) || slots < 1) throw new RangeError(`a limiter needs at least one slot, got ${slots}`);
  }

  async run<T>(task: () => Promise<T>, priority = 0): Promise<T> {
    if (this.active >= this.slots) {
      await new Promise<void>((resolve) => {
        // After every waiter of the same or a higher priority: FIFO within a priority.
        const at = this.waiting.findIndex((w) => w.priority < priority);
        this.waiting.splice(at < 0 ? this.waiting.length : at, 0, { start: resolve, priority });
      });
    } else {
      this.active++;
    }
    try {
      return await task();
    } finally {
      // Hand the slot straight to the next waiter (active stays the same), or free it.
      const next = this.waiting.shift();
      if (next) next.start();
      else this.active--;
    }
  }
}

/**
 * Plans the demo runs at once by default. A plan mostly waits (for the controller to settle, for a
 * stale view's release), so on 2 cores 3 at once cut the demo's test time by about half without
 * changing a verdict (measured: see docs/cli.md, `kperturb demo`).
 */
export const DEMO_PARALLEL = 3;
