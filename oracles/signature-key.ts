/** The grouping key of a finding's signature (oracles/findings.ts), shared with the confirmation rule (oracles/confirmation.ts). */
import type { FindingSignature } from '../src/model/results.js';

/** The grouping key of a signature, for one controller: two runs with the same key show the same finding. */
export function signatureKey(controller: string, s: FindingSignature): string {
  const d = s.divergence;
  return [
    controller,
    s.oracle,
    d
      ? d.ownerGone
        ? `${d.kind} ${d.verb} children of ${d.ownerGone}`
        : `${d.kind} ${d.verb} ${d.object} ${d.field ?? ''}`
      : `${s.check ?? ''} ${s.object ?? ''}`,
    s.lastError ?? '',
  ].join('\u0000');
}
