/**
 * A small interpreter of declared lifecycles, in the manner of kwok's `Stage` resources: a lifecycle
 * is a table of stages, each with a selector (match expressions over the object, over facts the
 * lifecycle derives from it, and over what the engine remembers of the object), a delay, and the
 * steps to take once the delay is over (write a status, record events, delete, remember a mark).
 * A new simulated kind's behaviour is then a table rather than a class (see pod-lifecycle.ts).
 *
 * Semantics, kept deliberately small:
 * - On each sync of an object the stages are tried in table order; the first whose selector
 *   matches decides. If its delay is not over, the object is synced again when it is; otherwise its
 *   steps run and the table is tried again on the refreshed object (kwok's `immediateNextStage`),
 *   each stage at most once per sync, until no stage matches or one has to wait.
 * - A delay counts from a mark (the time of the sync in which a `mark` step ran);
 *   a mark never set is set when the stage is first found waiting for it, so the delay counts from then.
 * - Memory is per object key and uid: an object re-created under the same name starts afresh.
 */
import type { KubeObject } from '../../model/object-key.js';
import { isObject } from '../../model/object-key.js';

/** What the engine remembers of one object: times (`mark`) and values (`remember`), by name. */
export interface StageMemory {
  readonly uid: string;
  readonly marks: Map<string, number>;
  readonly values: Map<string, string>;
}

/**
 * kwok's selector operators. The key is a path into the object (`.status.phase`, with
 * `[field=value]` picking a list element: `.status.conditions[type=Ready].status`), a fact
 * (`$name`, computed by the lifecycle) or a mark (`@name`). A value that is absent or an
 * empty string does not exist.
 */
export type MatchExpression =
  | { readonly key: string; readonly operator: 'Exists' | 'DoesNotExist' }
  | { readonly key: string; readonly operator: 'In' | 'NotIn'; readonly values: readonly string[] };

/** A fact derived from the object, what the engine remembers of it and the lifecycle's context (undefined: does not exist). */
export type Fact<C> = (obj: KubeObject, memory: StageMemory, ctx: C) => string | undefined;

/** One thing a stage does, in order. `status` returning undefined writes nothing. */
export type StageStep<C> =
  | { readonly mark: string }
  | { readonly remember: string; readonly value: (obj: KubeObject, ctx: C) => string | undefined }
  | { readonly status: (obj: KubeObject, ctx: C) => Record<string, unknown> | undefined }
  | { readonly events: (obj: KubeObject, ctx: C) => void }
  | { readonly log: (key: string, obj: KubeObject, ctx: C) => string }
  | { readonly delete: true };

export interface Stage<C> {
  readonly name: string;
  readonly selector: { readonly matchExpressions: readonly MatchExpression[] };
  /** Wait `ms` after the mark `from`; no delay: the stage runs as soon as it matches. */
  readonly delay?: { readonly from: string; readonly ms: (obj: KubeObject, ctx: C) => number };
  readonly steps: ReadonlyArray<StageStep<C>>;
  /**
   * A change the object makes by itself, soon (a pod turning ready after its probe's initial delay):
   * while the stage waits, `pendingUntil` counts it, and a run has not settled (its end state would
   * depend on whether the run ended before it).
   */
  readonly awaited?: boolean;
}

export interface Lifecycle<C> {
  readonly facts: Readonly<Record<string, Fact<C>>>;
  readonly stages: ReadonlyArray<Stage<C>>;
}

/** How the engine reads and writes the objects it drives (a kubelet's informer and API calls). */
export interface StageEffects {
  /** The object as the informer has it now (undefined: gone). */
  get(key: string): KubeObject | undefined;
  writeStatus(obj: KubeObject, status: Record<string, unknown>): Promise<void>;
  delete(obj: KubeObject): Promise<void>;
  /** Sync `key` again in `ms`. */
  requeue(key: string, ms: number): void;
  log(line: string): void;
}

export class StageEngine<C> {
  private readonly memory = new Map<string, StageMemory>();
  /** When each object's awaited stage is due, while it waits. */
  private readonly due = new Map<string, number>();

  constructor(
    private readonly lifecycle: Lifecycle<C>,
    private readonly effects: StageEffects,
    private readonly ctx: C,
  ) {}

  /** The keys of the objects for which a `remember` step kept `value` under `name` (what a watcher of another kind re-syncs). */
  keysRemembering(name: string, value: string): string[] {
    return [...this.memory].filter(([, m]) => m.values.get(name) === value).map(([key]) => key);
  }

  /** The object was deleted: forget it, unless the name already holds a newer object. */
  forget(key: string, uid: string | undefined): void {
    if (this.memory.get(key)?.uid === uid) {
      this.memory.delete(key);
      this.due.delete(key);
    }
  }

