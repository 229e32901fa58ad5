/**
 * Findings: the distinct bugs behind a campaign's verdicts. One bug found by many plans (every
 * stale view after the same event, every crash after the same write) is one finding, whatever the
 * plans' patterns, workloads or shards. A finding's signature comes from what the runs show, not
 * from the plans' names:
 *   - the first write of the controller's own in which the test run departed from every reference
 *     run (`firstDivergence`, computed when the run is judged and kept in PlanResult.divergence): an
 *     extra write (verb, object with generated names folded, field) or a write the references made
 *     and it did not. The garbage collector's cascade after a bad write is left out: its order varies;
 *   - the oracle class that judged that object (end state, update summary), or for a run whose state
 *     did not diverge, the oracle and check that alarmed (liveness, health);
 *   - the controller's last new error (the last health alarm: a crash, an unexpected exit, an API
 *     error the reference runs never got), numbers folded.
 * Each finding is classified (`classifyFinding`; docs/findings.md), names its shortest reproducer
 * and the command that runs it again; a `bug` finding whose reproducer was re-run
 * (`PlanResult.reruns`) is a bug only if the re-runs confirm it (oracles/confirmation.ts), else
 * `flaky`. Pure: results in, findings out.
 */
import { controllerKey, controllerRef, type KubeObject, type ObjectKey } from '../src/model/object-key.js';
import { foldTemplateHash } from '../src/model/generated-names.js';
import type { OwnWrite } from '../src/model/controller-activity.js';
import type { ClusterChangeEvent } from '../src/model/trace.js';
import { getField } from '../src/model/fields.js';
import type {
  Alarm,
  Divergence,
  Finding,
  FindingClass,
  FindingConfirmation,
  FindingSignature,
  PlannedWorkload,
  PlanResult,
  RunArtifacts,
  UntestedWorkload,
} from '../src/model/results.js';
import { comparableIdentity } from './object-identity.js';
import { canonicalJson } from './semantic.js';
import { signatureKey } from './signature-key.js';
import { decideConfirmation, describeConfirmation } from './confirmation.js';
import { recoveryOf } from './recovery.js';

export { signatureKey };

/** The oracles whose alarms are about the cluster's state (the others are about the run: liveness, health). */
const STATE_ORACLES: ReadonlySet<string> = new Set(['end-state', 'update-summary']);

/** The objects the state oracles alarmed on (flaky alarms left out), each once, in alarm order: what a re-run showed (oracles/confirmation.ts). */
export function stateAlarmObjects(alarms: readonly Alarm[]): ObjectKey[] {
  return [...new Set(alarms.filter((a) => STATE_ORACLES.has(a.oracle) && !a.flaky).map((a) => foldTemplateHash(a.object)))];
}

const VERBS = { ADDED: 'create', MODIFIED: 'update', DELETED: 'delete' } as const;

/** What an alarm's check says the test run should have written and did not. */
const MISSING_VERB: Partial<Record<NonNullable<Alarm['check']>, Divergence['verb']>> = {
  missing: 'create',
  unexpected: 'delete',
  value: 'update',
  'generated-count': 'create',
  'duplicate-children': 'create',
  created: 'create',
  deleted: 'delete',
  updated: 'update',
};

/** A key as the oracles name it: generated names folded to `Kind/ns/<prefix>*` (object-identity.ts). */
function foldedKey(key: ObjectKey, obj: KubeObject | undefined): ObjectKey | undefined {
  return comparableIdentity(key, obj)?.key;
}

interface Write {
  verb: Divergence['verb'];
  object: ObjectKey;
  obj: KubeObject;
  /** The object as it was before this change (absent for a create). */
  before?: KubeObject;
  /** A delete's propagation policy, when it left its finalizer on the object. */
  propagation?: Divergence['propagation'];
  /** A create whose controller owner, by uid, was not in the cluster at that moment. */
  ownerGone?: ObjectKey;
}

/** The key of an object's controller owner (its ownerReference with controller: true) and that owner's uid. */
function controllerOwner(obj: KubeObject): { key: ObjectKey; uid: string } | undefined {
  const key = controllerKey(obj);
  const uid = controllerRef(obj)?.uid;
  return key !== undefined && typeof uid === 'string' ? { key, uid } : undefined;
}

/** The controller's writes of a run, found by what its answer says and by object, each waiting for the change it made. */
class OwnChanges {
  private readonly byVersion = new Set<string>();
  /** Writes whose answer named no resourceVersion (protobuf answers, Status answers to deletes), by key or `Kind/ns/`. */
  private readonly waiting = new Map<string, OwnWrite[]>();

