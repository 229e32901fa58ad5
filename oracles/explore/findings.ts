/**
 * `kperturb explore`'s findings: its alarms grouped into distinct bugs, as oracles/findings.ts groups
 * a campaign's bug verdicts (docs/findings.md, "Findings of explore"). Pure: judgements in, findings out.
 *
 * An explore alarm is about an input: a step changed a property of the CR and an oracle found what the
 * controller did with it wrong. One bug shows on every step that changes that property, in every
 * sequence, on every object the property reaches (a label never removed from the StatefulSet and from
 * the Service is one bug). So the signature is the oracle and the schema property the alarmed step
 * changed (`spec.labels.*`, the generator's pattern: one per property whatever the key or index); an
 * alarm at a sequence's end, after no particular step, has the objects it names instead (generated
 * names folded). `environment` alarms (what kperturb's cluster lacks) are never grouped with the
 * controller's. The shortest reproducer is the alarm reached after the fewest steps.
 */
import type { ExploreAlarm, ExploreOracle, SequenceJudgement } from './judge.js';
import { foldTemplateHash } from '../../src/model/generated-names.js';
import { parseRollbackName } from '../../planner/explore/rollback.js';

export type ExploreFindingClass = 'bug' | 'environment' | 'misoperation' | 'flaky';

/** The order findings are listed in. */
const CLASS_ORDER: readonly ExploreFindingClass[] = ['bug', 'flaky', 'misoperation', 'environment'];

export interface ExploreFinding {
  /** `flaky`: a bug finding whose reproducer did not show it again in every re-run (`confirmation`). */
  class: ExploreFindingClass;
  /** The grouping key: class, oracle, and the property (or the objects at a sequence's end). */
  signature: string;
  oracle: ExploreOracle;
  /** The schema property the reproducer's step changed (absent: alarms at a sequence's end). */
  property?: string;
  /** Every property of its alarms' steps (a property and one inside it can show one bug). */
  properties: string[];
  /** What the alarms name, folded: `StatefulSet/default/sample-server spec.replicas`. */
  objects: string[];
  /** The signature in words. */
  summary: string;
  /** Every alarm of the finding: its sequence, step and message. */
  alarms: Array<{ sequence: string; step?: number; message: string; followOn?: true }>;
  /** The alarm reached after the fewest steps (ties: the first sequence by name). */
  reproducer: { sequence: string; step?: number; message: string; followOn?: true };
  /** `kperturb explore ... --sequence NAME`: the reproducer's sequence alone (absent without a config path). */
  command?: string;
  /** How the re-runs of the reproducer's sequence went (`explore --confirm-runs`); absent when not re-run. */
  confirmation?: ExploreConfirmation;
}

export interface ExploreConfirmation {
  /** Re-runs whose own findings had this signature. */
  failedAgain: number;
  runs: number;
  runDirs: string[];
  /** Shown again by every re-run. */
  confirmed: boolean;
}

/**
 * A bug finding after its reproducer's sequence ran again, alone, on fresh clusters: it stays a bug
 * when every re-run's findings have its signature, else it is `flaky` with the counts. Other classes
 * are not re-run.
 */
export function confirmExploreFinding(f: ExploreFinding, reruns: ReadonlyArray<{ runDir: string; findings: readonly ExploreFinding[] }>): ExploreFinding {
  if (f.class !== 'bug' || reruns.length === 0) return f;
  const failedAgain = reruns.filter((r) => r.findings.some((g) => g.signature === f.signature)).length;
  const confirmed = failedAgain === reruns.length;
  return {
    ...f,
    ...(confirmed ? {} : { class: 'flaky' as const }),
    confirmation: { failedAgain, runs: reruns.length, runDirs: reruns.map((r) => r.runDir), confirmed },
  };
}

/** What an alarm names, generated names folded: the object and its field. */
function alarmObject(a: ExploreAlarm): string | undefined {
  if (!a.object) return undefined;
  const object = foldTemplateHash(a.object);
  return a.field ? `${object} ${a.field.replace(/\[\d+\]/g, '[*]')}` : object;
}

/**
 * The sequence's step an alarm is about. Rollback alarms name the step rolled back; an alarm of a
 * rollback run (`<sequence>-rollback-<k>`, which judges the steps after a refused step k) counts its
 * steps from that run, where the rollback is step k + 1, so its step n is the sequence's step n - 1.
 */
