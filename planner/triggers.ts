/**
 * Turning recorded changes and writes into plan triggers, and judging whether a trigger is
 * deterministic: whether it fires in a majority of the reference runs (all of them when there are
 * two; `learn` adds runs when two disagree, see `wantsMoreReferenceRuns`), and, when the reference
 * runs were serialized (`learn --serialize`), in every normal-delivery run too: plans are tested with
 * normal delivery, where a controller batches events and may write less often or differently.
 *
 * A change trigger names a change by key, type, and for updates the fields it changed (before and
 * after, normalised as change-match.ts normalises them), minus the fields that are nondeterministic:
 * fields whose sequence of values in the run plans come from is not that of a majority of the
 * reference runs, and fields the user masks.
 * Its occurrence counts the earlier changes of the key that match the same fields, exactly as
 * change-match.ts `matchesChange` will count them at test time (test/planner checks this against it).
 */
import type { CallTrigger, ChangeTrigger, FieldChange, WriteTrigger } from '../src/model/plan.js';
import { childPath } from '../src/model/change-match.js';
import { isObject } from '../src/model/object-key.js';
import { matchesCall } from '../src/model/trigger.js';
import type { ObjectKey } from '../src/model/object-key.js';
import type { WriteIdentity } from '../src/model/controller-write.js';
import { splitFieldPath } from '../src/model/fields.js';
import { jsonEqual } from '../src/model/json-value.js';
import { ancestorKeys, pathKey, pathsOverlap, segmentsKey, valueAt, type PathKey } from './paths.js';
import { upperBound, type ChangeRecord, type KeyHistory, type RunAnalysis } from './trace-analysis.js';

/** A user mask: objects whose key matches `key` (`*` = anything) ignore `paths` ([] = the whole object). */
export interface TriggerMask {
  key: string;
  paths: string[];
}

interface IndexedField {
  change: FieldChange;
  key: PathKey;
  segments: Array<string | number>;
  sig: string;
}

const ABSENT = '\u0002';

/** JSON with map keys sorted, so equal values (jsonEqual) have equal text. */
export function canonicalJson(value: unknown): string {
  if (value === undefined) return ABSENT;
  return JSON.stringify(sortKeys(value));
}

function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (value === null || typeof value !== 'object') return value;
  const out: Record<string, unknown> = {};
  for (const k of Object.keys(value).sort()) {
    const v = (value as Record<string, unknown>)[k];
    if (v !== undefined) out[k] = sortKeys(v);
  }
  return out;
}

function signature(f: FieldChange): string {
  return `${canonicalJson(f.before)}\u0001${canonicalJson(f.after)}`;
}

function indexField(f: FieldChange): IndexedField {
  const segments = splitFieldPath(f.path);
  return { change: f, key: segmentsKey(segments), segments, sig: signature(f) };
}

/** Per key of one run: which of its updates changed which field from what to what. */
class UpdateIndex {
  private readonly exact = new Map<PathKey, Map<string, number[]>>();
  private readonly byPath = new Map<PathKey, number[]>();

  constructor(
    private readonly run: RunAnalysis,
    private readonly history: KeyHistory,
  ) {
    history.updates.forEach((changeIndex, pos) => {
      const c = run.changes[changeIndex]!;
      c.diff!.fields.forEach((f, i) => {
        const key = c.diffKeys[i]!;
        let sigs = this.exact.get(key);
        if (!sigs) {
          sigs = new Map();
          this.exact.set(key, sigs);
        }
        const sig = signature(f);
        const list = sigs.get(sig);
        if (list) list.push(pos);
        else sigs.set(sig, [pos]);
        const all = this.byPath.get(key);
        if (all) all.push(pos);
        else this.byPath.set(key, [pos]);
      });
    });
  }

  /** Positions (among the key's updates, ascending) of the updates that match every field. */
  matching(fields: readonly IndexedField[]): number[] {
    let result: number[] | undefined;
    for (const f of fields) {
      const positions = this.matchingOne(f);
      result = result === undefined ? positions : intersect(result, positions);
      if (result.length === 0) break;
    }
    return result ?? [];
  }