  constructor(writes: readonly OwnWrite[]) {
    for (const w of writes) {
      if (w.resourceVersion !== undefined) this.byVersion.add(w.resourceVersion);
      else {
        const at = w.key ?? w.within;
        if (at !== undefined) this.waiting.set(at, [...(this.waiting.get(at) ?? []), w]);
      }
    }
  }

  /** Did the controller make this change? Each waiting write claims the first change after it of its object that its verb can make. */
  made(c: ClusterChangeEvent): boolean {
    if (this.byVersion.has(c.resourceVersion)) return true;
    const within = c.key.slice(0, c.key.lastIndexOf('/') + 1);
    for (const at of [c.key, within]) {
      const ws = this.waiting.get(at);
      const i = ws?.findIndex((w) => w.seq < c.seq && canMake(w.verb, c)) ?? -1;
      if (i >= 0) {
        ws!.splice(i, 1);
        return true;
      }
    }
    return false;
  }
}

/** Has the object been marked for deletion (a deletionTimestamp: it waits for its finalizers)? */
function isDeleting(obj: KubeObject): boolean {
  const t = obj.metadata?.deletionTimestamp;
  return t !== undefined && t !== null;
}

/** The propagation policy a delete left as a finalizer on its object (the API server's `orphan`, `foregroundDeletion`). */
function propagationOf(obj: KubeObject): Divergence['propagation'] {
  const finalizers = obj.metadata?.finalizers ?? [];
  return finalizers.includes('orphan') ? 'Orphan' : finalizers.includes('foregroundDeletion') ? 'Foreground' : undefined;
}

/**
 * Could a write of `verb` have made change `c`? A create makes an ADDED; a delete a DELETED, or the
 * MODIFIED that marks an object with finalizers as deleting; any other write a MODIFIED, or the
 * DELETED of an object already deleting (its last finalizer removed). Someone else's update in
 * between (the StatefulSet controller's status) is not the delete's.
 */
function canMake(verb: string, c: ClusterChangeEvent): boolean {
  const deleting = isDeleting(c.object);
  if (verb === 'create') return c.eventType === 'ADDED';
  if (verb === 'delete' || verb === 'deletecollection') return c.eventType === 'DELETED' || (c.eventType === 'MODIFIED' && deleting);
  return c.eventType === 'MODIFIED' || (c.eventType === 'DELETED' && deleting);
}

/**
 * The changes of a run as writes, folded keys: only the controller's own, when its trace says which
 * they were (a bug is in what the controller did; the garbage collector's cascade after it, in an
 * order that varies, is not).
 */
function writesOf(run: RunArtifacts): Write[] {
  const own = run.controllerActivity?.ownWrites ? new OwnChanges(run.controllerActivity.ownWrites) : undefined;
  /** The uid of every object in the cluster so far, by key (for owners gone by the time a child is created). */
  const live = new Map<ObjectKey, string | undefined>();
  /** Objects marked for deletion so far: the change that marks one is its delete. */
  const deleting = new Set<ObjectKey>();
  /** Every object's last state, whoever wrote it (what a write of the controller changed is against it). */
  const last = new Map<ObjectKey, KubeObject>();
  const out: Write[] = [];
  for (const c of run.clusterChanges) {
    const before = last.get(c.key);
    if (c.eventType === 'DELETED') last.delete(c.key);
    else last.set(c.key, c.object);
    if (c.eventType === 'DELETED') live.delete(c.key);
    else live.set(c.key, c.object.metadata?.uid);
    const marked = c.eventType === 'MODIFIED' && isDeleting(c.object) && !deleting.has(c.key);
    if (c.eventType !== 'DELETED' && isDeleting(c.object)) deleting.add(c.key);
    else deleting.delete(c.key);
    if (own && !own.made(c)) continue;
    const object = foldedKey(c.key, c.object);
    if (object === undefined) continue;
    const owner = c.eventType === 'ADDED' ? controllerOwner(c.object) : undefined;
    const ownerGone = owner && live.get(owner.key) !== owner.uid ? owner.key : undefined;
    // The MODIFIED that gives an object with finalizers its deletionTimestamp is a delete: the same
    // write as the DELETED of an object without them (whether a pod still holds a claim, and so
    // which of the two a run shows, is timing).
    const propagation = marked ? propagationOf(c.object) : undefined;
    out.push({
      verb: marked ? 'delete' : VERBS[c.eventType],
      object,
      obj: c.object,
      ...(before && c.eventType !== 'ADDED' ? { before } : {}),
      ...(ownerGone ? { ownerGone } : {}),
      ...(propagation ? { propagation } : {}),
    });
  }
  return out;
}

/**
 * The alarmed fields a write set, as `set <object>\u0000<field>\u0000<value>` keys, in field order: a
 * create sets every field it has; an update only those whose value it changed (the whole object
 * travels with an update, so the status a spec update carries unchanged is not what it did).
 */
