/**
 * Where a campaign's files live, under one output directory (default `.kperturb`):
 *   <out>/<controller>/learn/<workload>/ref-<n>/   reference runs
 *   <out>/<controller>/learn/<workload>/normal-<n>/ normal-delivery runs (`learn --serialize` only: plans are
 *                                                  tested with normal delivery, their triggers must fire there)
 *   <out>/<controller>/plans/<workload>/*.yaml     test plans (+ pruning.json)
 *   <out>/<controller>/test/<workload>/<plan>/     test runs (+ verdict.json)
 *   <out>/<controller>/confirm/<workload>/         unperturbed confirmation run (test --confirm, and findings' confirmation)
 *   <out>/<controller>/reruns/<workload>/<plan>/<n>/ re-run n of a finding's shortest reproducer (test --confirm-runs)
 *   <out>/<controller>/recovery/<workload>/<plan>/ the run recovery was tried on (test --recovery); rollback-reference/
 *                                                  the fault-free run rolled back the same way
 *   <out>/<controller>/results.json                every plan's result
 *   <out>/<controller>/kperturb.lock               held while a learn, plan or test runs (campaign-lock.ts)
 * A directory being replaced is filled under a hidden sibling name first (src/io/atomic-files.ts).
 *   <out>/secret-hash.key                          the key of the Secret-value hashes (0600; see
 *                                                  model/secret-hash.ts), one for every controller in <out>
 */
import { join } from 'node:path';
import { RESULTS_FILE } from '../io/run-files.js';

export class CampaignLayout {
  constructor(
    readonly out: string,
    readonly controller: string,
  ) {}
  get root(): string {
    return join(this.out, this.controller);
  }
  /** Where every workload's reference runs are. */
  get learnRoot(): string {
    return join(this.root, 'learn');
  }
  learnDir(workload: string): string {
    return join(this.learnRoot, workload);
  }
  /** `learnDir`: where the workload's reference runs are (a replacement's, while it is filled). */
  referenceRun(workload: string, n: number, learnDir = this.learnDir(workload)): string {
    return join(learnDir, `ref-${n}`);
  }
  /** `learnDir`: as for `referenceRun`. A run with normal delivery beside serialized reference runs. */
  normalDeliveryRun(workload: string, n: number, learnDir = this.learnDir(workload)): string {
    return join(learnDir, `normal-${n}`);
  }
  plansDir(workload?: string): string {
    return workload ? join(this.root, 'plans', workload) : join(this.root, 'plans');
  }
  testRun(workload: string, plan: string): string {
    return join(this.root, 'test', workload, plan);
  }
  /** Re-run `n` (from 1) of plan `plan`, the shortest reproducer of a finding (src/campaign/confirm-findings.ts). */
  rerun(workload: string, plan: string, n: number): string {
    return join(this.root, 'reruns', workload, plan, String(n));
  }
  /** The run recovery was tried on for a finding whose reproducer is `plan` (src/campaign/recovery.ts). */
  recoveryRun(workload: string, plan: string): string {
    return join(this.root, 'recovery', workload, plan);
  }
  confirmationRun(workload: string): string {
    return join(this.root, 'confirm', workload);
  }
  get resultsFile(): string {
    return join(this.root, RESULTS_FILE);
  }
  get secretHashKeyFile(): string {
    return join(this.out, 'secret-hash.key');
  }
}