export function alarmStep<S>(
  bySequence: ReadonlyMap<string, { steps: readonly S[] }>,
  sequence: string,
  step: number | undefined,
): { sequence: string; step: number; judged: S } | undefined {
  if (step === undefined) return undefined;
  const direct = bySequence.get(sequence)?.steps[step - 1];
  if (direct) return { sequence, step, judged: direct };
  const rollback = parseRollbackName(sequence);
  if (!rollback || step <= rollback.step + 1) return undefined;
  const judged = bySequence.get(rollback.sequence)?.steps[step - 2];
  return judged ? { sequence: rollback.sequence, step: step - 1, judged } : undefined;
}

/** Where an alarm is, in its sequence's own steps (a rollback run's alarm mapped back; at its end: no step). */
function origin(
  a: ExploreAlarm,
  bySequence: ReadonlyMap<string, SequenceJudgement>,
): { sequence: string; step?: number; property?: string; misoperation?: true } {
  const at = alarmStep(bySequence, a.sequence, a.step);
  if (at)
    return {
      sequence: at.sequence,
      step: at.step,
      property: at.judged.property,
      ...(at.judged.verdict === 'misoperation' ? { misoperation: true as const } : {}),
    };
  const rollback = parseRollbackName(a.sequence);
  return { sequence: rollback && bySequence.has(rollback.sequence) ? rollback.sequence : a.sequence };
}

function signatureKey(a: ExploreAlarm, cls: ExploreFindingClass, property: string | undefined): string {
  return JSON.stringify([cls, a.oracle, property ?? null, property === undefined ? (alarmObject(a) ?? a.message) : null]);
}

/** Fewer steps first; an alarm at a sequence's end after all of its steps. */
function stepsTo(at: { sequence: string; step?: number }, bySequence: ReadonlyMap<string, SequenceJudgement>): number {
  return at.step ?? bySequence.get(at.sequence)?.steps.length ?? Number.MAX_SAFE_INTEGER;
}

export function describeExploreFinding(f: Pick<ExploreFinding, 'oracle' | 'properties' | 'objects'>): string {
  const on = f.objects.length === 0 ? '' : ` (${f.objects.slice(0, 3).join(', ')}${f.objects.length > 3 ? `, ${f.objects.length - 3} more` : ''})`;
  return `[${f.oracle}] ${f.properties.length > 0 ? `a change of ${f.properties.join(' or ')}` : 'at the sequence end'}${on}`;
}

/**
 * The findings of an exploration, bugs first, then by how many alarms show them. `config` (the
 * kperturb.yaml explore ran from) makes each finding's command.
 *
 * A follow-on is an alarm at a later step of a sequence (or its rollback run) than the sequence's
 * first alarmed step: the system was already broken there (an operator stuck after a bad value stops
 * propagating every later change). Follow-ons stay in the finding of their own signature when some
 * alarm of that signature is the first of its sequence, the bug shown on its own; a signature shown
 * only by follow-ons is no finding of its own, and its alarms join the finding of the first alarm of
 * their (shortest) sequence, marked `followOn`.
 */