function valuesSet(w: Write, fields: ReadonlySet<string> | undefined): string[] {
  if (w.verb !== 'create' && w.verb !== 'update') return [];
  return [...(fields ?? [])].sort().flatMap((f) => {
    const value = canonicalJson(getField(w.obj, f));
    if (w.verb === 'update' && w.before && canonicalJson(getField(w.before, f)) === value) return [];
    return [`set ${w.object}\u0000${f}\u0000${value}`];
  });
}

/**
 * The first write of the controller (RunArtifacts.controllerActivity.ownWrites; every change when the
 * run has no such record) in which `test` departed from every reference run, looked for among the objects
 * the state oracles alarmed on (a status write elsewhere that differs in timing is not the bug):
 *   - a create of such an object whose controller owner was gone (deleted, or re-created with
 *     another uid) when no reference run did that for the same owner (`ownerGone`);
 *   - a create or delete of such an object made more often than in any reference run, or an update
 *     that changed an alarmed field to a value more often than any reference run's writes set it to
 *     that value (never, or once where the references did it once: scaled 3 -> 1 -> 3 where every
 *     reference run stayed at 1): `extra`;
 *   - else the write the first state alarm says is missing (an object the references have and the
 *     test run lacks: a missing create): `missing`.
 * Undefined when no state oracle alarmed (the finding is then a liveness or health one).
 */
export function firstDivergence(references: readonly RunArtifacts[], test: RunArtifacts, alarms: readonly Alarm[]): Divergence | undefined {
  const state = alarms.filter((a) => STATE_ORACLES.has(a.oracle));
  if (state.length === 0) return undefined;
  const alarmed = new Map<ObjectKey, Set<string>>();
  for (const a of state) {
    const fields = alarmed.get(a.object) ?? new Set<string>();
    if (a.field !== undefined && a.check === 'value') fields.add(a.field);
    alarmed.set(a.object, fields);
  }
  const refWrites = references.map(writesOf);
  /** The most times one reference run made each write (`<verb> <object>`) and set each alarmed field to each value (`valuesSet`). */
  const maxCount = new Map<string, number>();
  /** Owners some reference run created children of after they were gone (then such a create is no divergence by itself). */
  const refOrphaned = new Set<ObjectKey>();
  for (const writes of refWrites) {
    const counts = new Map<string, number>();
    for (const w of writes) {
      if (w.ownerGone) refOrphaned.add(w.ownerGone);
      const k = `${w.verb} ${w.object}`;
      counts.set(k, (counts.get(k) ?? 0) + 1);
      for (const vk of valuesSet(w, alarmed.get(w.object))) counts.set(vk, (counts.get(vk) ?? 0) + 1);
    }
    for (const [k, n] of counts) maxCount.set(k, Math.max(maxCount.get(k) ?? 0, n));
  }
  const seen = new Map<string, number>();
  for (const w of writesOf(test)) {
    const fields = alarmed.get(w.object);
    if (!fields) continue;
    const k = `${w.verb} ${w.object}`;
    const n = (seen.get(k) ?? 0) + 1;
    seen.set(k, n);
    if (w.ownerGone && !refOrphaned.has(w.ownerGone)) return { kind: 'extra', verb: w.verb, object: w.object, ownerGone: w.ownerGone };
    if (w.verb !== 'update' && n > (maxCount.get(k) ?? 0))
      return { kind: 'extra', verb: w.verb, object: w.object, ...(w.propagation ? { propagation: w.propagation } : {}) };
    for (const vk of valuesSet(w, fields)) {
      const m = (seen.get(vk) ?? 0) + 1;
      seen.set(vk, m);
      if (w.verb === 'update' && m > (maxCount.get(vk) ?? 0)) return { kind: 'extra', verb: 'update', object: w.object, field: vk.split('\u0000')[1]! };
    }
  }
  const first = state[0]!;
  // An object made or removed more often than in every reference run (pods the StatefulSet
  // controller re-creates in a rollout the controller caused) is an extra write, not a missing one.
  const more =
    (first.check === 'created' || first.check === 'deleted' || first.check === 'updated') &&
    typeof first.test === 'number' &&
    Array.isArray(first.reference) &&
    first.reference.every((n) => typeof n === 'number' && (first.test as number) > n);
  return {
    kind: more ? 'extra' : 'missing',
    verb: (first.check && MISSING_VERB[first.check]) ?? 'update',
    object: first.object,
    ...(first.field !== undefined ? { field: first.field } : {}),
  };
}

/** Numbers, UUIDs and quoted resource versions vary from run to run; the error does not. */
function foldVolatile(text: string): string {
  return text.replace(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/gi, '<uid>').replace(/\d+/g, 'N');
}