  private matchingOne(f: IndexedField): number[] {
    const exact = this.exact.get(f.key)?.get(f.sig) ?? [];
    const viaAncestor: number[] = [];
    // An update that replaced a whole enclosing map or list matches if the values inside agree.
    for (const q of ancestorKeys(f.key)) {
      const depth = q.split('\u0000').length;
      const rest = f.segments.slice(depth);
      for (const pos of this.byPath.get(q) ?? []) {
        const c = this.run.changes[this.history.updates[pos]!]!;
        const entry = c.diff!.fields[c.diffKeys.indexOf(q)]!;
        if (jsonEqual(valueAt(entry.before, rest), f.change.before) && jsonEqual(valueAt(entry.after, rest), f.change.after)) viaAncestor.push(pos);
      }
    }
    return viaAncestor.length === 0
      ? exact
      : union(
          exact,
          viaAncestor.sort((a, b) => a - b),
        );
  }
}

function intersect(a: number[], b: number[]): number[] {
  const out: number[] = [];
  let i = 0;
  let j = 0;
  while (i < a.length && j < b.length) {
    if (a[i]! < b[j]!) i++;
    else if (a[i]! > b[j]!) j++;
    else {
      out.push(a[i]!);
      i++;
      j++;
    }
  }
  return out;
}

function union(a: number[], b: number[]): number[] {
  const out: number[] = [];
  let i = 0;
  let j = 0;
  while (i < a.length || j < b.length) {
    const x = j >= b.length || (i < a.length && a[i]! <= b[j]!) ? a[i++]! : b[j++]!;
    if (out.length === 0 || out[out.length - 1] !== x) out.push(x);
  }
  return out;
}

function globMatches(glob: string, key: string): boolean {
  const parts = glob.split('*');
  if (parts.length === 1) return glob === key;
  if (!key.startsWith(parts[0]!) || !key.endsWith(parts[parts.length - 1]!)) return false;
  let at = parts[0]!.length;
  for (let i = 1; i < parts.length - 1; i++) {
    const found = key.indexOf(parts[i]!, at);
    if (found < 0) return false;
    at = found + parts[i]!.length;
  }
  return at <= key.length - parts[parts.length - 1]!.length;
}

export interface TriggerOptions {
  /** At most this many fields identify an update (the first ones by path). */
  maxFields: number;
  masks: readonly TriggerMask[];
}

/**
 * Builds and judges the triggers of the run plans come from (`main`), against the other reference
 * runs (`others`) and the normal-delivery runs (`normalDelivery`).
 *
 * The two kinds of run play different parts. Reference runs are made alike (all serialized, or all
 * not), so a field whose values differ between them is nondeterministic and names no change. Normal
 * runs are expected to differ from serialized ones (a batched controller skips intermediate values:
 * a ConfigMap written member by member when serialized is written in one update otherwise), so they
 * do not make fields nondeterministic; they only decide whether the trigger, as built, fires.
 */
export class Triggers {
  private readonly indexes = new Map<RunAnalysis, Map<ObjectKey, UpdateIndex>>();
  /** Per run: the change index of each creation and deletion, by folded key, type and rank. */
  private readonly createsAndDeletes = new Map<RunAnalysis, Map<string, number>>();
  private readonly changeTriggers = new Map<number, { trigger: ChangeTrigger | undefined; fields: IndexedField[] }>();
  private readonly deterministicChanges = new Map<number, boolean>();
  private readonly nondeterministic = new Map<ObjectKey, PathKey[]>();
  private readonly maskPatterns: Array<{ key: string; whole: boolean; patterns: Array<Array<string | number>> }>;
  /** Triggers (as JSON) that fire in every reference run but not in some normal-delivery run. */
  private readonly unreproduced = new Set<string>();

