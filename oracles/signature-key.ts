/** The grouping key of a finding's signature (oracles/findings.ts), shared with the confirmation rule (oracles/confirmation.ts). */
import type { FindingSignature } from '../src/model/results.js';
import { foldTemplateHash } from '../src/model/generated-names.js';

/**
 * The grouping key of a signature, for one controller: two runs with the same key show the same
 * finding. Objects with a Deployment's pod-template-hash folded, also in signatures stored before
 * findingSignature folded them. A divergent write is keyed without the oracle that saw it: whether
 * a claim deleted twice is still terminating at the end (the end state) or was deleted and made again
 * (the update summary) is timing, as is which child of a gone owner came first (children created
 * after their owner was gone are keyed by the owner alone).
 */
export function signatureKey(controller: string, s: FindingSignature): string {
  const d = s.divergence;
  return [
    controller,
    d ? '' : s.oracle,
    d
      ? d.ownerGone
        ? `${d.kind} ${d.verb} children of ${foldTemplateHash(d.ownerGone)}`
        : `${d.kind} ${d.verb} ${foldTemplateHash(d.object)} ${d.field ?? ''}${d.propagation ? ` ${d.propagation}` : ''}`
      : `${s.check ?? ''} ${s.object ? foldTemplateHash(s.object) : ''}`,
    s.lastError ?? '',
  ].join('\u0000');
}