/** The controller's last new error in a run: its last health alarm (a crash, an unexpected exit, an API error), folded. */
export function lastError(alarms: readonly Alarm[]): string | undefined {
  const health = alarms.filter((a) => a.oracle === 'health');
  const last = health[health.length - 1];
  if (!last) return undefined;
  const what = typeof last.test === 'string' ? last.test : canonicalJson(last.test);
  return foldVolatile(`${last.check ?? 'health'} ${last.check === 'api-error' ? `${last.object} ` : ''}${what}`);
}

/**
 * What a bug verdict's run shows, as a signature: the divergence (PlanResult.divergence; for results
 * without one, the first state alarm's missing write), the oracle class, the last error. Liveness or
 * health only: the first such alarm's oracle, check and object. Objects are named with a Deployment's
 * pod-template-hash folded (foldTemplateHash): it may differ in every run of one bug.
 */
export function findingSignature(r: Pick<PlanResult, 'alarms' | 'divergence'>): FindingSignature {
  const live = r.alarms.filter((a) => !a.flaky);
  const alarms = live.length > 0 ? live : r.alarms;
  const divergence = r.divergence ?? firstDivergence([], { endState: {}, clusterChanges: [] }, alarms);
  const error = lastError(alarms);
  if (divergence) {
    const onObject = alarms.filter((a) => a.object === divergence.object && STATE_ORACLES.has(a.oracle));
    const oracle = onObject.some((a) => a.oracle === 'end-state') || onObject.length === 0 ? 'end-state' : 'update-summary';
    const folded = {
      ...divergence,
      object: foldTemplateHash(divergence.object),
      ...(divergence.ownerGone ? { ownerGone: foldTemplateHash(divergence.ownerGone) } : {}),
    };
    return { oracle, divergence: folded, ...(error ? { lastError: error } : {}) };
  }
  const first = alarms[0];
  return {
    oracle: first?.oracle ?? 'end-state',
    ...(first?.check ? { check: first.check } : {}),
    ...(first ? { object: foldTemplateHash(first.object) } : {}),
    ...(error ? { lastError: error } : {}),
  };
}

/** "deletes StatefulSet/default/mc1-rs0 (end-state)": a signature in words. */
export function describeSignature(s: FindingSignature): string {
  const d = s.divergence;
  const what = d
    ? d.kind === 'extra'
      ? d.ownerGone
        ? `${VERB_TEXT[d.verb][0]} children of ${d.ownerGone} after it was gone (${d.object} first), which no reference run did`
        : `${VERB_TEXT[d.verb][0]} ${d.object}${d.field ? ` (${d.field})` : ''}${d.propagation ? ` (${PROPAGATION_TEXT[d.propagation]})` : ''}, which no reference run did`
      : `never ${VERB_TEXT[d.verb][1]} ${d.object}${d.field ? ` (${d.field})` : ''}, which the reference runs did`
    : `${s.check ?? s.oracle}${s.object ? ` on ${s.object}` : ''}`;
  return `[${s.oracle}] ${what}${s.lastError ? `; last new error: ${s.lastError}` : ''}`;
}

const PROPAGATION_TEXT: Record<NonNullable<Divergence['propagation']>, string> = {
  Orphan: 'orphaning its dependents',
  Foreground: 'its dependents first',
};

const VERB_TEXT: Record<Divergence['verb'], [string, string]> = {
  create: ['creates', 'created'],
  update: ['updates', 'updated'],
  delete: ['deletes', 'deleted'],
};

/** HTTP statuses and words by which an answer says the embedded cluster or a stub lacks what a real cluster has. */
const ENVIRONMENT_GAP = /\b(501|405) |NotImplemented|MethodNotAllowed|not (?:yet )?(?:implemented|supported) (?:by|in) (?:the )?(?:embedded|kperturb|stub)/i;
/** A workload step the API server refused: the input was rejected (validation, admission), not mishandled. */
const REJECTED_INPUT = /\b(400|422)\b|\bInvalid\b|BadRequest|admission webhook .* denied|\bis forbidden\b/;

/**
 * The class of a finding, from its plans' results (docs/findings.md gives the rules and why this
 * order: what the finding is before how sure kperturb is of it):
 *   rejected-input  every plan's workload failed on a step the API server refused (400, 422, an
 *                   admission webhook): the system said no, which is its right;
 *   environment     the finding's error is an answer of the embedded cluster or a stub that a real
 *                   cluster would not give (501, 405: a verb or kind it does not serve);
 *   misoperation    every plan ran an input `kperturb explore` generated, without a fault, and only
 *                   liveness alarmed: accepted input the system cannot honour;
 *   flaky           every plan's alarms also showed in an unperturbed re-run (verdict `flaky`);
 *   beyond-contract every plan that was not flaky had a fault beyond the API contract
 *                   (PlanResult.beyondContract): no real API server does that;
 *   bug             otherwise.
 */