  constructor(
    readonly main: RunAnalysis,
    readonly others: readonly RunAnalysis[],
    private readonly options: TriggerOptions,
    readonly normalDelivery: readonly RunAnalysis[] = [],
  ) {
    this.maskPatterns = options.masks.map((m) => ({ key: m.key, whole: m.paths.length === 0, patterns: m.paths.map(splitFieldPath) }));
  }

  /** The trigger naming change `index` of the main run (undefined: the change is invisible to triggers). */
  change(index: number): ChangeTrigger | undefined {
    return this.changeEntry(index).trigger;
  }

  private changeEntry(index: number): { trigger: ChangeTrigger | undefined; fields: IndexedField[] } {
    let entry = this.changeTriggers.get(index);
    if (!entry) {
      entry = this.buildChangeTrigger(this.main.changes[index]!);
      this.changeTriggers.set(index, entry);
    }
    return entry;
  }

  private buildChangeTrigger(c: ChangeRecord): { trigger: ChangeTrigger | undefined; fields: IndexedField[] } {
    if (!c.diff || c.beforeStart) return { trigger: undefined, fields: [] };
    if (c.diff.change !== 'update') return { trigger: { key: c.key, change: c.diff.change, occurrence: c.ordinal }, fields: [] };
    const excluded = this.nondeterministicPaths(c.key);
    const stable = (k: PathKey) => !excluded.some((p) => pathsOverlap(p, k));
    // A map or list set or removed whole with an unstable member is named by its stable members.
    const fields = c.diff.fields
      .flatMap((f, i) => (stable(c.diffKeys[i]!) ? [f] : leafChanges(f).filter((l) => stable(pathKey(l.path)))))
      .filter((f) => !this.masked(c.key, splitFieldPath(f.path)))
      .slice(0, this.options.maxFields)
      .map(indexField);
    if (fields.length === 0) return { trigger: { key: c.key, change: 'update', occurrence: c.ordinal }, fields };
    const positions = this.index(this.main, c.key)!.matching(fields);
    const occurrence = upperBound(positions, c.updatePos);
    if (positions[occurrence - 1] !== c.updatePos) throw new Error(`internal: change ${c.index} of ${c.key} does not match its own trigger`);
    const trigger: ChangeTrigger = { key: c.key, change: 'update', fields: fields.map((f) => f.change), occurrence };
    return { trigger, fields };
  }

  /**
   * Does change `index`'s trigger exist, name an object worth naming, and fire in a majority of the
   * reference runs and in every normal-delivery run?
   */
  deterministicChange(index: number): boolean {
    let ok = this.deterministicChanges.get(index);
    if (ok === undefined) {
      const c = this.main.changes[index]!;
      const { trigger, fields } = this.changeEntry(index);
      ok = trigger !== undefined && !c.bookkeeping && !this.maskedWhole(c.key) && this.firesInMajority(trigger, (r) => this.fires(r, trigger, fields));
      this.deterministicChanges.set(index, ok);
    }
    return ok;
  }

  /**
   * Where change `index`'s trigger fires in reference run `run` (the main run or one of the others):
   * the index of the change there that it names, -1 when it names none.
   */
  changeIn(run: RunAnalysis, index: number): number {
    if (run === this.main) return index;
    const { trigger: t, fields } = this.changeEntry(index);
    if (!t) return -1;
    const history = run.keys.get(t.key);
    if (!history) return -1;
    if (t.change === 'update') {
      const positions = fields.length === 0 ? undefined : this.index(run, t.key)!.matching(fields);
      const pos = positions ? positions[t.occurrence - 1] : t.occurrence - 1;
      return pos === undefined ? -1 : (history.updates[pos] ?? -1);
    }
    let byRank = this.createsAndDeletes.get(run);
    if (!byRank) {
      byRank = new Map();
      for (const c of run.changes) if (c.diff && c.diff.change !== 'update') byRank.set(`${c.key}\u0000${c.diff.change}\u0000${c.ordinal}`, c.index);
      this.createsAndDeletes.set(run, byRank);
    }
    return byRank.get(`${t.key}\u0000${t.change}\u0000${t.occurrence}`) ?? -1;
  }