export function groupExploreFindings(
  judged: ReadonlyArray<Pick<SequenceJudgement, 'sequence' | 'steps' | 'alarms'>>,
  config?: { file: string; seed: number; steps: number },
): ExploreFinding[] {
  const bySequence = new Map(judged.map((j) => [j.sequence, j as SequenceJudgement]));
  const members: Member[] = judged.flatMap((j) =>
    j.alarms.map((alarm) => {
      const at = origin(alarm, bySequence);
      const cls = alarmClass(alarm, at.misoperation === true);
      return { alarm, at, key: signatureKey(alarm, cls, at.property), steps: stepsTo(at, bySequence), cls };
    }),
  );
  const same = nestedProperties(members);
  for (const m of members) m.key = same.get(m.key) ?? m.key;
  // The first alarmed step of each sequence, per class: an environment alarm is no cause of the controller's.
  const firstStep = new Map<string, number>();
  for (const m of members) firstStep.set(`${m.cls} ${m.at.sequence}`, Math.min(firstStep.get(`${m.cls} ${m.at.sequence}`) ?? Infinity, m.steps));
  const isFirst = (m: Member) => m.steps === firstStep.get(`${m.cls} ${m.at.sequence}`);
  const ordered = [...members].sort(byShortest);
  const shown = new Set(members.filter(isFirst).map((m) => m.key));
  const groups = new Map<string, Array<Member & { followOn?: true }>>();
  for (const m of ordered) {
    // A signature only follow-ons show: the finding of the first alarm of this alarm's sequence.
    const key = shown.has(m.key) ? m.key : ordered.find((f) => isFirst(f) && f.cls === m.cls && f.at.sequence === m.at.sequence)!.key;
    groups.set(key, [...(groups.get(key) ?? []), key === m.key ? m : { ...m, followOn: true }]);
  }
  const findings: ExploreFinding[] = [];
  for (const [key, group] of groups) {
    const own = group.filter((m) => m.key === key);
    const shortest = own.find(isFirst) ?? own[0]!;
    const base = {
      class: shortest.cls,
      oracle: shortest.alarm.oracle,
      ...(shortest.at.property !== undefined ? { property: shortest.at.property } : {}),
      properties: [...new Set(own.flatMap((m) => (m.at.property !== undefined ? [m.at.property] : [])))].sort(),
      objects: [...new Set(own.map((m) => alarmObject(m.alarm)).filter((o): o is string => o !== undefined))].sort(),
    };
    const where = (m: Member & { followOn?: true }) => ({
      sequence: m.at.sequence,
      ...(m.at.step !== undefined ? { step: m.at.step } : {}),
      message: m.alarm.message,
      ...(m.followOn ? { followOn: true as const } : {}),
    });
    findings.push({
      ...base,
      signature: key,
      summary: describeExploreFinding(base),
      alarms: group.map(where),
      reproducer: where(shortest),
      ...(config ? { command: `kperturb explore -c ${config.file} --seed ${config.seed} --steps ${config.steps} --sequence ${shortest.at.sequence}` } : {}),
    });
  }
  return findings.sort((a, b) => CLASS_ORDER.indexOf(a.class) - CLASS_ORDER.indexOf(b.class) || b.alarms.length - a.alarms.length);
}

/**
 * Signatures that are one bug seen from two steps: the same oracle on a property and on one inside it
 * (`spec.exporter` deleted, `spec.exporter.enabled` turned off) with an object field in common. Each
 * key to its group's key, the outermost property's.
 */
function nestedProperties(members: readonly Member[]): Map<string, string> {
  const sigs = new Map<string, { m: Member; objects: Set<string> }>();
  for (const m of members) {
    if (m.at.property === undefined) continue;
    const sig = sigs.get(m.key) ?? { m, objects: new Set<string>() };
    const object = alarmObject(m.alarm);
    if (object) sig.objects.add(object);
    sigs.set(m.key, sig);
  }
  const root = new Map<string, string>();
  const find = (k: string): string => (root.get(k) === undefined || root.get(k) === k ? k : find(root.get(k)!));
  const inside = (a: string, b: string) => a === b || b.startsWith(`${a}.`);
  // Outermost first, so each group's root is its outermost property.
  const keys = [...sigs.keys()].sort((a, b) => sigs.get(a)!.m.at.property!.length - sigs.get(b)!.m.at.property!.length || a.localeCompare(b));
  for (const [i, a] of keys.entries())
    for (const b of keys.slice(i + 1)) {
      const x = sigs.get(a)!;
      const y = sigs.get(b)!;
      if (x.m.cls !== y.m.cls || x.m.alarm.oracle !== y.m.alarm.oracle || !inside(x.m.at.property!, y.m.at.property!)) continue;
      if (![...y.objects].some((o) => x.objects.has(o))) continue;
      const [ra, rb] = [find(a), find(b)];
      if (ra !== rb) root.set(keys.indexOf(ra) < keys.indexOf(rb) ? rb : ra, keys.indexOf(ra) < keys.indexOf(rb) ? ra : rb);
    }
  return new Map(keys.map((k) => [k, find(k)]));
}

type Member = {
  alarm: ExploreAlarm;
  at: { sequence: string; step?: number; property?: string; misoperation?: true };
  key: string;
  steps: number;
  cls: ExploreFindingClass;
};

/** The alarm reached after the fewest steps first; ties by sequence name. */
const byShortest = (x: Member, y: Member): number => x.steps - y.steps || x.at.sequence.localeCompare(y.at.sequence);

/** `environment` as the judge tagged it; `misoperation` when the alarm's step was one (input the system cannot honour, never a bug). */
const alarmClass = (a: ExploreAlarm, misoperation: boolean): ExploreFindingClass =>
  a.class === 'environment' ? 'environment' : misoperation ? 'misoperation' : 'bug';