export function classifyFinding(plans: readonly PlanResult[], signature: FindingSignature): { class: FindingClass; why: string } {
  const failedSteps = plans.map((r) => r.alarms.find((a) => a.check === 'workload-failed'));
  if (failedSteps.every((a) => a !== undefined && REJECTED_INPUT.test(String(a.test)))) {
    return { class: 'rejected-input', why: `the API server refused a workload step: ${String(failedSteps[0]!.test)}` };
  }
  const gap = plans.flatMap((r) => r.alarms).find((a) => a.oracle === 'health' && ENVIRONMENT_GAP.test(`${String(a.test)} ${a.message}`));
  if (gap) return { class: 'environment', why: `the cluster answered what a real one would not (${gap.message}): a gap of the embedded cluster or a stub` };
  if (plans.every((r) => r.explored === true && (r.size?.faults ?? 0) === 0) && signature.oracle === 'liveness') {
    return { class: 'misoperation', why: 'an input the API server accepted, with no fault, that the controller never converged on' };
  }
  if (plans.every((r) => r.verdict === 'flaky')) {
    return { class: 'flaky', why: 'every alarm also showed in an unperturbed re-run: the fields are not deterministic' };
  }
  const confirmed = plans.filter((r) => r.verdict === 'bug');
  if (confirmed.length > 0 && confirmed.every((r) => (r.beyondContract?.length ?? 0) > 0)) {
    return {
      class: 'beyond-contract',
      why: `every plan's fault went beyond the API contract (${confirmed[0]!.beyondContract![0]}): check with \`--contract strict\``,
    };
  }
  return { class: 'bug', why: `${confirmed.length} plan${confirmed.length === 1 ? '' : 's'} found it` };
}

