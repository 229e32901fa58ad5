/** The grouping key of a finding's signature (oracles/findings.ts), shared with the confirmation rule (oracles/confirmation.ts). */
import type { FindingSignature } from '../src/model/results.js';
import { foldTemplateHash } from '../src/model/generated-names.js';

/**
 * The grouping key of a signature, for one controller: two runs with the same key show the same
 * finding. Objects with a Deployment's pod-template-hash folded, also in signatures stored before
 * findingSignature folded them. Children created after their owner was gone are keyed by the owner
 * alone: which child came first, and so which oracle saw it (the update summary for a Secret, the
 * end state for a StatefulSet), is timing.
 */
export function signatureKey(controller: string, s: FindingSignature): string {
  const d = s.divergence;
  return [
    controller,
    d?.ownerGone ? '' : s.oracle,
    d
      ? d.ownerGone
        ? `${d.kind} ${d.verb} children of ${foldTemplateHash(d.ownerGone)}`
        : `${d.kind} ${d.verb} ${foldTemplateHash(d.object)} ${d.field ?? ''}`
      : `${s.check ?? ''} ${s.object ? foldTemplateHash(s.object) : ''}`,
    s.lastError ?? '',
  ].join('\u0000');
}
