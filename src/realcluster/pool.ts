/**
 * A pool of one fresh real control plane, started ahead: while a plan runs on its control plane,
 * the next plan's starts, so a campaign on the real tier pays the ~3 s start of etcd +
 * kube-apiserver + kube-controller-manager once instead of once per plan.
 *
 *   const pool = new ControlPlanePool({}, plans.length);
 *   for (const plan of plans) {
 *     const cp = await pool.take();      // never used before; the next one starts now
 *     ...
 *     await cp.stop({ keepLogsIn });     // killed and deleted, as without the pool
 *   }
 *   await pool.close();                  // stops the one prepared and not taken, if any
 *
 * Isolation stays exact: every control plane the pool hands out is a separate startRealControlPlane()
 * (new data directory, CA, token and ports) that nothing touched before; the pool hands each out once
 * and never takes one back. Its logs live in its working directory until the taker's stop() copies
 * them where they belong (the run directory is not known when it starts).
 */
import { startRealControlPlane, type RealControlPlane, type RealControlPlaneOptions } from './control-plane.js';

export class ControlPlanePool {
  private prepared: Promise<RealControlPlane> | undefined;
  private remaining: number;
  private closed = false;

  /**
   * `options`: as for startRealControlPlane(), for every control plane of the pool (`logDir` is
   * ignored: see stop's keepLogsIn). `takes`: how many take() calls are expected; the pool prepares
   * none beyond the last, which would only compete for CPU with the last plan and be thrown away.
   */
  constructor(
    private readonly options: RealControlPlaneOptions = {},
    takes = Number.POSITIVE_INFINITY,
  ) {
    this.remaining = takes;
  }

  /**
   * A control plane no one has used: the prepared one (waiting for it to be ready if it is still
   * starting), else a new start. Once it is ready, the next one starts, if more takes are expected.
   * A failed start rejects here, as startRealControlPlane() would.
   */
  take(): Promise<RealControlPlane> {
    if (this.closed) return Promise.reject(new Error('ControlPlanePool.take() after close()'));
    const taken = this.prepared ?? this.start();
    this.prepared = undefined;
    this.remaining--;
    // Not before it is ready: two starts at once on a small machine delay the one a plan waits for.
    if (this.remaining > 0) {
      void taken.then(
        () => this.prepareNext(),
        () => this.prepareNext(),
      );
    }
    return taken;
  }

  /** Stops the prepared control plane nobody took (waiting for its start to end). Idempotent; take() rejects afterwards. */
  async close(): Promise<void> {
    this.closed = true;
    const prepared = this.prepared;
    this.prepared = undefined;
    const cp = await prepared?.catch(() => undefined);
    await cp?.stop();
  }

  private prepareNext(): void {
    if (this.closed || this.prepared) return;
    const next = this.start();
    // A failure is reported to whoever takes it; until then it is not an unhandled rejection.
    next.catch(() => undefined);
    this.prepared = next;
  }

  private start(): Promise<RealControlPlane> {
    const { logDir: _ignored, ...options } = this.options;
    return startRealControlPlane(options);
  }
}