const shellQuote = (s: string) => (/^[\w./@%+=:,-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`);

/** The command that runs the plan of `r` again, when the result names its plan file. */
export function rerunCommand(r: Pick<PlanResult, 'planFile' | 'configFile'>): string | undefined {
  if (!r.planFile) return undefined;
  return `kperturb test ${shellQuote(r.planFile)}${r.configFile ? ` -c ${shellQuote(r.configFile)}` : ''}`;
}

/** Fewest faults, then fewest workload steps, then the shortest run; by name at a tie (stable across shards). */
function smaller(a: PlanResult, b: PlanResult): number {
  const size = (r: PlanResult) => r.size ?? { faults: Infinity, steps: Infinity };
  return (
    size(a).faults - size(b).faults ||
    size(a).steps - size(b).steps ||
    (a.verdict === 'bug' ? 0 : 1) - (b.verdict === 'bug' ? 0 : 1) ||
    a.durationMs - b.durationMs ||
    (a.plan < b.plan ? -1 : a.plan > b.plan ? 1 : 0)
  );
}

/** A finding's plans, its shortest reproducer first (the order confirmation tries them in). */
export function inReproducerOrder(plans: readonly PlanResult[]): PlanResult[] {
  return [...plans].sort(smaller);
}

/** "stale-0124 failed again 1 of 3": a smaller reproducer whose re-runs did not confirm the finding. */
function describeTried(c: { result: PlanResult; confirmation: FindingConfirmation }): string {
  return `${c.result.plan} failed again ${c.confirmation.failedAgain} of ${c.confirmation.runs}`;
}

/** Class order in reports: what needs a look first. */
export const FINDING_CLASS_ORDER: readonly FindingClass[] = ['bug', 'beyond-contract', 'environment', 'misoperation', 'transient', 'flaky', 'rejected-input'];

/**
 * Groups the results judged `bug` or `flaky` into findings, one per signature and controller; the
 * other results are not findings. Findings come bugs first, then by how many plans found them.
 */
export function groupFindings(results: readonly PlanResult[]): Finding[] {
  const groups = new Map<string, { signature: FindingSignature; controller: string; plans: PlanResult[] }>();
  for (const r of results) {
    if (r.verdict !== 'bug' && r.verdict !== 'flaky') continue;
    const signature = findingSignature(r);
    const key = signatureKey(r.controller, signature);
    const g = groups.get(key) ?? { signature, controller: r.controller, plans: [] };
    g.plans.push(r);
    groups.set(key, g);
  }
  const found = mergeBySymptoms([...groups.values()]).map(({ signature, variants, controller, plans }): Finding => {
    const ordered = inReproducerOrder(plans);
    const signatures = [signature, ...variants];
    const classified = classifyFinding(plans, signature);
    // The re-runs were made of the shortest reproducer when they ran (another shard's plan may be
    // shorter now), and of the next ones while none failed again every time
    // (src/campaign/confirm-findings.ts): the smallest plan whose re-runs confirm it speaks for the
    // finding, else the smallest that has re-runs.
    const tried =
      classified.class === 'bug'
        ? ordered.flatMap((r) => (r.reruns ? [{ result: r, confirmation: decideConfirmation(controller, signatures, r.reruns) }] : []))
        : [];
    const confirmedBy = tried.find((c) => c.confirmation.confirmed);
    const confirmation = (confirmedBy ?? tried[0])?.confirmation;
    const reproducer = confirmedBy?.result ?? ordered[0]!;
    const shorter =
      confirmedBy && confirmedBy !== tried[0]
        ? `; ${tried
            .filter((c) => c !== confirmedBy)
            .map(describeTried)
            .join(', ')}`
        : '';
    const confirmed =
      confirmation && !confirmation.confirmed
        ? { class: 'flaky' as const, why: `not confirmed: ${describeConfirmation(confirmation)}` }
        : confirmation
          ? { class: classified.class, why: `${classified.why}; confirmed: ${describeConfirmation(confirmation)}${shorter}` }
          : classified;
    const recovered = confirmed.class === 'bug' ? recoveryFields(ordered) : {};
    const { class: cls, why } = classifyRecovered(confirmed, reproducer, recovered.recovery);
    const command = rerunCommand(reproducer);
    return {
      class: cls,
      why: variants.length > 0 ? `${why}; the same alarms also came after another first write: ${variants.map(describeSignature).join('; ')}` : why,
      controller,
      summary: describeSignature(signature),
      signature,
      ...(variants.length > 0 ? { variants } : {}),
      plans: plans.map((r) => ({
        workload: r.workload,
        plan: r.plan,
        pattern: r.pattern,
        verdict: r.verdict,
        description: r.description,
        ...(r.beyondContract?.length ? { beyondContract: true as const } : {}),
      })),
      reproducer: {
        workload: reproducer.workload,
        plan: reproducer.plan,
        description: reproducer.description,
        runDir: reproducer.runDir,
        ...(reproducer.size ? { size: reproducer.size } : {}),
        ...(reproducer.planFile ? { planFile: reproducer.planFile } : {}),
      },
      ...(command ? { command } : {}),
      alarms: reproducer.alarms,
      ...(confirmation ? { confirmation } : {}),
      ...recovered,
    };
  });
  return found.sort(
    (a, b) =>
      FINDING_CLASS_ORDER.indexOf(a.class) - FINDING_CLASS_ORDER.indexOf(b.class) ||
      b.plans.length - a.plans.length ||
      (a.summary < b.summary ? -1 : a.summary > b.summary ? 1 : 0),
  );
}

interface Group {
  signature: FindingSignature;
  controller: string;
  plans: PlanResult[];
}

/**
 * What a run showed, in full: its alarms that are not flaky, but for health ones (oracle, check,
 * object with a pod-template-hash folded, field), and the controller's last new error. Undefined
 * without a state alarm: "the workload timed out" alone says too little to tie two runs together.
 */
export function symptomKey(r: Pick<PlanResult, 'alarms'>): string | undefined {
  const parts = symptomParts(r);
  return parts && [...[...parts].sort(), `error ${lastError(r.alarms.filter((a) => !a.flaky)) ?? ''}`].join('\n');
}

/** `symptomKey`'s alarms, one part each (`<oracle> <check> <object> <field>`); undefined without a state alarm. */
function symptomParts(r: Pick<PlanResult, 'alarms'>): Set<string> | undefined {
  const live = r.alarms.filter((a) => !a.flaky);
  if (!live.some((a) => STATE_ORACLES.has(a.oracle))) return undefined;
  return new Set(live.filter((a) => a.oracle !== 'health').map((a) => symptomPart(a.oracle, a.check, a.object, a.field)));
}

/** One alarm as a symptom: `<oracle> <check> <object, pod-template-hash folded> <field>`. */
function symptomPart(oracle: string, check: string | undefined, object: ObjectKey, field: string | undefined): string {
  return [oracle, check ?? '', foldTemplateHash(object), field ?? ''].join(' ');
}

/**
 * Groups of one controller whose plans include two runs with the same symptoms (`symptomKey`) are
 * one finding, whichever of the controller's writes departed first: a crash and a stale view can
 * reach one wrong state by different first writes (casskop#370: the restart right after the
 * scale-down's StatefulSet update writes a podLastOperation no reference run wrote, the stale
 * restarts never write cassandraLastAction's Done; both end with the same 10 alarms). The group
 * with the most plans names the finding; the others' signatures are its `variants`. Not a group
 * whose first divergence re-creates a gone owner's children with one whose does not: stale-deletion's
 * run that resurrected the StatefulSet and also had its claim deleted by name shows exactly the
 * alarms of the delete-by-name runs, and would join its two planted defects into one finding.
 */
function mergeBySymptoms(groups: readonly Group[]): Array<Group & { variants: FindingSignature[] }> {
  const parent = groups.map((_, i) => i);
  const root = (i: number): number => (parent[i] === i ? i : (parent[i] = root(parent[i]!)));
  const bySymptoms = new Map<string, number>();
  groups.forEach((g, i) => {
    for (const r of g.plans) {
      const key = symptomKey(r);
      if (key === undefined) continue;
      // A resurrection (a create whose owner was gone) is a bug of its own, whatever else its run shows.
      const k = `${g.controller}\u0000${g.signature.divergence?.ownerGone ? 'owner gone' : ''}\u0000${key}`;
      const other = bySymptoms.get(k);
      if (other === undefined) bySymptoms.set(k, i);
      else parent[root(i)] = root(other);
    }
  });
  const merged = new Map<number, Group[]>();
  groups.forEach((g, i) => merged.set(root(i), [...(merged.get(root(i)) ?? []), g]));
  return foldNested(
    [...merged.values()].map((gs) => {
      const [first, ...rest] = [...gs].sort((a, b) => b.plans.length - a.plans.length);
      return { ...first!, plans: gs.flatMap((g) => g.plans), variants: rest.map((g) => g.signature) };
    }),
  );
}

/** An extra create or delete of the same verb as `d`, neither a create whose owner was gone nor a delete with a propagation policy. */
function sameKindOfWrite(other: Divergence | undefined, d: Divergence): boolean {
  return other !== undefined && other.kind === 'extra' && other.verb === d.verb && !other.ownerGone && !other.propagation;
}

/**
 * A group whose first divergence is an extra create or delete, and whose every run's alarms are some
 * of the alarms of a run of exactly one other group of its controller, that run counting that same
 * extra create or delete, is part of that group: the same wrong writes, stopped sooner. A stale view
 * that still shows a component disabled makes component-toggle's controller delete its StatefulSet
 * and then its Service; a view frozen after the StatefulSet's deletion deletes the Service alone, and
 * that run's alarms are the Service's half of the others'. The fuller group names the finding; the
 * other's signatures become its variants. Only between writes of one kind: both groups' first
 * divergences extra creates, or both extra deletes, and neither a create whose owner was gone nor a
 * delete with a propagation policy: what those say (a resurrection, an orphaning) is a bug of its
 * own, and casskop#321's budget deleted by name shows inside the runs of its resurrection of a
 * deleted cluster's children (the garbage collector deletes the resurrected budget again). Two
 * fuller groups that would both take one group leave it alone.
 */
function foldNested(groups: Array<Group & { variants: FindingSignature[] }>): Array<Group & { variants: FindingSignature[] }> {
  const partsOf = new Map<PlanResult, Set<string>>();
  for (const g of groups) for (const r of g.plans) partsOf.set(r, symptomParts(r) ?? new Set());
  const within = (small: Set<string>, big: Set<string>) => small.size > 0 && small.size < big.size && [...small].every((p) => big.has(p));
  const live = new Set(groups);
  // The smaller symptoms first, so that a group folded into another travels on with it.
  const bySize = [...groups].sort((a, b) => Math.max(...a.plans.map((r) => partsOf.get(r)!.size)) - Math.max(...b.plans.map((r) => partsOf.get(r)!.size)));
  for (const small of bySize) {
    const d = small.signature.divergence;
    if (!d || (d.verb !== 'create' && d.verb !== 'delete') || !sameKindOfWrite(d, d)) continue;
    const counted = symptomPart('update-summary', d.verb === 'create' ? 'created' : 'deleted', d.object, undefined);
    const takers = [...live].filter(
      (big) =>
        big !== small &&
        big.controller === small.controller &&
        sameKindOfWrite(big.signature.divergence, d) &&
        small.plans.every((r) => big.plans.some((b) => partsOf.get(b)!.has(counted) && within(partsOf.get(r)!, partsOf.get(b)!))),
    );
    if (takers.length !== 1) continue;
    const big = takers[0]!;
    big.plans = [...big.plans, ...small.plans];
    big.variants = [...big.variants, small.signature, ...small.variants];
    live.delete(small);
  }
  return groups.filter((g) => live.has(g));
}

/**
 * A confirmed `bug` finding whose every alarm is an end-state one and that recovered by time alone
 * is `transient`: the state the run ended in was on its way to the references' (the controller
 * reached it with nothing but more time), so the run ended before the controller had finished; no
 * write went wrong that the update summary saw, and nothing is left to repair. One whose every alarm
 * is an end-state one, whose workload's reference runs end with the controller refusing its input
 * (`refusedInput`: rabbitmq-operator stops every reconcile at an unsupported scale-down) and that
 * rolling the input back healed, is `misoperation`: the fault only moved work the controller had
 * not done yet past the refused step, and undoing the user's refused input lets it finish. An
 * update-summary, liveness or health alarm (a delete that happened, a crash) keeps it a bug whatever
 * recovered it; so does an end state that no strategy or only a restart or re-apply healed.
 */
function classifyRecovered(
  c: { class: FindingClass; why: string },
  reproducer: PlanResult,
  recovery: Finding['recovery'],
): { class: FindingClass; why: string } {
  const live = reproducer.alarms.filter((a) => !a.flaky);
  if (c.class !== 'bug' || live.length === 0 || !live.every((a) => a.oracle === 'end-state')) return c;
  if (recovery === 'time') {
    return {
      class: 'transient',
      why: `${c.why}; every alarm was on the end state, and it reached the references' with time alone: the run ended before the controller had finished`,
    };
  }
  const refused = reproducer.refusedInput ?? [];
  if (recovery === 'rollback' && refused.length > 0) {
    return {
      class: 'misoperation',
      why: `${c.why}; the reference runs end with the controller refusing the workload's input (${refused.join('; ')}), every alarm was on the end state, and rolling the input back healed it: work the refusal held up, not damage the fault did`,
    };
  }
  return c;
}