  /** Does the write trigger fire (counted as the proxy counts at test time) in a majority of the reference runs and every normal-delivery run? */
  deterministicWrite(trigger: WriteTrigger): boolean {
    if (this.maskedWhole(trigger.key)) return false;
    const id = writeIdOf(trigger);
    return this.firesInMajority(trigger, (r) => r.writeCount(id) >= trigger.occurrence);
  }

  /**
   * The request occurrence of the `trigger.occurrence`-th successful write (`WriteTrigger`s count
   * successful writes, the api-error fault counts requests, failed ones included), counted in the
   * runs plans are tested like: the normal-delivery runs when the references were serialized (the
   * earliest of theirs, so that it comes in each), else the main reference run. How many requests
   * fail before a write succeeds depends on delivery: serialized, a controller's cache lags its own
   * writes and most of its status updates meet 409 (decommission's 3rd status patch was its 43rd
   * request there, and its 5th in a normal run).
   */
  requestOccurrence(trigger: WriteTrigger): number {
    const id = writeIdOf(trigger);
    const runs = this.normalDelivery.length > 0 ? this.normalDelivery : [this.main];
    const ordinals = runs.flatMap((r) => r.requestOrdinal(id, trigger.occurrence) ?? []);
    return ordinals.length > 0 ? Math.min(...ordinals) : trigger.occurrence;
  }

  /** Does the call trigger fire (the n-th such call of the controller to its application) in a majority of the reference runs and every normal-delivery run? */
  deterministicCall(trigger: CallTrigger): boolean {
    return this.firesInMajority(trigger, (r) => r.appCalls.filter((c) => matchesCall(trigger, c)).length >= trigger.occurrence);
  }

  /**
   * How many distinct triggers fired in every reference run but not in some normal-delivery run (so
   * the `deterministic` stage dropped their candidates): the triggers serialized learning named that
   * a normal run does not reproduce.
   */
  get unreproducedTriggers(): number {
    return this.unreproduced.size;
  }

  private firesInMajority(trigger: ChangeTrigger | WriteTrigger | CallTrigger, firesIn: (run: RunAnalysis) => boolean): boolean {
    if (!isMajority(1 + this.others.filter(firesIn).length, 1 + this.others.length)) return false;
    if (this.normalDelivery.every(firesIn)) return true;
    this.unreproduced.add(canonicalJson(trigger));
    return false;
  }

  private fires(run: RunAnalysis, t: ChangeTrigger, fields: IndexedField[]): boolean {
    const history = run.keys.get(t.key);
    if (!history) return false;
    if (t.change === 'create') return history.creates >= t.occurrence;
    if (t.change === 'delete') return history.deletes >= t.occurrence;
    if (fields.length === 0) return history.updates.length >= t.occurrence;
    return this.index(run, t.key)!.matching(fields).length >= t.occurrence;
  }

  private index(run: RunAnalysis, key: ObjectKey): UpdateIndex | undefined {
    let perRun = this.indexes.get(run);
    if (!perRun) {
      perRun = new Map();
      this.indexes.set(run, perRun);
    }
    let idx = perRun.get(key);
    if (!idx) {
      const history = run.keys.get(key);
      if (!history) return undefined;
      idx = new UpdateIndex(run, history);
      perRun.set(key, idx);
    }
    return idx;
  }

  /**
   * Fields of `key` whose values in the run plans come from do not follow the same sequence as in a
   * majority of the reference runs (they changed in some runs only, or to different values): a
   * trigger naming them would not fire reliably.
   */
  nondeterministicPaths(key: ObjectKey): PathKey[] {
    let paths = this.nondeterministic.get(key);
    if (paths) return paths;
    const runs = [this.main, ...this.others];
    const sequences = runs.map((r) => fieldSequences(r, r.keys.get(key)));
    const all = new Set<PathKey>();
    for (const s of sequences) for (const p of s.keys()) all.add(p);
    paths = [...all].filter((p) => !isMajority(sequences.filter((s) => s.get(p) === sequences[0]!.get(p)).length, sequences.length)).sort();
    this.nondeterministic.set(key, paths);
    return paths;
  }