  /** When the last awaited stage waiting now is due (undefined: none waits). */
  pendingUntil(): number | undefined {
    return this.due.size === 0 ? undefined : Math.max(...this.due.values());
  }

  async sync(key: string, first: KubeObject): Promise<void> {
    // One time for the whole sync, as a kubelet's sync loop reads the clock once: marks set by a stage
    // and the delays of the stages after it count from the same instant, so a requeue is exactly the delay.
    const t = Date.now();
    let obj = first;
    const memory = this.memoryOf(key, obj);
    const applied = new Set<Stage<C>>();
    // An awaited stage stays pending until its steps are written, not only until it is due: a run
    // that settled between the two would end before the change it waited for.
    let waiting = false;
    try {
      for (;;) {
        const stage = this.lifecycle.stages.find((s) => !applied.has(s) && this.matches(s, obj, memory));
        if (!stage) return;
        if (stage.delay) {
          let since = memory.marks.get(stage.delay.from);
          if (since === undefined) memory.marks.set(stage.delay.from, (since = t));
          const dueAt = since + stage.delay.ms(obj, this.ctx);
          if (t < dueAt) {
            if (stage.awaited) {
              this.due.set(key, dueAt);
              waiting = true;
            }
            this.effects.requeue(key, dueAt - t);
            return;
          }
        }
        applied.add(stage);
        for (const step of stage.steps) await this.run(step, key, obj, memory, t);
        const refreshed = this.effects.get(key);
        if (!refreshed || refreshed.metadata?.uid !== memory.uid) return;
        obj = refreshed;
      }
    } finally {
      if (!waiting) this.due.delete(key);
    }
  }

  private memoryOf(key: string, obj: KubeObject): StageMemory {
    let m = this.memory.get(key);
    if (!m || m.uid !== obj.metadata?.uid) this.memory.set(key, (m = { uid: obj.metadata!.uid!, marks: new Map(), values: new Map() }));
    return m;
  }

  private async run(step: StageStep<C>, key: string, obj: KubeObject, memory: StageMemory, t: number): Promise<void> {
    if ('mark' in step) memory.marks.set(step.mark, t);
    else if ('remember' in step) {
      const value = step.value(obj, this.ctx);
      if (value === undefined) memory.values.delete(step.remember);
      else memory.values.set(step.remember, value);
    } else if ('status' in step) {
      const next = step.status(obj, this.ctx);
      if (next) await this.effects.writeStatus(obj, next);
    } else if ('events' in step) step.events(obj, this.ctx);
    else if ('log' in step) this.effects.log(step.log(key, obj, this.ctx));
    else await this.effects.delete(obj);
  }

  private matches(stage: Stage<C>, obj: KubeObject, memory: StageMemory): boolean {
    return stage.selector.matchExpressions.every((e) => {
      const value = this.valueOf(e.key, obj, memory);
      switch (e.operator) {
        case 'Exists':
          return value !== undefined;
        case 'DoesNotExist':
          return value === undefined;
        case 'In':
          return value !== undefined && e.values.includes(value);
        case 'NotIn':
          return value === undefined || !e.values.includes(value);
      }
    });
  }

  private valueOf(key: string, obj: KubeObject, memory: StageMemory): string | undefined {
    if (key.startsWith('@')) {
      const name = key.slice(1);
      return memory.marks.has(name) ? String(memory.marks.get(name)) : memory.values.get(name);
    }
    if (key.startsWith('$')) {
      const fact = this.lifecycle.facts[key.slice(1)];
      if (!fact) throw new Error(`stage selector names an undeclared fact ${key}`);
      return fact(obj, memory, this.ctx);
    }
    return scalar(pathValue(obj, key));
  }
}

/** `.a.b[field=value].c` inside `obj`. */
export function pathValue(obj: unknown, path: string): unknown {
  let value: unknown = obj;
  for (const part of path.split('.').slice(1)) {
    const m = /^([^[]*)(?:\[([^=\]]+)=([^\]]*)\])?$/.exec(part);
    if (!m) return undefined;
    const [, field, pickKey, pickValue] = m;
    if (field) value = isObject(value) ? value[field] : undefined;
    if (pickKey !== undefined) value = Array.isArray(value) ? value.find((item) => isObject(item) && item[pickKey] === pickValue) : undefined;
    if (value === undefined) return undefined;
  }
  return value;
}

function scalar(value: unknown): string | undefined {
  if (value === undefined || value === null || value === '') return undefined;
  return typeof value === 'string' ? value : JSON.stringify(value);
}