/** A bug finding's recovery (oracles/recovery.ts), from the smallest of its plans that had it tried. */
function recoveryFields(ordered: readonly PlanResult[]): Pick<Finding, 'recovery' | 'recoveryRun'> {
  const recoveryRun = ordered.find((r) => r.recovery)?.recovery;
  if (!recoveryRun) return {};
  const recovery = recoveryOf(recoveryRun);
  return { recoveryRun, ...(recovery ? { recovery } : {}) };
}

const NOTHING_TESTED: ReadonlySet<PlanResult['verdict']> = new Set(['not-injected', 'workload-failed']);

/**
 * The planned workloads that tested nothing, so that no report calls them clean: those the planner
 * kept no plan for, and those whose every result so far is not-injected or workload-failed (a
 * workload with plans but no results yet is not judged: it has not been run).
 */
export function untestedWorkloads(planned: readonly PlannedWorkload[], results: readonly PlanResult[]): UntestedWorkload[] {
  const out: UntestedWorkload[] = [];
  for (const w of planned) {
    const mine = results.filter((r) => r.controller === w.controller && r.workload === w.workload);
    if (w.plans === 0) {
      const refs = w.referenceRuns ?? 2;
      out.push({
        controller: w.controller,
        workload: w.workload,
        reason: 'no-plans',
        detail:
          w.emptiedBy === 'deterministic'
            ? `the planner kept no plan: its ${refs} reference runs disagreed on every trigger, so the determinism stage dropped every candidate`
            : `the planner kept no plan${w.emptiedBy ? ` (the ${w.emptiedBy} stage dropped every candidate)` : ''}`,
        advice: `learn again with more reference runs (referenceRuns: ${refs + 1} or more in kperturb.yaml) so that a majority agrees, or with \`kperturb learn --serialize\`, then plan and test again`,
      });
    } else if (mine.length > 0 && mine.length >= w.plans && mine.every((r) => NOTHING_TESTED.has(r.verdict))) {
      out.push({
        controller: w.controller,
        workload: w.workload,
        reason: 'not-injected',
        detail: `none of its ${mine.length} plans took effect (${mine.filter((r) => r.verdict === 'not-injected').length} not injected, ${mine.filter((r) => r.verdict === 'workload-failed').length} with the workload failing first)`,
        advice:
          'their triggers did not fire in the test runs: learn with `kperturb learn --serialize` (plans whose triggers also fire with normal delivery), or more reference runs, then plan and test again',
      });
    }
  }
  return out;
}

/** The stage that emptied every pattern of a workload's pruning table, if one did (pruning.json's `patterns`). */
export function stageThatEmptied(patterns: ReadonlyArray<{ stages: ReadonlyArray<{ stage: string; plans: number }> }>): string | undefined {
  const stages = new Set<string>();
  for (const p of patterns) {
    let before = 0;
    for (const s of p.stages) {
      if (s.plans === 0 && before > 0) {
        stages.add(s.stage);
        break;
      }
      before = s.plans;
    }
  }
  return stages.size === 1 ? [...stages][0] : undefined;
}