  private masked(key: ObjectKey, segments: Array<string | number>): boolean {
    return this.maskPatterns.some((m) => !m.whole && globMatches(m.key, key) && m.patterns.some((p) => prefixEither(p, segments)));
  }

  maskedWhole(key: ObjectKey): boolean {
    return this.maskPatterns.some((m) => m.whole && globMatches(m.key, key));
  }
}

/** More than half: with two reference runs, both. */
export function isMajority(agreeing: number, runs: number): boolean {
  return agreeing * 2 > runs;
}

function prefixEither(pattern: Array<string | number>, segments: Array<string | number>): boolean {
  const n = Math.min(pattern.length, segments.length);
  for (let i = 0; i < n; i++) if (pattern[i] !== '*' && String(pattern[i]) !== String(segments[i])) return false;
  return true;
}

/**
 * Per leaf field path of one key: the sequence of (before, after) values it went through, as text.
 * Leaves, because one run may set a map whole where another sets it member by member (a batched
 * write, a create then an update): both go through the same values member by member, and an unstable
 * member (a generated token) then leaves its siblings stable.
 */
function fieldSequences(run: RunAnalysis, history: KeyHistory | undefined): Map<PathKey, string> {
  const parts = new Map<PathKey, string[]>();
  if (history) {
    for (const i of history.updates) {
      for (const f of run.changes[i]!.diff!.fields.flatMap(leafChanges)) {
        const k = pathKey(f.path);
        const list = parts.get(k);
        if (list) list.push(signature(f));
        else parts.set(k, [signature(f)]);
      }
    }
  }
  return new Map([...parts].map(([k, list]) => [k, list.join('\u0003')]));
}

/**
 * A field change as the changes of its leaves, walking maps and lists as change-match.ts's diff does
 * when both sides have them; a side without the container counts as an empty one. A trigger naming a
 * leaf matches a change that set its enclosing map whole (change-match.ts compares the values inside).
 */
function leafChanges(f: FieldChange): FieldChange[] {
  const { before, after } = f;
  const maps = (isObject(before) || before === undefined) && (isObject(after) || after === undefined);
  const lists = (Array.isArray(before) || before === undefined) && (Array.isArray(after) || after === undefined);
  if (!(maps && (isObject(before) || isObject(after))) && !(lists && (Array.isArray(before) || Array.isArray(after)))) return [f];
  const members: Array<string | number> = lists
    ? Array.from({ length: Math.max((before as unknown[] | undefined)?.length ?? 0, (after as unknown[] | undefined)?.length ?? 0) }, (_, i) => i)
    : [...new Set([...Object.keys(before ?? {}), ...Object.keys(after ?? {})])];
  const out: FieldChange[] = [];
  for (const m of members) {
    const b = (before as Record<string | number, unknown> | undefined)?.[m];
    const a = (after as Record<string | number, unknown> | undefined)?.[m];
    if (jsonEqual(b, a)) continue;
    const leaf: FieldChange = { path: childPath(f.path, m) };
    if (b !== undefined) leaf.before = b;
    if (a !== undefined) leaf.after = a;
    out.push(...leafChanges(leaf));
  }
  return out.length > 0 ? out : [f]; // an empty map or list appearing or going is a leaf itself
}

/** The identity (verb, folded key, subresource) a write trigger counts. */
function writeIdOf(trigger: WriteTrigger): WriteIdentity {
  return trigger.subresource ? { verb: trigger.verb, key: trigger.key, subresource: trigger.subresource } : { verb: trigger.verb, key: trigger.key };
}
