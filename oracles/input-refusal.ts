/**
 * The controller's own word that it refuses its input: a status condition of an object it reports
 * on, `False`, whose reason or message says the input is invalid or unsupported
 * (rabbitmq-operator's `ReconcileSuccess False, UnsupportedOperation: Cluster Scale down not
 * supported`, after which every reconcile returns early). explore judges a step's input by it
 * (oracles/explore/judge.ts); a test run's finding may be work that such a refusal held up
 * (oracles/findings.ts). Pure.
 */
import type { RunArtifacts } from '../src/model/results.js';
import { isObject } from '../src/model/object-key.js';

/** Words with which controllers say an input is invalid (Kubernetes' own field errors among them: "Invalid value", "Unsupported value"). */
export const INVALID_WORDS =
  /\b(invalid|not valid|unsupported|not supported|malformed|not allowed|must be|must not|cannot be|can't be|failed to parse|cannot parse|unable to parse|illegal|bad value|unknown value)\b/i;

/** "UnsupportedOperation" -> "Unsupported Operation": a condition's reason is one CamelCase word. */
const words = (reason: string) => reason.replace(/([a-z])([A-Z])/g, '$1 $2');

/**
 * The refusals every run of `runs` ends with, described ("RabbitmqCluster/default/rabbitmq-cluster:
 * ReconcileSuccess False (UnsupportedOperation: Cluster Scale down not supported)"), sorted; none
 * when a run ends without one. A refusal in one run only is a moment, not the input's answer.
 */
export function refusalsAtEnd(runs: ReadonlyArray<Pick<RunArtifacts, 'endState'>>): string[] {
  if (runs.length === 0) return [];
  const perRun = runs.map((r) => new Set(refusalsIn(r.endState)));
  return [...perRun[0]!].filter((d) => perRun.every((s) => s.has(d))).sort();
}

function refusalsIn(endState: RunArtifacts['endState']): string[] {
  const out: string[] = [];
  for (const [key, obj] of Object.entries(endState)) {
    const conditions = isObject(obj.status) && Array.isArray(obj.status.conditions) ? obj.status.conditions : [];
    for (const c of conditions) {
      if (!isObject(c) || c.status !== 'False') continue;
      const reason = typeof c.reason === 'string' ? c.reason : '';
      const message = typeof c.message === 'string' ? c.message : '';
      if (!INVALID_WORDS.test(words(reason)) && !INVALID_WORDS.test(message)) continue;
      const said = [reason, message].filter(Boolean).join(': ');
      out.push(`${key}: ${String(c.type)} False${said ? ` (${said})` : ''}`);
    }
  }
  return out;
}
