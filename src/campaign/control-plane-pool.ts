/**
 * On the real tier, the runs of a campaign stage take their control planes from a pool that starts
 * the next one while a run uses the current one (src/realcluster/pool.ts): every run still gets a
 * control plane nothing touched before. `cluster.pool: false` opts out; the pool is closed (its
 * unused control plane stopped) when the stage ends, however it ends.
 */
import type { ClusterChoice } from '../coordinator/run.js';
import { ControlPlanePool } from '../realcluster/index.js';

export async function withControlPlanePool<T>(
  cluster: ClusterChoice | undefined,
  runs: number,
  stage: (choice: { cluster?: ClusterChoice }) => Promise<T>,
): Promise<T> {
  if (cluster?.kind !== 'real' || cluster.pool !== undefined || runs < 2) return stage(cluster ? { cluster } : {});
  const pool = new ControlPlanePool(cluster.binaries ? { binaries: cluster.binaries } : {}, runs);
  try {
    return await stage({ cluster: { ...cluster, pool } });
  } finally {
    await pool.close();
  }
}
