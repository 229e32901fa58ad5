/**
 * Confirmation of a finding (issue 36, item 2): a finding is reported as a `bug` only when its
 * shortest reproducer, run again K times on fresh clusters, failed again every time with the same
 * signature, and the workload run without faults did not show it. Otherwise it is `flaky`, with the
 * counts. The re-runs themselves are src/campaign/campaign.ts's; this is the rule. Pure.
 */
import type { FindingConfirmation, FindingSignature, Rerun, Reruns } from '../src/model/results.js';
import { signatureKey } from './signature-key.js';
import { foldTemplateHash } from '../src/model/generated-names.js';

/** Is a signature one of `signatures`? A finding grouped from several first divergences (oracles/findings.ts, `variants`) is shown by any of them. */
function oneOf(controller: string, signatures: readonly FindingSignature[]): (s: FindingSignature | undefined) => boolean {
  const keys = new Set(signatures.map((s) => signatureKey(controller, s)));
  return (s) => s !== undefined && keys.has(signatureKey(controller, s));
}

/**
 * Does a run show the finding with `signatures` (its own and its variants')? A run whose verdict is
 * bug with one of them, or whose state oracles alarmed on the object one of them diverged on.
 */
export function showsFinding(controller: string, signatures: readonly FindingSignature[]): (r: Rerun) => boolean {
  const sameSignature = oneOf(controller, signatures);
  // pod-template-hashes folded on both sides: each re-run may name another ReplicaSet (also in results stored before stateAlarmObjects folded them)
  const objects = signatures.flatMap((s) => (s.divergence ? [foldTemplateHash(s.divergence.object)] : []));
  return (r) => r.verdict === 'bug' && (sameSignature(r.signature) || (r.stateAlarmObjects ?? []).some((o) => objects.includes(foldTemplateHash(o))));
}

/**
 * Decides a finding's confirmation from its reproducer's re-runs (`reruns`):
 *   - a re-run failed again when its verdict is `bug` and it showed the finding: its signature is
 *     the finding's (or one of its variants'), or its state oracles alarmed on the object of the finding's divergence (what
 *     came first varies with timing: a leaked claim is in every end state, but one re-run diverged
 *     first on a ConfigMap). A re-run that alarmed only elsewhere found something else; one that
 *     was not injected or could not run did not fail again;
 *   - the fault-free run passed when it ran and showed no alarm with the finding's signature: an
 *     unrelated difference there (a field that is not deterministic) is the masks' business and
 *     shows as flaky alarms of its own, not a reason to doubt this finding;
 *   - confirmed: failed again in K of K re-runs (K > 0) and the fault-free run passed.
 */
export function decideConfirmation(controller: string, signatures: readonly FindingSignature[], reruns: Reruns): FindingConfirmation {
  const sameSignature = oneOf(controller, signatures);
  const failedAgain = reruns.runs.filter(showsFinding(controller, signatures)).length;
  const ff = reruns.faultFree;
  const faultFree = ff ? { runDir: ff.runDir, passed: ff.error === undefined && (ff.alarms === 0 || !sameSignature(ff.signature)) } : undefined;
  return {
    failedAgain,
    runs: reruns.runs.length,
    runDirs: reruns.runs.map((r) => r.runDir),
    ...(faultFree ? { faultFree } : {}),
    confirmed: reruns.runs.length > 0 && failedAgain === reruns.runs.length && faultFree?.passed === true,
  };
}

/** "failed again 1 of 3 re-runs; the fault-free run passed": a confirmation in words. */
export function describeConfirmation(c: FindingConfirmation): string {
  const faultFree = c.faultFree
    ? c.faultFree.passed
      ? 'the fault-free run passed'
      : 'the fault-free run showed it too (or could not run)'
    : 'no fault-free run';
  return `failed again ${c.failedAgain} of ${c.runs} re-run${c.runs === 1 ? '' : 's'} of its reproducer; ${faultFree}`;
}
