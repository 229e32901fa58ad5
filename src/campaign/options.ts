/** What every stage of a campaign (learn, plan, test; src/campaign/campaign.ts) is given. */
import type { ClusterChoice } from '../coordinator/run.js';

export type Log = (line: string) => void;

export interface CampaignOptions {
  out: string;
  log: Log;
  /** Where every run of the campaign runs; default a fresh embedded cluster per run (see ClusterChoice). */
  cluster?: ClusterChoice;
  /**
   * Stops the stage (SIGINT, SIGTERM: src/cli/signals.ts): no run starts after it aborts, running
   * runs end (src/coordinator/run.ts), and the stage throws InterruptedError saying what finished.
   */
  signal?: AbortSignal;
  /** Warnings (kept by `--quiet`, unlike `log`); default `log`. */
  warn?: Log;
}
